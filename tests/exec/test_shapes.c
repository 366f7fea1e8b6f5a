/* test_shapes.c: the shapes group of the execution tests (tests/exec/shapes.tile and
 * examples/int4_gemv.tile): reshape, permute, trans with dims, expand_dims, join, split and
 * interleave against index arithmetic done here, at several warp counts (the layouts differ). */
#include <math.h>
#include <stdlib.h>
#include <stdint.h>
#include "test_exec.h"

#define SH "tests/exec/shapes.tile"

static void reshapes(int A, int B, int warps)
{
    begin("reshape/permute/sum A=%d B=%d num_warps=%d", A, B, warps);
    int n = A * B, H = B / 2;
    Buf *x = input("x", T_F32, n, -1, 1);
    Buf *ot = output("trans", T_F32, n, EXACT), *op = output("permute", T_F32, n, EXACT);
    Buf *rows = output("row sums", T_F32, A, TOL_F32);
    for (int a = 0; a < A; a++)
        for (int b = 0; b < B; b++)
            ot->v[b * A + a] = x->v[a * B + b];
    /* reshape [2, A, H], permute [2, 0, 1] -> [H, 2, A]: out[h][i][a] = t[i][a][h] */
    for (int i = 0; i < 2; i++)
        for (int a = 0; a < A; a++)
            for (int h = 0; h < H; h++)
                op->v[(h * 2 + i) * A + a] = x->v[(i * A + a) * H + h];
    for (int a = 0; a < A; a++) {
        double s = 0, abs_sum = 0;
        for (int b = 0; b < B; b++)
            s += x->v[a * B + b], abs_sum += fabs(x->v[a * B + b]);
        rows->v[a] = s;
        sum_bound(rows, a, abs_sum, B);
    }
    run(SH, "reshapes", ARGS(P(x), P(ot), P(op), P(rows), I(0)),
        CONSTS({"A", A}, {"B", B}, {"num_warps", warps}));
}

static void dims(int N)
{
    begin("trans dims, expand_dims N=%d", N);
    Buf *x = input("x", T_F32, (size_t)N * N, -1, 1), *y = input("y", T_F32, N, -1, 1);
    Buf *o = output("o", T_F32, (size_t)N * N, TOL_F32);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            o->v[i * N + j] = (float)(x->v[j * N + i] + y->v[i]);
    run(SH, "dims", ARGS(P(x), P(y), P(o)), CONSTS({"N", N}));
}

static void pairs(int n, int warps)
{
    begin("join/split n=%d num_warps=%d", n, warps);
    Buf *a = input("a", T_F32, n, -1, 1), *b = input("b", T_F32, n, -1, 1);
    Buf *q = input("q", T_F32, (size_t)2 * n, -1, 1);
    Buf *p = output("pairs", T_F32, (size_t)2 * n, EXACT), *d = output("d", T_F32, n, TOL_F32);
    Buf *e = output("e", T_F32, n, TOL_F32);
    for (int i = 0; i < n; i++) {
        p->v[2 * i] = a->v[i], p->v[2 * i + 1] = b->v[i];
        d->v[i] = (float)(q->v[2 * i] - q->v[2 * i + 1]);
        e->v[i] = (float)(a->v[i] * 2 - b->v[i]);
    }
    run(SH, "pairs", ARGS(P(a), P(b), P(q), P(p), P(d), P(e), I(n)), CONSTS({"num_warps", warps}));
}

static void nibbles(int n)
{
    begin("interleave nibbles n=%d", n);
    Buf *x = input("x", T_U8, n, 0, 255), *o = output("o", T_I32, (size_t)2 * n, EXACT);
    for (int i = 0; i < n; i++) {
        int v = (int)x->v[i];
        o->v[2 * i] = v & 15, o->v[2 * i + 1] = v >> 4;
    }
    run(SH, "nibbles", ARGS(P(x), P(o), I(n)), NO_CONSTS);
}

static void scalar_pairs(void)
{
    begin("interleave and join of scalars and of pointers");
    Buf *x = input("x", T_I32, 2, -1000, 1000), *o = output("o", T_I32, 6, EXACT);
    double a = x->v[0], b = x->v[1];
    double want[6] = {b, a, a, b, 3 * b, 3 * a};
    for (int i = 0; i < 6; i++) o->v[i] = want[i];
    run(SH, "scalar_pairs", ARGS(P(x), P(o)), NO_CONSTS);
}

