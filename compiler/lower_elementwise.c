/* lower_elementwise.c: leaves (constants, params, ids, arange) and elementwise ops. An op on
 * tiles is a loop over the result's registers applying the scalar operation; integer
 * semantics follow the element kind's signedness, float min/max propagate NaN, and f16/bf16
 * arithmetic is done in f32 (f16 +, -, * natively where the target has them: the same
 * results). Casts between any two element kinds live here too. */
#include "fp8.h"
#include <string.h>
#include "lower_int.h"

static int is_half(ElemKind k) { return k == ET_F16 || k == ET_BF16; }

static LLVMValueRef intrinsic1(Lower *L, const char *name, LLVMValueRef *args, int n)
{
    LLVMTypeRef t = LLVMTypeOf(args[0]);
    return target_intrinsic(&L->tc, name, &t, 1, args, n);
}

/* ---- casts ---- */
static LLVMValueRef bf16_to_f32(Lower *L, LLVMValueRef x)
{
    LLVMValueRef i = LLVMBuildBitCast(L->b, x, LLVMInt16TypeInContext(L->ctx), "");
    i = LLVMBuildZExt(L->b, i, lw_i32(L), "");
    i = LLVMBuildShl(L->b, i, lw_i32c(L, 16), "");
    return LLVMBuildBitCast(L->b, i, LLVMFloatTypeInContext(L->ctx), "");
}

/* Round to nearest even, NaN stays NaN (for targets without a native conversion). */
static LLVMValueRef f32_to_bf16_soft(Lower *L, LLVMValueRef x)
{
    LLVMValueRef u = LLVMBuildBitCast(L->b, x, lw_i32(L), "");
    LLVMValueRef lsb = LLVMBuildAnd(L->b, LLVMBuildLShr(L->b, u, lw_i32c(L, 16), ""),
                                    lw_i32c(L, 1), "");
    LLVMValueRef r = LLVMBuildAdd(L->b, u, LLVMBuildAdd(L->b, lsb, lw_i32c(L, 0x7fff), ""), "");
    r = LLVMBuildTrunc(L->b, LLVMBuildLShr(L->b, r, lw_i32c(L, 16), ""),
                       LLVMInt16TypeInContext(L->ctx), "");
    LLVMValueRef nan = LLVMBuildFCmp(L->b, LLVMRealUNO, x, x, "");
    r = LLVMBuildSelect(L->b, nan, LLVMConstInt(LLVMTypeOf(r), 0x7fc0, 0), r, "");
    return LLVMBuildBitCast(L->b, r, LLVMBFloatTypeInContext(L->ctx), "");
}

/* f64 x to f32 rounded to odd: truncated toward zero, the last bit set where that was
 * inexact. Rounded again to bf16 or fp8 (at least two fewer bits than f32's 24) it gives the
 * correctly rounded value, where rounding to nearest twice would turn values just below a
 * tie into the tie (68.7499999 -> 68.75 -> 69, not 68.5). NaN stays NaN, inf inf. */
static LLVMValueRef f64_to_f32_odd(Lower *L, LLVMValueRef x)
{
    LLVMTypeRef f32 = LLVMFloatTypeInContext(L->ctx);
    LLVMValueRef t = LLVMBuildFPTrunc(L->b, x, f32, "");
    LLVMValueRef back = LLVMBuildFPExt(L->b, t, LLVMTypeOf(x), "");
    LLVMValueRef mag_back = intrinsic1(L, "llvm.fabs", &back, 1), mag_x = intrinsic1(L, "llvm.fabs", &x, 1);
    LLVMValueRef bits = LLVMBuildBitCast(L->b, t, lw_i32(L), "");
    LLVMValueRef up = LLVMBuildFCmp(L->b, LLVMRealOGT, mag_back, mag_x, "");
    bits = LLVMBuildSelect(L->b, up, LLVMBuildSub(L->b, bits, lw_i32c(L, 1), ""), bits, "");
    LLVMValueRef inexact = LLVMBuildFCmp(L->b, LLVMRealUNE, back, x, "");
    bits = LLVMBuildSelect(L->b, inexact, LLVMBuildOr(L->b, bits, lw_i32c(L, 1), ""), bits, "");
    return LLVMBuildBitCast(L->b, bits, f32, "");
}

