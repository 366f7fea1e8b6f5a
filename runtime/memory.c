/* memory.c: device memory through the context's backend. The context keeps every live
 * allocation and borrowed range (ranges.c), so copies, memsets and frees are checked against
 * the memory they touch: an offset inside a range is fine; past its end, freed, foreign or
 * never allocated is TILE_ERROR_INVALID_ARGUMENT, never a crash. tile_context_close frees
 * what is left (borrowed memory stays the caller's). */
#include <stdint.h>
#include "runtime_internal.h"

static tile_Status bk_fail(tile_Context *ctx, tile_Status st, const char *what, const char *err)
{
    return rt_error(ctx, st, "%s: %s", what, err);
}

int rt_alloc_of(tile_Context *ctx, uint64_t addr, RtRange *out)
{
    pthread_mutex_lock(&ctx->lock);
    const RtRange *g = rtranges_find(&ctx->allocs, addr);
    if (g)
        *out = *g;
    pthread_mutex_unlock(&ctx->lock);
    return g != NULL;
}

/* Records [base, base + bytes) as the context's; the caller undoes its own part on failure. */
static tile_Status remember(tile_Context *ctx, const char *fn, uint64_t base, size_t bytes,
                            int borrowed)
{
    pthread_mutex_lock(&ctx->lock);
    int bad = rtranges_add(&ctx->allocs, base, bytes, borrowed);
    pthread_mutex_unlock(&ctx->lock);
    if (bad == RTRANGES_NOMEM)
        return rt_error(ctx, TILE_ERROR_OUT_OF_MEMORY, "%s: out of host memory", fn);
    if (bad)
        return rt_error(ctx, TILE_ERROR_INVALID_ARGUMENT,
                        "%s: [0x%llx, +%zu bytes) is empty, wraps around, or overlaps memory "
                        "this context already knows (allocated or borrowed)",
                        fn, (unsigned long long)base, bytes);
    return TILE_OK;
}

static void mark_empty(tile_Context *ctx, uint64_t base)
{
    pthread_mutex_lock(&ctx->lock);
    RtRange *g = (RtRange *)rtranges_find(&ctx->allocs, base);
    if (g)
        g->empty = 1;
    pthread_mutex_unlock(&ctx->lock);
}

tile_Status tile_malloc(tile_Context *ctx, size_t bytes, tile_DevPtr *out)
{
    tile_Status st = rt_handle_check(ctx, RT_CONTEXT, "tile_malloc");
    if (st != TILE_OK)
        return st;
    if (!out)
        return rt_error(ctx, TILE_ERROR_INVALID_ARGUMENT, "tile_malloc: out is NULL");
    char err[BK_ERR_MAX];
    *out = 0;
    int empty = bytes == 0;
    if (empty)
        bytes = 1; /* a distinct, freeable address even for empty buffers (none of it usable) */
    if ((st = ctx->ops->malloc(ctx->dev, bytes, out, err)) != TILE_OK)
        return bk_fail(ctx, st, "tile_malloc", err);
    if ((st = remember(ctx, "tile_malloc", *out, bytes, 0)) == TILE_OK && empty)
        mark_empty(ctx, *out);
    if (st != TILE_OK) {
        ctx->ops->free(ctx->dev, *out, err);
        *out = 0;
    }
    return st;
}

/* Forgets the range starting at ptr when it is of the wanted kind (allocated or borrowed). */
static tile_Status forget(tile_Context *ctx, const char *fn, tile_DevPtr ptr, int borrowed)
{
    RtRange g = { 0 };
    pthread_mutex_lock(&ctx->lock);
    const RtRange *in = rtranges_find(&ctx->allocs, ptr);
    int ok = in && in->base == ptr && in->borrowed == borrowed;
    if (ok)
        rtranges_remove(&ctx->allocs, ptr, &g);
    else if (in)
        g = *in;
    pthread_mutex_unlock(&ctx->lock);
    if (ok)
        return TILE_OK;
    unsigned long long p = ptr, base = g.base;
    if (!g.size)
        return rt_error(ctx, TILE_ERROR_INVALID_ARGUMENT,
                        "%s: 0x%llx was not %s by this context (or was %s already)", fn, p,
                        borrowed ? "borrowed" : "allocated", borrowed ? "unborrowed" : "freed");
    if (g.base != ptr)
        return rt_error(ctx, TILE_ERROR_INVALID_ARGUMENT,
                        "%s: 0x%llx is %llu bytes into the %s range at 0x%llx, not its start",
                        fn, p, p - base, g.borrowed ? "borrowed" : "allocated", base);
    return rt_error(ctx, TILE_ERROR_INVALID_ARGUMENT, "%s: 0x%llx was %s; %s", fn, p,
                    g.borrowed ? "borrowed (tile_borrow)" : "allocated by tile_malloc",
                    g.borrowed ? "give it back with tile_unborrow" : "free it with tile_free");
}

/* A buffer freed from a callback of a call on its context could be one that call's kernel
 * still reads or writes: refused. */
static tile_Status not_in_callback(tile_Context *ctx, const char *fn)
{
    const char *busy = rt_call_on_this_thread(ctx);
    if (!busy)
        return TILE_OK;
    return rt_error(ctx, TILE_ERROR_INVALID_ARGUMENT, "%s: refused: called from a callback of %s "
                    "on this context, whose kernel may use the buffer; free it after that call "
                    "returns", fn, busy);
}

