/* test_features.c: the language-feature groups of the execution tests: one function per group,
 * each running the kernels of one tests/exec/NAME.tile file on several sizes (odd ones included,
 * so masks matter) against float64 / exact integer references computed here. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test_exec.h"

#define EW "tests/exec/elementwise.tile"

static const int SIZES[] = {1, 37, 1000, 4097};
enum { NSIZES = 4 };

/* ---- elementwise.tile ---- */

void t_elementwise(void)
{
    for (int s = 0; s < NSIZES; s++) {
        int n = SIZES[s];
        begin("arith_f32 n=%d", n);
        Buf *x = input("x", T_F32, n, -2, 2), *y = input("y", T_F32, n, -2, 2);
        Buf *o = output("o", T_F32, n, TOL_F32);
        for (int i = 0; i < n; i++) {
            double a = x->v[i], b = y->v[i];
            o->v[i] = (a + b) * a - b / (fabs(b) + 1) + (a * b + 0.5) - fmin(a, b) * fmax(a, b) +
                      a + fmod(a, b);
        }
        run(EW, "arith_f32", ARGS(P(x), P(y), P(o), I(n)), NO_CONSTS);

        begin("where_inf n=%d", n);
        x = input("x", T_F32, n, -1, 1), y = input("y", T_F32, n, -1, 1);
        o = output("o", T_F32, n, TOL_F32);
        Buf *oi = output("o_inf", T_F32, n, TOL_F32);
        for (int i = 0; i < n; i++) {
            double a = x->v[i], b = y->v[i];
            o->v[i] = (a > b ? a : 2 * b) + (a > 0 ? 1 : -1);
            oi->v[i] = a > 0.5 ? INFINITY : a < -0.5 ? -INFINITY : b > 0.9 ? NAN : a;
        }
        run(EW, "where_inf", ARGS(P(x), P(y), P(o), P(oi), I(n)), NO_CONSTS);
    }
}

/* the math kernels' FN */
static const char *const MATH_NAMES[] = {"exp", "exp2", "log", "log2", "sqrt", "rsqrt", "abs",
                                         "sin", "cos", "floor", "ceil", "trunc", "tanh", "erf",
                                         "sigmoid", "clamp"};

static double math_ref(int fn, double a)
{
    switch (fn) {
    case 0: return exp(a);
    case 1: return exp2(a);
    case 2: return log(a);
    case 3: return log2(a);
    case 4: return sqrt(a);
    case 5: return 1 / sqrt(a);
    case 6: return fabs(a);
    case 7: return sin(a);
    case 8: return cos(a);
    case 9: return floor(a);
    case 10: return ceil(a);
    case 11: return trunc(a);
    case 12: return tanh(a);
    case 13: return erf(a);
    case 14: return 1 / (1 + exp(-a));
    default: return a < -1 ? -1 : a > 2 ? 2 : a;
    }
}

/* tanh and erf within 4 ulp of the C library over [-9, 9] and at tiny values, zeros,
 * infinities and NaN (the AMD path computes them itself: target_math_f32.c); pow's special
 * cases as C's, finite results within 8 ulp. */
static void t_math_ulp(void)
{
    static const double specials[] = {0.0, -0.0, 1e-30, -1e-30, 3e-8, INFINITY, -INFINITY, NAN};
    enum { GRID = 4001, NS = sizeof specials / sizeof specials[0], N = GRID + NS };
    for (int fn = 12; fn <= 13; fn++) {
        begin("math_f32 %s within 4 ulp, n=%d", fn == 12 ? "tanh" : "erf", N);
        Buf *x = input("x", T_F32, N, 0, 0), *o = output("o", T_F32, N, TOL_F32);
        for (int i = 0; i < N; i++) {
            x->v[i] = i < GRID ? (double)(float)(-9.0 + 18.0 * i / (GRID - 1)) : specials[i - GRID];
            o->v[i] = (double)(float)math_ref(fn, x->v[i]);
            ulp_bound(o, (size_t)i, 4);
        }
        run(EW, "math_f32", ARGS(P(x), P(o), I(N)), CONSTS({"FN", fn}));
    }
    static const double px[] = {-0.0, -0.0, 0.0, -2, -2, -1, 1, NAN, 0.5, 2, -INFINITY,
                                -INFINITY, INFINITY, -8, 16, -3, 2, -1, 0.25, -INFINITY,
                                -INFINITY};
    static const double py[] = {3, -3, -1, 3, 0.5, INFINITY, NAN, 0, INFINITY, -INFINITY, 3,
                                2, -1, 1.0 / 3, 0.25, 2, 0.5, -INFINITY, -2.5, 0.5, -0.5};
    enum { NP = sizeof px / sizeof px[0] };
    begin("pow_f32 special cases as C's, n=%d", NP);
    Buf *x = input("x", T_F32, NP, 0, 0), *y = input("y", T_F32, NP, 0, 0);
    Buf *o = output("o", T_F32, NP, TOL_F32), *o3 = output("o3", T_F32, NP, TOL_F32);
    Buf *oi = output("oi", T_F32, NP, TOL_F32);
    for (int i = 0; i < NP; i++) {
        x->v[i] = px[i], y->v[i] = (double)(float)py[i];
        o->v[i] = (double)(float)pow(x->v[i], y->v[i]);
        o3->v[i] = (double)(float)pow((double)(float)(x->v[i] - 2.0), 3);
        oi->v[i] = sqrt((double)(i % 7));
        ulp_bound(o, (size_t)i, 8);
        ulp_bound(o3, (size_t)i, 8);
    }
    run(EW, "pow_f32", ARGS(P(x), P(y), P(o), P(o3), P(oi), I(NP)), NO_CONSTS);
}

/* ---- f64 math: on AMD GPUs and sim-amd the kernel computes exp ... erf and pow itself
 * (target_math_f64.c, target_trig_f64.c); elsewhere they are the C library's ---- */

enum { MAX_POINTS = 60000 };
static struct { double x[MAX_POINTS], y[MAX_POINTS]; int n; } pts;

static void pts_add(double x, double y)
{
    if (pts.n < MAX_POINTS)
        pts.x[pts.n] = x, pts.y[pts.n++] = y;
}

/* n points evenly over [lo, hi] */
static void pts_grid(double lo, double hi, int n)
{
    for (int i = 0; i < n; i++)
        pts_add(lo + (hi - lo) * i / (n - 1), 0);
}

/* n points evenly over [log lo, log hi] (0 < lo < hi), with both signs when `signs` */
static void pts_log(double lo, double hi, int n, int signs)
{
    for (int i = 0; i < n; i++) {
        double v = exp(log(lo) + (log(hi) - log(lo)) * i / (n - 1));
        pts_add(signs && i % 2 ? -v : v, 0);
    }
}

static void pts_list(const double *v, int n)
{
    for (int i = 0; i < n; i++)
        pts_add(v[i], 0), pts_add(-v[i], 0);
}

/* the doubles nearest k pi/2 for k = 1..n, and their neighbours: where sin or cos is tiny */
static void pts_half_pi(int n)
{
    for (int k = 1; k <= n; k++) {
        double v = fma(k, 1.5707963267948966, k * 6.123233995736766e-17);
        pts_add(v, 0), pts_add(nextafter(v, 0), 0), pts_add(nextafter(v, INFINITY), 0);
    }
}

/* math_f64 FN over the points, each within `ulps` of the C library's */
static void check_f64(int fn, const char *name, double ulps)
{
    int n = pts.n;
    begin("math_f64 %s within %g ulp, n=%d", name, ulps, n);
    Buf *x = input("x", T_F64, (size_t)n, 0, 0), *o = output("o", T_F64, (size_t)n, 1e-12);
    for (int i = 0; i < n; i++) {
        x->v[i] = pts.x[i];
        o->v[i] = math_ref(fn, pts.x[i]);
        ulp_bound(o, (size_t)i, ulps);
    }
    run(EW, "math_f64", ARGS(P(x), P(o), I(n)), CONSTS({"FN", fn}));
    pts.n = 0;
}

