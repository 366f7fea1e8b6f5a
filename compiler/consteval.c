/* consteval.c: integer evaluation of annotation expressions (@grid, @constraint, @tune
 * candidates, const defaults) over named values, and resolution of a kernel's const
 * parameters from what the caller gave, defaults and first tuning candidates. All of it is
 * checked arithmetic: overflow, division by zero and out-of-range shifts are errors. */
#include <inttypes.h>
#include <math.h>
#include <string.h>
#include "driver.h"

static int eval_error(Diags *d, const Expr *e, const char *msg, const char *name) {
    diag_error(d, e->loc, msg, name);
    return -1;
}

static int shift_int(OpKind op, int64_t a, int64_t b, int64_t *out) {
    if (b < 0 || b > 63) return TC_INT_SHIFT;
    if (op == OP_SHR) {
        *out = a >> b; /* arithmetic: compilers agree, and C23 defines it */
        return 0;
    }
    int64_t r = (int64_t)((uint64_t)a << b);
    if ((r >> b) != a) return TC_INT_OVERFLOW;
    *out = r;
    return 0;
}

static int divide_int(OpKind op, int64_t a, int64_t b, int64_t *out) {
    if (b == 0) return TC_INT_DIV_ZERO;
    if (b == -1) { /* INT64_MIN / -1 does not fit; the remainder is 0 */
        if (op == OP_DIV && a == INT64_MIN) return TC_INT_OVERFLOW;
        *out = op == OP_DIV ? -a : 0;
        return 0;
    }
    *out = op == OP_DIV ? a / b : a % b;
    return 0;
}

int tc_int_binary(OpKind op, int64_t a, int64_t b, int64_t *out) {
    switch (op) {
    case OP_ADD: return __builtin_add_overflow(a, b, out) ? TC_INT_OVERFLOW : 0;
    case OP_SUB: return __builtin_sub_overflow(a, b, out) ? TC_INT_OVERFLOW : 0;
    case OP_MUL: return __builtin_mul_overflow(a, b, out) ? TC_INT_OVERFLOW : 0;
    case OP_DIV: case OP_REM: return divide_int(op, a, b, out);
    case OP_SHL: case OP_SHR: return shift_int(op, a, b, out);
    case OP_BITAND: *out = a & b; return 0;
    case OP_BITOR: *out = a | b; return 0;
    case OP_BITXOR: *out = a ^ b; return 0;
    case OP_LT: *out = a < b; return 0;
    case OP_LE: *out = a <= b; return 0;
    case OP_GT: *out = a > b; return 0;
    case OP_GE: *out = a >= b; return 0;
    case OP_EQ: *out = a == b; return 0;
    case OP_NE: *out = a != b; return 0;
    case OP_LOGAND: *out = a && b; return 0;
    case OP_LOGOR: *out = a || b; return 0;
    default: return TC_INT_NOT_BINARY;
    }
}

/* Ranges of the integer types; u64 constants are limited to the i64 range they are held in. */
int tc_int_fits(ElemKind et, int64_t v) {
    if (et == ET_BOOL) return v == 0 || v == 1;
    if (!et_is_int(et) || et_bits(et) == 64) return et != ET_U64 || v >= 0;
    int bits = et_bits(et);
    if (et_is_signed(et)) return v >= -(INT64_C(1) << (bits - 1)) && v < (INT64_C(1) << (bits - 1));
    return v >= 0 && v < (INT64_C(1) << bits);
}

int64_t tc_int_wrap(ElemKind et, int64_t v) {
    if (et == ET_BOOL) return v != 0;
    if (!et_is_int(et) || et_bits(et) >= 64) return v;
    int bits = et_bits(et);
    uint64_t m = (UINT64_C(1) << bits) - 1, u = (uint64_t)v & m;
    return et_is_signed(et) && (u >> (bits - 1)) ? (int64_t)(u | ~m) : (int64_t)u;
}

int64_t tc_float_to_int(ElemKind et, double f) {
    int bits = et_bits(et);
    if (f != f) return 0;
    if (et_is_signed(et)) {
        int64_t max = (int64_t)(UINT64_MAX >> (65 - bits));
        if (f <= (double)(-max - 1)) return -max - 1;
        return f >= ldexp(1.0, bits - 1) ? max : (int64_t)f;
    }
    if (f <= 0) return 0;
    return f >= ldexp(1.0, bits) ? (int64_t)(UINT64_MAX >> (64 - bits)) : (int64_t)(uint64_t)f;
}

static const char *const op_text[] = {
    [OP_ADD] = "+", [OP_SUB] = "-", [OP_MUL] = "*", [OP_DIV] = "/", [OP_REM] = "%",
    [OP_SHL] = "<<", [OP_SHR] = ">>",
};