static void reshaped_dot(void)
{
    begin("dot of a reshaped operand 32x32x32");
    int M = 32, K = 32, N = 32;
    Buf *a = input("a", T_F16, (size_t)M * K, -1, 1), *b = input("b", T_F16, (size_t)K * N, -1, 1);
    Buf *c = output("c", T_F32, (size_t)M * N, TOL_F32);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int k = 0; k < K; k++)
                s += a->v[i * K + k] * b->v[k * N + j];
            c->v[i * N + j] = s;
        }
    run(SH, "reshaped_dot", ARGS(P(a), P(b), P(c)), NO_CONSTS);
}

static void int4_gemv(int M, int K)
{
    begin("int4_gemv M=%d K=%d", M, K);
    Buf *w = input("w", T_U8, (size_t)M * K / 2, 0, 255), *scale = input("scale", T_F32, M, 0.01, 0.1);
    Buf *x = input("x", T_F32, K, -1, 1), *y = output("y", T_F32, M, TOL_F32);
    for (int m = 0; m < M; m++) {
        double s = 0, abs_sum = 0;
        for (int k = 0; k < K; k++) {
            int byte = (int)w->v[(size_t)m * (K / 2) + k / 2];
            int q = (k % 2 ? byte >> 4 : byte & 15) - 8;
            s += q * x->v[k], abs_sum += fabs(q * x->v[k]);
        }
        y->v[m] = s * (float)scale->v[m];
        sum_bound(y, m, abs_sum * (float)scale->v[m], (size_t)K + 1);
    }
    run("examples/int4_gemv.tile", "int4_gemv", ARGS(P(w), P(scale), P(x), P(y), I(M), I(K)),
        NO_CONSTS);
}

static int cmp_up(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return isnan(x) ? !isnan(y) : isnan(y) ? -1 : (x > y) - (x < y); /* NaN last */
}

static void sorts(int warps)
{
    begin("sort, sort descending, topk, int sort; num_warps=%d", warps);
    Buf *x = input("x", T_F32, 256, -1, 1), *xi = input("xi", T_I32, 64, -50, 50);
    Buf *up = output("up", T_F32, 256, EXACT), *down = output("down", T_F32, 256, EXACT);
    Buf *top = output("top", T_F32, 32, EXACT), *si = output("si", T_I32, 64, EXACT);
    x->v[5] = NAN, x->v[40] = x->v[41]; /* a NaN (sorts last) and a tie */
    for (int r = 0; r < 8; r++) {
        double row[32];
        for (int c = 0; c < 32; c++)
            row[c] = x->v[r * 32 + c];
        qsort(row, 32, sizeof row[0], cmp_up);
        for (int c = 0; c < 32; c++)
            up->v[r * 32 + c] = row[c], down->v[r * 32 + c] = row[31 - c];
        for (int c = 0; c < 4; c++)
            top->v[r * 4 + c] = row[31 - c];
    }
    double ints[64];
    for (int i = 0; i < 64; i++)
        ints[i] = xi->v[i];
    qsort(ints, 64, sizeof ints[0], cmp_up);
    for (int i = 0; i < 64; i++)
        si->v[i] = ints[i];
    run(SH, "sorts", ARGS(P(x), P(xi), P(up), P(down), P(top), P(si)), CONSTS({"num_warps", warps}));
}

/* the same along dims of 128, which GPUs (and sim) sort across threads and the CPU backend
 * in one thread with the network as loops */
static void sorts_long(int warps)
{
    enum { N = 128 };
    begin("sort, argsort descending, topk along 128; int sort along dim 0 of 128; num_warps=%d", warps);
    Buf *x = input("x", T_F32, N, -1, 1), *d = input("d", T_F32, N, 0, 0);
    Buf *xi = input("xi", T_I32, 4 * N, -1000, 1000);
    Buf *up = output("up", T_F32, N, EXACT), *order = output("order", T_I32, N, EXACT);
    Buf *top = output("top", T_F32, 16, EXACT), *si = output("si", T_I32, 4 * N, EXACT);
    x->v[7] = NAN, x->v[10] = x->v[100], x->v[101] = x->v[100]; /* a NaN (largest) and ties */
    static double row[N];
    for (int i = 0; i < N; i++)
        row[i] = x->v[i];
    qsort(row, N, sizeof row[0], cmp_up);
    for (int i = 0; i < N; i++)
        up->v[i] = row[i];
    for (int c = 0; c < 16; c++)
        top->v[c] = row[N - 1 - c]; /* NaN counts as the largest: first */
    for (int i = 0; i < N; i++)
        d->v[i] = (double)((i * 97) % N) - 100.5;
    for (int i = 0; i < N; i++) {
        int above = 0; /* how many are larger */
        for (int j = 0; j < N; j++)
            above += d->v[j] > d->v[i];
        order->v[above] = i;
    }
    for (int c = 0; c < 4; c++) {
        double col[N];
        for (int r = 0; r < N; r++)
            col[r] = xi->v[r * 4 + c];
        qsort(col, N, sizeof col[0], cmp_up);
        for (int r = 0; r < N; r++)
            si->v[r * 4 + c] = col[r];
    }
    run(SH, "sorts_long", ARGS(P(x), P(d), P(xi), P(up), P(order), P(top), P(si)),
        CONSTS({"num_warps", warps}));
}

