/* target_math_f32.c: tanh, erf, log1p, expm1 and pow for f32 built from exp2, log2, ldexp,
 * frexp, FMA and polynomials, for targets with no device math library to call (AMD GPUs; the
 * emulated AMD path runs the same code, so CI checks it against libm). Both sides of each range
 * are computed and one is selected: no branches in the elementwise code. f32 tan, atan, asin,
 * acos, sinh, cosh, log10, asinh, acosh, atanh, cbrt, exp10, erfinv, atan2 and hypot are
 * target_math_f64.c's, the argument widened and the result rounded once (within about half an
 * ulp, at f64 speed).
 * - tanh: x + x^3 P(x^2) below 0.55 (P of degree 4, a Chebyshev fit of (tanh x - x) / x^3:
 *   4e-9 relative), 1 - 2 / (2^(2x log2 e) + 1) above; sign restored. About 2 ulp.
 * - erf: x P(x^2) below 1 (degree 6, 1.4e-9), 1 - 2^(Q(x - 2.46) - x^2 log2 e) up to 3.92
 *   (Q of degree 8 fits log2 erfc(x) + x^2 log2 e: 9e-9 relative in erfc), 1 beyond. About
 *   2.3 ulp.
 * - pow: 2^(y log2 |x|), with C's special cases (a negative x with an integral y, signed zeros,
 *   pow(x, 0) = pow(1, y) = 1, pow(-1, +-inf) = 1, NaN for a finite negative x and a fractional y).
 *   Its relative error grows with |y log2 |x||: about 1e-6 where that is under 16.
 * - log1p: u = 1 + x and its rounding error lo (exact, two_sum); u = 2^e m with m in
 *   [sqrt(1/2), sqrt(2)); f = m - 1 (exact), s = f / (2 + f), and log(1 + f) =
 *   f - (f^2/2 - s (f^2/2 + R)), R = s^2 (2/3 + 2/5 s^2 + ... + 2/11 s^8) (fdlibm's form, the
 *   small correction after the exact f); plus e ln2 (in two parts) and lo / u. No hardware
 *   log: accurate near 0 (log1p(x) = x for tiny x) and everywhere else to about 1 ulp.
 * - expm1: n = rint(x log2 e), r = x - n ln2 (Cody-Waite, two parts, FMA), p = e^r - 1 =
 *   r + r^2 Q(r) (Taylor to r^8), then 2^n p + (2^n - 1) (both exact up to one rounding) for
 *   n <= 24, 2^n (1 + p) above; -1 below about -17, inf above 88.72. About 1 ulp.
 * Coefficients: Chebyshev interpolation in double, rounded to f32 (log1p's and expm1's:
 * Taylor's). */
#include "target_fp.h"

static const double TANH_P[] = {-0.3333333134651184, 0.13333117961883545, -0.053910065442323685,
                                0.021312745288014412, -0.006615754682570696};
static const double ERF_P[] = {1.1283791065216064, -0.3761262595653534, 0.11283597350120544,
                               -0.02685432881116867, 0.005189312156289816,
                               -0.0008018855005502701, 7.882496720412746e-05};
static const double ERFC_Q[] = {-2.225526809692383, -0.5153622627258301, 0.08285453170537949,
                                -0.016175076365470886, 0.0032478277571499348,
                                -0.0006336786900646985, 0.00011696223373292014,
                                -1.9920798877137713e-05, 2.3731840883556288e-06};
/* 2 atanh(s) = 2s + s R, R / s^2 in z = s^2: 2/3, 2/5, ... */
static const double LOG1P_R[] = {2.0 / 3, 2.0 / 5, 2.0 / 7, 2.0 / 9, 2.0 / 11};
/* (e^r - 1 - r) / r^2: 1/2!, 1/3!, ... 1/8! */
static const double EXPM1_Q[] = {1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040,
                                 1.0 / 40320};
enum { TANH_N = 5, ERF_N = 7, ERFC_N = 9, LOG1P_N = 5, EXPM1_N = 7 };
/* ln 2 in two parts: the first with 16 significant bits (times any f32 exponent: exact) */
static const double LN2_HI = 0.693138122558593750, LN2_LO = 9.05800061445916e-06;
static const double LOG2E = 1.4426950408889634, TANH_SPLIT = 0.55, ERF_SPLIT = 1.0,
                    ERFC_MID = 2.46, ERF_ONE = 3.92;

