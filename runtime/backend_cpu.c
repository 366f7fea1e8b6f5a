/* backend_cpu.c: the CPU backend. Host ELF objects from tc_compile (target "host") are linked
 * in-process by LLVM's ORC LLJIT (cpu_jit.c, shared with the sim backend); libm functions
 * the code calls resolve to this process's C library. The entry point is
 * `void SYMBOL(void **args, const int32_t grid[6])`, grid = pid x,y,z then nprog x,y,z;
 * program instances run on the context's worker pool and launches are synchronous. Device
 * memory is 64-byte aligned host memory. */
#include <stdint.h>
#include "cpu_jit.h"

typedef void (*KernelEntry)(void **args, const int32_t *grid);

static tile_Status cpu_open(void **out, int device, char *err)
{
    if (device != 0) {
        snprintf(err, BK_ERR_MAX, "device %d: the CPU backend has one device, 0", device);
        return TILE_ERROR_NO_DEVICE;
    }
    return cj_open(out, "host CPU", "", NULL, 0, err);
}

static const char *cpu_arch(void *dev) { return "host"; }
static const char *cpu_target(void *dev) { return "host"; }

/* ---- launch ---- */
typedef struct CpuLaunch {
    KernelEntry fn;
    void **args;
    unsigned grid[3];
} CpuLaunch;

static void run_program(void *user, uint64_t i)
{
    const CpuLaunch *l = user;
    uint64_t gx = l->grid[0], gy = l->grid[1];
    int32_t g[6] = { (int32_t)(i % gx), (int32_t)(i / gx % gy), (int32_t)(i / (gx * gy)),
                     (int32_t)l->grid[0], (int32_t)l->grid[1], (int32_t)l->grid[2] };
    l->fn(l->args, g);
}

static tile_Status cpu_launch(void *dev, void *fn, const unsigned grid[3], int threads,
                              int smem_bytes, void **args, char *err)
{
    CpuDev *d = dev;
    CpuLaunch l = { (KernelEntry)(uintptr_t)fn, args, { grid[0], grid[1], grid[2] } };
    cpu_pool_run(d->pool, (uint64_t)grid[0] * grid[1] * grid[2], run_program, &l);
    return TILE_OK;
}

/* ---- for the tuner: a monotonic clock around the (synchronous) launch, nothing to flush ---- */
static tile_Status cpu_timed_launch(void *dev, void *fn, const unsigned grid[3], int threads,
                                    int smem_bytes, void **args, double *ms, char *err)
{
    double t0 = cj_now_ms();
    tile_Status st = cpu_launch(dev, fn, grid, threads, smem_bytes, args, err);
    *ms = cj_now_ms() - t0;
    return st;
}

const BackendOps rt_backend_cpu = {
    TILE_BACKEND_CPU, "cpu", cpu_open, cj_close, cj_device_name, cpu_arch, cpu_target,
    cj_no_fallback, cj_cache_id, cj_max_grid, cj_malloc, cj_free, cj_h2d, cj_d2h,
    cj_memset, cj_sync, cj_finalize, cj_load, cj_unload, cj_get_function, cpu_launch,
    cj_limits, NULL, cpu_timed_launch, NULL, NULL, cj_driver_version,
};
