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

/* Pushes the bits of the index `dim` for coordinates v*step along output dim d of a rank-2
 * layout, v = 1, 2, 4, ... while below `count`. */
static int push_run(LinearLayout *ll, LLDim dim, int d, int step, int count)
{
    int rc = 0, c[2];
    for (int v = 1; v < count; v *= 2) {
        c[d] = v * step, c[1 - d] = 0;
        rc |= ll_push(ll, dim, c);
    }
    return rc;
}

/* Registers repeating a coverage `cover` along dim d up to the shape. */
static int push_reps(LinearLayout *ll, int d, int cover)
{
    return push_run(ll, LL_REG, d, cover, ll->shape[d] / cover);
}

/* mma.sync m16n8 accumulators (PTX: c0,c1 row groupID, cols 2*threadID_in_group + i;
 * c2,c3 the same 8 rows below). */
static int mma_ll(const TirLayout *l, LinearLayout *ll)
{
    int wm = l->wpc[0], wn = l->wpc[1], rc = 0;
    rc |= push_run(ll, LL_REG, 1, 1, 2);
    rc |= push_run(ll, LL_LANE, 1, 2, 4) | push_run(ll, LL_LANE, 0, 1, 8);
    rc |= push_run(ll, LL_REG, 0, 8, 2);
    rc |= push_run(ll, LL_WARP, 0, 16, wm) | push_run(ll, LL_WARP, 1, 8, wn);
    return rc | push_reps(ll, 1, 8 * wn) | push_reps(ll, 0, 16 * wm);
}

/* MFMA accumulators (tir.h): rows 1, 2 in registers, the columns in lanes, rows 4 (and 8 for
 * 16x16) in the top lanes; 32x32 puts rows 8 and 16 in registers. */
static int mfma_ll(const TirLayout *l, LinearLayout *ll)
{
    int n = l->inst, wm = l->wpc[0], wn = l->wpc[1], rc = 0;
    rc |= push_run(ll, LL_REG, 0, 1, 4) | push_run(ll, LL_LANE, 1, 1, n);
    rc |= push_run(ll, LL_LANE, 0, 4, 64 / n);
    if (n == 32)
        rc |= push_run(ll, LL_REG, 0, 8, 4);
    rc |= push_run(ll, LL_WARP, 0, n, wm) | push_run(ll, LL_WARP, 1, n, wn);
    return rc | push_reps(ll, 1, n * wn) | push_reps(ll, 0, n * wm);
}

/* Zero bases for the warps along the result dim an operand does not have. */
static int push_copies(LinearLayout *ll, int warps)
{
    int rc = 0;
    for (int v = 1; v < warps; v *= 2)
        rc |= ll_push_zero(ll, LL_WARP);
    return rc;
}

/* mma.sync operands, kw elements per 32-bit register. A [M, K] (PTX m16n8k16 f16: a0,a1 row
 * groupID, cols 2*threadID_in_group + i; a2,a3 rows + 8; a4..a7 cols + 8), B [K, N] (b0,b1
 * rows 2*threadID_in_group + i, col groupID; b2,b3 rows + 8); k16 for 16-bit types, k32 for
 * i8, k8 for tf32 follow the same pattern scaled by kw. Repetitions: A along K then M, B
 * along N then K. */
static int dot_operand_ll(const TirLayout *l, LinearLayout *ll)
{
    int kw = l->kwidth, wm = l->wpc[0], wn = l->wpc[1], rc = 0;
    int k = l->op_idx == 0 ? 1 : 0, mn = 1 - k; /* the K dim and the other one */
    rc |= push_run(ll, LL_REG, k, 1, kw);
    rc |= push_run(ll, LL_LANE, k, kw, 4) | push_run(ll, LL_LANE, mn, 1, 8);
    if (l->op_idx == 0) {
        rc |= push_run(ll, LL_REG, 0, 8, 2) | push_run(ll, LL_REG, 1, 4 * kw, 2);
        rc |= push_run(ll, LL_WARP, 0, 16, wm) | push_copies(ll, wn);
        return rc | push_reps(ll, 1, 8 * kw) | push_reps(ll, 0, 16 * wm);
    }
    rc |= push_run(ll, LL_REG, 0, 4 * kw, 2);
    rc |= push_copies(ll, wm) | push_run(ll, LL_WARP, 1, 8, wn);
    /* N before K: the fragments of one K step sit in consecutive registers (ldmatrix x4) */
    return rc | push_reps(ll, 1, 8 * wn) | push_reps(ll, 0, 8 * kw);
}

/* MFMA operands: 4 consecutive K elements in registers, the rows of A (columns of B) in the
 * low lanes, K's next bits in the top lanes; repetitions along K before M (A) or N before K
 * (B), as for mma.sync. */
