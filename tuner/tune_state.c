/* tune_state.c: tuning as the runtime sees it. Per kernel: its space (read once), a map from
 * tuning key to the chosen configuration (the launch fast path: one key string, one hash,
 * one locked lookup), and its tuning cache file. On a miss: the cache's best, else tune now
 * (AUTO), else the fallback (CACHED). Also the public tile_set_tuning and tile_tune. */
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tune.h"

enum { MAX_VALS = 512 };

typedef enum { SRC_TUNED, SRC_CACHE, SRC_FALLBACK } Source;

/* ---- modes and logging ---- */

static const char *const MODES[] = { "auto", "cached", "off", NULL }; /* tile_Tuning - 1 */
static int env_mode, env_print;
static char bad_mode[64], bad_print[64]; /* values that did not parse, for the warning */
static atomic_int env_warned;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;

static void read_env(void)
{
    const char *m = getenv("TILE_TUNE"), *p = getenv("TILE_PRINT_AUTOTUNING");
    int i = tune_env_word(NULL, "TILE_TUNE", m, MODES, NULL);
    env_mode = i >= 0 ? i + 1 : 0;
    if (i == -2)
        snprintf(bad_mode, sizeof bad_mode, "%s", m);
    i = tune_env_word(NULL, "TILE_PRINT_AUTOTUNING", p, TUNE_ENV_FLAG, NULL);
    env_print = i == 1 || i == -2; /* any value but 0 asks for it, as it always did */
    if (i == -2)
        snprintf(bad_print, sizeof bad_print, "%s", p);
}

/* Values of TILE_TUNE and TILE_PRINT_AUTOTUNING that did not parse: to the first log sink. */
static void warn_env(tile_Context *ctx)
{
    if (!ctx->log || (!bad_mode[0] && !bad_print[0]) || atomic_exchange(&env_warned, 1))
        return;
    if (bad_mode[0])
        tune_env_word(ctx, "TILE_TUNE", bad_mode, MODES,
                      "the default (auto on GPUs, off on the CPU and sim backends)");
    if (bad_print[0])
        tune_env_word(ctx, "TILE_PRINT_AUTOTUNING", bad_print, TUNE_ENV_FLAG, "1 (print)");
}

static tile_Tuning mode_of(tile_Context *ctx)
{
    int m = atomic_load(&ctx->tuning);
    pthread_once(&env_once, read_env);
    warn_env(ctx);
    if (m)
        return (tile_Tuning)m;
    if (env_mode)
        return (tile_Tuning)env_mode;
    tile_Backend b = ctx->ops->kind; /* host timings say little about a GPU's */
    return b == TILE_BACKEND_CPU || b == TILE_BACKEND_SIM ? TILE_TUNING_OFF : TILE_TUNING_AUTO;
}

tile_Status tile_set_tuning(tile_Context *ctx, tile_Tuning mode)
{
    tile_Status st = rt_handle_check(ctx, RT_CONTEXT, "tile_set_tuning");
    if (st != TILE_OK)
        return st;
    if (mode < TILE_TUNING_AUTO || mode > TILE_TUNING_OFF)
        return rt_error(ctx, TILE_ERROR_INVALID_ARGUMENT, "tile_set_tuning: mode %d is none of "
                        "TILE_TUNING_AUTO (1), TILE_TUNING_CACHED (2), TILE_TUNING_OFF (3)",
                        (int)mode);
    atomic_store(&ctx->tuning, (int)mode);
    return TILE_OK;
}

/* To the log sink, else (TILE_PRINT_AUTOTUNING asked for it) to stderr. `always`: to the log
 * sink even when TILE_PRINT_AUTOTUNING did not ask (a fallback: tile.h promises it). */
static void print_choice(tile_Context *ctx, int always, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    pthread_once(&env_once, read_env);
    warn_env(ctx);
    if (!env_print && !(always && ctx->log))
        return;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (ctx->log)
        ctx->log(ctx->log_user, buf);
    else
        fprintf(stderr, "%s\n", buf);
}

/* ---- the per-kernel state ---- */

