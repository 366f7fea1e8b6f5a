/* linear_layout.c: building, reading and the GF(2) algebra of linear layouts (see
 * linear_layout.h). Flat offsets are row-major, so output dim d occupies the bits
 * [shift(d), shift(d) + log2 shape[d]) of an offset, the last dim lowest. */
#include <stdio.h>
#include <string.h>
#include "linear_layout.h"

static int lg2(int x)
{
    int n = 0;
    while ((1 << n) < x)
        n++;
    return n;
}

int ll_init(LinearLayout *ll, int rank, const int *shape)
{
    memset(ll, 0, sizeof *ll);
    ll->rank = rank;
    int bits = 0;
    for (int d = 0; d < rank; d++) {
        ll->shape[d] = shape[d] > 0 ? shape[d] : 1;
        bits += lg2(ll->shape[d]);
    }
    return bits > 30 ? -1 : 0;
}

int ll_dim_shift(const LinearLayout *ll, int d)
{
    int s = 0;
    for (int e = ll->rank - 1; e > d; e--)
        s += lg2(ll->shape[e]);
    return s;
}

int ll_flat_bits(const LinearLayout *ll) { return ll_dim_shift(ll, -1); }
int ll_numel(const LinearLayout *ll) { return 1 << ll_flat_bits(ll); }
int ll_regs(const LinearLayout *ll) { return 1 << ll->nbits[LL_REG]; }

uint32_t ll_flat(const LinearLayout *ll, const int *coord)
{
    uint32_t f = 0;
    for (int d = 0; d < ll->rank; d++)
        f |= (uint32_t)(coord[d] & (ll->shape[d] - 1)) << ll_dim_shift(ll, d);
    return f;
}

void ll_coords(const LinearLayout *ll, uint32_t flat, int *coord)
{
    for (int d = 0; d < ll->rank; d++)
        coord[d] = (int)((flat >> ll_dim_shift(ll, d)) & (uint32_t)(ll->shape[d] - 1));
}

static int push_basis(LinearLayout *ll, LLDim dim, uint32_t b)
{
    if (ll->nbits[dim] >= LL_MAX_BITS)
        return -1;
    ll->basis[dim][ll->nbits[dim]++] = b;
    return 0;
}

int ll_push(LinearLayout *ll, LLDim dim, const int *coord)
{
    uint32_t b = ll_flat(ll, coord);
    if (b == 0 && dim == LL_REG)
        return 0;
    return push_basis(ll, dim, b);
}

int ll_push_zero(LinearLayout *ll, LLDim dim) { return push_basis(ll, dim, 0); }

uint32_t ll_apply_dim(const LinearLayout *ll, LLDim dim, uint32_t x)
{
    uint32_t f = 0;
    for (int i = 0; i < ll->nbits[dim]; i++)
        if ((x >> i) & 1)
            f ^= ll->basis[dim][i];
    return f;
}

uint32_t ll_apply(const LinearLayout *ll, uint32_t reg, uint32_t lane, uint32_t warp)
{
    return ll_apply_dim(ll, LL_REG, reg) ^ ll_apply_dim(ll, LL_LANE, lane) ^
           ll_apply_dim(ll, LL_WARP, warp);
}

unsigned ll_basis_dims(const LinearLayout *ll, uint32_t basis)
{
    unsigned dims = 0;
    int c[TIR_MAX_RANK];
    ll_coords(ll, basis, c);
    for (int d = 0; d < ll->rank; d++)
        if (c[d])
            dims |= 1u << d;
    return dims;
}

uint32_t ll_zero_mask(const LinearLayout *ll, LLDim dim)
{
    uint32_t m = 0;
    for (int i = 0; i < ll->nbits[dim]; i++)
        if (ll->basis[dim][i] == 0)
            m |= 1u << i;
    return m;
}

uint32_t ll_dim_mask(const LinearLayout *ll, LLDim dim, int d)
{
    uint32_t m = 0;
    for (int i = 0; i < ll->nbits[dim]; i++)
        if ((ll_basis_dims(ll, ll->basis[dim][i]) >> d) & 1)
            m |= 1u << i;
    return m;
}

int ll_equal(const LinearLayout *a, const LinearLayout *b)
{
    if (a->rank != b->rank)
        return 0;
    for (int d = 0; d < a->rank; d++)
        if (a->shape[d] != b->shape[d])
            return 0;
    for (int k = 0; k < LL_NDIMS; k++) {
        if (a->nbits[k] != b->nbits[k])
            return 0;
        for (int i = 0; i < a->nbits[k]; i++)
            if (a->basis[k][i] != b->basis[k][i])
                return 0;
    }
    return 1;
}

int ll_single_dim_bases(const LinearLayout *ll)
{
    for (int k = 0; k < LL_NDIMS; k++)
        for (int i = 0; i < ll->nbits[k]; i++) {
            unsigned dims = ll_basis_dims(ll, ll->basis[k][i]);
            if (dims & (dims - 1))
                return 0;
        }
    return 1;
}

