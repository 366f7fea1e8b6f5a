/* spec_expr.c: expressions during specialization: literals, names, operators with type
 * promotion and NumPy broadcasting, indexing with None, casts. Compile-time scalars are
 * folded here, so const parameters can size tiles. */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "fp8.h"
#include "spec.h"

Val val_error(void) { return (Val){.kind = V_ERROR}; }

Val val_const_int(ElemKind ct, int64_t i, int weak) {
    return (Val){.kind = V_CONST, .ct = ct, .i = i, .f = (double)i, .weak = weak};
}

/* float -> integer as a saturating conversion (NaN -> 0): never undefined behaviour. */
int64_t spec_f2i(double f) {
    if (f != f) return 0;
    if (f >= 9.2233720368547758e18) return INT64_MAX;
    if (f <= -9.2233720368547758e18) return INT64_MIN;
    return (int64_t)f;
}

/* f as an f32 rounded to odd (truncated, the last bit set where inexact; lower_elementwise.c's
 * f64_to_f32_odd): rounded again to a format of at least two fewer mantissa bits (bf16, fp8)
 * it gives f correctly rounded, where rounding to nearest twice would not. */
static float round_f32_odd(double f) {
    float x = (float)f;
    uint32_t u;
    memcpy(&u, &x, 4);
    if (x != x || (double)x == f) return x;
    if (fabs((double)x) > fabs(f)) u -= 1; /* inf (overflow) becomes the largest f32 */
    u |= 1u;
    memcpy(&x, &u, 4);
    return x;
}

/* f rounded to nearest (ties to even) as a bf16 holds it, once: the top 16 bits of
 * round_f32_odd(f) rounded to nearest. */
static double round_bf16(double f) {
    float x = round_f32_odd(f);
    uint32_t u;
    memcpy(&u, &x, 4);
    if (x != x) return f;
    u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u; /* past the largest: inf, as a cast gives */
    memcpy(&x, &u, 4);
    return x;
}

/* f rounded to float type ct (f64 and fp8 as they are). */
static double float_of_type(ElemKind ct, double f) {
    if (ct == ET_F32) return (float)f;
    if (ct == ET_F16) return (double)(_Float16)f;
    if (ct == ET_BF16) return round_bf16(f);
    return f;
}

/* A typed float constant holds a value of its type, as the same operation at run time gives
 * (`0.1 as f16` is 0.0999755859375, `1e5 as f16` inf); a weak literal keeps its digits until
 * it meets a type. fp8 constants come rounded by their casts. */
Val val_const_float(ElemKind ct, double f, int weak) {
    if (!weak) f = float_of_type(ct, f);
    return (Val){.kind = V_CONST, .ct = ct, .f = f, .i = spec_f2i(f), .weak = weak};
}

Val val_tile(TirValue *v) { return v ? (Val){.kind = V_TILE, .v = v} : val_error(); }

int val_is_value(const Val *v) { return v->kind == V_CONST || v->kind == V_TILE; }
int val_rank(const Val *v) { return v->kind == V_TILE ? v->v->type.rank : 0; }
const int *val_shape(const Val *v) { return v->kind == V_TILE ? v->v->type.shape : NULL; }
ElemKind val_elem(const Val *v) { return v->kind == V_TILE ? v->v->type.elem : v->ct; }

char *val_type_str(Spec *s, const Val *v) {
    if (v->kind == V_TILE) return tir_type_str(s->arena, &v->v->type);
    if (v->kind == V_CONST) return arena_printf(s->arena, "%s%s", et_name(v->ct), v->weak ? " literal" : "");
    if (v->kind == V_BLOCKPTR) {
        TirType t = spec_bp_type(v);
        return arena_printf(s->arena, "a block pointer to %s", tir_type_str(s->arena, &t));
    }
    static const char *const names[] = {"error", "nothing", "", "", "a type", "a list",
                                        "several values", "None", "':'"};
    return arena_strdup(s->arena, names[v->kind]);
}

/* "-128 to 127": the values of an integer type, for messages. */
const char *spec_range_str(Spec *s, ElemKind et) {
    char buf[64];
    tc_int_range_text(et, buf, sizeof buf);
    return arena_strdup(s->arena, buf);
}

