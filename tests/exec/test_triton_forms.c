/* test_triton_forms.c: the tritonforms group of the execution tests (tests/exec/
 * triton_forms.tile): scans and sums with dtype= against exact int64 (wrapped to the type
 * where it is narrow) and float64 references, short and long axes; argmax/argmin with each
 * tie-break on tiles full of ties and NaNs against a sequential search; cat feeding stores,
 * reductions and both dot operands, at several ranks and warp counts; fp8 helper parameters
 * given float constants. */
#include <math.h>
#include <string.h>
#include "test_exec.h"

#define TF "tests/exec/triton_forms.tile"

/* running sums (or, from the end, suffix sums) of v[0..n) into o, each wrapped to o's type */
static void prefix_sums(const double *v, int n, int stride, int reverse, Buf *o, int at)
{
    double acc = 0;
    for (int k = 0; k < n; k++) {
        int i = reverse ? n - 1 - k : k;
        acc += v[i * stride];
        o->v[at + i * stride] = ty_round(o->t, acc);
    }
}

static void scan_dtype(int n)
{
    enum { N = 128 };
    begin("cumsum/cumprod/sum with dtype= (u8, bool, i8 in i32, i16, i8; f32 in f64) n=%d", n);
    Buf *x = input("x", T_U8, N, 0, 255), *y = input("y", T_I8, N, -128, 127);
    Buf *f = input("f", T_F32, N, 0.9, 1.1);
    Buf *ou = output("cumsum u8 in i32", T_I32, n, EXACT), *ob = output("count", T_I32, n, EXACT);
    Buf *y16 = output("cumsum i8 in i16", T_I16, n, EXACT);
    Buf *y8 = output("cumsum i8 in i8", T_I8, n, EXACT);
    Buf *rev = output("cumsum reverse u8 in i32", T_I32, n, EXACT);
    Buf *prod = output("cumprod f32 in f64", T_F64, n, 1e-13);
    Buf *s8 = output("sum i8 in i8", T_I8, 1, EXACT), *s16 = output("sum u8 in u16", T_U16, 1, EXACT);
    double big[N];
    for (int i = 0; i < N; i++)
        big[i] = x->v[i] > 127;
    prefix_sums(x->v, n, 1, 0, ou, 0);
    prefix_sums(big, n, 1, 0, ob, 0);
    prefix_sums(y->v, n, 1, 0, y16, 0);
    prefix_sums(y->v, n, 1, 0, y8, 0);
    prefix_sums(x->v, n, 1, 1, rev, 0);
    double p = 1, sy = 0, sx = 0;
    for (int i = 0; i < n; i++)
        prod->v[i] = p *= f->v[i], sy += y->v[i], sx += x->v[i];
    s8->v[0] = ty_round(T_I8, sy), s16->v[0] = sx;
    run(TF, "scan_dtype", ARGS(P(x), P(y), P(f), P(ou), P(ob), P(y16), P(y8), P(rev), P(prod),
                               P(s8), P(s16), I(n)), NO_CONSTS);
}

static void scan_dtype_2d(int r, int warps)
{
    enum { R = 4, C = 2048 };
    begin("cumsum of u8 in i32 along rows of %d, in u16 along %d rows, num_warps=%d", C, r, warps);
    Buf *x = input("x", T_U8, (size_t)R * C, 0, 255);
    Buf *o1 = output("along rows", T_I32, (size_t)r * C, EXACT);
    Buf *o0 = output("along axis 0", T_U16, (size_t)r * C, EXACT);
    for (int i = 0; i < r; i++)
        prefix_sums(x->v + i * C, C, 1, 0, o1, i * C);
    for (int j = 0; j < C; j++)
        prefix_sums(x->v + j, r, C, 0, o0, j);
    run(TF, "scan_dtype_2d", ARGS(P(x), P(o1), P(o0), I(r)), CONSTS({"num_warps", warps}));
}

/* The index of the largest (smallest) of v[0], v[s], ... v[(n - 1) s]: NaN the extreme, ties
 * to the first (left) or the last. */
static int arg_ref(const double *v, int n, int s, int is_max, int left)
{
    int best = 0;
    for (int j = 1; j < n; j++) {
        double a = v[best * s], b = v[j * s];
        int better = (is_max ? b > a : b < a) || (isnan(b) && !isnan(a));
        int tie = b == a || (isnan(a) && isnan(b));
        if (better || (tie && !left))
            best = j;
    }
    return best;
}

