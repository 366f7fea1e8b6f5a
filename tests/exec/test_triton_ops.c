/* test_triton_ops.c: the tritonops group of the execution tests (tests/exec/triton_ops.tile):
 * swizzle2d on tiles and scalars over many grid and group sizes (groups that do not divide
 * the rows included) against Triton's algorithm in C; histogram with masks and out-of-range
 * values, on rank-1 and rank-2 tiles, from one to 1024 bins; gather along each axis (out-of-
 * range indices give 0); xor_sum along each axis and over everything. All exact. */
#include <math.h>
#include <stdint.h>
#include "test_exec.h"

#define TO "tests/exec/triton_ops.tile"

static void swizzle_ref(int i, int j, int si, int sj, int sg, int *ni, int *nj)
{
    int ij = i * sj + j, sgj = sg * sj, group = ij / sgj, off = group * sg;
    int g = si - off < sg ? si - off : sg;
    ij %= sgj;
    *ni = off + ij % g, *nj = ij / g;
}

static void swizzle(int si, int sj, int sg)
{
    begin("swizzle2d of a %dx%d grid, groups of %d rows", si, sj, sg);
    size_t n = (size_t)si * sj;
    Buf *oi = output("new_i", T_I32, n, EXACT), *oj = output("new_j", T_I32, n, EXACT);
    for (int i = 0; i < si; i++)
        for (int j = 0; j < sj; j++) {
            int a, b;
            swizzle_ref(i, j, si, sj, sg, &a, &b);
            oi->v[i * sj + j] = a, oj->v[i * sj + j] = b;
        }
    run(TO, "swizzle_tile", ARGS(P(oi), P(oj), I(si), I(sj), I(sg)), NO_CONSTS);

    begin("swizzle2d of program ids, a %dx%d grid, groups of %d rows", si, sj, sg);
    Buf *si2 = output("new_i", T_I32, n, EXACT), *sj2 = output("new_j", T_I32, n, EXACT);
    Buf *c = output("constant", T_I32, 2, EXACT);
    for (int i = 0; i < si; i++)
        for (int j = 0; j < sj; j++) {
            int a, b;
            swizzle_ref(i, j, si, sj, sg, &a, &b);
            si2->v[i * sj + j] = a, sj2->v[i * sj + j] = b;
        }
    int ca, cb;
    swizzle_ref(7, 3, 10, 5, 4, &ca, &cb);
    c->v[0] = ca, c->v[1] = cb;
    run(TO, "swizzle_scalar", ARGS(P(si2), P(sj2), P(c), I(si), I(sj), I(sg)), NO_CONSTS);
}

static void hist(Ty t, const char *kernel, int N, int n, int bins, int masked)
{
    begin("histogram of %d of %d %s values, %d bins, %s", n, N, TY[t].name, bins,
          masked ? "masked" : "other=-1");
    double lo = t == T_U8 ? 0 : -3, hi = t == T_U8 ? 255 : bins + 3;
    Buf *x = input("x", t, (size_t)N, lo, hi), *o = output("counts", T_I32, (size_t)bins, EXACT);
    for (int b = 0; b < bins; b++)
        o->v[b] = 0;
    for (int i = 0; i < n; i++)
        if (x->v[i] >= 0 && x->v[i] < bins)
            o->v[(int)x->v[i]]++;
    run(TO, kernel, ARGS(P(x), P(o), I(n)),
        CONSTS({"N", N}, {"B", bins}, {"MASKED", masked}, {"OUT", t == T_U8 ? 255 : -1}));
}

static void hist2d(int r, int bins)
{
    begin("histogram of %d rows of a [32, 32] tile, %d bins", r, bins);
    Buf *x = input("x", T_I32, 32 * 32, -2, bins + 2), *o = output("counts", T_I32, (size_t)bins, EXACT);
    for (int b = 0; b < bins; b++)
        o->v[b] = 0;
    for (int i = 0; i < r * 32; i++)
        if (x->v[i] >= 0 && x->v[i] < bins)
            o->v[(int)x->v[i]]++;
    run(TO, "hist2d", ARGS(P(x), P(o), I(r)), CONSTS({"B", bins}));
}

static double pick(const Buf *src, size_t at, int64_t k, int64_t kn)
{
    return k < 0 || k >= kn ? 0 : src->v[at];
}

static void gather1(Ty t, const char *kernel, int K, int I)
{
    begin("gather of %d from %d %s (some indices out of range)", I, K, TY[t].name);
    Buf *src = input("src", t, (size_t)K, -100, 100), *idx = input("idx", T_I32, (size_t)I, -2, K + 1);
    Buf *o = output("out", t, (size_t)I, EXACT);
    for (int i = 0; i < I; i++) {
        int64_t k = (int64_t)idx->v[i];
        o->v[i] = pick(src, (size_t)(k < 0 || k >= K ? 0 : k), k, K);
    }
    run(TO, kernel, ARGS(P(src), P(idx), P(o)), CONSTS({"K", K}, {"I", I}));
}

