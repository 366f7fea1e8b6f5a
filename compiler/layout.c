/* layout.c: layout encodings (tir.h): their linear layouts at a given shape (the only form
 * lowering reads), and the constructors the layout pass uses (default blocked layouts,
 * slices, transposes). All sizes are powers of two. */
#include <string.h>
#include "layout.h"

static int min_i(int a, int b) { return a < b ? a : b; }
static int max_i(int a, int b) { return a > b ? a : b; }

/* ---- encodings as linear layouts ---- */
static void unit(int rank, int d, int v, int *c)
{
    for (int e = 0; e < rank; e++)
        c[e] = e == d ? v : 0;
}

/* Blocked (tir.h): along each dim in `order`, registers take spt' contiguous elements then
 * the repetitions of the coverage; lanes and warps split by `order` as well. */
static int blocked_ll(const TirLayout *l, const int *S, LinearLayout *ll)
{
    int rank = l->rank, c[TIR_MAX_RANK], rc = 0;
    for (int j = 0; j < rank; j++) {
        int d = l->order[j], sp = min_i(l->spt[d], S[d]);
        int cover = sp * l->tpw[d] * l->wpc[d];
        for (int v = 1; v < sp; v *= 2)
            unit(rank, d, v, c), rc |= ll_push(ll, LL_REG, c);
        for (int v = cover; v < S[d]; v *= 2)
            unit(rank, d, v, c), rc |= ll_push(ll, LL_REG, c);
    }
    for (int j = 0; j < rank; j++) {
        int d = l->order[j], sp = min_i(l->spt[d], S[d]);
        for (int v = 1; v < l->tpw[d]; v *= 2)
            unit(rank, d, v * sp, c), rc |= ll_push(ll, LL_LANE, c);
    }
    for (int j = 0; j < rank; j++) {
        int d = l->order[j], sp = min_i(l->spt[d], S[d]);
        for (int v = 1; v < l->wpc[d]; v *= 2)
            unit(rank, d, v * sp * l->tpw[d], c), rc |= ll_push(ll, LL_WARP, c);
    }
    return rc ? -1 : 0;
}

/* The parent shape: the value's shape with size 1 at each sliced dim. */
static int parent_shape(const TirLayout *l, const int *shape, int vrank, int *S)
{
    int v = 0;
    for (int d = 0; d < l->rank; d++)
        S[d] = (l->sliced >> d) & 1 ? 1 : v < vrank ? shape[v++] : 1;
    return v == vrank ? 0 : -1;
}

int layout_ll(const TirLayout *l, const int *shape, int vrank, LinearLayout *out)
{
    int S[TIR_MAX_RANK];
    if (!l || l->kind == LAYOUT_SCALAR || vrank == 0)
        return ll_init(out, vrank, shape);
    if (l->rank > TIR_MAX_RANK || parent_shape(l, shape, vrank, S) != 0 ||
        ll_init(out, l->rank, S) != 0)
        return -1;
    int rc = -1;
    switch (l->kind) {
    case LAYOUT_BLOCKED: rc = blocked_ll(l, S, out); break;
    default: break;
    }
    /* size-1 parent dims add no bits to a flat offset: dropping them keeps every basis */
    out->rank = vrank;
    memcpy(out->shape, shape, sizeof(int) * (size_t)vrank);
    return rc;
}

int layout_regs(const TirLayout *l, const int *shape, int vrank)
{
    LinearLayout ll;
    return layout_ll(l, shape, vrank, &ll) == 0 ? ll_regs(&ll) : 1;
}

/* ---- constructing layouts ---- */
static void default_order(TirLayout *l, int rank)
{
    for (int j = 0; j < rank; j++)
        l->order[j] = rank - 1 - j;
}

static int hint_numel(int rank, const int *shape)
{
    int n = 1;
    for (int d = 0; d < rank; d++)
        n *= shape[d];
    return n;
}

TirLayout layout_default_blocked(int rank, const int *shape, int elem_bytes, int num_warps,
                                 int threads_per_warp)
{
    TirLayout l = {.kind = LAYOUT_BLOCKED, .rank = rank};
    default_order(&l, rank);
    for (int d = 0; d < rank; d++)
        l.spt[d] = l.tpw[d] = l.wpc[d] = 1;
    if (threads_per_warp <= 1) {
        for (int d = 0; d < rank; d++)
            l.spt[d] = 1 << 20;
        return l;
    }
    int threads = num_warps * threads_per_warp;
    int vec = 16 / (elem_bytes > 0 ? elem_bytes : 4);
    vec = min_i(vec, max_i(1, hint_numel(rank, shape) / threads));
    l.spt[rank - 1] = max_i(1, min_i(vec, shape[rank - 1]));
    int lanes = threads_per_warp;
    for (int d = rank - 1; d >= 0; d--) {
        l.tpw[d] = min_i(lanes, max_i(1, shape[d] / l.spt[d]));
        lanes /= l.tpw[d];
    }
    l.tpw[0] *= lanes;
    int warps = num_warps;
    for (int d = 0; d < rank; d++) {
        l.wpc[d] = min_i(warps, max_i(1, shape[d] / (l.spt[d] * l.tpw[d])));
        warps /= l.wpc[d];
    }
    l.wpc[0] *= warps;
    return l;
}

int layout_parent_dim(const TirLayout *l, int axis)
{
    for (int d = 0, v = 0; d < l->rank; d++) {
        if ((l->sliced >> d) & 1)
            continue;
        if (v++ == axis)
            return d;
    }
    return -1;
}

TirLayout layout_slice(const TirLayout *parent, int value_axis)
{
    TirLayout l = *parent;
    int d = layout_parent_dim(parent, value_axis);
    if (d >= 0)
        l.sliced |= 1u << d;
    return l;
}

TirLayout layout_permute2(const TirLayout *l)
{
    TirLayout t = *l;
    int p0 = layout_parent_dim(l, 0), p1 = layout_parent_dim(l, 1);
    if (p0 < 0 || p1 < 0)
        return t;
    t.spt[p0] = l->spt[p1], t.spt[p1] = l->spt[p0];
    t.tpw[p0] = l->tpw[p1], t.tpw[p1] = l->tpw[p0];
    t.wpc[p0] = l->wpc[p1], t.wpc[p1] = l->wpc[p0];
    for (int j = 0; j < l->rank; j++)
        t.order[j] = l->order[j] == p0 ? p1 : l->order[j] == p1 ? p0 : l->order[j];
    return t;
}
