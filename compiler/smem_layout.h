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
/* The layout wgmma reads through a matrix descriptor: the contiguous dim in panels of 128
 * bytes (or the whole dim when it is shorter), each panel rows of P elements with the 16-byte
 * chunks XORed with the row as the 128-, 64- or 32-byte swizzle modes do (buffers aligned to
 * 8 rows of a panel, 1024 bytes for the 128-byte mode). */
TirLayout smem_layout_wgmma(int rank, const int *shape, int elem_bytes, const int *order);
/* The padded layout of a tile whose contiguous dim is order[0] (what ldmatrix reads mma
 * operands from on targets that ask for it, Target.pad_operand_rows, where no cp.async fills
 * the buffer: see smem_layout_unpadded): rows in order, each
 * followed by one 16-byte chunk of padding (rows of 8k chunks start 8k + 1 chunks apart, so 8
 * rows of one chunk column fall in 8 different banks). Rows under 128 bytes (where padding
 * would take more than an eighth) keep the swizzled layout. An element's
 * offset is row * (C + pad) + col: affine in the coordinates, so the addresses of a thread's
 * reads differ by constants, which fold into the instructions (a swizzle's XOR keeps one
 * register per distinct offset). */
TirLayout smem_layout_padded(int rank, const int *shape, int elem_bytes, const int *order);
/* A buffer's layout without padding: buf's own when it has none, else the swizzled layout of
 * its order, made in arena `a` (NULL when out of memory). Where cp.async fills a buffer,
 * padding cost more than it saved: on an H100 with sm_80 code, padded ring buffers made
 * matmul f16 18-60% slower per configuration and attention 6-15% (likely because a 128-byte
 * line of global memory then lands across two 128-byte rows of the banks; not profiled). */
const TirLayout *smem_buffer_unpadded(Arena *a, const TirValue *buf);
/* Elements per panel of the contiguous dim (the whole dim when there are no panels). */
int smem_panel(const TirLayout *l, const int *shape);
/* Element offset within one buffer of the element at `coord`. */
uint32_t smem_offset(const TirLayout *l, const int *shape, int rank, const int *coord);
/* Elements of the tile (smem_numel) and elements a buffer takes, padding included. */
int smem_numel(const int *shape, int rank);
int smem_buffer_elems(const TirLayout *l, const int *shape, int rank);
LLVMValueRef smem_emit_offset(LLVMBuilderRef b, const TirLayout *l, const int *shape, int rank,
                              LLVMValueRef *coord);

#endif
