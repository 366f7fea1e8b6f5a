/* smem_layout.h: where a shared-memory buffer keeps each element (LAYOUT_SHARED, see tir.h):
 * the swizzle chosen for a tile, the element offset of given coordinates (for tests and
 * compile-time decisions) and the emitted arithmetic for run-time coordinates. */
#ifndef TILE_SMEM_LAYOUT_H
#define TILE_SMEM_LAYOUT_H
#include <stdint.h>
#include <llvm-c/Core.h>
#include "tir.h"

/* The swizzled layout of a tile whose contiguous dim is order[0]: 16-byte chunks along it,
 * the chunk index XORed with the row so that 8 consecutive rows of one chunk column (what
 * ldmatrix and column-wise accesses read) fall in different banks. */
TirLayout smem_layout_swizzled(int rank, const int *shape, int elem_bytes, const int *order);
/* Element offset within one buffer of the element at `coord`. */
uint32_t smem_offset(const TirLayout *l, const int *shape, int rank, const int *coord);
/* Elements per buffer. */
int smem_numel(const int *shape, int rank);
LLVMValueRef smem_emit_offset(LLVMBuilderRef b, const TirLayout *l, const int *shape, int rank,
                              LLVMValueRef *coord);

#endif
