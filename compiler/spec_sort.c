/* spec_sort.c: sort, argsort, topk and argtopk along a dim too long for one thread to hold
 * (spec.h: spec_sort_rows), as a bitonic network built from shape ops on whole tiles, so the
 * dim stays spread over the threads and the layout pass moves data between them. The dim
 * goes last ([M, n], n = 2^k); compare-exchange step (s, j) views the rows as [M, A, 2, B]
 * with B = 2^j (the middle dim is bit j of the position), splits the pairs, and keeps or
 * swaps them: ascending where bit s of the position is 0, descending where it is 1 (the last
 * stage sorts everything the asked way). NaN counts as the largest value, as in the in-thread
 * sort; indices travel with their values; ties in no particular order. */
#include "spec.h"

typedef struct Sorter {
    Spec *s;
    SrcLoc at;
    int desc;     /* the order asked for */
    int is_float; /* NaN goes last */
} Sorter;

/* [M, A, 2, B] <-> [M, A, B, 2] (swapping the last two dims is its own inverse) */
static TirValue *swap_last(Spec *s, TirValue *x, SrcLoc at)
{
    return spec_permute(s, x, (const int[]){0, 1, 3, 2}, at);
}

/* x [M, n] as pairs one bit j apart: lo (bit j = 0) and hi, [M, A, B] each. */
static void pairs(Spec *s, TirValue *x, int j, TirValue **lo, TirValue **hi, SrcLoc at)
{
    int m = x->type.shape[0], n = x->type.shape[1], b = 1 << j;
    TirValue *v = swap_last(s, spec_reshape(s, x, 4, (const int[]){m, n / (2 * b), 2, b}, at), at);
    TirType t = tir_type_make(x->type.elem, 3, (const int[]){m, n / (2 * b), b});
    TirType types[2] = {t, t};
    TirOp *op = tir_op_append(s->k, s->block, TIR_SPLIT, at, &v, 1, types, 2);
    *lo = op->results[0];
    *hi = op->results[1];
}

/* The inverse of pairs: [M, n] with lo at bit j = 0 and hi at 1. */
static TirValue *unpair(Spec *s, TirValue *lo, TirValue *hi, SrcLoc at)
{
    const int *d = lo->type.shape;
    TirValue *ops[2] = {lo, hi};
    TirValue *j = spec_emit(s, TIR_JOIN, at, ops, 2,
                            tir_type_make(lo->type.elem, 4, (const int[]){d[0], d[1], d[2], 2}));
    return spec_reshape(s, swap_last(s, j, at), 2, (const int[]){d[0], 2 * d[1] * d[2]}, at);
}

static TirValue *bool_tile(Sorter *o, Val v, const int *shape)
{
    return v.kind == V_ERROR ? NULL : spec_materialize(o->s, v, ET_BOOL, 3, shape, o->at);
}

/* Whether p goes before q in the order asked for; NaN counts as larger than every number
 * (last ascending, first descending), as in the in-thread sort. */
static Val before(Sorter *o, TirValue *p, TirValue *q)
{
    Spec *s = o->s;
    Val r = spec_binary(s, o->desc ? OP_GT : OP_LT, val_tile(p), val_tile(q), o->at);
    if (!o->is_float)
        return r;
    TirValue *big = o->desc ? p : q, *num = o->desc ? q : p; /* big NaN, num a number */
    Val big_nan = spec_binary(s, OP_NE, val_tile(big), val_tile(big), o->at);
    Val num_ok = spec_binary(s, OP_EQ, val_tile(num), val_tile(num), o->at);
    return spec_binary(s, OP_LOGOR, r, spec_binary(s, OP_LOGAND, big_nan, num_ok, o->at), o->at);
}

static TirValue *select(Spec *s, TirValue *c, TirValue *a, TirValue *b, SrcLoc at)
{
    TirValue *ops[3] = {c, a, b};
    return spec_emit(s, TIR_SELECT, at, ops, 3, a->type);
}

/* Compare-exchange step (stage, j) of rows v [M, n] and their indices idx (or NULL). In the
 * [M, A, B] view of the pairs, bit `stage` of a position is bit stage - j - 1 of its A index. */