/* tune_lock is held while a tuning runs, and its log messages and progress callbacks run
 * then, on its thread or its compile threads: one of them that launches or tunes the same
 * kernel would wait for the tuning, which waits for it, forever. So those threads are marked
 * with the kernel, and such a call from them is refused; other threads wait as usual. */
static _Thread_local const tile_Kernel *tuning_for;

const tile_Kernel *tune_thread_swap(const tile_Kernel *k)
{
    const tile_Kernel *was = tuning_for;
    tuning_for = k;
    return was;
}

static tile_Status tune_enter(tile_Kernel *k, KTune *kt, const char *what,
                              const tile_Kernel **was)
{
    if (tuning_for == k)
        return rt_error(k->mod->ctx, TILE_ERROR_INVALID_ARGUMENT,
                        "%s of '%s' from inside its own tuning (a log sink or progress "
                        "callback): refused", what, k->func->name);
    pthread_mutex_lock(&kt->tune_lock);
    *was = tune_thread_swap(k);
    return TILE_OK;
}

static void tune_leave(KTune *kt, const tile_Kernel *was)
{
    tune_thread_swap(was);
    pthread_mutex_unlock(&kt->tune_lock);
}

static KTune *kt_new(tile_Kernel *k)
{
    KTune *kt = calloc(1, sizeof *kt);
    if (!kt || !(kt->arena = arena_new())) {
        free(kt);
        return NULL;
    }
    pthread_mutex_init(&kt->lock, NULL);
    pthread_mutex_init(&kt->tune_lock, NULL);
    Diags d;
    diags_init(&d, kt->arena);
    int rc = space_build(k->func, kt->arena, &d, &kt->space);
    if (rc == SPACE_OUT_OF_MEMORY) {
        pthread_mutex_destroy(&kt->lock);
        pthread_mutex_destroy(&kt->tune_lock);
        arena_free(kt->arena);
        free(kt);
        return NULL;
    }
    if (rc == 0)
        kt->ntuned = kt->space.nparams;
    kt->recheck = rc == 0 && !space_key_exact(&kt->space, k->func);
    return kt;
}

static KTune *kt_get(tile_Kernel *k)
{
    KTune *kt = atomic_load(&k->tune);
    if (kt)
        return kt;
    pthread_mutex_lock(&k->mod->lock);
    if (!(kt = atomic_load(&k->tune)) && (kt = kt_new(k)))
        atomic_store(&k->tune, kt);
    pthread_mutex_unlock(&k->mod->lock);
    return kt;
}

void tune_forget(tile_Kernel *k)
{
    KTune *kt = atomic_load(&k->tune);
    if (!kt)
        return;
    for (size_t i = 0; i < kt->chosen.cap; i++)
        for (Choice *c = kt->chosen.vals[i], *next; c; c = next) {
            next = c->next;
            free(c->key);
            free(c->vals);
            free(c);
        }
    rtmap_free(&kt->chosen);
    if (kt->tc)
        tcache_close(kt->tc);
    for (ReportHold *h = kt->reports, *next; h; h = next) {
        next = h->next;
        arena_free(h->arena); /* h lives in it */
    }
    arena_free(kt->arena);
    pthread_mutex_destroy(&kt->lock);
    pthread_mutex_destroy(&kt->tune_lock);
    free(kt);
    atomic_store(&k->tune, NULL);
}

/* The hash that keys a kernel's tuning file: the module's source without its @tune and
 * @constraint annotations, so that editing candidate lists keeps the results of the
 * configurations that stay (they time the same code). */
static uint64_t source_hash(const char *text, size_t len)
{
    char *copy = malloc(len + 1);
    size_t n = 0;
    if (!copy)
        return rt_hash64(text, len);
    for (size_t i = 0; i < len;) {
        size_t skip = !strncmp(text + i, "@tune", 5) ? 5
                    : !strncmp(text + i, "@constraint", 11) ? 11 : 0;
        if (!skip) {
            copy[n++] = text[i++];
            continue;
        }
        i += skip;
        for (int depth = 0; i < len; i++) { /* to the closing parenthesis */
            depth += text[i] == '(' ? 1 : text[i] == ')' ? -1 : 0;
            if (depth == 0 && text[i] == ')') {
                i++;
                break;
            }
        }
    }
    uint64_t h = rt_hash64(copy, n);
    free(copy);
    return h;
}

