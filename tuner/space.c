/* space.c: configuration spaces from @tune / @constraint, and tuning keys from @key
 * (see space.h). Enumeration is an odometer over the candidate lists, so the order is
 * deterministic: the first candidate of every list comes first. */
#include <string.h>
#include "space.h"

/* The public functions run their work with a failure jump on the arena: an allocation that
 * fails anywhere inside comes back to them, which report it once (SPACE_OUT_OF_MEMORY). */
static int out_of_memory(Diags *d, SrcLoc loc, jmp_buf *prev, Arena *a) {
    arena_set_failure_jump(a, prev);
    diag_error(d, loc, "out of memory building the @tune space");
    return SPACE_OUT_OF_MEMORY;
}

static int add_param(const AnnArg *arg, Arena *a, Diags *d, TuneSpace *s) {
    for (int i = 0; i < s->nparams; i++)
        if (strcmp(s->params[i].name, arg->name) == 0) {
            diag_error(d, arg->loc, "'%s' is tuned twice", arg->name);
            return -1;
        }
    const Expr *list = arg->value;
    int n = list && list->kind == EX_LIST ? list->nargs : 1;
    if (!list || n == 0) {
        diag_error(d, arg->loc, "@tune needs at least one candidate for '%s'", arg->name);
        return -1;
    }
    TuneParam *p = &s->params[s->nparams++];
    p->name = arg->name;
    p->nvalues = n;
    p->values = arena_alloc(a, sizeof(int64_t) * (size_t)n);
    for (int i = 0; i < n; i++) {
        const Expr *e = list->kind == EX_LIST ? list->args[i] : list;
        if (tc_eval_int(e, NULL, 0, &p->values[i], d)) return -1;
        for (int j = 0; j < i; j++)
            if (p->values[j] == p->values[i]) {
                diag_error(d, e->loc, "candidate %lld of '%s' is listed twice", (long long)p->values[i], arg->name);
                return -1;
            }
    }
    return 0;
}

static int build(const Func *f, Arena *a, Diags *d, TuneSpace *out) {
    memset(out, 0, sizeof *out);
    int nargs = 0, ncons = 0;
    for (int i = 0; i < f->nanns; i++) {
        if (f->anns[i].kind == ANN_TUNE) nargs += f->anns[i].nargs;
        if (f->anns[i].kind == ANN_CONSTRAINT) ncons += f->anns[i].nargs;
    }
    out->func = f;
    out->params = arena_alloc(a, sizeof(TuneParam) * (size_t)(nargs + 1));
    out->constraints = arena_alloc(a, sizeof(Expr *) * (size_t)(ncons + 1));
    for (int i = 0; i < f->nanns; i++) {
        const Annotation *an = &f->anns[i];
        if (an->kind == ANN_TUNE && out->nparams == 0) out->loc = an->loc;
        for (int j = 0; j < an->nargs; j++) {
            if (an->kind == ANN_TUNE && add_param(&an->args[j], a, d, out)) return -1;
            if (an->kind == ANN_CONSTRAINT) out->constraints[out->nconstraints++] = an->args[j].value;
        }
    }
    return 0;
}

int64_t space_size(const TuneSpace *s) {
    int64_t n = 1;
    for (int i = 0; i < s->nparams; i++) {
        n *= s->params[i].nvalues;
        if (n > INT32_MAX) return INT32_MAX;
    }
    return n;
}

/* Room for what a configuration's constraints see (with_defaults). */
typedef struct ConstraintEnv {
    ConstBinding *given, *vals;
    int cap;
} ConstraintEnv;

static void env_init(ConstraintEnv *e, int nraw, Arena *a) {
    e->cap = nraw + AST_MAX_KERNEL_CONSTS + 2;
    e->given = arena_alloc(a, sizeof(ConstBinding) * (size_t)e->cap);
    e->vals = arena_alloc(a, sizeof(ConstBinding) * (size_t)e->cap);
}

