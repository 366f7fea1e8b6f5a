/* target_math_f64.c: f64 exp, exp2, exp10, log, log2, log10, log1p, expm1, tanh, erf, erfinv,
 * atan, asin, acos, sinh, cosh, asinh, acosh, atanh, cbrt, pow, atan2 and hypot computed by
 * the kernel from FMA, ldexp, frexp and polynomials, for AMD GPUs: LLVM's AMDGPU backend has no f64
 * exp or log, and no device library is linked (sin and cos: target_trig_f64.c). The emulated AMD path
 * runs the same code, so CI checks it against libm. No branches: both sides of a range are
 * computed and one selected. Intermediate results are double-doubles (hi + lo) where one
 * rounding would cost an ulp.
 * - exp2 of a double-double t: n = rint(t), e^((t - n) ln2) by 1 + r + r^2 Q(r) (Taylor to
 *   r^13), scaled by ldexp(., n), which also rounds subnormal results; exp(x) = exp2(x log2 e).
 * - log: frexp gives a = 2^e m, m in [sqrt(1/2), sqrt(2)); log m = 2 atanh(s), s = (m-1)/(m+1),
 *   = 2s + s^3 (2/3 + z P(z)), z = s^2 (Taylor to s^25), s and s^3 in double-double: the
 *   double-double log2 |x| (relative error about 2^-66) that pow needs.
 * - tanh: a + a^3 P(a^2) below 0.55, 1 - 2 / (e^(2a) + 1) above; sign restored.
 * - erf: a (2/sqrt(pi) + z H(z)) below 1, 1 - e^(-a^2) G((a - 3) / (a + 3)) up to 6 (a^2 split
 *   exactly with FMA), 1 beyond; sign restored.
 * - pow: 2^(y log2 |x|), the product in double-double, with C's special cases.
 * - log1p: 1 + x split exactly (two_sum), log of the rounded sum in double-double plus the
 *   rest over it. expm1: exp's reduction, e^r - 1 as r plus the rest of its sum, scaled by
 *   2^n and the exact 2^n - 1 added.
 * - log10: the double-double log times log10(e) in double-double.
 * - atan: fdlibm's reduction (atan c + atan((a - c) / (1 + a c)), c = 0, 1/2, 1, 3/2, inf by
 *   the range of |x|) to |u| <= 7/16, u + u^3 P(u^2). atan2 from it and the quadrant; asin
 *   and acos as atan2 with sqrt(1 - x^2) (one rounding: FMA).
 * - sinh, cosh: fdlibm's forms from expm1 and exp; e^a / 2 as e^(a - ln2) near overflow.
 * - hypot: scaled by the larger one's exponent, squares summed in double-double, a square root
 *   with one Newton correction.
 * - asinh, acosh, atanh: fdlibm's forms over log and log1p; cbrt: exponent-bits guess, Halley,
 *   Newton; exp10: exp2 of x log2(10) in double-double; erfinv: x P(-log(1 - x^2)) in three
 *   ranges (also the CPU's and sim's: the C library has no erfinv).
 * Coefficients: EXP_Q, LOG_P are Taylor's (1/k!, 2/(2k+1)) rounded to double; TANH_P, ERF_H,
 * ERFC_G, ATAN_P are Chebyshev interpolants from mpmath's chebyfit at 60 digits (errors 8e-18,
 * 5e-19, 2e-19, 4e-18), rounded to double. */
#include "target_fp.h"

static const double EXP_Q[] = {0.5, 0.16666666666666666, 0.041666666666666664,
                               0.008333333333333333, 0.001388888888888889, 0.0001984126984126984,
                               2.48015873015873e-05, 2.7557319223985893e-06,
                               2.755731922398589e-07, 2.505210838544172e-08,
                               2.08767569878681e-09, 1.6059043836821613e-10};
static const double LOG_P[] = {0.4, 0.2857142857142857, 0.2222222222222222,
                               0.18181818181818182, 0.15384615384615385, 0.13333333333333333,
                               0.11764705882352941, 0.10526315789473684, 0.09523809523809523,
                               0.08695652173913043, 0.08};
/* (tanh a - a) / a^3 in z = a^2 on [0, 0.3025] */
static const double TANH_P[] = {-0.3333333333333333, 0.13333333333332714, -0.053968253967434016,
                                0.021869488493666944, -0.008863234397814355,
                                0.003592110378689024, -0.001455661830100716,
                                0.0005889360520074057, -0.0002346347410887237,
                                8.511313685577672e-05, -2.060276537636634e-05};
/* (erf(a) / a - 2/sqrt(pi)) / z in z = a^2 on [0, 1] */
static const double ERF_H[] = {-0.37612638903183754, 0.11283791670955111, -0.026866170645123838,
                               0.005223977625303518, -0.0008548327010033328,
                               0.00012055332214716276, -1.4925622504489842e-05,
                               1.6461446656928561e-06, -1.6355118610877705e-07,
                               1.4692484859133263e-08, -1.1500357159785296e-09,
                               6.174097221305255e-11};
/* erfc(a) e^(a^2) in t = (a - 3) / (a + 3) on [-1/2, 1/3] (a in [1, 6]) */
static const double ERFC_G[] = {0.17900115118138996, -0.3262335600430372, 0.24560380171233093,
                                -0.15011593650077582, 0.07166583719797331, -0.024392499318790735,
                                0.004269136333077869, 0.0007077464435611972,
                                -0.0005970619531815352, 4.525520140579536e-05,
                                6.405657794051666e-05, -1.2859347351455289e-05,
                                -7.977696579644072e-06, 2.1124428949403864e-06,
                                1.2459620847174093e-06, -2.6915157592850126e-07,
                                -2.0355575642200858e-07};
enum { EXP_N = 12, LOG_N = 11, TANH_N = 11, ERF_N = 12, ERFC_N = 17 };
/* double-double constants: the value rounded, then the rest rounded */
static const double LN2_H = 0.6931471805599453, LN2_L = 2.3190468138462996e-17;
static const double LOG2E_H = 1.4426950408889634, LOG2E_L = 2.0355273740931033e-17;
static const double TWO_THIRDS_H = 0.6666666666666666, TWO_THIRDS_L = 3.700743415417188e-17;
static const double TWO_SQRTPI_H = 1.1283791670955126, TWO_SQRTPI_L = 1.533545961316588e-17;
/* (atan(u) - u) / u^3 in z = u^2 for |u| <= 7/16: Chebyshev interpolant (mpmath, error 4e-18) */
static const double ATAN_P[] = {-0.3333333333333333, 0.1999999999999941, -0.14285714285566806,
                                0.11111111096645038, -0.09090908355602592, 0.07692285554889286,
                                -0.06666241923359964, 0.05876946456755061, -0.05216679739313656,
                                0.04492259293193656, -0.033128134256069586, 0.014773184616983806};
