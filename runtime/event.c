/* event.c: timing on a context's launch stream (tile_event_*). GPU backends record device
 * events on the stream; where a backend has none (CPU, sim: launches finish before
 * tile_launch returns) an event holds the host's monotonic clock at its recording. An event
 * is a live handle of its own: a destroyed one, or one whose context was closed, is an error
 * status, never a use of freed memory. */
#include <stdlib.h>
#include <time.h>
#include "runtime_internal.h"

struct tile_Event {
    tile_Context *ctx;
    void *dev_event; /* the backend's event, NULL where it has none */
    double host_ms;  /* the host clock at recording, without a backend event */
    int recorded;
};

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

/* TILE_OK when e is a live event of a live context. */
static tile_Status event_check(const tile_Event *e, const char *fn)
{
    tile_Status st = rt_handle_check(e, RT_EVENT, fn);
    if (st == TILE_OK && !rt_handle_live(e->ctx, RT_CONTEXT))
        st = rt_thread_error(TILE_ERROR_INVALID_ARGUMENT,
                             "%s: the event's context was closed", fn);
    return st;
}

tile_Status tile_event_create(tile_Context *ctx, tile_Event **out)
{
    tile_Status st = rt_handle_check(ctx, RT_CONTEXT, "tile_event_create");
    if (st != TILE_OK)
        return st;
    if (!out)
        return rt_error(ctx, TILE_ERROR_INVALID_ARGUMENT, "tile_event_create: out is NULL");
    *out = NULL;
    tile_Event *e = calloc(1, sizeof *e);
    if (!e)
        return rt_error(ctx, TILE_ERROR_OUT_OF_MEMORY, "tile_event_create: out of memory");
    e->ctx = ctx;
    char err[BK_ERR_MAX];
    if (ctx->ops->event_create && (st = ctx->ops->event_create(ctx->dev, &e->dev_event, err))) {
        free(e);
        return rt_error(ctx, st, "tile_event_create: %s", err);
    }
    if (rt_handle_add(e, RT_EVENT)) {
        if (e->dev_event)
            ctx->ops->event_destroy(ctx->dev, e->dev_event);
        free(e);
        return rt_error(ctx, TILE_ERROR_OUT_OF_MEMORY, "tile_event_create: out of memory");
    }
    *out = e;
    return TILE_OK;
}

tile_Status tile_event_record(tile_Event *e)
{
    tile_Status st = event_check(e, "tile_event_record");
    if (st != TILE_OK)
        return st;
    tile_Context *ctx = e->ctx;
    char err[BK_ERR_MAX];
    if (e->dev_event && (st = ctx->ops->event_record(ctx->dev, e->dev_event, err)))
        return rt_error(ctx, st, "tile_event_record: %s", err);
    e->host_ms = now_ms();
    e->recorded = 1;
    return TILE_OK;
}

tile_Status tile_event_elapsed(tile_Event *start, tile_Event *end, float *ms)
{
    tile_Status st = event_check(start, "tile_event_elapsed");
    if (st == TILE_OK)
        st = event_check(end, "tile_event_elapsed");
    if (st != TILE_OK)
        return st;
    tile_Context *ctx = start->ctx;
    if (end->ctx != ctx)
        return rt_error(ctx, TILE_ERROR_INVALID_ARGUMENT,
                        "tile_event_elapsed: the two events belong to different contexts");
    if (!ms)
        return rt_error(ctx, TILE_ERROR_INVALID_ARGUMENT, "tile_event_elapsed: ms is NULL");
    if (!start->recorded || !end->recorded)
        return rt_error(ctx, TILE_ERROR_INVALID_ARGUMENT,
                        "tile_event_elapsed: the %s event was never recorded",
                        start->recorded ? "end" : "start");
    if ((st = rt_refuse_in_capture(ctx, "tile_event_elapsed")) != TILE_OK)
        return st;
    char err[BK_ERR_MAX];
    if (start->dev_event) {
        st = ctx->ops->event_elapsed(ctx->dev, start->dev_event, end->dev_event, ms, err);
        if (st != TILE_OK)
            return rt_error(ctx, st, "tile_event_elapsed: %s", err);
        return TILE_OK;
    }
    *ms = (float)(end->host_ms - start->host_ms);
    return TILE_OK;
}

void tile_event_destroy(tile_Event *e)
{
    if (rt_handle_check(e, RT_EVENT, "tile_event_destroy") != TILE_OK)
        return; /* NULL, destroyed already, or not an event: tile_error(NULL) says which */
    rt_handle_remove(e);
    if (e->dev_event && rt_handle_live(e->ctx, RT_CONTEXT))
        e->ctx->ops->event_destroy(e->ctx->dev, e->dev_event);
    rt_handle_retire(e);
}
