/* spec_dot_batched.c: dot of rank-3 tiles, [B, M, K] x [B, K, N] (+ [B, M, N]), as Triton's
 * tl.dot takes them: one rank-2 dot per batch index, each with the tensor cores where its
 * slices take them. The batch dim is moved last (a permute: it relabels dims), the tiles are
 * cut into their B slices by halving that dim with split(), the slices' dots run, and join()
 * puts the results back together before the batch dim moves back to the front. So later
 * passes see only ops they already have. Arguments are checked by spec_builtins.c. */
#include "spec.h"

/* out[c] = x[:, :, c] for each c of x's last dim (n of them, a power of two): x reshaped to
 * [a, b, n / 2, 2] splits into its even and its odd slices, and each half is cut again. */
static int slices(Spec *s, TirValue *x, TirValue **out, SrcLoc at)
{
    int n = x->type.shape[2], half = n / 2;
    if (n == 1) {
        out[0] = spec_reshape(s, x, 2, x->type.shape, at);
        return 1;
    }
    int shape[4] = {x->type.shape[0], x->type.shape[1], half, 2};
    TirValue *pairs = spec_reshape(s, x, 4, shape, at);
    TirType t = tir_type_make(x->type.elem, 3, shape);
    TirType types[2] = {t, t};
    TirOp *op = tir_op_append(s->k, s->block, TIR_SPLIT, at, &pairs, 1, types, 2);
    TirValue **part = arena_alloc(s->arena, sizeof *part * (size_t)n);
    if (!part || !slices(s, op->results[0], part, at) || !slices(s, op->results[1], part + half, at))
        return 0;
    for (int i = 0; i < half; i++)
        out[2 * i] = part[i], out[2 * i + 1] = part[half + i];
    return 1;
}

/* The inverse of slices: n tiles [a, b] (stride apart in r) as [a, b, n]. */
static TirValue *joined(Spec *s, TirValue **r, int n, int stride, SrcLoc at)
{
    int shape[4] = {r[0]->type.shape[0], r[0]->type.shape[1], 1, 2};
    if (n == 1)
        return spec_reshape(s, r[0], 3, shape, at);
    TirValue *halves[2] = {joined(s, r, n / 2, 2 * stride, at), joined(s, r + stride, n / 2, 2 * stride, at)};
    shape[2] = n / 2;
    TirValue *pairs = spec_emit(s, TIR_JOIN, at, halves, 2, tir_type_make(r[0]->type.elem, 4, shape));
    shape[2] = n;
    return spec_reshape(s, pairs, 3, shape, at);
}

Val spec_dot_batched(Spec *s, TirValue *x, TirValue *y, TirValue *acc, int64_t precision, SrcLoc at)
{
    static const int batch_last[3] = {1, 2, 0}, batch_first[3] = {2, 0, 1};
    int n = x->type.shape[0];
    TirValue **xs = arena_alloc(s->arena, sizeof *xs * (size_t)n * 3), **ys = xs + n, **as = ys + n;
    if (!xs || !slices(s, spec_permute(s, x, batch_last, at), xs, at) ||
        !slices(s, spec_permute(s, y, batch_last, at), ys, at) ||
        !slices(s, spec_permute(s, acc, batch_last, at), as, at))
        return val_error();
    for (int b = 0; b < n; b++) {
        TirValue *ops[3] = {xs[b], ys[b], as[b]};
        as[b] = spec_emit(s, TIR_DOT, at, ops, 3, as[b]->type);
        as[b]->def->attr.i = precision;
    }
    return val_tile(spec_permute(s, joined(s, as, n, 1, at), batch_first, at));
}
