/* test_porting.c: the porting group of the execution tests (tests/exec/porting.tile): the
 * builtins and keyword forms Triton kernels use. rint and round exactly (ties to even);
 * log1p and expm1 within 2 ulp of the correctly rounded value (f32: libm's double result
 * rounded; f64: within 3 ulp of glibc), near 0, -1 and the overflow edge included, on every
 * float type; tan, atan, asin, acos, sinh, cosh, log10, atan2, hypot and copysign within 4 ulp
 * (f32) and 3 ulp (f64), with their special values; bitcast against the bits C sees; Triton's
 * keyword forms (program_id(axis=), max/min with return_indices, dot's out_dtype) exactly or
 * within a summation's bound. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "test_exec.h"

#define PT "tests/exec/porting.tile"

enum { MAX_POINTS = 8192 };
static double pts[MAX_POINTS];
static int npts;

static void add(double v)
{
    if (npts < MAX_POINTS)
        pts[npts++] = v;
}

/* n points evenly over [lo, hi], and n spread over [lo', hi'] logarithmically with signs */
static void grid(double lo, double hi, int n)
{
    for (int i = 0; i < n; i++)
        add(lo + (hi - lo) * i / (n - 1));
}

static void logs(double lo, double hi, int n)
{
    for (int i = 0; i < n; i++) {
        double v = exp(log(lo) + (log(hi) - log(lo)) * i / (n - 1));
        add(i % 2 ? -v : v);
    }
}

static const char *const FN_NAME[] = {"rint", "round", "log1p", "expm1"};
static const char *const KERNEL[] = {"math1", "math1_f64", "math1_f16", "math1_bf16"};
static const Ty TYPE[] = {T_F32, T_F64, T_F16, T_BF16};

static double ref(int fn, double x)
{
    return fn <= 1 ? rint(x) : fn == 2 ? log1p(x) : expm1(x);
}

static void points(int fn)
{
    static const double specials[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 0.5, -0.5, 1.5, 2.5,
                                      -2.5, 3.5, 1e30, -1e30, 8388607.5, -8388609.0};
    npts = 0;
    for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++)
        add(specials[i]);
    if (fn <= 1) {
        for (int k = -40; k <= 40; k++) /* every half, and values around them */
            add(k + 0.5), add(k + 0.25), add(k - 0.75), add(k * 1.01);
        grid(-3e6, 3e6, 501);
    } else if (fn == 2) {
        grid(-0.999, 10, 2001);
        logs(1e-30, 0.5, 1001);                     /* tiny magnitudes: log1p(x) = x */
        grid(-1, -0.9, 201);                         /* near -1 (-1 itself: -inf) */
        logs(10, 1e30, 301), add(-1.5), add(-2.0);  /* below -1: NaN */
    } else {
        grid(-20, 20, 2001);
        logs(1e-30, 0.5, 1001);
        grid(80, 88.72, 401), add(88.8), add(89), add(100), add(709), add(710); /* overflow */
        grid(-120, -15, 201);                        /* -1 */
    }
}

static void math1(int fn, int t)
{
    points(fn);
    Ty ty = TYPE[t];
    int n = npts;
    begin("%s on %s within %s, n=%d", FN_NAME[fn], TY[ty].name, fn <= 1 ? "0 ulp" : "2 ulp", n);
    Buf *x = input("x", ty, (size_t)n, 0, 0), *o = output("o", ty, (size_t)n, fn <= 1 ? EXACT : 1e-5);
    for (int i = 0; i < n; i++) {
        x->v[i] = ty_round(ty, pts[i]);
        /* f16 and bf16 compute in f32, then round: the f32 result's error plus half an ulp */
        double r = ty == T_F64 ? ref(fn, x->v[i]) : (double)(float)ref(fn, x->v[i]);
        o->v[i] = ty_round(ty, r);
        if (fn > 1)
            ulp_bound(o, (size_t)i, ty == T_F64 ? 3 : 2);
    }
    run(PT, KERNEL[t], ARGS(P(x), P(o), I(n)), CONSTS({"FN", fn}));
}

