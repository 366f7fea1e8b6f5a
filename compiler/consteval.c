/* consteval.c: integer evaluation of annotation expressions (@grid, @constraint, @tune
 * candidates, const defaults) over named values, and resolution of a kernel's const
 * parameters from what the caller gave, defaults and first tuning candidates. */
#include <string.h>
#include "driver.h"

static int eval_error(Diags *d, const Expr *e, const char *msg, const char *name) {
    diag_error(d, e->loc, msg, name);
    return -1;
}

int tc_int_binary(OpKind op, int64_t a, int64_t b, int64_t *out) {
    switch (op) {
    case OP_ADD: *out = (int64_t)((uint64_t)a + (uint64_t)b); return 0;
    case OP_SUB: *out = (int64_t)((uint64_t)a - (uint64_t)b); return 0;
    case OP_MUL: *out = (int64_t)((uint64_t)a * (uint64_t)b); return 0;
    case OP_DIV: case OP_REM:
        if (b == 0 || (a == INT64_MIN && b == -1)) return -1;
        *out = op == OP_DIV ? a / b : a % b;
        return 0;
    case OP_SHL: *out = b < 0 || b > 63 ? 0 : (int64_t)((uint64_t)a << b); return 0;
    case OP_SHR: *out = b < 0 || b > 63 ? (a < 0 ? -1 : 0) : a >> b; return 0;
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
    default: return -1;
    }
}

static int eval_call(const Expr *e, const ConstBinding *vals, int n, int64_t *out, Diags *d) {
    int is_cdiv = strcmp(e->name, "cdiv") == 0;
    int is_min = strcmp(e->name, "min") == 0 || strcmp(e->name, "minimum") == 0;
    int is_max = strcmp(e->name, "max") == 0 || strcmp(e->name, "maximum") == 0;
    if (!is_cdiv && !is_min && !is_max)
        return eval_error(d, e, "'%s' cannot be used in a launch or constraint expression (use cdiv, min, max)", e->name);
    if (e->nargs != 2) return eval_error(d, e, "%s() takes two arguments here", e->name);
    int64_t a, b;
    if (tc_eval_int(e->args[0], vals, n, &a, d) || tc_eval_int(e->args[1], vals, n, &b, d)) return -1;
    if (is_min) *out = a < b ? a : b;
    else if (is_max) *out = a > b ? a : b;
    else if (b <= 0) return eval_error(d, e, "cdiv() by a value that is not positive%s", "");
    else *out = a >= 0 ? (a + b - 1) / b : a / b;
    return 0;
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
        *out = e->op == OP_NEG ? (int64_t)(0 - (uint64_t)a) : e->op == OP_NOT ? !a : ~a;
        return 0;
    case EX_BINARY:
        if (tc_eval_int(e->a, vals, n, &a, d) || tc_eval_int(e->b, vals, n, &b, d)) return -1;
        if (tc_int_binary(e->op, a, b, out)) return eval_error(d, e, "division by zero%s", "");
        return 0;
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

static int is_const_name(const Func *f, const char *name) {
    if (strcmp(name, "num_warps") == 0 || strcmp(name, "num_stages") == 0) return 1;
    for (int i = 0; i < f->nparams; i++)
        if (f->params[i].is_const && strcmp(f->params[i].name, name) == 0) return 1;
    return 0;
}

static int resolve_one(const Func *f, const char *name, const Expr *dflt, int64_t builtin_dflt,
                       const ConstBinding *given, int ngiven, ConstBinding *out, int n, Diags *d) {
    const ConstBinding *g = given_value(given, ngiven, name);
    const Expr *cand = first_candidate(f, name);
    out[n].name = name;
    if (g) out[n].value = g->value;
    else if (dflt) return tc_eval_int(dflt, out, n, &out[n].value, d);
    else if (cand) return tc_eval_int(cand, out, n, &out[n].value, d);
    else if (builtin_dflt >= 0) out[n].value = builtin_dflt;
    else {
        diag_error(d, f->loc, "const parameter '%s' of kernel '%s' needs a value (give it, a default, or @tune candidates)",
                   name, f->name);
        return -1;
    }
    return 0;
}

int tc_resolve_consts(const Func *f, const ConstBinding *given, int ngiven, ConstBinding *out,
                      int max, Arena *arena, Diags *d) {
    (void)arena;
    for (int i = 0; i < ngiven; i++)
        if (!is_const_name(f, given[i].name)) {
            diag_error(d, f->loc, "kernel '%s' has no const parameter '%s'", f->name, given[i].name);
            return -1;
        }
    int n = 0;
    for (int i = 0; i < f->nparams; i++) {
        if (!f->params[i].is_const) continue;
        if (n + 2 >= max) return -1;
        if (resolve_one(f, f->params[i].name, f->params[i].default_value, -1, given, ngiven, out, n, d)) return -1;
        n++;
    }
    if (n + 2 > max) return -1;
    if (resolve_one(f, "num_warps", NULL, 4, given, ngiven, out, n, d)) return -1;
    int64_t nw = out[n++].value;
    if (resolve_one(f, "num_stages", NULL, 2, given, ngiven, out, n, d)) return -1;
    int64_t ns = out[n++].value;
    if (nw < 1 || nw > 32 || (nw & (nw - 1))) {
        diag_error(d, f->loc, "num_warps must be a power of two from 1 to 32, got %lld", (long long)nw);
        return -1;
    }
    if (ns < 1 || ns > 8) {
        diag_error(d, f->loc, "num_stages must be from 1 to 8, got %lld", (long long)ns);
        return -1;
    }
    return n;
}