/* Sorts along 1024 (a NaN, ties; argsort of distinct values, the 64 largest) and rows of
 * 512 integers sorted descending: longer than any one thread holds on a GPU. */
static void sorts_1k(int warps)
{
    enum { N = 1024, R = 4, C = 512 };
    begin("sort, argsort descending, topk 64 along 1024; i32 rows of 512 descending; num_warps=%d", warps);
    Buf *x = input("x", T_F32, N, -1, 1), *d = input("d", T_F32, N, 0, 0);
    Buf *xi = input("xi", T_I32, R * C, -100000, 100000);
    Buf *up = output("up", T_F32, N, EXACT), *order = output("order", T_I32, N, EXACT);
    Buf *top = output("top", T_F32, 64, EXACT), *si = output("si", T_I32, R * C, EXACT);
    x->v[3] = NAN, x->v[600] = x->v[601] = x->v[1000]; /* a NaN (largest) and ties */
    static double row[N];
    for (int i = 0; i < N; i++)
        row[i] = x->v[i], d->v[i] = (double)((i * 769) % N) - 500.5; /* d: distinct */
    qsort(row, N, sizeof row[0], cmp_up);
    for (int i = 0; i < N; i++)
        up->v[i] = row[i], order->v[N - 1 - (int)(d->v[i] + 500.5)] = i;
    for (int c = 0; c < 64; c++)
        top->v[c] = row[N - 1 - c];
    for (int r = 0; r < R; r++) {
        static double ints[C];
        for (int c = 0; c < C; c++)
            ints[c] = xi->v[r * C + c];
        qsort(ints, C, sizeof ints[0], cmp_up);
        for (int c = 0; c < C; c++)
            si->v[r * C + c] = ints[C - 1 - c];
    }
    run(SH, "sorts_1k", ARGS(P(x), P(d), P(xi), P(up), P(order), P(top), P(si)),
        CONSTS({"num_warps", warps}));
}

/* distinct values (no ties: indices are unique) */
static void argsorts(int warps)
{
    begin("argsort, argtopk; num_warps=%d", warps);
    Buf *x = input("x", T_F32, 256, 0, 0);
    Buf *order = output("order", T_I32, 256, EXACT), *top = output("top", T_I32, 32, EXACT);
    for (int i = 0; i < 256; i++)
        x->v[i] = (double)((i * 97) % 256) - 100.5;
    for (int r = 0; r < 8; r++)
        for (int c = 0; c < 32; c++) {
            int rank = 0; /* how many of the row are smaller */
            for (int d = 0; d < 32; d++)
                rank += x->v[r * 32 + d] < x->v[r * 32 + c];
            order->v[r * 32 + rank] = c;
            if (rank >= 28)
                top->v[r * 4 + (31 - rank)] = c;
        }
    run(SH, "argsorts", ARGS(P(x), P(order), P(top)), CONSTS({"num_warps", warps}));
}

static void flips(int warps)
{
    begin("flip last dim and dim 0, num_warps=%d", warps);
    Buf *x = input("x", T_F32, 128, -1, 1);
    Buf *o = output("o", T_F32, 128, EXACT), *o2 = output("o2", T_F32, 128, EXACT);
    for (int i = 0; i < 128; i++)
        o->v[i] = x->v[127 - i];
    for (int r = 0; r < 8; r++)
        for (int c = 0; c < 16; c++)
            o2->v[r * 16 + c] = x->v[(7 - r) * 16 + c];
    run(SH, "flips", ARGS(P(x), P(o), P(o2)), CONSTS({"num_warps", warps}));
}

/* out[i * stride] = the softmax of x[i * stride], i < n */
static void softmax_ref(const double *x, int n, int stride, double *out)
{
    double mx = -INFINITY, sum = 0;
    for (int i = 0; i < n; i++)
        mx = fmax(mx, x[i * stride]);
    for (int i = 0; i < n; i++)
        sum += exp(x[i * stride] - mx);
    for (int i = 0; i < n; i++)
        out[i * stride] = exp(x[i * stride] - mx) / sum;
}

/* softmax (Triton's: dim 0 by default) over masked and whole tiles, f16 too; sqrt_rn
 * correctly rounded (exact against the double result rounded to f32); zeros_like; ravel */
