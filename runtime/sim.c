/* sim.c: the SIMT emulator's scheduler (sim.h). Each worker thread keeps its own state
 * (thread-local: stacks, shared memory, shadow), reused from one program instance to the
 * next. A program's threads run in id order, each until it waits at a sync point or returns;
 * when none can run, warps whose 32 lanes all wait at the same collective complete it, else a
 * barrier that every thread waits at completes and starts a new race interval. Any other
 * standstill is a divergence error. Errors abandon the instance: its coroutines are never
 * resumed and their stacks are reset for the next one. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sim_int.h"

static pthread_key_t state_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static int key_ok;
static _Thread_local SimState *tls_state;

/* ---- errors ---- */

int sim_fail(SimState *s, const char *fmt, ...)
{
    if (s->failed)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->err, sizeof s->err, fmt, ap);
    va_end(ap);
    s->failed = 1;
    return -1;
}

/* The warp of the program this worker runs (set by program_begin). */
static _Thread_local int current_warp = 32;

int sim_warp_size(void) { return current_warp; }

const char *sim_who(int tid, char buf[48])
{
    snprintf(buf, 48, "thread %d (warp %d, lane %d)", tid, tid / current_warp, tid % current_warp);
    return buf;
}

/* ---- the state of this worker ---- */

static void state_free(void *p)
{
    SimState *s = p;
    if (!s)
        return;
    for (int i = 0; s->threads && i < SIM_MAX_THREADS; i++) {
        sim_fiber_stack_free(&s->threads[i].fiber);
        free(s->threads[i].copies);
    }
    free(s->threads);
    free(s->smem);
    sim_shadow_free(s);
    sim_fiber_stack_free(&s->sched);
    free(s);
}

static void key_init(void) { key_ok = pthread_key_create(&state_key, state_free) == 0; }

static SimState *state_get(void)
{
    if (tls_state)
        return tls_state;
    pthread_once(&key_once, key_init);
    SimState *s = calloc(1, sizeof *s);
    if (s)
        s->threads = calloc(SIM_MAX_THREADS, sizeof *s->threads);
    if (!s || !s->threads) {
        free(s);
        return NULL;
    }
    if (key_ok)
        pthread_setspecific(state_key, s); /* freed at thread exit */
    return tls_state = s;
}

void sim_release(void)
{
    if (!tls_state)
        return;
    if (key_ok)
        pthread_setspecific(state_key, NULL);
    state_free(tls_state);
    tls_state = NULL;
}

/* ---- one program instance ---- */

static void thread_main(void *arg)
{
    SimThread *t = arg;
    SimState *s = t->s;
    sim_fiber_started(&s->sched);
    s->prog->fn(s->prog->args, s->prog->grid, t);
    if (sim_shadow_recheck(t) < 0)
        sim_abandon(t);
    t->wait = SW_DONE;
    sim_fiber_exit(&t->fiber, &s->sched);
}

void sim_block(SimThread *t, SimWait w)
{
    if (sim_shadow_recheck(t) < 0)
        sim_abandon(t);
    t->wait = w;
    sim_fiber_switch(&t->fiber, &t->s->sched);
}

_Noreturn void sim_abandon(SimThread *t)
{
    for (;;)
        sim_fiber_exit(&t->fiber, &t->s->sched);
}

static int smem_reserve(SimState *s, size_t bytes)
{
    if (bytes > s->smem_cap || !s->smem) {
        size_t cap = bytes ? (bytes + 4095) / 4096 * 4096 : 4096;
        unsigned char *m = aligned_alloc(64, cap);
        if (!m)
            return -1;
        free(s->smem);
        s->smem = m;
        s->smem_cap = cap;
    }
    s->smem_size = bytes;
    memset(s->smem, 0xff, bytes); /* undefined at start: all-ones bytes read as NaN or -1 */
    return sim_shadow_reserve(s, bytes);
}

static int thread_setup(SimState *s, SimThread *t, int id)
{
    if (!t->fiber.map && sim_fiber_stack_new(&t->fiber, SIM_STACK_BYTES) != 0)
        return sim_fail(s, "cannot map a %d KiB stack for simulated thread %d",
                        SIM_STACK_BYTES >> 10, id);
    t->s = s;
    t->id = id;
    t->wait = SW_RUN;
    t->recheck.active = 0;
    t->ncopies = 0;
    t->committed = 0;
    if (sim_fiber_prepare(&t->fiber, thread_main, t) != 0)
        return sim_fail(s, "cannot start simulated thread %d", id);
    return 0;
}

static int program_begin(SimState *s, const SimProgram *p)
{
    s->failed = 0;
    s->err[0] = 0;
    s->prog = p;
    s->nthreads = p->threads;
    s->warp = current_warp = p->warp ? p->warp : 32;
    if (smem_reserve(s, (size_t)p->smem_bytes) != 0)
        return sim_fail(s, "out of memory for %d bytes of shared memory", p->smem_bytes);
    sim_shadow_next_epoch(s);
    for (int i = 0; i < p->threads; i++)
        if (thread_setup(s, &s->threads[i], i) != 0)
            return -1;
    return 0;
}

