/* test_layout.c: property tests of linear layouts (compiler/linear_layout.c, layout.c,
 * layout_convert.c). Every (register, lane, warp) of each encoding is enumerated at several
 * shapes and warp counts and compared with a reference map written independently: the blocked
 * formula of tir.h, and the mma.sync fragment tables of the PTX ISA. Conversion plans are
 * checked by moving every element: the plan must deliver to each destination (register,
 * lane, warp) exactly the element the destination layout says it holds. */
#include <stdint.h>
#include <stdlib.h>
#include "layout.h"
#include "layout_convert.h"
#include "smem_layout.h"
#include "testing.h"

static uint64_t seed = 0x9e3779b97f4a7c15ull;
static unsigned rnd(unsigned n)
{
    seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
    return (unsigned)(seed % n);
}

static int lg2(int x)
{
    int n = 0;
    while ((1 << n) < x)
        n++;
    return n;
}

/* ---- the blocked formula (tir.h), computed directly ---- */
typedef struct Ref {
    int rank, S[TIR_MAX_RANK], sp[TIR_MAX_RANK], C[TIR_MAX_RANK], n[TIR_MAX_RANK];
    int rstride[TIR_MAX_RANK], lstride[TIR_MAX_RANK], wstride[TIR_MAX_RANK], R, lanes;
} Ref;

static void ref_init(Ref *f, const TirLayout *l, const int *S)
{
    f->rank = l->rank;
    int rs = 1, ls = 1, ws = 1;
    for (int d = 0; d < l->rank; d++) {
        f->S[d] = S[d];
        f->sp[d] = l->spt[d] < S[d] ? l->spt[d] : S[d];
        f->C[d] = f->sp[d] * l->tpw[d] * l->wpc[d];
        f->n[d] = f->sp[d] * (S[d] / f->C[d] > 1 ? S[d] / f->C[d] : 1);
    }
    for (int j = 0; j < l->rank; j++) {
        int d = l->order[j];
        f->rstride[d] = rs, f->lstride[d] = ls, f->wstride[d] = ws;
        rs *= f->n[d], ls *= l->tpw[d], ws *= l->wpc[d];
    }
    f->R = rs, f->lanes = ls;
}

static void ref_coords(const Ref *f, const TirLayout *l, int r, int lane, int warp, int *c)
{
    for (int d = 0; d < f->rank; d++) {
        int i = r / f->rstride[d] % f->n[d], rep = i / f->sp[d], s = i % f->sp[d];
        int ld = lane / f->lstride[d] % l->tpw[d], wd = warp / f->wstride[d] % l->wpc[d];
        c[d] = (rep * f->C[d] + (wd * l->tpw[d] + ld) * f->sp[d] + s) % f->S[d];
    }
}

static TirLayout random_blocked(int rank, int lanes, int warps)
{
    TirLayout l = {.kind = LAYOUT_BLOCKED, .rank = rank};
    for (int d = 0; d < rank; d++)
        l.spt[d] = 1 << rnd(4), l.tpw[d] = l.wpc[d] = 1, l.order[d] = d;
    for (int d = rank - 1; d > 0; d--) { /* a random order */
        int e = (int)rnd((unsigned)d + 1), t = l.order[d];
        l.order[d] = l.order[e], l.order[e] = t;
    }
    for (int v = 1; v < lanes; v *= 2)
        l.tpw[rnd((unsigned)rank)] *= 2;
    for (int v = 1; v < warps; v *= 2)
        l.wpc[rnd((unsigned)rank)] *= 2;
    return l;
}

static int t_blocked_matches_formula(void)
{
    for (int iter = 0; iter < 400; iter++) {
        int rank = 1 + (int)rnd(3), warps = 1 << rnd(4), lanes = iter % 5 ? 32 : 1;
        TirLayout l = random_blocked(rank, lanes, lanes == 1 ? 1 : warps);
        int S[TIR_MAX_RANK];
        for (int d = 0; d < rank; d++)
            S[d] = 1 << rnd(7);
        LinearLayout ll;
        CHECK(layout_ll(&l, S, rank, &ll) == 0);
        Ref f;
        ref_init(&f, &l, S);
        CHECK(ll_regs(&ll) == f.R);
        CHECK((1 << ll.nbits[LL_LANE]) == f.lanes);
        int W = 1;
        for (int d = 0; d < rank; d++)
            W *= l.wpc[d];
        CHECK((1 << ll.nbits[LL_WARP]) == W);
        for (int w = 0; w < W; w++)
            for (int ln = 0; ln < f.lanes; ln++)
                for (int r = 0; r < f.R; r++) {
                    int c[TIR_MAX_RANK];
                    ref_coords(&f, &l, r, ln, w, c);
                    CHECK(ll_apply(&ll, (uint32_t)r, (uint32_t)ln, (uint32_t)w) == ll_flat(&ll, c));
                }
        CHECK(ll_covers(&ll));
        CHECK(ll_single_dim_bases(&ll));
    }
    return 0;
}

