/* layout_shape.h: layouts through reshape, permute, join and split (compiler/layout_shape.c). */
#ifndef TILE_LAYOUT_SHAPE_H
#define TILE_LAYOUT_SHAPE_H
#include "layout.h"

/* The layout on the other side of shape op `op` from `from`: forward, from the operand's
 * layout to the result's; else from the result's to the operand's. 0, or -1 where there is
 * none (a split of a tile whose pairs are not in one thread's consecutive registers). */
int layout_through(Arena *a, const TirOp *op, int forward, const TirLayout *from, TirLayout *out);
/* The result's map from the operand's (lowering checks the two agree). */
int layout_map_ll(const TirOp *op, const LinearLayout *operand, LinearLayout *result);
/* TIR_PERMUTE's dims: result dim d is operand dim perm[d]. */
void tir_permute_dims(const TirOp *op, int *perm);

#endif