static void t_exp_log_f64(void)
{
    static const double exp_special[] = {0, 5e-324, 1e-17, INFINITY, NAN, 1e300, 710, 746,
                                         709.782712893384, 745.1332191019411,
                                         745.1332191019412, 708.3964185322641};
    for (int fn = 0; fn <= 1; fn++) {
        double top = fn ? 1024 : 709.782712893384, bottom = fn ? -1074 : -745.1332191019411;
        pts_grid(fn ? -1080 : -750, fn ? 1025 : 710, 20001);
        pts_grid(bottom, bottom + 60, 6001); /* subnormal results */
        pts_grid(top - 1, top, 2001);        /* the largest */
        pts_log(1e-300, 1, 2001, 1);
        pts_list(exp_special, sizeof exp_special / sizeof exp_special[0]);
        check_f64(fn, fn ? "exp2" : "exp", 2);
    }
    static const double log_special[] = {0, 1, 2, 0.5, 5e-324, 2.2250738585072014e-308,
                                         2.2250738585072009e-308, 1.7976931348623157e308,
                                         1 + 0x1p-52, 1 - 0x1p-53, INFINITY, NAN};
    for (int fn = 2; fn <= 3; fn++) {
        pts_log(5e-324, 1.7976931348623157e308, 20001, 0);
        pts_grid(0.99, 1.01, 8001);
        pts_grid(0.5, 2, 8001);
        pts_log(1 + 1e-15, 1 + 1e-6, 2001, 0);
        pts_list(log_special, sizeof log_special / sizeof log_special[0]);
        check_f64(fn, fn == 3 ? "log2" : "log", 2);
    }
}

static void t_trig_f64(void)
{
    static const double special[] = {0, 5e-324, 1e-8, 0.5, 1e22, 1e300, 0x1p1000, 0x1p30,
                                     0x1p30 - 0x1p-22, 0x1.b7a9cc0ca1c8bp+994,
                                     1.7976931348623157e308, INFINITY, NAN};
    for (int fn = 7; fn <= 8; fn++) {
        pts_grid(-10, 10, 40001);
        pts_half_pi(2000);
        pts_grid(0x1p30 - 200, 0x1p30 + 200, 2001); /* where the reductions meet */
        pts_log(1e-300, 1.7976931348623157e308, 8001, 1);
        pts_list(special, sizeof special / sizeof special[0]);
        check_f64(fn, fn == 7 ? "sin" : "cos", 2);
    }
    /* the double closest to a multiple of pi/2 (Kahan-McDonald): cos is -0x1.14ae72e6ba22fp-61
     * correctly rounded (mpmath, 500 digits); glibc 2.36's is 8 ulp off there */
    begin("math_f64 cos(0x1.6ac5b262ca1ffp+849) within 8 ulp");
    Buf *x = input("x", T_F64, 1, 0, 0), *o = output("o", T_F64, 1, 1e-12);
    x->v[0] = 0x1.6ac5b262ca1ffp+849, o->v[0] = -0x1.14ae72e6ba22fp-61;
    ulp_bound(o, 0, 8);
    run(EW, "math_f64", ARGS(P(x), P(o), I(1)), CONSTS({"FN", 8}));
}

static void t_tanh_erf_f64(void)
{
    static const double special[] = {0, 5e-324, 1e-300, 1e-20, 1e-8, 19, 22, 40, 1e300,
                                     INFINITY, NAN};
    for (int fn = 12; fn <= 13; fn++) {
        pts_grid(-20, 20, 40001);
        pts_grid(0.5, 0.6, 2001);   /* tanh's two forms meet at 0.55 */
        pts_grid(0.95, 1.05, 2001); /* erf's at 1 */
        pts_grid(5.8, 6.2, 2001);   /* erf becomes 1 */
        pts_log(1e-300, 1, 2001, 1);
        pts_list(special, sizeof special / sizeof special[0]);
        check_f64(fn, fn == 12 ? "tanh" : "erf", 3);
    }
}

/* pow_f64 over the point pairs: C's special cases, finite results within 2 ulp */
static void t_pow_f64(void)
{
    static const double sx[] = {0, -0.0, 0, -0.0, -0.0, 0, -2, -2, -2, -1, -1, 1, 1, NAN,
                                NAN, 0.5, 2, 2, -INFINITY, -INFINITY, -INFINITY, -INFINITY,
                                INFINITY, INFINITY, -8, -8, 16, -3, -1, 0.25, 5e-324, 10,
                                10, 1.7976931348623157e308, -0.5, -0.5, 2, 0.5};
    static const double sy[] = {3, 3, -3, -3, 0.5, -INFINITY, 3, 0.5, -INFINITY, INFINITY,
                                -INFINITY, NAN, INFINITY, 0, 1, INFINITY, -INFINITY, NAN, 3,
                                2, 0.5, -0.5, -1, 0, 1.0 / 3, -3, 0.25, 2, 1e300, -2.5, 0.5,
                                308, 400, -1, 1075, 1074, -1074.5, 1022.5};
    _Static_assert(sizeof sx == sizeof sy, "one y per x");
    for (size_t i = 0; i < sizeof sx / sizeof sx[0]; i++)
        pts_add(sx[i], sy[i]);
    for (int i = 0; i < 20000; i++) /* 1e-5 .. 1e5 to the -50 .. 50 */
        pts_add(exp(-11.5 + 23 * rnd_unit()), -50 + 100 * rnd_unit());
    for (int i = 0; i < 5000; i++) /* a negative base, an integral exponent */
        pts_add(-exp(-11.5 + 23 * rnd_unit()), (double)rnd_int(-50, 50));
    for (int i = 0; i < 5000; i++) /* y log2 x up to about 720 */
        pts_add(0.999 + 0.002 * rnd_unit(), -5e5 + 1e6 * rnd_unit());
    int n = pts.n;
    begin("pow_f64 within 2 ulp and C's special cases, n=%d", n);
    Buf *x = input("x", T_F64, (size_t)n, 0, 0), *y = input("y", T_F64, (size_t)n, 0, 0);
    Buf *o = output("o", T_F64, (size_t)n, 1e-12);
    for (int i = 0; i < n; i++) {
        x->v[i] = pts.x[i], y->v[i] = pts.y[i];
        o->v[i] = pow(pts.x[i], pts.y[i]);
        ulp_bound(o, (size_t)i, 2);
    }
    run(EW, "pow_f64", ARGS(P(x), P(y), P(o), I(n)), NO_CONSTS);
    pts.n = 0;
}

/* every math_f64 function on a few random values; then the dense checks */
static void t_math_f64(void)
{
    for (int fn = 0; fn < 16; fn++) {
        int positive = fn >= 2 && fn <= 5;
        begin("math_f64 %s n=500", MATH_NAMES[fn]);
        Buf *x = input("x", T_F64, 500, positive ? 0.05 : -4, positive ? 8 : 4);
        Buf *o = output("o", T_F64, 500, 1e-14);
        for (int i = 0; i < 500; i++)
            o->v[i] = math_ref(fn, x->v[i]);
        run(EW, "math_f64", ARGS(P(x), P(o), I(500)), CONSTS({"FN", fn}));
    }
    t_exp_log_f64();
    t_trig_f64();
    t_tanh_erf_f64();
    t_pow_f64();
}

void t_math(void)
{
    for (int fn = 0; fn < 16; fn++)
        for (int f16 = 0; f16 < 2; f16++) {
            int n = f16 ? 333 : 1000;
            Ty t = f16 ? T_F16 : T_F32;
            int positive = fn >= 2 && fn <= 5;
            begin("math_%s %s n=%d", f16 ? "f16" : "f32", MATH_NAMES[fn], n);
            Buf *x = input("x", t, n, positive ? 0.05 : -4, positive ? 8 : 4);
            Buf *o = output("o", t, n, f16 ? TOL_F16 : TOL_F32);
            for (int i = 0; i < n; i++)
                o->v[i] = ty_round(t, math_ref(fn, x->v[i]));
            run(EW, f16 ? "math_f16" : "math_f32", ARGS(P(x), P(o), I(n)), CONSTS({"FN", fn}));
        }
    begin("mulhi_div n=1001");
    {
        int n = 1001;
        Buf *x = input("x", T_I32, n, -2147483648.0, 2147483647.0);
        Buf *y = input("y", T_U32, n, 0, 4294967295.0);
        Buf *f = input("f", T_F32, n, -100, 100);
        Buf *oi = output("o_i", T_I32, n, EXACT), *ou = output("o_u", T_U32, n, EXACT);
        Buf *g = output("g", T_F32, n, TOL_F32);
        for (int i = 0; i < n; i++) {
            uint64_t a = (uint32_t)(int32_t)x->v[i], b = (uint32_t)y->v[i];
            oi->v[i] = (int32_t)(uint32_t)((a * b) >> 32);
            ou->v[i] = (uint32_t)((b * 3000000000ull) >> 32);
            g->v[i] = (double)((float)f->v[i] / 3.0f) - (double)((float)i / 7.0f);
        }
        run(EW, "mulhi_div", ARGS(P(x), P(y), P(oi), P(ou), P(f), P(g), I(n)), NO_CONSTS);
    }
    begin("pow_f32 n=777");
    {
        int n = 777;
        Buf *x = input("x", T_F32, n, 0.1, 4), *y = input("y", T_F32, n, -3, 3);
        Buf *o = output("o", T_F32, n, TOL_F32), *o3 = output("o3", T_F32, n, TOL_F32);
        Buf *oi = output("oi", T_F32, n, TOL_F32);
        for (int i = 0; i < n; i++) {
            o->v[i] = pow(x->v[i], y->v[i]);
            o3->v[i] = pow((double)(float)(x->v[i] - 2.0), 3); /* a negative base, odd power */
            oi->v[i] = sqrt((double)(i % 7));
        }
        run(EW, "pow_f32", ARGS(P(x), P(y), P(o), P(o3), P(oi), I(n)), NO_CONSTS);
    }
    t_math_ulp();
    t_math_f64();
    begin("math_int sqrt n=100");
    Buf *x = input("x", T_I32, 100, 0, 10000);
    Buf *o = output("o", T_F32, 100, 1e-6);
    for (int i = 0; i < 100; i++)
        o->v[i] = sqrt(x->v[i]);
    run(EW, "math_int", ARGS(P(x), P(o), I(100)), NO_CONSTS);
}