/* ---- mma.sync fragments (PTX ISA, "Matrix Fragments for mma.m16n8k*") ---- */
/* Element i of lane `lane`'s fragment, as (row, col) of the instruction tile. */
static void ptx_acc(int lane, int i, int *rc)
{
    int g = lane >> 2, t = lane & 3;
    rc[0] = g + 8 * (i >> 1), rc[1] = 2 * t + (i & 1);
}

static void ptx_a(int kw, int lane, int i, int *rc)
{
    int g = lane >> 2, t = lane & 3;
    if (kw == 1) { /* tf32 m16n8k8: a0 (g, t) a1 (g+8, t) a2 (g, t+4) a3 (g+8, t+4) */
        rc[0] = g + 8 * (i & 1), rc[1] = t + 4 * (i >> 1);
    } else if (kw == 2) { /* f16 m16n8k16 */
        rc[0] = g + 8 * ((i >> 1) & 1), rc[1] = 2 * t + (i & 1) + 8 * (i >> 2);
    } else { /* s8 m16n8k32: rows g (+8 for a4..a7, a12..a15), cols 4t + (i & 3) (+16 from a8) */
        rc[0] = g + 8 * ((i >> 2) & 1), rc[1] = 4 * t + (i & 3) + 16 * (i >> 3);
    }
}

static void ptx_b(int kw, int lane, int i, int *rc)
{
    int g = lane >> 2, t = lane & 3;
    if (kw == 1)
        rc[0] = t + 4 * i, rc[1] = g;
    else if (kw == 2)
        rc[0] = 2 * t + (i & 1) + 8 * (i >> 1), rc[1] = g;
    else
        rc[0] = 4 * t + (i & 3) + 16 * (i >> 2), rc[1] = g;
}

/* One instruction tile, one warp: register i of the layout is fragment element i. */
static int t_mma_fragments(void)
{
    TirLayout acc = layout_mma(1, 1);
    LinearLayout ll;
    CHECK(layout_ll(&acc, (const int[]){16, 8}, 2, &ll) == 0 && ll_regs(&ll) == 4);
    for (int lane = 0; lane < 32; lane++)
        for (int i = 0; i < 4; i++) {
            int rc[2];
            ptx_acc(lane, i, rc);
            CHECK(ll_apply(&ll, (uint32_t)i, (uint32_t)lane, 0) == ll_flat(&ll, rc));
        }
    for (int kw = 1; kw <= 4; kw *= 2) {
        TirLayout a = layout_dot_operand(&acc, 0, kw), b = layout_dot_operand(&acc, 1, kw);
        LinearLayout la, lb;
        CHECK(layout_ll(&a, (const int[]){16, 8 * kw}, 2, &la) == 0 && ll_regs(&la) == 4 * kw);
        CHECK(layout_ll(&b, (const int[]){8 * kw, 8}, 2, &lb) == 0 && ll_regs(&lb) == 2 * kw);
        for (int lane = 0; lane < 32; lane++) {
            int rc[2];
            for (int i = 0; i < 4 * kw; i++) {
                ptx_a(kw, lane, i, rc);
                CHECK(ll_apply(&la, (uint32_t)i, (uint32_t)lane, 0) == ll_flat(&la, rc));
            }
            for (int i = 0; i < 2 * kw; i++) {
                ptx_b(kw, lane, i, rc);
                CHECK(ll_apply(&lb, (uint32_t)i, (uint32_t)lane, 0) == ll_flat(&lb, rc));
            }
        }
    }
    return 0;
}

/* How many (register, lane, warp) hold each element. */
static int count_holders(const LinearLayout *ll, int *count)
{
    int n = ll_numel(ll);
    for (int i = 0; i < n; i++)
        count[i] = 0;
    for (uint32_t w = 0; w < 1u << ll->nbits[LL_WARP]; w++)
        for (uint32_t l = 0; l < 1u << ll->nbits[LL_LANE]; l++)
            for (uint32_t r = 0; r < (uint32_t)ll_regs(ll); r++)
                count[ll_apply(ll, r, l, w)]++;
    return n;
}

/* At every shape and warp grid: each warp owns whole instruction tiles (the fragment table
 * shifted to the tile's origin), every element is held, by the same number of threads. */
