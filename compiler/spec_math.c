/* spec_math.c: the math built-in functions during specialization (docs/language.md): exp,
 * log, sin ... erfinv, pow, atan2 ..., minimum, maximum, clamp, fma, where, cdiv, next_pow2,
 * the bit functions (popc, clz, ffs, brev, bitcast, signbit, umulhi), sigmoid, isnan and isinf:
 * their argument checks, their folding when every operand is a constant, and their tile-IR
 * ops. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "spec.h"

static double exp10_fold(double x) { return pow(10.0, x); }

/* erfinv for constants (the C library has none): bisection on erf (erfc near 1, where 1 - a
 * is exact) to the double's neighbourhood, then two Newton steps */
static double erfinv_fold(double y) {
    double a = fabs(y);
    if (!(a <= 1)) return NAN;
    if (a == 1) return copysign(INFINITY, y);
    if (a < 1e-8) return y * 0.88622692545275801; /* sqrt(pi)/2: the next term is a^2 pi/12 */
    double lo = 0, hi = 6, x = 3;
    for (int i = 0; i < 64; i++) {
        x = 0.5 * (lo + hi);
        int below = a > 0.5 ? erfc(x) > 1 - a : erf(x) < a;
        if (below) lo = x; else hi = x;
    }
    for (int i = 0; i < 2; i++) {
        double d = 1.1283791670955126 * exp(-x * x); /* erf'(x) */
        x -= a > 0.5 ? (1 - a - erfc(x)) / d : (erf(x) - a) / d;
    }
    return copysign(x, y);
}

static const struct { const char *name; TirUnOp op; double (*fold)(double); } unary_fns[] = {
    {"exp", UN_EXP, exp},     {"exp2", UN_EXP2, exp2}, {"log", UN_LOG, log},
    {"log2", UN_LOG2, log2},  {"sqrt", UN_SQRT, sqrt}, {"rsqrt", UN_RSQRT, NULL},
    {"sin", UN_SIN, sin},     {"cos", UN_COS, cos},    {"abs", UN_ABS, fabs},
    {"floor", UN_FLOOR, floor}, {"ceil", UN_CEIL, ceil}, {"trunc", UN_TRUNC, trunc},
    {"tanh", UN_TANH, tanh},  {"erf", UN_ERF, erf},   {"sqrt_rn", UN_SQRT, sqrt},
    {"rint", UN_RINT, rint},  {"round", UN_RINT, rint}, {"log1p", UN_LOG1P, log1p},
    {"expm1", UN_EXPM1, expm1}, {"tan", UN_TAN, tan},   {"atan", UN_ATAN, atan},
    {"asin", UN_ASIN, asin},  {"acos", UN_ACOS, acos}, {"sinh", UN_SINH, sinh},
    {"cosh", UN_COSH, cosh},  {"log10", UN_LOG10, log10}, {"asinh", UN_ASINH, asinh},
    {"acosh", UN_ACOSH, acosh}, {"atanh", UN_ATANH, atanh}, {"cbrt", UN_CBRT, cbrt},
    {"exp10", UN_EXP10, exp10_fold}, {"erfinv", UN_ERFINV, erfinv_fold},
};

/* Arguments 0 .. n-1 of a math function are numbers: not pointers, not bools; a diagnostic
 * at the first that is not. */
static int math_args(Spec *s, Args *a, int n) {
    for (int i = 0; i < n; i++) {
        if (!spec_need_value(s, a, i)) return 0;
        ElemKind k = val_elem(&a->v[i]);
        if (k == ET_PTR || k == ET_BOOL) {
            diag_error(s->diags, a->e[i]->loc, "%s() needs numbers, got %s", a->call->name, val_type_str(s, &a->v[i]));
            return 0;
        }
    }
    return 1;
}