enum { ATAN_N = 12 };
/* atan(1/2), atan(1), atan(3/2), atan(inf) = pi/2, and pi, as double-doubles */
static const double ATAN_BASE_H[] = {0.4636476090008061, 0.7853981633974483, 0.982793723247329,
                                     1.5707963267948966};
static const double ATAN_BASE_L[] = {2.2698777452961687e-17, 3.061616997868383e-17,
                                     1.3903311031230998e-17, 6.123233995736766e-17};
/* erfinv(x) / x in t = w - 3.125 (w = -log(1 - x^2) < 6.25), s - 3.25 (s = sqrt w < 4) and
 * s - 5 (up to s = 6.01, past x = 1 - 2^-53): Chebyshev interpolants (mpmath; errors 7e-18,
 * 1e-21, 3e-17 against values from 0.89 to 6) */
static const double ERFINV_A[] = {1.6536545626831027, 0.24015818242558834, -0.006033670871426851,
                              -0.0007407025341546431, 0.00018673420801981186,
                              -1.3882523393957483e-05, -1.3654691758785656e-06,
                              4.23478816822246e-07, -2.907039127564132e-08,
                              -4.1126604371632185e-09, 1.051223377050429e-09,
                              -5.414303283919504e-11, -1.2978805369932565e-11,
                              2.6305268312595183e-12, -8.07192593899004e-14,
                              -4.0020031087558496e-14, 6.521333511502239e-15,
                              -3.94018812230432e-17, -1.2215637192404172e-16,
                              1.5510787009902526e-17, 6.075050702072414e-19,
                              -3.4734793888538036e-19, 1.999259988861535e-20,
                              3.194015548136271e-21, -3.5932028927020693e-22};
static const double ERFINV_B[] = {3.0838856104922208, 1.0052589676941652, 0.005370914553555001,
                              -0.0037512085082121245, 0.002491442097961038, -0.0016882755359362853,
                              0.0009532893414239592, -0.00035503780510756996,
                              2.403151556929223e-05, 6.828703201414942e-05, -4.732070633468184e-05,
                              1.2465536859018514e-05, 2.9327235180168507e-06,
                              -3.9876255014725154e-06, 1.4810921483295583e-06,
                              -2.2964100025127747e-08, -2.444180810728449e-07,
                              1.24454427231787e-07, -2.2235813283779792e-08,
                              -8.765200202047997e-09, 8.397038447092605e-09,
                              -3.142488355226595e-09, 9.270507042853155e-11, 5.49816732454289e-10,
                              -1.9878122499023235e-10};
static const double ERFINV_C[] = {4.849906401408584, 1.0103004648645453, -0.0001387193183793902,
                              -0.00021503011982656274, 7.599527807604776e-05,
                              -1.9681770719043677e-05, 4.526052743790951e-06, -9.9302927406069e-07,
                              2.290516780486715e-07, -6.755650411430056e-08,
                              2.9021987809100164e-08, -1.525464535688987e-08,
                              7.815701028842222e-09, -3.471592786518304e-09,
                              1.3217356090705064e-09, -4.3752073162016196e-10,
                              6.646144734325846e-11, 4.2883063927487056e-11,
                              -1.968931701962243e-11};
enum { ERFINV_AN = 25, ERFINV_BN = 25, ERFINV_CN = 19 };
static const double PI_H = 3.141592653589793, PI_L = 1.2246467991473532e-16;
static const double LOG10E_H = 0.4342944819032518, LOG10E_L = 1.098319650216765e-17;
static const double LOG2_10_H = 3.321928094887362, LOG2_10_L = 1.661617516973592e-16;
static const double SQRT_HALF = 0.7071067811865476, EXP2_LIMIT = 1100, TANH_SPLIT = 0.55,
                    ERF_SPLIT = 1, ERF_ONE = 6;

static LLVMValueRef k(TargetCtx *c, double v)
{
    return LLVMConstReal(LLVMDoubleTypeInContext(c->ctx), v);
}

static LLVMValueRef fcmp(TargetCtx *c, LLVMRealPredicate p, LLVMValueRef a, double v)
{
    return LLVMBuildFCmp(c->b, p, a, k(c, v), "");
}

static LLVMValueRef sel(TargetCtx *c, LLVMValueRef cond, LLVMValueRef a, LLVMValueRef b)
{
    return LLVMBuildSelect(c->b, cond, a, b, "");
}

/* x where x is NaN, else r */
static LLVMValueRef nan_through(TargetCtx *c, LLVMValueRef x, LLVMValueRef r)
{
    return sel(c, LLVMBuildFCmp(c->b, LLVMRealUNO, x, x, ""), x, r);
}

/* x (hi + lo) times the double-double constant h + l, to about 2^-104 */
static DD mul_dd(TargetCtx *c, DD x, double h, double l)
{
    LLVMValueRef p = fp_mul(c, x.hi, k(c, h));
    LLVMValueRef err = fp_fma(c, x.hi, k(c, h), LLVMBuildFNeg(c->b, p, ""));
    return (DD){p, fp_add(c, err, fp_fma(c, x.hi, k(c, l), fp_mul(c, x.lo, k(c, h))))};
}

/* e^(r.hi + r.lo) for |r.hi| <= ln2 / 2: 1 + r.hi exactly, then the rest */
static LLVMValueRef exp_reduced(TargetCtx *c, DD r)
{
    LLVMValueRef z = fp_mul(c, r.hi, r.hi);
    DD one = fp_fast_two_sum(c, k(c, 1), r.hi);
    LLVMValueRef rest = fp_fma(c, z, fp_poly(c, EXP_Q, EXP_N, r.hi), fp_fma(c, r.lo, r.hi, r.lo));
    return fp_add(c, one.hi, fp_add(c, one.lo, rest));
}