static LLVMValueRef k(TargetCtx *c, double v)
{
    return LLVMConstReal(LLVMFloatTypeInContext(c->ctx), v);
}

static LLVMValueRef lt(TargetCtx *c, LLVMValueRef a, double v)
{
    return LLVMBuildFCmp(c->b, LLVMRealOLT, a, k(c, v), "");
}

LLVMValueRef target_tanh_f32(TargetCtx *c, LLVMValueRef x)
{
    LLVMBuilderRef b = c->b;
    LLVMValueRef a = target_intrinsic1(c, "llvm.fabs", x), u = LLVMBuildFMul(b, a, a, "");
    LLVMValueRef small = fp_fma(c, LLVMBuildFMul(b, a, u, ""), fp_poly(c, TANH_P, TANH_N, u), a);
    LLVMValueRef e = target_intrinsic1(c, "llvm.exp2", LLVMBuildFMul(b, a, k(c, 2 * LOG2E), ""));
    LLVMValueRef half = LLVMBuildFDiv(b, k(c, 2), LLVMBuildFAdd(b, e, k(c, 1), ""), "");
    LLVMValueRef big = LLVMBuildFSub(b, k(c, 1), half, "");
    return fp_call2(c, "llvm.copysign", LLVMBuildSelect(b, lt(c, a, TANH_SPLIT), small, big, ""), x);
}

LLVMValueRef target_erf_f32(TargetCtx *c, LLVMValueRef x)
{
    LLVMBuilderRef b = c->b;
    LLVMValueRef a = target_intrinsic1(c, "llvm.fabs", x), u = LLVMBuildFMul(b, a, a, "");
    LLVMValueRef small = LLVMBuildFMul(b, a, fp_poly(c, ERF_P, ERF_N, u), "");
    LLVMValueRef q = fp_poly(c, ERFC_Q, ERFC_N, LLVMBuildFSub(b, a, k(c, ERFC_MID), ""));
    LLVMValueRef log2_erfc = fp_fma(c, LLVMBuildFNeg(b, u, ""), k(c, LOG2E), q);
    LLVMValueRef erfc = target_intrinsic1(c, "llvm.exp2", log2_erfc);
    LLVMValueRef mid = LLVMBuildFSub(b, k(c, 1), erfc, "");
    LLVMValueRef one = LLVMBuildFCmp(b, LLVMRealOGE, a, k(c, ERF_ONE), ""); /* NaN: mid, NaN */
    LLVMValueRef r = LLVMBuildSelect(b, lt(c, a, ERF_SPLIT), small,
                                     LLVMBuildSelect(b, one, k(c, 1), mid, ""), "");
    return fp_call2(c, "llvm.copysign", r, x);
}

static LLVMValueRef sel(TargetCtx *c, LLVMValueRef cond, LLVMValueRef a, LLVMValueRef b)
{
    return LLVMBuildSelect(c->b, cond, a, b, "");
}

static LLVMValueRef is_nan(TargetCtx *c, LLVMValueRef x)
{
    return LLVMBuildFCmp(c->b, LLVMRealUNO, x, x, "");
}

/* x as x itself where it is +-0 or NaN (signs and payloads kept), else r */
static LLVMValueRef zero_nan_through(TargetCtx *c, LLVMValueRef x, LLVMValueRef r)
{
    LLVMValueRef z = LLVMBuildFCmp(c->b, LLVMRealOEQ, x, k(c, 0), "");
    return sel(c, LLVMBuildOr(c->b, z, is_nan(c, x), ""), x, r);
}

static LLVMValueRef to_i32(TargetCtx *c, LLVMValueRef v)
{
    return LLVMBuildFPToSI(c->b, v, LLVMInt32TypeInContext(c->ctx), "");
}

static LLVMValueRef ldexp_f32(TargetCtx *c, LLVMValueRef m, LLVMValueRef n_float)
{
    LLVMTypeRef types[2] = {LLVMFloatTypeInContext(c->ctx), LLVMInt32TypeInContext(c->ctx)};
    LLVMValueRef args[2] = {m, to_i32(c, n_float)};
    return target_intrinsic(c, "llvm.ldexp", types, 2, args, 2);
}