static Val b_unary_math(Spec *s, Args *a) {
    if (!math_args(s, a, 1)) return val_error();
    int i = 0;
    while (strcmp(unary_fns[i].name, a->call->name) != 0) i++;
    Val x = a->v[0];
    if (x.kind == V_CONST && unary_fns[i].op == UN_ABS && !et_is_float(x.ct))
        return x.i < 0 ? spec_binary(s, OP_SUB, val_const_int(x.ct, 0, x.weak), x, a->call->loc) : x;
    if (x.kind == V_CONST) {
        double f = et_is_float(x.ct) ? x.f : (double)x.i;
        double r = unary_fns[i].fold ? unary_fns[i].fold(f) : 1.0 / sqrt(f);
        return val_const_float(et_is_float(x.ct) ? x.ct : ET_F32, r, 0);
    }
    TirValue *v = unary_fns[i].op == UN_ABS && !et_is_fp8(val_elem(&x)) ? x.v : spec_as_float(s, x, a->e[0]->loc);
    TirValue *r = spec_emit(s, TIR_UNARY, a->call->loc, &v, 1, v->type);
    r->def->attr.i = unary_fns[i].op;
    return val_tile(r);
}

/* popc, clz, ffs and brev of an integer tile or constant (CUDA's __popc, __clz, __ffs, __brev),
 * in x's type: the set bits, the leading zeros (the width for 0), 1 + the lowest set bit's
 * index (0 for 0), the bits reversed. */
static const struct { const char *name; TirUnOp op; } bit_fns[] = {
    {"popc", UN_POPC}, {"clz", UN_CLZ}, {"ffs", UN_FFS}, {"brev", UN_BREV},
};

static uint64_t fold_bits(TirUnOp op, uint64_t u, int bits) {
    uint64_t r = 0;
    for (int b = 0; b < bits; b++) {
        int set = (u >> b) & 1;
        if (op == UN_POPC) r += set;
        else if (op == UN_CLZ && set) r = (uint64_t)(bits - 1 - b);
        else if (op == UN_FFS && set && !r) r = (uint64_t)b + 1;
        else if (op == UN_BREV && set) r |= UINT64_C(1) << (bits - 1 - b);
    }
    return op == UN_CLZ && !u ? (uint64_t)bits : r;
}

static Val b_bits(Spec *s, Args *a) {
    if (!spec_need_value(s, a, 0)) return val_error();
    Val x = a->v[0];
    ElemKind k = val_elem(&x);
    if (!et_is_int(k) || k == ET_BOOL) {
        diag_error(s->diags, a->e[0]->loc, "%s() takes an integer, got %s", a->call->name,
                   val_type_str(s, &x));
        return val_error();
    }
    int i = 0;
    while (strcmp(bit_fns[i].name, a->call->name) != 0) i++;
    if (x.kind == V_CONST) {
        uint64_t m = et_bits(k) == 64 ? UINT64_MAX : (UINT64_C(1) << et_bits(k)) - 1;
        uint64_t r = fold_bits(bit_fns[i].op, (uint64_t)x.i & m, et_bits(k));
        if (k == ET_U64) return spec_u64_value(s, r, a->call->loc);
        return val_const_int(k, tc_int_wrap(k, (int64_t)r), x.weak);
    }
    TirValue *r = spec_emit(s, TIR_UNARY, a->call->loc, &x.v, 1, x.v->type);
    r->def->attr.i = bit_fns[i].op;
    return val_tile(r);
}

/* bitcast(x, T): x's bits as T, a type of the same width (f32 <-> i32/u32, f16/bf16 <-> i16/u16,
 * f64 <-> i64/u64, fp8 <-> i8/u8, signed <-> unsigned): Triton's x.to(T, bitcast=True). */