static LLVMValueRef float_to_float(Lower *L, LLVMValueRef x, ElemKind from, ElemKind to)
{
    if (from == ET_BF16) {
        x = bf16_to_f32(L, x);
        from = ET_F32;
    }
    if (from == to)
        return x;
    if (to == ET_BF16) {
        x = from == ET_F64 ? f64_to_f32_odd(L, x) : float_to_float(L, x, from, ET_F32);
        return L->t->soft_bf16 ? f32_to_bf16_soft(L, x)
                               : LLVMBuildFPTrunc(L->b, x, lw_type(L, ET_BF16), "");
    }
    if (et_bits(to) > et_bits(from))
        return LLVMBuildFPExt(L->b, x, lw_type(L, to), "");
    return LLVMBuildFPTrunc(L->b, x, lw_type(L, to), "");
}

static LLVMValueRef to_bool(Lower *L, LLVMValueRef x, ElemKind from)
{
    LLVMValueRef zero = LLVMConstNull(LLVMTypeOf(x));
    if (et_is_float(from))
        return LLVMBuildFCmp(L->b, LLVMRealUNE, x, zero, "");
    return LLVMBuildICmp(L->b, LLVMIntNE, x, zero, "");
}

/* Float to integer saturates to the integer type's range and takes NaN to 0 (docs/language.md),
 * on every target: plain fptosi/fptoui give poison there, the .sat intrinsics are defined.
 * A target may have one instruction for it (NVPTX's cvt.rzi for 32 and 64 bits). */
static LLVMValueRef float_to_int(Lower *L, LLVMValueRef x, ElemKind to)
{
    LLVMTypeRef from_t = LLVMTypeOf(x), to_t = lw_type(L, to);
    int is_f64 = LLVMGetTypeKind(from_t) == LLVMDoubleTypeKind;
    LLVMValueRef native = L->t->float_to_int
        ? L->t->float_to_int(&L->tc, x, is_f64, et_bits(to), et_is_signed(to)) : NULL;
    if (native)
        return native;
    if (LLVMGetTypeKind(from_t) == LLVMVectorTypeKind)
        to_t = LLVMVectorType(to_t, LLVMGetVectorSize(from_t));
    LLVMTypeRef overload[2] = {to_t, from_t};
    const char *name = et_is_signed(to) ? "llvm.fptosi.sat" : "llvm.fptoui.sat";
    return target_intrinsic(&L->tc, name, overload, 2, &x, 1);
}

/* A pointer's address as an i64/u64 and back (spec_expr.c's cast_pointer). */
static LLVMValueRef pointer_cast(Lower *L, LLVMValueRef x, ElemKind from, ElemKind to)
{
    LLVMTypeRef tt = lw_type(L, to), xt = LLVMTypeOf(x);
    if (LLVMGetTypeKind(xt) == LLVMVectorTypeKind)
        tt = LLVMVectorType(tt, LLVMGetVectorSize(xt));
    return from == ET_PTR ? LLVMBuildPtrToInt(L->b, x, tt, "") : LLVMBuildIntToPtr(L->b, x, tt, "");
}