static int check_tiled(const LinearLayout *ll, int tm, int tn, int wm, int wn, int op)
{
    static int count[1 << 16];
    int n = count_holders(ll, count);
    for (int i = 1; i < n; i++)
        CHECK(count[i] == count[0] && count[0] >= 1);
    /* operands are copied across the warps along the result's other dim */
    int copies = op == 0 ? wn : op == 1 ? wm : 1;
    CHECK(count[0] % copies == 0);
    (void)tm, (void)tn;
    return 0;
}

static int t_mma_tiling(void)
{
    int dims[] = {16, 32, 64, 128, 256};
    for (int wi = 0; wi < 4; wi++)
        for (int wj = 0; wi + wj < 4; wj++) {
            int wm = 1 << wi, wn = 1 << wj;
            TirLayout acc = layout_mma(wm, wn);
            for (int a = 0; a < 5; a++)
                for (int b = 0; b < 4; b++) {
                    int S[2] = {dims[a], dims[b] / 2};
                    LinearLayout ll;
                    CHECK(layout_ll(&acc, S, 2, &ll) == 0 && ll_single_dim_bases(&ll));
                    CHECK(check_tiled(&ll, 16, 8, wm, wn, 2) == 0);
                    /* one element of each 16x8 tile: the fragment table at the tile origin */
                    for (uint32_t r = 0; r < (uint32_t)ll_regs(&ll); r += 4)
                        for (int lane = 0; lane < 32; lane++)
                            for (int i = 0; i < 4; i++) {
                                int rc[2], o[2], c[2];
                                ll_coords(&ll, ll_apply(&ll, r, 0, 0), o);
                                ptx_acc(lane, i, rc);
                                ll_coords(&ll, ll_apply(&ll, r | (uint32_t)i, (uint32_t)lane, 0), c);
                                CHECK(c[0] == (o[0] + rc[0]) % S[0] && c[1] == (o[1] + rc[1]) % S[1]);
                            }
                    for (int kw = 1; kw <= 4; kw *= 2) {
                        TirLayout opa = layout_dot_operand(&acc, 0, kw);
                        TirLayout opb = layout_dot_operand(&acc, 1, kw);
                        int SA[2] = {dims[a], 8 * kw * (1 << b)}, SB[2] = {8 * kw * (1 << b), dims[b]};
                        LinearLayout la, lb;
                        CHECK(layout_ll(&opa, SA, 2, &la) == 0 && check_tiled(&la, 16, 8 * kw, wm, wn, 0) == 0);
                        CHECK(layout_ll(&opb, SB, 2, &lb) == 0 && check_tiled(&lb, 8 * kw, 8, wm, wn, 1) == 0);
                    }
                }
        }
    return 0;
}

/* ---- AMD MFMA fragments (wave64; the CDNA3 ISA's matrix layouts, "Dependent arithmetic
 * MFMA", as the AMD matrix instruction calculator prints them) ---- */
/* Element i of lane `lane`: (row, col) of the accumulator / A [M, K] / B [K, N] tile. */
static void mfma_acc(int n, int lane, int i, int *rc)
{
    if (n == 16) /* v_mfma_f32_16x16x16: D[r][c] at lane c + 16 (r / 4), item r % 4 */
        rc[0] = 4 * (lane / 16) + i, rc[1] = lane % 16;
    else /* v_mfma_f32_32x32x8: lane c + 32 ((r / 4) % 2), item 4 (r / 8) + r % 4 */
        rc[0] = 8 * (i / 4) + 4 * (lane / 32) + i % 4, rc[1] = lane % 32;
}

static void mfma_a(int n, int lane, int i, int *rc) /* A[r][k]: lane r + n (k / 4), item k % 4 */
{
    rc[0] = lane % n, rc[1] = 4 * (lane / n) + i;
}

static void mfma_b(int n, int lane, int i, int *rc) /* B[k][c]: lane c + n (k / 4), item k % 4 */
{
    rc[0] = 4 * (lane / n) + i, rc[1] = lane % n;
}