tile_Status tile_free(tile_Context *ctx, tile_DevPtr ptr)
{
    tile_Status st = rt_handle_check(ctx, RT_CONTEXT, "tile_free");
    if (st != TILE_OK || !ptr || (st = not_in_callback(ctx, "tile_free")) != TILE_OK)
        return st;
    if ((st = forget(ctx, "tile_free", ptr, 0)) != TILE_OK)
        return st;
    char err[BK_ERR_MAX];
    st = ctx->ops->free(ctx->dev, ptr, err);
    return st == TILE_OK ? st : bk_fail(ctx, st, "tile_free", err);
}

tile_Status tile_borrow(tile_Context *ctx, tile_DevPtr ptr, size_t bytes)
{
    tile_Status st = rt_handle_check(ctx, RT_CONTEXT, "tile_borrow");
    if (st != TILE_OK)
        return st;
    if (!ptr || !bytes)
        return rt_error(ctx, TILE_ERROR_INVALID_ARGUMENT, "tile_borrow: %s is 0",
                        ptr ? "bytes" : "ptr");
    char err[BK_ERR_MAX] = "";
    if (ptr + (bytes - 1) >= ptr && ctx->ops->check_borrow && /* wrapping: remember says so */
        (st = ctx->ops->check_borrow(ctx->dev, ptr, bytes, err)) != TILE_OK)
        return bk_fail(ctx, st, "tile_borrow", err);
    return remember(ctx, "tile_borrow", ptr, bytes, 1);
}

tile_Status tile_unborrow(tile_Context *ctx, tile_DevPtr ptr)
{
    tile_Status st = rt_handle_check(ctx, RT_CONTEXT, "tile_unborrow");
    return st == TILE_OK ? forget(ctx, "tile_unborrow", ptr, 1) : st;
}

/* The device side of a copy or memset must lie inside one allocation or borrowed range. */
static tile_Status check_range(tile_Context *ctx, const char *fn, uint64_t dev, size_t bytes)
{
    RtRange g;
    if (!rt_alloc_of(ctx, dev, &g))
        return rt_error(ctx, TILE_ERROR_INVALID_ARGUMENT,
                        "%s: device address 0x%llx is not in memory allocated (tile_malloc) "
                        "or borrowed (tile_borrow) by this context", fn, (unsigned long long)dev);
    size_t size = g.empty ? 0 : g.size, room = g.empty ? 0 : g.size - (size_t)(dev - g.base);
    if (bytes > room)
        return rt_error(ctx, TILE_ERROR_INVALID_ARGUMENT,
                        "%s: %zu bytes at 0x%llx run past the end of the %zu-byte %s range at "
                        "0x%llx (%zu bytes left)", fn, bytes, (unsigned long long)dev, size,
                        g.borrowed ? "borrowed" : "allocated", (unsigned long long)g.base, room);
    return TILE_OK;
}

static tile_Status check_copy(tile_Context *ctx, const char *fn, uint64_t dev,
                              const void *host, size_t bytes)
{
    tile_Status st = rt_handle_check(ctx, RT_CONTEXT, fn);
    if (st != TILE_OK || !bytes || (st = rt_refuse_in_capture(ctx, fn)) != TILE_OK)
        return st;
    if (!host)
        return rt_error(ctx, TILE_ERROR_INVALID_ARGUMENT, "%s: host pointer is NULL", fn);
    return check_range(ctx, fn, dev, bytes);
}

tile_Status tile_copy_to_device(tile_Context *ctx, tile_DevPtr dst, const void *src, size_t bytes)
{
    tile_Status st = check_copy(ctx, "tile_copy_to_device", dst, src, bytes);
    if (st != TILE_OK || !bytes)
        return st;
    char err[BK_ERR_MAX];
    st = ctx->ops->copy_h2d(ctx->dev, dst, src, bytes, err);
    return st == TILE_OK ? st : bk_fail(ctx, st, "tile_copy_to_device", err);
}

tile_Status tile_copy_to_host(tile_Context *ctx, void *dst, tile_DevPtr src, size_t bytes)
{
    tile_Status st = check_copy(ctx, "tile_copy_to_host", src, dst, bytes);
    if (st != TILE_OK || !bytes)
        return st;
    char err[BK_ERR_MAX];
    st = ctx->ops->copy_d2h(ctx->dev, dst, src, bytes, err);
    return st == TILE_OK ? st : bk_fail(ctx, st, "tile_copy_to_host", err);
}

tile_Status tile_memset(tile_Context *ctx, tile_DevPtr dst, int byte, size_t bytes)
{
    tile_Status st = check_copy(ctx, "tile_memset", dst, "", bytes);
    if (st != TILE_OK || !bytes)
        return st;
    char err[BK_ERR_MAX];
    st = ctx->ops->memset(ctx->dev, dst, byte, bytes, err);
    return st == TILE_OK ? st : bk_fail(ctx, st, "tile_memset", err);
}

tile_Status tile_synchronize(tile_Context *ctx)
{
    tile_Status st = rt_handle_check(ctx, RT_CONTEXT, "tile_synchronize");
    if (st != TILE_OK || (st = rt_refuse_in_capture(ctx, "tile_synchronize")) != TILE_OK)
        return st;
    char err[BK_ERR_MAX];
    st = ctx->ops->sync(ctx->dev, err);
    return st == TILE_OK ? st : bk_fail(ctx, st, "tile_synchronize", err);
}
