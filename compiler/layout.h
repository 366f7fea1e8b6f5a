/* layout.h: the ownership math of TirLayout (see tir.h): how many elements each thread
 * holds for a (layout, shape), which coordinates register r holds, register remapping for
 * broadcasts, and the default blocked layouts the layout pass starts from. */
#ifndef TILE_LAYOUT_H
#define TILE_LAYOUT_H
#include <llvm-c/Core.h>
#include "tir.h"

/* Everything about one (layout, value shape) pair, in parent-dim terms. */
typedef struct LayoutInfo {
    int prank, vrank;           /* parent rank, value rank */
    int vdim[TIR_MAX_RANK];     /* parent dim -> value dim, -1 when sliced */
    int S[TIR_MAX_RANK];        /* parent shape (1 at sliced dims) */
    int sptp[TIR_MAX_RANK];     /* spt' = min(spt, S) */
    int C[TIR_MAX_RANK];        /* coverage spt' * tpw * wpc */
    int n[TIR_MAX_RANK];        /* elements per thread along the dim */
    int rstride[TIR_MAX_RANK];  /* register-index stride of the dim */
    int lstride[TIR_MAX_RANK];  /* lane-index stride of the dim */
    int wstride[TIR_MAX_RANK];  /* warp-index stride of the dim */
    int tpw[TIR_MAX_RANK], wpc[TIR_MAX_RANK], order[TIR_MAX_RANK];
    int lanes;                  /* threads per warp (product of tpw) */
    int R;                      /* registers (elements per thread) */
} LayoutInfo;

/* Fills `li` for a value of shape[vrank] with layout `l` (NULL or LAYOUT_SCALAR: R = 1). */
void layout_info(LayoutInfo *li, const TirLayout *l, const int *shape, int vrank);
int layout_regs(const TirLayout *l, const int *shape, int vrank);
/* Distinct lanes / warps holding different coordinates along parent dim d (no replicas). */
int layout_distinct_lanes(const LayoutInfo *li, int d);
int layout_distinct_warps(const LayoutInfo *li, int d);

/* LLVM i32 values: per-dim register index i[d] (parent dims) of register r. */
void layout_emit_reg_split(LLVMBuilderRef b, const LayoutInfo *li, LLVMValueRef r,
                           LLVMValueRef *i);
/* Register index from per-dim indices (dims with n == 1 ignore i[d]). */
LLVMValueRef layout_emit_reg_join(LLVMBuilderRef b, const LayoutInfo *li, LLVMValueRef *i);
/* Coordinates (per value dim, i32) of register r held by thread `tid`. */
void layout_emit_coords(LLVMBuilderRef b, const LayoutInfo *li, LLVMValueRef tid,
                        LLVMValueRef r, LLVMValueRef *coord);
/* Coordinates in parent dims (0 at sliced dims). */
void layout_emit_parent_coords(LLVMBuilderRef b, const LayoutInfo *li, LLVMValueRef tid,
                               LLVMValueRef r, LLVMValueRef *coord);
/* Lane / warp position of `tid` along parent dim d. */
LLVMValueRef layout_emit_lane_d(LLVMBuilderRef b, const LayoutInfo *li, LLVMValueRef tid, int d);
LLVMValueRef layout_emit_warp_d(LLVMBuilderRef b, const LayoutInfo *li, LLVMValueRef tid, int d);

/* The default blocked layout: up to 16-byte vectors along the last dim, lanes fastest dim
 * first, warps along dim 0 first, order [rank-1, ..., 0]. Host: spt huge, tpw = wpc = 1. */
TirLayout layout_default_blocked(int rank, const int *shape_hint, int elem_bytes,
                                 int num_warps, int threads_per_warp);
TirLayout layout_slice(const TirLayout *parent, int value_axis);
TirLayout layout_permute2(const TirLayout *l); /* rank-2 blocked transpose */
/* The parent dim of value dim `axis` in layout l. */
int layout_parent_dim(const TirLayout *l, int axis);

/* The layout pass (compiler/pass_layout.c): every value gets a layout for target t;
 * conflicting constraints get TIR_CONVERT_LAYOUT ops. Sets k->threads_per_warp (and
 * num_warps = 1 on the host). Returns 0, or -1 with a diagnostic. */
struct Target;
int pass_assign_layouts(TirKernel *k, const struct Target *t, Diags *d);

#endif