TirType tir_type_make(ElemKind et, int rank, const int *shape) {
    TirType t = {.elem = et, .rank = rank};
    for (int d = 0; d < rank; d++) t.shape[d] = shape[d];
    return t;
}

TirValue *spec_emit(Spec *s, TirOpcode code, SrcLoc loc, TirValue **ops, int nops, TirType t) {
    TirOp *op = tir_op_append(s->k, s->block, code, loc, ops, nops, &t, 1);
    return op->results[0];
}

TirValue *spec_const_scalar(Spec *s, ElemKind et, int64_t i, double f, SrcLoc loc) {
    TirType t = {.elem = et};
    TirOp *op = tir_op_append(s->k, s->block, TIR_CONST, loc, NULL, 0, &t, 1);
    op->attr.i = et_is_float(et) ? spec_f2i(f) : et == ET_BOOL ? i != 0 : i;
    op->attr.f = et_is_float(et) ? f : (double)i;
    return op->results[0];
}

/* ---- casts and broadcasting ---- */
TirValue *spec_cast(Spec *s, TirValue *v, ElemKind et, SrcLoc loc) {
    if (v->type.elem == et) return v;
    TirType t = v->type;
    t.elem = et;
    return spec_emit(s, TIR_CAST, loc, &v, 1, t);
}

TirValue *spec_as_tile(Spec *s, Val v, SrcLoc loc) {
    if (v.kind == V_TILE) return v.v;
    if (v.kind != V_CONST) return NULL;
    return spec_const_scalar(s, v.ct, v.i, v.f, loc);
}

int spec_broadcast_shape(Spec *s, const Val *vals, int n, int *rank, int *shape, SrcLoc loc) {
    *rank = 0;
    for (int i = 0; i < n; i++)
        if (val_rank(&vals[i]) > *rank) *rank = val_rank(&vals[i]);
    for (int d = 0; d < *rank; d++) shape[d] = 1;
    for (int i = 0; i < n; i++) {
        int r = val_rank(&vals[i]);
        const int *sh = val_shape(&vals[i]);
        for (int d = 0; d < r; d++) {
            int td = *rank - r + d;
            if (sh[d] == shape[td] || sh[d] == 1) continue;
            if (shape[td] != 1) {
                diag_error(s->diags, loc, "shapes do not broadcast: %s and %s",
                           val_type_str(s, &vals[0]), val_type_str(s, &vals[i]));
                return 0;
            }
            shape[td] = sh[d];
        }
    }
    return spec_check_numel(s, *rank, shape, loc);
}

/* The product stops growing past the limit, so it never overflows whatever the shape. */
int spec_check_numel(Spec *s, int rank, const int *shape, SrcLoc loc) {
    int64_t n = 1;
    for (int d = 0; d < rank && n <= SPEC_MAX_NUMEL; d++) n *= shape[d];
    if (n <= SPEC_MAX_NUMEL) return 1;
    char *dims = arena_strdup(s->arena, "");
    for (int d = 0; d < rank; d++) dims = arena_printf(s->arena, "%s%s%d", dims, d ? ", " : "", shape[d]);
    diag_error(s->diags, loc, "tile of shape [%s] is too large: tiles hold at most %d elements", dims,
               SPEC_MAX_NUMEL);
    return 0;
}

TirValue *spec_expand_dims(Spec *s, TirValue *v, int axis, SrcLoc loc) {
    if (v->type.rank >= TIR_MAX_RANK) {
        diag_error(s->diags, loc, "tiles have at most %d dimensions", TIR_MAX_RANK);
        return NULL;
    }
    TirType t = v->type;
    memmove(t.shape + axis + 1, t.shape + axis, sizeof(int) * (size_t)(t.rank - axis));
    t.shape[axis] = 1;
    t.rank++;
    TirValue *e = spec_emit(s, TIR_EXPAND_DIMS, loc, &v, 1, t);
    e->def->attr.i = axis;
    return e;
}