static double cmp_bits(double a, double b, int logic)
{
    int r = (a < b) + (a <= b) * 2 + (a > b) * 4 + (a >= b) * 8 + (a == b) * 16 + (a != b) * 32;
    if (logic)
        r += ((a < b) && (b > 0)) * 64 + ((a < b) || (b > 0)) * 128 + (!(a < b)) * 256 +
             ((a < b) ^ (b > 0)) * 512;
    return r;
}

void t_compare(void)
{
    for (int s = 0; s < NSIZES; s++) {
        int n = SIZES[s];
        static const Ty types[] = {T_F32, T_I32, T_U32};
        static const char *const kernels[] = {"cmp_f32", "cmp_i32", "cmp_u32"};
        for (int k = 0; k < 3; k++) {
            begin("%s n=%d", kernels[k], n);
            Buf *x, *y;
            if (types[k] == T_U32) { /* values on both sides of 2^31 */
                x = input("x", T_U32, n, 0, 4294967295.0), y = input("y", T_U32, n, 0, 4294967295.0);
                for (int i = 0; i < n; i += 3)
                    y->v[i] = x->v[i];
            } else {
                x = input("x", T_I32, n, -3, 3), y = input("y", T_I32, n, -3, 3);
                x->t = y->t = types[k]; /* small integers: exact in f32, many ties */
            }
            Buf *o = output("o", T_I32, n, EXACT);
            for (int i = 0; i < n; i++)
                o->v[i] = cmp_bits(x->v[i], y->v[i], types[k] != T_U32);
            run(EW, kernels[k], ARGS(P(x), P(y), P(o), I(n)), NO_CONSTS);
        }
    }
}

void t_intops(void)
{
    for (int s = 0; s < NSIZES; s++) {
        int n = SIZES[s];
        begin("intops_i32 n=%d", n);
        Buf *x = input("x", T_I32, n, -1000, 1000), *y = input("y", T_I32, n, -9, 9);
        Buf *od = output("o_div", T_I32, n, EXACT), *orm = output("o_rem", T_I32, n, EXACT);
        Buf *ob = output("o_bits", T_I32, n, EXACT);
        for (int i = 0; i < n; i++) {
            if (y->v[i] == 0)
                y->v[i] = -7;
            int32_t a = (int32_t)x->v[i], b = (int32_t)y->v[i];
            od->v[i] = a / b, orm->v[i] = a % b;
            ob->v[i] = (int32_t)((uint32_t)((a & b) ^ (a | 3)) + ((uint32_t)a << 2) +
                                 (uint32_t)(a >> 1) + (uint32_t)~a);
        }
        run(EW, "intops_i32", ARGS(P(x), P(y), P(od), P(orm), P(ob), I(n)), NO_CONSTS);

        begin("intops_u32 n=%d", n);
        x = input("x", T_U32, n, 0, 4294967295.0), y = input("y", T_U32, n, 1, 4294967295.0);
        for (int i = 0; i < n; i += 2)
            y->v[i] = (double)rnd_int(1, 1000);
        od = output("o_div", T_U32, n, EXACT), orm = output("o_rem", T_U32, n, EXACT);
        Buf *om = output("o_mix", T_U32, n, EXACT);
        for (int i = 0; i < n; i++) {
            uint32_t a = (uint32_t)x->v[i], b = (uint32_t)y->v[i];
            od->v[i] = a / b, orm->v[i] = a % b, om->v[i] = (uint32_t)((a >> 3) + a * b - b);
        }
        run(EW, "intops_u32", ARGS(P(x), P(y), P(od), P(orm), P(om), I(n)), NO_CONSTS);

        begin("unsigned_ops n=%d", n);
        x = input("x", T_U8, n, 0, 255), y = input("y", T_U8, n, 0, 255);
        Buf *o8 = output("o8", T_U8, n, EXACT), *o16 = output("o16", T_U16, n, EXACT);
        Buf *o64 = output("o64", T_U64, n, EXACT);
        for (int i = 0; i < n; i++) {
            uint8_t a = (uint8_t)x->v[i], b = (uint8_t)y->v[i];
            o8->v[i] = (uint8_t)(a + (uint8_t)(b * 3));
            o16->v[i] = (uint16_t)(a * b);
            o64->v[i] = (double)((((uint64_t)a + 1) * 1000000007u) >> 3);
        }
        run(EW, "unsigned_ops", ARGS(P(x), P(y), P(o8), P(o16), P(o64), I(n)), NO_CONSTS);
    }
}

/* ---- casts.tile ---- */

static double cast_ref(Ty from, Ty to, double v)
{
    if (to == T_BOOL)
        return v != 0;
    if (TY[from].is_float && !TY[to].is_float && !TY[to].is_signed)
        v = fabs(v);
    if (TY[from].is_float && !TY[to].is_float)
        v = trunc(v);
    return ty_round(to, v);
}

/* A value next to a bf16 tie (random: below, at or above it; below 2^lim_log2 in magnitude),
 * as an integer when `integral`. */
static double near_bf16_tie(int integral, int lim_log2)
{
    int e = integral ? 24 + (int)(rnd_unit() * (lim_log2 - 25)) : -20 + (int)(rnd_unit() * 60);
    double m = 129 + 2 * (int)(rnd_unit() * 63); /* odd: ties to even go up */
    double tie = ldexp(m + 0.5, e - 7);
    int side = (int)(rnd_unit() * 3) - 1;
    double v = integral ? tie + side : tie + side * ldexp(tie, -35);
    return rnd_unit() < 0.5 ? -v : v;
}

/* to bf16 from f64, i32, u32 and i64 rounds once, at values next to bf16's ties */
static void casts_to_bf16_once(int n)
{
    begin("casts to bf16 round once, n=%d", n);
    Buf *x = input("x", T_F64, n, 0, 0), *i = input("i", T_I32, n, 0, 0);
    Buf *u = input("u", T_U32, n, 0, 0), *j = input("j", T_I64, n, 0, 0);
    Buf *o[4], *oc = output("oc", T_BF16, 2, EXACT);
    Buf *in[4] = {x, i, u, j};
    for (int k = 0; k < n; k++) {
        x->v[k] = near_bf16_tie(0, 0);
        i->v[k] = near_bf16_tie(1, 31);
        u->v[k] = fabs(near_bf16_tie(1, 32));
        j->v[k] = near_bf16_tie(1, 53);
    }
    for (int t = 0; t < 4; t++) {
        static const char *const names[] = {"from f64", "from i32", "from u32", "from i64"};
        o[t] = output(names[t], T_BF16, n, EXACT);
        for (int k = 0; k < n; k++)
            o[t]->v[k] = ty_round(T_BF16, in[t]->v[k]);
    }
    oc->v[0] = 68.5, oc->v[1] = -16908288; /* -(2^24 + 2^17) */
    run("tests/exec/casts.tile", "to_bf16_once",
        ARGS(P(x), P(i), P(u), P(j), P(o[0]), P(o[1]), P(o[2]), P(o[3]), P(oc), I(n)), NO_CONSTS);
}