static Val b_bitcast(Spec *s, Args *a) {
    if (!spec_need_value(s, a, 0)) return val_error();
    ElemKind from = val_elem(&a->v[0]), to = spec_type_arg(s, a, 1, ET_VOID);
    if (to == ET_VOID) return val_error();
    if (from == ET_PTR || from == ET_BOOL || to == ET_BOOL) {
        diag_error(s->diags, a->call->loc, "bitcast() reinterprets numbers, not %s",
                   to == ET_BOOL ? "bool" : val_type_str(s, &a->v[0]));
        return val_error();
    }
    if (et_bits(from) != et_bits(to)) {
        diag_error(s->diags, a->call->loc, "bitcast() of %s to %s: the widths differ (%d and %d "
                   "bits); convert the value with `as` instead", val_type_str(s, &a->v[0]),
                   et_name(to), et_bits(from), et_bits(to));
        return val_error();
    }
    TirValue *x = spec_as_tile(s, a->v[0], a->e[0]->loc);
    if (!x || from == to) return x ? val_tile(x) : val_error();
    TirType t = x->type;
    t.elem = to;
    TirValue *r = spec_emit(s, TIR_CAST, a->call->loc, &x, 1, t);
    r->def->attr.i = CAST_BITS;
    return val_tile(r);
}

/* cast(x, dtype [, fp_downcast_rounding=] [, bitcast=B]) (Triton's tl.cast): `x as dtype`, or
 * with bitcast=true bitcast(x, dtype). Rounding to nearest even is the only rounding ("rtne",
 * Triton's default; "rtz" is refused). Numbers only: a pointer converts with `as`. */
static Val b_cast(Spec *s, Args *a) {
    if (!spec_need_value(s, a, 0)) return val_error();
    const Expr *r = a->e[2];
    if (r && a->v[2].kind != V_NONE && !(r->kind == EX_STRING && !strcmp(r->name, "rtne"))) {
        diag_error(s->diags, r->loc, "cast() rounds to nearest even only: fp_downcast_rounding "
                   "takes \"rtne\" or None");
        return val_error();
    }
    if (a->e[3] && (a->v[3].kind != V_CONST || a->v[3].ct != ET_BOOL)) {
        diag_error(s->diags, a->e[3]->loc, "cast()'s bitcast must be a compile-time bool, got %s%s",
                   a->v[3].kind == V_TILE ? "a run-time " : "", val_type_str(s, &a->v[3]));
        return val_error();
    }
    if (a->e[3] && a->v[3].i) return b_bitcast(s, a);
    ElemKind to = spec_type_arg(s, a, 1, ET_VOID);
    Val x = a->v[0];
    if (to == ET_VOID) return val_error();
    if (val_elem(&x) == ET_PTR) {
        diag_error(s->diags, a->e[0]->loc, "cast() converts numbers, not %s (a pointer converts "
                   "with `as`: `p as *f16`, `p as i64`)", val_type_str(s, &x));
        return val_error();
    }
    if (x.kind == V_CONST) return spec_const_as(s, x, to, a->call->loc);
    TirValue *t = spec_as_tile(s, x, a->e[0]->loc);
    return t ? val_tile(spec_cast(s, t, to, a->call->loc)) : val_error();
}

/* op of the two values v[0], v[1], broadcast to one shape and converted to et. */
static Val binary_tile(Spec *s, TirBinOp op, const Val v[2], ElemKind et, SrcLoc loc) {
    int rank, shape[TIR_MAX_RANK];
    if (!spec_broadcast_shape(s, v, 2, &rank, shape, loc)) return val_error();
    TirValue *ops[2] = {spec_materialize(s, v[0], et, rank, shape, loc),
                        spec_materialize(s, v[1], et, rank, shape, loc)};
    if (!ops[0] || !ops[1]) return val_error();
    TirValue *r = spec_emit(s, TIR_BINARY, loc, ops, 2, tir_type_make(et, rank, shape));
    r->def->attr.i = op;
    return val_tile(r);
}

static Val minmax_of(Spec *s, int is_max, Val x, Val y, SrcLoc loc) {
    if (x.kind == V_ERROR || y.kind == V_ERROR) return val_error();
    if (x.kind == V_CONST && y.kind == V_CONST) { /* NaN wins, as at run time (BIN_MAX) */
        if (et_is_float(x.ct) && x.f != x.f) return x;
        if (et_is_float(y.ct) && y.f != y.f) return y;
        Val gt = spec_binary(s, OP_GT, x, y, loc);
        return (gt.i != 0) == is_max ? x : y;
    }
    Val both[2] = {x, y};
    return binary_tile(s, is_max ? BIN_MAX : BIN_MIN, both, spec_promote(&x, &y), loc);
}