static TirValue *broadcast_to(Spec *s, TirValue *v, int rank, const int *shape, SrcLoc loc) {
    if (v->type.rank == 0 && rank > 0) {
        TirType t = tir_type_make(v->type.elem, rank, shape);
        t.pointee = v->type.pointee;
        return spec_emit(s, TIR_SPLAT, loc, &v, 1, t);
    }
    while (v->type.rank < rank) /* add leading dims of size 1 */
        v = spec_expand_dims(s, v, 0, loc);
    for (int d = 0; d < rank; d++)
        if (v->type.shape[d] != shape[d]) {
            if (v->type.shape[d] != 1) {
                diag_error(s->diags, loc, "cannot broadcast %s to shape of rank %d",
                           tir_type_str(s->arena, &v->type), rank);
                return NULL;
            }
            TirType t = tir_type_make(v->type.elem, rank, shape);
            t.pointee = v->type.pointee;
            return spec_emit(s, TIR_BROADCAST, loc, &v, 1, t);
        }
    return v;
}

/* Implicit conversions never turn a pointer into a number or back (an explicit `as` refuses
 * it too), and a compile-time integer must fit the integer type it becomes. */
static int check_conversion(Spec *s, const Val *v, ElemKind et, SrcLoc loc) {
    if ((val_elem(v) == ET_PTR) != (et == ET_PTR)) {
        diag_error(s->diags, loc, "cannot use %s as %s (pointers and numbers do not convert implicitly)",
                   val_type_str(s, v), et == ET_PTR ? "a pointer" : et_name(et));
        return 0;
    }
    if (v->kind == V_CONST && et_is_int(et) && !et_is_float(v->ct) && !tc_int_fits(et, v->i)) {
        diag_error(s->diags, loc, "constant %lld does not fit %s (its range is %s)", (long long)v->i,
                   et_name(et), spec_range_str(s, et));
        return 0;
    }
    return 1;
}

TirValue *spec_materialize(Spec *s, Val v, ElemKind et, int rank, const int *shape, SrcLoc loc) {
    TirValue *t;
    if (!val_is_value(&v) || !check_conversion(s, &v, et, loc)) return NULL;
    if (v.kind == V_CONST && et_is_int(et) && et_is_float(v.ct)) /* stored as a cast would */
        t = spec_const_scalar(s, et, tc_float_to_int(et, v.f), v.f, loc);
    else if (v.kind == V_CONST) t = spec_const_scalar(s, et, v.i, v.f, loc);
    else t = et == ET_PTR ? v.v : spec_cast(s, v.v, et, loc);
    return broadcast_to(s, t, rank, shape, loc);
}

/* ---- promotion ---- */
static ElemKind wider_float(ElemKind a, ElemKind b) {
    if (a == b) return a;
    if (et_is_fp8(a) || et_is_fp8(b)) return a == ET_F64 || b == ET_F64 ? ET_F64 : ET_F32;
    if ((a == ET_F16 && b == ET_BF16) || (a == ET_BF16 && b == ET_F16)) return ET_F32;
    return et_bits(a) >= et_bits(b) ? a : b;
}

static ElemKind wider_int(ElemKind a, ElemKind b) {
    if (a == b) return a;
    if (et_bits(a) != et_bits(b)) return et_bits(a) > et_bits(b) ? a : b;
    return et_is_signed(a) ? b : a; /* unsigned wins at equal width */
}

static ElemKind strong_promote(ElemKind a, ElemKind b) {
    if (a == ET_BOOL && b == ET_BOOL) return ET_BOOL;
    if (et_is_float(a) && et_is_float(b)) return wider_float(a, b);
    if (et_is_float(a) || et_is_float(b)) { /* an integer or bool with a float: the float, */
        ElemKind f = et_is_float(a) ? a : b; /* but bf16 stays bf16 only beside bf16 (Triton's) */
        return f == ET_BF16 ? ET_F32 : f;
    }
    if (a == ET_BOOL) return b;
    if (b == ET_BOOL) return a;
    return wider_int(a, b);
}

