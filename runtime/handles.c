/* handles.c: which tile_Context, tile_Module and tile_Kernel handles are alive. Every public
 * entry point looks its handle up here before touching it, so a closed context, a freed
 * module or a kernel of one is an error status, not a use after free: the lookup reads only
 * the registry, never the handle's memory. Freed handle memory waits in a quarantine of the
 * last RT_QUARANTINE blocks before going back to malloc, so a new object does not take a
 * stale handle's address (and so its identity) right away. Calls that run the caller's
 * callbacks count themselves on their context and module here, so that a callback cannot
 * close or free what the call under it still uses. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include "runtime_internal.h"

enum { RT_QUARANTINE = 4096 };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static RtMap live;                      /* handle address -> RtHandleKind */
static void *quarantine[RT_QUARANTINE]; /* freed blocks, oldest at next */
static size_t next;

/* The last failure of this thread that had no live context to hold its message. */
static _Thread_local char thread_error[BK_ERR_MAX + 256];

tile_Status rt_thread_error(tile_Status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(thread_error, sizeof thread_error, fmt, ap);
    va_end(ap);
    return st;
}

const char *rt_thread_error_text(void) { return thread_error; }
void rt_thread_error_clear(void) { thread_error[0] = 0; }

int rt_handle_add(const void *h, RtHandleKind kind)
{
    pthread_mutex_lock(&lock);
    int bad = rtmap_put(&live, (uint64_t)(uintptr_t)h, (void *)(uintptr_t)kind);
    pthread_mutex_unlock(&lock);
    return bad;
}

void rt_handle_remove(const void *h)
{
    pthread_mutex_lock(&lock);
    rtmap_remove(&live, (uint64_t)(uintptr_t)h);
    pthread_mutex_unlock(&lock);
}

static int live_locked(const void *h, RtHandleKind kind)
{
    return h && rtmap_get(&live, (uint64_t)(uintptr_t)h) == (void *)(uintptr_t)kind;
}

int rt_handle_live(const void *h, RtHandleKind kind)
{
    if (!h)
        return 0;
    pthread_mutex_lock(&lock);
    int yes = live_locked(h, kind);
    pthread_mutex_unlock(&lock);
    return yes;
}

void rt_handle_retire(void *block)
{
    pthread_mutex_lock(&lock);
    void *oldest = quarantine[next];
    quarantine[next] = block;
    next = (next + 1) % RT_QUARANTINE;
    pthread_mutex_unlock(&lock);
    free(oldest);
}

static const char *const KIND_NAMES[] = { "", "tile_Context", "tile_Module", "tile_Kernel",
                                           "tile_Event" };
static const char *const KIND_ARGS[] = { "", "ctx", "module", "kernel", "event" };

static tile_Status not_live(const void *h, RtHandleKind kind, const char *fn)
{
    if (!h)
        return rt_thread_error(TILE_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", fn,
                               KIND_ARGS[kind]);
    return rt_thread_error(TILE_ERROR_INVALID_ARGUMENT,
                           "%s: %p is not a live %s (%s, or never %s)", fn, h, KIND_NAMES[kind],
                           kind == RT_CONTEXT ? "closed" : "freed",
                           kind == RT_CONTEXT ? "opened" : "loaded");
}

/* The context a live context, module or kernel belongs to (events keep theirs privately). */
static const tile_Context *owner(const void *h, RtHandleKind kind)
{
    switch (kind) {
    case RT_CONTEXT: return h;
    case RT_MODULE: return ((const tile_Module *)h)->ctx;
    case RT_KERNEL: return ((const tile_Kernel *)h)->mod->ctx;
    default: return NULL;
    }
}

static int inherited(const tile_Context *ctx) { return ctx && ctx->fork_gen != rt_fork_generation(); }

static tile_Status inherited_error(const char *fn)
{
    return rt_thread_error(TILE_ERROR_INVALID_ARGUMENT,
                           "%s: refused: this context was opened before a fork() of this process; "
                           "its worker threads and device state stay in the parent: open a new "
                           "context in this process", fn);
}