/* 2^(t.hi + t.lo); NaN t.hi gives a number (callers select NaN themselves) */
static LLVMValueRef exp2_dd(TargetCtx *c, DD t)
{
    LLVMValueRef th = fp_call2(c, "llvm.maxnum", fp_call2(c, "llvm.minnum", t.hi, k(c, EXP2_LIMIT)),
                            k(c, -EXP2_LIMIT)); /* beyond: 0 or inf all the same */
    LLVMValueRef in_range = fcmp(c, LLVMRealOLT, target_intrinsic1(c, "llvm.fabs", t.hi),
                                 EXP2_LIMIT);
    LLVMValueRef n = target_intrinsic1(c, "llvm.rint", th);
    DD f = fp_two_sum(c, fp_sub(c, th, n), sel(c, in_range, t.lo, k(c, 0))); /* th - n: exact */
    LLVMValueRef m = exp_reduced(c, mul_dd(c, f, LN2_H, LN2_L));
    LLVMTypeRef types[2] = {LLVMDoubleTypeInContext(c->ctx), LLVMInt32TypeInContext(c->ctx)};
    LLVMValueRef args[2] = {m, LLVMBuildFPToSI(c->b, n, types[1], "")};
    return target_intrinsic(c, "llvm.ldexp", types, 2, args, 2);
}

/* e^(x.hi + x.lo) */
static LLVMValueRef exp_dd(TargetCtx *c, DD x)
{
    return exp2_dd(c, mul_dd(c, x, LOG2E_H, LOG2E_L));
}

/* log a = e ln 2 + l.hi + l.lo for a finite a > 0; returns e (an f64 integer) */
static LLVMValueRef log_parts(TargetCtx *c, LLVMValueRef a, DD *l)
{
    LLVMBuilderRef b = c->b;
    LLVMTypeRef types[2] = {LLVMDoubleTypeInContext(c->ctx), LLVMInt32TypeInContext(c->ctx)};
    LLVMValueRef fr = target_intrinsic(c, "llvm.frexp", types, 2, &a, 1);
    LLVMValueRef m = LLVMBuildExtractValue(b, fr, 0, "");
    LLVMValueRef e = LLVMBuildSIToFP(b, LLVMBuildExtractValue(b, fr, 1, ""), types[0], "");
    LLVMValueRef low = fcmp(c, LLVMRealOLT, m, SQRT_HALF);
    m = sel(c, low, fp_add(c, m, m), m);
    e = sel(c, low, fp_sub(c, e, k(c, 1)), e);
    LLVMValueRef f = fp_sub(c, m, k(c, 1));        /* exact */
    DD d = fp_fast_two_sum(c, k(c, 2), f);        /* 2 + f */
    LLVMValueRef s = LLVMBuildFDiv(b, f, d.hi, "");
    LLVMValueRef rem = fp_sub(c, fp_fma(c, LLVMBuildFNeg(b, s, ""), d.hi, f), fp_mul(c, s, d.lo));
    LLVMValueRef s_lo = LLVMBuildFDiv(b, rem, d.hi, ""); /* s + s_lo = f / (2 + f) */
    LLVMValueRef z = fp_mul(c, s, s), z_lo = fp_fma(c, s, s, LLVMBuildFNeg(b, z, ""));
    LLVMValueRef cube = fp_mul(c, z, s);                   /* s^3 = cube + cube_lo */
    LLVMValueRef cube_lo = fp_fma(c, z, s, LLVMBuildFNeg(b, cube, ""));
    cube_lo = fp_fma(c, z_lo, s, fp_fma(c, fp_mul(c, k(c, 3), z), s_lo, cube_lo));
    DD q = fp_fast_two_sum(c, k(c, TWO_THIRDS_H), fp_mul(c, z, fp_poly(c, LOG_P, LOG_N, z)));
    q.lo = fp_add(c, q.lo, k(c, TWO_THIRDS_L));
    LLVMValueRef t = fp_mul(c, cube, q.hi);                /* s^3 q = t + t_lo */
    LLVMValueRef t_lo = fp_fma(c, cube, q.hi, LLVMBuildFNeg(b, t, ""));
    t_lo = fp_fma(c, cube, q.lo, fp_fma(c, cube_lo, q.hi, t_lo));
    DD sum = fp_fast_two_sum(c, fp_add(c, s, s), t);
    *l = (DD){sum.hi, fp_add(c, sum.lo, fp_fma(c, k(c, 2), s_lo, t_lo))};
    return e;
}

/* log a (base2: log2 a) as a double-double, for a finite a > 0 */
static DD log_dd(TargetCtx *c, LLVMValueRef a, int base2)
{
    DD l;
    LLVMValueRef e = log_parts(c, a, &l);
    DD el = base2 ? (DD){e, k(c, 0)} : mul_dd(c, (DD){e, k(c, 0)}, LN2_H, LN2_L);
    DD ll = base2 ? mul_dd(c, l, LOG2E_H, LOG2E_L) : l;
    DD s = fp_fast_two_sum(c, el.hi, ll.hi); /* |e ln2| >= 0.69 > |log m| unless e = 0 */
    return (DD){s.hi, fp_add(c, s.lo, fp_add(c, el.lo, ll.lo))};
}

/* C's log specials: log(+-0) = -inf, log(negative) = NaN, log(inf) = inf, NaN stays; base
 * e (0), 2 or 10 */
static LLVMValueRef log_f64(TargetCtx *c, LLVMValueRef x, int base)
{
    DD l = log_dd(c, x, base == 2);
    if (base == 10)
        l = mul_dd(c, l, LOG10E_H, LOG10E_L);
    LLVMValueRef r = fp_add(c, l.hi, l.lo);
    r = sel(c, fcmp(c, LLVMRealOEQ, x, __builtin_inf()), x, r);
    r = sel(c, fcmp(c, LLVMRealOEQ, x, 0), k(c, -__builtin_inf()), r);
    return sel(c, fcmp(c, LLVMRealULT, x, 0), k(c, __builtin_nan("")), r);
}

