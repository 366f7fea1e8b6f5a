/* layout_shape.c: how layouts map through the shape ops (reshape, permute, join, split), in
 * either direction, as linear layouts: a reshape keeps the map and relabels its output (flat
 * row-major offsets are the same bits), a permute permutes its outputs, a join adds register
 * bit 0 for the new last dim of 2 (a thread holds both halves of each pair), a split removes
 * it. The results are LAYOUT_LINEAR. */
#include "layout_shape.h"

static void inverse(const int *perm, int rank, int *inv)
{
    for (int d = 0; d < rank; d++)
        inv[perm[d]] = d;
}

void tir_permute_dims(const TirOp *op, int *perm)
{
    for (int d = 0; d < op->ops[0]->type.rank; d++)
        perm[d] = (int)((op->attr.i >> (4 * d)) & 15);
}

/* The map of op's other side: forward, operand -> result; else result -> operand. */
static int map_ll(const TirOp *op, int forward, const LinearLayout *s, LinearLayout *d)
{
    const TirValue *dst = forward ? op->results[0] : op->ops[0];
    int perm[TIR_MAX_RANK], inv[TIR_MAX_RANK];
    switch (op->code) {
    case TIR_RESHAPE:
        ll_reshape(s, dst->type.rank, dst->type.shape, d);
        return 0;
    case TIR_PERMUTE:
        tir_permute_dims(op, perm);
        inverse(perm, op->ops[0]->type.rank, inv);
        ll_permute(s, forward ? perm : inv, d);
        return 0;
    case TIR_JOIN: return forward ? ll_join(s, d) : ll_unjoin(s, d);
    case TIR_SPLIT: return forward ? ll_unjoin(s, d) : ll_join(s, d);
    default: return -1;
    }
}

int layout_through(Arena *a, const TirOp *op, int forward, const TirLayout *from, TirLayout *out)
{
    const TirValue *src = forward ? op->ops[0] : op->results[0];
    LinearLayout s, *d = arena_alloc(a, sizeof *d);
    if (!d || !from || layout_ll(from, src->type.shape, src->type.rank, &s) || map_ll(op, forward, &s, d))
        return -1;
    *out = (TirLayout){.kind = LAYOUT_LINEAR, .rank = d->rank, .ll = d};
    return 0;
}

int layout_map_ll(const TirOp *op, const LinearLayout *operand, LinearLayout *result)
{
    return map_ll(op, 1, operand, result);
}