static int mfma_operand_ll(const TirLayout *l, LinearLayout *ll)
{
    int n = l->inst, wm = l->wpc[0], wn = l->wpc[1], rc = 0;
    int k = l->op_idx == 0 ? 1 : 0, mn = 1 - k, kstep = 4 * (64 / n);
    rc |= push_run(ll, LL_REG, k, 1, 4) | push_run(ll, LL_LANE, mn, 1, n);
    rc |= push_run(ll, LL_LANE, k, 4, 64 / n);
    if (l->op_idx == 0) {
        rc |= push_run(ll, LL_WARP, 0, n, wm) | push_copies(ll, wn);
        return rc | push_reps(ll, 1, kstep) | push_reps(ll, 0, n * wm);
    }
    rc |= push_copies(ll, wm) | push_run(ll, LL_WARP, 1, n, wn);
    return rc | push_reps(ll, 1, n * wn) | push_reps(ll, 0, kstep);
}

/* Shared memory: input bits are the bits of an element's offset in its buffer (as register
 * bits); the image of offset bit i is the element stored at offset 1 << i. */
static int shared_ll(const TirLayout *l, LinearLayout *ll)
{
    int rank = ll->rank, C = ll->shape[l->order[0]], c[TIR_MAX_RANK];
    int numel = ll_numel(ll), vec = l->vec, rc = 0, P = l->panel > 0 ? l->panel : C;
    int panel_elems = numel / C * P;
    for (int o = 1; o < numel; o *= 2) {
        int in = o % panel_elems, row = in / P, swz = (in % P) / vec, rest = row;
        int chunk = swz ^ ((row / l->per_phase) % l->max_phase);
        c[l->order[0]] = o / panel_elems * P + chunk * vec + in % vec;
        for (int j = 1; j < rank; j++) {
            int d = l->order[j];
            c[d] = rest % ll->shape[d];
            rest /= ll->shape[d];
        }
        rc |= ll_push(ll, LL_REG, c);
    }
    return rc;
}

/* The coordinates past `from` along dim d, held by each thread in registers (as a blocked
 * layout holds the repetitions past its coverage). */
static int grow_along(LinearLayout *ll, int d, int from)
{
    int c[TIR_MAX_RANK], rc = 0;
    for (int v = from; v < ll->shape[d]; v *= 2)
        unit(ll->rank, d, v, c), rc |= ll_push(ll, LL_REG, c);
    return rc;
}

/* The stored map at ll's (parent) shape. A sliced dim (size 1 there) is reduced away as a
 * reduction's result would be (its registers merged, its lanes and warps replicas). A value
 * of a class may have other sizes than the one the map was made for (a broadcast shares its
 * operand's class, and index vectors join classes of tiles of several shapes): as a blocked
 * layout does, a smaller dim takes the coordinates modulo its size (registers past it are
 * gone, lanes and warps hold replicas) and a larger one adds registers; so the layout at a
 * broadcast's operand shape stays the projection of the one at its result's. */
static int linear_ll(const TirLayout *l, LinearLayout *ll)
{
    if (!l->ll || l->ll->rank != ll->rank)
        return -1;
    LinearLayout cur = *l->ll;
    for (int d = ll->rank - 1; d >= 0; d--) {
        if (!((l->sliced >> d) & 1))
            continue;
        LinearLayout red;
        if (ll->shape[d] != 1 || ll_reduce(&cur, d, &red))
            return -1;
        /* a dim of size 1 back at d: it adds no bits, so every flat offset stays */
        for (int e = red.rank; e > d; e--)
            red.shape[e] = red.shape[e - 1];
        red.shape[d] = 1, red.rank++;
        cur = red;
    }
    LinearLayout proj;
    ll_project(&cur, ll->shape, &proj);
    int n = 0, rc = 0;
    for (int i = 0; i < proj.nbits[LL_REG]; i++)
        if (proj.basis[LL_REG][i])
            proj.basis[LL_REG][n++] = proj.basis[LL_REG][i];
    proj.nbits[LL_REG] = n;
    for (int d = 0; d < ll->rank; d++)
        if (ll->shape[d] > cur.shape[d])
            rc |= grow_along(&proj, d, cur.shape[d]);
    *ll = proj;
    return rc || !ll_covers(ll) ? -1 : 0;
}

/* The parent shape: the value's shape with size 1 at each sliced dim. */
static int parent_shape(const TirLayout *l, const int *shape, int vrank, int *S)
{
    int v = 0;
    for (int d = 0; d < l->rank; d++)
        S[d] = (l->sliced >> d) & 1 ? 1 : v < vrank ? shape[v++] : 1;
    return v == vrank ? 0 : -1;
}

static int pow2(int x) { return x > 0 && !(x & (x - 1)); }