void t_casts(void)
{
    for (Ty from = 0; from < T_COUNT; from++) {
        int n = from % 2 ? 200 : 37;
        begin("casts from %s n=%d", TY[from].name, n);
        double lo = from == T_BOOL ? 0 : TY[from].is_signed ? -100 : 0;
        double hi = from == T_BOOL ? 1 : TY[from].is_signed ? 100 : 200;
        Buf *x = input("x", from, n, lo, hi);
        for (int i = 0; i < n; i += 5) /* zeros and whole numbers */
            x->v[i] = i % 10 ? ty_round(from, floor(x->v[i])) : 0;
        tile_Arg args[T_COUNT + 2];
        args[0] = P(x);
        for (Ty to = 0; to < T_COUNT; to++) {
            static char names[T_COUNT][16];
            snprintf(names[to], sizeof names[to], "o_%s", TY[to].name);
            Buf *o = output(names[to], to, n, EXACT);
            for (int i = 0; i < n; i++)
                o->v[i] = cast_ref(from, to, x->v[i]);
            args[1 + to] = P(o);
        }
        args[T_COUNT + 1] = I(n);
        char kernel[32];
        snprintf(kernel, sizeof kernel, "cast_from_%s", TY[from].name);
        run("tests/exec/casts.tile", kernel, args, T_COUNT + 2, NO_CONSTS);
    }
    casts_to_bf16_once(1), casts_to_bf16_once(300);
}

/* ---- reduce.tile ---- */

#define RD "tests/exec/reduce.tile"

/* Reduces x [rows, cols] along axis (1: each row, 0: each column) into the five outputs. */
static void reduce_ref(const Buf *x, int rows, int cols, int axis, Buf **o)
{
    int outer = axis ? rows : cols, inner = axis ? cols : rows;
    for (int a = 0; a < outer; a++) {
        double s = 0, sa = 0, mx = -INFINITY, mn = INFINITY;
        int amax = 0, amin = 0;
        for (int b = 0; b < inner; b++) {
            double v = axis ? x->v[(size_t)a * cols + b] : x->v[(size_t)b * cols + a];
            s += v, sa += fabs(v);
            if (v > mx)
                mx = v, amax = b;
            if (v < mn)
                mn = v, amin = b;
        }
        o[0]->v[a] = s, o[1]->v[a] = mx, o[2]->v[a] = mn, o[3]->v[a] = amax, o[4]->v[a] = amin;
        if (o[0]->tol != EXACT)
            sum_bound(o[0], (size_t)a, sa, (size_t)inner);
    }
}

static void reduce_case(const char *kernel, Ty t, int rows, int cols, int axis, int ties)
{
    begin("%s %dx%d%s", kernel, rows, cols, ties ? " (ties)" : "");
    Buf *x = ties || t == T_I32 ? input("x", T_I32, (size_t)rows * cols, -2, 2)
                                : input("x", t, (size_t)rows * cols, -1, 1);
    x->t = t;
    int n = axis ? rows : cols;
    Ty vt = t == T_I32 ? T_I32 : T_F32;
    Buf *o[5] = {output("o_sum", vt, n, t == T_I32 ? EXACT : TOL_F32), output("o_max", vt, n, EXACT),
                 output("o_min", vt, n, EXACT), output("o_amax", T_I32, n, EXACT),
                 output("o_amin", T_I32, n, EXACT)};
    reduce_ref(x, rows, cols, axis, o);
    run(RD, kernel, ARGS(P(x), P(o[0]), P(o[1]), P(o[2]), P(o[3]), P(o[4]), I(rows), I(cols)),
        NO_CONSTS);
}

/* reduce_whole: max, sum and flat argmax of an R x C matrix, row sums with keep_dims */
static void reduce_whole(int R, int C)
{
    begin("reduce_whole (no axis, keep_dims) %dx%d", R, C);
    Buf *x = input("x", T_F32, (size_t)R * C, -1, 1);
    Buf *o = output("max, sum", T_F32, 2, TOL_F32), *oi = output("argmax", T_I32, 1, EXACT);
    Buf *rs = output("row sums", T_F32, R, TOL_F32);
    double mx = -INFINITY, s = 0, abs_sum = 0;
    int at = 0;
    for (int r = 0; r < R; r++) {
        double row = 0, row_abs = 0;
        for (int c = 0; c < C; c++) {
            double v = x->v[r * C + c];
            if (v > mx)
                mx = v, at = r * 64 + c; /* flat index in the 16 x 64 tile */
            s += v, abs_sum += fabs(v), row += v, row_abs += fabs(v);
        }
        rs->v[r] = row;
        sum_bound(rs, r, row_abs, C);
    }
    o->v[0] = mx, o->v[1] = s, oi->v[0] = at;
    sum_bound(o, 1, abs_sum, (size_t)R * C);
    run(RD, "reduce_whole", ARGS(P(x), P(o), P(oi), P(rs), I(R), I(C)), NO_CONSTS);
}

/* scans: cumsum / cumprod / counts against sequential float64 and exact integer references */
static void scans(int n)
{
    begin("scans (cumsum, cumprod reverse, axis 0, bool) n=%d", n);
    Buf *x = input("x", T_F32, 128, 0.5, 1.5);
    Buf *s = output("cumsum", T_F32, n, TOL_F32), *p = output("cumprod", T_F32, 128, TOL_F32);
    Buf *c = output("cumsum i32 axis 0", T_I32, 128, EXACT), *f = output("count", T_I32, n, EXACT);
    for (int i = 0; i < 128; i++)
        x->v[i] = (rnd() & 3) == 0 ? -x->v[i] : x->v[i];
    double acc = 0, abs_acc = 0;
    int cnt = 0;
    for (int i = 0; i < n; i++) {
        acc += x->v[i], abs_acc += fabs(x->v[i]), cnt += x->v[i] > 0;
        s->v[i] = acc, f->v[i] = cnt;
        sum_bound(s, i, abs_acc, (size_t)i + 1);
    }
    for (int r = 0; r < 8; r++) {
        double prod = 1;
        for (int k = 15; k >= 0; k--)
            p->v[r * 16 + k] = prod *= x->v[r * 16 + k];
        for (int k = 0; k < 16; k++) {
            int sum = 0;
            for (int q = 0; q <= r; q++)
                sum += (int)(float)(x->v[q * 16 + k] * 10.0f);
            c->v[r * 16 + k] = sum;
        }
    }
    run(RD, "scans", ARGS(P(x), P(s), P(p), P(c), P(f), I(n)), NO_CONSTS);
}

/* scans_long: the same along axes of 256 and 4096 elements, which no thread holds whole */
static void scans_long(int n, int warps)
{
    enum { N = 4096 };
    begin("scans along long axes (cumsum and reverse, flip, cumprod reverse, i32 axis 0) n=%d, num_warps=%d", n, warps);
    Buf *x = input("x", T_F32, N, 0.97, 1.03);
    Buf *s = output("cumsum", T_F32, n, TOL_F32), *rs = output("cumsum reverse", T_F32, n, TOL_F32);
    Buf *fl = output("flip", T_F32, N, EXACT), *p = output("cumprod reverse", T_F32, 1024, 1e-4);
    Buf *c = output("cumsum i32 axis 0", T_I32, 1024, EXACT);
    for (int i = 0; i < N; i++)
        x->v[i] = (rnd() & 3) == 0 ? -x->v[i] : x->v[i];
    double acc = 0, abs_acc = 0;
    for (int i = 0; i < n; i++) {
        acc += x->v[i], abs_acc += fabs(x->v[i]);
        s->v[i] = acc;
        sum_bound(s, i, abs_acc, (size_t)i + 1);
    }
    acc = 0, abs_acc = 0;
    for (int i = n - 1; i >= 0; i--) {
        acc += x->v[i], abs_acc += fabs(x->v[i]);
        rs->v[i] = acc;
        sum_bound(rs, i, abs_acc, (size_t)(n - i));
    }
    for (int i = 0; i < N; i++)
        fl->v[i] = N - 1 - i < n ? x->v[N - 1 - i] : 0.0;
    for (int r = 0; r < 4; r++) {
        double prod = 1;
        for (int k = 255; k >= 0; k--)
            p->v[r * 256 + k] = prod *= x->v[r * 256 + k];
    }
    for (int k = 0; k < 4; k++) {
        int sum = 0;
        for (int r = 0; r < 256; r++)
            c->v[r * 4 + k] = sum += (int)(float)(x->v[r * 4 + k] * 10.0f);
    }
    run(RD, "scans_long", ARGS(P(x), P(s), P(rs), P(fl), P(p), P(c), I(n)),
        CONSTS({"num_warps", warps}));
}