LLVMValueRef lw_cast(Lower *L, LLVMValueRef x, ElemKind from, ElemKind to)
{
    if (from == to)
        return x;
    if (from == ET_PTR || to == ET_PTR)
        return pointer_cast(L, x, from, to);
    if (et_is_fp8(from)) { /* everything from fp8 goes through f32 (exact) */
        x = lw_fp8_to_f32(L, x, from);
        from = ET_F32;
        if (to == ET_F32)
            return x;
    }
    if (et_is_fp8(to)) /* and everything to fp8: through f32, rounded to odd from f64 */
        return lw_f32_to_fp8(L, from == ET_F64 ? f64_to_f32_odd(L, x) : lw_cast(L, x, from, ET_F32),
                             to);
    if (to == ET_BOOL)
        return to_bool(L, x, from);
    int fi = et_is_float(from), ti = et_is_float(to);
    if (fi && ti)
        return float_to_float(L, x, from, to);
    if (fi)
        return float_to_int(L, float_to_float(L, x, from, from == ET_F64 ? ET_F64 : ET_F32), to);
    int sgn = et_is_signed(from);
    if (ti) {
        /* to bf16 through f32, exact for integers up to 16 bits; wider ones through f64
         * (exact for 32 bits), then rounded once as f64 is */
        ElemKind mid = to != ET_BF16 ? to : et_bits(from) >= 32 ? ET_F64 : ET_F32;
        x = sgn ? LLVMBuildSIToFP(L->b, x, lw_type(L, mid), "")
                : LLVMBuildUIToFP(L->b, x, lw_type(L, mid), "");
        return float_to_float(L, x, mid, to);
    }
    LLVMTypeRef tt = lw_type(L, to);
    int fb = et_bits(from), tb = et_bits(to);
    if (tb == fb)
        return x;
    if (tb < fb)
        return LLVMBuildTrunc(L->b, x, tt, "");
    return sgn ? LLVMBuildSExt(L->b, x, tt, "") : LLVMBuildZExt(L->b, x, tt, "");
}

LLVMValueRef lw_to_f32(Lower *L, LLVMValueRef x, ElemKind k) { return lw_cast(L, x, k, ET_F32); }

/* ---- binary, compare, unary ---- */
static LLVMValueRef float_binop(Lower *L, TirBinOp op, LLVMValueRef a, LLVMValueRef b)
{
    LLVMValueRef ab[2] = {a, b};
    switch (op) {
    case BIN_ADD: return LLVMBuildFAdd(L->b, a, b, "");
    case BIN_SUB: return LLVMBuildFSub(L->b, a, b, "");
    case BIN_MUL: return LLVMBuildFMul(L->b, a, b, "");
    case BIN_DIV: return LLVMBuildFDiv(L->b, a, b, "");
    case BIN_MIN: return intrinsic1(L, "llvm.minimum", ab, 2);
    case BIN_MAX: return intrinsic1(L, "llvm.maximum", ab, 2);
    case BIN_REM: case BIN_POW: case BIN_ATAN2: case BIN_HYPOT: case BIN_COPYSIGN: {
        int is_f64 = LLVMTypeOf(a) == LLVMDoubleTypeInContext(L->ctx);
        return L->t->math2 ? L->t->math2(&L->tc, op, a, b, is_f64)
                           : target_math2_llvm(&L->tc, op, a, b, is_f64);
    }
    default: return NULL;
    }
}

/* Integer division never traps and is defined everywhere (docs/language.md): x / 0 = 0 and
 * x % 0 = x; the signed MIN / -1 = MIN (it wraps) and MIN % -1 = 0. The hardware must never
 * see those divisors (LLVM's sdiv/udiv by 0 or of MIN by -1 is undefined, x86 raises SIGFPE),
 * so they are replaced by 1 before dividing and the results fixed with selects after. */
static LLVMValueRef int_divide(Lower *L, int rem, int sgn, LLVMValueRef a, LLVMValueRef b)
{
    LLVMTypeRef t = LLVMTypeOf(b);
    LLVMValueRef zero = LLVMConstNull(t), one = LLVMConstInt(t, 1, 0);
    LLVMValueRef by_zero = LLVMBuildICmp(L->b, LLVMIntEQ, b, zero, "");
    LLVMValueRef special = by_zero;
    if (sgn) {
        unsigned w = LLVMGetIntTypeWidth(t);
        LLVMValueRef min = LLVMConstInt(t, 1ull << (w - 1), 0);
        LLVMValueRef a_min = LLVMBuildICmp(L->b, LLVMIntEQ, a, min, "");
        LLVMValueRef b_m1 = LLVMBuildICmp(L->b, LLVMIntEQ, b, LLVMConstAllOnes(t), "");
        special = LLVMBuildOr(L->b, by_zero, LLVMBuildAnd(L->b, a_min, b_m1, ""), "");
    }
    LLVMValueRef d = LLVMBuildSelect(L->b, special, one, b, ""); /* MIN / 1 = MIN, MIN % 1 = 0 */
    LLVMValueRef r = rem ? (sgn ? LLVMBuildSRem(L->b, a, d, "") : LLVMBuildURem(L->b, a, d, ""))
                         : (sgn ? LLVMBuildSDiv(L->b, a, d, "") : LLVMBuildUDiv(L->b, a, d, ""));
    return LLVMBuildSelect(L->b, by_zero, rem ? a : zero, r, "");
}