static void sign_bits(void)
{
    static const double xs[] = {-0.0, 0.0, -0.3, 0.3, -1e-30, 1e-30, -0.5, 0.5};
    enum { N = sizeof xs / sizeof xs[0] };
    static const int fns[] = {0, 2, 3};
    for (int f = 0; f < 3; f++) {
        begin("%s keeps the sign of zero and of tiny values", FN_NAME[fns[f]]);
        Buf *x = input("x", T_F32, N, 0, 0), *s = output("s", T_I32, N, EXACT);
        for (int i = 0; i < N; i++)
            x->v[i] = xs[i], s->v[i] = signbit(ref(fns[f], xs[i])) ? 1 : 0;
        run(PT, "sign_bits", ARGS(P(x), P(s), I(N)), CONSTS({"FN", fns[f]}));
    }
}

/* ---- libm: porting.tile's libm kernel, function k on inputs k n .. k n + n - 1 ---- */
/* The f32 bound: 4 ulp (libdevice's), 1 on the emulated AMD path, whose f32 functions are the
 * f64 ones rounded once (measured within 0.50 ulp of the exact value) */
static double f32_ulps(void)
{
    const char *t = getenv("TILE_SIM_TARGET");
    return t && strcmp(t, "sim-amd") == 0 ? 1 : 4;
}

enum { LIBM_FNS = 10, LIBM_BINARY = 7, LIBM_N = 701 };
static const char *const LIBM_KERNEL[] = {"libm", "libm_f64", "libm_f16", "libm_bf16"};

static long double libm_ref(int fn, long double x, long double y)
{
    switch (fn) {
    case 0: return tanl(x);
    case 1: return atanl(x);
    case 2: return asinl(x);
    case 3: return acosl(x);
    case 4: return sinhl(x);
    case 5: return coshl(x);
    case 6: return log10l(x);
    case 7: return atan2l(x, y);
    case 8: return hypotl(x, y);
    default: return copysignl(x, y);
    }
}

/* the special values and edges of function fn, then random ones over its ranges */
static void libm_points(int fn)
{
    static const double common[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1.0, -1.0, 1e-30, -1e-30,
                                    1e30, -1e30, 1e-40, 1e-310};
    static const double edges[][12] = {
        {1.5707963267948966, -1.5707963267948966, 1.5707964, 3.141592653589793, 710, 1e300, 1e22},
        {1e300, -1e300, 0.4375, 0.6875, 1.1875, 2.4375, 1e-300},
        {1.0000001, -1.0000001, 0.99999994, -0.99999994, 0.5, 1.0000000000000002, 2},
        {1.0000001, -1.0000001, 0.99999994, -0.99999994, 0.5, 1.0000000000000002, 2},
        {88.7, 89.4, 89.5, -89.5, 710, 711, -711, 22, 0.3465},
        {88.7, 89.4, 89.5, -89.5, 710, 711, -711, 22, 0.3465},
        {-1, 10, 100, 1000, 1e-5, 1e38, 1e-320, 1e308, 2},
    };
    static const double ranges[][2] = {{-10, 10}, {-3, 3}, {-1, 1}, {-1, 1}, {-5, 5}, {-5, 5}, {0, 3}};
    npts = 0;
    for (size_t i = 0; i < sizeof common / sizeof common[0]; i++)
        add(common[i]);
    for (int i = 0; i < 12 && edges[fn][i] != 0; i++)
        add(edges[fn][i]);
    while (npts < LIBM_N / 2)
        add(ranges[fn][0] + (ranges[fn][1] - ranges[fn][0]) * rnd_unit());
    while (npts < LIBM_N) { /* magnitudes from 1e-30 to 1e30 (1 and below for asin, acos) */
        double v = exp(-69 + (fn == 2 || fn == 3 ? 69 : 138) * rnd_unit());
        add(fn == 6 || rnd_unit() < 0.5 ? v : -v);
    }
}

/* pairs for atan2, hypot and copysign: the signed zeros and infinities against each other
 * and against numbers, NaN (hypot(inf, NaN) is inf), then random ones */