static void arg_ties(Ty t, int r, int c)
{
    enum { R = 8, C = 64 };
    begin("argmax/argmin tie-breaks of %s ties, %dx%d of 8x64", TY[t].name, r, c);
    Buf *x = input("x", t, R * C, 0, t == T_F32 ? 4 : 3);
    Buf *o = output("indices, values", T_I32, 8 * R + 2 * C + 3, EXACT);
    double lo[R * C], hi[R * C];
    for (int i = 0; i < R * C; i++) {
        if (t == T_F32)
            x->v[i] = floor(x->v[i]) / 2; /* 0, 0.5, 1, 1.5 */
        int in = i / C < r && i % C < c;
        lo[i] = in ? x->v[i] : -100, hi[i] = in ? x->v[i] : 100;
    }
    double *v = o->v;
    for (int i = 0; i < R; i++) {
        v[i] = arg_ref(lo + i * C, C, 1, 1, 1), v[R + i] = arg_ref(lo + i * C, C, 1, 1, 0);
        v[2 * R + i] = arg_ref(hi + i * C, C, 1, 0, 1);
        v[3 * R + i] = arg_ref(hi + i * C, C, 1, 0, 0);
        v[4 * R + 2 * C + 3 + i] = v[R + i], v[5 * R + 2 * C + 3 + i] = v[3 * R + i];
        v[6 * R + 2 * C + 3 + i] = (int)lo[i * C + (int)v[R + i]];
        v[7 * R + 2 * C + 3 + i] = (int)hi[i * C + (int)v[3 * R + i]];
    }
    for (int j = 0; j < C; j++)
        v[4 * R + j] = arg_ref(lo + j, R, C, 1, 0), v[4 * R + C + j] = arg_ref(hi + j, R, C, 0, 1);
    v[4 * R + 2 * C] = arg_ref(lo, R * C, 1, 1, 0), v[4 * R + 2 * C + 1] = arg_ref(hi, R * C, 1, 0, 0);
    v[4 * R + 2 * C + 2] = arg_ref(lo, R * C, 1, 1, 1);
    run(TF, t == T_F32 ? "arg_ties_f32" : "arg_ties", ARGS(P(x), P(o), I(r), I(c)), NO_CONSTS);
}

static void arg_nan(int n, int nans, int warps)
{
    enum { N = 1024 };
    begin("argmax/argmin along %d of %d, tied extremes and NaNs: %d, num_warps=%d", n, N, nans,
          warps);
    Buf *x = input("x", T_F32, N, -1, 1), *o = output("indices", T_I32, 4, EXACT);
    for (int k = 0; k < 3; k++) /* tied maxima and minima */
        x->v[rnd_int(0, n - 1)] = 2, x->v[rnd_int(0, n - 1)] = -2;
    for (int k = 0; k < nans; k++)
        x->v[rnd_int(0, n - 1)] = NAN;
    double v[N], w[N];
    for (int i = 0; i < N; i++)
        v[i] = i < n ? x->v[i] : -INFINITY, w[i] = i < n ? x->v[i] : INFINITY;
    o->v[0] = arg_ref(v, N, 1, 1, 1), o->v[1] = arg_ref(v, N, 1, 1, 0);
    o->v[2] = arg_ref(w, N, 1, 0, 1), o->v[3] = arg_ref(w, N, 1, 0, 0);
    run(TF, "arg_nan", ARGS(P(x), P(o), I(n)), CONSTS({"num_warps", warps}));
}

/* c[i, j] = sum_k a(i, k) b(k, j) with its summation bound, a and b as functions of indices */
static void dot_ref(Buf *c, int M, int N, int K, const double *a, const double *b)
{
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0, abs_sum = 0;
            for (int k = 0; k < K; k++)
                s += a[i * K + k] * b[k * N + j], abs_sum += fabs(a[i * K + k] * b[k * N + j]);
            c->v[i * N + j] = s;
            sum_bound(c, (size_t)i * N + j, abs_sum, (size_t)K);
        }
}