/* Shifts by the width or more (or by a negative count, read as unsigned) are defined as the
 * PTX instructions define them, rather than LLVM's poison: << and unsigned >> give 0, signed >>
 * fills with the sign bit. */
static LLVMValueRef int_shift(Lower *L, TirBinOp op, int sgn, LLVMValueRef a, LLVMValueRef b)
{
    LLVMTypeRef t = LLVMTypeOf(b);
    if (LLVMIsAConstantInt(b) && LLVMConstIntGetZExtValue(b) < LLVMGetIntTypeWidth(t)) {
        /* a count known in range: the plain shift (offsets see through it, split_constant) */
        if (op == BIN_SHL)
            return LLVMBuildShl(L->b, a, b, "");
        return sgn ? LLVMBuildAShr(L->b, a, b, "") : LLVMBuildLShr(L->b, a, b, "");
    }
    LLVMValueRef w1 = LLVMConstInt(t, LLVMGetIntTypeWidth(t) - 1, 0);
    LLVMValueRef over = LLVMBuildICmp(L->b, LLVMIntUGT, b, w1, "");
    if (op == BIN_SHR && sgn)
        return LLVMBuildAShr(L->b, a, LLVMBuildSelect(L->b, over, w1, b, ""), "");
    /* the count masked, not selected: with a selected count LLVM proves the shift's count is b
     * wherever it matters, and NVPTX then folds the select below into a shl.b64 whose count
     * it narrows to 32 bits (a count of 2^32 + 1 shifted by 1) */
    LLVMValueRef s = LLVMBuildAnd(L->b, b, w1, "");
    LLVMValueRef r = op == BIN_SHL ? LLVMBuildShl(L->b, a, s, "") : LLVMBuildLShr(L->b, a, s, "");
    return LLVMBuildSelect(L->b, over, LLVMConstNull(t), r, "");
}

static LLVMValueRef int_binop(Lower *L, TirBinOp op, int sgn, LLVMValueRef a, LLVMValueRef b)
{
    switch (op) {
    case BIN_ADD: return LLVMBuildAdd(L->b, a, b, "");
    case BIN_SUB: return LLVMBuildSub(L->b, a, b, "");
    case BIN_MUL: return LLVMBuildMul(L->b, a, b, "");
    case BIN_DIV: return int_divide(L, 0, sgn, a, b);
    case BIN_REM: return int_divide(L, 1, sgn, a, b);
    case BIN_AND: return LLVMBuildAnd(L->b, a, b, "");
    case BIN_OR: return LLVMBuildOr(L->b, a, b, "");
    case BIN_XOR: return LLVMBuildXor(L->b, a, b, "");
    case BIN_SHL: case BIN_SHR: return int_shift(L, op, sgn, a, b);
    case BIN_POW: case BIN_ATAN2: case BIN_HYPOT: case BIN_COPYSIGN:
        return NULL; /* floats only (spec_builtins.c) */
    case BIN_MIN: case BIN_MAX: {
        LLVMIntPredicate p = op == BIN_MIN ? (sgn ? LLVMIntSLT : LLVMIntULT)
                                           : (sgn ? LLVMIntSGT : LLVMIntUGT);
        return LLVMBuildSelect(L->b, LLVMBuildICmp(L->b, p, a, b, ""), a, b, "");
    }
    }
    return NULL;
}

