/* tilec_values.c: the NAME=VALUE arguments of `tilec run` and `tilec tune` and of `// run:`
 * lines: small expressions (+ - * / % parentheses, integer and float literals, true, false,
 * inf, nan, other names) evaluated with checked arithmetic. Integers stay 64-bit integers
 * (no detour through double); an overflow, a division by zero, a float literal beyond double's range or
 * a malformed expression is a usage error (exit 2), never a wrapped value. */
#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tilec.h"

typedef struct Eval {
    const char *s;
    TilecValues *vals;
    int unresolved; /* a name not resolved yet: try again later */
    int depth;      /* of parentheses and unary minus: bounded, so no input overflows the stack */
    char err[160];  /* why the expression is bad; "" when it is fine */
} Eval;

static TilecNum eval_sum(Eval *e);

static void eval_fail(Eval *e, const char *msg)
{
    if (!e->err[0])
        snprintf(e->err, sizeof e->err, "%s", msg);
}

static void eval_space(Eval *e)
{
    while (isspace((unsigned char)*e->s))
        e->s++;
}

static TilecNum num_int(int64_t i) { return (TilecNum){ .i = i, .f = (double)i }; }
static TilecNum num_float(double f) { return (TilecNum){ .is_float = 1, .f = f }; }

static TilecNum eval_float_result(Eval *e, double f)
{
    if (!isfinite(f))
        eval_fail(e, "the result is out of the range of a double");
    return num_float(f);
}

/* A literal: an integer (decimal or 0x hex) or a float ("1e6", "2.5"): a float when strtod
 * reads further than strtoll does. */
static TilecNum eval_number(Eval *e)
{
    const char *s = e->s;
    char *end_i, *end_f;
    int hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
    errno = 0;
    long long i = strtoll(s, &end_i, hex ? 16 : 10);
    int int_range = errno == ERANGE;
    errno = 0;
    double f = hex ? 0 : strtod(s, &end_f);
    if (!hex && end_f > end_i) {
        e->s = end_f;
        if (errno == ERANGE && fabs(f) > 1)
            eval_fail(e, "a number out of the range of a double");
        return eval_float_result(e, f);
    }
    e->s = end_i;
    if (int_range)
        eval_fail(e, "an integer out of the 64-bit range");
    return num_int((int64_t)i);
}

static TilecNum eval_name(Eval *e)
{
    const char *s = e->s;
    size_t n = 0;
    while (isalnum((unsigned char)s[n]) || s[n] == '_')
        n++;
    e->s += n;
    if (n == 4 && !strncmp(s, "true", 4))
        return num_int(1);
    if (n == 5 && !strncmp(s, "false", 5))
        return num_int(0);
    const TilecValue *ref = n ? tilec_value_findn(e->vals, s, n) : NULL;
    if (!ref && n == 3 && (!strncmp(s, "inf", 3) || !strncmp(s, "nan", 3))) /* unless a name */
        return num_float(s[0] == 'i' ? INFINITY : NAN);
    if (!n)
        eval_fail(e, "expected a number, a name or '('");
    else if (!ref)
        eval_fail(e, "an unknown name");
    else if (!ref->resolved)
        e->unresolved = 1;
    return ref && ref->resolved ? ref->num : num_int(0);
}

enum { MAX_DEPTH = 200 };

static TilecNum eval_atom(Eval *e)
{
    eval_space(e);
    if ((*e->s == '(' || *e->s == '-') && e->depth >= MAX_DEPTH) {
        eval_fail(e, "nested more than 200 deep");
        e->s += strlen(e->s); /* stop here */
        return num_int(0);
    }
    if (*e->s == '(') {
        e->s++, e->depth++;
        TilecNum v = eval_sum(e);
        e->depth--;
        eval_space(e);
        if (*e->s != ')')
            eval_fail(e, "a missing ')'");
        else
            e->s++;
        return v;
    }
    if (*e->s == '-') {
        e->s++, e->depth++;
        TilecNum v = eval_atom(e);
        e->depth--;
        if (v.is_float)
            return num_float(-v.f);
        if (v.i == INT64_MIN)
            eval_fail(e, "integer overflow");
        return num_int(v.i == INT64_MIN ? v.i : -v.i);
    }
    if (isdigit((unsigned char)*e->s) || *e->s == '.')
        return eval_number(e);
    return eval_name(e);
}