static void libm_pairs(double *xs, double *ys)
{
    static const double v[] = {0.0, -0.0, INFINITY, -INFINITY, 1.0, -2.5, NAN, 1e-40};
    enum { V = sizeof v / sizeof v[0] };
    int n = 0;
    for (int i = 0; i < V; i++)
        for (int j = 0; j < V; j++, n++)
            xs[n] = v[i], ys[n] = v[j];
    for (; n < LIBM_N; n++) {
        int wide = n % 2;
        xs[n] = wide ? exp(-69 + 138 * rnd_unit()) * (rnd_unit() < 0.5 ? -1 : 1) : -3 + 6 * rnd_unit();
        ys[n] = -3 + 6 * rnd_unit();
    }
    xs[n - 1] = 3, ys[n - 1] = 4;
}

/* An argument of type ty for the exact value v (bf16's range ends at 2^128, where ty_round
 * would keep v finite: there it is inf, as the kernel's conversion makes it). */
static double libm_arg(Ty ty, double v)
{
    if (ty == T_BF16 && fabs(v) > 0x1p128)
        v = copysign(INFINITY, v);
    return ty_round(ty, v);
}

/* The expected result of type ty for the reference r: f16 and bf16 compute in f32. */
static double libm_result(Ty ty, double r)
{
    return ty_round(ty, ty == T_F64 ? r : (double)(float)r);
}

/* The bound the tests hold type ty's results to (see libm), as begin() names it. */
static const char *libm_bound_text(Ty ty)
{
    return ty == T_F64 ? "3 ulp" : ty == T_F32 && f32_ulps() != 1 ? "4 ulp" : "1 ulp";
}

/* The second arguments `pairs` makes into y (type ty); its first ones into bx. */
static void libm_second(Buf *y, Ty ty, double *bx, void (*pairs)(double *, double *))
{
    double by[LIBM_N];
    pairs(bx, by);
    for (int i = 0; i < LIBM_N; i++)
        y->v[i] = ty_round(ty, by[i]);
}

/* f32 within 4 ulp of the correctly rounded value (libdevice's bound; the CPU's C library and
 * the AMD code are within 2), f64 within 3 ulp (long double libm rounded); f16 and bf16
 * compute in f32, so within an ulp of the f32 reference rounded */
static void libm(int t)
{
    Ty ty = TYPE[t];
    int n = LIBM_N;
    begin("tan ... copysign on %s (libdevice's functions) within %s, n=%d", TY[ty].name,
          libm_bound_text(ty), n);
    Buf *x = input("x", ty, (size_t)n * LIBM_FNS, 0, 0), *y = input("y", ty, (size_t)n, 0, 0);
    Buf *o = output("o", ty, (size_t)n * LIBM_FNS, 1e-5);
    double bx[LIBM_N];
    libm_second(y, ty, bx, libm_pairs);
    for (int fn = 0; fn < LIBM_FNS; fn++) {
        if (fn < LIBM_BINARY)
            libm_points(fn);
        for (int i = 0; i < n; i++) {
            size_t j = (size_t)fn * n + i;
            x->v[j] = libm_arg(ty, fn < LIBM_BINARY ? pts[i] : bx[i]);
            double a = fn < LIBM_BINARY ? x->v[j] : x->v[(size_t)LIBM_BINARY * n + i];
            o->v[j] = libm_result(ty, (double)libm_ref(fn, a, y->v[i]));
            ulp_bound(o, j, ty == T_F64 ? 3 : ty == T_F32 ? f32_ulps() : 1);
        }
    }
    run(PT, LIBM_KERNEL[t], ARGS(P(x), P(y), P(o), I(n)), NO_CONSTS);
}

/* signs of zero results: tan, atan, asin and sinh keep x's, atan2 takes y's (and pi's sign
 * from x's zero), copysign y's */