static LLVMValueRef tanh_f64(TargetCtx *c, LLVMValueRef x)
{
    LLVMValueRef a = target_intrinsic1(c, "llvm.fabs", x), z = fp_mul(c, a, a);
    LLVMValueRef small = fp_fma(c, fp_mul(c, a, z), fp_poly(c, TANH_P, TANH_N, z), a);
    LLVMValueRef e = exp_dd(c, (DD){fp_add(c, a, a), k(c, 0)});
    LLVMValueRef big = fp_sub(c, k(c, 1), LLVMBuildFDiv(c->b, k(c, 2), fp_add(c, e, k(c, 1)), ""));
    LLVMValueRef r = sel(c, fcmp(c, LLVMRealOLT, a, TANH_SPLIT), small, big);
    return nan_through(c, x, fp_call2(c, "llvm.copysign", r, x));
}

static LLVMValueRef erf_f64(TargetCtx *c, LLVMValueRef x)
{
    LLVMBuilderRef b = c->b;
    LLVMValueRef a = target_intrinsic1(c, "llvm.fabs", x), z = fp_mul(c, a, a);
    LLVMValueRef h = fp_fma(c, z, fp_poly(c, ERF_H, ERF_N, z), k(c, TWO_SQRTPI_L));
    LLVMValueRef small = fp_fma(c, a, k(c, TWO_SQRTPI_H), fp_mul(c, a, h));
    LLVMValueRef z_lo = fp_fma(c, a, a, LLVMBuildFNeg(b, z, ""));  /* a^2 = z + z_lo */
    LLVMValueRef e = exp_dd(c, (DD){LLVMBuildFNeg(b, z, ""), LLVMBuildFNeg(b, z_lo, "")});
    LLVMValueRef t = LLVMBuildFDiv(b, fp_sub(c, a, k(c, 3)), fp_add(c, a, k(c, 3)), "");
    LLVMValueRef mid = fp_sub(c, k(c, 1), fp_mul(c, e, fp_poly(c, ERFC_G, ERFC_N, t)));
    LLVMValueRef r = sel(c, fcmp(c, LLVMRealOLT, a, ERF_ONE), mid, k(c, 1));
    r = sel(c, fcmp(c, LLVMRealOLT, a, ERF_SPLIT), small, r);
    return nan_through(c, x, fp_call2(c, "llvm.copysign", r, x));
}

/* log1p: 1 + x = u.hi + u.lo exactly; log(u.hi) in double-double plus u.lo / u.hi (the
 * rest of log(1 + u.lo / u.hi), below 2^-106 relative); x itself for +-0 */
static LLVMValueRef log1p_f64(TargetCtx *c, LLVMValueRef x)
{
    DD u = fp_two_sum(c, k(c, 1), x);
    DD l = log_dd(c, u.hi, 0);
    LLVMValueRef r = fp_add(c, l.hi, fp_add(c, l.lo, LLVMBuildFDiv(c->b, u.lo, u.hi, "")));
    r = sel(c, fcmp(c, LLVMRealOEQ, u.hi, __builtin_inf()), u.hi, r);
    r = sel(c, fcmp(c, LLVMRealOEQ, u.hi, 0), k(c, -__builtin_inf()), r);
    r = sel(c, fcmp(c, LLVMRealULT, u.hi, 0), k(c, __builtin_nan("")), r);
    return sel(c, fcmp(c, LLVMRealOEQ, x, 0), x, r);
}

static LLVMValueRef ldexp_f64(TargetCtx *c, LLVMValueRef m, LLVMValueRef n_float)
{
    LLVMTypeRef types[2] = {LLVMDoubleTypeInContext(c->ctx), LLVMInt32TypeInContext(c->ctx)};
    LLVMValueRef args[2] = {m, LLVMBuildFPToSI(c->b, n_float, types[1], "")};
    return target_intrinsic(c, "llvm.ldexp", types, 2, args, 2);
}

/* expm1: x log2 e = n + f (double-double), r = f ln 2, p = e^r - 1 = r + the rest of
 * exp_reduced's sum; then 2^n p + (2^n - 1) (exact but for one rounding) up to n = 53,
 * 2^n (1 + p) above; x itself below 2^-54 (signed zeros included), NaN stays */
static LLVMValueRef expm1_f64(TargetCtx *c, LLVMValueRef x)
{
    LLVMValueRef xc = fp_call2(c, "llvm.maxnum", fp_call2(c, "llvm.minnum", x, k(c, 800)), k(c, -800));
    DD t = mul_dd(c, (DD){xc, k(c, 0)}, LOG2E_H, LOG2E_L);
    LLVMValueRef n = target_intrinsic1(c, "llvm.rint", t.hi);
    DD r = mul_dd(c, fp_two_sum(c, fp_sub(c, t.hi, n), t.lo), LN2_H, LN2_L); /* t.hi - n: exact */
    LLVMValueRef z = fp_mul(c, r.hi, r.hi);
    LLVMValueRef rest = fp_fma(c, z, fp_poly(c, EXP_Q, EXP_N, r.hi), fp_fma(c, r.lo, r.hi, r.lo));
    LLVMValueRef p = fp_add(c, r.hi, rest);
    LLVMValueRef near = fp_add(c, ldexp_f64(c, p, n), fp_sub(c, ldexp_f64(c, k(c, 1), n), k(c, 1)));
    LLVMValueRef far = ldexp_f64(c, fp_add(c, k(c, 1), p), n);
    LLVMValueRef res = sel(c, fcmp(c, LLVMRealOGT, n, 53), far, near);
    LLVMValueRef tiny = fcmp(c, LLVMRealOLT, target_intrinsic1(c, "llvm.fabs", x), 0x1p-54);
    return nan_through(c, x, sel(c, tiny, x, res));
}

/* atan a for a >= 0 (or NaN): fdlibm's reduction atan a = atan c + atan((a - c) / (1 + a c))
 * for c = 0, 1/2, 1, 3/2, inf by the range of a (each numerator exact), then |u| <= 7/16
 * and atan u = u + u^3 P(u^2) */