static Val b_minmax(Spec *s, Args *a) {
    if (!spec_numbers(s, a, 2)) return val_error();
    return minmax_of(s, strcmp(a->call->name, "maximum") == 0, a->v[0], a->v[1], a->call->loc);
}

/* clamp(x, lo, hi) = minimum(maximum(x, lo), hi), as Triton's. */
static Val b_clamp(Spec *s, Args *a) {
    if (!spec_numbers(s, a, 3)) return val_error();
    SrcLoc at = a->call->loc;
    return minmax_of(s, 0, minmax_of(s, 1, a->v[0], a->v[1], at), a->v[2], at);
}

/* div_rn(x, y), fdiv(x, y): x / y of floats (integers are converted to f32), rounded to
 * nearest on every backend (fdiv is allowed to be faster and less exact; today it is the
 * same division). */
static Val b_fdiv(Spec *s, Args *a) {
    if (!spec_numbers(s, a, 2)) return val_error();
    SrcLoc at = a->call->loc;
    Val x = a->v[0], y = a->v[1];
    if (!et_is_float(val_elem(&x)) && !et_is_float(val_elem(&y)))
        x = x.kind == V_CONST ? val_const_float(ET_F32, (double)x.i, 0) : val_tile(spec_as_float(s, x, at));
    if (x.kind == V_ERROR || (x.kind != V_CONST && !x.v)) return val_error();
    return spec_binary(s, OP_DIV, x, y, at);
}

/* A 32-bit integer, or an integer literal that fits 32 bits (signed or not). */
static int int32_arg(const Val *v) {
    ElemKind k = val_elem(v);
    if (v->kind == V_CONST && v->weak && et_is_int(k))
        return v->i >= INT32_MIN && v->i <= (int64_t)UINT32_MAX;
    return k == ET_I32 || k == ET_U32;
}

/* pow(x, y), atan2(y, x), hypot(x, y), copysign(x, y), fmod(x, y): C's functions of two floats
 * (integers converted to f32), broadcasting; two constants fold. */
static const struct { const char *name; TirBinOp op; double (*fold)(double, double); } binary_fns[] = {
    {"pow", BIN_POW, pow}, {"atan2", BIN_ATAN2, atan2}, {"hypot", BIN_HYPOT, hypot},
    {"copysign", BIN_COPYSIGN, copysign}, {"fmod", BIN_REM, fmod},
};

static Val b_binary_math(Spec *s, Args *a) {
    if (!math_args(s, a, 2)) return val_error();
    int f = 0;
    while (strcmp(binary_fns[f].name, a->call->name) != 0) f++;
    SrcLoc at = a->call->loc;
    Val x = a->v[0], y = a->v[1];
    if (x.kind == V_CONST && y.kind == V_CONST) {
        double fx = et_is_float(x.ct) ? x.f : (double)x.i, fy = et_is_float(y.ct) ? y.f : (double)y.i;
        ElemKind et = x.ct == ET_F64 || y.ct == ET_F64 ? ET_F64 : ET_F32;
        return val_const_float(et, binary_fns[f].fold(fx, fy), 0);
    }
    ElemKind et = spec_promote(&x, &y);
    return binary_tile(s, binary_fns[f].op, a->v, et_is_float(et) ? et : ET_F32, at);
}

/* umulhi(x, y): the high 32 bits of the 64-bit product of two 32-bit integers, taken as
 * unsigned (CUDA's __umulhi); the result has x's type. */
