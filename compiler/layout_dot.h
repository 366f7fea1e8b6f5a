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
/* On a target with wgmma: `to` is an operand encoding whose shared buffer wgmma can read
 * (a conversion to it goes through a buffer in wgmma's layout); dot_wgmma_reads: the dot's
 * warps lie in whole warpgroups along M, so wgmma reads its operand x straight from that
 * buffer (compiler/lower_wgmma.c has the final word). */
int layout_wgmma_operand(const struct Target *t, const TirLayout *to);
int dot_wgmma_reads(const struct Target *t, const TirOp *dot, const TirValue *x);

#endif