/* source_hash of the main file, combined with that of each imported file (imports.h), so that
 * editing an imported helper starts the kernel's tuning afresh. A module without imports keeps
 * the hash of its source alone. */
static uint64_t module_hash(const tile_Module *mod)
{
    uint64_t h[2] = { source_hash(mod->file.text, mod->file.len), 0 };
    for (int i = 1; i < mod->ast->nfiles; i++) {
        h[1] = source_hash(mod->ast->files[i]->text, mod->ast->files[i]->len);
        h[0] = rt_hash64(h, sizeof h);
    }
    return h[0];
}

/* The tuning cache file of this kernel on this device (opened once). */
static TCache *kt_cache(tile_Kernel *k, KTune *kt)
{
    if (kt->tc)
        return kt->tc;
    tile_Context *ctx = k->mod->ctx;
    const BackendOps *ops = ctx->ops;
    char hash[32], warning[512] = "";
    snprintf(hash, sizeof hash, "%016llx", (unsigned long long)module_hash(k->mod));
    TCacheMeta meta = { k->func->name, hash, TILE_COMPILER_VERSION, ops->device_name(ctx->dev),
                        ops->arch(ctx->dev),
                        ops->driver_version ? ops->driver_version(ctx->dev) : "" };
    TCache *tc = tcache_open(NULL, &meta, warning, sizeof warning);
    if (warning[0])
        rt_log(ctx, "tile: %s", warning);
    pthread_mutex_lock(&kt->lock);
    kt->tc = tc;
    pthread_mutex_unlock(&kt->lock);
    return tc;
}

/* ---- key -> choice ---- */

static Choice *choice_find(KTune *kt, const char *key, uint64_t h)
{
    Choice *c = rtmap_get(&kt->chosen, h);
    while (c && strcmp(c->key, key))
        c = c->next;
    return c;
}

/* Records (or replaces) the configuration of a key. */
static tile_Status choice_set(tile_Context *ctx, KTune *kt, const char *key,
                              const ConstBinding *vals, int n)
{
    uint64_t h = rt_hash64(key, strlen(key));
    ConstBinding *copy = malloc(sizeof *copy * (size_t)(n + 1));
    if (!copy)
        return rt_error(ctx, TILE_ERROR_OUT_OF_MEMORY, "tuning: out of memory");
    memcpy(copy, vals, sizeof *copy * (size_t)n);
    pthread_mutex_lock(&kt->lock);
    Choice *c = choice_find(kt, key, h);
    if (!c && (c = calloc(1, sizeof *c)) && (c->key = strdup(key))) {
        c->next = rtmap_get(&kt->chosen, h);
        if (rtmap_put(&kt->chosen, h, c))
            free(c->key), c->key = NULL;
    }
    int ok = c && c->key;
    if (ok) {
        free(c->vals);
        c->vals = copy, c->nvals = n;
    }
    pthread_mutex_unlock(&kt->lock);
    if (!ok) {
        free(c);
        free(copy);
        return rt_error(ctx, TILE_ERROR_OUT_OF_MEMORY, "tuning: out of memory");
    }
    return TILE_OK;
}

static int given_has(const tile_Const *given, int ngiven, const char *name)
{
    for (int g = 0; g < ngiven; g++)
        if (!strcmp(given[g].name, name))
            return 1;
    return 0;
}

/* Overrides the resolved consts with the key's choice, except those the caller gave; 1 if the
 * key had one. */
static int choice_apply(KTune *kt, const char *key, const tile_Const *given, int ngiven,
                        ConstBinding *c, int n)
{
    uint64_t h = rt_hash64(key, strlen(key));
    pthread_mutex_lock(&kt->lock);
    Choice *ch = choice_find(kt, key, h);
    for (int i = 0; ch && i < ch->nvals; i++)
        for (int j = 0; j < n; j++)
            if (!strcmp(c[j].name, ch->vals[i].name) && !given_has(given, ngiven, c[j].name))
                c[j].value = ch->vals[i].value;
    pthread_mutex_unlock(&kt->lock);
    return ch != NULL;
}