/* a op b for op in + - * / %, checked. */
static TilecNum eval_apply(Eval *e, char op, TilecNum a, TilecNum b)
{
    if ((op == '/' || op == '%') && (b.is_float ? b.f == 0 : b.i == 0)) {
        eval_fail(e, "division by zero");
        return num_int(0);
    }
    if (a.is_float || b.is_float) {
        double x = a.f, y = b.f;
        return eval_float_result(e, op == '+' ? x + y : op == '-' ? x - y : op == '*' ? x * y
                                    : op == '/' ? x / y : fmod(x, y));
    }
    int64_t r = 0;
    int over = op == '+'   ? __builtin_add_overflow(a.i, b.i, &r)
               : op == '-' ? __builtin_sub_overflow(a.i, b.i, &r)
               : op == '*' ? __builtin_mul_overflow(a.i, b.i, &r)
                           : a.i == INT64_MIN && b.i == -1;
    if (!over && (op == '/' || op == '%'))
        r = op == '/' ? a.i / b.i : a.i % b.i;
    if (over)
        eval_fail(e, "integer overflow (beyond the 64-bit range)");
    return num_int(r);
}

static TilecNum eval_prod(Eval *e)
{
    TilecNum v = eval_atom(e);
    for (eval_space(e); *e->s == '*' || *e->s == '/' || *e->s == '%'; eval_space(e)) {
        char op = *e->s++;
        v = eval_apply(e, op, v, eval_atom(e));
    }
    return v;
}

static TilecNum eval_sum(Eval *e)
{
    TilecNum v = eval_prod(e);
    for (eval_space(e); *e->s == '+' || *e->s == '-'; eval_space(e)) {
        char op = *e->s++;
        v = eval_apply(e, op, v, eval_prod(e));
    }
    return v;
}

TilecValue *tilec_value_findn(TilecValues *vs, const char *name, size_t n)
{
    for (int i = vs->n - 1; i >= 0; i--) /* the last one given wins */
        if (strlen(vs->v[i].name) == n && !strncmp(vs->v[i].name, name, n))
            return &vs->v[i];
    return NULL;
}

TilecValue *tilec_value_find(TilecValues *vs, const char *name)
{
    return tilec_value_findn(vs, name, strlen(name));
}

/* One pass over the unresolved values; returns how many it resolved. */
static int resolve_pass(TilecValues *vs)
{
    int progress = 0;
    for (int i = 0; i < vs->n; i++) {
        TilecValue *v = &vs->v[i];
        if (v->resolved)
            continue;
        Eval e = { .s = v->expr, .vals = vs };
        TilecNum x = eval_sum(&e);
        eval_space(&e);
        if (!e.err[0] && *e.s)
            eval_fail(&e, "unexpected characters");
        if (e.err[0])
            tilec_usage_error("cannot evaluate '%s=%s': %s", v->name, v->expr, e.err);
        if (e.unresolved)
            continue;
        v->num = x, v->resolved = 1, progress++;
    }
    return progress;
}

void tilec_values_resolve(TilecValues *vs)
{
    while (resolve_pass(vs) > 0)
        ;
    for (int i = 0; i < vs->n; i++)
        if (!vs->v[i].resolved)
            tilec_usage_error("cannot evaluate '%s=%s' (circular names)", vs->v[i].name,
                              vs->v[i].expr);
}