static void libm_signs(void)
{
    static const double xs[] = {0.0, -0.0, 0.0, -0.0, 1e-30, -1e-30, 1e-45, -1e-45,
                                0.0, -0.0, 1.0, -1.0, -0.0, 0.0, 0.5, -0.5};
    static const double ys[] = {0.0, 0.0, -0.0, -0.0, 1.0, -1.0, 1.0, -1.0,
                                INFINITY, -INFINITY, -0.0, 0.0, 5.0, -5.0, -INFINITY, INFINITY};
    enum { N = 16, NF = 6 };
    static const int fns[NF] = {0, 1, 2, 4, 7, 9};
    begin("tan, atan, asin, sinh, atan2 and copysign give zeros their signs");
    Buf *x = input("x", T_F32, N, 0, 0), *y = input("y", T_F32, N, 0, 0);
    Buf *s = output("s", T_I32, (size_t)N * NF, EXACT);
    for (int i = 0; i < N; i++) {
        x->v[i] = ty_round(T_F32, xs[i]), y->v[i] = ys[i];
        for (int f = 0; f < NF; f++)
            s->v[f * N + i] = signbit(libm_ref(fns[f], x->v[i], ys[i])) ? 1 : 0;
    }
    run(PT, "libm_signs", ARGS(P(x), P(y), P(s)), NO_CONSTS);
}

/* ---- libm2: porting.tile's libm2 kernel (asinh ... erfinv, fmod and %, signbit) ---- */
enum { LIBM2_FNS = 8, LIBM2_FMOD = 6 };
static const char *const LIBM2_KERNEL[] = {"libm2", "libm2_f64", "libm2_f16", "libm2_bf16"};

/* erfinv in long double (the C library has none): bisection on erf (erfc near 1), then Newton */
static long double erfinv_ref(long double y)
{
    long double a = fabsl(y);
    if (isnan(y) || a > 1)
        return NAN;
    if (a == 1)
        return copysignl(INFINITY, y);
    if (a < 1e-10L) /* the series' next term: a^2 pi / 12 */
        return y * 0.886226925452758013649L * (1 + a * a * 0.261799387799149436539L);
    long double lo = 0, hi = 10, x = 5;
    for (int i = 0; i < 100; i++) {
        x = (lo + hi) / 2;
        if (a > 0.5L ? erfcl(x) > 1 - a : erfl(x) < a)
            lo = x;
        else
            hi = x;
    }
    for (int i = 0; i < 2; i++) {
        long double d = 1.128379167095512573896L * expl(-x * x);
        x -= a > 0.5L ? (1 - a - erfcl(x)) / d : (erfl(x) - a) / d;
    }
    return copysignl(x, y);
}

static long double libm2_ref(int fn, long double x, long double y)
{
    switch (fn) {
    case 0: return asinhl(x);
    case 1: return acoshl(x);
    case 2: return atanhl(x);
    case 3: return cbrtl(x);
    case 4: return powl(10, x);
    case 5: return erfinv_ref(x);
    default: return fmodl(x, y);
    }
}

static void libm2_points(int fn)
{
    static const double common[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1.0, -1.0, 1e-30, -1e-30,
                                    1e30, -1e30, 1e-40, 1e-310};
    static const double edges[][12] = {
        {2, -2, 0x1p28, 0x1p-28, 1e300, -1e300, 0x1.0000000000001p28},
        {0.999, 2, 1.0000001, 0x1p28, 1e300, 0.5, 1.0000000000000002, 1.5},
        {1.0000001, 0.5, -0.5, 0.99999994, -0.99999994, 0.9999999999999999, 0.4999999},
        {8, 27, -8, 1.7e308, 1e-320, -3, 0.001},
        {2, 3, -2, 38, 38.6, 308, 309, -45, -46, -320, -330, 0.5},
        {1.0000001, 0.5, -0.9999999, 0.99999994, 0.9999999999999999, 0.9, -0.999, 1e-300},
    };
    static const double ranges[][2] = {{-5, 5}, {1, 5}, {-1, 1}, {-10, 10}, {-5, 5}, {-1, 1}};
    npts = 0;
    for (size_t i = 0; i < sizeof common / sizeof common[0]; i++)
        add(common[i]);
    for (int i = 0; i < 12 && edges[fn][i] != 0; i++)
        add(edges[fn][i]);
    while (npts < LIBM_N / 2)
        add(ranges[fn][0] + (ranges[fn][1] - ranges[fn][0]) * rnd_unit());
    while (npts < LIBM_N) {
        double u = rnd_unit(), v = exp(-69 + 138 * u), sign = rnd_unit() < 0.5 ? -1 : 1;
        if (fn == 2) /* atanh: magnitudes below 1 */
            v = exp(-69 + 69 * u);
        else if (fn == 4) /* exp10: over f32's range */
            v = 80 * u - 40;
        else if (fn == 5) /* erfinv: toward +-1, 1 - e^-36 is the double below 1 */
            v = 1 - exp(-36 * u);
        add(fn == 1 ? (sign > 0 ? 1 + v : -v) : sign * v);
    }
}