/* c with the defaults computed again from the caller's and the chosen values: a const whose
 * default is an expression of a tuned one (`const BLOCK_M: i32 = BLOCK_Q * GROUP`) follows the
 * choice, as it did in the configuration that was timed. */
static tile_Status defaults_follow(tile_Kernel *k, const KTune *kt, const tile_Const *given,
                                   int ngiven, ConstBinding *c, int n, Arena *a)
{
    ConstBinding *b = arena_alloc(a, sizeof *b * (size_t)(ngiven + kt->space.nparams + 1));
    ConstBinding *out = arena_alloc(a, sizeof *out * (size_t)(n + 1));
    if (!b || !out)
        return rt_error(k->mod->ctx, TILE_ERROR_OUT_OF_MEMORY, "launch of '%s': out of memory",
                        k->func->name);
    int nb = 0;
    for (int g = 0; g < ngiven; g++)
        b[nb++] = (ConstBinding){ given[g].name, given[g].value };
    for (int p = 0; p < kt->space.nparams; p++)
        for (int j = 0; j < n && !given_has(given, ngiven, kt->space.params[p].name); j++)
            if (!strcmp(c[j].name, kt->space.params[p].name))
                b[nb++] = c[j];
    Diags d;
    diags_init(&d, a);
    if (tc_resolve_consts(k->func, b, nb, out, n, a, &d) != n)
        return rt_error(k->mod->ctx, TILE_ERROR_INVALID_ARGUMENT,
                        "launch of '%s': the tuned configuration's consts do not resolve",
                        k->func->name);
    memcpy(c, out, sizeof *c * (size_t)n);
    return TILE_OK;
}

/* ---- keys and configurations ---- */

static int pinned(const KTune *kt, const tile_Const *given, int ngiven)
{
    for (int p = 0; p < kt->space.nparams; p++) {
        int found = 0;
        for (int g = 0; g < ngiven && !found; g++)
            found = !strcmp(given[g].name, kt->space.params[p].name);
        if (!found)
            return 0;
    }
    return 1;
}

/* The integer scalar args by name (what constraints and keys read besides consts). */
static int scalar_args(const tile_Kernel *k, const tile_Arg *args, ConstBinding *out, int cap)
{
    int n = 0;
    for (int i = 0; i < k->nparams && n < cap; i++)
        if (!k->params[i].is_ptr && args[i].kind == TILE_ARG_INT)
            out[n++] = (ConstBinding){ k->params[i].name, args[i].v.i };
    return n;
}

/* The tuning key over resolved consts and integer scalar args (in `a`); NULL with the
 * context's error and *st set. */
static char *launch_key(tile_Kernel *k, const ConstBinding *c, int n, const tile_Arg *args,
                        Arena *a, tile_Status *st)
{
    ConstBinding vals[MAX_VALS];
    int nv = 0;
    for (int i = 0; i < n && nv < MAX_VALS; i++)
        vals[nv++] = c[i];
    nv += scalar_args(k, args, vals + nv, MAX_VALS - nv);
    Diags d;
    diags_init(&d, a);
    char *key = space_key(k->func, vals, nv, a, &d);
    char *text = key ? NULL : diags_render_all(&d, a);
    if (!key && (!text || strstr(text, "out of memory")))
        *st = rt_error(k->mod->ctx, TILE_ERROR_OUT_OF_MEMORY, "launch of '%s': out of memory "
                       "computing the tuning key", k->func->name);
    else if (!key)
        *st = rt_error(k->mod->ctx, TILE_ERROR_INVALID_ARGUMENT, "launch of '%s': no tuning key: %s",
                       k->func->name, text);
    return key;
}

