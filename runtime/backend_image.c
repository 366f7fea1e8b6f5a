/* backend_image.c: the finalize step of backends that load the compiler's output as it is. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend.h"

tile_Status bk_copy_image(const char *who, CodeKind want, const void *code, size_t size,
                          CodeKind kind, void **out, size_t *out_size, char *err)
{
    if (kind != want) {
        snprintf(err, BK_ERR_MAX, "the %s backend loads %s, not %s", who, tc_code_kind_name(want),
                 tc_code_kind_name(kind));
        return TILE_ERROR_UNSUPPORTED;
    }
    if (!(*out = malloc(size ? size : 1))) {
        snprintf(err, BK_ERR_MAX, "out of memory");
        return TILE_ERROR_OUT_OF_MEMORY;
    }
    memcpy(*out, code, size);
    *out_size = size;
    return TILE_OK;
}