/* raw (the fixed values, then the configuration's) with every const of the kernel resolved as
 * its launch would resolve it: defaults computed from the caller's and the configuration's
 * values (`const BLOCK_M: i32 = max(16, GROUP * QLEN)`), so constraints may read them; then
 * the fixed values that are no consts (scalar arguments). Into e->vals; the count. When the
 * consts do not resolve (a const without any value), raw as it is. */
static int with_defaults(const TuneSpace *s, const ConstBinding *raw, int nraw, ConstraintEnv *e,
                         Arena *a) {
    int ngiven = 0, n;
    for (int i = 0; i < nraw; i++)
        if (tc_is_const_name(s->func, raw[i].name)) e->given[ngiven++] = raw[i];
    Diags quiet;
    diags_init(&quiet, a);
    quiet.max_errors = 1;
    n = tc_resolve_consts(s->func, e->given, ngiven, e->vals, AST_MAX_KERNEL_CONSTS + 2, a, &quiet);
    if (n < 0) {
        memcpy(e->vals, raw, sizeof *raw * (size_t)nraw);
        return nraw;
    }
    for (int i = 0; i < nraw; i++)
        if (!tc_is_const_name(s->func, raw[i].name)) e->vals[n++] = raw[i];
    return n;
}

/* Whether the configuration in raw passes every constraint (*ok); -1 after an error. */
static int satisfies(const TuneSpace *s, const ConstBinding *raw, int nraw, ConstraintEnv *e,
                     Arena *a, Diags *d, int *ok) {
    int nenv = s->func && s->nconstraints ? with_defaults(s, raw, nraw, e, a) : 0;
    *ok = 1;
    for (int c = 0; c < s->nconstraints && *ok; c++) {
        int64_t v;
        if (tc_eval_int(s->constraints[c], e->vals, nenv, &v, d)) return -1;
        *ok = v != 0;
    }
    return 0;
}

static int enumerate(const TuneSpace *s, const ConstBinding *fixed, int nfixed, Arena *a,
                     Diags *d, TuneConfig **out, int *pruned) {
    int64_t total = space_size(s);
    if (total > SPACE_MAX_COMBINATIONS) {
        diag_error(d, s->loc, "the @tune space has %s%lld combinations of candidates (at most %d): "
                   "shorten its lists", total == INT32_MAX ? "over " : "", (long long)total,
                   SPACE_MAX_COMBINATIONS);
        return -1;
    }
    *out = arena_alloc(a, sizeof(TuneConfig) * (size_t)(total + 1));
    ConstBinding *env = arena_alloc(a, sizeof(ConstBinding) * (size_t)(nfixed + s->nparams + 1));
    if (nfixed) memcpy(env, fixed, sizeof(ConstBinding) * (size_t)nfixed);
    ConstraintEnv cenv;
    env_init(&cenv, nfixed + s->nparams, a);
    int idx[64] = {0}, n = 0, dropped = 0;
    if (s->nparams > 64) {
        diag_error(d, s->loc, "the @tune space tunes %d parameters (at most 64)", s->nparams);
        return -1;
    }
    for (int64_t c = 0; c < total; c++) {
        for (int p = 0; p < s->nparams; p++)
            env[nfixed + p] = (ConstBinding){s->params[p].name, s->params[p].values[idx[p]]};
        int ok;
        if (satisfies(s, env, nfixed + s->nparams, &cenv, a, d, &ok)) return -1;
        if (ok) {
            TuneConfig *cfg = &(*out)[n++];
            cfg->nvalues = s->nparams;
            cfg->values = arena_alloc(a, sizeof(ConstBinding) * (size_t)(s->nparams + 1));
            memcpy(cfg->values, env + nfixed, sizeof(ConstBinding) * (size_t)s->nparams);
        } else {
            dropped++;
        }
        for (int p = s->nparams - 1; p >= 0; p--) { /* odometer: last parameter fastest */
            if (++idx[p] < s->params[p].nvalues) break;
            idx[p] = 0;
        }
    }
    if (pruned) *pruned = dropped;
    if (n > SPACE_MAX_CONFIGS) {
        diag_error(d, s->loc, "the @tune space has %d configurations after its constraints (at "
                   "most %d, each one is compiled): shorten its lists or add @constraint", n,
                   SPACE_MAX_CONFIGS);
        return -1;
    }
    return n;
}