/* fmod's pairs: zero divisors and infinite dividends (NaN), infinite divisors (x), signed zeros,
 * NaN, quotients beyond 2^24 and 2^53, then random ones */
static void libm2_pairs(double *xs, double *ys)
{
    static const double v[] = {0.0, -0.0, INFINITY, -INFINITY, 3.0, -2.5, NAN, 1e-40, 1e30};
    enum { V = sizeof v / sizeof v[0] };
    int n = 0;
    for (int i = 0; i < V; i++)
        for (int j = 0; j < V; j++, n++)
            xs[n] = v[i], ys[n] = v[j];
    for (; n < LIBM_N; n++) {
        xs[n] = exp(-20 + 100 * rnd_unit()) * (rnd_unit() < 0.5 ? -1 : 1);
        ys[n] = (-3 + 6 * rnd_unit()) * (n % 3 ? 1 : 1e-10);
    }
}

/* f32 within 4 ulp, f64 within 3 (erfinv: 5, libdevice's; cbrt: 4), fmod and % exact; signbit
 * exactly, of every float type and of an integer */
static void libm2(int t)
{
    Ty ty = TYPE[t];
    int n = LIBM_N;
    begin("asinh ... erfinv, fmod, %%, signbit on %s within %s, n=%d", TY[ty].name,
          libm_bound_text(ty), n);
    Buf *x = input("x", ty, (size_t)n * LIBM2_FNS, 0, 0), *y = input("y", ty, (size_t)n, 0, 0);
    Buf *o = output("o", ty, (size_t)n * LIBM2_FNS, 1e-5), *s = output("s", T_I32, (size_t)n * 2, EXACT);
    double bx[LIBM_N];
    libm_second(y, ty, bx, libm2_pairs);
    for (int fn = 0; fn < LIBM2_FNS; fn++) {
        if (fn < LIBM2_FMOD)
            libm2_points(fn);
        for (int i = 0; i < n; i++) {
            size_t j = (size_t)fn * n + i;
            x->v[j] = libm_arg(ty, fn < LIBM2_FMOD ? pts[i] : bx[i]);
            o->v[j] = libm_result(ty, (double)libm2_ref(fn, x->v[j], y->v[i]));
            /* f64: glibc's cbrt is within 4 ulp */
            double ulps = fn >= LIBM2_FMOD ? 0 : ty == T_F64 ? (fn == 5 ? 5 : fn == 3 ? 4 : 3)
                        : ty == T_F32 ? f32_ulps() : 1;
            ulp_bound(o, j, ulps);
        }
    }
    for (int i = 0; i < n; i++) {
        s->v[i] = signbit(x->v[(size_t)LIBM2_FMOD * n + i]) ? 1 : 0;
        s->v[n + i] = i < 5;
    }
    run(PT, LIBM2_KERNEL[t], ARGS(P(x), P(y), P(o), P(s), I(n)), NO_CONSTS);
}