int ll_covers(const LinearLayout *ll)
{
    uint32_t all[3 * LL_MAX_BITS];
    int n = 0;
    for (int k = 0; k < LL_NDIMS; k++)
        for (int i = 0; i < ll->nbits[k]; i++)
            all[n++] = ll->basis[k][i];
    for (int b = 0; b < ll_flat_bits(ll); b++) {
        uint32_t x;
        if (!ll_solve(all, n, 1u << b, &x))
            return 0;
    }
    return 1;
}

int ll_basis_dim(const LinearLayout *ll, uint32_t b)
{
    unsigned dims = ll_basis_dims(ll, b);
    return dims && !(dims & (dims - 1)) ? __builtin_ctz(dims) : -1;
}

/* No basis but the first n registers' has a coordinate along d below n. */
static int runs_aligned(const LinearLayout *ll, int d, int n)
{
    int c[TIR_MAX_RANK];
    for (int k = 0; k < LL_NDIMS; k++)
        for (int i = k == LL_REG ? n : 0; i < ll->nbits[k]; i++) {
            ll_coords(ll, ll->basis[k][i], c);
            if (c[d] & ((1 << n) - 1))
                return 0;
        }
    return 1;
}

int ll_contiguous_regs(const LinearLayout *ll, int d)
{
    if (d < 0 || d >= ll->rank)
        return 1;
    uint32_t unit = 1u << ll_dim_shift(ll, d);
    int n = 0;
    while (n < ll->nbits[LL_REG] && ll->basis[LL_REG][n] == unit << n)
        n++;
    while (n > 0 && !runs_aligned(ll, d, n))
        n--;
    return 1 << n;
}

/* ---- GF(2) ---- */
/* Gaussian elimination keeping, for each reduced row, which inputs combine into it. */
int ll_solve(const uint32_t *basis, int n, uint32_t target, uint32_t *x)
{
    uint32_t row[32], comb[32];
    int nrows = 0;
    for (int i = 0; i < n && i < 32; i++) {
        uint32_t v = basis[i], c = 1u << i;
        for (int j = 0; j < nrows; j++) {
            uint32_t top = row[j] & -row[j];
            if (v & top)
                v ^= row[j], c ^= comb[j];
        }
        if (!v)
            continue;
        uint32_t top = v & -v;
        for (int j = 0; j < nrows; j++)
            if (row[j] & top)
                row[j] ^= v, comb[j] ^= c;
        row[nrows] = v, comb[nrows++] = c;
    }
    uint32_t acc = 0;
    for (int j = 0; j < nrows; j++)
        if (target & (row[j] & -row[j]))
            target ^= row[j], acc ^= comb[j];
    *x = acc;
    return target == 0;
}

static uint32_t remap(const LinearLayout *from, const LinearLayout *to, const int *dim_of,
                      uint32_t flat)
{
    int c[TIR_MAX_RANK], o[TIR_MAX_RANK];
    ll_coords(from, flat, c);
    for (int d = 0; d < to->rank; d++)
        o[d] = dim_of[d] >= 0 ? c[dim_of[d]] : 0;
    return ll_flat(to, o);
}

static void remap_all(const LinearLayout *ll, LinearLayout *out, const int *dim_of)
{
    for (int k = 0; k < LL_NDIMS; k++) {
        out->nbits[k] = ll->nbits[k];
        for (int i = 0; i < ll->nbits[k]; i++)
            out->basis[k][i] = remap(ll, out, dim_of, ll->basis[k][i]);
    }
}

void ll_permute(const LinearLayout *ll, const int *perm, LinearLayout *out)
{
    int shape[TIR_MAX_RANK];
    for (int d = 0; d < ll->rank; d++)
        shape[d] = ll->shape[perm[d]];
    LinearLayout t;
    ll_init(&t, ll->rank, shape);
    remap_all(ll, &t, perm);
    *out = t;
}

void ll_reshape(const LinearLayout *ll, int rank, const int *shape, LinearLayout *out)
{
    *out = *ll;
    out->rank = rank;
    memcpy(out->shape, shape, sizeof(int) * (size_t)rank);
}

int ll_join(const LinearLayout *ll, LinearLayout *out)
{
    if (ll->rank >= TIR_MAX_RANK || ll->nbits[LL_REG] >= LL_MAX_BITS || ll_flat_bits(ll) >= 31)
        return -1;
    LinearLayout t = *ll;
    t.shape[t.rank++] = 2;
    for (int k = 0; k < LL_NDIMS; k++)
        for (int i = 0; i < ll->nbits[k]; i++)
            t.basis[k][i + (k == LL_REG)] = ll->basis[k][i] << 1;
    t.basis[LL_REG][0] = 1;
    t.nbits[LL_REG]++;
    *out = t;
    return 0;
}