static LLVMValueRef atan_pos(TargetCtx *c, LLVMValueRef a)
{
    static const double lim[4] = {39.0 / 16, 19.0 / 16, 11.0 / 16, 7.0 / 16};
    LLVMValueRef num = k(c, -1), den = a, bh = k(c, ATAN_BASE_H[3]), bl = k(c, ATAN_BASE_L[3]);
    LLVMValueRef nums[4] = {fp_sub(c, a, k(c, 1.5)), fp_sub(c, a, k(c, 1)),
                            fp_sub(c, fp_add(c, a, a), k(c, 1)), a};
    LLVMValueRef dens[4] = {fp_fma(c, a, k(c, 1.5), k(c, 1)), fp_add(c, a, k(c, 1)),
                            fp_add(c, a, k(c, 2)), k(c, 1)};
    for (int i = 0; i < 4; i++) { /* NaN stays in the last range: -1 / NaN */
        LLVMValueRef in = fcmp(c, LLVMRealOLT, a, lim[i]);
        num = sel(c, in, nums[i], num);
        den = sel(c, in, dens[i], den);
        bh = sel(c, in, k(c, i == 3 ? 0 : ATAN_BASE_H[2 - i]), bh);
        bl = sel(c, in, k(c, i == 3 ? 0 : ATAN_BASE_L[2 - i]), bl);
    }
    LLVMValueRef u = LLVMBuildFDiv(c->b, num, den, ""), z = fp_mul(c, u, u);
    LLVMValueRef p = fp_mul(c, fp_mul(c, u, z), fp_poly(c, ATAN_P, ATAN_N, z));
    return fp_add(c, bh, fp_add(c, u, fp_add(c, p, bl)));
}

/* atan2 of ay = |y|, ax = |x| (x_neg: x's sign bit): atan of the smaller over the larger (0
 * for two zeros, 1 for two infinities), pi/2 minus it when |y| > |x|, pi minus that for a
 * negative x; NaN stays */
static LLVMValueRef atan2_abs(TargetCtx *c, LLVMValueRef ay, LLVMValueRef ax, LLVMValueRef x_neg)
{
    LLVMBuilderRef b = c->b;
    LLVMValueRef swap = LLVMBuildFCmp(b, LLVMRealOGT, ay, ax, "");
    LLVMValueRef num = sel(c, swap, ax, ay), den = sel(c, swap, ay, ax);
    LLVMValueRef q = LLVMBuildFDiv(b, num, den, "");
    LLVMValueRef zeros = LLVMBuildAnd(b, fcmp(c, LLVMRealOEQ, num, 0), fcmp(c, LLVMRealOEQ, den, 0), "");
    LLVMValueRef infs = LLVMBuildAnd(b, fcmp(c, LLVMRealOEQ, ax, __builtin_inf()),
                                     fcmp(c, LLVMRealOEQ, ay, __builtin_inf()), "");
    q = sel(c, zeros, k(c, 0), sel(c, infs, k(c, 1), q));
    LLVMValueRef t = atan_pos(c, q);
    t = sel(c, swap, fp_sub(c, k(c, ATAN_BASE_H[3]), fp_sub(c, t, k(c, ATAN_BASE_L[3]))), t);
    return sel(c, x_neg, fp_sub(c, k(c, PI_H), fp_sub(c, t, k(c, PI_L))), t);
}

static LLVMValueRef sign_bit(TargetCtx *c, LLVMValueRef x)
{
    LLVMTypeRef i64 = LLVMInt64TypeInContext(c->ctx);
    LLVMValueRef bits = LLVMBuildBitCast(c->b, x, i64, "");
    return LLVMBuildICmp(c->b, LLVMIntSLT, bits, LLVMConstInt(i64, 0, 0), "");
}

static LLVMValueRef atan2_f64(TargetCtx *c, LLVMValueRef y, LLVMValueRef x)
{
    LLVMValueRef ay = target_intrinsic1(c, "llvm.fabs", y), ax = target_intrinsic1(c, "llvm.fabs", x);
    return fp_call2(c, "llvm.copysign", atan2_abs(c, ay, ax, sign_bit(c, x)), y);
}

/* sqrt(1 - x^2), 1 - x^2 rounded once (FMA); NaN for |x| > 1 */
static LLVMValueRef cos_of_asin(TargetCtx *c, LLVMValueRef x)
{
    return target_intrinsic1(c, "llvm.sqrt", fp_fma(c, LLVMBuildFNeg(c->b, x, ""), x, k(c, 1)));
}

/* asin x = atan2(x, sqrt(1 - x^2)), acos x = atan2(sqrt(1 - x^2), x) */
static LLVMValueRef asin_f64(TargetCtx *c, LLVMValueRef x)
{
    LLVMValueRef a = target_intrinsic1(c, "llvm.fabs", x);
    LLVMValueRef r = atan2_abs(c, a, cos_of_asin(c, a), LLVMConstNull(LLVMInt1TypeInContext(c->ctx)));
    return fp_call2(c, "llvm.copysign", r, x);
}

static LLVMValueRef acos_f64(TargetCtx *c, LLVMValueRef x)
{
    LLVMValueRef a = target_intrinsic1(c, "llvm.fabs", x);
    return atan2_abs(c, cos_of_asin(c, x), a, sign_bit(c, x));
}

/* e^a / 2 as e^(a - ln 2), which overflows where the result does */
static LLVMValueRef half_exp(TargetCtx *c, LLVMValueRef a)
{
    DD d = fp_two_sum(c, a, k(c, -LN2_H));
    return exp_dd(c, (DD){d.hi, fp_sub(c, d.lo, k(c, LN2_L))});
}

/* fdlibm's forms from t = expm1 |x|: (2t - t^2 / (t + 1)) / 2 below 1, (t + t / (t + 1)) / 2
 * below 22, e^|x| / 2 above; sign restored */
static LLVMValueRef sinh_f64(TargetCtx *c, LLVMValueRef x)
{
    LLVMValueRef a = target_intrinsic1(c, "llvm.fabs", x), t = expm1_f64(c, a);
    LLVMValueRef q = LLVMBuildFDiv(c->b, t, fp_add(c, t, k(c, 1)), "");
    LLVMValueRef small = fp_mul(c, k(c, 0.5), fp_sub(c, fp_add(c, t, t), fp_mul(c, t, q)));
    LLVMValueRef mid = fp_mul(c, k(c, 0.5), fp_add(c, t, q));
    LLVMValueRef r = sel(c, fcmp(c, LLVMRealOLT, a, 22), mid, half_exp(c, a));
    r = sel(c, fcmp(c, LLVMRealOLT, a, 1), small, r);
    return nan_through(c, x, fp_call2(c, "llvm.copysign", r, x));
}