/* "NAME=VALUE,..." of n bindings (malloc'ed), NULL for none or without memory. */
static char *bindings_string(const ConstBinding *v, int n)
{
    const char *names[MAX_VALS];
    long long vals[MAX_VALS];
    n = n < MAX_VALS ? n : MAX_VALS;
    for (int i = 0; i < n; i++)
        names[i] = v[i].name, vals[i] = v[i].value;
    return n > 0 ? tcache_config_string(names, vals, n) : NULL;
}

/* Whether the caller gave any of the tuned consts. */
static int gives_tuned(const KTune *kt, const tile_Const *given, int ngiven)
{
    for (int p = 0; p < kt->space.nparams; p++)
        if (given_has(given, ngiven, kt->space.params[p].name))
            return 1;
    return 0;
}

/* c's tuned values, or the first configuration the constraints allow at this launch where
 * they do not allow those (none allowed: refused, as AUTO's launch is). The kernel may rely on
 * its constraints (a store of BLOCK elements): OFF's defaults and first candidates, and a
 * choice cached for a key whose bucket holds launches the constraints treat differently, are
 * checked so. A caller who gives tuned consts chooses the configuration, as pinning does (a
 * test may pass values outside the tuning space on purpose). */
static tile_Status allowed_choice(tile_Kernel *k, const KTune *kt, const tile_Arg *args,
                                  const tile_Const *given, int ngiven, ConstBinding *c, int n,
                                  Arena *a)
{
    ConstBinding vals[MAX_VALS], first[64];
    int m = 0;
    if (!kt->space.nconstraints || gives_tuned(kt, given, ngiven) || n >= MAX_VALS)
        return TILE_OK;
    memcpy(vals, c, sizeof *c * (size_t)n); /* what the constraints read: consts, scalars */
    if (space_allows(&kt->space, vals, n + scalar_args(k, args, vals + n, MAX_VALS - n), a) == 1)
        return TILE_OK;
    TuneRequest req = { .k = k, .kt = (KTune *)kt, .args = args, .given = given, .ngiven = ngiven };
    tile_Status st = tune_first_config(&req, a, 0, first, &m);
    if (st != TILE_OK)
        return st; /* none allowed: refused, as AUTO's launch is */
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++)
            if (!strcmp(c[j].name, first[i].name))
                c[j].value = first[i].value;
    return defaults_follow(k, kt, given, ngiven, c, n, a);
}

/* A configuration string from the cache as values of the current space; -1 when it does
 * not fit it (a parameter or candidate no longer listed). */
static int parse_config(const KTune *kt, const char *config, ConstBinding *out)
{
    const char *names[64];
    long long vals[64];
    char *storage = NULL;
    int n = tcache_config_parse(config, names, vals, 64, &storage), ok = n >= 0;
    for (int p = 0; ok && p < kt->space.nparams; p++) {
        const TuneParam *tp = &kt->space.params[p];
        int found = 0;
        for (int i = 0; i < n && !found; i++)
            if (!strcmp(names[i], tp->name))
                for (int v = 0; v < tp->nvalues && !found; v++)
                    found = tp->values[v] == vals[i];
        for (int i = 0; i < n; i++)
            if (!strcmp(names[i], tp->name))
                out[p] = (ConstBinding){ tp->name, vals[i] };
        ok = found;
    }
    free(storage);
    return ok ? kt->space.nparams : -1;
}

/* ---- the slow path: a key this process has not seen ---- */

typedef struct Miss {
    tile_Kernel *k;
    KTune *kt;
    const char *key;
    const tile_Arg *args;
    const tile_Const *given;
    int ngiven;
    const unsigned *grid;
    Arena *a;
} Miss;

/* The fallback: the first configuration the constraints allow, as a tuning enumerates them
 * (the caller's consts narrow the space). When none is allowed it fails as AUTO's tuning does:
 * the kernel may rely on its constraints (a store of BLOCK elements), so the defaults never
 * run in their place. */
static tile_Status fallback_config(Miss *m, ConstBinding *out, int *n)
{
    TuneRequest req = { .k = m->k, .kt = m->kt, .args = m->args, .given = m->given,
                        .ngiven = m->ngiven, .grid = m->grid, .key = m->key };
    return tune_first_config(&req, m->a, 0, out, n);
}