static int t_mfma_fragments(void)
{
    for (int n = 16; n <= 32; n *= 2) {
        int K = n == 16 ? 16 : 8, nacc = n * n / 64;
        TirLayout acc = layout_mfma(n, 1, 1);
        TirLayout a = layout_dot_operand(&acc, 0, 4), b = layout_dot_operand(&acc, 1, 4);
        LinearLayout ll, la, lb;
        CHECK(layout_ll(&acc, (const int[]){n, n}, 2, &ll) == 0 && ll_regs(&ll) == nacc);
        CHECK(layout_ll(&a, (const int[]){n, K}, 2, &la) == 0 && ll_regs(&la) == 4);
        CHECK(layout_ll(&b, (const int[]){K, n}, 2, &lb) == 0 && ll_regs(&lb) == 4);
        for (int lane = 0; lane < 64; lane++) {
            int rc[2];
            for (int i = 0; i < nacc; i++) {
                mfma_acc(n, lane, i, rc);
                CHECK(ll_apply(&ll, (uint32_t)i, (uint32_t)lane, 0) == ll_flat(&ll, rc));
            }
            for (int i = 0; i < 4; i++) {
                mfma_a(n, lane, i, rc);
                CHECK(ll_apply(&la, (uint32_t)i, (uint32_t)lane, 0) == ll_flat(&la, rc));
                mfma_b(n, lane, i, rc);
                CHECK(ll_apply(&lb, (uint32_t)i, (uint32_t)lane, 0) == ll_flat(&lb, rc));
            }
        }
    }
    return 0;
}

/* At every shape and wave grid: every element held equally often, operands copied across the
 * other dim's waves, and each instruction tile of the accumulator is the fragment table
 * shifted to its origin. */
static int t_mfma_tiling(void)
{
    int dims[] = {32, 64, 128, 256};
    for (int n = 16; n <= 32; n *= 2)
        for (int wi = 0; wi < 3; wi++)
            for (int wj = 0; wi + wj < 3; wj++) {
                int wm = 1 << wi, wn = 1 << wj, K = n == 16 ? 16 : 8, nacc = n * n / 64;
                TirLayout acc = layout_mfma(n, wm, wn);
                for (int x = 0; x < 4; x++)
                    for (int y = 0; y < 4; y++) {
                        int S[2] = {dims[x], dims[y]};
                        LinearLayout ll;
                        CHECK(layout_ll(&acc, S, 2, &ll) == 0 && ll_single_dim_bases(&ll));
                        CHECK(check_tiled(&ll, n, n, wm, wn, 2) == 0);
                        for (uint32_t r = 0; r < (uint32_t)ll_regs(&ll); r += (uint32_t)nacc)
                            for (int lane = 0; lane < 64; lane++)
                                for (int i = 0; i < nacc; i++) {
                                    int rc[2], o[2], c[2];
                                    ll_coords(&ll, ll_apply(&ll, r, 0, 0), o);
                                    mfma_acc(n, lane, i, rc);
                                    ll_coords(&ll, ll_apply(&ll, r | (uint32_t)i, (uint32_t)lane, 0), c);
                                    CHECK(c[0] == (o[0] + rc[0]) % S[0] && c[1] == (o[1] + rc[1]) % S[1]);
                                }
                        TirLayout opa = layout_dot_operand(&acc, 0, 4), opb = layout_dot_operand(&acc, 1, 4);
                        int SA[2] = {dims[x], K << y}, SB[2] = {K << y, dims[y]};
                        LinearLayout la, lb;
                        CHECK(layout_ll(&opa, SA, 2, &la) == 0 && check_tiled(&la, n, K, wm, wn, 0) == 0);
                        CHECK(layout_ll(&opb, SB, 2, &lb) == 0 && check_tiled(&lb, K, n, wm, wn, 1) == 0);
                    }
            }
    /* a bad instruction size or operand width is refused, never guessed */
    TirLayout bad = layout_mfma(8, 1, 1), acc = layout_mfma(16, 1, 1);
    TirLayout badk = layout_dot_operand(&acc, 0, 2);
    LinearLayout ll;
    CHECK(layout_ll(&bad, (const int[]){16, 16}, 2, &ll) != 0);
    CHECK(layout_ll(&badk, (const int[]){16, 16}, 2, &ll) != 0);
    return 0;
}

/* ---- algebra ---- */
static int t_solve(void)
{
    for (int iter = 0; iter < 2000; iter++) {
        uint32_t basis[24];
        int n = 1 + (int)rnd(24);
        for (int i = 0; i < n; i++)
            basis[i] = rnd(4) ? (uint32_t)rnd(1u << 12) : 0;
        uint32_t x = (uint32_t)rnd(1u << n), target = 0, got;
        for (int i = 0; i < n; i++)
            if ((x >> i) & 1)
                target ^= basis[i];
        CHECK(ll_solve(basis, n, target, &got));
        uint32_t back = 0;
        for (int i = 0; i < n; i++)
            if ((got >> i) & 1)
                back ^= basis[i];
        CHECK(back == target);
    }
    uint32_t basis[2] = {1, 2}, x;
    CHECK(!ll_solve(basis, 2, 4, &x));
    CHECK(ll_solve(basis, 2, 3, &x) && x == 3);
    return 0;
}

/* Reducing a layout along an axis gives the layout of the slice encoding at the reduced shape,
 * and every result element is held where some operand element of its row was. */
