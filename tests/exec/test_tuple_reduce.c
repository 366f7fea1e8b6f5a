/* test_tuple_reduce.c: the tuple_reduce group of the execution tests (tests/exec/
 * tuple_reduce.tile): reduce and associative_scan over tuples of tiles against C references:
 * Welford mean and variance of f16 and f32 rows (a two-pass float64 reference), argmax with
 * the last index among ties (over a whole tile with keep_dims too), a (min, argmin, count)
 * triple of mixed types, a helper's results as the tuple, linear recurrences forward and
 * reversed and segmented sums as scans of pairs, at odd sizes (masked) and 1 to 4 warps. */
#include <math.h>
#include "test_exec.h"

#define TUP "tests/exec/tuple_reduce.tile"

static void welford(Ty t, int rows, int cols, int warps)
{
    int f16 = t == T_F16;
    begin("Welford mean and variance of %s rows, [%d, %d], num_warps=%d", TY[t].name, rows, cols, warps);
    Buf *x = input("x", t, (size_t)rows * cols, 1, 3);
    Buf *mean = output("mean", T_F32, rows, TOL_F32), *var = output("var", T_F32, rows, 1e-4);
    for (int r = 0; r < rows; r++) {
        const double *v = x->v + (size_t)r * cols;
        double s = 0, q = 0;
        for (int c = 0; c < cols; c++)
            s += v[c];
        s /= cols;
        for (int c = 0; c < cols; c++)
            q += (v[c] - s) * (v[c] - s);
        mean->v[r] = s, var->v[r] = q / cols;
    }
    run(TUP, f16 ? "welford_f16" : "welford_f32",
        ARGS(P(x), P(mean), P(var), I(rows), I(cols)), CONSTS({"num_warps", warps}));
}

static void argmax_ties(int rows, int cols, int warps)
{
    begin("argmax with the last index among ties, i32 [%d, %d] of [16, 32], num_warps=%d", rows,
          cols, warps);
    Buf *x = input("x", T_I32, (size_t)rows * cols, -2, 2);
    Buf *vmax = output("max along axis 0", T_I32, cols, EXACT);
    Buf *imax = output("last row of it", T_I32, cols, EXACT);
    Buf *rmax = output("max along axis 1 (keep_dims)", T_I32, rows, EXACT);
    Buf *rimax = output("last column of it", T_I32, rows, EXACT);
    for (int c = 0; c < cols; c++) {
        vmax->v[c] = -1e9;
        for (int r = 0; r < rows; r++)
            if (x->v[r * cols + c] >= vmax->v[c])
                vmax->v[c] = x->v[r * cols + c], imax->v[c] = r;
    }
    for (int r = 0; r < rows; r++) {
        rmax->v[r] = -1e9;
        for (int c = 0; c < cols; c++)
            if (x->v[r * cols + c] >= rmax->v[r])
                rmax->v[r] = x->v[r * cols + c], rimax->v[r] = c;
    }
    run(TUP, "argmax_ties", ARGS(P(x), P(vmax), P(imax), P(rmax), P(rimax), I(rows), I(cols)),
        CONSTS({"num_warps", warps}));
}

/* The minimum of v[0..n) at stride `step`, its first position, how many times it occurs. */
static void min_count(const double *v, int n, int step, double *mv, double *mi, double *mn,
                      const int *pos)
{
    *mv = INFINITY, *mn = 0;
    for (int i = 0; i < n; i++) {
        double e = v[i * step];
        if (e < *mv)
            *mv = e, *mi = pos[i], *mn = 1;
        else if (e == *mv)
            *mn += 1;
    }
}

static void min_triple(int d1, int d2, int warps)
{
    enum { D1 = 4, D2 = 8 };
    begin("(min, argmin, count) of f32 [2, %d, %d] of [2, %d, %d], num_warps=%d", d1, d2, D1, D2, warps);
    int n = 2 * d1 * d2, pos[2 * D1 * D2];
    Buf *x = input("x", T_F32, (size_t)n, -2, 2);
    for (int i = 0; i < n; i++) /* few distinct values: ties */
        x->v[i] = floor(x->v[i]);
    Buf *vmin = output("min", T_F32, 1, EXACT), *imin = output("argmin", T_I32, 1, EXACT);
    Buf *nmin = output("count", T_I64, 1, EXACT);
    Buf *kv = output("min along axis 2", T_F32, (size_t)2 * d1, EXACT);
    Buf *ki = output("argmin along axis 2", T_I32, (size_t)2 * d1, EXACT);
    Buf *kn = output("count along axis 2", T_I64, (size_t)2 * d1, EXACT);
    for (int i = 0; i < n; i++)
        pos[i] = i;
    min_count(x->v, n, 1, vmin->v, imin->v, nmin->v, pos);
    for (int i = 0; i < d2; i++)
        pos[i] = i;
    for (int r = 0; r < 2 * d1; r++)
        min_count(x->v + r * d2, d2, 1, &kv->v[r], &ki->v[r], &kn->v[r], pos);
    run(TUP, "min_triple", ARGS(P(x), P(vmin), P(imin), P(nmin), P(kv), P(ki), P(kn), I(d1), I(d2)),
        CONSTS({"num_warps", warps}));
}