static void t_sum_dtype(void)
{
    int n = 61;
    begin("sum_dtype (f16 in f32, i8 in i32) n=%d", n);
    Buf *x = input("x", T_F16, 64, -4, 4), *y = input("y", T_I8, 64, 90, 127);
    Buf *o = output("o", T_F32, 1, TOL_F32), *oi = output("oi", T_I32, 1, EXACT);
    double sx = 0, ax = 0, sy = 0;
    for (int i = 0; i < n; i++)
        sx += x->v[i], ax += fabs(x->v[i]), sy += y->v[i];
    o->v[0] = sx, oi->v[0] = sy;
    sum_bound(o, 0, ax, (size_t)n);
    run(RD, "sum_dtype", ARGS(P(x), P(y), P(o), P(oi), I(n)), NO_CONSTS);
}

void t_reduce(void)
{
    t_sum_dtype();
    scans(1);
    scans(100);
    scans_long(1, 4);
    scans_long(3001, 4);
    scans_long(4096, 8);
    reduce_whole(1, 1);
    reduce_whole(13, 50);
    static const int rows_cases[][2] = {{1, 1}, {7, 64}, {10, 33}};
    for (int c = 0; c < 3; c++)
        for (int ties = 0; ties < 2; ties++)
            reduce_case("reduce_rows", T_F32, rows_cases[c][0], rows_cases[c][1], 1, ties);
    static const int cols_cases[][2] = {{64, 8}, {37, 13}, {1, 5}};
    for (int c = 0; c < 3; c++)
        for (int ties = 0; ties < 2; ties++)
            reduce_case("reduce_cols", T_F32, cols_cases[c][0], cols_cases[c][1], 0, ties);
    reduce_case("reduce_i32", T_I32, 5, 32, 1, 1);
    reduce_case("reduce_i32", T_I32, 3, 7, 1, 1);

    begin("reduce_f16 9x50");
    Buf *x = input("x", T_F16, 9 * 50, -1, 1);
    Buf *os = output("o_sum", T_F32, 9, TOL_F32), *om = output("o_max", T_F16, 9, EXACT);
    for (int r = 0; r < 9; r++) {
        double s = 0, sa = 0, m = -INFINITY;
        for (int c = 0; c < 50; c++)
            s += x->v[r * 50 + c], sa += fabs(x->v[r * 50 + c]), m = fmax(m, x->v[r * 50 + c]);
        os->v[r] = s, om->v[r] = m;
        sum_bound(os, (size_t)r, sa, 50);
    }
    run(RD, "reduce_f16", ARGS(P(x), P(os), P(om), I(9), I(50)), NO_CONSTS);

    static const int all_sizes[] = {1, 256, 1000};
    for (int c = 0; c < 3; c++) {
        int n = all_sizes[c], nb = (n + 255) / 256;
        begin("reduce_all n=%d", n);
        /* mixed signs: sums may cancel to near zero, so each block's sum is held to the error
         * bound of an f32 sum, not to a relative tolerance (which made this test flaky) */
        x = input("x", T_F32, n, -1, 1);
        Buf *o = output("o", T_F32, nb, TOL_F32);
        double abs_sum[4] = {0};
        for (int i = 0; i < n; i++)
            o->v[i / 256] += x->v[i], abs_sum[i / 256] += fabs(x->v[i]);
        for (int b = 0; b < nb; b++)
            sum_bound(o, (size_t)b, abs_sum[b], 256);
        run(RD, "reduce_all", ARGS(P(x), P(o), I(n)), NO_CONSTS);
    }
}

/* ---- dot.tile ---- */

/* between two reductions across warps, a dot of operands in shared memory */
static void dot_between(int warps)
{
    begin("dot_between reductions, num_warps=%d", warps);
    Buf *x = input("x", T_F32, 128, -1, 1), *y = input("y", T_F32, 128, -1, 1);
    Buf *z = input("z", T_I32, 128, 0, 6), *o = output("o", T_I32, 3, EXACT);
    int first = 0;
    for (int k = 0; k < 128; k++) {
        first = x->v[k] < x->v[first] ? k : first;
        o->v[1] += x->v[k] > 0 && y->v[k] > 0;
        o->v[2] += z->v[k] > 3;
    }
    o->v[0] = first;
    run("tests/exec/dot.tile", "dot_between", ARGS(P(x), P(y), P(z), P(o)),
        CONSTS({"num_warps", warps}));
}

void t_dot(void)
{
    dot_between(4);
    dot_between(8);
    /* M, N, K, BM, BN, BK */
    static const int cases[][6] = {{16, 16, 16, 16, 16, 16}, {5, 9, 13, 16, 16, 16},
                                   {32, 16, 64, 32, 16, 64}, {20, 11, 50, 32, 16, 64},
                                   {64, 32, 32, 64, 32, 32}};
    for (int c = 0; c < 5; c++) {
        int M = cases[c][0], N = cases[c][1], K = cases[c][2];
        tile_Const cs[] = {{"BM", cases[c][3]}, {"BN", cases[c][4]}, {"BK", cases[c][5]}};
        for (int kind = 0; kind < 3; kind++) {
            static const char *const kn[] = {"dot_f32", "dot_f16", "dot_i8"};
            begin("%s %dx%dx%d blocks %dx%dx%d", kn[kind], M, N, K, cases[c][3], cases[c][4],
                  cases[c][5]);
            Ty t = kind == 0 ? T_F32 : kind == 1 ? T_F16 : T_I8;
            Buf *a = kind == 2 ? input("a", t, (size_t)M * K, -20, 20) : input("a", t, (size_t)M * K, -1, 1);
            Buf *b = kind == 2 ? input("b", t, (size_t)K * N, -20, 20) : input("b", t, (size_t)K * N, -1, 1);
            if (kind == 2) {
                Buf *o = output("o", T_I32, (size_t)M * N, EXACT);
                for (int i = 0; i < M; i++)
                    for (int j = 0; j < N; j++)
                        for (int k = 0; k < K; k++)
                            o->v[i * N + j] += a->v[i * K + k] * b->v[k * N + j];
                run("tests/exec/dot.tile", kn[kind], ARGS(P(a), P(b), P(o), I(M), I(N), I(K)),
                    cs, 3);
                continue;
            }
            Buf *cc = input("c", T_F32, (size_t)M * N, -1, 1);
            double tol = kind == 1 ? 1e-4 : TOL_F32;
            Buf *o = output("o", T_F32, (size_t)M * N, tol), *oa = output("o_acc", T_F32, (size_t)M * N, tol);
            Buf *ot = kind == 0 ? output("o_t", T_F32, (size_t)M * N, tol) : NULL;
            for (int i = 0; i < M; i++)
                for (int j = 0; j < N; j++) {
                    double s = 0, sa = 0;
                    for (int k = 0; k < K; k++) { /* dot_f16 takes B transposed: [N, K] */
                        double p = a->v[i * K + k] * (kind == 1 ? b->v[j * K + k] : b->v[k * N + j]);
                        s += p, sa += fabs(p);
                    }
                    o->v[i * N + j] = s, oa->v[i * N + j] = s + cc->v[i * N + j];
                    /* K products (rounded to f32 unless exact) and K - 1 additions */
                    sum_bound(o, (size_t)(i * N + j), sa, (size_t)(2 * K));
                    sum_bound(oa, (size_t)(i * N + j), sa + fabs(cc->v[i * N + j]), (size_t)(2 * K + 1));
                    if (ot) {
                        ot->v[j * M + i] = s;
                        sum_bound(ot, (size_t)(j * M + i), sa, (size_t)(2 * K));
                    }
                }
            if (kind == 0)
                run("tests/exec/dot.tile", kn[kind],
                    ARGS(P(a), P(b), P(cc), P(o), P(oa), P(ot), I(M), I(N), I(K)), cs, 3);
            else
                run("tests/exec/dot.tile", kn[kind],
                    ARGS(P(a), P(b), P(cc), P(o), P(oa), I(M), I(N), I(K)), cs, 3);
        }
    }
}

/* ---- control.tile ---- */