static int t_reduce_is_slice(void)
{
    for (int iter = 0; iter < 300; iter++) {
        int rank = 2 + (int)rnd(2), warps = 1 << rnd(4);
        TirLayout l = iter % 3 ? random_blocked(rank, 32, warps) : layout_mma(1 << rnd(3), 1 << rnd(2));
        if (l.kind == LAYOUT_MMA)
            rank = 2;
        int S[TIR_MAX_RANK], axis = (int)rnd((unsigned)rank), R[TIR_MAX_RANK];
        for (int d = 0; d < rank; d++)
            S[d] = (l.kind == LAYOUT_MMA ? 16 : 1) << rnd(5);
        for (int d = 0, e = 0; d < rank; d++)
            if (d != axis)
                R[e++] = S[d];
        LinearLayout ll, red, sl;
        CHECK(layout_ll(&l, S, rank, &ll) == 0);
        CHECK(ll_reduce(&ll, axis, &red) == 0);
        TirLayout s = layout_slice(&l, axis);
        CHECK(layout_ll(&s, R, rank - 1, &sl) == 0);
        if (!ll_equal(&red, &sl)) {
            char b1[1024], b2[1024], b3[1024];
            fprintf(stderr, "kind %d axis %d S %d %d %d\n src %s\n red %s\n slice %s\n", l.kind, axis, S[0], S[1], S[2],
                    ll_str(&ll, b3, 1024), ll_str(&red, b1, 1024), ll_str(&sl, b2, 1024));
        }
        CHECK(ll_equal(&red, &sl));
    }
    return 0;
}

/* ---- conversions: move every element by the plan and compare ---- */
static int apply_plan(const LinearLayout *src, const LinearLayout *dst, const ConvPlan *p)
{
    for (uint32_t w = 0; w < 1u << dst->nbits[LL_WARP]; w++)
        for (uint32_t l = 0; l < 1u << dst->nbits[LL_LANE]; l++)
            for (uint32_t r = 0; r < (uint32_t)ll_regs(dst); r++) {
                uint32_t want = ll_apply(dst, r, l, w), sr = 0, sl = l;
                if (p->kind == CONV_SMEM)
                    continue;
                if (p->kind != CONV_NONE)
                    for (int i = 0; i < dst->nbits[LL_REG]; i++)
                        if ((r >> i) & 1)
                            sr ^= p->src_reg[i];
                if (p->kind == CONV_NONE)
                    sr = r;
                if (p->kind == CONV_SHUFFLE) {
                    sl = 0;
                    for (int i = 0; i < dst->nbits[LL_REG]; i++)
                        if ((r >> i) & 1)
                            sl ^= p->lane_of_reg[i];
                    for (int j = 0; j < dst->nbits[LL_LANE]; j++)
                        if ((l >> j) & 1)
                            sl ^= p->lane_of_lane[j];
                }
                CHECK(sr < (uint32_t)ll_regs(src));
                CHECK(ll_apply(src, sr, sl, w) == want);
            }
    return 0;
}

static int plan_kind(const TirLayout *a, const TirLayout *b, const int *S, ConvKind *kind)
{
    LinearLayout la, lb;
    ConvPlan p;
    CHECK(layout_ll(a, S, 2, &la) == 0 && layout_ll(b, S, 2, &lb) == 0);
    conv_plan(&la, &lb, &p);
    if (getenv("TEST_LAYOUT_VERBOSE")) {
        char b1[1024], b2[1024];
        fprintf(stderr, "%s\n -> %s: %s\n", ll_str(&la, b1, 1024), ll_str(&lb, b2, 1024), conv_kind_name(p.kind));
    }
    CHECK(apply_plan(&la, &lb, &p) == 0);
    *kind = p.kind;
    return 0;
}