static void program_end(SimState *s)
{
    for (int i = 0; i < s->nthreads; i++) {
        SimThread *t = &s->threads[i];
        sim_async_reset(t);
        if (t->wait != SW_DONE && t->fiber.map)
            sim_fiber_forget(&t->fiber);
    }
    s->prog = NULL;
}

/* ---- completing sync points ---- */

static int is_collective(SimWait w) { return w >= SW_SHFL_XOR && w <= SW_LDMATRIX; }

static const char *wait_name(SimWait w)
{
    static const char *names[] = {
        [SW_RUN] = "running", [SW_BARRIER] = "waits at a barrier",
        [SW_SHFL_XOR] = "waits at shfl.xor", [SW_SHFL_IDX] = "waits at shfl.idx",
        [SW_MMA] = "waits at mma.sync", [SW_MFMA] = "waits at mfma",
        [SW_LDMATRIX] = "waits at ldmatrix",
        [SW_DONE] = "has returned",
    };
    return names[w];
}

static int divergent(SimState *s, const SimThread *a, const SimThread *b)
{
    char wa[48], wb[48];
    return sim_fail(s, "divergent barrier/shuffle: %s %s while %s %s", sim_who(a->id, wa),
                    wait_name(a->wait), sim_who(b->id, wb), wait_name(b->wait));
}

/* 1: the warp's collective completed; 0: none waited; -1: divergence or an error in it. */
static int resolve_warp(SimState *s, SimThread *lanes)
{
    const SimThread *first = NULL;
    for (int l = 0; l < s->warp; l++)
        if (is_collective(lanes[l].wait)) {
            first = &lanes[l];
            break;
        }
    if (!first)
        return 0;
    for (int l = 0; l < s->warp; l++)
        if (lanes[l].wait != first->wait)
            return divergent(s, first, &lanes[l]);
    if (sim_warp_complete(s, lanes) != 0)
        return -1;
    for (int l = 0; l < s->warp; l++)
        lanes[l].wait = SW_RUN;
    return 1;
}

/* 1: a barrier completed; 0: every thread returned; -1: divergence. */
static int resolve_barrier(SimState *s)
{
    const SimThread *waiting = NULL, *other = NULL;
    for (int i = 0; i < s->nthreads; i++) {
        const SimThread *t = &s->threads[i];
        if (t->wait == SW_BARRIER && !waiting)
            waiting = t;
        else if (t->wait != SW_BARRIER && !other)
            other = t;
    }
    if (!waiting)
        return 0;
    if (other)
        return divergent(s, waiting, other);
    sim_shadow_next_epoch(s);
    for (int i = 0; i < s->nthreads; i++)
        s->threads[i].wait = SW_RUN;
    return 1;
}

static int resolve(SimState *s)
{
    int progress = 0;
    for (int w = 0; w < s->nthreads / s->warp; w++) {
        int r = resolve_warp(s, &s->threads[w * s->warp]);
        if (r < 0)
            return -1;
        progress |= r;
    }
    return progress ? 1 : resolve_barrier(s);
}

static int schedule(SimState *s)
{
    for (;;) {
        for (int i = 0; i < s->nthreads && !s->failed; i++)
            if (s->threads[i].wait == SW_RUN)
                sim_fiber_switch(&s->sched, &s->threads[i].fiber);
        if (s->failed)
            return -1;
        int r = resolve(s);
        if (r <= 0)
            return r;
    }
}

static int check_program(const SimProgram *p, char *err, size_t errlen)
{
    int warp = p && p->warp ? p->warp : 32;
    const char *why = !p || !p->fn ? "no kernel entry"
                    : warp != 32 && warp != 64 ? "warps have 32 or 64 lanes"
                    : p->threads < warp || p->threads > SIM_MAX_THREADS || p->threads % warp
                        ? "threads must be a multiple of the warp (32 or 64) up to 1024"
                    : p->smem_bytes < 0 ? "negative shared-memory size" : NULL;
    if (why)
        snprintf(err, errlen, "sim: %s (threads %d)", why, p ? p->threads : 0);
    return why ? -1 : 0;
}

int sim_run(const SimProgram *p, char *err, size_t errlen)
{
    if (check_program(p, err, errlen) != 0)
        return -1;
    SimState *s = state_get();
    if (!s) {
        snprintf(err, errlen, "sim: out of memory");
        return -1;
    }
    int rc = program_begin(s, p) == 0 ? schedule(s) : -1;
    program_end(s);
    if (rc != 0)
        snprintf(err, errlen, "program (%d,%d,%d): %s", p->grid[0], p->grid[1], p->grid[2],
                 s->err);
    return rc;
}
