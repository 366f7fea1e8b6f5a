/* context.c: contexts (a backend plus its device), the last-error message, the log sink, and
 * choosing the backend: TILE_BACKEND_AUTO takes CUDA when an NVIDIA GPU answers, else HIP
 * when an AMD GPU does, else the CPU; the
 * environment variable TILE_BACKEND=cpu|cuda|hip|sim overrides AUTO. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runtime_internal.h"

const BackendOps *rt_backend_ops(tile_Backend kind)
{
    switch (kind) {
    case TILE_BACKEND_CPU: return &rt_backend_cpu;
    case TILE_BACKEND_CUDA: return &rt_backend_cuda;
    case TILE_BACKEND_HIP: return &rt_backend_hip;
    case TILE_BACKEND_SIM: return &rt_backend_sim;
    default: return NULL;
    }
}

const char *tile_backend_name(tile_Backend backend)
{
    const BackendOps *ops = rt_backend_ops(backend);
    return ops ? ops->name : backend == TILE_BACKEND_AUTO ? "auto" : "unknown";
}

static tile_Status open_error_set(tile_Status st, const char *what, const char *why)
{
    return rt_thread_error(st, "%s: %s", what, why);
}

/* AUTO resolved through the environment; TILE_BACKEND_AUTO again means "try CUDA, HIP, then
 * the CPU". */
static tile_Status backend_from_env(tile_Backend *kind)
{
    const char *env = getenv("TILE_BACKEND");
    if (*kind != TILE_BACKEND_AUTO || !env || !*env || !strcmp(env, "auto"))
        return TILE_OK;
    for (tile_Backend b = TILE_BACKEND_CPU; b <= TILE_BACKEND_SIM; b++)
        if (!strcmp(env, tile_backend_name(b))) {
            *kind = b;
            return TILE_OK;
        }
    return rt_thread_error(TILE_ERROR_INVALID_ARGUMENT,
                           "TILE_BACKEND='%s' is not one of auto, cpu, cuda, hip, sim", env);
}

static tile_Status open_device(tile_Backend kind, int device, const BackendOps **ops, void **dev)
{
    char err[BK_ERR_MAX] = "";
    if (kind == TILE_BACKEND_AUTO) {
        if (rt_backend_cuda.open(dev, device, err) == TILE_OK) {
            *ops = &rt_backend_cuda;
            return TILE_OK;
        }
        if (rt_backend_hip.open(dev, device, err) == TILE_OK) {
            *ops = &rt_backend_hip;
            return TILE_OK;
        }
        kind = TILE_BACKEND_CPU;
    }
    *ops = rt_backend_ops(kind);
    if (!*ops)
        return open_error_set(TILE_ERROR_INVALID_ARGUMENT, "tile_context_open",
                              "unknown backend");
    tile_Status st = (*ops)->open(dev, device, err);
    if (st != TILE_OK)
        return open_error_set(st, (*ops)->name, err);
    return TILE_OK;
}

static _Atomic int fork_generation;
static pthread_once_t fork_watch_once = PTHREAD_ONCE_INIT;
static void on_fork_child(void) { fork_generation++; }
static void watch_forks(void) { pthread_atfork(NULL, NULL, on_fork_child); }

int rt_fork_generation(void) { return fork_generation; }

tile_Status rt_context_open(tile_Backend backend, int device, const RtChooser *chooser,
                            tile_Context **out)
{
    pthread_once(&fork_watch_once, watch_forks);
    if (!out)
        return open_error_set(TILE_ERROR_INVALID_ARGUMENT, "tile_context_open", "out is NULL");
    if (device < 0)
        return open_error_set(TILE_ERROR_INVALID_ARGUMENT, "tile_context_open_device",
                              "a device number is 0 or more");
    *out = NULL;
    const BackendOps *ops;
    void *dev;
    tile_Status st = backend_from_env(&backend);
    if (st == TILE_OK)
        st = open_device(backend, device, &ops, &dev);
    if (st != TILE_OK)
        return st;
    tile_Context *ctx = calloc(1, sizeof *ctx);
    if (!ctx || rt_handle_add(ctx, RT_CONTEXT) < 0) {
        free(ctx);
        ops->close(dev);
        return open_error_set(TILE_ERROR_OUT_OF_MEMORY, "tile_context_open", "out of memory");
    }
    ctx->ops = ops;
    ctx->dev = dev;
    ctx->chooser = chooser;
    ctx->fork_gen = rt_fork_generation();
    snprintf(ctx->target, sizeof ctx->target, "%s", ops->target(dev));
    pthread_mutex_init(&ctx->lock, NULL);
    pthread_mutex_init(&ctx->debug_lock, NULL);
    rt_thread_error_clear();
    *out = ctx;
    return TILE_OK;
}

/* Frees what tile_malloc gave out; borrowed memory stays the caller's. */
static void free_allocations(tile_Context *ctx)
{
    char err[BK_ERR_MAX];
    for (size_t i = 0; i < ctx->allocs.len; i++)
        if (!ctx->allocs.items[i].borrowed)
            ctx->ops->free(ctx->dev, ctx->allocs.items[i].base, err);
    rtranges_free(&ctx->allocs);
}

