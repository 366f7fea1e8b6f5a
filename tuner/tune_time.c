/* tune_time.c: running one configuration for the tuner. Everything that touches the device
 * while tuning goes through here: the @reset / @restore buffers, pruning by device limits,
 * and tune_time_config (warm-up, rotated inputs or an L2 flush, device-event timing,
 * median). Faults are isolated a level up: tune_isolate.c runs the engine in a worker. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tune.h"

/* Screening (TUNE_SCREEN): SCREEN_REPS timed runs, or one when it is SLOW_FACTOR x the best
 * so far (it cannot win). Full timing (TUNE_FULL, the finalists): runs until about TARGET_MS
 * of kernel time, at least MIN_REPS, at most b->reps when the caller set it, else AUTO_REPS
 * (short kernels need many runs for a median steady to a fraction of a percent). */
enum { MAX_REPS = 1000, MIN_REPS = 3, AUTO_REPS = 100, SCREEN_REPS = 5 };
static const double SLOW_FACTOR = 1.5, TARGET_MS = 100.0;

static atomic_long n_timed;

long tune_timings(void) { return atomic_load(&n_timed); }

double tune_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

/* ---- @reset / @restore buffers ---- */

/* Bytes from p to the end of the allocation holding it; 0 if the runtime did not allocate it. */
static size_t alloc_extent(tile_Context *ctx, tile_DevPtr p)
{
    tile_DevPtr base;
    size_t size;
    return tune_alloc_of(ctx, p, &base, &size) ? base + size - p : 0;
}

static int param_index(tile_Kernel *k, const char *name)
{
    for (int i = 0; i < k->nparams; i++)
        if (!strcmp(k->params[i].name, name))
            return i;
    return -1;
}

static tile_Status add_bufs(TuneBench *b, AnnKind kind, TuneBuf **out, int *n, Arena *a)
{
    const Func *f = b->k->func;
    tile_Context *ctx = b->ctx;
    for (int i = 0; i < f->nanns; i++) {
        const Annotation *an = &f->anns[i];
        if (an->kind != kind)
            continue;
        *out = arena_alloc(a, sizeof **out * (size_t)(an->nargs + 1));
        for (int j = 0; j < an->nargs; j++) {
            int p = an->args[j].name ? param_index(b->k, an->args[j].name) : -1;
            if (p < 0 || !b->k->params[p].is_ptr)
                return rt_error(ctx, TILE_ERROR_INVALID_ARGUMENT,
                                "tuning '%s': @%s names no pointer parameter", f->name, an->name);
            TuneBuf *t = &(*out)[(*n)++];
            t->ptr = b->args[p].v.ptr;
            if (!(t->bytes = alloc_extent(ctx, t->ptr)))
                return rt_error(ctx, TILE_ERROR_INVALID_ARGUMENT,
                                "tuning '%s': @%s(%s): argument %d was not allocated by "
                                "tile_malloc, so its size is unknown", f->name, an->name,
                                an->args[j].name, p + 1);
        }
    }
    return TILE_OK;
}

static tile_Status save_restores(TuneBench *b)
{
    char err[BK_ERR_MAX];
    for (int i = 0; i < b->nrestores; i++) {
        TuneBuf *t = &b->restores[i];
        if (!(t->saved = malloc(t->bytes)))
            return rt_error(b->ctx, TILE_ERROR_OUT_OF_MEMORY, "tuning: out of memory");
        tile_Status st = b->ctx->ops->copy_d2h(b->ctx->dev, t->saved, t->ptr, t->bytes, err);
        if (st != TILE_OK)
            return rt_error(b->ctx, st, "tuning '%s': saving @restore buffers: %s",
                            b->k->func->name, err);
    }
    return TILE_OK;
}

tile_Status tune_bench_init(TuneBench *b, tile_Kernel *k, const tile_Arg *args, Arena *a)
{
    *b = (TuneBench){ .ctx = k->mod->ctx, .k = k, .args = args };
    tile_Status st = add_bufs(b, ANN_RESET, &b->resets, &b->nresets, a);
    if (st == TILE_OK)
        st = add_bufs(b, ANN_RESTORE, &b->restores, &b->nrestores, a);
    if (st == TILE_OK)
        st = save_restores(b);
    return st == TILE_OK ? tune_rotation_init(b, a) : st;
}

tile_Status tune_bench_prepare(TuneBench *b, char *err)
{
    const BackendOps *ops = b->ctx->ops;
    tile_Status st = TILE_OK;
    for (int i = 0; i < b->nrestores && st == TILE_OK; i++)
        st = ops->copy_h2d(b->ctx->dev, b->restores[i].ptr, b->restores[i].saved,
                           b->restores[i].bytes, err);
    for (int i = 0; i < b->nresets && st == TILE_OK; i++)
        st = ops->memset(b->ctx->dev, b->resets[i].ptr, 0, b->resets[i].bytes, err);
    return st;
}

void tune_bench_fini(TuneBench *b)
{
    tune_rotation_fini(b);
    for (int i = 0; i < b->nrestores; i++)
        free(b->restores[i].saved);
    b->nrestores = 0;
}

/* ---- pruning ---- */

/* What the backend says s's loaded code needs; 0 where it says nothing. */
static int loaded_attrs(tile_Context *ctx, const Spec *s, BkFuncAttrs *fa)
{
    char err[BK_ERR_MAX];
    *fa = (BkFuncAttrs){ 0 };
    return ctx->ops->func_attrs && ctx->ops->func_attrs(ctx->dev, s->fn, fa, err) == TILE_OK;
}

