/* layout_dot.h: the encodings of a dot on a target (compiler/layout_dot.c). */
#ifndef TILE_LAYOUT_DOT_H
#define TILE_LAYOUT_DOT_H
#include "layout.h"
#include "target.h"

/* Elements per 32-bit register of the dot's mma.sync operands (2 for f16/bf16 with an f32
 * accumulator, 4 for i8 with i32, 1 for f32 when the dot allows tf32); on MFMA targets the K
 * elements per lane of one instruction (4, f16/bf16 with f32 only); 0 when the dot cannot use
 * the target's matrix instructions (none, other types, M < 16, N < 8 (16 on MFMA), K below
 * one instruction). */
int dot_kwidth(const TirOp *dot, const struct Target *t);
MmaKind dot_mma_kind(const TirOp *dot);
/* The target's matrix encoding of the dot's result (mma.sync or MFMA): warps along M and N by
 * the tile counts, or all along M when `chained` (the result feeds another dot's A operand,
 * which then stays in registers). MFMA takes 32x32x8 instructions where each warp's part is
 * at least 32x32, else 16x16x16. */
TirLayout dot_mma_layout(const TirOp *dot, const struct Target *t, int num_warps, int chained,
                         int mfma_size /* AMD: 16 or 32 asked for (0: by the tile) */);
/* The dot's result was given a matrix encoding it can be lowered with. */
int dot_uses_mma(const TirOp *dot, const struct Target *t);

#endif