ElemKind spec_promote(const Val *a, const Val *b) {
    int wa = a->kind == V_CONST && a->weak, wb = b->kind == V_CONST && b->weak;
    ElemKind ea = val_elem(a), eb = val_elem(b);
    if (wa && !wb) return et_is_float(ea) && !et_is_float(eb) ? ET_F32 : eb;
    if (wb && !wa) return et_is_float(eb) && !et_is_float(ea) ? ET_F32 : ea;
    return strong_promote(ea, eb);
}

/* ---- constant folding: checked in the promoted type (docs/language.md, "Constants") ---- */

/* Bitwise results and right shifts are bit patterns: they wrap to the type's width. */
static int folds_as_bits(OpKind op) {
    return op == OP_BITAND || op == OP_BITOR || op == OP_BITXOR || op == OP_SHR;
}

/* Two weak literals fold in 64 bits and stay weak (i32 when the result fits, like a literal). */
static Val fold_int(Spec *s, OpKind op, Val a, Val b, ElemKind et, int weak, SrcLoc loc) {
    int64_t r = 0;
    int rc = tc_int_binary(op, a.i, b.i, &r);
    if (weak) et = ET_I64;
    if (!rc && (op == OP_SHL || op == OP_SHR) && b.i >= et_bits(et)) rc = TC_INT_SHIFT;
    if (!rc && !folds_as_bits(op) && !ast_op_is_comparison(op) && !tc_int_fits(et, r)) rc = TC_INT_OVERFLOW;
    if (rc) {
        tc_int_report(s->diags, loc, rc, op, a.i, b.i, et);
        return val_error();
    }
    if (ast_op_is_comparison(op)) return val_const_int(ET_BOOL, r, 0);
    if (weak) return val_const_int(r >= INT32_MIN && r <= INT32_MAX ? ET_I32 : ET_I64, r, 1);
    return val_const_int(et, tc_int_wrap(et, r), 0);
}

/* The type an arithmetic operator or comparison computes in: the promoted type, except that
 * fp8 is for storage (arithmetic and comparisons happen in f32) and, as in Triton, `/` and `%`
 * of f16 or bf16 give f32 (the quotient of the exact 16-bit values, not rounded to 16 bits). */
static ElemKind arith_type(OpKind op, const Val *a, const Val *b) {
    ElemKind et = spec_promote(a, b);
    if (et_is_fp8(et)) return ET_F32;
    if ((op == OP_DIV || op == OP_REM) && (et == ET_F16 || et == ET_BF16)) return ET_F32;
    return et;
}

static Val fold_binary(Spec *s, OpKind op, Val a, Val b, SrcLoc loc) {
    ElemKind et = arith_type(op, &a, &b);
    int weak = a.weak && b.weak;
    if (op == OP_LOGAND || op == OP_LOGOR) return val_const_int(ET_BOOL, op == OP_LOGAND ? (a.i && b.i) : (a.i || b.i), 0);
    if (et_is_float(et)) {
        double x = a.ct == et || et_is_float(a.ct) ? a.f : (double)a.i;
        double y = et_is_float(b.ct) ? b.f : (double)b.i;
        double r;
        if (!weak) { /* each operand becomes a value of the type first, as at run time */
            x = float_of_type(et, x);
            y = float_of_type(et, y);
        }
        switch (op) {
        case OP_ADD: r = x + y; break;
        case OP_SUB: r = x - y; break;
        case OP_MUL: r = x * y; break;
        case OP_DIV: r = x / y; break;
        case OP_REM: r = fmod(x, y); break;
        case OP_LT: return val_const_int(ET_BOOL, x < y, 0);
        case OP_LE: return val_const_int(ET_BOOL, x <= y, 0);
        case OP_GT: return val_const_int(ET_BOOL, x > y, 0);
        case OP_GE: return val_const_int(ET_BOOL, x >= y, 0);
        case OP_EQ: return val_const_int(ET_BOOL, x == y, 0);
        case OP_NE: return val_const_int(ET_BOOL, x != y, 0);
        default:
            diag_error(s->diags, loc, "operator needs integer operands, got %s", et_name(et));
            return val_error();
        }
        return val_const_float(et, r, weak); /* two literals keep their digits */
    }
    return fold_int(s, op, a, b, et, weak, loc);
}

