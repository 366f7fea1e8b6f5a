/* stream.c: the stream a context launches on (tile_set_stream) and what a stream capture
 * (a CUDA graph being recorded) forbids: anything that synchronizes, copies or times. */
#include "runtime_internal.h"

tile_Status tile_set_stream(tile_Context *ctx, void *stream)
{
    tile_Status st = rt_handle_check(ctx, RT_CONTEXT, "tile_set_stream");
    if (st != TILE_OK)
        return st;
    if (!ctx->ops->set_stream)
        return stream ? rt_error(ctx, TILE_ERROR_UNSUPPORTED,
                                 "tile_set_stream: the %s backend has only the default stream "
                                 "(NULL)", ctx->ops->name)
                      : TILE_OK;
    char err[BK_ERR_MAX];
    st = ctx->ops->set_stream(ctx->dev, stream, err);
    return st == TILE_OK ? st : rt_error(ctx, st, "tile_set_stream: %s", err);
}

int rt_capturing(tile_Context *ctx)
{
    return ctx->ops->capturing && ctx->ops->capturing(ctx->dev);
}

tile_Status rt_refuse_in_capture(tile_Context *ctx, const char *what)
{
    if (!rt_capturing(ctx))
        return TILE_OK;
    return rt_error(ctx, TILE_ERROR_INVALID_ARGUMENT,
                    "%s: the context's stream is being captured into a graph, where nothing "
                    "may synchronize, copy or time (end the capture first)", what);
}
