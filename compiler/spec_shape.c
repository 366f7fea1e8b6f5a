/* spec_shape.c: the shape ops other builders compose (spec.h): reshape, permute and the rows
 * view of a tile along one axis ([M, n], the axis last) and back. They relabel or move data
 * between threads; the layout pass decides which. Arguments are checked by their callers. */
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