/* 1 + t^2 / (2 (1 + t)) (t = expm1 |x|) below ln2 / 2, (e + 1/e) / 2 below 22, e^|x| / 2 above */
static LLVMValueRef cosh_f64(TargetCtx *c, LLVMValueRef x)
{
    LLVMBuilderRef b = c->b;
    LLVMValueRef a = target_intrinsic1(c, "llvm.fabs", x), t = expm1_f64(c, a);
    LLVMValueRef w = fp_add(c, k(c, 1), t);
    LLVMValueRef small = fp_add(c, k(c, 1), LLVMBuildFDiv(b, fp_mul(c, t, t), fp_add(c, w, w), ""));
    LLVMValueRef e = exp_dd(c, (DD){a, k(c, 0)});
    LLVMValueRef mid = fp_fma(c, k(c, 0.5), e, LLVMBuildFDiv(b, k(c, 0.5), e, ""));
    LLVMValueRef r = sel(c, fcmp(c, LLVMRealOLT, a, 22), mid, half_exp(c, a));
    r = sel(c, fcmp(c, LLVMRealOLT, a, 0.34657359027997264), small, r);
    return nan_through(c, x, r);
}

/* hypot: both scaled by 2^-e (e: the larger one's exponent), the sum of their squares in
 * double-double, its square root with one correction step, scaled back; inf if either is
 * (NaN or not), else NaN stays */
static LLVMValueRef hypot_f64(TargetCtx *c, LLVMValueRef x, LLVMValueRef y)
{
    LLVMBuilderRef b = c->b;
    LLVMValueRef ax = target_intrinsic1(c, "llvm.fabs", x), ay = target_intrinsic1(c, "llvm.fabs", y);
    LLVMValueRef gt = LLVMBuildFCmp(b, LLVMRealOGT, ax, ay, "");
    LLVMValueRef hi = sel(c, gt, ax, ay), lo = sel(c, gt, ay, ax);
    LLVMTypeRef types[2] = {LLVMDoubleTypeInContext(c->ctx), LLVMInt32TypeInContext(c->ctx)};
    LLVMValueRef fr = target_intrinsic(c, "llvm.frexp", types, 2, &hi, 1);
    LLVMValueRef e = LLVMBuildSIToFP(b, LLVMBuildExtractValue(b, fr, 1, ""), types[0], "");
    LLVMValueRef hs = LLVMBuildExtractValue(b, fr, 0, ""), ls = ldexp_f64(c, lo, LLVMBuildFNeg(b, e, ""));
    LLVMValueRef p = fp_mul(c, hs, hs), q = fp_mul(c, ls, ls);
    LLVMValueRef err = fp_add(c, fp_fma(c, hs, hs, LLVMBuildFNeg(b, p, "")),
                              fp_fma(c, ls, ls, LLVMBuildFNeg(b, q, "")));
    DD s = fp_fast_two_sum(c, p, q);
    LLVMValueRef s_lo = fp_add(c, s.lo, err), r = target_intrinsic1(c, "llvm.sqrt", s.hi);
    LLVMValueRef d = fp_add(c, fp_fma(c, LLVMBuildFNeg(b, r, ""), r, s.hi), s_lo);
    r = fp_add(c, r, LLVMBuildFDiv(b, d, fp_add(c, r, r), ""));
    r = sel(c, fcmp(c, LLVMRealOEQ, hi, 0), lo, ldexp_f64(c, r, e)); /* lo: 0, or NaN */
    LLVMValueRef inf = LLVMBuildOr(b, fcmp(c, LLVMRealOEQ, ax, __builtin_inf()),
                                   fcmp(c, LLVMRealOEQ, ay, __builtin_inf()), "");
    return sel(c, inf, k(c, __builtin_inf()), r);
}

/* log a + ln 2, for the large arguments of asinh and acosh (a finite, > 0) */
static LLVMValueRef log_twice(TargetCtx *c, LLVMValueRef a)
{
    DD l = log_dd(c, a, 0);
    DD s = fp_fast_two_sum(c, l.hi, k(c, LN2_H));
    return fp_add(c, s.hi, fp_add(c, s.lo, fp_add(c, l.lo, k(c, LN2_L))));
}

/* fdlibm's forms: a below 2^-28, log1p(a + a^2 / (1 + sqrt(1 + a^2))) to 2,
 * log(2a + 1 / (sqrt(a^2 + 1) + a)) to 2^28, log a + ln 2 above; sign restored */
static LLVMValueRef asinh_f64(TargetCtx *c, LLVMValueRef x)
{
    LLVMBuilderRef b = c->b;
    LLVMValueRef a = target_intrinsic1(c, "llvm.fabs", x), z = fp_mul(c, a, a);
    LLVMValueRef root = target_intrinsic1(c, "llvm.sqrt", fp_add(c, z, k(c, 1)));
    LLVMValueRef small = log1p_f64(c, fp_add(c, a, LLVMBuildFDiv(b, z, fp_add(c, k(c, 1), root), "")));
    LLVMValueRef mid = log_f64(c, fp_add(c, fp_add(c, a, a), LLVMBuildFDiv(b, k(c, 1), fp_add(c, root, a), "")), 0);
    LLVMValueRef r = sel(c, fcmp(c, LLVMRealOLE, a, 0x1p28), mid, log_twice(c, a));
    r = sel(c, fcmp(c, LLVMRealOLE, a, 2), small, r);
    r = sel(c, fcmp(c, LLVMRealOLT, a, 0x1p-28), a, r);
    r = sel(c, fcmp(c, LLVMRealOEQ, a, __builtin_inf()), a, r);
    return nan_through(c, x, fp_call2(c, "llvm.copysign", r, x));
}

/* log1p(t + sqrt(2t + t^2)), t = x - 1 (exact), to 2; log(2x - 1 / (x + sqrt(x^2 - 1))) to
 * 2^28; log x + ln 2 above; NaN below 1 */
static LLVMValueRef acosh_f64(TargetCtx *c, LLVMValueRef x)
{
    LLVMBuilderRef b = c->b;
    LLVMValueRef t = fp_sub(c, x, k(c, 1));
    LLVMValueRef small = log1p_f64(c, fp_add(c, t, target_intrinsic1(c, "llvm.sqrt", fp_fma(c, t, t, fp_add(c, t, t)))));
    LLVMValueRef root = target_intrinsic1(c, "llvm.sqrt", fp_fma(c, x, x, k(c, -1)));
    LLVMValueRef mid = log_f64(c, fp_sub(c, fp_add(c, x, x), LLVMBuildFDiv(b, k(c, 1), fp_add(c, x, root), "")), 0);
    LLVMValueRef r = sel(c, fcmp(c, LLVMRealOLE, x, 0x1p28), mid, log_twice(c, x));
    r = sel(c, fcmp(c, LLVMRealOLE, x, 2), small, r);
    r = sel(c, fcmp(c, LLVMRealOEQ, x, __builtin_inf()), x, r);
    return sel(c, fcmp(c, LLVMRealUGE, x, 1), r, k(c, __builtin_nan("")));
}