static LLVMValueRef binop(Lower *L, TirBinOp op, ElemKind k, LLVMValueRef a, LLVMValueRef b)
{
    /* f16's +, - and * rounded once equal them done in f32 and rounded to f16 (double
     * rounding is innocuous when the wider format has 2p + 2 bits): no conversions where
     * the target has the instructions (a dequantization's scaling: i8 -> f16 in one cvt) */
    if (k == ET_F16 && L->t->native_f16 && (op == BIN_ADD || op == BIN_SUB || op == BIN_MUL))
        return float_binop(L, op, a, b);
    if (is_half(k)) {
        LLVMValueRef fa = lw_to_f32(L, a, k);
        LLVMValueRef fb = lw_to_f32(L, b, k);
        LLVMValueRef r = float_binop(L, op, fa, fb);
        return r ? lw_cast(L, r, ET_F32, k) : NULL;
    }
    if (et_is_float(k))
        return float_binop(L, op, a, b);
    return int_binop(L, op, et_is_signed(k), a, b);
}

static LLVMValueRef cmpop(Lower *L, TirCmp op, ElemKind k, LLVMValueRef a, LLVMValueRef b)
{
    static const LLVMRealPredicate fp[] = {LLVMRealOLT, LLVMRealOLE, LLVMRealOGT,
                                           LLVMRealOGE, LLVMRealOEQ, LLVMRealUNE};
    static const LLVMIntPredicate sp[] = {LLVMIntSLT, LLVMIntSLE, LLVMIntSGT,
                                          LLVMIntSGE, LLVMIntEQ, LLVMIntNE};
    static const LLVMIntPredicate up[] = {LLVMIntULT, LLVMIntULE, LLVMIntUGT,
                                          LLVMIntUGE, LLVMIntEQ, LLVMIntNE};
    if (is_half(k)) {
        a = lw_to_f32(L, a, k), b = lw_to_f32(L, b, k);
        k = ET_F32;
    }
    if (et_is_float(k))
        return LLVMBuildFCmp(L->b, fp[op], a, b, "");
    return LLVMBuildICmp(L->b, et_is_signed(k) ? sp[op] : up[op], a, b, "");
}

/* popc, clz, ffs (1 + the lowest set bit's index, 0 for 0), brev of an integer, in its type. */
static LLVMValueRef bit_count(Lower *L, TirUnOp op, LLVMValueRef x)
{
    LLVMValueRef no = LLVMConstInt(LLVMInt1TypeInContext(L->ctx), 0, 0), args[2] = {x, no};
    if (op == UN_POPC)
        return intrinsic1(L, "llvm.ctpop", args, 1);
    if (op == UN_CLZ)
        return intrinsic1(L, "llvm.ctlz", args, 2); /* defined at 0: the width */
    if (op == UN_BREV)
        return intrinsic1(L, "llvm.bitreverse", args, 1);
    if (op != UN_FFS)
        return NULL;
    LLVMTypeRef t = LLVMTypeOf(x);
    LLVMValueRef low = intrinsic1(L, "llvm.cttz", args, 2);
    LLVMValueRef zero = LLVMBuildICmp(L->b, LLVMIntEQ, x, LLVMConstInt(t, 0, 0), "");
    return LLVMBuildSelect(L->b, zero, LLVMConstInt(t, 0, 0),
                           LLVMBuildAdd(L->b, low, LLVMConstInt(t, 1, 0), ""), "");
}

static LLVMValueRef unop(Lower *L, TirUnOp op, ElemKind k, LLVMValueRef x)
{
    if (!et_is_float(k)) {
        if (op == UN_NEG)
            return LLVMBuildNeg(L->b, x, "");
        if (op == UN_NOT)
            return LLVMBuildNot(L->b, x, "");
        if (op == UN_ABS && et_is_signed(k)) {
            LLVMValueRef args[2] = {x, LLVMConstInt(LLVMInt1TypeInContext(L->ctx), 0, 0)};
            return intrinsic1(L, "llvm.abs", args, 2);
        }
        if (op == UN_ABS)
            return x;
        return bit_count(L, op, x);
    }
    if (is_half(k)) {
        LLVMValueRef r = unop(L, op, ET_F32, lw_to_f32(L, x, k));
        return r ? lw_cast(L, r, ET_F32, k) : NULL;
    }
    if (op == UN_NEG)
        return LLVMBuildFNeg(L->b, x, "");
    return L->t->math(&L->tc, op, x, k == ET_F64);
}

