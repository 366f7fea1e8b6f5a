/* tune.c: one tuning of one kernel for one key (tune.h). The steps, in order:
 * enumerate (constraints see the caller's consts and scalar args) -> reuse the cache's
 * results -> sample (random search) -> compile in parallel -> load and prune what cannot fit
 * -> screen the rest with a few runs each (within the time budget), then time the finalists
 * in full -> choose among the finalists -> store every result and the best, save.
 * Random search samples a key-determined subset, then refines around the best by timing its
 * untimed neighbours (one step in one parameter's list) until none is faster.
 * Configurations that compile to the same code with the same grid are timed once.
 * Selection: tune_select.c. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "target.h"
#include "tune.h"

enum { MAX_FIXED = 512, REASON_MAX = 512 };

/* One configuration of the space. */
typedef struct Cand {
    const ConstBinding *cfg; /* tuned values, space order */
    int ncfg;
    ConstBinding *consts;    /* every const resolved */
    int nconsts;
    tile_TuneResult r;
    int todo;                /* compile and time it in this tuning */
    int done;                /* compiled and timed (this tuning) */
    unsigned grid[3];
    CompileJob *job;
    Spec *spec;              /* its loaded code, once screened in this tuning */
    int final;               /* fully timed (a finalist): r.ms is no longer the screen's */
    int same_as;             /* 1 + the index of the earlier configuration with its code */
} Cand;

typedef struct Tuning {
    const TuneRequest *req;
    tile_Context *ctx;
    Arena *a;
    Cand *c;
    TuneSpace space;         /* as enumerated (the caller's values narrowed) */
    int n, ntodo;
    TuneBench bench;
    const unsigned char *div;
    char target[32];
    double t0, budget_ms, best_ms;
    int best, failed, timed_now;
    int trace_fd;            /* a tuning worker's trace (tune_trace_fd), or -1 */
    int isolated;            /* workers tuned: every result is in the cache */
    tile_TuneReport *rep;
} Tuning;

/* ---- options from the environment ---- */

/* TILE_TUNE_SAMPLES under TILE_TUNE_SEARCH=random, else 0 (exhaustive). */
static int env_samples(tile_Context *ctx)
{
    static const char *const SEARCH[] = { "exhaustive", "random", NULL };
    const char *s = getenv("TILE_TUNE_SEARCH");
    if (tune_env_word(ctx, "TILE_TUNE_SEARCH", s, SEARCH, "exhaustive") != 1)
        return 0;
    return (int)tune_env_int(ctx, "TILE_TUNE_SAMPLES", 1, INT_MAX, 32, NULL);
}

static int env_refine(tile_Context *ctx)
{
    const char *s = getenv("TILE_TUNE_REFINE");
    return tune_env_word(ctx, "TILE_TUNE_REFINE", s, TUNE_ENV_FLAG, "1 (refine)") != 0;
}

/* ---- enumeration ---- */

/* The space with every tuned param the caller gave narrowed to that value. */
/* AMD's knobs (waves_per_eu, mfma_size) change nothing elsewhere: there only their first
 * candidate is tried. */
static int foreign_knob(const char *name, const char *target)
{
    return !target_is_amdgpu_name(target) &&
           (!strcmp(name, "waves_per_eu") || !strcmp(name, "mfma_size"));
}

static TuneSpace narrowed(const TuneRequest *req, const char *target, Arena *a)
{
    TuneSpace s = req->kt->space;
    s.params = arena_alloc(a, sizeof *s.params * (size_t)(s.nparams + 1));
    memcpy(s.params, req->kt->space.params, sizeof *s.params * (size_t)s.nparams);
    for (int p = 0; p < s.nparams; p++)
        for (int g = 0; g < req->ngiven; g++)
            if (!strcmp(req->given[g].name, s.params[p].name)) {
                s.params[p].values = arena_alloc(a, sizeof(int64_t));
                s.params[p].values[0] = req->given[g].value;
                s.params[p].nvalues = 1;
            }
    for (int p = 0; p < s.nparams; p++)
        if (foreign_knob(s.params[p].name, target))
            s.params[p].nvalues = 1;
    return s;
}

/* The caller's consts and the integer scalar args: what constraints may read. */
static int fixed_values(const TuneRequest *req, ConstBinding *out)
{
    int n = 0;
    for (int i = 0; i < req->ngiven && n < MAX_FIXED; i++)
        out[n++] = (ConstBinding){ req->given[i].name, req->given[i].value };
    for (int i = 0; i < req->k->nparams && n < MAX_FIXED; i++)
        if (!req->k->params[i].is_ptr && req->args[i].kind == TILE_ARG_INT)
            out[n++] = (ConstBinding){ req->k->params[i].name, req->args[i].v.i };
    return n;
}