/* ---- binary operators on run-time values ---- */
static const int bin_of_op[] = {
    [OP_ADD] = BIN_ADD, [OP_SUB] = BIN_SUB, [OP_MUL] = BIN_MUL, [OP_DIV] = BIN_DIV,
    [OP_REM] = BIN_REM, [OP_SHL] = BIN_SHL, [OP_SHR] = BIN_SHR, [OP_BITAND] = BIN_AND,
    [OP_BITOR] = BIN_OR, [OP_BITXOR] = BIN_XOR, [OP_LOGAND] = BIN_AND, [OP_LOGOR] = BIN_OR,
};
static const int cmp_of_op[] = {[OP_LT] = CMP_LT, [OP_LE] = CMP_LE, [OP_GT] = CMP_GT,
                                [OP_GE] = CMP_GE, [OP_EQ] = CMP_EQ, [OP_NE] = CMP_NE};
static const char *const op_spelling[] = {
    [OP_ADD] = "+", [OP_SUB] = "-", [OP_MUL] = "*", [OP_DIV] = "/", [OP_REM] = "%",
    [OP_SHL] = "<<", [OP_SHR] = ">>", [OP_BITAND] = "&", [OP_BITOR] = "|", [OP_BITXOR] = "^",
    [OP_LT] = "<", [OP_LE] = "<=", [OP_GT] = ">", [OP_GE] = ">=", [OP_EQ] = "==",
    [OP_NE] = "!=", [OP_LOGAND] = "&&", [OP_LOGOR] = "||",
};

static Val pointer_arith(Spec *s, OpKind op, Val p, Val off, SrcLoc loc) {
    if (op != OP_ADD && op != OP_SUB) {
        diag_error(s->diags, loc, "operator '%s' is not defined on pointers", op_spelling[op]);
        return val_error();
    }
    if (!et_is_int(val_elem(&off)) && !(off.kind == V_CONST && off.ct == ET_BOOL)) {
        diag_error(s->diags, loc, "pointer offset must be an integer, got %s", val_type_str(s, &off));
        return val_error();
    }
    if (op == OP_SUB) off = spec_binary(s, OP_SUB, val_const_int(ET_I32, 0, 1), off, loc);
    Val both[2] = {p, off};
    int rank, shape[TIR_MAX_RANK];
    if (off.kind == V_ERROR || !spec_broadcast_shape(s, both, 2, &rank, shape, loc)) return val_error();
    ElemKind oet = val_elem(&off); /* a weak literal is i32, or i64 when it needs 64 bits */
    TirValue *pv = spec_materialize(s, p, ET_PTR, rank, shape, loc);
    TirValue *ov = spec_materialize(s, off, oet, rank, shape, loc);
    if (!pv || !ov) return val_error();
    TirValue *ops[2] = {pv, ov};
    TirType t = pv->type;
    return val_tile(spec_emit(s, TIR_ADDPTR, loc, ops, 2, t));
}

static int check_operand_kinds(Spec *s, OpKind op, ElemKind et, SrcLoc loc) {
    int bitwise = op == OP_SHL || op == OP_SHR || op == OP_BITAND || op == OP_BITOR || op == OP_BITXOR;
    if (bitwise && et_is_float(et)) {
        diag_error(s->diags, loc, "operator '%s' needs integer or bool operands, got %s",
                   op_spelling[op], et_name(et));
        return 0;
    }
    if (et == ET_BOOL && (op <= OP_REM || op == OP_SHL || op == OP_SHR)) {
        diag_error(s->diags, loc, "operator '%s' is not defined on bool", op_spelling[op]);
        return 0;
    }
    return 1;
}