static LLVMValueRef fma_op(Lower *L, ElemKind k, LLVMValueRef *in)
{
    if (is_half(k)) {
        LLVMValueRef f[3];
        for (int i = 0; i < 3; i++)
            f[i] = lw_to_f32(L, in[i], k);
        return lw_cast(L, intrinsic1(L, "llvm.fma", f, 3), ET_F32, k);
    }
    return intrinsic1(L, "llvm.fma", in, 3);
}

/* Values an elementwise op built so far, by what they were built from (up to 4 words): the
 * registers of a result whose operands are the same values (a broadcast operand) share one
 * computation, and so do the parts split_constant rebuilds (`row * stride` for every column
 * of `(base + rows)[:, None] * stride + cols`), instead of repeating them per register. Only
 * for straight-line code (targets that unroll the element loops), where each earlier value
 * dominates the later registers; elsewhere (or made for no entries) it holds nothing and finds
 * nothing. */
typedef struct Reuse {
    struct ReuseSlot { uintptr_t key[4]; LLVMValueRef value; } *slot; /* NULL value: empty */
    unsigned mask, used;
} Reuse;

static Reuse reuse_new(Lower *L, int entries)
{
    Reuse u = {0};
    unsigned n = 16;
    while (n < 2u * (unsigned)entries)
        n *= 2;
    if (L->t->unroll_elements && entries > 1 && (u.slot = arena_alloc(L->k->arena, sizeof *u.slot * n))) {
        memset(u.slot, 0, sizeof *u.slot * n);
        u.mask = n - 1;
    }
    return u;
}

static unsigned reuse_hash(const uintptr_t *key)
{
    uintptr_t h = 0;
    for (int i = 0; i < 4; i++)
        h = h * 31 + (key[i] >> 4) + key[i];
    return (unsigned)(h ^ h >> 17);
}

static LLVMValueRef reuse_find(const Reuse *u, const uintptr_t *key)
{
    if (!u || !u->slot)
        return NULL;
    for (unsigned h = reuse_hash(key) & u->mask; u->slot[h].value; h = (h + 1) & u->mask)
        if (!memcmp(u->slot[h].key, key, sizeof u->slot[h].key))
            return u->slot[h].value;
    return NULL;
}

/* Adds x under key unless the table is half full (then it finds less). */
static void reuse_add(Reuse *u, const uintptr_t *key, LLVMValueRef x)
{
    if (!u || !u->slot || 2 * (u->used + 1) > u->mask + 1)
        return;
    u->used++;
    unsigned h = reuse_hash(key) & u->mask;
    while (u->slot[h].value)
        h = (h + 1) & u->mask;
    memcpy(u->slot[h].key, key, sizeof u->slot[h].key);
    u->slot[h].value = x;
}

/* The value built once per table u from (what, a, b, t): a GEP of b elements of type t from a
 * (what LLVMGetElementPtr), a cast of a to type t (what its opcode, b NULL), or the binary op
 * `what` of a and b (t NULL). */
static LLVMValueRef build_once(Lower *L, Reuse *u, LLVMOpcode what, LLVMValueRef a, LLVMValueRef b,
                               LLVMTypeRef t)
{
    uintptr_t key[4] = {(uintptr_t)what, (uintptr_t)a, (uintptr_t)b, (uintptr_t)t};
    LLVMValueRef x = reuse_find(u, key);
    if (x)
        return x;
    if (what == LLVMGetElementPtr)
        x = LLVMBuildGEP2(L->b, t, a, &b, 1, "");
    else if (t)
        x = LLVMBuildCast(L->b, what, a, t, "");
    else
        x = LLVMBuildBinOp(L->b, what, a, b, "");
    reuse_add(u, key, x);
    return x;
}

/* x as base + *c (in the wrapping arithmetic of x's type), the constant gathered through the
 * additions, subtractions, disjoint ORs, constant products and left shifts that make x; base
 * is NULL for zero. Rebuilds the non-constant part where a constant came out of it (x itself
 * where none did), each part once per table u. Constants are summed in unsigned 64-bit
 * arithmetic (wrapping, as x's type does). */