static tile_Status enum_error(const TuneRequest *req, Arena *a, Diags *d, const char *what)
{
    char *text = diags_render_all(d, a);
    return rt_error(req->k->mod->ctx, TILE_ERROR_INVALID_ARGUMENT, "tuning '%s': %s%s%s",
                    req->k->func->name, what, text && *text ? ":\n" : "", text ? text : "");
}

static char *config_string(const ConstBinding *cfg, int n, Arena *a)
{
    const char *names[64];
    long long vals[64];
    for (int i = 0; i < n && i < 64; i++)
        names[i] = cfg[i].name, vals[i] = cfg[i].value;
    char *s = tcache_config_string(names, vals, n < 64 ? n : 64);
    jmp_buf *jump = arena_set_failure_jump(a, NULL); /* s must be freed: no jump past it */
    char *copy = s ? arena_strdup(a, s) : NULL;
    arena_set_failure_jump(a, jump);
    free(s);
    return copy;
}

/* Resolves every const for one configuration: the caller's, the configuration's, defaults. */
static int resolve(Tuning *t, Cand *c, Diags *d)
{
    const TuneRequest *req = t->req;
    int ngiven = req->ngiven + c->ncfg;
    ConstBinding *given = arena_alloc(t->a, sizeof *given * (size_t)(ngiven + 1));
    for (int i = 0; i < req->ngiven; i++)
        given[i] = (ConstBinding){ req->given[i].name, req->given[i].value };
    memcpy(given + req->ngiven, c->cfg, sizeof *given * (size_t)c->ncfg);
    int max = req->k->func->nparams + 3;
    c->consts = arena_alloc(t->a, sizeof *c->consts * (size_t)max);
    c->nconsts = tc_resolve_consts(req->k->func, given, ngiven, c->consts, max, t->a, d);
    return c->nconsts < 0 ? -1 : 0;
}

/* The configurations of req in enumeration order (the space narrowed to the caller's consts,
 * constraints seeing them and the scalar args) into *space, *cfgs and *n; an error when there
 * is none (unless allow_none): nothing to time, and no configuration the kernel allows to
 * launch. Allocates from
 * `a` without checking (under the caller's failure jump). */
static tile_Status configs(const TuneRequest *req, const char *target, Arena *a,
                           TuneSpace *space, TuneConfig **cfgs, int *n, int allow_none)
{
    Diags d;
    diags_init(&d, a);
    TuneSpace s = *space = narrowed(req, target, a);
    ConstBinding fixed[MAX_FIXED];
    int nfixed = fixed_values(req, fixed);
    *n = space_enumerate(&s, fixed, nfixed, a, &d, cfgs, NULL);
    if (*n < 0)
        return enum_error(req, a, &d, "cannot enumerate configurations");
    if (*n == 0 && !allow_none)
        return rt_error(req->k->mod->ctx, TILE_ERROR_INVALID_ARGUMENT, "tuning '%s': no "
                        "configuration of its @tune space satisfies its @constraint with %s",
                        req->k->func->name, nfixed ? config_string(fixed, nfixed, a)
                                                   : "its defaults");
    return TILE_OK;
}

static tile_Status enumerate(Tuning *t)
{
    Diags d;
    diags_init(&d, t->a);
    TuneConfig *cfgs;
    tile_Status st = configs(t->req, t->target, t->a, &t->space, &cfgs, &t->n, 0);
    if (st != TILE_OK)
        return st;
    t->c = arena_alloc(t->a, sizeof *t->c * (size_t)(t->n + 1));
    for (int i = 0; i < t->n; i++) {
        Cand *c = &t->c[i];
        c->cfg = cfgs[i].values, c->ncfg = cfgs[i].nvalues;
        c->r = (tile_TuneResult){ .config = config_string(c->cfg, c->ncfg, t->a), .index = i,
                                  .reason = "", .local_bytes = -1 };
        if (!c->r.config)
            return rt_error(t->ctx, TILE_ERROR_OUT_OF_MEMORY, "tuning: out of memory");
        if (resolve(t, c, &d) < 0)
            return enum_error(t->req, t->a, &d, "cannot resolve const parameters");
    }
    return TILE_OK;
}

/* ---- what to time: the cache's results, the sample ---- */

