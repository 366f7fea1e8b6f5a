/* tune_compile.c: compiling a tuning's configurations in parallel. A pool of threads takes
 * jobs from a shared counter; each job compiles with its own arena (tc_compile keeps its
 * LLVM state per call) and finalizes to a loadable image (rt_spec_image). Loading happens
 * afterwards on the calling thread. TILE_TUNE_THREADS overrides the thread count. A deadline
 * (the tuning's --budget) stops new compiles, so the budget bounds this phase too. */
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "tune.h"

typedef struct Pool {
    tile_Kernel *k;
    const unsigned char *div;
    const char *target;
    CompileJob *jobs;
    int n;
    double deadline_ms;
    atomic_int next, finished;
    pthread_mutex_t lock; /* serializes `done` */
    void (*done)(void *user, int finished);
    void *user;
} Pool;

static double thread_cpu_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static void job_run(Pool *p, CompileJob *j)
{
    double w0 = tune_now_ms(), c0 = thread_cpu_ms();
    if (p->deadline_ms > 0 && w0 > p->deadline_ms) {
        j->skipped = 1;
        j->st = TILE_ERROR_INVALID_ARGUMENT;
        j->reason = "past the time budget (not compiled)";
        return;
    }
    j->arena = arena_new();
    j->st = j->arena ? rt_spec_image(p->k, j->consts, j->nconsts, p->div, p->target,
                                     j->arena, &j->image, &j->reason)
                     : TILE_ERROR_OUT_OF_MEMORY;
    if (!j->arena)
        j->reason = "out of memory";
    j->wall_ms = tune_now_ms() - w0;
    j->cpu_ms = thread_cpu_ms() - c0;
}

static void *worker(void *arg)
{
    Pool *p = arg;
    const tile_Kernel *was = tune_thread_swap(p->k); /* its `done` calls are the tuning's */
    for (int i; (i = atomic_fetch_add(&p->next, 1)) < p->n;) {
        job_run(p, &p->jobs[i]);
        int f = atomic_fetch_add(&p->finished, 1) + 1;
        if (p->done) {
            pthread_mutex_lock(&p->lock);
            p->done(p->user, f);
            pthread_mutex_unlock(&p->lock);
        }
    }
    tune_thread_swap(was);
    return NULL;
}

static int default_threads(tile_Context *ctx)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    long n = tune_env_int(ctx, "TILE_TUNE_THREADS", 1, 256, cores, "one per CPU core");
    return n < 1 ? 1 : n > 256 ? 256 : (int)n;
}

int tune_compile_all(tile_Kernel *k, const unsigned char *div, const char *target,
                     CompileJob *jobs, int n, int threads, double deadline_ms,
                     void (*done)(void *user, int finished), void *user)
{
    Pool p = { .k = k, .div = div, .target = target, .jobs = jobs, .n = n,
               .deadline_ms = deadline_ms, .done = done, .user = user };
    pthread_mutex_init(&p.lock, NULL);
    if (threads <= 0)
        threads = default_threads(k->mod->ctx);
    if (threads > n)
        threads = n;
    pthread_t tid[256];
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, RT_STACK_BYTES); /* compiles run in place (bigstack.c) */
    int started = 0;
    for (int i = 1; i < threads; i++)
        started += pthread_create(&tid[started], &attr, worker, &p) == 0;
    pthread_attr_destroy(&attr);
    worker(&p); /* the calling thread works too */
    for (int i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    pthread_mutex_destroy(&p.lock);
    return started + 1;
}
