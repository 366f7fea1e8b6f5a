/* cpu_pool.h: the CPU backend's worker threads. Created once per context; each worker has a
 * large stack because the host code keeps whole tiles on the stack. cpu_pool_run runs
 * fn(user, i) for i in [0, n) on the workers and returns when all are done. */
#ifndef TILE_CPU_POOL_H
#define TILE_CPU_POOL_H
#include <stddef.h>
#include <stdint.h>

typedef struct CpuPool CpuPool;
typedef void (*CpuPoolFn)(void *user, uint64_t index);

CpuPool *cpu_pool_new(int nthreads, size_t stack_bytes, char *err, size_t errlen);
void cpu_pool_free(CpuPool *p);
int cpu_pool_size(const CpuPool *p);
void cpu_pool_run(CpuPool *p, uint64_t n, CpuPoolFn fn, void *user);

#endif
