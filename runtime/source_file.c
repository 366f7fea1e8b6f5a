/* source_file.c: reading a module's source file for tile_module_load_file, through the
 * front end's reader (lang/source_read.c: regular files only, non-blocking, at most
 * SRC_MAX_BYTES); its failures become the context's error status and message. */
#include <stdlib.h>
#include "runtime_internal.h"
#include "source_read.h"

tile_Status rt_read_source(tile_Context *ctx, const char *path, char **text, size_t *len)
{
    char err[1200];
    SrcReadStatus st = src_read_file(path, text, len, NULL, err, sizeof err);
    if (st == SRC_READ_OK)
        return TILE_OK;
    return rt_error(ctx, st == SRC_READ_NOT_FOUND ? TILE_ERROR_NOT_FOUND
                    : st == SRC_READ_NO_MEMORY ? TILE_ERROR_OUT_OF_MEMORY : TILE_ERROR_IO,
                    "%s", err);
}