static int t_convert_paths(void)
{
    ConvKind k;
    int S[2] = {64, 64};
    /* the flash-attention property: P from the first dot's accumulators to the second's A
     * operand (f16, warps along M) in registers */
    for (int wm = 1; wm <= 8; wm *= 2) {
        TirLayout acc = layout_mma(wm, 1), opa = layout_dot_operand(&acc, 0, 2);
        int s[2] = {16 * wm * 2, 64};
        CHECK(plan_kind(&acc, &opa, s, &k) == 0 && (k == CONV_NONE || k == CONV_REGS));
    }
    TirLayout acc = layout_mma(2, 2), opa = layout_dot_operand(&acc, 0, 2);
    CHECK(plan_kind(&acc, &opa, S, &k) == 0 && k != CONV_NONE); /* warps along N: not regs */
    CHECK(plan_kind(&acc, &acc, S, &k) == 0 && k == CONV_NONE);
    /* blocked variants: same thread sets (register permutation), lanes exchanged within a
     * warp (shuffles), warps exchanged (shared memory) */
    TirLayout b1 = {.kind = LAYOUT_BLOCKED, .rank = 2, .spt = {1, 4}, .tpw = {8, 4}, .wpc = {4, 1}, .order = {1, 0}};
    TirLayout b2 = b1;
    b2.order[0] = 0, b2.order[1] = 1; /* lanes along dim 0 first: the same lanes, permuted */
    CHECK(plan_kind(&b1, &b2, S, &k) == 0 && k == CONV_SHUFFLE);
    TirLayout b3 = b1;
    b3.wpc[0] = 1, b3.wpc[1] = 4;
    CHECK(plan_kind(&b1, &b3, S, &k) == 0 && k == CONV_SMEM);
    TirLayout b5 = {.kind = LAYOUT_BLOCKED, .rank = 2, .spt = {1, 4}, .tpw = {1, 32}, .wpc = {4, 1}, .order = {1, 0}};
    TirLayout b6 = b5; /* registers enumerate the dims the other way round */
    b6.order[0] = 0, b6.order[1] = 1;
    CHECK(plan_kind(&b5, &b6, S, &k) == 0 && k == CONV_REGS);
    int small[2] = {8, 8}; /* all replicated lanes: registers hold everything */
    TirLayout b4 = b1;
    b4.spt[0] = 8, b4.spt[1] = 8;
    CHECK(plan_kind(&b4, &b4, small, &k) == 0 && k == CONV_NONE);
    /* random pairs: whatever the plan, it must move every element right */
    for (int iter = 0; iter < 500; iter++) {
        int warps = 1 << rnd(3);
        TirLayout x = random_blocked(2, 32, warps), y = random_blocked(2, 32, warps);
        if (iter % 4 == 0)
            x = layout_mma(warps, 1);
        if (iter % 4 == 1)
            y = layout_dot_operand(&(TirLayout){.kind = LAYOUT_MMA, .wpc = {warps, 1}}, (int)rnd(2), 1 << rnd(3));
        int s[2] = {16 << rnd(3), 32 << rnd(3)};
        CHECK(plan_kind(&x, &y, s, &k) == 0);
    }
    /* wave64: MFMA accumulators and operands to and from blocked layouts of 64 lanes */
    for (int iter = 0; iter < 300; iter++) {
        int warps = 1 << rnd(3), inst = 16 << rnd(2);
        TirLayout x = random_blocked(2, 64, warps), y = layout_mfma(inst, warps, 1);
        if (iter % 3 == 1)
            y = layout_dot_operand(&(TirLayout){.kind = LAYOUT_MFMA, .inst = inst, .wpc = {1, warps}},
                                   (int)rnd(2), 4);
        int s[2] = {32 << rnd(3), 32 << rnd(3)};
        CHECK(plan_kind(iter % 2 ? &x : &y, iter % 2 ? &y : &x, s, &k) == 0);
    }
    return 0;
}

/* Slices: expand_dims of a slice is free (the same bases), transposes swap coordinates. */
static int t_slices_and_transposes(void)
{
    for (int iter = 0; iter < 200; iter++) {
        TirLayout l = iter % 2 ? random_blocked(2, 32, 1 << rnd(3)) : layout_mma(1 << rnd(3), 1 << rnd(2));
        int S[2] = {16 << rnd(4), 16 << rnd(4)}, T[2] = {S[1], S[0]};
        LinearLayout a, t;
        TirLayout lt = layout_permute2(NULL, &l);
        CHECK(layout_ll(&l, S, 2, &a) == 0 && layout_ll(&lt, T, 2, &t) == 0);
        for (uint32_t w = 0; w < 1u << a.nbits[LL_WARP]; w++)
            for (uint32_t ln = 0; ln < 32; ln++)
                for (uint32_t r = 0; r < (uint32_t)ll_regs(&a); r++) {
                    int c[2], ct[2];
                    ll_coords(&a, ll_apply(&a, r, ln, w), c);
                    ll_coords(&t, ll_apply(&t, r, ln, w), ct);
                    CHECK(c[0] == ct[1] && c[1] == ct[0]);
                }
        for (int axis = 0; axis < 2; axis++) {
            TirLayout s = layout_slice(&l, axis);
            LinearLayout ls, le;
            int one[2] = {S[0], S[1]};
            one[axis] = 1;
            CHECK(layout_ll(&s, &S[1 - axis], 1, &ls) == 0 && layout_ll(&l, one, 2, &le) == 0);
            CHECK(memcmp(ls.basis, le.basis, sizeof ls.basis) == 0);
            CHECK(memcmp(ls.nbits, le.nbits, sizeof ls.nbits) == 0);
        }
    }
    return 0;
}