static void one_member(int n)
{
    begin("reduce and associative_scan of one-member tuples, i32 [%d] of [64]", n);
    Buf *x = input("x", T_I32, (size_t)n, -100, 100);
    Buf *s = output("reduce((x,), add)", T_I32, 1, EXACT), *cs = output("scan((x,), add)", T_I32, (size_t)n, EXACT);
    double acc = 0;
    for (int i = 0; i < n; i++)
        acc += x->v[i], cs->v[i] = acc;
    s->v[0] = acc;
    run(TUP, "one_member", ARGS(P(x), P(s), P(cs), I(n)), NO_CONSTS);
}

static void whole_keep(int rows, int cols, int warps)
{
    begin("argmax over every element with keep_dims, sums of a helper's (x, x * x), i32 [%d, %d] "
          "of [8, 16], num_warps=%d", rows, cols, warps);
    Buf *x = input("x", T_I32, (size_t)rows * cols, -3, 3);
    Buf *vmax = output("max", T_I32, 1, EXACT), *imax = output("last flat index of it", T_I32, 1, EXACT);
    Buf *s1 = output("sum", T_I32, rows, EXACT), *s2 = output("sum of squares", T_I32, rows, EXACT);
    vmax->v[0] = -1e9;
    for (int r = 0; r < rows; r++) {
        s1->v[r] = s2->v[r] = 0;
        for (int c = 0; c < cols; c++) {
            double e = x->v[r * cols + c];
            if (e >= vmax->v[0])
                vmax->v[0] = e, imax->v[0] = r * cols + c;
            s1->v[r] += e, s2->v[r] += e * e;
        }
    }
    run(TUP, "whole_keep", ARGS(P(x), P(vmax), P(imax), P(s1), P(s2), I(rows), I(cols)),
        CONSTS({"num_warps", warps}));
}

static void recurrence(int rows, int t, int warps)
{
    begin("h[t] = a[t] h[t-1] + b[t] as a scan of (a, b), forward and reversed, f32 [%d, %d] of "
          "[2, 256], num_warps=%d", rows, t, warps);
    size_t n = (size_t)rows * t;
    Buf *a = input("a", T_F32, n, -0.95, 0.95), *b = input("b", T_F32, n, -1, 1);
    Buf *h = output("h", T_F32, n, TOL_F32), *hr = output("h reversed", T_F32, n, TOL_F32);
    for (int r = 0; r < rows; r++) {
        const double *av = a->v + (size_t)r * t, *bv = b->v + (size_t)r * t;
        double acc = 0;
        for (int i = 0; i < t; i++)
            acc = av[i] * acc + bv[i], h->v[(size_t)r * t + i] = acc;
        acc = 0;
        for (int i = t - 1; i >= 0; i--)
            acc = av[i] * acc + bv[i], hr->v[(size_t)r * t + i] = acc;
    }
    run(TUP, "recurrence", ARGS(P(a), P(b), P(h), P(hr), I(rows), I(t)), CONSTS({"num_warps", warps}));
}

/* The segmented running sums of v[0..n) at stride `step`: a nonzero flag starts anew. */
static void segmented(const double *f, const double *v, double *o, int n, int step)
{
    double acc = 0;
    for (int i = 0; i < n; i++)
        acc = (f[i * step] != 0 ? 0 : acc) + v[i * step], o[i * step] = acc;
}

static void segments(int n, int warps)
{
    begin("segmented sums as a scan of (bool, i32) along the middle axis of [2, 8, 4] and along "
          "[%d] of [512], num_warps=%d", n, warps);
    Buf *f = input("f", T_I32, 64, 0, 1), *v = input("v", T_I32, 64, -50, 50);
    Buf *f1 = input("f1", T_I32, (size_t)n, 0, 1), *v1 = input("v1", T_I32, (size_t)n, -50, 50);
    for (int i = 0; i < n; i++) /* segments of about 8 */
        f1->v[i] = rnd_int(0, 7) == 0;
    Buf *o = output("o", T_I32, 64, EXACT), *o1 = output("o1", T_I32, (size_t)n, EXACT);
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 4; k++)
            segmented(f->v + i * 32 + k, v->v + i * 32 + k, o->v + i * 32 + k, 8, 4);
    segmented(f1->v, v1->v, o1->v, n, 1);
    run(TUP, "segments", ARGS(P(f), P(v), P(o), P(f1), P(v1), P(o1), I(n)), CONSTS({"num_warps", warps}));
}

void t_tuple_reduce(void)
{
    welford(T_F32, 4, 128, 4);
    welford(T_F32, 7, 101, 1);
    welford(T_F32, 5, 3, 2);
    welford(T_F16, 3, 255, 4);
    welford(T_F16, 2, 1, 1);
    argmax_ties(16, 32, 4);
    argmax_ties(11, 29, 1);
    argmax_ties(1, 1, 2);
    min_triple(4, 8, 4);
    min_triple(3, 5, 1);
    min_triple(1, 1, 2);
    one_member(64);
    one_member(37);
    whole_keep(8, 16, 4);
    whole_keep(5, 13, 1);
    recurrence(2, 256, 4);
    recurrence(5, 201, 1);
    recurrence(3, 1, 2);
    segments(512, 4);
    segments(333, 1);
    segments(1, 2);
}