static LLVMValueRef split_constant(Lower *L, Reuse *u, LLVMValueRef x, unsigned long long *c, int depth)
{
    *c = 0;
    if (LLVMIsAConstantInt(x)) {
        *c = (unsigned long long)LLVMConstIntGetSExtValue(x);
        return NULL;
    }
    LLVMOpcode op = LLVMIsAInstruction(x) ? LLVMGetInstructionOpcode(x) : LLVMRet;
    int additive = op == LLVMAdd || op == LLVMSub || (op == LLVMOr && LLVMGetIsDisjoint(x));
    int scaled = (op == LLVMMul || op == LLVMShl) && LLVMIsAConstantInt(LLVMGetOperand(x, 1));
    if (depth > 8 || (!additive && !scaled))
        return x;
    unsigned long long ca, cb;
    LLVMValueRef a = split_constant(L, u, LLVMGetOperand(x, 0), &ca, depth + 1);
    if (scaled) {
        LLVMValueRef by = LLVMGetOperand(x, 1);
        unsigned long long k = (unsigned long long)LLVMConstIntGetSExtValue(by);
        if (op == LLVMShl)
            k = k < LLVMGetIntTypeWidth(LLVMTypeOf(x)) ? 1ull << k : 0;
        *c = ca * k;
        if (!a || a == LLVMGetOperand(x, 0))
            return a ? x : NULL; /* all constant, or no constant inside: x itself */
        return build_once(L, u, op, a, by, NULL);
    }
    LLVMValueRef b = split_constant(L, u, LLVMGetOperand(x, 1), &cb, depth + 1);
    *c = op == LLVMSub ? ca - cb : ca + cb;
    if (a == LLVMGetOperand(x, 0) && b == LLVMGetOperand(x, 1))
        return x;
    if (!b)
        return a;
    if (op == LLVMSub)
        return build_once(L, u, LLVMSub, a ? a : LLVMConstInt(LLVMTypeOf(b), 0, 0), b, NULL);
    return a ? build_once(L, u, LLVMAdd, a, b, NULL) : b;
}

/* p + off. A 32-bit offset's constant part goes to a GEP of its own, so that the code
 * generator folds it into the address ([reg+imm]) and offsets that differ by constants share
 * one register; this assumes the offset's parts do not overflow 32 bits (docs/language.md). */
static LLVMValueRef addptr(Lower *L, Reuse *u, const TirOp *op, LLVMValueRef p, LLVMValueRef off)
{
    ElemKind ok = op->ops[1]->type.elem;
    LLVMTypeRef i64 = LLVMInt64TypeInContext(L->ctx);
    LLVMTypeRef et = lw_mem_type(L, op->ops[0]->type.pointee);
    unsigned long long c = 0;
    if (et_bits(ok) < 64) {
        int scalar = LLVMGetTypeKind(LLVMTypeOf(off)) == LLVMIntegerTypeKind;
        LLVMValueRef base = scalar ? split_constant(L, u, off, &c, 0) : off;
        long long sc = (long long)c;
        if (sc == 0 || sc < INT32_MIN || sc > INT32_MAX)
            base = off, c = 0; /* nothing to gain, or no immediate: the offset as computed */
        else if (!base)
            base = LLVMConstInt(LLVMTypeOf(off), 0, 0);
        off = build_once(L, u, et_is_signed(ok) ? LLVMSExt : LLVMZExt, base, NULL, i64);
    }
    p = build_once(L, u, LLVMGetElementPtr, p, off, et);
    if (c != 0) {
        LLVMValueRef k = LLVMConstInt(i64, c, 1);
        p = LLVMBuildGEP2(L->b, et, p, &k, 1, "");
    }
    return p;
}

/* One register of op from its operands in; parts of addresses are rebuilt through u. */
static LLVMValueRef compute(Lower *L, Reuse *u, const TirOp *op, LLVMValueRef *in)
{
    ElemKind k = op->nops ? op->ops[0]->type.elem : ET_VOID;
    switch (op->code) {
    case TIR_BINARY: return binop(L, (TirBinOp)op->attr.i, k, in[0], in[1]);
    case TIR_CMP: return cmpop(L, (TirCmp)op->attr.i, k, in[0], in[1]);
    case TIR_UNARY: return unop(L, (TirUnOp)op->attr.i, k, in[0]);
    case TIR_SELECT: return LLVMBuildSelect(L->b, in[0], in[1], in[2], "");
    case TIR_CAST:
        if (op->attr.i == CAST_BITS) /* equal widths (spec_builtins.c) */
            return LLVMBuildBitCast(L->b, in[0], lw_type(L, op->results[0]->type.elem), "");
        return lw_cast(L, in[0], k, op->results[0]->type.elem);
    case TIR_FMA: return fma_op(L, k, in);
    case TIR_ADDPTR: return addptr(L, u, op, in[0], in[1]);
    default: return NULL;
    }
}