const char *tune_prune_reason(tile_Context *ctx, const Spec *s, Arena *a)
{
    BkLimits lim = { 0 };
    BkFuncAttrs fa;
    if (ctx->ops->limits)
        ctx->ops->limits(ctx->dev, &lim);
    if (lim.smem_optin && s->smem_bytes > lim.smem_optin)
        return arena_printf(a, "needs %d bytes of shared memory, the device allows %d",
                            s->smem_bytes, lim.smem_optin);
    if (lim.threads_per_block && s->num_threads > lim.threads_per_block)
        return arena_printf(a, "%d threads per block, the device allows %d", s->num_threads,
                            lim.threads_per_block);
    if (!loaded_attrs(ctx, s, &fa))
        return NULL;
    if (lim.regs_per_block && (long)fa.num_regs * s->num_threads > lim.regs_per_block)
        return arena_printf(a, "%d registers x %d threads exceed the %d registers of a block",
                            fa.num_regs, s->num_threads, lim.regs_per_block);
    if (fa.max_threads && s->num_threads > fa.max_threads)
        return arena_printf(a, "%d threads per block, the compiled code allows %d",
                            s->num_threads, fa.max_threads);
    if (lim.smem_optin && s->smem_bytes + fa.static_smem > lim.smem_optin)
        return arena_printf(a, "needs %d bytes of shared memory (%d static), the device allows %d",
                            s->smem_bytes + fa.static_smem, fa.static_smem, lim.smem_optin);
    return NULL;
}

int tune_local_bytes(tile_Context *ctx, const Spec *s)
{
    BkFuncAttrs fa;
    return loaded_attrs(ctx, s, &fa) && fa.local_bytes >= 0 ? fa.local_bytes : -1;
}

/* ---- timing ---- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

/* One run: buffers restored and the next input set chosen, or the L2 flushed (untimed),
 * then the timed launch. */
static tile_Status run_once(TuneBench *b, Spec *s, const unsigned grid[3], double *ms, char *err)
{
    const BackendOps *ops = b->ctx->ops;
    uint64_t slots[256];
    void *ptrs[256];
    tile_DevPtr debug_buf = 0; /* prints and assertions of timed runs are not reported */
    if (s->nparams >= 256 || rt_debug_arm(b->ctx, s, &debug_buf) != TILE_OK) {
        snprintf(err, BK_ERR_MAX, "packing arguments: %s", tile_error(b->ctx));
        return TILE_ERROR_INVALID_ARGUMENT;
    }
    tile_Status st = rt_args_pack(b->k, s, tune_rotation_next(b), debug_buf, slots, ptrs);
    if (st != TILE_OK)
        snprintf(err, BK_ERR_MAX, "packing arguments: %s", tile_error(b->ctx));
    if (st == TILE_OK)
        st = tune_bench_prepare(b, err);
    if (st == TILE_OK && ops->flush_l2 && b->nsets <= 1)
        st = ops->flush_l2(b->ctx->dev, err);
    if (st == TILE_OK)
        st = ops->timed_launch(b->ctx->dev, s->fn, grid, s->num_threads, s->smem_bytes, ptrs,
                               ms, err);
    return debug_buf ? rt_debug_report(b->ctx, s, NULL, st, 1) : st;
}

static TResStatus failed(TuneBench *b, const char *what, const char *err, char *reason,
                         size_t cap, int *fatal)
{
    *fatal = b->ctx->ops->context_lost && b->ctx->ops->context_lost(b->ctx->dev);
    snprintf(reason, cap, "%s: %s", what, err);
    return TRES_FAILED;
}

TResStatus tune_time_config(TuneBench *b, Spec *s, const unsigned grid[3], TuneTiming how,
                            double best_ms, double *ms, char *reason, size_t cap, int *fatal)
{
    char err[BK_ERR_MAX];
    double t[MAX_REPS], warm, spent = 0;
    int reps = b->reps < 1 ? AUTO_REPS : b->reps > MAX_REPS ? MAX_REPS : b->reps, n = 0;
    *fatal = 0;
    if (how == TUNE_SCREEN)
        atomic_fetch_add(&n_timed, 1);
    if (run_once(b, s, grid, &warm, err) != TILE_OK) /* loads the code, warms up */
        return failed(b, "launch", err, reason, cap, fatal);
    if (run_once(b, s, grid, &t[n], err) != TILE_OK)
        return failed(b, "launch", err, reason, cap, fatal);
    spent += t[n++];
    if (how == TUNE_SCREEN)
        reps = best_ms > 0 && t[0] > SLOW_FACTOR * best_ms ? 1
               : reps < SCREEN_REPS                       ? reps
                                                          : SCREEN_REPS;
    else if (reps > MIN_REPS && t[0] * reps > TARGET_MS)
        reps = t[0] * MIN_REPS >= TARGET_MS ? MIN_REPS : (int)(TARGET_MS / t[0]);
    while (n < reps && spent < b->config_budget_ms) {
        if (run_once(b, s, grid, &t[n], err) != TILE_OK)
            return failed(b, "launch", err, reason, cap, fatal);
        spent += t[n++];
    }
    *ms = median(t, n);
    return TRES_OK;
}