int ll_unjoin(const LinearLayout *ll, LinearLayout *out)
{
    if (ll->rank < 2 || ll->shape[ll->rank - 1] != 2 || ll->nbits[LL_REG] == 0 ||
        ll->basis[LL_REG][0] != 1)
        return -1;
    LinearLayout t = *ll;
    t.rank--;
    t.nbits[LL_REG]--;
    for (int k = 0; k < LL_NDIMS; k++)
        for (int i = 0; i < t.nbits[k]; i++) {
            uint32_t b = ll->basis[k][i + (k == LL_REG)];
            if (b & 1)
                return -1;
            t.basis[k][i] = b >> 1;
        }
    *out = t;
    return 0;
}

void ll_project(const LinearLayout *ll, const int *shape, LinearLayout *out)
{
    int dim_of[TIR_MAX_RANK];
    for (int d = 0; d < ll->rank; d++)
        dim_of[d] = shape[d] == 1 && ll->shape[d] != 1 ? -1 : d;
    LinearLayout t;
    ll_init(&t, ll->rank, shape);
    remap_all(ll, &t, dim_of);
    *out = t;
}

int ll_reduce(const LinearLayout *ll, int axis, LinearLayout *out)
{
    if (!ll_single_dim_bases(ll))
        return -1;
    int shape[TIR_MAX_RANK], dim_of[TIR_MAX_RANK];
    for (int d = 0, e = 0; d < ll->rank; d++)
        if (d != axis)
            shape[e] = ll->shape[d], dim_of[e++] = d;
    LinearLayout t;
    ll_init(&t, ll->rank - 1, shape);
    uint32_t along = ll_dim_mask(ll, LL_REG, axis);
    for (int k = 0; k < LL_NDIMS; k++)
        for (int i = 0; i < ll->nbits[k]; i++) {
            if (k == LL_REG && ((along >> i) & 1))
                continue;
            push_basis(&t, (LLDim)k, remap(ll, &t, dim_of, ll->basis[k][i]));
        }
    *out = t;
    return 0;
}

int ll_reduce_warps(const LinearLayout *ll, int axis, LinearLayout *out)
{
    if (!ll_single_dim_bases(ll))
        return -1;
    uint32_t wa = ll_dim_mask(ll, LL_WARP, axis), along = ll_dim_mask(ll, LL_REG, axis);
    int shape[TIR_MAX_RANK], dim_of[TIR_MAX_RANK], c[TIR_MAX_RANK];
    for (int d = 0; d < ll->rank; d++)
        shape[d] = d == axis ? 1 << __builtin_popcount(wa) : ll->shape[d], dim_of[d] = d;
    LinearLayout t;
    ll_init(&t, ll->rank, shape);
    for (int k = 0, j = 0; k < LL_NDIMS; k++)
        for (int i = 0; i < ll->nbits[k]; i++) {
            if (k == LL_REG && ((along >> i) & 1))
                continue;
            uint32_t b = ll->basis[k][i];
            if (k == LL_WARP && ((wa >> i) & 1)) {
                for (int d = 0; d < ll->rank; d++)
                    c[d] = d == axis ? 1 << j : 0;
                j++;
                push_basis(&t, LL_WARP, ll_flat(&t, c));
            } else {
                uint32_t f = remap(ll, &t, dim_of, b);
                ll_coords(&t, f, c);
                c[axis] = 0; /* lanes along the axis: every lane holds the combined value */
                push_basis(&t, (LLDim)k, ll_flat(&t, c));
            }
        }
    *out = t;
    return 0;
}

void ll_warps_to_regs(const LinearLayout *ll, int axis, LinearLayout *out)
{
    LinearLayout t = *ll;
    for (int i = 0; i < t.nbits[LL_WARP]; i++)
        if ((ll_basis_dims(ll, t.basis[LL_WARP][i]) >> axis) & 1) {
            push_basis(&t, LL_REG, t.basis[LL_WARP][i]);
            t.basis[LL_WARP][i] = 0;
        }
    *out = t;
}

/* ---- printing ---- */
static int put_basis(const LinearLayout *ll, uint32_t b, char *buf, int n)
{
    int c[TIR_MAX_RANK], at = snprintf(buf, (size_t)n, " (");
    ll_coords(ll, b, c);
    for (int d = 0; d < ll->rank && at < n; d++)
        at += snprintf(buf + at, (size_t)(n - at), "%s%d", d ? "," : "", c[d]);
    if (at < n)
        at += snprintf(buf + at, (size_t)(n - at), ")");
    return at;
}

char *ll_str(const LinearLayout *ll, char *buf, int n)
{
    static const char *names[LL_NDIMS] = {"reg", "lane", "warp"};
    int at = snprintf(buf, (size_t)n, "[");
    for (int k = 0; k < LL_NDIMS && at < n; k++) {
        at += snprintf(buf + at, (size_t)(n - at), "%s%s", k ? " | " : "", names[k]);
        for (int i = 0; i < ll->nbits[k] && at < n; i++)
            at += put_basis(ll, ll->basis[k][i], buf + at, n - at);
    }
    if (at < n)
        snprintf(buf + at, (size_t)(n - at), "]");
    return buf;
}