static void from_cache(Tuning *t)
{
    TCache *tc = t->req->kt->tc;
    for (int i = 0; i < t->n; i++) {
        Cand *c = &t->c[i];
        TResult r;
        c->todo = 1;
        if ((t->req->force && !t->isolated) || !tc ||
            !tcache_get(tc, t->req->key, c->r.config, &r))
            continue;
        c->todo = 0;
        c->r.cached = 1;
        c->r.status = r.status == TRES_OK ? TILE_TUNE_OK
                    : r.status == TRES_PRUNED ? TILE_TUNE_PRUNED : TILE_TUNE_FAILED;
        c->r.ms = r.ms;
        c->r.local_bytes = r.local_bytes;
        c->r.reason = r.reason ? arena_strdup(t->a, r.reason) : "";
    }
}

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Random search: `samples` configurations chosen by a function of the key alone, so every
 * process samples the same ones; the others are skipped unless the cache has them. */
static void sample(Tuning *t, int samples)
{
    if (samples <= 0 || samples >= t->n)
        return;
    int *idx = arena_alloc(t->a, sizeof *idx * (size_t)t->n);
    unsigned char *in = arena_alloc(t->a, (size_t)t->n);
    for (int i = 0; i < t->n; i++)
        idx[i] = i;
    uint64_t seed = rt_hash64(t->req->key, strlen(t->req->key));
    for (int i = 0; i < samples; i++) { /* partial Fisher-Yates */
        int j = i + (int)(splitmix(&seed) % (uint64_t)(t->n - i));
        int tmp = idx[i];
        idx[i] = idx[j], idx[j] = tmp;
        in[idx[i]] = 1;
    }
    for (int i = 0; i < t->n; i++)
        if (!in[i] && t->c[i].todo) {
            t->c[i].todo = 0;
            t->c[i].r.status = TILE_TUNE_SKIPPED;
            t->c[i].r.reason = "not in the random sample";
        }
}

/* ---- progress ---- */

static void progress(Tuning *t, const char *phase, int done, int total, double phase_t0)
{
    if (!t->req->progress)
        return;
    double spent = (tune_now_ms() - phase_t0) / 1e3;
    tile_TuneProgress p = { phase, done, total, t->failed, t->best >= 0 ? t->best_ms : -1,
                            t->best >= 0 ? t->c[t->best].r.config : NULL,
                            done ? spent / done * (total - done) : -1 };
    t->req->progress(t->req->user, &p);
}

typedef struct CompileProgress {
    Tuning *t;
    double t0;
} CompileProgress;

static void compile_done(void *user, int finished)
{
    CompileProgress *cp = user;
    if (cp->t->trace_fd >= 0) /* a worker: its parent hears that it is alive (tune_isolate.c) */
        dprintf(cp->t->trace_fd, "compiled %d\n", finished);
    progress(cp->t, "compile", finished, cp->t->ntodo, cp->t0);
}

/* ---- compile, load, prune, time ---- */

static void put_result(TCache *tc, const char *key, const tile_TuneResult *r)
{
    TResult tr = { r->status == TILE_TUNE_OK ? TRES_OK
                   : r->status == TILE_TUNE_PRUNED ? TRES_PRUNED : TRES_FAILED,
                   r->ms, r->compile_ms, r->reason, r->local_bytes };
    tcache_put(tc, key, r->config, &tr);
}

/* A tuning worker saves each result as soon as it has it, then traces "end" (not after a
 * device fault: the parent records that configuration with the fault's reason). */
static void save_one(Tuning *t, Cand *c, int ended)
{
    TCache *tc = t->req->kt->tc;
    char err[512];
    if (tc && c->r.status != TILE_TUNE_SKIPPED) {
        put_result(tc, t->req->key, &c->r);
        if (tcache_save(tc, err, sizeof err) != 0)
            rt_log(t->ctx, "tile: cannot save the tuning cache: %s", err);
        else if (err[0]) /* a damaged file was moved aside */
            rt_log(t->ctx, "tile: %s", err);
    }
    if (ended)
        dprintf(t->trace_fd, "end\n");
}

static tile_Status compile_all(Tuning *t)
{
    CompileJob *jobs = arena_alloc(t->a, sizeof *jobs * (size_t)(t->ntodo + 1));
    if (!jobs)
        return rt_error(t->ctx, TILE_ERROR_OUT_OF_MEMORY, "tuning: out of memory");
    int n = 0;
    for (int i = 0; i < t->n; i++)
        if (t->c[i].todo && !t->c[i].done) {
            t->c[i].job = &jobs[n];
            jobs[n++] = (CompileJob){ .consts = t->c[i].consts, .nconsts = t->c[i].nconsts };
        }
    double t0 = tune_now_ms();
    CompileProgress cp = { t, t0 };
    double deadline = t->budget_ms > 0 ? t->t0 + t->budget_ms : 0; /* --budget bounds this too */
    t->rep->threads = n ? tune_compile_all(t->req->k, t->div, t->target, jobs, n, 0, deadline,
                                           compile_done, &cp)
                        : 0;
    t->rep->compile_wall_s += (tune_now_ms() - t0) / 1e3;
    for (int i = 0; i < n; i++)
        t->rep->compile_cpu_s += jobs[i].cpu_ms / 1e3;
    return TILE_OK;
}

