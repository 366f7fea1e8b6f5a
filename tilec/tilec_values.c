/* tilec_values.c: the NAME=VALUE arguments of `tilec run` and `tilec tune` and of `// run:`
 * lines: small expressions (+ - * / % parentheses, integer and float literals, true, false,
 * inf, nan, other names) evaluated with checked arithmetic. Integers stay integers from
 * -2^63 to 2^64 - 1 (every i64 and u64 value; no detour through double); an overflow, a division
 * by zero, a float literal beyond double's range or a malformed expression is a usage error
 * (exit 2), never a wrapped value. */
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

static const TilecInt INT_LO = INT64_MIN, INT_HI = UINT64_MAX; /* what an integer may be */

static TilecNum num_int(TilecInt i) { return (TilecNum){ .i = i, .f = (double)i }; }
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
    unsigned long long i = strtoull(s, &end_i, hex ? 16 : 10); /* digits only: no sign */
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
        eval_fail(e, "an integer out of the 64-bit range (-2^63 to 2^64 - 1)");
    return num_int((TilecInt)i);
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
        if (-v.i < INT_LO)
            eval_fail(e, "integer overflow (beyond the 64-bit range)");
        return num_int(-v.i < INT_LO ? v.i : -v.i);
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
    TilecInt r = 0; /* operands within 64 bits: only a product can pass 128 */
    int over = op == '*' && __builtin_mul_overflow(a.i, b.i, &r);
    r = op == '+' ? a.i + b.i : op == '-' ? a.i - b.i : op == '/' ? a.i / b.i
      : op == '%' ? a.i % b.i : r;
    if (over || r < INT_LO || r > INT_HI) {
        eval_fail(e, "integer overflow (beyond the 64-bit range)");
        r = 0;
    }
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
            tilec_usage_error("cannot evaluate '%s=%s': %s", tilec_clip(v->name),
                              tilec_clip(v->expr), e.err);
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
            tilec_usage_error("cannot evaluate '%s=%s' (circular names)", tilec_clip(vs->v[i].name),
                              tilec_clip(vs->v[i].expr));
}

void tilec_value_add(TilecValues *vs, const char *text, int hint, Arena *a)
{
    const char *eq = strchr(text, '=');
    if (!eq || eq == text)
        tilec_usage_error("expected NAME=VALUE, got '%s'", tilec_clip(text));
    if (vs->n == TILEC_MAX_VALUES)
        tilec_usage_error("too many NAME=VALUE arguments (at most %d)", TILEC_MAX_VALUES);
    size_t len = (size_t)(eq - text);
    for (int i = 0; !hint && i < vs->n; i++) /* a hint may be overridden, a given value not */
        if (!vs->v[i].hint && strlen(vs->v[i].name) == len && !strncmp(vs->v[i].name, text, len))
            tilec_usage_error("'%s' is given twice ('%s=%s' and '%s')", tilec_clip(vs->v[i].name),
                              tilec_clip(vs->v[i].name), tilec_clip(vs->v[i].expr),
                              tilec_clip(text));
    TilecValue *v = &vs->v[vs->n++];
    *v = (TilecValue){ .name = tilec_need(arena_strndup(a, text, (size_t)(eq - text))),
                       .expr = tilec_need(arena_strdup(a, eq + 1)), .hint = hint };
}

/* ---- a value as a parameter's argument ---- */

/* The range of integer kind k. */
static void int_range(ElemKind k, TilecInt *lo, TilecInt *hi)
{
    int bits = et_bits(k);
    if (k == ET_BOOL)
        *lo = 0, *hi = 1;
    else if (et_is_signed(k))
        *lo = -((TilecInt)1 << (bits - 1)), *hi = ((TilecInt)1 << (bits - 1)) - 1;
    else
        *lo = 0, *hi = ((TilecInt)1 << bits) - 1;
}

/* An integer within 64 bits as decimal text (buf: 24 bytes). */
static const char *int_text(TilecInt v, char *buf)
{
    if (v < 0)
        snprintf(buf, 24, "%lld", (long long)v);
    else
        snprintf(buf, 24, "%llu", (unsigned long long)v);
    return buf;
}

int tilec_int_fits(ElemKind k, double x, char range[TILEC_RANGE_TEXT])
{
    TilecInt lo, hi;
    char a[24], b[24];
    int_range(k, &lo, &hi);
    snprintf(range, TILEC_RANGE_TEXT, "[%s, %s]", int_text(lo, a), int_text(hi, b));
    return x == floor(x) && x >= (double)lo && x < (double)(hi + 1); /* hi + 1: exact */
}

int64_t tilec_value_int(const TilecValue *v, ElemKind k)
{
    const TilecNum *x = &v->num;
    char range[TILEC_RANGE_TEXT], shown[24];
    if (x->is_float && !(x->f == floor(x->f) && x->f >= -0x1p63 && x->f < 0x1p64))
        tilec_usage_error("%s=%s: '%s' takes an integer (%s), not %g", tilec_clip(v->name),
                          tilec_clip(v->expr), tilec_clip(v->name), et_name(k), x->f);
    TilecInt i = !x->is_float ? x->i : x->f < 0 ? (TilecInt)(int64_t)x->f
                                                : (TilecInt)(uint64_t)x->f, lo, hi;
    int_range(k, &lo, &hi);
    tilec_int_fits(k, 0, range);
    if (i < lo || i > hi)
        tilec_usage_error("%s=%s: %s is out of the range of %s %s", tilec_clip(v->name),
                          tilec_clip(v->expr), int_text(i, shown), et_name(k), range);
    return (int64_t)(uint64_t)i; /* a u64 from 2^63 up: its bits */
}

double tilec_float_max(ElemKind k)
{
    return k == ET_F16 ? 65504.0 : k == ET_BF16 ? 0x1.fep127 : k == ET_F64 ? DBL_MAX : FLT_MAX;
}

double tilec_value_float(const TilecValue *v, ElemKind k)
{
    double max = et_is_fp8(k) ? DBL_MAX : tilec_float_max(k); /* fp8 arguments saturate */
    if (isfinite(v->num.f) && fabs(v->num.f) > max) /* inf and nan are given as such */
        tilec_usage_error("%s=%s: %g is out of the range of %s", tilec_clip(v->name),
                          tilec_clip(v->expr), v->num.f, et_name(k));
    return v->num.f;
}

size_t tilec_buffer_bytes(const char *name, const char *expr, int64_t count, int esz)
{
    size_t bytes = 0;
    name = tilec_clip(name), expr = tilec_clip(expr);
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