#define CT "tests/exec/control.tile"

static void t_loops(void)
{
    static const int loops[][3] = {{0, 20, 1}, {3, 17, 4}, {5, 5, 1}, {10, 2, 1}, {19, 20, 7}};
    for (int c = 0; c < 5; c++) {
        int lo = loops[c][0], hi = loops[c][1], step = loops[c][2], B = 32, count = 0;
        begin("loop_sum range(%d, %d, %d)", lo, hi, step);
        Buf *x = input("x", T_F32, 20 * B, -1, 1);
        Buf *o = output("o", T_F32, B, TOL_F32);
        double sa[32] = {0};
        for (int j = lo; j < hi; j += step, count++)
            for (int i = 0; i < B; i++)
                o->v[i] += x->v[j * B + i], sa[i] += fabs(x->v[j * B + i]);
        for (int i = 0; i < B; i++) {
            o->v[i] += count * 1000.0;
            sum_bound(o, (size_t)i, sa[i] + count * 1000.0, (size_t)(2 * count + 1));
        }
        run(CT, "loop_sum", ARGS(P(x), P(o), I(lo), I(hi), I(step)), NO_CONSTS);
    }
    static const int lims[] = {0, 30, 100000};
    for (int c = 0; c < 3; c++) {
        int n = 50, programs = 3, limit = lims[c];
        begin("loop_break limit=%d", limit);
        Buf *x = input("x", T_I32, (size_t)n * programs, -5, 10);
        Buf *o = output("o", T_I32, programs, EXACT);
        for (int p = 0; p < programs; p++) {
            int s = 0;
            for (int i = 0; i < n; i++) {
                int v = (int)x->v[p * n + i];
                if (v < 0)
                    continue;
                if (s > limit)
                    break;
                s += v;
            }
            o->v[p] = s;
        }
        run(CT, "loop_break", ARGS(P(x), P(o), I(n), I(limit), I(programs)), NO_CONSTS);
    }
    for (int k = 0; k < 6; k += 5) {
        int n = 17, B = 16;
        begin("while_loop n=%d k=%d", n, k);
        Buf *x = input("x", T_I32, n, 1, 500), *y = input("y", T_F32, (size_t)n * B, -1, 1);
        Buf *o = output("o", T_I32, n, EXACT), *ot = output("o_t", T_F32, (size_t)n * B, TOL_F32);
        for (int i = 0; i < n; i++) {
            int v = (int)x->v[i], steps = 0;
            while (v != 1)
                v = v % 2 == 0 ? v / 2 : 3 * v + 1, steps++;
            o->v[i] = steps;
        }
        for (int i = 0; i < n * B; i++)
            for (int j = 0; j < k; j++)
                ot->v[i] = ot->v[i] * 0.5 + y->v[i];
        run(CT, "while_loop", ARGS(P(x), P(y), P(o), P(ot), I(n), I(k)), NO_CONSTS);
    }
}

static void t_branches(void)
{
    for (int mode = 0; mode < 3; mode++) {
        int n = 1000;
        begin("branch mode=%d n=%d", mode, n);
        Buf *x = input("x", T_F32, n, -1, 1);
        Buf *o = output("o", T_F32, n, TOL_F32);
        for (int i = 0; i < n; i++) {
            double a = x->v[i];
            o->v[i] = (mode == 0 ? a + 1 : mode == 1 ? 2 * a : -a) + (x->v[i / 64 * 64] > 0 ? 10 : 0);
        }
        run(CT, "branch", ARGS(P(x), P(o), I(n), I(mode)), NO_CONSTS);
    }
    for (int s = 1; s < NSIZES; s++) {
        int n = SIZES[s];
        begin("early_return n=%d", n);
        Buf *x = input("x", T_F32, n, -1, 1);
        Buf *o = output("o", T_F32, n, TOL_F32);
        for (int i = 0; i < n; i++)
            o->v[i] = (i / 64) % 2 ? -1 : 2 * x->v[i];
        run(CT, "early_return", ARGS(P(x), P(o), I(n)), NO_CONSTS);
    }
    static const int lims[] = {20, 0, 60};
    for (int c = 0; c < 3; c++) {
        int n = 50, limit = lims[c];
        begin("return_in_loop n=%d limit=%d", n, limit);
        Buf *o = output("o", T_I32, n, EXACT);
        for (int j = 0; j < n; j++)
            o->v[j] = j < limit ? j * j : -1;
        run(CT, "return_in_loop", ARGS(P(o), I(n), I(limit)), NO_CONSTS);
    }
}

/* `kernel` over range(lo, hi, step) for each {lo, hi, step, count, last}: o = {count, last} */
static void loop_cases(const char *kernel, Ty t, const int64_t (*cases)[5], size_t n)
{
    for (size_t c = 0; c < n; c++) {
        const int64_t *k = cases[c];
        begin("%s range(%lld, %lld, %lld)", kernel, (long long)k[0], (long long)k[1], (long long)k[2]);
        Buf *o = output("o", t, 2, EXACT);
        o->v[0] = (double)k[3], o->v[1] = (double)k[4];
        run(CT, kernel, ARGS(P(o), I(k[0]), I(k[1]), I(k[2])), NO_CONSTS);
    }
}

/* Loops at the ends of i32, with a run-time step of 0, and over u32 bounds past INT32_MAX. */
static void t_loop_edges(void)
{
    static const int64_t i32[][5] = {
        {INT32_MAX - 7, INT32_MAX, 7, 1, INT32_MAX - 7},
        {INT32_MAX - 7, INT32_MAX, 3, 3, INT32_MAX - 1},
        {INT32_MIN + 8, INT32_MIN, -5, 2, INT32_MIN + 3},
        {INT32_MIN, INT32_MAX, INT32_MAX, 3, INT32_MAX - 1},
        {0, 10, 0, 0, -1},
        {10, 0, 0, 0, -1},
        {0, 10, 3, 4, 9},
    };
    static const int64_t u32[][5] = {
        {3000000000LL, 3000000010LL, 3, 4, 3000000009LL},
        {2147483640LL, 2147483660LL, 10, 2, 2147483650LL},
        {4294967290LL, 4294967295LL, 2, 3, 4294967294LL},
    };
    loop_cases("loop_edges", T_I32, i32, sizeof i32 / sizeof i32[0]);
    loop_cases("loop_edges_u32", T_U32, u32, sizeof u32 / sizeof u32[0]);
}

/* static_range(LO, HI, STEP) inside range(0, reps): o[i] = reps * sum over s of
 * x[s][i] * (s + 1) + (0 + 1 + ... + 2^(s % 4) - 1). */
static void t_static_loops(void)
{
    static const int loops[][4] = {{0, 5, 1, 2}, {7, 0, -2, 1}, {3, 3, 1, 3}, {2, 20, 6, 3}, {19, 18, -5, 0}};
    for (int c = 0; c < 5; c++) {
        int lo = loops[c][0], hi = loops[c][1], step = loops[c][2], reps = loops[c][3], B = 32;
        begin("static_loop static_range(%d, %d, %d) reps=%d", lo, hi, step, reps);
        Buf *x = input("x", T_F32, 20 * B, -1, 1);
        Buf *o = output("o", T_F32, B, TOL_F32);
        double sa[32] = {0};
        int count = 0;
        for (int r = 0; r < reps; r++)
            for (int s = lo; step > 0 ? s < hi : s > hi; s += step, count++)
                for (int i = 0; i < B; i++) {
                    int t = 1 << (s % 4);
                    o->v[i] += x->v[s * B + i] * (s + 1) + t * (t - 1) / 2;
                    sa[i] += fabs(x->v[s * B + i]) * (s + 1) + t * (t - 1) / 2;
                }
        for (int i = 0; i < B; i++)
            sum_bound(o, (size_t)i, sa[i], (size_t)(2 * count + 1));
        run(CT, "static_loop", ARGS(P(x), P(o), I(reps)), CONSTS({"LO", lo}, {"HI", hi}, {"STEP", step}));
    }
}

/* a, b = f(...) (tuple_lse); u64 values past the largest u64 constant (u64_consts); constant
 * folding that matches run time (fold_like_runtime). */