static void gather2(Ty t, const char *kernel)
{
    begin("gather of %s [16, 8] along axis 0 into [32, 8] and axis 1 into [16, 32]", TY[t].name);
    Buf *src = input("src", t, 16 * 8, -100, 100);
    Buf *i0 = input("idx0", T_I32, 32 * 8, 0, 15), *i1 = input("idx1", T_I32, 16 * 32, -1, 8);
    Buf *o0 = output("out0", t, 32 * 8, EXACT), *o1 = output("out1", t, 16 * 32, EXACT);
    for (int i = 0; i < 32; i++)
        for (int j = 0; j < 8; j++) {
            int64_t k = (int64_t)i0->v[i * 8 + j];
            o0->v[i * 8 + j] = pick(src, (size_t)(k * 8 + j), k, 16);
        }
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 32; j++) {
            int64_t k = (int64_t)i1->v[i * 32 + j];
            o1->v[i * 32 + j] = pick(src, (size_t)(k < 0 || k >= 8 ? 0 : i * 8 + k), k, 8);
        }
    run(TO, kernel, ARGS(P(src), P(i0), P(i1), P(o0), P(o1)), NO_CONSTS);
}

static void xor_sums(Ty t, const char *kernel)
{
    begin("xor_sum of %s [16, 8] along each axis and of everything", TY[t].name);
    Buf *x = input("x", t, 16 * 8, t == T_U8 ? 0 : -2147483648.0, t == T_U8 ? 255 : 2147483647.0);
    Buf *o0 = output("axis 0", t, 8, EXACT), *o1 = output("axis 1", t, 16, EXACT);
    Buf *all = output("all", t, 1, EXACT), *keep = output("keep_dims", t, 16, EXACT);
    uint32_t every = 0, mask = t == T_U8 ? 0xff : 0xffffffffu;
    for (int j = 0; j < 8; j++) {
        uint32_t a = 0;
        for (int i = 0; i < 16; i++)
            a ^= (uint32_t)(int64_t)x->v[i * 8 + j];
        o0->v[j] = ty_round(t, (double)(int32_t)(a & mask));
        every ^= a;
    }
    for (int i = 0; i < 16; i++) {
        uint32_t a = 0;
        for (int j = 0; j < 8; j++)
            a ^= (uint32_t)(int64_t)x->v[i * 8 + j];
        o1->v[i] = keep->v[i] = ty_round(t, (double)(int32_t)(a & mask));
    }
    all->v[0] = ty_round(t, (double)(int32_t)(every & mask));
    run(TO, kernel, ARGS(P(x), P(o0), P(o1), P(all), P(keep)), NO_CONSTS);
}

static void tuple_shapes(void)
{
    begin("shapes as tuples and dtype= by keyword (zeros, full, reshape, broadcast_to, permute)");
    Buf *x = input("x", T_F32, 32, -4, 4);
    Buf *o = output("o", T_F32, 32, EXACT), *oi = output("oi", T_I32, 8, EXACT);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 8; j++)
            o->v[i * 8 + j] = (float)(x->v[j * 4 + i] * 2) + 1.0f; /* f32 arithmetic */
    for (int i = 0; i < 8; i++)
        oi->v[i] = 7;
    run(TO, "tuple_shapes", ARGS(P(x), P(o), P(oi)), NO_CONSTS);
}

static void nan_inf(void)
{
    begin("isnan and isinf of f32, f16 and integers (NaNs of both signs, infinities, the largest finite)");
    Buf *x = input("x", T_F32, 16, -1e30, 1e30), *h = input("h", T_F16, 16, -60000, 60000);
    const double special[] = {NAN, -NAN, INFINITY, -INFINITY, 3.4028234663852886e38, 0.0, -0.0};
    for (int i = 0; i < 7; i++)
        x->v[2 * i] = special[i], h->v[15 - 2 * i] = i == 4 ? 65504.0 : special[i];
    Buf *ox = output("ox", T_I32, 16, EXACT), *oh = output("oh", T_I32, 16, EXACT);
    Buf *oi = output("oi", T_I32, 16, EXACT);
    for (int i = 0; i < 16; i++) {
        ox->v[i] = (isnan(x->v[i]) != 0) + 2 * (isinf(x->v[i]) != 0);
        oh->v[i] = (isnan(h->v[i]) != 0) + 2 * (isinf(h->v[i]) != 0);
        oi->v[i] = 0;
    }
    run(TO, "nan_inf", ARGS(P(x), P(h), P(ox), P(oh), P(oi)), NO_CONSTS);
}

void t_triton_ops(void)
{
    static const int grids[][3] = {{1, 1, 1}, {8, 8, 8}, {10, 7, 4}, {13, 5, 3}, {64, 64, 8},
                                   {33, 17, 5}, {5, 64, 8}, {64, 3, 1}, {7, 9, 16}, {20, 20, 6}};
    for (int g = 0; g < 10; g++)
        swizzle(grids[g][0], grids[g][1], grids[g][2]);
    static const int bins[] = {1, 4, 16, 64, 256, 1024};
    for (int b = 0; b < 6; b++) {
        hist(T_I32, "hist", 1024, 1000, bins[b], 1);
        hist(T_I32, "hist", 64, 37, bins[b], b % 2);
    }
    hist(T_I32, "hist", 1024, 1024, 16, 0);
    hist(T_U8, "hist_u8", 1024, 999, 256, 1);
    hist(T_U8, "hist_u8", 256, 200, 16, 0); /* past n: 255, out of range */
    hist(T_I64, "hist_i64", 512, 511, 64, 1);
    hist2d(32, 64), hist2d(17, 8), hist2d(0, 16);
    gather1(T_F32, "gather1", 64, 64);
    gather1(T_I16, "gather1_i16", 16, 128);
    gather1(T_F32, "gather1", 128, 8);
    gather2(T_F32, "gather2"), gather2(T_I16, "gather2_i16");
    xor_sums(T_I32, "xor_sums"), xor_sums(T_U8, "xor_sums_u8");
    tuple_shapes();
    nan_inf();
}