/* compute() gave nothing: the target said why (a function it lacks), or it is our bug. */
static int not_computed(Lower *L, TirOp *op, int errors_before)
{
    if (L->d->errors > errors_before) {
        L->failed = 1;
        return -1;
    }
    return lw_fail(L, op, "internal compiler error: elementwise op not supported");
}

static int lower_map(Lower *L, TirOp *op)
{
    int errors = L->d->errors;
    TirValue *res = op->results[0];
    LLVMValueRef in[4] = {0}, x;
    if (res->type.rank == 0) {
        for (int i = 0; i < op->nops && i < 4; i++)
            in[i] = lw_val(L, op->ops[i]);
        if (!(x = compute(L, NULL, op, in)))
            return not_computed(L, op, errors);
        lw_bind(L, res, x);
        return 0;
    }
    lw_tile_new(L, res);
    int regs = lw_regs(L, res);
    Reuse seen = reuse_new(L, regs), rebuilt = reuse_new(L, op->code == TIR_ADDPTR ? 4 * regs : 0);
    ElemLoop lp;
    LW_FOR(L, &lp, regs, L->t->unroll_elements, r) {
        uintptr_t key[4] = {0};
        for (int i = 0; i < op->nops && i < 4; i++)
            key[i] = (uintptr_t)(in[i] = lw_get(L, op->ops[i], r));
        if (!(x = reuse_find(&seen, key))) {
            if (!(x = compute(L, &rebuilt, op, in)))
                return not_computed(L, op, errors);
            reuse_add(&seen, key, x);
        }
        lw_set(L, res, r, x);
    }
    return 0;
}

/* ---- leaves ---- */
static LLVMValueRef constant(Lower *L, const TirOp *op)
{
    ElemKind k = op->results[0]->type.elem;
    LLVMTypeRef t = lw_type(L, k);
    if (et_is_fp8(k))
        return LLVMConstInt(t, fp8_from_f32((float)op->attr.f, k), 0);
    if (et_is_float(k))
        return LLVMConstReal(t, op->attr.f);
    return LLVMConstInt(t, (unsigned long long)op->attr.i, et_is_signed(k));
}

static int lower_arange(Lower *L, TirOp *op)
{
    TirValue *res = op->results[0];
    lw_tile_new(L, res);
    ElemLoop lp;
    LLVMValueRef c[TIR_MAX_RANK];
    LW_FOR(L, &lp, lw_regs(L, res), L->t->unroll_elements, r) {
        lw_coords(L, res, r, c);
        lw_set(L, res, r, LLVMBuildAdd(L->b, c[0], lw_i32c(L, (int)op->attr.i), ""));
    }
    return 0;
}

int lower_elementwise(Lower *L, TirOp *op)
{
    switch (op->code) {
    case TIR_CONST: lw_bind(L, op->results[0], constant(L, op)); return 0;
    case TIR_PARAM:
        if (op->attr.i < 0 || op->attr.i >= L->k->nparams)
            return lw_fail(L, op, "internal compiler error: bad parameter index");
        lw_bind(L, op->results[0], L->params[op->attr.i]);
        return 0;
    case TIR_PROGRAM_ID:
        lw_bind(L, op->results[0], L->t->program_id(&L->tc, (int)op->attr.i));
        return 0;
    case TIR_NUM_PROGRAMS:
        lw_bind(L, op->results[0], L->t->num_programs(&L->tc, (int)op->attr.i));
        return 0;
    case TIR_ARANGE: return lower_arange(L, op);
    default: return lower_map(L, op);
    }
}
