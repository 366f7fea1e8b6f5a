/* cpu_pool.c: a fixed pool of worker threads for CPU launches. A launch bumps a generation
 * counter and wakes every worker; they take chunks of program indices from an atomic counter
 * until none are left, and the last one to finish wakes the launching thread. Launches from
 * several host threads run one after another. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cpu_pool.h"

struct CpuPool {
    pthread_t *threads;
    int n;
    pthread_mutex_t run_lock; /* one launch at a time */
    pthread_mutex_t lock;
    pthread_cond_t wake, done;
    unsigned long gen;
    int stop, active;
    CpuPoolFn fn;
    void *user;
    uint64_t total, chunk;
    atomic_uint_fast64_t next;
};

static void work(CpuPool *p)
{
    for (;;) {
        uint64_t i = atomic_fetch_add(&p->next, p->chunk);
        if (i >= p->total)
            return;
        uint64_t end = i + p->chunk < p->total ? i + p->chunk : p->total;
        for (; i < end; i++)
            p->fn(p->user, i);
    }
}

static void *worker(void *arg)
{
    CpuPool *p = arg;
    unsigned long seen = 0;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (!p->stop && p->gen == seen)
            pthread_cond_wait(&p->wake, &p->lock);
        if (p->stop)
            break;
        seen = p->gen;
        pthread_mutex_unlock(&p->lock);
        work(p);
        pthread_mutex_lock(&p->lock);
        if (--p->active == 0)
            pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

static void stop_workers(CpuPool *p, int started)
{
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < started; i++)
        pthread_join(p->threads[i], NULL);
}

static int start_workers(CpuPool *p, size_t stack_bytes, char *err, size_t errlen)
{
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    int rc = pthread_attr_setstacksize(&attr, stack_bytes);
    int started = 0;
    while (!rc && started < p->n && !(rc = pthread_create(&p->threads[started], &attr, worker, p)))
        started++;
    pthread_attr_destroy(&attr);
    if (rc) {
        snprintf(err, errlen, "cannot start CPU worker threads: %s", strerror(rc));
        stop_workers(p, started);
    }
    return rc ? -1 : 0;
}

CpuPool *cpu_pool_new(int nthreads, size_t stack_bytes, char *err, size_t errlen)
{
    CpuPool *p = calloc(1, sizeof *p);
    if (p)
        p->threads = calloc((size_t)nthreads, sizeof *p->threads);
    if (!p || !p->threads) {
        free(p);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    p->n = nthreads;
    pthread_mutex_init(&p->run_lock, NULL);
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->done, NULL);
    if (start_workers(p, stack_bytes, err, errlen) < 0) {
        p->n = 0;
        cpu_pool_free(p);
        return NULL;
    }
    return p;
}

void cpu_pool_free(CpuPool *p)
{
    if (!p)
        return;
    stop_workers(p, p->n);
    pthread_mutex_destroy(&p->run_lock);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->wake);
    pthread_cond_destroy(&p->done);
    free(p->threads);
    free(p);
}

int cpu_pool_size(const CpuPool *p) { return p->n; }

void cpu_pool_run(CpuPool *p, uint64_t n, CpuPoolFn fn, void *user)
{
    pthread_mutex_lock(&p->run_lock);
    pthread_mutex_lock(&p->lock);
    p->fn = fn;
    p->user = user;
    p->total = n;
    p->chunk = n / ((uint64_t)p->n * 8) + 1;
    atomic_store(&p->next, 0);
    p->active = p->n;
    p->gen++;
    pthread_cond_broadcast(&p->wake);
    while (p->active)
        pthread_cond_wait(&p->done, &p->lock);
    pthread_mutex_unlock(&p->lock);
    pthread_mutex_unlock(&p->run_lock);
}