static void job_free(CompileJob *j)
{
    if (!j)
        return;
    rt_cache_entry_free(&j->image);
    arena_free(j->arena);
    j->arena = NULL;
}

/* A configuration that failed for want of memory is skipped, not failed: the failure says
 * nothing about the configuration, and a skipped result is not saved in the cache (where it
 * would keep the configuration from ever being timed again). */
static int transient(tile_TuneStatus st, const char *reason)
{
    return st == TILE_TUNE_FAILED && reason && strstr(reason, "out of memory");
}

static void set_result(Tuning *t, Cand *c, tile_TuneStatus st, const char *reason)
{
    if (transient(st, reason)) {
        c->todo = 0;
        c->r.status = TILE_TUNE_SKIPPED;
        c->r.reason = "not timed: out of memory";
        return;
    }
    c->r.status = st;
    c->r.reason = !reason ? "" : arena_strdup(t->a, reason);
    if (!c->r.reason)
        c->r.reason = "(out of memory for the reason)";
    if (st != TILE_TUNE_OK)
        t->failed++;
}

/* The compiler's register check (compiler/check_registers.c) refused it before LLVM: a
 * resource limit, so the configuration is pruned rather than failed. */
static int exceeds_registers(const char *reason)
{
    return reason && strstr(reason, "registers per thread") != NULL;
}

/* An earlier configuration of this tuning with the same code and grid: take its result. */
static int same_code_as_timed(Tuning *t, Cand *c)
{
    uint64_t h = c->job->image.code_hash;
    for (Cand *o = t->c; h && o < c; o++)
        if (o->done && o->job && o->job->image.code_hash == h && o->r.status == TILE_TUNE_OK &&
            !memcmp(o->grid, c->grid, sizeof c->grid)) {
            c->r.status = TILE_TUNE_OK;
            c->r.ms = o->r.ms;
            c->same_as = (int)(o - t->c) + 1;
            c->r.local_bytes = o->r.local_bytes;
            c->r.reason = arena_printf(t->a, "same code as %s", o->r.config);
            if (!c->r.reason)
                c->r.reason = "same code as an earlier configuration";
            return 1;
        }
    return 0;
}

/* Loads, prunes and times one configuration; TILE_ERROR_DEVICE when the context died. */
static tile_Status evaluate(Tuning *t, Cand *c)
{
    CompileJob *j = c->job;
    char err[BK_ERR_MAX];
    Spec *s;
    unsigned grid[3];
    c->r.compile_ms = j->wall_ms;
    if (j->skipped) {
        c->todo = 0;
        c->r.status = TILE_TUNE_SKIPPED;
        c->r.reason = j->reason;
        return TILE_OK;
    }
    if (j->st != TILE_OK) {
        set_result(t, c, exceeds_registers(j->reason) ? TILE_TUNE_PRUNED : TILE_TUNE_FAILED,
                   j->reason);
        return TILE_OK;
    }
    if (rt_spec_install(t->req->k, c->consts, c->nconsts, t->div, t->target, &j->image, &s,
                        err) != TILE_OK) {
        set_result(t, c, TILE_TUNE_FAILED, err);
        return TILE_OK;
    }
    const char *why = tune_prune_reason(t->ctx, s, t->a);
    if (why) {
        set_result(t, c, TILE_TUNE_PRUNED, why);
        return TILE_OK;
    }
    if (t->req->grid)
        memcpy(grid, t->req->grid, sizeof grid);
    else if (rt_grid(t->req->k, c->consts, c->nconsts, t->req->args, t->a, grid) != TILE_OK) {
        set_result(t, c, TILE_TUNE_FAILED, tile_error(t->ctx));
        return TILE_OK;
    }
    if (!grid[0] || !grid[1] || !grid[2]) {
        set_result(t, c, TILE_TUNE_FAILED, "the grid is empty");
        return TILE_OK;
    }
    memcpy(c->grid, grid, sizeof grid);
    c->r.local_bytes = tune_local_bytes(t->ctx, s);
    if (same_code_as_timed(t, c))
        return TILE_OK;
    char reason[REASON_MAX];
    int fatal = 0;
    TResStatus r = tune_time_config(&t->bench, s, grid, TUNE_SCREEN,
                                    t->best >= 0 ? t->best_ms : 0, &c->r.ms, reason,
                                    sizeof reason, &fatal);
    t->timed_now++;
    if (r != TRES_OK) {
        set_result(t, c, TILE_TUNE_FAILED, reason);
        if (fatal)
            return rt_error(t->ctx, TILE_ERROR_DEVICE,
                            "tuning '%s': configuration %s faulted: %s", t->req->k->func->name,
                            c->r.config, reason);
        return TILE_OK;
    }
    c->r.status = TILE_TUNE_OK;
    c->spec = s;
    return TILE_OK;
}