/* smem_emit_offset folded on constant coordinates: the offset smem_offset computes. */
static int emitted_offset_agrees(const TirLayout *l, const int *S, int rank, const int *c)
{
    static LLVMContextRef ctx;
    static LLVMBuilderRef b;
    if (!ctx)
        ctx = LLVMContextCreate(), b = LLVMCreateBuilderInContext(ctx);
    LLVMValueRef coord[TIR_MAX_RANK];
    for (int d = 0; d < rank; d++)
        coord[d] = LLVMConstInt(LLVMInt32TypeInContext(ctx), (unsigned)c[d], 0);
    LLVMValueRef off = smem_emit_offset(b, l, S, rank, coord);
    return LLVMIsAConstantInt(off) && LLVMConstIntGetZExtValue(off) == smem_offset(l, S, rank, c);
}

/* A random buffer shape for the shared-layout tests: rank 2 or 3, dims of 2 to 2^max_log,
 * 1-, 2- or 4-byte elements, the last or the second-last dim contiguous; 0 when it has more
 * than 2^16 elements. */
static int random_buffer(int max_log, int *rank, int *eb, int *S, int *order)
{
    *rank = 2 + (int)rnd(2), *eb = 1 << rnd(3);
    for (int d = 0; d < *rank; d++)
        S[d] = 1 << (1 + rnd((unsigned)max_log)), order[d] = *rank - 1 - d;
    if (rnd(2)) {
        int t = order[0];
        order[0] = order[1], order[1] = t;
    }
    return smem_numel(S, *rank) <= (1 << 16);
}

/* Swizzled shared layouts: the linear layout of offsets agrees with smem_offset, the map is
 * a bijection, 16-byte chunks stay whole, and 8 rows of one chunk column (an ldmatrix
 * or column-wise access) hit 8 different 16-byte bank groups when a row has 8 chunks. */
static int t_shared_swizzle(void)
{
    static unsigned char seen[1 << 16];
    for (int iter = 0; iter < 200; iter++) {
        int rank, eb, S[TIR_MAX_RANK], order[TIR_MAX_RANK];
        if (!random_buffer(6, &rank, &eb, S, order))
            continue;
        int wgmma = (int)rnd(2);
        TirLayout l = wgmma ? smem_layout_wgmma(rank, S, eb, order) : smem_layout_swizzled(rank, S, eb, order);
        LinearLayout ll;
        CHECK(layout_ll(&l, S, rank, &ll) == 0);
        int n = ll_numel(&ll);
        memset(seen, 0, (size_t)n);
        for (int f = 0; f < n; f++) {
            int c[TIR_MAX_RANK];
            ll_coords(&ll, (uint32_t)f, c);
            uint32_t off = smem_offset(&l, S, rank, c);
            CHECK(off < (uint32_t)n && !seen[off]);
            seen[off] = 1;
            CHECK(ll_apply(&ll, off, 0, 0) == (uint32_t)f);
            if (f % 7 == 0)
                CHECK(emitted_offset_agrees(&l, S, rank, c));
            int P = smem_panel(&l, S);
            if (wgmma && P * eb >= 32) { /* the hardware's swizzle of the byte address */
                uint32_t R = (uint32_t)(P * eb), row = 0, stride = 1;
                for (int j = 1; j < rank; j++)
                    row += (uint32_t)c[order[j]] * stride, stride *= (uint32_t)S[order[j]];
                uint32_t plain = ((uint32_t)c[order[0]] / (uint32_t)P * stride + row) * R +
                                 (uint32_t)(c[order[0]] % P * eb);
                CHECK(off * (uint32_t)eb == (plain ^ (((plain >> 7) & (R / 16 - 1)) << 4)));
            }
            if (c[order[0]] % l.vec) { /* inside a chunk: next to its predecessor */
                int p[TIR_MAX_RANK];
                memcpy(p, c, sizeof p);
                p[order[0]]--;
                CHECK(smem_offset(&l, S, rank, p) + 1 == off);
            }
        }
        int C = S[order[0]];
        if (rank == 2 && C * eb >= 128 && S[order[1]] >= 8) {
            for (int chunk = 0; chunk < C / l.vec; chunk++) {
                unsigned groups = 0;
                for (int r = 0; r < 8; r++) {
                    int c[2];
                    c[order[1]] = r, c[order[0]] = chunk * l.vec;
                    groups |= 1u << (smem_offset(&l, S, rank, c) * (uint32_t)eb / 16 % 8);
                }
                CHECK(groups == 0xff);
            }
        }
    }
    return 0;
}