/* Tunes m's key; *took says how long and where the time went, for the choice's log line. */
static tile_Status from_tuning(Miss *m, ConstBinding *out, int *n, double *ms, char *took,
                               size_t cap)
{
    TuneRequest req = { .k = m->k, .kt = m->kt, .args = m->args, .given = m->given,
                        .ngiven = m->ngiven, .grid = m->grid, .key = m->key };
    tile_TuneReport rep;
    tile_Status st = tune_run(&req, m->a, &rep);
    if (st != TILE_OK || rep.best < 0)
        return st;
    *ms = rep.results[rep.best].ms;
    *n = parse_config(m->kt, rep.results[rep.best].config, out);
    snprintf(took, cap, "; %d configurations in %.1f s: compile %.1f s (%.1f CPU-s), timing %.1f s",
             rep.total, rep.wall_s, rep.compile_wall_s, rep.compile_cpu_s, rep.timing_s);
    return TILE_OK;
}

static tile_Status resolve_miss(Miss *m, tile_Tuning mode)
{
    tile_Context *ctx = m->k->mod->ctx;
    TCache *tc = kt_cache(m->k, m->kt);
    const char *best = tc ? tcache_best(tc, m->key) : NULL;
    ConstBinding vals[64];
    int n = best ? parse_config(m->kt, best, vals) : -1;
    Source src = SRC_CACHE;
    double ms = 0;
    TResult r;
    char took[160] = "";
    tile_Status st = TILE_OK;
    if (n >= 0 && tcache_get(tc, m->key, best, &r))
        ms = r.ms;
    int captured = n < 0 && mode == TILE_TUNING_AUTO && rt_capturing(ctx);
    if (captured) /* said through the context's log as well: the user asked for tuning */
        rt_log(ctx, "tile: '%s' key '%s' not tuned: the stream is being captured into a graph; "
               "using the fallback configuration (launch once before capturing to tune)",
               m->k->func->name, m->key);
    if (n < 0 && mode == TILE_TUNING_AUTO && !captured) {
        src = SRC_TUNED;
        if ((st = from_tuning(m, vals, &n, &ms, took, sizeof took)) != TILE_OK)
            return st;
    }
    if (n < 0) {
        src = SRC_FALLBACK;
        if ((st = fallback_config(m, vals, &n)) != TILE_OK)
            return st;
    }
    char *s = bindings_string(vals, n), when[224];
    snprintf(when, sizeof when, src != SRC_FALLBACK ? "%s: %.4f ms%s"
                                : mode == TILE_TUNING_AUTO && !captured
                                    ? "fallback: no configuration worked when tuned"
                                    : "fallback: the key is not in the cache",
             src == SRC_TUNED ? "tuned" : "cache", ms, took);
    /* a fallback is logged whatever TILE_PRINT_AUTOTUNING says (once: the key keeps it), but
     * not twice in a capture, which said so above */
    print_choice(ctx, src == SRC_FALLBACK && !captured, "tile: autotuning: '%s' key '%s' -> %s (%s)",
                 m->k->func->name, m->key, s ? s : "defaults", when);
    free(s);
    return choice_set(ctx, m->kt, m->key, vals, n);
}

/* c after a key's choice: the defaults that follow it, checked against this launch's
 * constraints where the key does not decide them (a bucketed key: space_key_exact). */
static tile_Status chosen(tile_Kernel *k, const KTune *kt, const tile_Arg *args,
                          const tile_Const *given, int ngiven, ConstBinding *c, int n, Arena *a)
{
    tile_Status st = defaults_follow(k, kt, given, ngiven, c, n, a);
    return st == TILE_OK && kt->recheck ? allowed_choice(k, kt, args, given, ngiven, c, n, a) : st;
}