static void consider(Tuning *t, int i)
{
    const tile_TuneResult *r = &t->c[i].r;
    if (r->status == TILE_TUNE_OK && (t->best < 0 || r->ms < t->best_ms))
        t->best = i, t->best_ms = r->ms; /* strict <: ties stay with the earlier one */
}

static int past_budget(const Tuning *t)
{
    return t->budget_ms > 0 && tune_now_ms() - t->t0 > t->budget_ms;
}

/* ---- finalists: the screen ranks, full timing decides ----
 * Every configuration is screened (a few runs: tune_time.c); then the FINALISTS fastest
 * within FINAL_BAND of the best (and the fastest without local memory, which tune_pick
 * prefers) are timed in full. Most of a large space is near the best for memory-bound
 * kernels, and a 1-3 ms kernel's full timing is ~100 ms: timing only finalists in full keeps
 * their tuning to seconds. */
enum { FINALISTS = 8 };
static const double FINAL_BAND = 1.10;

static int is_candidate(const Cand *c, int spill_free)
{
    return c->spec && !c->same_as && c->r.status == TILE_TUNE_OK &&
           (!spill_free || c->r.local_bytes <= 0);
}

/* The fastest unmarked candidate (spill-free only, when asked) within the band; -1 if none. */
static int fastest_unmarked(Tuning *t, const char *marked, double limit, int spill_free)
{
    int best = -1;
    for (int i = 0; i < t->n; i++)
        if (!marked[i] && is_candidate(&t->c[i], spill_free) && t->c[i].r.ms <= limit &&
            (best < 0 || t->c[i].r.ms < t->c[best].r.ms))
            best = i;
    return best;
}

static tile_Status time_final(Tuning *t, Cand *c)
{
    char reason[REASON_MAX];
    int fatal = 0;
    if (t->trace_fd >= 0)
        dprintf(t->trace_fd, "again %s\n", c->r.config);
    TResStatus r = tune_time_config(&t->bench, c->spec, c->grid, TUNE_FULL, 0, &c->r.ms, reason,
                                    sizeof reason, &fatal);
    c->final = 1;
    if (r != TRES_OK)
        set_result(t, c, TILE_TUNE_FAILED, reason);
    if (t->trace_fd >= 0)
        save_one(t, c, !fatal);
    if (fatal)
        return rt_error(t->ctx, TILE_ERROR_DEVICE, "tuning '%s': configuration %s faulted: %s",
                        t->req->k->func->name, c->r.config, reason);
    return TILE_OK;
}

/* Times the finalists in full, then ranks again (duplicates take their original's time). */
static tile_Status time_finalists(Tuning *t)
{
    char *marked = arena_alloc(t->a, (size_t)t->n + 1);
    if (!marked)
        return rt_error(t->ctx, TILE_ERROR_OUT_OF_MEMORY, "tuning: out of memory");
    int first = fastest_unmarked(t, marked, INFINITY, 0), picked[FINALISTS + 1], n = 0;
    double limit = first >= 0 ? FINAL_BAND * t->c[first].r.ms : 0;
    for (int i = first; i >= 0 && n < FINALISTS; i = fastest_unmarked(t, marked, limit, 0))
        marked[i] = 1, picked[n++] = i;
    int spill_free = fastest_unmarked(t, marked, limit, 1);
    for (int i = 0; spill_free >= 0 && i < n; i++)
        if (t->c[picked[i]].r.local_bytes <= 0)
            spill_free = -1; /* a finalist already has none */
    if (spill_free >= 0)
        picked[n++] = spill_free;
    tile_Status st = TILE_OK;
    for (int i = 0; i < n && st == TILE_OK; i++)
        if (!t->c[picked[i]].final)
            st = time_final(t, &t->c[picked[i]]);
    t->best = -1;
    for (int i = 0; i < t->n; i++) {
        Cand *c = &t->c[i];
        if (c->same_as && c->r.status == TILE_TUNE_OK)
            c->r.ms = t->c[c->same_as - 1].r.ms;
        consider(t, i);
    }
    return st;
}