static void cats(int n, int warps)
{
    enum { R = 16, K = 16, N = 16 };
    begin("cat: 1-D, 2-D into sums and dots, rank 3 and 4, pointers; n=%d num_warps=%d", n, warps);
    Buf *a = input("a", T_F16, 2 * R * K, -1, 1), *b = input("b", T_F16, R * K, -1, 1);
    Buf *w = input("w", T_F16, 2 * K * N, -1, 1), *x = input("x", T_I32, 128, -1000, 1000);
    Buf *o1 = output("1-D", T_I32, 64, EXACT), *o2 = output("2-D", T_F16, 2 * R * K, EXACT);
    Buf *rows = output("row sums", T_F32, 2 * R, TOL_F32);
    Buf *cols = output("column sums", T_F32, K, TOL_F32);
    Buf *d1 = output("cat @ w", T_F32, 2 * R * N, TOL_F32);
    Buf *d2 = output("a @ cat", T_F32, R * N, TOL_F32);
    Buf *o3 = output("rank 3", T_I32, 128, EXACT), *o4 = output("rank 4", T_I32, 128, EXACT);
    Buf *op = output("pointers", T_I32, 16, EXACT);
    for (int i = 0; i < 32; i++)
        o1->v[i] = i < n ? x->v[i] : -1, o1->v[32 + i] = i < n ? x->v[32 + i] : -2;
    for (int i = 0; i < R * K; i++)
        o2->v[i] = a->v[i], o2->v[R * K + i] = b->v[i];
    for (int i = 0; i < 2 * R; i++) {
        double s = 0, abs_sum = 0;
        for (int k = 0; k < K; k++)
            s += o2->v[i * K + k], abs_sum += fabs(o2->v[i * K + k]);
        rows->v[i] = s;
        sum_bound(rows, i, abs_sum, K);
    }
    for (int k = 0; k < K; k++) {
        double s = 0, abs_sum = 0;
        for (int i = 0; i < 2 * R; i++)
            s += o2->v[i * K + k], abs_sum += fabs(o2->v[i * K + k]);
        cols->v[k] = s;
        sum_bound(cols, k, abs_sum, 2 * R);
    }
    dot_ref(d1, 2 * R, N, K, o2->v, w->v);
    dot_ref(d2, R, N, 2 * K, a->v, w->v);
    for (int i = 0; i < 128; i++)
        o3->v[i] = o4->v[i] = x->v[i];
    for (int j = 0; j < 8; j++)
        op->v[j] = x->v[3 * j], op->v[8 + j] = x->v[100 + j];
    run(TF, "cats", ARGS(P(a), P(b), P(w), P(x), P(o1), P(o2), P(rows), P(cols), P(d1), P(d2),
                         P(o3), P(o4), P(op), I(n)), CONSTS({"num_warps", warps}));
}

static void fp8_const_arg(int n)
{
    begin("float constants to f8e4m3 and f8e5m2 helper parameters n=%d", n);
    Buf *x = input("x", T_F32, 64, -2, 2);
    Buf *o4 = output("0.3 as f8e4m3", T_F32, n, EXACT), *o5 = output("0.1 as f8e5m2", T_F32, n, EXACT);
    Buf *sat = output("1000.0 as f8e4m3", T_F32, n, EXACT), *diff = output("diff", T_F32, n, EXACT);
    for (int i = 0; i < n; i++) { /* the fp8 values: 1.25 * 2^-2, 1.5 * 2^-4, the largest */
        o4->v[i] = (float)(x->v[i] * 0.3125), o5->v[i] = (float)(x->v[i] * 0.09375);
        sat->v[i] = (float)(x->v[i] * 448), diff->v[i] = 0;
    }
    run(TF, "fp8_const_arg", ARGS(P(x), P(o4), P(o5), P(sat), P(diff), I(n)), NO_CONSTS);
}

/* cast, view, max_constancy and device_print, Triton's spellings of as/bitcast, reshape, a
 * hint and print */
static void spellings(int n)
{
    begin("cast, view, max_constancy, device_print, n=%d", n);
    Buf *x = input("x", T_F32, 64, -100, 100), *y = input("y", T_I32, 64, -1000, 1000);
    Buf *h = output("cast f16", T_F16, n, EXACT), *bits = output("cast u32 bitcast", T_U32, n, EXACT);
    Buf *ints = output("cast i64", T_I32, n, EXACT), *back = output("view", T_F32, n, EXACT);
    for (int i = 0; i < n; i++) {
        float f = (float)x->v[i];
        uint32_t u;
        memcpy(&u, &f, 4);
        h->v[i] = ty_round(T_F16, x->v[i]), bits->v[i] = u;
        ints->v[i] = y->v[i] + 3, back->v[i] = x->v[i];
    }
    run(TF, "spellings", ARGS(P(x), P(y), P(h), P(bits), P(ints), P(back), I(n)), NO_CONSTS);
}

void t_triton_forms(void)
{
    scan_dtype(128);
    spellings(64), spellings(37);
    scan_dtype(77);
    scan_dtype(1);
    scan_dtype_2d(4, 4);
    scan_dtype_2d(3, 8);
    for (int t = 0; t < 2; t++) {
        arg_ties(t ? T_F32 : T_I32, 8, 64);
        arg_ties(t ? T_F32 : T_I32, 5, 37);
        arg_ties(t ? T_F32 : T_I32, 1, 1);
    }
    arg_nan(1024, 0, 4);
    arg_nan(1000, 3, 4);
    arg_nan(333, 1, 8);
    arg_nan(1, 0, 1);
    cats(29, 4);
    cats(32, 1);
    cats(1, 8);
    fp8_const_arg(64);
    fp8_const_arg(45);
}
