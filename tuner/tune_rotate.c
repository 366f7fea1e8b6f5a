/* tune_rotate.c: rotating input sets while timing. When a kernel's argument buffers fit in
 * the L2 cache, repeated runs would find them there; the tuner then makes copies of every
 * allocation the arguments point into (enough sets to exceed twice the L2) and gives each
 * run the next set, so every run reads cold data without an L2 flush (whose dirty lines would
 * be written back during the timed kernel). Kernels with @reset/@restore keep one set and the
 * flush (their buffers are prepared in place). */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "tune.h"

enum { MAX_SETS = 32, MAX_ALLOCS = 64 };
static const double MAX_ROTATION_BYTES = 512.0 * (1 << 20);

int tune_alloc_of(tile_Context *ctx, tile_DevPtr p, tile_DevPtr *base, size_t *size)
{
    RtRange g;
    if (!rt_alloc_of(ctx, p, &g))
        return 0;
    *base = g.base, *size = g.size;
    return 1;
}

/* The distinct allocations the pointer arguments point into; -1 if one is not the runtime's. */
static int arg_allocs(TuneBench *b, tile_DevPtr *base, size_t *size, double *total)
{
    int n = 0;
    *total = 0;
    for (int i = 0; i < b->k->nparams; i++) {
        if (!b->k->params[i].is_ptr || !b->args[i].v.ptr)
            continue;
        tile_DevPtr bs;
        size_t sz;
        if (!tune_alloc_of(b->ctx, b->args[i].v.ptr, &bs, &sz))
            return -1;
        int seen = 0;
        for (int j = 0; j < n && !seen; j++)
            seen = base[j] == bs;
        if (seen)
            continue;
        if (n == MAX_ALLOCS)
            return -1;
        base[n] = bs, size[n++] = sz, *total += (double)sz;
    }
    return n;
}

/* A new allocation of `size` bytes holding `host`'s contents. */
static tile_Status copy_of(TuneBench *b, size_t size, const void *host, tile_DevPtr *out)
{
    const BackendOps *ops = b->ctx->ops;
    char err[BK_ERR_MAX];
    tile_Status st = ops->malloc(b->ctx->dev, size, out, err);
    if (st == TILE_OK && (st = ops->copy_h2d(b->ctx->dev, *out, host, size, err)) != TILE_OK)
        ops->free(b->ctx->dev, *out, err);
    return st;
}

/* Builds set r of the arguments: pointers moved into the set's copies. */
static void fill_set(TuneBench *b, int r, const tile_DevPtr *base, int nallocs)
{
    tile_Arg *set = &b->sets[(size_t)r * (size_t)b->k->nparams];
    memcpy(set, b->args, sizeof *set * (size_t)b->k->nparams);
    for (int i = 0; i < b->k->nparams; i++)
        for (int j = 0; b->k->params[i].is_ptr && j < nallocs; j++) {
            tile_DevPtr p = b->args[i].v.ptr;
            size_t sz = b->copy_size[j];
            if (p >= base[j] && p < base[j] + sz)
                set[i].v.ptr = b->copies[(size_t)(r - 1) * (size_t)nallocs + (size_t)j] + (p - base[j]);
        }
}

static int rotation_sets(const TuneBench *b, double total)
{
    BkLimits lim = { 0 };
    if (b->nresets || b->nrestores || !b->ctx->ops->limits)
        return 1;
    b->ctx->ops->limits(b->ctx->dev, &lim);
    if (lim.l2_bytes <= 0 || total <= 0 || total >= (double)lim.l2_bytes)
        return 1; /* inputs larger than the L2: the flush does the job */
    int n = (int)(2.0 * (double)lim.l2_bytes / total) + 1;
    if (n > MAX_SETS)
        n = MAX_SETS;
    while (n > 1 && total * n > MAX_ROTATION_BYTES)
        n--;
    return n;
}

static atomic_int last_sets = 1;

int tune_last_rotation(void) { return atomic_load(&last_sets); }

tile_Status tune_rotation_init(TuneBench *b, Arena *a)
{
    tile_DevPtr base[MAX_ALLOCS];
    size_t size[MAX_ALLOCS];
    double total;
    int nallocs = arg_allocs(b, base, size, &total);
    b->nsets = nallocs > 0 ? rotation_sets(b, total) : 1;
    atomic_store(&last_sets, b->nsets);
    if (b->nsets <= 1)
        return TILE_OK;
    b->nallocs = nallocs;
    b->sets = arena_alloc(a, sizeof *b->sets * (size_t)(b->nsets * b->k->nparams + 1));
    b->copies = arena_alloc(a, sizeof *b->copies * (size_t)((b->nsets - 1) * nallocs + 1));
    b->copy_size = arena_alloc(a, sizeof *b->copy_size * (size_t)(nallocs + 1));
    if (!b->sets || !b->copies || !b->copy_size) { /* as below: time without rotation */
        b->nsets = 1, b->nallocs = 0;
        atomic_store(&last_sets, 1);
        return TILE_OK;
    }
    memcpy(b->copy_size, size, sizeof *size * (size_t)nallocs);
    for (int j = 0; j < nallocs; j++) {
        char err[BK_ERR_MAX];
        void *host = malloc(size[j] ? size[j] : 1);
        tile_Status st = host ? b->ctx->ops->copy_d2h(b->ctx->dev, host, base[j], size[j], err)
                              : TILE_ERROR_OUT_OF_MEMORY;
        for (int r = 1; st == TILE_OK && r < b->nsets; r++)
            st = copy_of(b, size[j], host, &b->copies[(size_t)(r - 1) * (size_t)nallocs + (size_t)j]);
        free(host);
        if (st != TILE_OK) { /* not fatal: time without rotation */
            tune_rotation_fini(b);
            return TILE_OK;
        }
    }
    memcpy(b->sets, b->args, sizeof *b->sets * (size_t)b->k->nparams);
    for (int r = 1; r < b->nsets; r++)
        fill_set(b, r, base, nallocs);
    return TILE_OK;
}

const tile_Arg *tune_rotation_next(TuneBench *b)
{
    if (b->nsets <= 1)
        return b->args;
    return &b->sets[(size_t)(b->run++ % b->nsets) * (size_t)b->k->nparams];
}

void tune_rotation_fini(TuneBench *b)
{
    char err[BK_ERR_MAX];
    for (int i = 0; b->copies && i < (b->nsets - 1) * b->nallocs; i++)
        if (b->copies[i])
            b->ctx->ops->free(b->ctx->dev, b->copies[i], err);
    b->copies = NULL;
    b->nsets = 1;
}
