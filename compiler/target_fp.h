/* target_fp.h: the builders the math expansions share (target_math_f32.c, target_math_f64.c,
 * target_trig_f64.c): arithmetic, FMA, two-operand intrinsics, Horner polynomials whose
 * coefficients take x's type, and exact sums as double-doubles. Each of those files keeps its
 * own constant maker k(). */
#ifndef TILE_TARGET_FP_H
#define TILE_TARGET_FP_H
#include "target.h"

static inline LLVMValueRef fp_add(TargetCtx *c, LLVMValueRef a, LLVMValueRef b)
{
    return LLVMBuildFAdd(c->b, a, b, "");
}

static inline LLVMValueRef fp_sub(TargetCtx *c, LLVMValueRef a, LLVMValueRef b)
{
    return LLVMBuildFSub(c->b, a, b, "");
}

static inline LLVMValueRef fp_mul(TargetCtx *c, LLVMValueRef a, LLVMValueRef b)
{
    return LLVMBuildFMul(c->b, a, b, "");
}

/* llvm.NAME(x, y) overloaded on x's type: llvm.copysign, llvm.ldexp, ... */
static inline LLVMValueRef fp_call2(TargetCtx *c, const char *name, LLVMValueRef x, LLVMValueRef y)
{
    LLVMTypeRef t = LLVMTypeOf(x);
    LLVMValueRef args[2] = {x, y};
    return target_intrinsic(c, name, &t, 1, args, 2);
}

static inline LLVMValueRef fp_fma(TargetCtx *c, LLVMValueRef a, LLVMValueRef b, LLVMValueRef d)
{
    LLVMTypeRef t = LLVMTypeOf(a);
    LLVMValueRef args[3] = {a, b, d};
    return target_intrinsic(c, "llvm.fma", &t, 1, args, 3);
}

/* p[0] + p[1] x + ... + p[n-1] x^(n-1), by Horner with FMAs */
static inline LLVMValueRef fp_poly(TargetCtx *c, const double *p, int n, LLVMValueRef x)
{
    LLVMTypeRef t = LLVMTypeOf(x);
    LLVMValueRef r = LLVMConstReal(t, p[n - 1]);
    for (int i = n - 2; i >= 0; i--)
        r = fp_fma(c, r, x, LLVMConstReal(t, p[i]));
    return r;
}

/* hi + lo: a value carried with the rounding error of its last step */
typedef struct { LLVMValueRef hi, lo; } DD;

/* a + b exactly, for |a| >= |b| (or a = 0) */
static inline DD fp_fast_two_sum(TargetCtx *c, LLVMValueRef a, LLVMValueRef b)
{
    LLVMValueRef s = fp_add(c, a, b);
    return (DD){s, fp_add(c, fp_sub(c, a, s), b)};
}

/* a + b exactly, any order of magnitude */
static inline DD fp_two_sum(TargetCtx *c, LLVMValueRef a, LLVMValueRef b)
{
    LLVMValueRef s = fp_add(c, a, b), bb = fp_sub(c, s, a);
    return (DD){s, fp_add(c, fp_sub(c, a, fp_sub(c, s, bb)), fp_sub(c, b, bb))};
}

#endif
