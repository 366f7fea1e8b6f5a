/* target_math_f32.c: tanh, erf and pow for f32 built from exp2, log2, FMA and polynomials, for
 * targets with no device math library to call (AMD GPUs; the emulated AMD path runs the same
 * code, so CI checks it against libm). Both sides of each range are computed and one is
 * selected: no branches in the elementwise code.
 * - tanh: x + x^3 P(x^2) below 0.55 (P of degree 4, a Chebyshev fit of (tanh x - x) / x^3:
 *   4e-9 relative), 1 - 2 / (2^(2x log2 e) + 1) above; sign restored. About 2 ulp.
 * - erf: x P(x^2) below 1 (degree 6, 1.4e-9), 1 - 2^(Q(x - 2.46) - x^2 log2 e) up to 3.92
 *   (Q of degree 8 fits log2 erfc(x) + x^2 log2 e: 9e-9 relative in erfc), 1 beyond. About
 *   2.3 ulp.
 * - pow: 2^(y log2 |x|), with C's special cases (a negative x with an integral y, signed zeros,
 *   pow(x, 0) = pow(1, y) = 1, pow(-1, +-inf) = 1, NaN for a finite negative x and a fractional y).
 *   Its relative error grows with |y log2 |x||: about 1e-6 where that is under 16.
 * Coefficients: Chebyshev interpolation in double, rounded to f32. */
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
enum { TANH_N = 5, ERF_N = 7, ERFC_N = 9 };
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

LLVMValueRef target_math_amd(TargetCtx *c, TirUnOp op, LLVMValueRef x, int is_f64)
{
    if (is_f64)
        return target_math_f64(c, op, x);
    if (op == UN_TANH)
        return target_tanh_f32(c, x);
    if (op == UN_ERF)
        return target_erf_f32(c, x);
    return target_math_llvm(c, op, x, is_f64);
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