static void triton_helpers(int n)
{
    enum { R = 8, C = 64 };
    begin("softmax dims 1 and 0, f16; sqrt_rn, zeros_like, ravel; n=%d", n);
    Buf *x = input("x", T_F32, R * C, -4, 4), *h = input("h", T_F16, C, -8, 8);
    Buf *o = inout("o", T_F32, R * C, TOL_F32), *o0 = output("o0", T_F32, R * C, TOL_F32);
    Buf *oh = output("oh", T_F16, C, TOL_F16), *sq = output("sq", T_F32, R * C, EXACT);
    Buf *flat = output("flat", T_F32, R * C, EXACT);
    for (int r = 0; r < R; r++) {
        softmax_ref(x->v + r * C, n, 1, o->v + r * C);
        for (int c = 0; c < C; c++) /* masked-off columns are not stored: 0.5 stays */
            o->init[r * C + c] = 0.5, o->v[r * C + c] = c < n ? o->v[r * C + c] : 0.5;
    }
    for (int c = 0; c < C; c++)
        softmax_ref(x->v + c, R, C, o0->v + c);
    softmax_ref(h->v, C, 1, oh->v);
    for (int i = 0; i < R * C; i++) {
        sq->v[i] = (double)sqrtf(fabsf((float)x->v[i]));
        flat->v[i] = 2.0 * (float)x->v[i];
    }
    run(SH, "triton_helpers", ARGS(P(x), I(n), P(o), P(o0), P(h), P(oh), P(sq), P(flat)), NO_CONSTS);
}

/* a reshaped column and a sorted one broadcast across columns (found by tests/difffuzz: the
 * linear layout of a reshape had no form at the broadcast shape, an internal error on GPUs) */
static void broadcast_column(int warps)
{
    enum { R = 128, C = 32 };
    begin("broadcast of a reshaped and of a sorted column, num_warps=%d", warps);
    Buf *x = input("x", T_F32, R, -1, 1);
    Buf *o = output("o", T_F32, R * C, EXACT), *o2 = output("o2", T_F32, R * C, EXACT);
    double sorted[R];
    for (int r = 0; r < R; r++)
        sorted[r] = x->v[r];
    qsort(sorted, R, sizeof sorted[0], cmp_up);
    for (int r = 0; r < R; r++)
        for (int c = 0; c < C; c++) {
            o->v[r * C + c] = (float)(x->v[r] + c);
            o2->v[r * C + c] = fmax(0, sorted[r]);
        }
    run(SH, "broadcast_column", ARGS(P(x), P(o), P(o2), I(2)), CONSTS({"num_warps", warps}));
}

static void topk_back(int warps)
{
    begin("x - topk(ravel(x), 1) of [16, 32], num_warps=%d", warps);
    Buf *x = input("x", T_F32, 512, -1, 1), *o = output("o", T_F32, 512, EXACT);
    double top = x->v[0];
    for (int i = 1; i < 512; i++)
        top = fmax(top, x->v[i]);
    for (int i = 0; i < 512; i++)
        o->v[i] = (float)(x->v[i] - top);
    run(SH, "topk_back", ARGS(P(x), P(o)), CONSTS({"num_warps", warps}));
}

static void trans_sliced(int n)
{
    begin("trans of a tile with a slice of a rank-3 linear layout, n=%d", n);
    Buf *x = input("x", T_F32, 128, -1, 1), *o = output("o", T_F32, 128, EXACT);
    Buf *oi = output("oi", T_I32, 1, EXACT), *os = output("os", T_F32, 1, EXACT);
    int first = 0;
    for (int r = 0; r < 128; r++) {
        double v = r < n ? x->v[r] : 0, best = first < n ? x->v[first] : 0;
        o->v[r] = 2 * v;
        if (v < best)
            first = r;
    }
    oi->v[0] = os->v[0] = first;
    run(SH, "trans_sliced", ARGS(P(x), P(o), P(oi), P(os), I(n)), NO_CONSTS);
}

void t_shapes(void)
{
    triton_helpers(64);
    triton_helpers(37);
    sorts(1);
    sorts(4);
    argsorts(1);
    argsorts(4);
    sorts_long(4);
    sorts_long(8);
    sorts_1k(4);
    sorts_1k(8);
    flips(1);
    flips(4);
    broadcast_column(2);
    broadcast_column(4);
    topk_back(1);
    topk_back(8);
    trans_sliced(99);
    trans_sliced(128);
    for (int w = 1; w <= 4; w *= 4) {
        reshapes(4, 32, w);
        reshapes(16, 64, w);
        pairs(1, w);
        pairs(1000, w);
    }
    dims(16);
    nibbles(1);
    nibbles(333);
    scalar_pairs();
    reshaped_dot();
    int4_gemv(1, 256);
    int4_gemv(100, 512);
    int4_gemv(77, 1000);
}