int64_t space_bucket(const char *bucket, int64_t v) {
    if (!bucket || strcmp(bucket, "pow2") != 0 || v <= 1) return v;
    int64_t p = 1;
    while (p < v && p < ((int64_t)1 << 62)) p <<= 1;
    return p;
}

static char *key_of(const Func *f, const ConstBinding *vals, int nvals, Arena *a, Diags *d) {
    char *key = arena_strdup(a, "");
    for (int i = 0; i < f->nanns; i++) {
        const Annotation *an = &f->anns[i];
        if (an->kind != ANN_KEY) continue;
        for (int j = 0; j < an->nargs; j++) {
            Expr name = {.kind = EX_NAME, .loc = an->args[j].loc, .name = an->args[j].name};
            int64_t v;
            if (tc_eval_int(&name, vals, nvals, &v, d)) return NULL;
            key = arena_printf(a, "%s%s=%lld;", key, an->args[j].name,
                               (long long)space_bucket(an->args[j].bucket, v));
        }
    }
    return key;
}

static int tuned_name(const TuneSpace *s, const char *name) {
    for (int p = 0; p < s->nparams; p++)
        if (!strcmp(s->params[p].name, name)) return 1;
    return 0;
}

static int exact_key_entry(const Func *f, const char *name) {
    for (int i = 0; i < f->nanns; i++)
        for (int j = 0; f->anns[i].kind == ANN_KEY && j < f->anns[i].nargs; j++)
            if (!strcmp(f->anns[i].args[j].name, name)) return !f->anns[i].args[j].bucket;
    return 0;
}

/* Every name e reads is tuned or an exact key entry (calls' names are functions, not values). */
static int names_exact(const TuneSpace *s, const Func *f, const Expr *e) {
    if (!e) return 1;
    if (e->kind == EX_NAME && !tuned_name(s, e->name) && !exact_key_entry(f, e->name)) return 0;
    for (int i = 0; i < e->nargs; i++)
        if (!names_exact(s, f, e->args[i])) return 0;
    return names_exact(s, f, e->a) && names_exact(s, f, e->b);
}

int space_allows(const TuneSpace *s, const ConstBinding *vals, int nvals, Arena *a) {
    Diags quiet;
    diags_init(&quiet, a);
    quiet.max_errors = 1;
    for (int c = 0; c < s->nconstraints; c++) {
        int64_t v;
        if (tc_eval_int(s->constraints[c], vals, nvals, &v, &quiet)) return -1;
        if (!v) return 0;
    }
    return 1;
}

int space_key_exact(const TuneSpace *s, const Func *f) {
    for (int i = 0; i < s->nconstraints; i++)
        if (!names_exact(s, f, s->constraints[i])) return 0;
    return 1;
}

int space_build(const Func *f, Arena *a, Diags *d, TuneSpace *out) {
    jmp_buf jump, *prev = arena_set_failure_jump(a, &jump);
    if (setjmp(jump)) return out_of_memory(d, f->loc, prev, a);
    int rc = build(f, a, d, out);
    arena_set_failure_jump(a, prev);
    return rc;
}

int space_enumerate(const TuneSpace *s, const ConstBinding *fixed, int nfixed, Arena *a,
                    Diags *d, TuneConfig **out, int *pruned) {
    jmp_buf jump, *prev = arena_set_failure_jump(a, &jump);
    if (setjmp(jump)) return out_of_memory(d, s->loc, prev, a);
    int n = enumerate(s, fixed, nfixed, a, d, out, pruned);
    arena_set_failure_jump(a, prev);
    return n;
}

char *space_key(const Func *f, const ConstBinding *vals, int nvals, Arena *a, Diags *d) {
    jmp_buf jump, *prev = arena_set_failure_jump(a, &jump);
    if (setjmp(jump)) return out_of_memory(d, f->loc, prev, a), NULL;
    char *key = key_of(f, vals, nvals, a, d);
    arena_set_failure_jump(a, prev);
    return key;
}