Val spec_binary(Spec *s, OpKind op, Val a, Val b, SrcLoc loc) {
    if (a.kind == V_ERROR || b.kind == V_ERROR) return val_error();
    if (a.kind == V_BLOCKPTR || b.kind == V_BLOCKPTR) {
        diag_error(s->diags, loc, "operator '%s' is not defined on %s: it is no tile of pointers "
                   "(move it with advance(bp, [d0, ...]), read its block with load(bp))", op_spelling[op],
                   val_type_str(s, a.kind == V_BLOCKPTR ? &a : &b));
        return val_error();
    }
    if (!val_is_value(&a) || !val_is_value(&b)) {
        diag_error(s->diags, loc, "operator '%s' needs values, got %s and %s", op_spelling[op],
                   val_type_str(s, &a), val_type_str(s, &b));
        return val_error();
    }
    if (val_elem(&a) == ET_PTR) return pointer_arith(s, op, a, b, loc);
    if (val_elem(&b) == ET_PTR) {
        if (op == OP_ADD) return pointer_arith(s, op, b, a, loc);
        diag_error(s->diags, loc, "operator '%s' is not defined on pointers", op_spelling[op]);
        return val_error();
    }
    int logical = op == OP_LOGAND || op == OP_LOGOR;
    ElemKind et = logical ? ET_BOOL : arith_type(op, &a, &b);
    if (!logical && !check_operand_kinds(s, op, et, loc)) return val_error();
    if (a.kind == V_CONST && b.kind == V_CONST) return fold_binary(s, op, a, b, loc);
    Val both[2] = {a, b};
    int rank, shape[TIR_MAX_RANK];
    if (!spec_broadcast_shape(s, both, 2, &rank, shape, loc)) return val_error();
    /* Triton's `>>` is arithmetic when the left operand is signed, whatever the promoted type:
     * an i32 shifted by a u32 shifts in its sign and gives a u32 (a constant folds so too) */
    ElemKind calc = op == OP_SHR && et_is_signed(val_elem(&a)) ? et_signed_of(et) : et;
    TirValue *ops[2];
    for (int i = 0; i < 2; i++) {
        Val v = both[i];
        if (logical && val_elem(&v) != ET_BOOL) v = spec_binary(s, OP_NE, v, val_const_int(ET_I32, 0, 1), loc);
        if (!(ops[i] = spec_materialize(s, v, calc, rank, shape, loc))) return val_error();
    }
    if (ast_op_is_comparison(op)) {
        TirValue *r = spec_emit(s, TIR_CMP, loc, ops, 2, tir_type_make(ET_BOOL, rank, shape));
        r->def->attr.i = cmp_of_op[op];
        return val_tile(r);
    }
    TirValue *r = spec_emit(s, TIR_BINARY, loc, ops, 2, tir_type_make(calc, rank, shape));
    r->def->attr.i = bin_of_op[op];
    return val_tile(calc == et ? r : spec_cast(s, r, et, loc));
}

/* ---- unary operators ---- */
static Val spec_unary(Spec *s, OpKind op, Val a, SrcLoc loc) {
    if (a.kind == V_ERROR) return a;
    if (!val_is_value(&a) || val_elem(&a) == ET_PTR) {
        diag_error(s->diags, loc, "unary operator needs a number, got %s", val_type_str(s, &a));
        return val_error();
    }
    ElemKind et = val_elem(&a);
    if (op == OP_NOT && et != ET_BOOL) return spec_binary(s, OP_EQ, a, val_const_int(ET_I32, 0, 1), loc);
    if (op == OP_BITNOT && et_is_float(et)) {
        diag_error(s->diags, loc, "operator '~' needs an integer, got %s", et_name(et));
        return val_error();
    }
    if (a.kind == V_CONST) {
        if (op == OP_NEG) return et_is_float(et) ? val_const_float(et, -a.f, a.weak)
                                                 : fold_binary(s, OP_SUB, val_const_int(et, 0, a.weak), a, loc);
        if (op == OP_NOT) return val_const_int(ET_BOOL, !a.i, 0);
        /* all ones of the type: for bool that is 1, so ~true is false, as at run time */
        return fold_binary(s, OP_BITXOR, a, val_const_int(et, et == ET_BOOL ? 1 : -1, a.weak), loc);
    }
    TirValue *x = et_is_fp8(et) ? spec_cast(s, a.v, ET_F32, loc) : a.v;
    TirValue *r = spec_emit(s, TIR_UNARY, loc, &x, 1, x->type);
    r->def->attr.i = op == OP_NEG ? UN_NEG : UN_NOT;
    return val_tile(r);
}