/* log1p(2a + 2a^2 / (1 - a)) / 2 below 1/2, log1p(2a / (1 - a)) / 2 above: inf at 1, NaN
 * past it (log1p of less than -1); sign restored */
static LLVMValueRef atanh_f64(TargetCtx *c, LLVMValueRef x)
{
    LLVMBuilderRef b = c->b;
    LLVMValueRef a = target_intrinsic1(c, "llvm.fabs", x), a2 = fp_add(c, a, a);
    LLVMValueRef q = LLVMBuildFDiv(b, a2, fp_sub(c, k(c, 1), a), "");
    LLVMValueRef small = fp_fma(c, q, a, a2);
    LLVMValueRef r = log1p_f64(c, sel(c, fcmp(c, LLVMRealOLT, a, 0.5), small, q));
    return nan_through(c, x, fp_call2(c, "llvm.copysign", fp_mul(c, k(c, 0.5), r), x));
}

/* cbrt: a first guess from the exponent bits (a third of them plus a bias, about 5 bits), two
 * Halley steps t (t^3 + 2a) / (2t^3 + a) (45 bits), one Newton step with t^3 - a exact;
 * subnormals scaled by 2^54 first, the largest numbers by 2^-54 (2t^3 overflows); +-0, +-inf
 * and NaN stay */
static LLVMValueRef cbrt_f64(TargetCtx *c, LLVMValueRef x)
{
    LLVMBuilderRef b = c->b;
    LLVMTypeRef i64 = LLVMInt64TypeInContext(c->ctx);
    LLVMValueRef a = target_intrinsic1(c, "llvm.fabs", x);
    LLVMValueRef sub = fcmp(c, LLVMRealOLT, a, 0x1p-1022), big = fcmp(c, LLVMRealOGT, a, 0x1p900);
    LLVMValueRef as = sel(c, sub, fp_mul(c, a, k(c, 0x1p54)), sel(c, big, fp_mul(c, a, k(c, 0x1p-54)), a));
    LLVMValueRef hi = LLVMBuildLShr(b, LLVMBuildBitCast(b, as, i64, ""), LLVMConstInt(i64, 32, 0), "");
    hi = LLVMBuildAdd(b, LLVMBuildUDiv(b, hi, LLVMConstInt(i64, 3, 0), ""), LLVMConstInt(i64, 0x2a9f7893, 0), "");
    LLVMValueRef t = LLVMBuildBitCast(b, LLVMBuildShl(b, hi, LLVMConstInt(i64, 32, 0), ""), LLVMTypeOf(x), "");
    for (int i = 0; i < 2; i++) {
        LLVMValueRef t3 = fp_mul(c, fp_mul(c, t, t), t);
        LLVMValueRef num = fp_add(c, t3, fp_add(c, as, as)), den = fp_add(c, fp_add(c, t3, t3), as);
        t = fp_mul(c, t, LLVMBuildFDiv(b, num, den, ""));
    }
    LLVMValueRef t2 = fp_mul(c, t, t), t2e = fp_fma(c, t, t, LLVMBuildFNeg(b, t2, ""));
    LLVMValueRef t3 = fp_mul(c, t2, t), t3e = fp_fma(c, t2e, t, fp_fma(c, t2, t, LLVMBuildFNeg(b, t3, "")));
    LLVMValueRef res = fp_add(c, fp_sub(c, t3, as), t3e);
    t = fp_sub(c, t, LLVMBuildFDiv(b, res, fp_mul(c, k(c, 3), t2), ""));
    t = sel(c, sub, fp_mul(c, t, k(c, 0x1p-18)), sel(c, big, fp_mul(c, t, k(c, 0x1p18)), t));
    LLVMValueRef keep = LLVMBuildOr(b, fcmp(c, LLVMRealOEQ, a, 0), fcmp(c, LLVMRealUEQ, a, __builtin_inf()), "");
    return sel(c, keep, x, fp_call2(c, "llvm.copysign", t, x));
}

/* erfinv x = x P(w), w = -log(1 - x^2) (1 - x^2 rounded once, its log in double-double):
 * Giles's split of the range (w < 6.25, sqrt w < 4, above) with our own fits; +-inf at +-1,
 * NaN past them */
static LLVMValueRef erfinv_f64(TargetCtx *c, LLVMValueRef x)
{
    LLVMValueRef a = target_intrinsic1(c, "llvm.fabs", x);
    LLVMValueRef p = fp_fma(c, LLVMBuildFNeg(c->b, a, ""), a, k(c, 1));
    DD l = log_dd(c, sel(c, fcmp(c, LLVMRealOGT, p, 0), p, k(c, 1)), 0);
    LLVMValueRef w = LLVMBuildFNeg(c->b, fp_add(c, l.hi, l.lo), ""), s = target_intrinsic1(c, "llvm.sqrt", w);
    LLVMValueRef pa = fp_poly(c, ERFINV_A, ERFINV_AN, fp_sub(c, w, k(c, 3.125)));
    LLVMValueRef pb = fp_poly(c, ERFINV_B, ERFINV_BN, fp_sub(c, s, k(c, 3.25)));
    LLVMValueRef pc = fp_poly(c, ERFINV_C, ERFINV_CN, fp_sub(c, s, k(c, 5)));
    LLVMValueRef q = sel(c, fcmp(c, LLVMRealOLT, s, 4), pb, pc);
    q = sel(c, fcmp(c, LLVMRealOLT, w, 6.25), pa, q);
    LLVMValueRef r = fp_mul(c, x, q);
    r = sel(c, fcmp(c, LLVMRealOEQ, a, 1), fp_call2(c, "llvm.copysign", k(c, __builtin_inf()), x), r);
    return sel(c, fcmp(c, LLVMRealULE, a, 1), r, k(c, __builtin_nan("")));
}