static void t_tuple_assign(void)
{
    static const int sizes[][2] = {{1, 0}, {37, 16}, {100, 48}, {129, 200}};
    for (int c = 0; c < 4; c++) {
        int n = sizes[c][0], half = sizes[c][1], rows = 3, B = 16, chunks = (n + B - 1) / B;
        begin("tuple_lse n=%d half=%d", n, half);
        Buf *x = input("x", T_F32, (size_t)n * rows, -4, 4);
        Buf *o = output("o", T_F32, (size_t)rows * 2, TOL_F32);
        for (int r = 0; r < rows; r++) {
            double m = -INFINITY, d = 0;
            for (int i = 0; i < n; i++)
                m = fmax(m, x->v[r * n + i]);
            for (int i = 0; i < n; i++)
                d += exp(x->v[r * n + i] - m);
            o->v[r * 2] = m + log(d);
            o->v[r * 2 + 1] = chunks % 2 ? 21 : 12;
        }
        run(CT, "tuple_lse", ARGS(P(x), P(o), I(n), I(half), I(rows)), NO_CONSTS);
    }
    for (int c = 0; c < 3; c++) {
        int n = c == 0 ? 0 : c == 1 ? 1 : 37;
        begin("tuple_values n=%d", n);
        Buf *x = input("x", T_F32, 37, -1, 1);
        Buf *o = output("o", T_F32, 2, TOL_F32);
        double a = 1, b = 2, sa = 1, sb = 2;
        for (int i = 0; i < n; i++) {
            double t = a + x->v[i], st = sa + fabs(x->v[i]);
            a = b, b = t, sa = sb, sb = st;
        }
        o->v[0] = a, o->v[1] = b;
        sum_bound(o, 0, sa, (size_t)n + 1);
        sum_bound(o, 1, sb, (size_t)n + 1);
        run(CT, "tuple_values", ARGS(P(x), P(o), I(n)), NO_CONSTS);
    }
    begin("u64_consts");
    int n = 64;
    Buf *x = input("x", T_U64, 64, 0, 1e6);
    Buf *o = output("o", T_U64, 256, EXACT);
    const uint64_t golden = 0x9E3779B97F4A7C15u, ones = UINT64_MAX;
    for (int i = 0; i < 64; i++) {
        uint64_t v = (uint64_t)x->v[i];
        o->v[i] = (double)((v ^ golden) >> 11);
        o->v[64 + i] = (double)(v + 1000 * (v < ones) + 7 * (golden > v));
        o->v[128 + i] = (double)((UINT64_C(10000000000000000000) >> 11) + v);
        o->v[192 + i] = (double)((ones - v) >> 12);
    }
    run(CT, "u64_consts", ARGS(P(x), P(o), I(n)), NO_CONSTS);
    begin("fold_like_runtime");
    Buf *a = input("a", T_I32, 2, 0, 1);
    a->v[0] = 11, a->v[1] = 16777216;
    Buf *o16 = output("o16", T_F16, 6, EXACT), *ob = output("ob", T_BF16, 2, EXACT);
    Buf *o32 = output("o32", T_F32, 5, EXACT);
    double h = ty_round(T_F16, ty_round(T_F16, 11) + ty_round(T_F16, 65000.0));
    double t = ty_round(T_F16, 11 * ty_round(T_F16, 0.1));
    double lt = ty_round(T_F16, 11 + ty_round(T_F16, 64980.0)) < ty_round(T_F16, 65000.0);
    double b = ty_round(T_BF16, 1 - ty_round(T_BF16, 1.0 / 3.0));
    double f = ty_round(T_F32, 16777216 + ty_round(T_F32, 1.00000001));
    o16->v[0] = o16->v[1] = h, o16->v[2] = o16->v[3] = t, o16->v[4] = o16->v[5] = lt;
    ob->v[0] = ob->v[1] = b, o32->v[0] = o32->v[1] = f;
    o32->v[2] = o32->v[3] = o32->v[4] = NAN;
    run(CT, "fold_like_runtime", ARGS(P(a), P(o16), P(ob), P(o32)), NO_CONSTS);
}

void t_control(void)
{
    t_tuple_assign();
    t_loops();
    t_static_loops();
    t_loop_edges();
    t_branches();
}

/* ---- helpers.tile, memory.tile ---- */

void t_helpers(void)
{
    static const int sizes[] = {1, 100, 128};
    for (int c = 0; c < 3; c++) {
        int n = sizes[c];
        begin("helper_multi n=%d", n);
        Buf *x = input("x", T_F32, n, -1, 1);
        Buf *os = output("o_stats", T_F32, 3, TOL_F32), *oc = output("o_scaled", T_F32, n, TOL_F32);
        double s = 0, sa = 0, m = -INFINITY;
        for (int i = 0; i < n; i++)
            s += x->v[i], sa += fabs(x->v[i]), m = fmax(m, x->v[i]), oc->v[i] = 3 * x->v[i] - 1;
        os->v[0] = s, os->v[1] = m, os->v[2] = 2 * s + 1;
        sum_bound(os, 0, sa, (size_t)n);
        sum_bound(os, 1, 0, 0); /* a max is exact */
        sum_bound(os, 2, 2 * sa + 1, (size_t)n + 2);
        run("tests/exec/helpers.tile", "helper_multi", ARGS(P(x), P(os), P(oc), I(n)), NO_CONSTS);
    }
    for (int act = 0; act < 3; act++) { /* returns in the branches of a const if */
        int n = 100, swap = act == 1;
        begin("helper_act ACT=%d SWAP=%d", act, swap);
        Buf *x = input("x", T_F32, n, -2, 2);
        Buf *o = output("o", T_F32, n, TOL_F32), *o2 = output("o2", T_F32, n, TOL_F32);
        for (int i = 0; i < n; i++) {
            double v = x->v[i], a = act == 1 ? fmax(v, 0) : act == 2 ? (v > 0 ? v : v * 0.125) : v;
            o->v[i] = a + fmax(v, 0);
            o2->v[i] = swap ? 3 * v + 2 * v : v + 6 * v;
        }
        run("tests/exec/helpers.tile", "helper_act", ARGS(P(x), P(o), P(o2), I(n)),
            CONSTS({"ACT", act}, {"SWAP", swap}));
    }
    begin("helper_typed");
    Buf *q = input("q", T_F32, 1, 0, 1);
    q->v[0] = 2.5;
    Buf *pt = output("p", T_F32, 4, EXACT);
    pt->v[0] = pt->v[1] = pt->v[2] = 2, pt->v[3] = 5;
    run("tests/exec/helpers.tile", "helper_typed", ARGS(P(pt), P(q)), NO_CONSTS);
    begin("helper_defaults n=100");
    int n = 100;
    Buf *x = input("x", T_F32, 128, -2, 2);
    Buf *o = output("o", T_F32, 2 * (size_t)n, TOL_F32);
    for (int i = 0; i < n; i++) {
        double v = x->v[i];
        o->v[i] = v > 0 ? 3 * v : v * (0.01 + 0.5 + 2.0);
        o->v[n + i] = 4 * v + 2 * v + 8 * v + 100;
    }
    run("tests/exec/helpers.tile", "helper_defaults", ARGS(P(x), P(o), I(n)), NO_CONSTS);
}

/* @types: the same kernel for f32, f16, bf16 and i32 (typed_mean, typed_mean_f16, ...). */
void t_types(void)
{
    static const Ty tys[] = {T_F32, T_F16, T_BF16, T_I32};
    static const char *const names[] = {"typed_mean", "typed_mean_f16", "typed_mean_bf16",
                                        "typed_mean_i32"};
    for (int t = 0; t < 4; t++) {
        int n = 100;
        begin("%s n=%d", names[t], n);
        Ty ty = tys[t];
        Buf *x = input("x", ty, n, TY[ty].is_float ? -1 : -1000, TY[ty].is_float ? 1 : 1000);
        double tol = ty == T_F32 ? TOL_F32 : ty == T_I32 ? EXACT : ty == T_F16 ? TOL_F16 : 1e-2;
        Buf *y = output("y", ty, n, tol), *o = output("out", ty, 1, tol);
        double s = 0;
        for (int i = 0; i < n; i++)
            s += (float)x->v[i];
        double mean = (float)((float)s / n);
        for (int i = 0; i < n; i++)
            y->v[i] = ty_round(ty, (double)((float)x->v[i] - (float)mean));
        o->v[0] = ty_round(ty, mean);
        if (TY[ty].is_float) { /* a sum that may cancel to near 0: bounded, not relative */
            double abs_sum = 0;
            for (int i = 0; i < n; i++)
                abs_sum += fabs((float)x->v[i]);
            sum_bound(o, 0, abs_sum / n, (size_t)n);
        }
        run("tests/exec/helpers.tile", names[t], ARGS(P(x), P(y), P(o), I(n)), NO_CONSTS);
    }
}

