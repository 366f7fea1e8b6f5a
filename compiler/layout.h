/* layout.h: layout encodings (TirLayout, see tir.h) and their linear layouts: the linear
 * layout of an encoding at a shape, the emitted arithmetic that turns register and thread
 * indices into coordinates, and the default blocked layouts the layout pass starts from. */
#ifndef TILE_LAYOUT_H
#define TILE_LAYOUT_H
#include <llvm-c/Core.h>
#include "linear_layout.h"
#include "tir.h"

/* The linear layout of a value of shape[vrank] with encoding l (NULL or LAYOUT_SCALAR: one
 * register, no lane or warp bits). 0, or -1 when the encoding has no linear form. */
int layout_ll(const TirLayout *l, const int *shape, int vrank, LinearLayout *out);
int layout_regs(const TirLayout *l, const int *shape, int vrank);

/* ---- emitted i32 arithmetic (LLVM) ---- */
/* XOR{basis[i] : bit i of x} for a run-time x, with runs of consecutive power-of-two bases
 * done as one shift and mask. */
LLVMValueRef layout_emit_map(LLVMBuilderRef b, const uint32_t *basis, int n, LLVMValueRef x);
/* acc and t combined: OR marked disjoint when their bits never overlap (LLVM sees an
 * addition), else XOR; t alone when acc is NULL */
LLVMValueRef layout_emit_combine(LLVMBuilderRef b, LLVMValueRef acc, LLVMValueRef t, int disjoint);
/* Flat offset of register r held by thread `tid` (lane and warp bits of tid). */
LLVMValueRef layout_emit_flat(LLVMBuilderRef b, const LinearLayout *ll, LLVMValueRef tid,
                              LLVMValueRef r);
/* Coordinates of a flat offset, per output dim. */
void layout_emit_unflat(LLVMBuilderRef b, const LinearLayout *ll, LLVMValueRef flat,
                        LLVMValueRef *coord);
/* Coordinates (per value dim, i32) of register r held by thread `tid`. */
void layout_emit_coords(LLVMBuilderRef b, const LinearLayout *ll, LLVMValueRef tid,
                        LLVMValueRef r, LLVMValueRef *coord);
/* Bits of x scattered to the set bits of `mask` (x's bit i to mask's i-th set bit). */
LLVMValueRef layout_emit_deposit(LLVMBuilderRef b, LLVMValueRef x, uint32_t mask);
/* The bits of x at the set bits of `mask`, packed low (the inverse of deposit). */
LLVMValueRef layout_emit_extract(LLVMBuilderRef b, LLVMValueRef x, uint32_t mask);

/* The default blocked layout: up to 16-byte vectors along the last dim, lanes fastest dim
 * first, warps along dim 0 first, order [rank-1, ..., 0]. Host: spt huge, tpw = wpc = 1. */
TirLayout layout_default_blocked(int rank, const int *shape_hint, int elem_bytes,
                                 int num_warps, int threads_per_warp);
/* A blocked layout for memory accesses whose fastest dim is order[0]: up to max_vec elements
 * (and 16 bytes) per thread along it, lanes following `order`, warps slowest dim first. */
TirLayout layout_coalesced(int rank, const int *shape, int elem_bytes, const int *order,
                           int max_vec, int num_warps, int threads_per_warp);
/* A blocked layout in which each thread holds the whole of `axis` in its registers (in
 * coordinate order: the axis is the order's first dim); lanes and warps go to the other
 * dims, replicating where those are small. For scans. */
TirLayout layout_axis_in_thread(int rank, const int *shape, int axis, int num_warps,
                                int threads_per_warp);
TirLayout layout_slice(const TirLayout *parent, int value_axis);
TirLayout layout_permute2(Arena *a, const TirLayout *l); /* a rank-2 value's transpose */
/* Grows a linear layout (not sliced) to cover a value of `shape` in its class (a broadcast's
 * result, a tile sharing index vectors with the one the map was made for): the map is
 * replaced by one at the larger shape whose replica lanes and warps take the new coordinates
 * first, then registers; the class's smaller values are its projections (layout_ll). 0, or
 * -1 when the map has no room. */
int layout_grow(Arena *a, TirLayout *l, const int *shape, int vrank);
TirLayout layout_mma(int warps_m, int warps_n);
/* AMD MFMA accumulators: `inst` 16 (16x16x16) or 32 (32x32x8), warps as for layout_mma. */
TirLayout layout_mfma(int inst, int warps_m, int warps_n);
/* Operand op_idx (0: A, 1: B) of a dot whose result has encoding `parent`. */
TirLayout layout_dot_operand(const TirLayout *parent, int op_idx, int kwidth);
/* The parent dim of value dim `axis` in layout l. */
int layout_parent_dim(const TirLayout *l, int axis);

/* The layout pass (compiler/pass_layout.c): every value gets a layout for target t;
 * conflicting constraints get TIR_CONVERT_LAYOUT ops. Sets k->threads_per_warp (and
 * num_warps = 1 on the host). Returns 0, or -1 with a diagnostic. */
struct Target;
int pass_assign_layouts(TirKernel *k, const struct Target *t, Diags *d);

#endif
