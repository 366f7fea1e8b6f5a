/* handles.c: which tile_Context, tile_Module and tile_Kernel handles are alive. Every public
 * entry point looks its handle up here before touching it, so a closed context, a freed
 * module or a kernel of one is an error status, not a use after free: the lookup reads only
 * the registry, never the handle's memory. Freed handle memory waits in a quarantine of the
 * last RT_QUARANTINE blocks before going back to malloc, so a new object does not take a
 * stale handle's address (and so its identity) right away. */
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

int rt_handle_live(const void *h, RtHandleKind kind)
{
    if (!h)
        return 0;
    pthread_mutex_lock(&lock);
    void *v = rtmap_get(&live, (uint64_t)(uintptr_t)h);
    pthread_mutex_unlock(&lock);
    return v == (void *)(uintptr_t)kind;
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

tile_Status rt_handle_check(const void *h, RtHandleKind kind, const char *fn)
{
    if (rt_handle_live(h, kind))
        return TILE_OK;
    if (!h)
        return rt_thread_error(TILE_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", fn,
                               KIND_ARGS[kind]);
    return rt_thread_error(TILE_ERROR_INVALID_ARGUMENT,
                           "%s: %p is not a live %s (%s, or never %s)", fn, h, KIND_NAMES[kind],
                           kind == RT_CONTEXT ? "closed" : "freed",
                           kind == RT_CONTEXT ? "opened" : "loaded");
}