/* log(u) - e ln2 = log(1 + f), f in [sqrt(1/2) - 1, sqrt(2) - 1), for u > 0; *e gets e */
static LLVMValueRef log1p_reduced(TargetCtx *c, LLVMValueRef u, LLVMValueRef *e)
{
    LLVMBuilderRef b = c->b;
    LLVMTypeRef types[2] = {LLVMFloatTypeInContext(c->ctx), LLVMInt32TypeInContext(c->ctx)};
    LLVMValueRef fr = target_intrinsic(c, "llvm.frexp", types, 2, &u, 1);
    LLVMValueRef m = LLVMBuildExtractValue(b, fr, 0, "");
    *e = LLVMBuildSIToFP(b, LLVMBuildExtractValue(b, fr, 1, ""), types[0], "");
    LLVMValueRef low = lt(c, m, 0.70710678118654752);
    m = sel(c, low, fp_add(c, m, m), m);
    *e = sel(c, low, fp_sub(c, *e, k(c, 1)), *e);
    LLVMValueRef f = fp_sub(c, m, k(c, 1)); /* exact */
    LLVMValueRef s = LLVMBuildFDiv(b, f, fp_add(c, f, k(c, 2)), ""), z = fp_mul(c, s, s);
    LLVMValueRef r = fp_mul(c, z, fp_poly(c, LOG1P_R, LOG1P_N, z));
    LLVMValueRef hfsq = fp_mul(c, k(c, 0.5), fp_mul(c, f, f));
    return fp_sub(c, f, fp_sub(c, hfsq, fp_mul(c, s, fp_add(c, hfsq, r))));
}

LLVMValueRef target_log1p_f32(TargetCtx *c, LLVMValueRef x)
{
    DD u = fp_two_sum(c, k(c, 1), x); /* 1 + x = u.hi + u.lo exactly */
    LLVMValueRef e, l = log1p_reduced(c, u.hi, &e);
    LLVMValueRef tail = fp_fma(c, e, k(c, LN2_LO), LLVMBuildFDiv(c->b, u.lo, u.hi, ""));
    LLVMValueRef r = fp_fma(c, e, k(c, LN2_HI), fp_add(c, l, tail));
    r = sel(c, LLVMBuildFCmp(c->b, LLVMRealOEQ, u.hi, k(c, __builtin_inf()), ""), u.hi, r);
    r = sel(c, LLVMBuildFCmp(c->b, LLVMRealOEQ, u.hi, k(c, 0), ""), k(c, -__builtin_inf()), r);
    r = sel(c, lt(c, u.hi, 0), k(c, __builtin_nan("")), r);
    return zero_nan_through(c, x, r);
}

LLVMValueRef target_expm1_f32(TargetCtx *c, LLVMValueRef x)
{
    LLVMBuilderRef b = c->b;
    LLVMValueRef xc = fp_call2(c, "llvm.maxnum", fp_call2(c, "llvm.minnum", x, k(c, 90)), k(c, -30));
    LLVMValueRef n = target_intrinsic1(c, "llvm.rint", fp_mul(c, xc, k(c, LOG2E)));
    LLVMValueRef neg_n = LLVMBuildFNeg(b, n, "");
    LLVMValueRef r = fp_fma(c, neg_n, k(c, LN2_LO), fp_fma(c, neg_n, k(c, LN2_HI), xc));
    LLVMValueRef p = fp_fma(c, fp_mul(c, r, r), fp_poly(c, EXPM1_Q, EXPM1_N, r), r);
    LLVMValueRef near = fp_add(c, ldexp_f32(c, p, n), fp_sub(c, ldexp_f32(c, k(c, 1), n), k(c, 1)));
    LLVMValueRef far = ldexp_f32(c, fp_add(c, k(c, 1), p), n);
    LLVMValueRef big = LLVMBuildFCmp(b, LLVMRealOGT, n, k(c, 24), "");
    return zero_nan_through(c, x, sel(c, big, far, near));
}

static LLVMValueRef to_f64(TargetCtx *c, LLVMValueRef x)
{
    return LLVMBuildFPExt(c->b, x, LLVMDoubleTypeInContext(c->ctx), "");
}