tile_Status tune_choose(tile_Kernel *k, const tile_Arg *args, const tile_Const *given,
                        int ngiven, ConstBinding *c, int n, const unsigned *grid, Arena *a)
{
    KTune *kt = kt_get(k);
    if (!kt || !kt->ntuned || pinned(kt, given, ngiven))
        return TILE_OK;
    tile_Tuning mode = mode_of(k->mod->ctx);
    if (mode == TILE_TUNING_OFF)
        return allowed_choice(k, kt, args, given, ngiven, c, n, a);
    tile_Status st = TILE_OK;
    char *key = launch_key(k, c, n, args, a, &st);
    if (!key)
        return st;
    if (choice_apply(kt, key, given, ngiven, c, n))
        return chosen(k, kt, args, given, ngiven, c, n, a);
    Miss m = { k, kt, key, args, given, ngiven, grid, a };
    const tile_Kernel *was = NULL;
    if ((st = tune_enter(k, kt, "launch", &was)) != TILE_OK)
        return st;
    if (!choice_apply(kt, key, given, ngiven, c, n) && (st = resolve_miss(&m, mode)) == TILE_OK)
        choice_apply(kt, key, given, ngiven, c, n);
    tune_leave(kt, was);
    return st == TILE_OK ? chosen(k, kt, args, given, ngiven, c, n, a) : st;
}

/* ---- tile_tune ---- */

static tile_Status tune_now(tile_Kernel *k, KTune *kt, const tile_Arg *args,
                            const tile_Const *consts, int nconsts, const unsigned *grid,
                            const tile_TuneOptions *o, const tile_TuneReport **out)
{
    tile_Context *ctx = k->mod->ctx;
    Arena *a = arena_new();
    tile_TuneReport *rep = a ? arena_alloc(a, sizeof *rep) : NULL;
    ReportHold *hold = rep ? arena_alloc(a, sizeof *hold) : NULL; /* its place on the kernel */
    if (!hold) {
        arena_free(a);
        return rt_error(ctx, TILE_ERROR_OUT_OF_MEMORY, "tile_tune: out of memory");
    }
    Diags d;
    diags_init(&d, a);
    ConstBinding given[MAX_VALS], c[MAX_VALS];
    for (int i = 0; i < nconsts && i < MAX_VALS; i++)
        given[i] = (ConstBinding){ consts[i].name, consts[i].value };
    int n = tc_resolve_consts(k->func, given, nconsts, c, MAX_VALS, a, &d);
    tile_Status st = TILE_ERROR_INVALID_ARGUMENT;
    char *key = n < 0 ? NULL : launch_key(k, c, n, args, a, &st);
    char *why = n < 0 ? diags_render_all(&d, a) : NULL;
    if (n < 0) /* as tile_launch says it (launch.c) */
        rt_error(ctx, st, "tile_tune of '%s': cannot resolve const parameters%s%s", k->func->name,
                 why && *why ? ":\n" : "", why ? why : "");
    TuneRequest req = { .k = k, .kt = kt, .args = args, .given = consts, .ngiven = nconsts,
                        .grid = grid, .key = key, .force = o->force, .reps = o->reps, .samples = o->samples,
                        .budget_s = o->budget_s, .progress = o->progress, .user = o->user };
    ConstBinding vals[64];
    if (key && (kt_cache(k, kt), st = tune_run(&req, a, rep)) == TILE_OK && rep->best >= 0) {
        int nv = parse_config(kt, rep->results[rep->best].config, vals);
        st = nv < 0 ? TILE_OK : choice_set(ctx, kt, key, vals, nv);
    }
    *hold = (ReportHold){ .arena = a, .next = kt->reports };
    kt->reports = hold;
    if (out)
        *out = rep;
    return st;
}

/* A tuning that found no configuration to use: an error for tile_tune's caller (a tuning
 * worker's parent reads the results instead), with the first failure's reason (results are
 * ranked: failed, then pruned, then skipped, each in enumeration order). */
static tile_Status none_worked(tile_Context *ctx, const char *kernel, const tile_TuneReport *r)
{
    const tile_TuneResult *first = r->nresults ? &r->results[0] : NULL;
    char counts[128];
    snprintf(counts, sizeof counts, r->failed == r->total ? "every configuration failed (%d of %d)"
             : "no configuration worked (%d of %d failed, %d pruned, %d skipped)",
             r->failed, r->total, r->pruned, r->skipped);
    return rt_error(ctx, TILE_ERROR_COMPILE, "tile_tune of '%s'%s%s%s: %s; the first, %s: %s",
                    kernel, r->key[0] ? " (key '" : "", r->key, r->key[0] ? "')" : "", counts,
                    first ? first->config : "(none)",
                    first && first->reason[0] ? first->reason : "no reason given");
}