void tc_int_report(Diags *d, SrcLoc loc, int code, OpKind op, int64_t a, int64_t b, ElemKind et) {
    const char *o = op <= OP_SHR ? op_text[op] : "?";
    if (code == TC_INT_DIV_ZERO)
        diag_error(d, loc, "division by zero in a constant expression (%" PRId64 " %s 0)", a, o);
    else if (code == TC_INT_SHIFT)
        diag_error(d, loc, "shift by %" PRId64 " is out of range for %s (0 to %d)", b, et_name(et),
                   et_bits(et) - 1);
    else if (code == TC_INT_OVERFLOW)
        diag_error(d, loc, "integer overflow in a constant expression: %" PRId64 " %s %" PRId64 " does not fit %s%s",
                   a, o, b, et_name(et),
                   et == ET_U64 ? " (u64 constants are at most 9223372036854775807; a larger u64 "
                   "is a cast of a negative i64: (-9223372036854775807 - 1) as u64 is 2^63)" : "");
    else
        diag_error(d, loc, "expected an integer expression");
}

/* next_pow2(x): the smallest power of two >= x (1 for x <= 1). */
static int eval_next_pow2(const Expr *e, const ConstBinding *vals, int n, int64_t *out, Diags *d) {
    int64_t x, p = 1;
    if (e->nargs != 1) return eval_error(d, e, "%s() takes one argument", e->name);
    if (tc_eval_int(e->args[0], vals, n, &x, d)) return -1;
    while (p < x && p <= INT64_MAX / 2) p *= 2;
    if (p < x) return eval_error(d, e, "next_pow2() of a value past 2^62%s", "");
    *out = p;
    return 0;
}

static int eval_call(const Expr *e, const ConstBinding *vals, int n, int64_t *out, Diags *d) {
    if (strcmp(e->name, "next_pow2") == 0) return eval_next_pow2(e, vals, n, out, d);
    int is_cdiv = strcmp(e->name, "cdiv") == 0;
    int is_min = strcmp(e->name, "min") == 0 || strcmp(e->name, "minimum") == 0;
    int is_max = strcmp(e->name, "max") == 0 || strcmp(e->name, "maximum") == 0;
    if (!is_cdiv && !is_min && !is_max)
        return eval_error(d, e, "'%s' cannot be used in a launch or constraint expression (use cdiv, min, max, next_pow2)", e->name);
    if (e->nargs != 2) return eval_error(d, e, "%s() takes two arguments here", e->name);
    int64_t a, b;
    if (tc_eval_int(e->args[0], vals, n, &a, d) || tc_eval_int(e->args[1], vals, n, &b, d)) return -1;
    if (is_min) *out = a < b ? a : b;
    else if (is_max) *out = a > b ? a : b;
    else if (b <= 0) return eval_error(d, e, "cdiv() by a value that is not positive%s", "");
    else *out = a / b + (a > 0 && a % b != 0); /* rounds up without overflowing */
    return 0;
}

static int eval_binary(OpKind op, int64_t a, int64_t b, SrcLoc loc, int64_t *out, Diags *d) {
    int rc = tc_int_binary(op, a, b, out);
    if (rc) tc_int_report(d, loc, rc, op, a, b, ET_I64);
    return rc ? -1 : 0;
}

int tc_eval_int(const Expr *e, const ConstBinding *vals, int n, int64_t *out, Diags *d) {
    int64_t a, b;
    switch (e->kind) {
    case EX_INT: case EX_BOOL: *out = e->ival; return 0;
    case EX_NAME:
        for (int i = n - 1; i >= 0; i--)
            if (strcmp(vals[i].name, e->name) == 0) {
                *out = vals[i].value;
                return 0;
            }
        return eval_error(d, e, "'%s' is not an integer parameter or const here", e->name);
    case EX_UNARY:
        if (tc_eval_int(e->a, vals, n, &a, d)) return -1;
        if (e->op == OP_NEG) return eval_binary(OP_SUB, 0, a, e->loc, out, d);
        *out = e->op == OP_NOT ? !a : ~a;
        return 0;
    case EX_BINARY:
        if (tc_eval_int(e->a, vals, n, &a, d) || tc_eval_int(e->b, vals, n, &b, d)) return -1;
        return eval_binary(e->op, a, b, e->loc, out, d);
    case EX_CALL: return eval_call(e, vals, n, out, d);
    default: return eval_error(d, e, "expected an integer expression%s", "");
    }
}