void tilec_value_add(TilecValues *vs, const char *text, int hint, Arena *a)
{
    const char *eq = strchr(text, '=');
    if (!eq || eq == text)
        tilec_usage_error("expected NAME=VALUE, got '%s'", text);
    if (vs->n == TILEC_MAX_VALUES)
        tilec_usage_error("too many NAME=VALUE arguments (at most %d)", TILEC_MAX_VALUES);
    size_t len = (size_t)(eq - text);
    for (int i = 0; !hint && i < vs->n; i++) /* a hint may be overridden, a given value not */
        if (!vs->v[i].hint && strlen(vs->v[i].name) == len && !strncmp(vs->v[i].name, text, len))
            tilec_usage_error("'%.*s' is given twice ('%s=%s' and '%s')", (int)len, text,
                              vs->v[i].name, vs->v[i].expr, text);
    TilecValue *v = &vs->v[vs->n++];
    *v = (TilecValue){ .name = tilec_need(arena_strndup(a, text, (size_t)(eq - text))),
                       .expr = tilec_need(arena_strdup(a, eq + 1)), .hint = hint };
}

/* ---- a value as a parameter's argument ---- */

/* The range of integer kind k, as [lo, hi] within int64 (u64 stops at INT64_MAX). */
static void int_range(ElemKind k, int64_t *lo, int64_t *hi)
{
    int bits = et_bits(k);
    if (k == ET_BOOL)
        *lo = 0, *hi = 1;
    else if (et_is_signed(k))
        *lo = bits >= 64 ? INT64_MIN : -(INT64_C(1) << (bits - 1)),
        *hi = bits >= 64 ? INT64_MAX : (INT64_C(1) << (bits - 1)) - 1;
    else
        *lo = 0, *hi = bits >= 64 ? INT64_MAX : (INT64_C(1) << bits) - 1;
}

int64_t tilec_value_int(const TilecValue *v, ElemKind k)
{
    const TilecNum *x = &v->num;
    if (x->is_float && !(x->f == floor(x->f) && fabs(x->f) < 0x1p63))
        tilec_usage_error("%s=%s: '%s' takes an integer (%s), not %g", v->name, v->expr, v->name,
                          et_name(k), x->f);
    int64_t i = x->is_float ? (int64_t)x->f : x->i, lo, hi;
    int_range(k, &lo, &hi);
    if (i < lo || i > hi)
        tilec_usage_error("%s=%s: %lld is out of the range of %s [%lld, %lld]", v->name, v->expr,
                          (long long)i, et_name(k), (long long)lo, (long long)hi);
    return i;
}

double tilec_value_float(const TilecValue *v, ElemKind k)
{
    double max = k == ET_F16 ? 65504.0 : k == ET_BF16 ? 0x1.fep127 : k == ET_F32 ? 0x1.fffffep127
                                                                                  : DBL_MAX;
    if (isfinite(v->num.f) && fabs(v->num.f) > max) /* inf and nan are given as such */
        tilec_usage_error("%s=%s: %g is out of the range of %s", v->name, v->expr, v->num.f,
                          et_name(k));
    return v->num.f;
}

size_t tilec_buffer_bytes(const char *name, const char *expr, int64_t count, int esz)
{
    size_t bytes = 0;
    if (count < 0)
        tilec_usage_error("%s=%s: a buffer's length cannot be negative (%lld)", name, expr,
                          (long long)count);
    if (count == 0) /* the kernel gets its address: an empty one would point past it */
        tilec_usage_error("%s=%s: the buffer of pointer parameter '%s' needs at least one "
                          "element", name, expr, name);
    if (__builtin_mul_overflow((uint64_t)count, (uint64_t)esz, &bytes) ||
        bytes > TILEC_MAX_BUFFER_BYTES)
        tilec_usage_error("%s=%s: %lld elements of %d bytes is more than the %lld bytes a "
                          "buffer of tilec may hold", name, expr, (long long)count, esz,
                          (long long)TILEC_MAX_BUFFER_BYTES);
    return bytes;
}
