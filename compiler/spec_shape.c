/* spec_shape.c: the shape ops other builders compose (spec.h): reshape, permute, the rows view
 * of a tile along one axis ([M, n], the axis last) and back, and cat (Triton's tl.cat), which
 * is a join, a permute and a reshape. They relabel or move data between threads; the layout
 * pass decides which. Arguments are checked by their callers. */
#include "spec.h"

TirValue *spec_reshape(Spec *s, TirValue *x, int rank, const int *shape, SrcLoc at)
{
    TirType t = tir_type_make(x->type.elem, rank, shape);
    if (t.elem == ET_PTR)
        t.pointee = x->type.pointee;
    return spec_emit(s, TIR_RESHAPE, at, &x, 1, t);
}

TirValue *spec_permute(Spec *s, TirValue *x, const int *perm, SrcLoc at)
{
    TirType t = x->type;
    int64_t packed = 0, identity = 1;
    for (int d = 0; d < t.rank; d++) {
        t.shape[d] = x->type.shape[perm[d]];
        packed |= (int64_t)perm[d] << (4 * d);
        identity &= perm[d] == d;
    }
    if (identity)
        return x;
    TirValue *r = spec_emit(s, t.rank == 2 ? TIR_TRANS : TIR_PERMUTE, at, &x, 1, t);
    r->def->attr.i = t.rank == 2 ? 0 : packed;
    return r;
}

TirValue *spec_to_rows(Spec *s, TirValue *x, int axis, SrcLoc at)
{
    int rank = x->type.rank, perm[TIR_MAX_RANK], d = 0;
    for (int i = 0; i < rank; i++)
        if (i != axis)
            perm[d++] = i;
    perm[d] = axis;
    x = spec_permute(s, x, perm, at);
    int n = x->type.shape[rank - 1];
    return spec_reshape(s, x, 2, (const int[]){tir_type_numel(&x->type) / n, n}, at);
}

TirValue *spec_from_rows(Spec *s, TirValue *r, const TirType *like, int axis, SrcLoc at)
{
    int rank = like->rank, shape[TIR_MAX_RANK], perm[TIR_MAX_RANK], d = 0;
    for (int i = 0; i < rank; i++)
        if (i != axis)
            shape[d++] = like->shape[i];
    shape[d] = r->type.shape[1];
    r = spec_reshape(s, r, rank, shape, at);
    /* result dim i is r's dim perm[i]: the axis came from the last */
    for (int i = 0, j = 0; i < rank; i++)
        perm[i] = i == axis ? rank - 1 : j++;
    return spec_permute(s, r, perm, at);
}

TirValue *spec_cat(Spec *s, TirValue *a, TirValue *b, SrcLoc at)
{
    TirType out = a->type; /* [2 * n0, ...] */
    out.shape[0] *= 2;
    if (out.rank == TIR_MAX_RANK) { /* the join's new dim needs room: view as [n0, rest] */
        int view[2] = {a->type.shape[0], tir_type_numel(&a->type) / a->type.shape[0]};
        a = spec_reshape(s, a, 2, view, at);
        b = spec_reshape(s, b, 2, view, at);
    }
    TirType t = a->type;
    int rank = t.rank, perm[TIR_MAX_RANK];
    t.shape[t.rank++] = 2;
    TirValue *ops[2] = {a, b};
    TirValue *j = spec_emit(s, TIR_JOIN, at, ops, 2, t); /* [n0, ..., 2] */
    perm[0] = rank; /* a's copy of each coordinate, then b's: [2, n0, ...] */
    for (int d = 0; d < rank; d++)
        perm[d + 1] = d;
    return spec_reshape(s, spec_permute(s, j, perm, at), out.rank, out.shape, at);
}
