/* stats.c: process-wide counters (compiles, disk cache hits and writes, JITDylibs created) and
 * the compile hook that tests use to feed hand-made code to the runtime without the compiler. */
#include <stdatomic.h>
#include "runtime_internal.h"

static atomic_long n_compiles, n_disk_hits, n_disk_writes, n_jit_dylibs;
static _Atomic(RtCompileFn) compile_hook;

RtStats rt_stats(void)
{
    RtStats s = { atomic_load(&n_compiles), atomic_load(&n_disk_hits),
                  atomic_load(&n_disk_writes), atomic_load(&n_jit_dylibs) };
    return s;
}

void rt_count_compile(void) { atomic_fetch_add(&n_compiles, 1); }
void rt_count_disk_hit(void) { atomic_fetch_add(&n_disk_hits, 1); }
void rt_count_disk_write(void) { atomic_fetch_add(&n_disk_writes, 1); }
void rt_count_jit_dylib(void) { atomic_fetch_add(&n_jit_dylibs, 1); }

void rt_set_compile_hook(RtCompileFn fn) { atomic_store(&compile_hook, fn); }

RtCompileFn rt_compile_fn(void)
{
    RtCompileFn fn = atomic_load(&compile_hook);
    return fn ? fn : tc_compile;
}