#define MEM "tests/exec/memory.tile"

/* hinted_rows: rows of W at a stride of 16k elements, copied and doubled */
static void hinted_rows(int rows, int stride)
{
    enum { W = 64 };
    begin("hints: assume, multiple_of, max_contiguous rows=%d stride=%d", rows, stride);
    Buf *x = input("x", T_F32, (size_t)rows * stride, -1, 1);
    Buf *o = output("o", T_F32, (size_t)rows * W, EXACT), *o2 = output("o2", T_F32, (size_t)rows * W, EXACT);
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < W; c++)
            o->v[r * W + c] = x->v[(size_t)r * stride + c], o2->v[r * W + c] = 2 * x->v[(size_t)r * stride + c];
    run(MEM, "hinted_rows", ARGS(P(x), P(o), P(o2), I(rows), I(stride)), NO_CONSTS);
}

/* guarded_rows: loads masked by one scalar (alone and with a per-element mask), four
 * elements at each address, `other` where the mask is off */
static void guarded_rows(int rows, int n)
{
    enum { B = 64 };
    begin("guarded_rows rows=%d n=%d", rows, n);
    Buf *x = input("x", T_F32, (size_t)rows * B / 4, -1, 1);
    Buf *f = input("flags", T_BOOL, rows, 0, 1);
    Buf *o = output("o", T_F32, (size_t)rows * B, EXACT), *o2 = output("o2", T_F32, (size_t)rows * B, EXACT);
    for (int r = 0; r < rows; r++)
        for (int i = 0; i < B; i++) {
            double v = x->v[r * B / 4 + i / 4];
            o->v[r * B + i] = f->v[r] ? v : -1;
            o2->v[r * B + i] = f->v[r] && i < n ? v : 7;
        }
    run(MEM, "guarded_rows", ARGS(P(x), P(f), P(o), P(o2), I(rows), I(n)), NO_CONSTS);
}

void t_memory(void)
{
    hinted_rows(1, 64);
    hinted_rows(7, 80);
    guarded_rows(9, 37);
    guarded_rows(6, 0);
    guarded_rows(5, 64);
    begin("scalar_mem n=37");
    Buf *x = input("x", T_I64, 37, -1000000, 1000000);
    Buf *o = output("o", T_I64, 37, EXACT);
    for (int i = 0; i < 37; i++)
        o->v[36 - i] = 3 * x->v[i];
    run(MEM, "scalar_mem", ARGS(P(x), P(o), I(37)), NO_CONSTS);

    for (int s = 1; s < NSIZES; s++) {
        int n = SIZES[s];
        begin("gather n=%d", n);
        x = input("x", T_F32, 300, -1, 1);
        Buf *idx = input("idx", T_I32, n, 0, 299);
        o = output("o", T_F32, n, EXACT);
        for (int i = 0; i < n; i++)
            o->v[i] = x->v[(int)idx->v[i]];
        run(MEM, "gather", ARGS(P(x), P(idx), P(o), I(n)), NO_CONSTS);

        begin("offsets_i64 n=%d base=7", n);
        x = input("x", T_F32, (size_t)n + 7, -1, 1);
        o = output("o", T_F32, n, TOL_F32);
        for (int i = 0; i < n; i++)
            o->v[i] = x->v[7 + i] + 1;
        run(MEM, "offsets_i64", ARGS(P(x), P(o), I(n), I(7)), NO_CONSTS);

        begin("bool_tiles n=%d", n);
        x = input("x", T_F32, n, -1, 1);
        Buf *f = input("flags", T_BOOL, n, 0, 1);
        Buf *op = output("o_pos", T_BOOL, n, EXACT), *om = output("o_mix", T_BOOL, n, EXACT);
        Buf *osl = output("o_sel", T_F32, n, EXACT);
        for (int i = 0; i < n; i++) {
            op->v[i] = x->v[i] > 0, om->v[i] = !f->v[i] || x->v[i] < -0.5;
            osl->v[i] = f->v[i] ? x->v[i] : 0;
        }
        run(MEM, "bool_tiles", ARGS(P(x), P(f), P(op), P(om), P(osl), I(n)), NO_CONSTS);

        begin("offset_forms n=%d", n);
        x = input("x", T_F32, 2 * (size_t)n + 8, -1, 1);
        o = output("o", T_F32, 5 * (size_t)n, EXACT);
        for (int i = 0; i < n; i++) {
            o->v[i] = x->v[n - 1 - i], o->v[n + i] = x->v[2 * i + 1];
            o->v[2 * n + i] = x->v[i + 3], o->v[3 * n + i] = x->v[2 * i + 1];
            o->v[4 * n + i] = x->v[i + 5];
        }
        run(MEM, "offset_forms", ARGS(P(x), P(o), I(n)), NO_CONSTS);
    }
}

/* ---- grid.tile, broadcast.tile ---- */

void t_grid(void)
{
    static const int grids[][3] = {{3, 2, 4}, {1, 1, 1}, {5, 1, 3}};
    for (int c = 0; c < 3; c++) {
        int g0 = grids[c][0], g1 = grids[c][1], g2 = grids[c][2];
        begin("grid3 %dx%dx%d", g0, g1, g2);
        Buf *o = output("o", T_I32, (size_t)g0 * g1 * g2 * 6, EXACT);
        for (int z = 0; z < g2; z++)
            for (int y = 0; y < g1; y++)
                for (int x = 0; x < g0; x++) {
                    double *e = o->v + ((z * g1 + y) * g0 + x) * 6;
                    e[0] = x, e[1] = y, e[2] = z, e[3] = g0, e[4] = g1, e[5] = g2;
                }
        run("tests/exec/grid.tile", "grid3", ARGS(P(o), I(g0), I(g1), I(g2)), NO_CONSTS);
    }
    static const int mats[][2] = {{16, 32}, {37, 70}, {1, 5}};
    for (int c = 0; c < 3; c++) {
        int rows = mats[c][0], cols = mats[c][1];
        begin("transpose2d %dx%d", rows, cols);
        Buf *x = input("x", T_F32, (size_t)rows * cols, -1, 1);
        Buf *o = output("o", T_F32, (size_t)rows * cols, EXACT);
        for (int r = 0; r < rows; r++)
            for (int k = 0; k < cols; k++)
                o->v[k * rows + r] = 2 * x->v[r * cols + k];
        run("tests/exec/grid.tile", "transpose2d", ARGS(P(x), P(o), I(rows), I(cols)), NO_CONSTS);
    }
}

void t_broadcast(void)
{
    static const int m2[][2] = {{16, 32}, {5, 7}};
    for (int c = 0; c < 2; c++) {
        int rows = m2[c][0], cols = m2[c][1];
        begin("bcast2 %dx%d", rows, cols);
        Buf *x = input("x", T_F32, rows, -1, 1), *y = input("y", T_F32, cols, -1, 1);
        Buf *o = output("o", T_F32, (size_t)rows * cols, TOL_F32);
        for (int r = 0; r < rows; r++)
            for (int k = 0; k < cols; k++)
                o->v[r * cols + k] = 10 * x->v[r] + 1.5 * y->v[k] + 1 + (rows + 2) / 3;
        run("tests/exec/broadcast.tile", "bcast2", ARGS(P(x), P(y), P(o), I(rows), I(cols)),
            NO_CONSTS);
    }
    static const int m3[][3] = {{8, 16, 8}, {3, 5, 6}};
    for (int c = 0; c < 2; c++) {
        int rows = m3[c][0], cols = m3[c][1], nk = m3[c][2];
        begin("bcast3 %dx%dx%d", rows, cols, nk);
        Buf *x = input("x", T_F32, rows, -1, 1), *y = input("y", T_F32, cols, -1, 1);
        Buf *z = input("z", T_F32, nk, -1, 1);
        Buf *o = output("o", T_F32, (size_t)rows * cols, TOL_F32);
        for (int r = 0; r < rows; r++)
            for (int k = 0; k < cols; k++)
                for (int j = 0; j < nk; j++)
                    o->v[r * cols + k] += x->v[r] + y->v[k] * z->v[j];
        run("tests/exec/broadcast.tile", "bcast3",
            ARGS(P(x), P(y), P(z), P(o), I(rows), I(cols), I(nk)), NO_CONSTS);
    }
}