/* ---- indexing: x[:, None] ---- */
static Val spec_index(Spec *s, const Expr *e) {
    Val base = spec_expr(s, e->a);
    if (base.kind == V_ERROR) return base;
    if (!val_is_value(&base)) {
        diag_error(s->diags, e->loc, "cannot index %s", val_type_str(s, &base));
        return val_error();
    }
    int kept = 0;
    for (int i = 0; i < e->nargs; i++) {
        if (e->args[i]->kind == EX_SLICE) kept++;
        else if (e->args[i]->kind != EX_NONE) {
            diag_error(s->diags, e->args[i]->loc, "index items must be ':' or None (tiles are indexed through pointers)");
            return val_error();
        }
    }
    if (kept != val_rank(&base)) {
        diag_error(s->diags, e->loc, "index has %d ':' but the value %s has rank %d", kept,
                   val_type_str(s, &base), val_rank(&base));
        return val_error();
    }
    TirValue *v = spec_as_tile(s, base, e->loc);
    for (int i = 0; i < e->nargs; i++) {
        if (e->args[i]->kind != EX_NONE) continue;
        if (!(v = spec_expand_dims(s, v, i, e->loc))) return val_error();
    }
    return val_tile(v);
}

/* `x as *T` (x an i64/u64 address, or a pointer to another type) and `p as i64`/`u64`: a
 * pointer's address as a number and back, for arrays of pointers (grouped GEMM) and for
 * viewing memory as another element type. */
static Val cast_pointer(Spec *s, const Expr *e, Val a, ElemKind et) {
    int to_ptr = e->type->ptr_depth > 0;
    ElemKind from = val_elem(&a);
    const char *star = to_ptr ? "*" : "";
    if (to_ptr && from != ET_PTR && !(et_is_int(from) && et_bits(from) == 64) &&
        !(a.kind == V_CONST && et_is_int(a.ct))) {
        diag_error(s->diags, e->loc, "cannot cast %s to *%s (an address converts from i64 or u64)",
                   val_type_str(s, &a), et_name(et));
        return val_error();
    }
    if (!to_ptr && !(et_is_int(et) && et_bits(et) == 64)) {
        diag_error(s->diags, e->loc, "cannot cast %s to %s%s (a pointer converts to i64 or u64)",
                   val_type_str(s, &a), star, et_name(et));
        return val_error();
    }
    TirValue *v = a.kind == V_CONST ? spec_const_scalar(s, ET_I64, a.i, 0, e->loc) : a.v;
    TirType t = v->type;
    t.elem = to_ptr ? ET_PTR : et;
    t.pointee = to_ptr ? et : ET_VOID;
    if (tir_type_equal(&t, &v->type)) return val_tile(v);
    return val_tile(spec_emit(s, TIR_CAST, e->loc, &v, 1, t));
}

Val spec_u64_value(Spec *s, uint64_t bits, SrcLoc loc) {
    if (bits <= INT64_MAX) return val_const_int(ET_U64, (int64_t)bits, 0);
    return val_tile(spec_const_scalar(s, ET_U64, (int64_t)bits, (double)bits, loc));
}

Val spec_const_as(Spec *s, Val a, ElemKind et, SrcLoc loc) {
    double f = et_is_float(a.ct) ? a.f : (double)a.i;
    if (et_is_fp8(et)) /* the value the format holds */
        return val_const_float(et, fp8_to_f32(fp8_from_f32(round_f32_odd(f), et), et), 0);
    if (et_is_float(et)) return val_const_float(et, f, 0);
    if (et == ET_BOOL) return val_const_int(et, et_is_float(a.ct) ? a.f != 0 : a.i != 0, 0);
    int64_t i = et_is_float(a.ct) ? tc_float_to_int(et, a.f) : tc_int_wrap(et, a.i);
    return et == ET_U64 ? spec_u64_value(s, (uint64_t)i, loc) : val_const_int(et, i, 0);
}

