/* cpu_jit.h: what the two host backends share (backend_cpu.c runs host-target code directly,
 * backend_sim.c runs sim-target code through the SIMT emulator): the device record, LLVM's
 * ORC LLJIT linking each host object into its own JITDylib (so specializations may share
 * symbol names) with the C library's math functions and backend-given symbols defined as
 * absolute symbols, host memory as device memory, the worker pool, wall-clock timing.
 * Most functions have the signature of the BackendOps member they implement. Prefix cj_. */
#ifndef TILE_CPU_JIT_H
#define TILE_CPU_JIT_H
#include <pthread.h>
#include <stdatomic.h>
#include <llvm-c/LLJIT.h>
#include "backend.h"
#include "cpu_pool.h"

/* A symbol every JITDylib defines (the C library's math functions always are). */
typedef struct CjSymbol {
    const char *name;
    void *addr;
} CjSymbol;

typedef struct CpuDev {
    LLVMOrcLLJITRef jit;
    pthread_mutex_t jit_lock; /* guards the JIT's dylibs and the free list */
    atomic_uint ndylibs;
    /* Dylibs of unloaded objects, cleared, for the next loads: the C API cannot remove a
     * dylib from the session, so without reuse each load kept ~9 KB until cj_close. */
    LLVMOrcJITDylibRef *free_dylibs;
    int nfree, free_cap;
    CpuPool *pool;
    const CjSymbol *extra; /* defined in every dylib besides the C library's */
    int nextra;
    int sim_amd; /* sim backend: TILE_SIM_TARGET=sim-amd when it was opened */
    char name[160];
    char cache_id[512];
} CpuDev;

/* Opens the JIT and the pool (TILE_CPU_THREADS workers, else one per core). The device is
 * named "<what> (<cpu>, N threads)"; its disk-cache identity starts with cache_tag. */
tile_Status cj_open(void **out, const char *what, const char *cache_tag,
                    const CjSymbol *extra, int nextra, char *err);
void cj_close(void *dev);
const char *cj_device_name(void *dev);
const char *cj_cache_id(void *dev);
const char *cj_no_fallback(void *dev);
const char *cj_driver_version(void *dev); /* "" */
void cj_max_grid(void *dev, unsigned long long out[3]);

tile_Status cj_malloc(void *dev, size_t bytes, tile_DevPtr *out, char *err);
tile_Status cj_free(void *dev, tile_DevPtr p, char *err);
tile_Status cj_h2d(void *dev, tile_DevPtr dst, const void *src, size_t n, char *err);
tile_Status cj_d2h(void *dev, void *dst, tile_DevPtr src, size_t n, char *err);
tile_Status cj_memset(void *dev, tile_DevPtr dst, int byte, size_t n, char *err);
tile_Status cj_sync(void *dev, char *err);

tile_Status cj_finalize(void *dev, const void *code, size_t size, CodeKind kind, void **out,
                        size_t *out_size, char *err);
tile_Status cj_load(void *dev, const void *image, size_t size, void **mod, char *err);
void cj_unload(void *dev, void *mod);
tile_Status cj_get_function(void *dev, void *mod, const char *symbol, int smem_bytes,
                            void **fn, char *err);

/* The last-level cache stands for a GPU's L2 (the tuner's input rotation sizes by it). */
void cj_limits(void *dev, BkLimits *out);
double cj_now_ms(void); /* a monotonic clock */

#endif