/* erfinv for every target without a library function for it (the C library has none): f64,
 * or f32 widened and rounded once */
LLVMValueRef target_erfinv(TargetCtx *c, LLVMValueRef x, int is_f64)
{
    if (is_f64)
        return erfinv_f64(c, x);
    LLVMValueRef r = erfinv_f64(c, LLVMBuildFPExt(c->b, x, LLVMDoubleTypeInContext(c->ctx), ""));
    return LLVMBuildFPTrunc(c->b, r, LLVMTypeOf(x), "");
}

LLVMValueRef target_math2_f64(TargetCtx *c, TirBinOp op, LLVMValueRef x, LLVMValueRef y)
{
    switch (op) {
    case BIN_POW: return target_pow_f64(c, x, y);
    case BIN_ATAN2: return atan2_f64(c, x, y);
    case BIN_HYPOT: return hypot_f64(c, x, y);
    default: return target_math2_llvm(c, op, x, y, 1);
    }
}

LLVMValueRef target_math_f64(TargetCtx *c, TirUnOp op, LLVMValueRef x)
{
    switch (op) {
    case UN_EXP: return nan_through(c, x, exp_dd(c, (DD){x, k(c, 0)}));
    case UN_EXP2: return nan_through(c, x, exp2_dd(c, (DD){x, k(c, 0)}));
    case UN_LOG: return log_f64(c, x, 0);
    case UN_LOG2: return log_f64(c, x, 2);
    case UN_LOG10: return log_f64(c, x, 10);
    case UN_TAN: return target_tan_f64(c, x);
    case UN_ATAN: return fp_call2(c, "llvm.copysign", atan_pos(c, target_intrinsic1(c, "llvm.fabs", x)), x);
    case UN_ASIN: return asin_f64(c, x);
    case UN_ACOS: return acos_f64(c, x);
    case UN_SINH: return sinh_f64(c, x);
    case UN_COSH: return cosh_f64(c, x);
    case UN_ASINH: return asinh_f64(c, x);
    case UN_ACOSH: return acosh_f64(c, x);
    case UN_ATANH: return atanh_f64(c, x);
    case UN_CBRT: return cbrt_f64(c, x);
    case UN_EXP10:
        return nan_through(c, x, exp2_dd(c, mul_dd(c, (DD){x, k(c, 0)}, LOG2_10_H, LOG2_10_L)));
    case UN_ERFINV: return erfinv_f64(c, x);
    case UN_SIN: return target_sincos_f64(c, x, 0);
    case UN_COS: return target_sincos_f64(c, x, 1);
    case UN_TANH: return tanh_f64(c, x);
    case UN_ERF: return erf_f64(c, x);
    case UN_LOG1P: return log1p_f64(c, x);
    case UN_EXPM1: return expm1_f64(c, x);
    default: return target_math_llvm(c, op, x, 1);
    }
}

/* y is an integer (infinities count as even ones) */
static LLVMValueRef integral(TargetCtx *c, LLVMValueRef y)
{
    return LLVMBuildFCmp(c->b, LLVMRealOEQ, target_intrinsic1(c, "llvm.trunc", y), y, "");
}

/* 2^(y log2 |x|) with y log2 |x| a double-double; log2 of 0 and inf as -inf and inf */
static LLVMValueRef pow_magnitude(TargetCtx *c, LLVMValueRef ax, LLVMValueRef y)
{
    DD l = log_dd(c, ax, 1);
    l.hi = sel(c, fcmp(c, LLVMRealOEQ, ax, __builtin_inf()), ax, l.hi);
    l.hi = sel(c, fcmp(c, LLVMRealOEQ, ax, 0), k(c, -__builtin_inf()), l.hi);
    LLVMValueRef t = fp_mul(c, y, l.hi);
    LLVMValueRef t_lo = fp_fma(c, y, l.lo, fp_fma(c, y, l.hi, LLVMBuildFNeg(c->b, t, "")));
    return exp2_dd(c, (DD){t, t_lo}); /* t_lo (NaN where t is infinite) is dropped there */
}

/* C's pow: a negative x with an integral y (its sign from y's parity), signed zeros,
 * pow(x, 0) = pow(1, y) = 1 (NaN included), pow(-1, +-inf) = 1, NaN for a finite negative x
 * and a fractional y, NaN in, NaN out otherwise */
LLVMValueRef target_pow_f64(TargetCtx *c, LLVMValueRef x, LLVMValueRef y)
{
    LLVMBuilderRef b = c->b;
    LLVMValueRef ax = target_intrinsic1(c, "llvm.fabs", x);
    LLVMValueRef r = pow_magnitude(c, ax, y);
    LLVMValueRef whole = integral(c, y), even = integral(c, fp_mul(c, y, k(c, 0.5)));
    LLVMValueRef odd = LLVMBuildAnd(b, whole, LLVMBuildNot(b, even, ""), "");
    LLVMValueRef sign = fp_call2(c, "llvm.copysign", k(c, 1), x); /* -0 counts as negative */
    r = sel(c, LLVMBuildAnd(b, fcmp(c, LLVMRealOLT, sign, 0), odd, ""), LLVMBuildFNeg(b, r, ""), r);
    LLVMValueRef finite_neg = LLVMBuildAnd(b, fcmp(c, LLVMRealOLT, x, 0),
                                           fcmp(c, LLVMRealONE, x, -__builtin_inf()), "");
    LLVMValueRef no_real = LLVMBuildAnd(b, finite_neg, LLVMBuildNot(b, whole, ""), "");
    r = sel(c, no_real, k(c, __builtin_nan("")), r);
    r = sel(c, LLVMBuildFCmp(b, LLVMRealUNO, x, y, ""), fp_add(c, x, y), r);
    LLVMValueRef y_inf = fcmp(c, LLVMRealOEQ, target_intrinsic1(c, "llvm.fabs", y),
                              __builtin_inf());
    LLVMValueRef unit = LLVMBuildOr(b, fcmp(c, LLVMRealOEQ, y, 0), fcmp(c, LLVMRealOEQ, x, 1), "");
    unit = LLVMBuildOr(b, unit, LLVMBuildAnd(b, y_inf, fcmp(c, LLVMRealOEQ, ax, 1), ""), "");
    return sel(c, unit, k(c, 1), r);
}
