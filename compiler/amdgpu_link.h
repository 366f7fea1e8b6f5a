/* amdgpu_link.h: linking an AMDGPU relocatable object into a loadable code object. */
#ifndef TILE_AMDGPU_LINK_H
#define TILE_AMDGPU_LINK_H
#include <stddef.h>
#include "arena.h"
#include "diag.h"

/* obj[0..size) (an ELF relocatable object for amdgcn-amd-amdhsa) -> *out (arena), the
 * shared-object code object; 0, or -1 with a diagnostic (no linker, a failed link). */
int amdgpu_link(const void *obj, size_t size, Arena *a, char **out, size_t *out_size, Diags *d);

#endif