/* Closing NULL, a context closed already, or one a call in progress holds (from a callback
 * of that call) does nothing (tile_error(NULL) says which). */
void tile_context_close(tile_Context *ctx)
{
    if (rt_handle_release(ctx, RT_CONTEXT, "tile_context_close") != TILE_OK)
        return;
    if (ctx->fork_gen != rt_fork_generation())
        return; /* the parent's: its threads and device are not here to stop (its memory stays) */
    char err[BK_ERR_MAX];
    ctx->ops->sync(ctx->dev, err);
    while (ctx->modules)
        rt_module_destroy(ctx->modules);
    rt_debug_release(ctx);
    free_allocations(ctx);
    ctx->ops->close(ctx->dev);
    pthread_mutex_destroy(&ctx->lock);
    pthread_mutex_destroy(&ctx->debug_lock);
    free(ctx->import_path);
    free(ctx->err);
    rt_handle_retire(ctx);
}

/* tile_error(ctx) returns the calling thread's copy of the context's message: ctx->err is
 * freed by the next failure on the context, which may be another thread's. A thread keeps one
 * copy for each of the last ERR_SLOTS contexts it asked about (freed at thread exit). */
enum { ERR_SLOTS = 8 };
typedef struct ErrSlot {
    const tile_Context *ctx;
    char *text;
} ErrSlot;
static pthread_key_t err_key;
static pthread_once_t err_once = PTHREAD_ONCE_INIT;
static int err_key_ok;
static _Thread_local ErrSlot *err_slots;
static _Thread_local unsigned err_next;

static void err_slots_free(void *p)
{
    ErrSlot *slots = p;
    for (int i = 0; i < ERR_SLOTS; i++)
        free(slots[i].text);
    free(slots);
}

static void err_key_init(void) { err_key_ok = pthread_key_create(&err_key, err_slots_free) == 0; }

static ErrSlot *err_slot(const tile_Context *ctx)
{
    if (!err_slots) {
        pthread_once(&err_once, err_key_init);
        if (!err_key_ok || !(err_slots = calloc(ERR_SLOTS, sizeof *err_slots)))
            return NULL;
        pthread_setspecific(err_key, err_slots);
    }
    for (int i = 0; i < ERR_SLOTS; i++)
        if (err_slots[i].ctx == ctx)
            return &err_slots[i];
    ErrSlot *s = &err_slots[err_next++ % ERR_SLOTS];
    free(s->text);
    *s = (ErrSlot){ ctx, NULL };
    return s;
}

const char *tile_error(const tile_Context *ctx)
{
    if (!ctx)
        return rt_thread_error_text();
    if (!rt_handle_live(ctx, RT_CONTEXT))
        return "tile_error: not a live tile_Context (closed, or never opened)";
    tile_Context *c = (tile_Context *)ctx;
    ErrSlot *s = err_slot(ctx);
    pthread_mutex_lock(&c->lock);
    /* without memory for a copy: the shared text (another thread's failure may free it) */
    const char *out = c->err ? c->err : "";
    if (s && c->err && (!s->text || strcmp(s->text, c->err))) {
        free(s->text);
        s->text = strdup(c->err);
    }
    if (s && c->err && s->text)
        out = s->text;
    pthread_mutex_unlock(&c->lock);
    return out;
}

tile_Status rt_error(tile_Context *ctx, tile_Status st, const char *fmt, ...)
{
    va_list ap;
    char *msg = NULL;
    va_start(ap, fmt);
    if (vasprintf(&msg, fmt, ap) < 0)
        msg = NULL;
    va_end(ap);
    pthread_mutex_lock(&ctx->lock);
    free(ctx->err);
    ctx->err = msg; /* NULL (out of memory) reads as "" */
    pthread_mutex_unlock(&ctx->lock);
    return st;
}

void rt_log(tile_Context *ctx, const char *fmt, ...)
{
    if (!ctx->log)
        return;
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    ctx->log(ctx->log_user, buf);
}

void tile_set_log(tile_Context *ctx, tile_LogFn fn, void *user)
{
    RtCall call;
    if (rt_call_enter(ctx, RT_CONTEXT, "tile_set_log", &call) != TILE_OK)
        return;
    ctx->log = fn;
    ctx->log_user = user;
    rt_env_warnings_log(ctx); /* what opening it found wrong in the environment */
    rt_call_leave(&call);
}

tile_Backend tile_backend(const tile_Context *ctx)
{
    return rt_handle_live(ctx, RT_CONTEXT) ? ctx->ops->kind : TILE_BACKEND_AUTO;
}

const char *tile_device_name(const tile_Context *ctx)
{
    return rt_handle_live(ctx, RT_CONTEXT) ? ctx->ops->device_name(ctx->dev) : "";
}

const char *tile_device_arch(const tile_Context *ctx)
{
    return rt_handle_live(ctx, RT_CONTEXT) ? ctx->ops->arch(ctx->dev) : "";
}

const char *tile_version(void) { return TILE_VERSION; }