static Val b_umulhi(Spec *s, Args *a) {
    if (!spec_numbers(s, a, 2)) return val_error();
    SrcLoc at = a->call->loc;
    ElemKind k = val_elem(&a->v[0]);
    if (!int32_arg(&a->v[0]) || !int32_arg(&a->v[1])) {
        diag_error(s->diags, a->call->loc, "umulhi() takes 32-bit integers, got %s and %s",
                   val_type_str(s, &a->v[0]), val_type_str(s, &a->v[1]));
        return val_error();
    }
    if (k != ET_I32 && k != ET_U32) /* a literal x: the type of y (i32 for two literals) */
        k = val_elem(&a->v[1]) == ET_U32 ? ET_U32 : ET_I32;
    if (a->v[0].kind == V_CONST && a->v[1].kind == V_CONST) {
        uint64_t p = (uint64_t)(uint32_t)a->v[0].i * (uint32_t)a->v[1].i;
        uint32_t hi32 = (uint32_t)(p >> 32);
        return val_const_int(k, k == ET_I32 ? (int64_t)(int32_t)hi32 : (int64_t)hi32, 0);
    }
    Val wide[2];
    for (int i = 0; i < 2; i++) {
        Val u = a->v[i];
        if (u.kind == V_CONST) {
            wide[i] = val_const_int(ET_U64, (int64_t)(uint32_t)u.i, 0);
            continue;
        }
        TirValue *t = spec_as_tile(s, u, at);
        if (!t || !(t = spec_cast(s, t, ET_U32, at)) || !(t = spec_cast(s, t, ET_U64, at)))
            return val_error();
        wide[i] = val_tile(t);
    }
    Val hi = spec_binary(s, OP_SHR, spec_binary(s, OP_MUL, wide[0], wide[1], at),
                         val_const_int(ET_U64, 32, 0), at);
    TirValue *t = spec_as_tile(s, hi, at);
    return t ? val_tile(spec_cast(s, t, k, at)) : val_error();
}

/* sigmoid(x) = 1 / (1 + exp(-x)): 0 and 1 at the far ends, never NaN but for a NaN x. */
static Val b_sigmoid(Spec *s, Args *a) {
    if (!spec_numbers(s, a, 1)) return val_error();
    Val x = a->v[0];
    SrcLoc at = a->call->loc;
    if (x.kind == V_CONST) {
        double f = et_is_float(x.ct) ? x.f : (double)x.i;
        return val_const_float(et_is_float(x.ct) ? x.ct : ET_F32, 1.0 / (1.0 + exp(-f)), 0);
    }
    TirValue *v = spec_as_float(s, x, at);
    if (!v) return val_error();
    Val neg = spec_binary(s, OP_SUB, val_const_float(v->type.elem, 0.0, 1), val_tile(v), at);
    TirValue *e = spec_as_tile(s, neg, at);
    if (!e) return val_error();
    TirValue *ex = spec_emit(s, TIR_UNARY, at, &e, 1, e->type);
    ex->def->attr.i = UN_EXP;
    Val one = val_const_float(v->type.elem, 1.0, 1);
    return spec_binary(s, OP_DIV, one, spec_binary(s, OP_ADD, one, val_tile(ex), at), at);
}

/* isnan(x) and isinf(x): bool like x (x != x; x == inf || x == -inf); integers are never
 * either (x != x is false for them too). */
static Val b_isnan_isinf(Spec *s, Args *a) {
    if (!spec_numbers(s, a, 1)) return val_error();
    Val x = a->v[0];
    SrcLoc at = a->call->loc;
    ElemKind et = val_elem(&x);
    if (strcmp(a->call->name, "isinf") || !et_is_float(et))
        return spec_binary(s, OP_NE, x, x, at);
    Val pos = spec_binary(s, OP_EQ, x, val_const_float(et, INFINITY, 1), at);
    Val neg = spec_binary(s, OP_EQ, x, val_const_float(et, -INFINITY, 1), at);
    return spec_binary(s, OP_LOGOR, pos, neg, at);
}

/* signbit(x): a bool like x, true where x's sign bit is set (-0.0, negative numbers, -inf, a
 * NaN with the bit); for integers x < 0 */
