/* memory.c: device memory through the context's backend. The context remembers every live
 * allocation, so tile_free of a foreign or freed pointer is an error rather than a crash, and
 * tile_context_close frees what is left. */
#include <stdint.h>
#include "runtime_internal.h"

static tile_Status bk_fail(tile_Context *ctx, tile_Status st, const char *what, const char *err)
{
    return rt_error(ctx, st, "%s: %s", what, err);
}

tile_Status tile_malloc(tile_Context *ctx, size_t bytes, tile_DevPtr *out)
{
    if (!ctx || !out)
        return ctx ? rt_error(ctx, TILE_ERROR_INVALID_ARGUMENT, "tile_malloc: out is NULL")
                   : TILE_ERROR_INVALID_ARGUMENT;
    char err[BK_ERR_MAX];
    *out = 0;
    if (bytes == 0)
        bytes = 1; /* a distinct, freeable address even for empty buffers */
    tile_Status st = ctx->ops->malloc(ctx->dev, bytes, out, err);
    if (st != TILE_OK)
        return bk_fail(ctx, st, "tile_malloc", err);
    pthread_mutex_lock(&ctx->lock);
    int bad = rtmap_put(&ctx->allocs, *out, (void *)(uintptr_t)bytes);
    pthread_mutex_unlock(&ctx->lock);
    if (bad) {
        ctx->ops->free(ctx->dev, *out, err);
        *out = 0;
        return rt_error(ctx, TILE_ERROR_OUT_OF_MEMORY, "tile_malloc: out of host memory");
    }
    return TILE_OK;
}

tile_Status tile_free(tile_Context *ctx, tile_DevPtr ptr)
{
    if (!ctx)
        return TILE_ERROR_INVALID_ARGUMENT;
    if (!ptr)
        return TILE_OK;
    pthread_mutex_lock(&ctx->lock);
    void *known = rtmap_remove(&ctx->allocs, ptr);
    pthread_mutex_unlock(&ctx->lock);
    if (!known)
        return rt_error(ctx, TILE_ERROR_INVALID_ARGUMENT,
                        "tile_free: 0x%llx was not allocated by this context (or was freed)",
                        (unsigned long long)ptr);
    char err[BK_ERR_MAX];
    tile_Status st = ctx->ops->free(ctx->dev, ptr, err);
    return st == TILE_OK ? st : bk_fail(ctx, st, "tile_free", err);
}

static tile_Status check_copy(tile_Context *ctx, const char *what, uint64_t dev,
                              const void *host, size_t bytes)
{
    if (!ctx)
        return TILE_ERROR_INVALID_ARGUMENT;
    if (bytes && (!dev || !host))
        return rt_error(ctx, TILE_ERROR_INVALID_ARGUMENT, "%s: %s pointer is NULL", what,
                        dev ? "host" : "device");
    return TILE_OK;
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
    if (!ctx)
        return TILE_ERROR_INVALID_ARGUMENT;
    char err[BK_ERR_MAX];
    tile_Status st = ctx->ops->sync(ctx->dev, err);
    return st == TILE_OK ? st : bk_fail(ctx, st, "tile_synchronize", err);
}