static uint32_t f32_bits(double v)
{
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static void bitcasts(int n)
{
    begin("bitcast f32/f16/bf16/f64 to and from integers of their width, n=%d", n);
    Buf *x = input("x", T_F32, n, -1e6, 1e6), *h = input("h", T_F16, n, 0.001, 60000);
    Buf *b = input("b", T_BF16, n, -1e30, 1e30), *d = input("d", T_F64, n, -1e300, 1e300);
    Buf *xi = output("xi", T_I32, n, EXACT), *xu = output("xu", T_U32, n, EXACT);
    Buf *hi = output("hi", T_I16, n, EXACT), *bi = output("bi", T_U16, n, EXACT);
    Buf *di = output("di", T_I64, n, EXACT), *back = output("back", T_F32, n, EXACT);
    Buf *up = output("up", T_F16, n, EXACT), *one = output("one", T_I32, 1, EXACT);
    for (int i = 0; i < n; i++) {
        uint32_t u = f32_bits(x->v[i]);
        _Float16 hf = (_Float16)h->v[i];
        uint16_t hb;
        int64_t dbits;
        memcpy(&hb, &hf, 2);
        memcpy(&dbits, &d->v[i], 8);
        xi->v[i] = (int32_t)u, xu->v[i] = u;
        hi->v[i] = (int16_t)hb, bi->v[i] = f32_bits(b->v[i]) >> 16;
        di->v[i] = (double)dbits; /* compared through the same double rounding */
        back->v[i] = -x->v[i];
        hb++;
        memcpy(&hf, &hb, 2);
        up->v[i] = (double)hf;
    }
    one->v[0] = 0x3f800000;
    run(PT, "bits", ARGS(P(x), P(h), P(b), P(d), P(xi), P(xu), P(hi), P(bi), P(di), P(back),
                         P(up), P(one), I(n)), NO_CONSTS);
}

/* the first index of the extreme value in n values at stride st */
static int first_extreme(const double *v, int n, int st, int is_max)
{
    int best = 0;
    for (int i = 1; i < n; i++)
        if (is_max ? v[i * st] > v[best * st] : v[i * st] < v[best * st])
            best = i;
    return best;
}

static void arg_reduce(void)
{
    begin("program_id(axis=), num_programs(axis=), max/min with return_indices, 2x3 programs");
    Buf *x = input("x", T_F32, 6 * 128, -3, 3); /* few distinct values: ties */
    Buf *vmax = output("vmax", T_F32, 48, EXACT), *imax = output("imax", T_I32, 48, EXACT);
    Buf *vmin = output("vmin", T_F32, 96, EXACT), *imin = output("imin", T_I32, 96, EXACT);
    Buf *whole = output("whole", T_F32, 6, EXACT), *widx = output("widx", T_I32, 6, EXACT);
    Buf *np = output("np", T_I32, 6, EXACT);
    for (int i = 0; i < 6 * 128; i++)
        x->v[i] = (double)rnd_int(-3, 3);
    for (int p = 0; p < 6; p++) {
        const double *t = x->v + p * 128;
        for (int r = 0; r < 8; r++) {
            int i = first_extreme(t + r * 16, 16, 1, 1);
            vmax->v[p * 8 + r] = t[r * 16 + i], imax->v[p * 8 + r] = i;
        }
        for (int c = 0; c < 16; c++) {
            int j = first_extreme(t + c, 8, 16, 0);
            vmin->v[p * 16 + c] = t[j * 16 + c], imin->v[p * 16 + c] = j;
        }
        int k = first_extreme(t, 128, 1, 1);
        whole->v[p] = t[k], widx->v[p] = k, np->v[p] = 23;
    }
    run(PT, "arg_reduce", ARGS(P(x), P(vmax), P(imax), P(vmin), P(imin), P(whole), P(widx), P(np)),
        NO_CONSTS);
}

static void dot_out(void)
{
    begin("dot(..., out_dtype=) f32, f16 and i32 accumulators, 32x32x32");
    Buf *a = input("a", T_F16, 1024, -1, 1), *b = input("b", T_F16, 1024, -1, 1);
    Buf *a8 = input("a8", T_I8, 1024, -128, 127), *b8 = input("b8", T_I8, 1024, -128, 127);
    Buf *c = output("c", T_F32, 1024, TOL_F32), *c16 = output("c16", T_F16, 1024, TOL_F16);
    Buf *ci = output("ci", T_I32, 1024, EXACT), *cacc = output("cacc", T_F32, 1024, TOL_F32);
    for (int i = 0; i < 32; i++)
        for (int j = 0; j < 32; j++) {
            double s = 0, abs_sum = 0, si = 0;
            for (int k = 0; k < 32; k++) {
                double p = a->v[i * 32 + k] * b->v[k * 32 + j];
                s += p, abs_sum += fabs(p), si += a8->v[i * 32 + k] * b8->v[k * 32 + j];
            }
            c->v[i * 32 + j] = s, c16->v[i * 32 + j] = s, ci->v[i * 32 + j] = si;
            cacc->v[i * 32 + j] = s + 1.5;
            sum_bound(c, (size_t)i * 32 + j, abs_sum, 32);
            sum_bound(c16, (size_t)i * 32 + j, abs_sum, 33); /* f16 sums, then the rounding */
            sum_bound(cacc, (size_t)i * 32 + j, abs_sum + 1.5, 33);
        }
    run(PT, "dot_out", ARGS(P(a), P(b), P(a8), P(b8), P(c), P(c16), P(ci), P(cacc)), NO_CONSTS);
}

/* f16 and bf16 `/` and `%` give f32, as Triton's: each result is the f32 operation on the
 * exact 16-bit inputs (so it differs from a quotient rounded to f16) */
static void half_div(int n)
{
    begin("f16/bf16 / and %% give f32 (Triton's promotion), n=%d", n);
    Buf *a = input("a", T_F16, n, -100, 100), *b = input("b", T_F16, n, 0.5, 9);
    Buf *c = input("c", T_BF16, n, -100, 100), *d = input("d", T_BF16, n, 0.5, 9);
    Buf *q = output("q", T_F32, n, EXACT), *qb = output("qb", T_F32, n, EXACT);
    Buf *r = output("r", T_F32, n, EXACT), *qc = output("qc", T_F32, n, EXACT);
    Buf *ql = output("ql", T_F32, n, EXACT), *qi = output("qi", T_F32, n, EXACT);
    for (int i = 0; i < n; i++) {
        float x = (float)a->v[i], y = (float)b->v[i], xy = x / y;
        q->v[i] = xy, qb->v[i] = xy * y, r->v[i] = fmodf(x, y);
        qc->v[i] = (float)c->v[i] / (float)d->v[i];
        ql->v[i] = x / 3.0f, qi->v[i] = (float)(i + 1) / y;
    }
    run(PT, "half_div", ARGS(P(a), P(b), P(c), P(d), P(q), P(qb), P(r), P(qc), P(ql), P(qi), I(n)),
        NO_CONSTS);
}

/* ~ of a bool negates it: constants fold as run-time values compute */
static void bool_not(void)
{
    begin("~ of bool constants and tiles");
    Buf *b = input("b", T_BOOL, 4, 0, 1), *o = output("o", T_I32, 8, EXACT);
    for (int i = 0; i < 4; i++) {
        b->v[i] = i & 1;
        o->v[i] = !(i & 1);
    }
    o->v[4] = 0, o->v[5] = 0, o->v[6] = 1, o->v[7] = 1;
    run(PT, "bool_not", ARGS(P(b), P(o)), NO_CONSTS);
}

/* bf16 with an integer tile computes in f32, as Triton's promotion does */
static void bf16_int(int n)
{
    begin("bf16 with an i32 tile gives f32 (Triton's promotion), n=%d", n);
    Buf *x = input("x", T_BF16, n, -100, 100), *k = input("k", T_I32, n, -1000, 1000);
    Buf *p = output("p", T_F32, n, EXACT), *s = output("s", T_F32, n, EXACT);
    Buf *l = output("l", T_F32, n, EXACT);
    for (int i = 0; i < n; i++) {
        float a = (float)x->v[i], b = (float)k->v[i];
        p->v[i] = a * b, s->v[i] = a + b, l->v[i] = ty_round(T_BF16, a * 3.0f);
    }
    run(PT, "bf16_int", ARGS(P(x), P(k), P(p), P(s), P(l), I(n)), NO_CONSTS);
}

void t_porting(void)
{
    for (int fn = 0; fn < 4; fn++)
        for (int t = 0; t < 4; t++)
            math1(fn, t);
    sign_bits();
    for (int t = 0; t < 4; t++)
        libm(t);
    libm_signs();
    for (int t = 0; t < 4; t++)
        libm2(t);
    bitcasts(1);
    bitcasts(333);
    arg_reduce();
    dot_out();
    half_div(1);
    half_div(300);
    bool_not();
    bf16_int(300);
}
