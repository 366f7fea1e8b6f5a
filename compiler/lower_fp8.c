/* lower_fp8.c: conversions between the fp8 formats (kept as i8 bits) and f32, emitted as the
 * integer algorithms of compiler/fp8.c, so every target gives the same bits (no target needs
 * fp8 instructions; NVIDIA's cvt .satfinite rounds the same way). */
#include "fp8.h"
#include "lower_int.h"

static LLVMValueRef c32(Lower *L, uint32_t v) { return LLVMConstInt(lw_i32(L), v, 0); }
static LLVMValueRef sel(Lower *L, LLVMValueRef c, LLVMValueRef a, LLVMValueRef b)
{
    return LLVMBuildSelect(L->b, c, a, b, "");
}
static LLVMValueRef ucmp(Lower *L, LLVMIntPredicate p, LLVMValueRef a, uint32_t b)
{
    return LLVMBuildICmp(L->b, p, a, c32(L, b), "");
}

LLVMValueRef lw_fp8_to_f32(Lower *L, LLVMValueRef x, ElemKind k)
{
    const Fp8Format *f = fp8_format(k);
    int M = f->mbits, emax = (1 << (7 - M)) - 1;
    LLVMBuilderRef b = L->b;
    LLVMValueRef c = LLVMBuildZExt(b, x, lw_i32(L), "");
    LLVMValueRef s = LLVMBuildShl(b, LLVMBuildAnd(b, c, c32(L, 0x80), ""), c32(L, 24), "");
    LLVMValueRef mag7 = LLVMBuildAnd(b, c, c32(L, 0x7f), "");
    LLVMValueRef e = LLVMBuildLShr(b, mag7, c32(L, (uint32_t)M), "");
    LLVMValueRef m = LLVMBuildAnd(b, c, c32(L, (1u << M) - 1), "");
    /* normal: rebias the exponent, move the mantissa up */
    LLVMValueRef norm = LLVMBuildOr(b, LLVMBuildShl(b, LLVMBuildAdd(b, e, c32(L, (uint32_t)(127 - f->bias)), ""),
                                                    c32(L, 23), ""),
                                    LLVMBuildShl(b, m, c32(L, (uint32_t)(23 - M)), ""), "");
    /* subnormal: m * 2^(1 - bias - M), exact */
    LLVMTypeRef ft = LLVMFloatTypeInContext(L->ctx);
    LLVMValueRef sub = LLVMBuildFMul(b, LLVMBuildUIToFP(b, m, ft, ""),
                                     LLVMConstReal(ft, (double)fp8_to_f32(1, k)), "");
    sub = LLVMBuildBitCast(b, sub, lw_i32(L), "");
    LLVMValueRef v = sel(L, ucmp(L, LLVMIntEQ, e, 0), sub, norm);
    LLVMValueRef nan = f->has_inf ? LLVMBuildAnd(b, ucmp(L, LLVMIntEQ, e, (uint32_t)emax), ucmp(L, LLVMIntNE, m, 0), "")
                                  : ucmp(L, LLVMIntEQ, mag7, 0x7f);
    if (f->has_inf)
        v = sel(L, ucmp(L, LLVMIntEQ, mag7, (uint32_t)emax << M), c32(L, 0x7f800000u), v);
    v = sel(L, nan, c32(L, 0x7fc00000u), v);
    return LLVMBuildBitCast(b, LLVMBuildOr(b, v, s, ""), ft, "");
}

LLVMValueRef lw_f32_to_fp8(Lower *L, LLVMValueRef x, ElemKind k)
{
    const Fp8Format *f = fp8_format(k);
    int M = f->mbits;
    LLVMBuilderRef b = L->b;
    LLVMValueRef u = LLVMBuildBitCast(b, x, lw_i32(L), "");
    LLVMValueRef s = LLVMBuildAnd(b, LLVMBuildLShr(b, u, c32(L, 24), ""), c32(L, 0x80), "");
    LLVMValueRef a = LLVMBuildAnd(b, u, c32(L, 0x7fffffffu), "");
    /* normal: round the mantissa to M bits (nearest even), rebias */
    LLVMValueRef lsb = LLVMBuildAnd(b, LLVMBuildLShr(b, a, c32(L, (uint32_t)(23 - M)), ""), c32(L, 1), "");
    LLVMValueRef r = LLVMBuildAdd(b, a, LLVMBuildAdd(b, lsb, c32(L, (1u << (22 - M)) - 1), ""), "");
    LLVMValueRef norm = LLVMBuildSub(b, LLVMBuildLShr(b, r, c32(L, (uint32_t)(23 - M)), ""),
                                     c32(L, (uint32_t)(127 - f->bias) << M), "");
    /* subnormal: full >> sh, nearest even; sh >= 32 gives 0 */
    LLVMValueRef e8 = LLVMBuildLShr(b, a, c32(L, 23), "");
    LLVMValueRef zero_e = ucmp(L, LLVMIntEQ, e8, 0);
    LLVMValueRef full = LLVMBuildOr(b, LLVMBuildAnd(b, a, c32(L, 0x7fffff), ""),
                                    sel(L, zero_e, c32(L, 0), c32(L, 0x800000)), "");
    LLVMValueRef e1 = sel(L, zero_e, c32(L, 1), e8);
    LLVMValueRef sh = LLVMBuildSub(b, c32(L, (uint32_t)(151 - f->bias - M)), e1, "");
    LLVMValueRef big = ucmp(L, LLVMIntUGE, sh, 32);
    sh = sel(L, big, c32(L, 31), sh);
    LLVMValueRef half = LLVMBuildSub(b, LLVMBuildShl(b, c32(L, 1), LLVMBuildSub(b, sh, c32(L, 1), ""), ""), c32(L, 1), "");
    LLVMValueRef odd = LLVMBuildAnd(b, LLVMBuildLShr(b, full, sh, ""), c32(L, 1), "");
    LLVMValueRef sub = LLVMBuildLShr(b, LLVMBuildAdd(b, full, LLVMBuildAdd(b, half, odd, ""), ""), sh, "");
    sub = sel(L, big, c32(L, 0), sub);
    LLVMValueRef v = sel(L, ucmp(L, LLVMIntUGE, a, (uint32_t)(127 + 1 - f->bias) << 23), norm, sub);
    v = sel(L, ucmp(L, LLVMIntUGT, a, f->max_bits), c32(L, f->max_code), v);
    v = LLVMBuildOr(b, v, s, "");
    v = sel(L, ucmp(L, LLVMIntUGT, a, 0x7f800000u), c32(L, 0x7f), v);
    return LLVMBuildTrunc(b, v, LLVMInt8TypeInContext(L->ctx), "");
}