static tile_Status time_all(Tuning *t)
{
    double t0 = tune_now_ms();
    int done = 0;
    tile_Status st = TILE_OK;
    for (int i = 0; i < t->n; i++) {
        Cand *c = &t->c[i];
        if (!c->todo || c->done)
            continue;
        c->done = 1;
        if (st != TILE_OK || past_budget(t)) {
            c->todo = 0;
            c->r.status = TILE_TUNE_SKIPPED;
            c->r.reason = st != TILE_OK              ? "not timed: the device faulted"
                          : c->job && c->job->skipped ? c->job->reason
                                                      : "past the time budget";
        } else {
            if (t->trace_fd >= 0)
                dprintf(t->trace_fd, "begin %s\n", c->r.config);
            st = evaluate(t, c);
            consider(t, i);
            if (t->trace_fd >= 0) /* a worker: keep the result even if a later one crashes */
                save_one(t, c, st == TILE_OK);
        }
        uint64_t h = c->job->image.code_hash; /* kept for later comparisons */
        job_free(c->job);
        c->job->image.code_hash = h;
        progress(t, "time", ++done, t->ntodo, t0);
    }
    if (st == TILE_OK)
        st = time_finalists(t);
    t->rep->timing_s += (tune_now_ms() - t0) / 1e3;
    return st;
}

/* ---- random search: refine around the best ---- */

static int value_index(const TuneParam *p, int64_t v)
{
    for (int i = 0; i < p->nvalues; i++)
        if (p->values[i] == v)
            return i;
    return -1;
}

/* The configuration equal to c but for parameter p's value. */
static Cand *with_value(Tuning *t, const Cand *c, int p, int64_t v)
{
    for (int i = 0; i < t->n; i++) {
        Cand *o = &t->c[i];
        int same = o->ncfg == c->ncfg;
        for (int q = 0; same && q < c->ncfg; q++)
            same = o->cfg[q].value == (q == p ? v : c->cfg[q].value);
        if (same)
            return o;
    }
    return NULL; /* excluded by a constraint */
}

/* Marks the untimed neighbours of the best for timing; returns how many. */
static int mark_neighbours(Tuning *t)
{
    const Cand *b = &t->c[t->best];
    int n = 0;
    for (int p = 0; p < b->ncfg && p < t->space.nparams; p++) {
        const TuneParam *tp = &t->space.params[p];
        int vi = value_index(tp, b->cfg[p].value);
        for (int step = -1; vi >= 0 && step <= 1; step += 2) {
            Cand *o = vi + step >= 0 && vi + step < tp->nvalues ? with_value(t, b, p, tp->values[vi + step]) : NULL;
            if (o && o->r.status == TILE_TUNE_SKIPPED && !o->todo) {
                o->todo = 1, o->r.status = 0, o->r.reason = "";
                n++;
            }
        }
    }
    return n;
}

static tile_Status refine(Tuning *t)
{
    tile_Status st = TILE_OK;
    int moved = 1;
    while (st == TILE_OK && moved && t->best >= 0 && !past_budget(t)) {
        int before = t->best, n = mark_neighbours(t);
        if (!n)
            break;
        t->ntodo += n;
        if ((st = compile_all(t)) == TILE_OK)
            st = time_all(t);
        moved = t->best != before;
    }
    return st;
}

/* The worker's choice, stored in the cache with the results: it knew which medians were
 * full and which only a screen's (this process, reading the cache, does not). -1 if none. */
static int workers_choice(const Tuning *t)
{
    const char *best = t->req->kt->tc ? tcache_best(t->req->kt->tc, t->req->key) : NULL;
    for (int i = 0; best && i < t->n; i++)
        if (!strcmp(t->c[i].r.config, best) && t->c[i].r.status == TILE_TUNE_OK)
            return i;
    return -1;
}

/* The choice among the results (tune_pick), finalists only where this tuning timed some in
 * full: a configuration that only had the screen's few runs never wins on them (the full
 * medians can come out a little slower than the screen's). After workers tuned, theirs.
 * t->best stays where there is no memory for the list. */