static int step(Sorter *o, TirValue **v, TirValue **idx, int stage, int j, int k)
{
    Spec *s = o->s;
    TirValue *lo, *hi, *ilo = NULL, *ihi = NULL;
    pairs(s, *v, j, &lo, &hi, o->at);
    if (*idx)
        pairs(s, *idx, j, &ilo, &ihi, o->at);
    const int *shape = lo->type.shape;
    TirValue *swap = bool_tile(o, before(o, hi, lo), shape);
    if (swap && stage < k) { /* blocks whose bit `stage` is 1 go the other way */
        int a = shape[1];
        TirValue *blk = spec_emit(s, TIR_ARANGE, o->at, NULL, 0, tir_type_make(ET_I32, 1, &a));
        blk->def->attr.i = 0, blk->def->attr.i2 = a;
        Val bit = spec_binary(s, OP_BITAND, val_tile(blk), val_const_int(ET_I32, 1 << (stage - j - 1), 1), o->at);
        Val other = spec_binary(s, OP_NE, bit, val_const_int(ET_I32, 0, 1), o->at);
        TirValue *o1 = other.kind == V_ERROR ? NULL : spec_as_tile(s, other, o->at);
        TirValue *o3 = o1 ? spec_expand_dims(s, spec_expand_dims(s, o1, 0, o->at), 2, o->at) : NULL;
        TirValue *rev = o3 ? bool_tile(o, val_tile(o3), shape) : NULL;
        TirValue *back = rev ? bool_tile(o, before(o, lo, hi), shape) : NULL;
        swap = back ? select(s, rev, back, swap, o->at) : NULL;
    }
    if (!swap)
        return 0;
    *v = unpair(s, select(s, swap, hi, lo, o->at), select(s, swap, lo, hi, o->at), o->at);
    if (*idx)
        *idx = unpair(s, select(s, swap, ihi, ilo, o->at), select(s, swap, ilo, ihi, o->at), o->at);
    return 1;
}

/* The first kk of each row of x [M, n]: the even halves, log2(n / kk) times, of its [M, kk,
 * n / kk] view with the row's positions p = q * kk + r regrouped by r. */
static TirValue *first(Spec *s, TirValue *x, int kk, SrcLoc at)
{
    int m = x->type.shape[0], n = x->type.shape[1];
    if (kk == n)
        return x;
    TirValue *v = spec_reshape(s, x, 3, (const int[]){m, n / kk, kk}, at);
    v = spec_permute(s, v, (const int[]){0, 2, 1}, at);
    for (int w = n / kk; w > 1; w /= 2) {
        TirValue *p = spec_reshape(s, v, 4, (const int[]){m, kk, w / 2, 2}, at);
        TirType h = tir_type_make(x->type.elem, 3, (const int[]){m, kk, w / 2});
        TirType types[2] = {h, h};
        v = tir_op_append(s->k, s->block, TIR_SPLIT, at, &p, 1, types, 2)->results[0];
    }
    return spec_reshape(s, v, 2, (const int[]){m, kk}, at);
}

Val spec_sort_rows(Spec *s, TirValue *x, int axis, int desc, int want_idx, int kk, SrcLoc at)
{
    Sorter o = {s, at, desc, et_is_float(x->type.elem)};
    TirValue *v = spec_to_rows(s, x, axis, at), *idx = NULL;
    int m = v->type.shape[0], n = v->type.shape[1], k = __builtin_ctz((unsigned)n);
    if (want_idx) {
        TirValue *at_n = spec_emit(s, TIR_ARANGE, at, NULL, 0, tir_type_make(ET_I32, 1, &n));
        at_n->def->attr.i = 0, at_n->def->attr.i2 = n;
        idx = spec_materialize(s, val_tile(spec_expand_dims(s, at_n, 0, at)), ET_I32, 2,
                               (const int[]){m, n}, at);
    }
    for (int stage = 1; stage <= k; stage++)
        for (int j = stage - 1; j >= 0; j--)
            if (!step(&o, &v, &idx, stage, j, k))
                return val_error();
    TirValue *r = first(s, want_idx ? idx : v, kk ? kk : n, at);
    return val_tile(spec_from_rows(s, r, &x->type, axis, at));
}