/* Padded shared layouts: rows under 128 bytes keep the swizzled layout; otherwise each row
 * of C elements starts C + pad after the previous one (emitted offsets agree), the linear
 * layout is that of the offsets before padding, offsets are distinct and inside the buffer,
 * chunks start 16-byte aligned, and 8 consecutive rows of one chunk column (an ldmatrix
 * read, from any row) hit 8 different 16-byte bank groups. */
static int t_shared_padded(void)
{
    static unsigned char seen[1 << 17];
    for (int iter = 0; iter < 200; iter++) {
        int rank, eb, S[TIR_MAX_RANK], order[TIR_MAX_RANK];
        if (!random_buffer(7, &rank, &eb, S, order))
            continue;
        TirLayout l = smem_layout_padded(rank, S, eb, order);
        TirLayout sw = smem_layout_swizzled(rank, S, eb, order);
        int C = S[order[0]];
        if (C * eb < 128) {
            CHECK(tir_layout_equal(&l, &sw));
            CHECK(smem_buffer_elems(&l, S, rank) == smem_numel(S, rank));
            continue;
        }
        CHECK(l.pad * eb == 16 && l.vec * eb == 16 && l.max_phase == 1 && !l.panel);
        int n = smem_numel(S, rank), size = smem_buffer_elems(&l, S, rank);
        CHECK(size == n + n / C * l.pad);
        LinearLayout ll;
        CHECK(layout_ll(&l, S, rank, &ll) == 0);
        memset(seen, 0, (size_t)size);
        for (int f = 0; f < n; f++) {
            int c[TIR_MAX_RANK];
            ll_coords(&ll, (uint32_t)f, c);
            uint32_t off = smem_offset(&l, S, rank, c), W = (uint32_t)(C + l.pad);
            CHECK(off % W < (uint32_t)C); /* never in the padding */
            CHECK(ll_apply(&ll, off / W * (uint32_t)C + off % W, 0, 0) == (uint32_t)f);
            CHECK(off < (uint32_t)size && !seen[off]);
            seen[off] = 1;
            if (f % 5 == 0)
                CHECK(emitted_offset_agrees(&l, S, rank, c));
            if (c[order[0]] % l.vec == 0)
                CHECK(off * (uint32_t)eb % 16 == 0);
        }
        int rows = n / C;
        for (int r0 = 0; r0 + 8 <= rows; r0 += 1 + (int)rnd(8))
            for (int chunk = 0; chunk < C / l.vec; chunk++) {
                unsigned groups = 0;
                for (int r = r0; r < r0 + 8; r++) {
                    int c[TIR_MAX_RANK];
                    ll_coords(&ll, ll_apply(&ll, (uint32_t)(r * C + chunk * l.vec), 0, 0), c);
                    groups |= 1u << (smem_offset(&l, S, rank, c) * (uint32_t)eb / 16 % 8);
                }
                CHECK(groups == 0xff);
            }
    }
    return 0;
}

static int t_unsupported(void)
{
    LinearLayout ll;
    TirLayout bad = {.kind = LAYOUT_DOT_OPERAND, .rank = 2, .parent = LAYOUT_MMA, .kwidth = 3, .wpc = {1, 1}};
    CHECK(layout_ll(&bad, (const int[]){16, 16}, 2, &ll) != 0);
    TirLayout mma3 = {.kind = LAYOUT_MMA, .rank = 3, .wpc = {1, 1, 1}};
    CHECK(layout_ll(&mma3, (const int[]){16, 16, 16}, 3, &ll) != 0);
    TirLayout unknown = {.kind = (LayoutKind)99, .rank = 2};
    CHECK(layout_ll(&unknown, (const int[]){16, 16}, 2, &ll) != 0);
    (void)lg2;
    return 0;
}

int main(int argc, char **argv)
{
    static const NamedTest tests[] = {
        {"blocked_matches_formula", t_blocked_matches_formula},
        {"mma_fragments", t_mma_fragments},
        {"mma_tiling", t_mma_tiling},
        {"mfma_fragments", t_mfma_fragments},
        {"mfma_tiling", t_mfma_tiling},
        {"solve", t_solve},
        {"reduce_is_slice", t_reduce_is_slice},
        {"convert_paths", t_convert_paths},
        {"slices_and_transposes", t_slices_and_transposes},
        {"shared_swizzle", t_shared_swizzle},
        {"shared_padded", t_shared_padded},
        {"unsupported", t_unsupported},
    };
    return run_named_tests("test_layout", tests, (int)(sizeof tests / sizeof tests[0]), argc, argv);
}