static void select_best(Tuning *t)
{
    int worker = t->isolated ? workers_choice(t) : -1;
    if (worker >= 0) {
        t->best = worker;
        return;
    }
    tile_TuneResult *r = t->best >= 0 ? arena_alloc(t->a, sizeof *r * (size_t)t->n) : NULL;
    if (!r)
        return;
    int finals = 0;
    for (int i = 0; i < t->n; i++)
        finals += t->c[i].final && t->c[i].r.status == TILE_TUNE_OK;
    for (int i = 0; i < t->n; i++) {
        const Cand *c = &t->c[i], *timed = c->same_as ? &t->c[c->same_as - 1] : c;
        r[i] = c->r;
        if (finals && is_candidate(timed, 0) && !timed->final)
            r[i].status = TILE_TUNE_SKIPPED; /* for the pick only */
    }
    int best = tune_pick(r, t->n);
    if (best >= 0)
        t->best = best;
}

/* ---- results ---- */

static void store(Tuning *t)
{
    TCache *tc = t->req->kt->tc;
    if (!tc)
        return;
    for (int i = 0; i < t->n; i++) {
        const tile_TuneResult *r = &t->c[i].r;
        if (t->c[i].todo && r->status != TILE_TUNE_SKIPPED)
            put_result(tc, t->req->key, r);
    }
    if (t->best >= 0)
        tcache_set_best(tc, t->req->key, t->c[t->best].r.config);
    char err[512];
    if (tcache_save(tc, err, sizeof err) != 0)
        rt_log(t->ctx, "tile: cannot save the tuning cache: %s", err);
    else if (err[0]) /* a damaged file was moved aside */
        rt_log(t->ctx, "tile: %s", err);
}