tile_Status tile_tune(tile_Kernel *k, const tile_Arg *args, int nargs, const tile_Const *consts,
                      int nconsts, const tile_TuneOptions *opts, const tile_TuneReport **report)
{
    const tile_TuneReport *rep = NULL;
    tile_Status st = tune_tile_grid(k, NULL, args, nargs, consts, nconsts, opts, &rep);
    if (report)
        *report = rep;
    if (st == TILE_OK && rep && rep->best < 0)
        st = none_worked(k->mod->ctx, k->func->name, rep);
    return st;
}

/* tile_TuneOptions as the matching environment variables are read (tune_env.c): counts
 * >= 0 and seconds finite and >= 0, 0 meaning the default. */
static tile_Status options_check(tile_Context *ctx, const tile_TuneOptions *o)
{
    if (o->reps < 0)
        return rt_error(ctx, TILE_ERROR_INVALID_ARGUMENT, "tile_tune: tile_TuneOptions.reps is "
                        "%d: expected an integer >= 0 (0: about 100 ms' worth)", o->reps);
    if (!isfinite(o->budget_s) || o->budget_s < 0)
        return rt_error(ctx, TILE_ERROR_INVALID_ARGUMENT, "tile_tune: tile_TuneOptions.budget_s "
                        "is %g: expected a finite number of seconds >= 0 (0: $TILE_TUNE_BUDGET)",
                        o->budget_s);
    if (o->samples < 0)
        return rt_error(ctx, TILE_ERROR_INVALID_ARGUMENT, "tile_tune: tile_TuneOptions.samples "
                        "is %d: expected an integer >= 0 (0: $TILE_TUNE_SEARCH and "
                        "$TILE_TUNE_SAMPLES)", o->samples);
    return TILE_OK;
}

static tile_Status tune_checked(tile_Kernel *k, const unsigned *grid, const tile_Arg *args,
                                int nargs, const tile_Const *consts, int nconsts,
                                const tile_TuneOptions *opts, const tile_TuneReport **report)
{
    tile_Status st;
    tile_Context *ctx = k->mod->ctx;
    tile_TuneOptions none = { 0 };
    if ((st = rt_launch_check(k, args, nargs, consts, nconsts)) != TILE_OK ||
        (st = options_check(ctx, opts ? opts : &none)) != TILE_OK ||
        (st = rt_refuse_in_capture(ctx, "tile_tune")) != TILE_OK)
        return st;
    KTune *kt = kt_get(k);
    if (!kt)
        return rt_error(ctx, TILE_ERROR_OUT_OF_MEMORY, "tile_tune: out of memory");
    if (!kt->ntuned)
        return rt_error(ctx, TILE_ERROR_INVALID_ARGUMENT, "tile_tune: '%s' has no @tune",
                        k->func->name);
    const tile_Kernel *was = NULL;
    if ((st = tune_enter(k, kt, "tile_tune", &was)) != TILE_OK)
        return st;
    st = tune_now(k, kt, args, consts, nconsts, grid, opts ? opts : &none, report);
    tune_leave(kt, was);
    return st;
}

/* Holds k's module and context while it runs (rt_call_enter): the log sink and the progress
 * callback cannot free them under it. */
tile_Status tune_tile_grid(tile_Kernel *k, const unsigned *grid, const tile_Arg *args,
                           int nargs, const tile_Const *consts, int nconsts,
                           const tile_TuneOptions *opts, const tile_TuneReport **report)
{
    if (report)
        *report = NULL; /* stays so when the call fails before tuning */
    RtCall call;
    tile_Status st = rt_call_enter(k, RT_KERNEL, "tile_tune", &call);
    if (st != TILE_OK)
        return st;
    st = tune_checked(k, grid, args, nargs, consts, nconsts, opts, report);
    rt_call_leave(&call);
    return st;
}