static Val b_signbit(Spec *s, Args *a) {
    if (!math_args(s, a, 1)) return val_error();
    Val x = a->v[0];
    SrcLoc at = a->call->loc;
    ElemKind et = val_elem(&x);
    if (!et_is_float(et)) return spec_binary(s, OP_LT, x, val_const_int(et, 0, 1), at);
    if (x.kind == V_CONST) return val_const_int(ET_BOOL, signbit(x.f) != 0, 0);
    TirValue *v = spec_as_tile(s, x, a->e[0]->loc);
    if (!v) return val_error();
    static const ElemKind ints[] = {ET_I8, ET_I16, ET_I32, ET_I64};
    int w = et_bits(et);
    TirType t = v->type;
    t.elem = ints[w == 8 ? 0 : w == 16 ? 1 : w == 32 ? 2 : 3];
    TirValue *bits = spec_emit(s, TIR_CAST, at, &v, 1, t);
    bits->def->attr.i = CAST_BITS;
    return spec_binary(s, OP_LT, val_tile(bits), val_const_int(t.elem, 0, 1), at);
}

static Val b_fma(Spec *s, Args *a) {
    for (int i = 0; i < 3; i++)
        if (!spec_need_value(s, a, i)) return val_error();
    Val ab = {.kind = V_CONST, .ct = spec_promote(&a->v[0], &a->v[1]),
              .weak = a->v[0].weak && a->v[1].weak && a->v[0].kind == V_CONST && a->v[1].kind == V_CONST};
    ElemKind et = spec_promote(&ab, &a->v[2]);
    int all_const = a->v[0].kind == V_CONST && a->v[1].kind == V_CONST && a->v[2].kind == V_CONST;
    if (!et_is_float(et) || all_const)
        return spec_binary(s, OP_ADD, spec_binary(s, OP_MUL, a->v[0], a->v[1], a->call->loc), a->v[2], a->call->loc);
    int rank, shape[TIR_MAX_RANK];
    if (!spec_broadcast_shape(s, a->v, 3, &rank, shape, a->call->loc)) return val_error();
    TirValue *ops[3];
    for (int i = 0; i < 3; i++)
        if (!(ops[i] = spec_materialize(s, a->v[i], et, rank, shape, a->call->loc))) return val_error();
    return val_tile(spec_emit(s, TIR_FMA, a->call->loc, ops, 3, tir_type_make(et, rank, shape)));
}

static Val b_where(Spec *s, Args *a) {
    for (int i = 0; i < 3; i++)
        if (!spec_need_value(s, a, i)) return val_error();
    Val c = a->v[0];
    if (c.kind == V_CONST) return c.i ? a->v[1] : a->v[2];
    if (val_elem(&c) != ET_BOOL) c = spec_binary(s, OP_NE, c, val_const_int(ET_I32, 0, 1), a->call->loc);
    ElemKind et = val_elem(&a->v[1]) == ET_PTR ? ET_PTR : spec_promote(&a->v[1], &a->v[2]);
    if (et == ET_PTR && val_elem(&a->v[2]) == ET_PTR && a->v[1].v->type.pointee != a->v[2].v->type.pointee) {
        diag_error(s->diags, a->call->loc, "where() between pointers to different types: %s and %s",
                   val_type_str(s, &a->v[1]), val_type_str(s, &a->v[2]));
        return val_error();
    }
    Val all[3] = {c, a->v[1], a->v[2]};
    int rank, shape[TIR_MAX_RANK];
    if (!spec_broadcast_shape(s, all, 3, &rank, shape, a->call->loc)) return val_error();
    TirValue *ops[3] = {spec_materialize(s, c, ET_BOOL, rank, shape, a->call->loc),
                        spec_materialize(s, a->v[1], et, rank, shape, a->call->loc),
                        spec_materialize(s, a->v[2], et, rank, shape, a->call->loc)};
    if (!ops[0] || !ops[1] || !ops[2]) return val_error();
    TirType t = ops[1]->type;
    return val_tile(spec_emit(s, TIR_SELECT, a->call->loc, ops, 3, t));
}