/* The first @tune candidate of `name`, if any. */
static const Expr *first_candidate(const Func *f, const char *name) {
    for (int i = 0; i < f->nanns; i++) {
        const Annotation *a = &f->anns[i];
        if (a->kind != ANN_TUNE) continue;
        for (int j = 0; j < a->nargs; j++)
            if (a->args[j].name && strcmp(a->args[j].name, name) == 0 && a->args[j].value) {
                const Expr *v = a->args[j].value;
                return v->kind == EX_LIST ? (v->nargs ? v->args[0] : NULL) : v;
            }
    }
    return NULL;
}

static const ConstBinding *given_value(const ConstBinding *g, int n, const char *name) {
    for (int i = 0; i < n; i++)
        if (strcmp(g[i].name, name) == 0) return &g[i];
    return NULL;
}

int tc_is_const_name(const Func *f, const char *name) {
    if (strcmp(name, "num_warps") == 0 || strcmp(name, "num_stages") == 0) return 1;
    for (int i = 0; i < f->nparams; i++)
        if (f->params[i].is_const && strcmp(f->params[i].name, name) == 0) return 1;
    return 0;
}

/* out[n] = the value of const `name`: given, else its default, else its first candidate,
 * else the built-in default (-1: none). Checked where it comes from: given values at loc. */
static int resolve_one(const Func *f, const char *name, const Expr *dflt, int64_t builtin_dflt, SrcLoc loc,
                       const ConstBinding *given, int ngiven, ConstBinding *out, int n, Diags *d) {
    const ConstBinding *g = given_value(given, ngiven, name);
    const Expr *src = g ? NULL : dflt ? dflt : first_candidate(f, name);
    out[n].name = name;
    if (g) out[n].value = g->value;
    else if (src && tc_eval_int(src, out, n, &out[n].value, d)) return TC_CONSTS_ERROR;
    else if (!src && builtin_dflt >= 0) out[n].value = builtin_dflt;
    else if (!src) {
        diag_error(d, f->loc, "const parameter '%s' of kernel '%s' needs a value (give it, a default, or @tune candidates)",
                   name, f->name);
        return TC_CONSTS_MISSING;
    }
    return tc_const_check(f, name, out[n].value, src ? src->loc : loc, d) ? TC_CONSTS_ERROR : 0;
}

static int check_given_names(const Func *f, const ConstBinding *given, int ngiven, Diags *d) {
    for (int i = 0; i < ngiven; i++)
        if (!tc_is_const_name(f, given[i].name)) {
            diag_error(d, f->loc, "kernel '%s' has no const parameter '%s'", f->name, given[i].name);
            return TC_CONSTS_ERROR;
        }
    return 0;
}

int tc_resolve_consts(const Func *f, const ConstBinding *given, int ngiven, ConstBinding *out,
                      int max, Arena *arena, Diags *d) {
    (void)arena;
    if (check_given_names(f, given, ngiven, d)) return TC_CONSTS_ERROR;
    int n = 0, rc = 0;
    for (int i = 0; i < f->nparams && rc == 0; i++) {
        const Param *p = &f->params[i];
        if (!p->is_const) continue;
        if (n + 2 >= max) {
            diag_error(d, f->loc, "kernel '%s' has more const parameters than this caller allows (%d)", f->name, max - 2);
            return TC_CONSTS_ERROR;
        }
        rc = resolve_one(f, p->name, p->default_value, -1, p->loc, given, ngiven, out, n++, d);
    }
    if (rc == 0 && n + 2 > max) rc = TC_CONSTS_ERROR;
    if (rc == 0) rc = resolve_one(f, "num_warps", NULL, 4, f->loc, given, ngiven, out, n++, d);
    if (rc == 0) rc = resolve_one(f, "num_stages", NULL, 2, f->loc, given, ngiven, out, n++, d);
    return rc ? rc : n;
}

/* ---- values for several kernels (tilec -D) ---- */
int tc_defines_for(const Func *f, const ConstBinding *defs, int ndefs, ConstBinding *out) {
    int n = 0;
    for (int i = 0; i < ndefs; i++)
        if (tc_is_const_name(f, defs[i].name)) out[n++] = defs[i];
    return n;
}

int tc_check_defines(const Func *const *kernels, int nkernels, const ConstBinding *defs, int ndefs,
                     Diags *d) {
    int bad = 0;
    for (int i = 0; i < ndefs; i++) {
        int k = 0;
        while (k < nkernels && !tc_is_const_name(kernels[k], defs[i].name)) k++;
        if (k < nkernels) continue;
        if (nkernels == 1)
            diag_error(d, (SrcLoc){0}, "kernel '%s' has no const parameter '%s'", kernels[0]->name, defs[i].name);
        else
            diag_error(d, (SrcLoc){0}, "no kernel here has a const parameter '%s'", defs[i].name);
        bad = 1;
    }
    return bad ? -1 : 0;
}