static Val spec_cast_expr(Spec *s, const Expr *e) {
    Val a = spec_expr(s, e->a);
    if (a.kind == V_ERROR) return a;
    ElemKind et = et_from_name(e->type->name);
    Binding *named = et == ET_VOID ? spec_lookup(s, e->type->name) : NULL;
    if (named && named->val.kind == V_TYPE) et = named->val.ct; /* @types' T, a type argument */
    if (et == ET_VOID) {
        diag_error(s->diags, e->type->loc, "cannot cast to '%s%s'%s", e->type->ptr_depth ? "*" : "",
                   e->type->name, named ? " (it is a value, not a type)" : "");
        return val_error();
    }
    if (!val_is_value(&a)) {
        diag_error(s->diags, e->loc, "cannot cast %s to %s%s", val_type_str(s, &a),
                   e->type->ptr_depth ? "*" : "", et_name(et));
        return val_error();
    }
    if (e->type->ptr_depth || val_elem(&a) == ET_PTR) return cast_pointer(s, e, a, et);
    if (a.kind == V_CONST) return spec_const_as(s, a, et, e->loc);
    return val_tile(spec_cast(s, a.v, et, e->loc));
}

static Val spec_name(Spec *s, const Expr *e) {
    Binding *b = spec_lookup(s, e->name);
    if (b) return b->val;
    ElemKind et = et_from_name(e->name);
    if (et != ET_VOID) return (Val){.kind = V_TYPE, .ct = et};
    diag_error(s->diags, e->loc, "use of undeclared name '%s'", e->name);
    return val_error();
}

static Val spec_list(Spec *s, const Expr *e) {
    Val v = {.kind = V_LIST, .nitems = e->nargs};
    v.items = arena_alloc(s->arena, sizeof(Val) * (size_t)(e->nargs + 1));
    for (int i = 0; i < e->nargs; i++) {
        v.items[i] = spec_expr(s, e->args[i]);
        if (v.items[i].kind == V_ERROR) return val_error();
    }
    return v;
}

static Val spec_call(Spec *s, const Expr *e) {
    const Func *f = module_find_func(s->module, e->name);
    if (f && !f->is_kernel) return spec_call_helper(s, f, e);
    if (spec_is_builtin(e->name)) return spec_builtin(s, e);
    diag_error(s->diags, e->loc, "call to unknown function '%s'", e->name);
    return val_error();
}

Val spec_expr(Spec *s, const Expr *e) {
    switch (e->kind) {
    case EX_INT: return val_const_int(e->ival > INT32_MAX || e->ival < INT32_MIN ? ET_I64 : ET_I32, e->ival, 1);
    case EX_FLOAT: return val_const_float(ET_F32, e->fval, 1);
    case EX_BOOL: return val_const_int(ET_BOOL, e->ival, 0);
    case EX_NONE: return (Val){.kind = V_NONE};
    case EX_SLICE: return (Val){.kind = V_SLICE};
    case EX_NAME: return spec_name(s, e);
    case EX_UNARY: return spec_unary(s, e->op, spec_expr(s, e->a), e->loc);
    case EX_BINARY: {
        Val a = spec_expr(s, e->a);
        Val b = spec_expr(s, e->b);
        return spec_binary(s, e->op, a, b, e->loc);
    }
    case EX_CALL: return spec_call(s, e);
    case EX_INDEX: return spec_index(s, e);
    case EX_CAST: return spec_cast_expr(s, e);
    case EX_LIST: return spec_list(s, e);
    case EX_TUPLE:
        diag_error(s->diags, e->loc, "a tuple (a, b, ...) is only allowed as the first argument of "
                   "reduce() and associative_scan()");
        return val_error();
    case EX_STRING:
        diag_error(s->diags, e->loc, "a string literal is only an argument such as sem= or scope= of an atomic, a message, print()'s prefix or load()'s padding_option=");
        return val_error();
    }
    return val_error();
}

int spec_const_int(Spec *s, const Expr *e, int64_t *out) {
    Val v = spec_expr(s, e);
    if (v.kind == V_ERROR) return 0;
    if (v.kind != V_CONST || et_is_float(v.ct)) {
        diag_error(s->diags, e->loc, "expected a compile-time integer (a literal or const parameter), got %s",
                   val_type_str(s, &v));
        return 0;
    }
    *out = v.i;
    return 1;
}