static int rank(const tile_TuneResult *a, const tile_TuneResult *b)
{
    if (a->status != b->status)
        return a->status < b->status ? -1 : 1;
    if (a->status == TILE_TUNE_OK && a->ms != b->ms)
        return a->ms < b->ms ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

static int rank_cmp(const void *a, const void *b) { return rank(a, b); }

static tile_Status report(Tuning *t)
{
    tile_TuneReport *rep = t->rep;
    tile_TuneResult *res = arena_alloc(t->a, sizeof *res * (size_t)(t->n + 1));
    rep->key = arena_strdup(t->a, t->req->key);
    if (!res || !rep->key) {
        rep->key = "", rep->best = -1;
        return rt_error(t->ctx, TILE_ERROR_OUT_OF_MEMORY, "tuning: out of memory for the report");
    }
    rep->total = rep->nresults = t->n;
    rep->best = -1;
    for (int i = 0; i < t->n; i++) {
        res[i] = t->c[i].r;
        rep->cached += res[i].cached;
        rep->timed += res[i].status == TILE_TUNE_OK && !res[i].cached;
        rep->failed += res[i].status == TILE_TUNE_FAILED;
        rep->pruned += res[i].status == TILE_TUNE_PRUNED;
        rep->skipped += res[i].status == TILE_TUNE_SKIPPED;
    }
    qsort(res, (size_t)t->n, sizeof *res, rank_cmp);
    for (int i = 0; t->best >= 0 && i < t->n; i++)
        if (res[i].index == t->best)
            rep->best = i;
    rep->results = res;
    rep->wall_s = (tune_now_ms() - t->t0) / 1e3;
    return TILE_OK;
}

/* What to time: all but the cache's results and what the random sample leaves out. */
static void plan(Tuning *t, int samples)
{
    from_cache(t);
    sample(t, samples);
    t->ntodo = 0, t->best = -1;
    for (int i = 0; i < t->n; i++) {
        t->ntodo += t->c[i].todo;
        if (!t->c[i].todo)
            consider(t, i);
    }
}

/* Tuning in worker processes (tune_isolate.c): afterwards the cache holds every result, so
 * this process only selects; what the workers did not reach is reported as skipped. */
static void isolate(Tuning *t, int samples)
{
    TuneIsolation iso = { 0 };
    double left = t->budget_ms > 0 ? t->budget_ms - (tune_now_ms() - t->t0) : 0;
    if (!tune_isolate(t->req, samples, t->budget_ms > 0 && left < 1 ? 1 : left, t->ntodo,
                      t->rep, t->a, &iso))
        return;
    t->isolated = 1;
    plan(t, samples);
    for (int i = 0; i < t->n; i++) {
        Cand *c = &t->c[i];
        TResult r;
        for (int j = 0; j < iso.nevaluated && c->r.cached; j++)
            if (!strcmp(iso.evaluated[j], c->r.config)) {
                c->r.cached = 0; /* evaluated now, by a worker */
                if (tcache_get(t->req->kt->tc, t->req->key, c->r.config, &r))
                    c->r.compile_ms = r.compile_ms, c->r.local_bytes = r.local_bytes;
            }
        if (c->todo) {
            c->todo = 0;
            c->r.status = TILE_TUNE_SKIPPED;
            c->r.reason = iso.left_reason ? iso.left_reason : "not timed by the tuning worker";
        }
    }
    t->ntodo = 0;
}

/* Enumeration and the plan: plain C on the tuning's arena, so an allocation failing anywhere
 * in them comes back here (arena_set_failure_jump) and is one error status. */
static tile_Status prepare(Tuning *t, int samples)
{
    jmp_buf jump, *prev = arena_set_failure_jump(t->a, &jump);
    volatile tile_Status st = TILE_ERROR_OUT_OF_MEMORY;
    if (setjmp(jump) == 0) {
        st = enumerate(t);
        if (st == TILE_OK)
            plan(t, samples);
    }
    arena_set_failure_jump(t->a, prev);
    if (st == TILE_ERROR_OUT_OF_MEMORY)
        return rt_error(t->ctx, st, "tuning '%s': out of memory", t->req->k->func->name);
    return st;
}

tile_Status tune_first_config(const TuneRequest *req, Arena *a, int allow_none,
                              ConstBinding *first, int *n)
{
    char target[32];
    TuneSpace s;
    TuneConfig *cfgs;
    int m = 0;
    rt_current_target(req->k->mod->ctx, target);
    jmp_buf jump, *prev = arena_set_failure_jump(a, &jump);
    volatile tile_Status st = TILE_ERROR_OUT_OF_MEMORY;
    if (setjmp(jump) == 0)
        st = configs(req, target, a, &s, &cfgs, &m, allow_none);
    arena_set_failure_jump(a, prev);
    if (st == TILE_ERROR_OUT_OF_MEMORY)
        return rt_error(req->k->mod->ctx, st, "tuning '%s': out of memory", req->k->func->name);
    *n = st == TILE_OK && m > 0 ? cfgs[0].nvalues : 0;
    if (*n)
        memcpy(first, cfgs[0].values, sizeof *first * (size_t)*n);
    return st;
}

static void bench_setup(Tuning *t)
{
    t->bench.reps = t->req->reps > 0 ? t->req->reps : 0; /* 0: as many as ~100 ms allow */
    t->bench.config_budget_ms =
        tune_env_seconds(t->ctx, "TILE_TUNE_CONFIG_BUDGET", 1, 1.0, NULL) * 1e3;
}

tile_Status tune_run(const TuneRequest *req, Arena *a, tile_TuneReport *rep)
{
    Tuning t = { .req = req, .ctx = req->k->mod->ctx, .a = a, .best = -1, .rep = rep,
                 .trace_fd = tune_trace_fd() };
    memset(rep, 0, sizeof *rep);
    t.t0 = tune_now_ms();
    t.budget_ms = (req->budget_s > 0 ? req->budget_s
                   : tune_env_seconds(t.ctx, "TILE_TUNE_BUDGET", 1, 0, "0 (no budget)")) * 1e3;
    rt_current_target(t.ctx, t.target);
    t.div = rt_arg_divisors(req->k, req->args, a);
    int samples = req->samples > 0 ? req->samples : env_samples(t.ctx);
    tile_Status st = prepare(&t, samples);
    if (st != TILE_OK)
        return st;
    if (t.ntodo && t.trace_fd < 0 && tune_isolate_wanted(t.ctx))
        isolate(&t, samples);
    if (t.ntodo && (st = tune_bench_init(&t.bench, req->k, req->args, a)) != TILE_OK)
        return st;
    bench_setup(&t);
    if (t.ntodo && (st = compile_all(&t)) == TILE_OK) {
        st = time_all(&t);
        if (st == TILE_OK && samples > 0 && samples < t.n && env_refine(t.ctx))
            st = refine(&t);
        char err[BK_ERR_MAX];
        if (st == TILE_OK && tune_bench_prepare(&t.bench, err) != TILE_OK)
            st = rt_error(t.ctx, TILE_ERROR_DEVICE, "tuning '%s': restoring buffers: %s",
                          req->k->func->name, err);
    }
    tune_bench_fini(&t.bench);
    select_best(&t);
    const char *old = req->kt->tc ? tcache_best(req->kt->tc, req->key) : NULL;
    if (t.ntodo || (t.best >= 0 && (!old || strcmp(old, t.c[t.best].r.config))))
        store(&t);
    tile_Status rst = report(&t);
    return st != TILE_OK ? st : rst;
}