static Val b_cdiv(Spec *s, Args *a) {
    if (!spec_need_value(s, a, 0) || !spec_need_value(s, a, 1)) return val_error();
    if (!et_is_int(val_elem(&a->v[0])) || !et_is_int(val_elem(&a->v[1]))) {
        diag_error(s->diags, a->call->loc, "cdiv() needs integers, got %s and %s", val_type_str(s, &a->v[0]),
                   val_type_str(s, &a->v[1]));
        return val_error();
    }
    SrcLoc l = a->call->loc;
    Val num = spec_binary(s, OP_SUB, spec_binary(s, OP_ADD, a->v[0], a->v[1], l), val_const_int(ET_I32, 1, 1), l);
    return spec_binary(s, OP_DIV, num, a->v[1], l);
}

/* next_pow2(x): the smallest power of two >= x (1 for x <= 1), of a compile-time integer: it
 * sizes tiles, e.g. a head size of 80 padded to 128. */
static Val b_next_pow2(Spec *s, Args *a) {
    int64_t x;
    if (!spec_const_arg(s, a, 0, &x)) return val_error();
    int64_t p = 1;
    while (p < x && p <= INT64_MAX / 2) p *= 2;
    if (p < x) {
        diag_error(s->diags, a->call->loc, "next_pow2(%" PRId64 ") does not fit i64", x);
        return val_error();
    }
    return val_const_int(a->v[0].ct, p, a->v[0].weak);
}

static const struct {
    const char *name;
    BuiltinFn fn;
} math_builtins[] = {
    {"exp", b_unary_math}, {"exp2", b_unary_math}, {"log", b_unary_math}, {"log2", b_unary_math},
    {"sqrt", b_unary_math}, {"rsqrt", b_unary_math}, {"sin", b_unary_math}, {"cos", b_unary_math},
    {"abs", b_unary_math}, {"floor", b_unary_math}, {"ceil", b_unary_math}, {"trunc", b_unary_math},
    {"tanh", b_unary_math}, {"erf", b_unary_math}, {"sigmoid", b_sigmoid}, {"isnan", b_isnan_isinf},
    {"isinf", b_isnan_isinf}, {"sqrt_rn", b_unary_math}, {"rint", b_unary_math},
    {"round", b_unary_math}, {"log1p", b_unary_math}, {"expm1", b_unary_math},
    {"tan", b_unary_math}, {"atan", b_unary_math}, {"asin", b_unary_math}, {"acos", b_unary_math},
    {"sinh", b_unary_math}, {"cosh", b_unary_math}, {"log10", b_unary_math},
    {"asinh", b_unary_math}, {"acosh", b_unary_math}, {"atanh", b_unary_math},
    {"cbrt", b_unary_math}, {"exp10", b_unary_math}, {"erfinv", b_unary_math},
    {"bitcast", b_bitcast}, {"cast", b_cast}, {"clamp", b_clamp}, {"div_rn", b_fdiv}, {"fdiv", b_fdiv},
    {"umulhi", b_umulhi}, {"popc", b_bits}, {"clz", b_bits}, {"ffs", b_bits}, {"brev", b_bits},
    {"pow", b_binary_math}, {"atan2", b_binary_math}, {"hypot", b_binary_math},
    {"copysign", b_binary_math}, {"fmod", b_binary_math}, {"signbit", b_signbit},
    {"minimum", b_minmax}, {"maximum", b_minmax}, {"fma", b_fma}, {"where", b_where},
    {"cdiv", b_cdiv}, {"next_pow2", b_next_pow2},
};

BuiltinFn spec_math_builtin(const char *name) {
    for (int i = 0; i < (int)(sizeof math_builtins / sizeof math_builtins[0]); i++)
        if (strcmp(math_builtins[i].name, name) == 0) return math_builtins[i].fn;
    return NULL;
}