static int supported(const TirLayout *l)
{
    if (l->kind == LAYOUT_BLOCKED || l->kind == LAYOUT_LINEAR)
        return 1;
    if (l->kind == LAYOUT_SHARED)
        return !l->sliced && !l->transposed && pow2(l->vec) && pow2(l->per_phase) &&
               pow2(l->max_phase) && (l->panel == 0 || pow2(l->panel));
    if (l->rank != 2 || l->wpc[0] < 1 || l->wpc[1] < 1)
        return 0;
    if (l->kind == LAYOUT_MMA)
        return 1;
    if (l->kind == LAYOUT_MFMA || (l->kind == LAYOUT_DOT_OPERAND && l->parent == LAYOUT_MFMA))
        return (l->inst == 16 || l->inst == 32) && (l->kind == LAYOUT_MFMA ||
                                                    (l->kwidth == 4 && (l->op_idx & ~1) == 0));
    return l->kind == LAYOUT_DOT_OPERAND && l->parent == LAYOUT_MMA &&
           (l->kwidth == 1 || l->kwidth == 2 || l->kwidth == 4) && (l->op_idx & ~1) == 0;
}

/* The encoding at the parent shape S (transposed encodings at S's transpose). */
static int parent_ll(const TirLayout *l, const int *S, LinearLayout *out)
{
    int T[2] = {S[1], S[0]};
    TirLayout u;
    if (l->transposed && l->rank == 2 && l->sliced) { /* the slices, in the encoding's dims */
        u = *l;
        u.sliced = (l->sliced & 1u) << 1 | (l->sliced >> 1 & 1u);
        l = &u;
    }
    if (!supported(l) || (l->transposed && l->rank != 2) ||
        ll_init(out, l->rank, l->transposed ? T : S) != 0)
        return -1;
    int rc = -1;
    switch (l->kind) {
    case LAYOUT_BLOCKED: rc = blocked_ll(l, out->shape, out); break;
    case LAYOUT_MMA: rc = mma_ll(l, out); break;
    case LAYOUT_DOT_OPERAND:
        rc = l->parent == LAYOUT_MFMA ? mfma_operand_ll(l, out) : dot_operand_ll(l, out);
        break;
    case LAYOUT_MFMA: rc = mfma_ll(l, out); break;
    case LAYOUT_SHARED: rc = shared_ll(l, out); break;
    case LAYOUT_LINEAR: rc = linear_ll(l, out); break;
    default: break;
    }
    if (rc == 0 && l->transposed)
        ll_permute(out, (const int[]){1, 0}, out);
    return rc;
}

int layout_ll(const TirLayout *l, const int *shape, int vrank, LinearLayout *out)
{
    int S[TIR_MAX_RANK];
    if (!l || l->kind == LAYOUT_SCALAR || vrank == 0)
        return ll_init(out, vrank, shape);
    if (l->rank > TIR_MAX_RANK || parent_shape(l, shape, vrank, S) != 0 ||
        parent_ll(l, S, out) != 0)
        return -1;
    /* size-1 parent dims add no bits to a flat offset: dropping them keeps every basis */
    out->rank = vrank;
    memcpy(out->shape, shape, sizeof(int) * (size_t)vrank);
    return 0;
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
    return layout_coalesced(rank, shape, elem_bytes, l.order, 16, num_warps, threads_per_warp);
}

TirLayout layout_axis_in_thread(int rank, const int *shape, int axis, int num_warps,
                                int threads_per_warp)
{
    int flat[TIR_MAX_RANK], order[TIR_MAX_RANK];
    for (int d = 0; d < rank; d++)
        flat[d] = d == axis ? 1 : shape[d];
    order[0] = axis;
    for (int j = 1, d = rank - 1; j < rank; d--)
        if (d != axis)
            order[j++] = d;
    TirLayout l = layout_coalesced(rank, flat, 4, order, 1, num_warps, threads_per_warp);
    if (threads_per_warp > 1) /* lanes and warps left on the axis hold replicas */
        l.spt[axis] = shape[axis];
    return l;
}

TirLayout layout_coalesced(int rank, const int *shape, int elem_bytes, const int *order,
                           int max_vec, int num_warps, int threads_per_warp)
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
    for (int j = 0; j < rank; j++)
        l.order[j] = order[j];
    int threads = num_warps * threads_per_warp, fast = order[0], slow = order[rank - 1];
    int vec = min_i(max_vec, 16 / (elem_bytes > 0 ? elem_bytes : 4));
    vec = min_i(vec, max_i(1, hint_numel(rank, shape) / threads));
    l.spt[fast] = max_i(1, min_i(vec, shape[fast]));
    int lanes = threads_per_warp;
    for (int j = 0; j < rank; j++) {
        int d = order[j];
        l.tpw[d] = min_i(lanes, max_i(1, shape[d] / l.spt[d]));
        lanes /= l.tpw[d];
    }
    l.tpw[slow] *= lanes;
    int warps = num_warps;
    for (int j = rank - 1; j >= 0; j--) {
        int d = order[j];
        l.wpc[d] = min_i(warps, max_i(1, shape[d] / (l.spt[d] * l.tpw[d])));
        warps /= l.wpc[d];
    }
    l.wpc[slow] *= warps;
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