static LLVMValueRef to_f32(TargetCtx *c, LLVMValueRef x)
{
    return LLVMBuildFPTrunc(c->b, x, LLVMFloatTypeInContext(c->ctx), "");
}

LLVMValueRef target_math_amd(TargetCtx *c, TirUnOp op, LLVMValueRef x, int is_f64)
{
    if (is_f64)
        return target_math_f64(c, op, x);
    switch (op) {
    case UN_TANH: return target_tanh_f32(c, x);
    case UN_ERF: return target_erf_f32(c, x);
    case UN_LOG1P: return target_log1p_f32(c, x);
    case UN_EXPM1: return target_expm1_f32(c, x);
    case UN_TAN: case UN_ATAN: case UN_ASIN: case UN_ACOS: case UN_SINH: case UN_COSH:
    case UN_LOG10: case UN_ASINH: case UN_ACOSH: case UN_ATANH: case UN_CBRT: case UN_EXP10:
    case UN_ERFINV: /* the f64 function, rounded once: within about half an ulp */
        return to_f32(c, target_math_f64(c, op, to_f64(c, x)));
    default: return target_math_llvm(c, op, x, is_f64);
    }
}

LLVMValueRef target_math2_amd(TargetCtx *c, TirBinOp op, LLVMValueRef x, LLVMValueRef y, int is_f64)
{
    if (is_f64)
        return target_math2_f64(c, op, x, y);
    switch (op) {
    case BIN_POW: return target_pow_f32(c, x, y);
    case BIN_ATAN2: case BIN_HYPOT:
        return to_f32(c, target_math2_f64(c, op, to_f64(c, x), to_f64(c, y)));
    default: return target_math2_llvm(c, op, x, y, 0);
    }
}

static LLVMValueRef eq(TargetCtx *c, LLVMValueRef a, double v)
{
    return LLVMBuildFCmp(c->b, LLVMRealOEQ, a, k(c, v), "");
}

/* y is an integer (infinities count as even ones), odd one */
static LLVMValueRef integral(TargetCtx *c, LLVMValueRef y)
{
    return LLVMBuildFCmp(c->b, LLVMRealOEQ, target_intrinsic1(c, "llvm.trunc", y), y, "");
}

LLVMValueRef target_pow_f32(TargetCtx *c, LLVMValueRef x, LLVMValueRef y)
{
    LLVMBuilderRef b = c->b;
    LLVMValueRef ax = target_intrinsic1(c, "llvm.fabs", x);
    LLVMValueRef l = LLVMBuildFMul(b, y, target_intrinsic1(c, "llvm.log2", ax), "");
    LLVMValueRef r = target_intrinsic1(c, "llvm.exp2", l);
    LLVMValueRef whole = integral(c, y);
    LLVMValueRef even = integral(c, LLVMBuildFMul(b, y, k(c, 0.5), ""));
    LLVMValueRef odd = LLVMBuildAnd(b, whole, LLVMBuildNot(b, even, ""), "");
    LLVMValueRef sign = fp_call2(c, "llvm.copysign", k(c, 1), x); /* -0 counts as negative */
    r = LLVMBuildSelect(b, LLVMBuildAnd(b, lt(c, sign, 0), odd, ""), LLVMBuildFNeg(b, r, ""), r, "");
    LLVMValueRef finite_neg = LLVMBuildAnd(b, lt(c, x, 0), /* pow(-inf, 0.5) = inf */
                                           LLVMBuildFCmp(b, LLVMRealONE, x, k(c, -__builtin_inf()), ""), "");
    LLVMValueRef no_real = LLVMBuildAnd(b, finite_neg, LLVMBuildNot(b, whole, ""), "");
    r = LLVMBuildSelect(b, no_real, k(c, __builtin_nan("")), r, "");
    LLVMValueRef y_inf = eq(c, target_intrinsic1(c, "llvm.fabs", y), __builtin_inf());
    LLVMValueRef unit = LLVMBuildOr(b, eq(c, y, 0), eq(c, x, 1), "");
    unit = LLVMBuildOr(b, unit, LLVMBuildAnd(b, y_inf, eq(c, ax, 1), ""), "");
    return LLVMBuildSelect(b, unit, k(c, 1), r, "");
}
