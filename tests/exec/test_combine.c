/* test_combine.c: the combine group of the execution tests (tests/exec/combine.tile): reduce
 * and associative_scan with helpers as combine functions along each axis, in reverse, over
 * every element and with keep_dims, at odd sizes (masked), against C references. The combine
 * `last_nonzero` is associative but not commutative, so a result in the wrong operand order
 * shows; integer results are exact, f32 sums within the summation bound. */
#include <math.h>
#include <stdlib.h>
#include "test_exec.h"

#define CMB "tests/exec/combine.tile"

static double last_nonzero(double a, double b) { return b != 0 ? b : a; }

static void combine2d(int rows, int cols)
{
    enum { R = 8, C = 16 };
    begin("reduce and associative_scan, i32 [%d, %d] of [%d, %d]", rows, cols, R, C);
    size_t n = (size_t)rows * cols;
    Buf *x = input("x", T_I32, n, -3, 3);
    Buf *red0 = output("reduce(add, axis 0)", T_I32, cols, EXACT);
    Buf *red1 = output("reduce(last_nonzero, axis 1)", T_I32, rows, EXACT);
    Buf *scan0 = output("scan(add, axis 0)", T_I32, n, EXACT);
    Buf *scan1 = output("scan(last_nonzero, axis 1)", T_I32, n, EXACT);
    Buf *rscan1 = output("scan(last_nonzero, axis 1, reverse)", T_I32, n, EXACT);
    Buf *whole = output("reduce(max_abs)", T_I32, 1, EXACT);
    Buf *keep = output("reduce(add, axis 1, keep_dims)", T_I32, rows, EXACT);
    double *v = x->v, best = 0;
    for (int c = 0; c < cols; c++) {
        double s = 0;
        for (int r = 0; r < rows; r++)
            s += v[r * cols + c], scan0->v[r * cols + c] = s;
        red0->v[c] = s;
    }
    for (int r = 0; r < rows; r++) {
        double acc = 0, sum = 0, from_end = 0;
        for (int c = 0; c < cols; c++)
            acc = last_nonzero(acc, v[r * cols + c]), scan1->v[r * cols + c] = acc,
            sum += v[r * cols + c];
        for (int c = cols - 1; c >= 0; c--) /* x[c] then x[c+1] ...: the rightmost nonzero */
            from_end = from_end != 0 ? from_end : v[r * cols + c], rscan1->v[r * cols + c] = from_end;
        red1->v[r] = acc, keep->v[r] = sum;
    }
    /* max_abs keeps the first of equal magnitudes in the tree's order: any of them is the
     * largest magnitude; the tie between +m and -m is settled by the row-major first one */
    for (size_t i = 0; i < n; i++)
        if (fabs(v[i]) > fabs(best))
            best = v[i];
    whole->v[0] = best;
    run(CMB, "combine2d", ARGS(P(x), P(red0), P(red1), P(scan0), P(scan1), P(rscan1), P(whole),
                               P(keep), I(rows), I(cols)), NO_CONSTS);
}

static void combine_f32(int rows, int cols)
{
    begin("reduce and associative_scan of f32 sums, [%d, %d] of [4, 64]", rows, cols);
    size_t n = (size_t)rows * cols;
    Buf *x = input("x", T_F32, n, -1, 1);
    Buf *red = output("reduce(add_f)", T_F32, rows, TOL_F32), *scan = output("scan(add_f)", T_F32, n, TOL_F32);
    for (int r = 0; r < rows; r++) {
        double s = 0, abs_sum = 0;
        for (int c = 0; c < cols; c++) {
            s += x->v[r * cols + c], abs_sum += fabs(x->v[r * cols + c]);
            scan->v[r * cols + c] = s;
            sum_bound(scan, (size_t)r * cols + c, abs_sum, (size_t)c + 1);
        }
        red->v[r] = s;
        sum_bound(red, (size_t)r, abs_sum, (size_t)cols);
    }
    run(CMB, "combine_f32", ARGS(P(x), P(red), P(scan), I(rows), I(cols)), NO_CONSTS);
}

static void combine3d(void)
{
    begin("associative_scan along the middle axis, reduce along the first, i32 [2, 4, 8]");
    Buf *x = input("x", T_I32, 64, -2, 2);
    Buf *scan = output("scan(add, axis 1)", T_I32, 64, EXACT), *red = output("reduce(last_nonzero, axis 0)", T_I32, 32, EXACT);
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 8; k++) {
            double s = 0;
            for (int j = 0; j < 4; j++)
                s += x->v[i * 32 + j * 8 + k], scan->v[i * 32 + j * 8 + k] = s;
        }
    for (int j = 0; j < 32; j++)
        red->v[j] = last_nonzero(x->v[j], x->v[32 + j]);
    run(CMB, "combine3d", ARGS(P(x), P(scan), P(red)), NO_CONSTS);
}

static void combine_widths(int warps)
{
    begin("reduce(max_abs) of [64, 32] beside a [64, 8] sum, num_warps=%d", warps);
    Buf *x = input("x", T_F32, 64 * 32, -1, 1), *y = input("y", T_I32, 64 * 8, -100, 100);
    Buf *o = output("reduce(max_abs)", T_F32, 64, EXACT), *o2 = output("sum", T_I32, 64, EXACT);
    for (int r = 0; r < 64; r++) {
        double best = 0, s = 0;
        for (int c = 0; c < 32; c++)
            if (fabs(x->v[r * 32 + c]) > fabs(best))
                best = x->v[r * 32 + c];
        for (int c = 0; c < 8; c++)
            s += y->v[r * 8 + c];
        o->v[r] = best, o2->v[r] = s;
    }
    run(CMB, "combine_widths", ARGS(P(x), P(y), P(o), P(o2)), CONSTS({"num_warps", warps}));
}

static void combine_back(int warps)
{
    begin("x - reduce(x, 0, max_abs, keep_dims) of [128, 32], num_warps=%d", warps);
    Buf *x = input("x", T_F32, 128 * 32, -1, 1), *o = output("o", T_F32, 128 * 32, EXACT);
    for (int c = 0; c < 32; c++) {
        double best = 0;
        for (int r = 0; r < 128; r++)
            if (fabs(x->v[r * 32 + c]) > fabs(best))
                best = x->v[r * 32 + c];
        for (int r = 0; r < 128; r++)
            o->v[r * 32 + c] = (float)(x->v[r * 32 + c] - best);
    }
    run(CMB, "combine_back", ARGS(P(x), P(o)), CONSTS({"num_warps", warps}));
}

void t_combine(void)
{
    combine2d(8, 16);
    combine2d(5, 11);
    combine2d(1, 1);
    combine_f32(4, 64);
    combine_f32(3, 37);
    combine3d();
    combine_widths(1);
    combine_widths(4);
    combine_back(1);
    combine_back(8);
}