/* A linear map's parent dims p0 and p1 swapped. (The transposed flag of the other encodings
 * stands for a swap of a rank-2 encoding's dims; a linear map may be a slice of a larger
 * one, so its dims are swapped in the map itself.) */
static const LinearLayout *swap_ll(Arena *a, const LinearLayout *ll, int p0, int p1)
{
    int perm[TIR_MAX_RANK];
    LinearLayout *t = arena_alloc(a, sizeof *t);
    if (!t)
        return NULL;
    for (int d = 0; d < ll->rank; d++)
        perm[d] = d == p0 ? p1 : d == p1 ? p0 : d;
    ll_permute(ll, perm, t);
    return t;
}

TirLayout layout_permute2(Arena *a, const TirLayout *l)
{
    TirLayout t = *l;
    int p0 = layout_parent_dim(l, 0), p1 = layout_parent_dim(l, 1);
    if (p0 < 0 || p1 < 0)
        return t;
    if (l->kind == LAYOUT_LINEAR && l->ll && a && (t.ll = swap_ll(a, l->ll, p0, p1)))
        return t;
    if (l->kind != LAYOUT_BLOCKED) {
        t.ll = l->ll;
        t.transposed = !t.transposed;
        return t;
    }
    t.spt[p0] = l->spt[p1], t.spt[p1] = l->spt[p0];
    t.tpw[p0] = l->tpw[p1], t.tpw[p1] = l->tpw[p0];
    t.wpc[p0] = l->wpc[p1], t.wpc[p1] = l->wpc[p0];
    for (int j = 0; j < l->rank; j++)
        t.order[j] = l->order[j] == p0 ? p1 : l->order[j] == p1 ? p0 : l->order[j];
    return t;
}

/* A zero (replica) lane or warp basis of ll, or NULL. */
static uint32_t *replica_basis(LinearLayout *ll)
{
    for (int k = LL_LANE; k < LL_NDIMS; k++)
        for (int i = 0; i < ll->nbits[k]; i++)
            if (!ll->basis[k][i])
                return &ll->basis[k][i];
    return NULL;
}

int layout_grow(Arena *a, TirLayout *l, const int *shape, int vrank)
{
    int S[TIR_MAX_RANK], c[TIR_MAX_RANK], rc = 0;
    if (l->kind != LAYOUT_LINEAR || !l->ll || l->sliced || l->rank != vrank ||
        (l->transposed && vrank != 2))
        return 0;
    int grows = 0;
    for (int d = 0; d < vrank; d++) {
        S[d] = shape[l->transposed ? vrank - 1 - d : d];
        grows |= S[d] > l->ll->shape[d];
        S[d] = S[d] > l->ll->shape[d] ? S[d] : l->ll->shape[d];
    }
    if (!grows)
        return 0;
    LinearLayout *g = arena_alloc(a, sizeof *g);
    if (!g || ll_init(g, vrank, S))
        return -1;
    ll_project(l->ll, S, g);
    for (int d = 0; d < vrank; d++)
        for (int v = l->ll->shape[d]; v < S[d]; v *= 2) {
            unit(vrank, d, v, c);
            uint32_t *free_bit = replica_basis(g);
            if (free_bit)
                *free_bit = ll_flat(g, c);
            else
                rc |= ll_push(g, LL_REG, c);
        }
    l->ll = g;
    return rc ? -1 : 0;
}

TirLayout layout_mma(int warps_m, int warps_n)
{
    TirLayout l = {.kind = LAYOUT_MMA, .rank = 2, .wpc = {warps_m, warps_n}};
    return l;
}

TirLayout layout_mfma(int inst, int warps_m, int warps_n)
{
    TirLayout l = {.kind = LAYOUT_MFMA, .rank = 2, .inst = inst, .wpc = {warps_m, warps_n}};
    return l;
}

TirLayout layout_dot_operand(const TirLayout *parent, int op_idx, int kwidth)
{
    TirLayout l = {.kind = LAYOUT_DOT_OPERAND, .rank = 2, .parent = parent->kind,
                   .op_idx = op_idx, .kwidth = kwidth, .inst = parent->inst,
                   .wpc = {parent->wpc[0], parent->wpc[1]}};
    return l;
}