tile_Status rt_handle_check(const void *h, RtHandleKind kind, const char *fn)
{
    if (!rt_handle_live(h, kind))
        return not_live(h, kind, fn);
    return inherited(owner(h, kind)) ? inherited_error(fn) : TILE_OK;
}

/* ---- calls in progress ---- */

static void hold(int *calls, const char **call_fn, const char *fn, int delta)
{
    if (!*calls)
        *call_fn = fn;
    *calls += delta;
    if (!*calls)
        *call_fn = NULL;
}

/* This thread's calls in progress, innermost last (a launch from a log sink nests). */
enum { THREAD_CALLS_MAX = 16 };
static _Thread_local struct {
    const tile_Context *ctx;
    const char *fn;
} thread_calls[THREAD_CALLS_MAX];
static _Thread_local int nthread_calls;

const char *rt_call_on_this_thread(const tile_Context *ctx)
{
    for (int i = 0; i < nthread_calls && i < THREAD_CALLS_MAX; i++)
        if (thread_calls[i].ctx == ctx)
            return thread_calls[i].fn;
    return nthread_calls > THREAD_CALLS_MAX ? "a call" : NULL; /* nested past the record */
}

tile_Status rt_call_enter(const void *h, RtHandleKind kind, const char *fn, RtCall *call)
{
    *call = (RtCall){ NULL, NULL };
    int from_parent = 0;
    pthread_mutex_lock(&lock);
    int ok = live_locked(h, kind) && kind != RT_EVENT;
    if (ok) { /* h is live, so its memory is not freed while the lock is held */
        tile_Module *mod = kind == RT_KERNEL   ? ((const tile_Kernel *)h)->mod
                           : kind == RT_MODULE ? (tile_Module *)h
                                               : NULL;
        tile_Context *ctx = mod ? mod->ctx : (tile_Context *)h;
        ok = (!mod || live_locked(mod, RT_MODULE)) && live_locked(ctx, RT_CONTEXT);
        from_parent = ok && inherited(ctx);
        ok = ok && !from_parent;
        if (ok) {
            hold(&ctx->calls, &ctx->call_fn, fn, 1);
            if (mod)
                hold(&mod->calls, &mod->call_fn, fn, 1);
            *call = (RtCall){ ctx, mod };
        }
    }
    pthread_mutex_unlock(&lock);
    if (ok && nthread_calls < THREAD_CALLS_MAX)
        thread_calls[nthread_calls].ctx = call->ctx, thread_calls[nthread_calls].fn = fn;
    nthread_calls += ok;
    if (from_parent)
        return inherited_error(fn);
    return ok ? TILE_OK : not_live(h, kind, fn);
}

void rt_call_leave(const RtCall *call)
{
    if (!call->ctx)
        return;
    nthread_calls--;
    pthread_mutex_lock(&lock);
    hold(&call->ctx->calls, &call->ctx->call_fn, NULL, -1);
    if (call->mod)
        hold(&call->mod->calls, &call->mod->call_fn, NULL, -1);
    pthread_mutex_unlock(&lock);
}

tile_Status rt_handle_release(const void *h, RtHandleKind kind, const char *fn)
{
    const char *busy = NULL;
    pthread_mutex_lock(&lock);
    int ok = live_locked(h, kind) && (kind == RT_CONTEXT || kind == RT_MODULE);
    if (ok) {
        busy = kind == RT_CONTEXT ? ((const tile_Context *)h)->call_fn
                                  : ((const tile_Module *)h)->call_fn;
        if (!busy)
            rtmap_remove(&live, (uint64_t)(uintptr_t)h);
    }
    pthread_mutex_unlock(&lock);
    if (!ok)
        return not_live(h, kind, fn);
    if (busy)
        return rt_thread_error(TILE_ERROR_INVALID_ARGUMENT,
                               "%s: refused: %s is in progress on this %s (neither a log "
                               "sink or tuning progress callback of that call nor another "
                               "thread may %s it while the call uses it); %s it after that "
                               "call returns", fn, busy, kind == RT_CONTEXT ? "context" : "module",
                               kind == RT_CONTEXT ? "close" : "free",
                               kind == RT_CONTEXT ? "close" : "free");
    return TILE_OK;
}
