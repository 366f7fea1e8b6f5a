/* backend_sim.c: the sim backend: the GPU code path emulated on the CPU. Kernels compile for
 * the "sim" target (compiler/target_sim.c: warps of 32 lanes, shared memory, barriers,
 * shuffles) and are linked by the CPU backend's JIT (cpu_jit.c), whose dylibs also define
 * the tile_sim_* functions; each program instance runs on a pool worker through the SIMT
 * emulator (runtime/sim.c) with the kernel's threads and exactly its shared memory. A race,
 * an out-of-bounds shared access or a divergent barrier fails the launch with the message
 * of the lowest-numbered program that had one, equal-value stores to the same shared bytes
 * by several threads between two barriers included (TILE_SIM_STRICT=0 lets those pass). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cpu_jit.h"
#include "runtime_internal.h"
#include "sim.h"
#include "sim_abi.h"

static const CjSymbol SIM_SYMBOLS[] = {
#define S(f) { #f, (void *)f }
    S(tile_sim_thread_id), S(tile_sim_smem), S(tile_sim_barrier), S(tile_sim_shfl_xor),
    S(tile_sim_shfl_idx), S(tile_sim_smem_access), S(tile_sim_mma), S(tile_sim_ldmatrix),
    S(tile_sim_cp_async), S(tile_sim_cp_async_commit), S(tile_sim_cp_async_wait),
    S(tile_sim_mfma),
#undef S
};

/* TILE_SIM_TARGET=sim-amd: compile for and emulate AMD's path (waves of 64 lanes, MFMA). Read
 * once, when the context opens: code compiled for one path must not run on the other's warps. */
static int amd_path(void *dev) { return ((CpuDev *)dev)->sim_amd; }

static tile_Status sim_open(void **out, int device, char *err)
{
    const char *t = getenv("TILE_SIM_TARGET");
    if (t && *t && strcmp(t, "sim") != 0 && strcmp(t, "sim-amd") != 0) {
        snprintf(err, BK_ERR_MAX, "TILE_SIM_TARGET='%s' is not sim or sim-amd", t);
        return TILE_ERROR_INVALID_ARGUMENT;
    }
    if (device != 0) {
        snprintf(err, BK_ERR_MAX, "device %d: the sim backend has one device, 0", device);
        return TILE_ERROR_NO_DEVICE;
    }
    int amd = t && strcmp(t, "sim-amd") == 0;
    tile_Status st = cj_open(out, amd ? "SIMT emulator on the host CPU (AMD wave64 path)"
                                      : "SIMT emulator on the host CPU",
                             amd ? "sim-amd|" : "sim|", SIM_SYMBOLS,
                             (int)(sizeof SIM_SYMBOLS / sizeof SIM_SYMBOLS[0]), err);
    if (st == TILE_OK)
        ((CpuDev *)*out)->sim_amd = amd;
    return st;
}

static const char *sim_arch(void *dev) { return amd_path(dev) ? "sim-amd" : "sim"; }
static const char *sim_target(void *dev) { return sim_arch(dev); }

/* ---- launch ---- */
typedef struct SimLaunch {
    SimEntry fn;
    void **args;
    unsigned grid[3];
    int threads, smem_bytes, strict, warp;
    pthread_mutex_t lock;
    _Atomic uint64_t first_bad; /* lowest program index that failed; UINT64_MAX: none */
    char err[BK_ERR_MAX];
} SimLaunch;

static void failed(SimLaunch *l, uint64_t i, const char *msg)
{
    pthread_mutex_lock(&l->lock);
    if (i < l->first_bad) {
        l->first_bad = i;
        snprintf(l->err, sizeof l->err, "%s", msg);
    }
    pthread_mutex_unlock(&l->lock);
}

/* Programs after one that failed are skipped; those before it still run, so the message is
 * always the lowest failing program's. */
static void run_program(void *user, uint64_t i)
{
    SimLaunch *l = user;
    if (i > l->first_bad)
        return;
    uint64_t gx = l->grid[0], gy = l->grid[1];
    SimProgram p = { l->fn, l->args,
                     { (int32_t)(i % gx), (int32_t)(i / gx % gy), (int32_t)(i / (gx * gy)),
                       (int32_t)l->grid[0], (int32_t)l->grid[1], (int32_t)l->grid[2] },
                     l->threads, l->smem_bytes, l->strict, l->warp };
    char err[BK_ERR_MAX];
    if (sim_run(&p, err, sizeof err) != 0)
        failed(l, i, err);
}

/* TILE_SIM_STRICT: 1 (the default) or 0; another value is strict too, and logged (env.c). */
static int strict_mode(void)
{
    return (int)rt_env_long("TILE_SIM_STRICT", 0, 1, 1, "strict");
}

static tile_Status sim_launch(void *dev, void *fn, const unsigned grid[3], int threads,
                              int smem_bytes, void **args, char *err)
{
    CpuDev *d = dev;
    SimLaunch l = { (SimEntry)(uintptr_t)fn, args, { grid[0], grid[1], grid[2] }, threads,
                    smem_bytes, strict_mode(), amd_path(dev) ? 64 : 32, PTHREAD_MUTEX_INITIALIZER,
                    UINT64_MAX, "" };
    cpu_pool_run(d->pool, (uint64_t)grid[0] * grid[1] * grid[2], run_program, &l);
    pthread_mutex_destroy(&l.lock);
    if (l.first_bad == UINT64_MAX)
        return TILE_OK;
    snprintf(err, BK_ERR_MAX, "sim: %s", l.err);
    return TILE_ERROR_DEVICE;
}

/* The grid a GPU takes (CUDA's and HIP's limits: 2^31 - 1 programs along x, 65535 along y and
 * z), so that a grid the emulator runs also launches on the device it stands in for. */
static void sim_max_grid(void *dev, unsigned long long out[3])
{
    (void)dev;
    out[0] = 0x7fffffffull, out[1] = out[2] = 65535;
}

/* ---- for the tuner: wall-clock time of the emulation (not a GPU's) ---- */
static tile_Status sim_timed_launch(void *dev, void *fn, const unsigned grid[3], int threads,
                                    int smem_bytes, void **args, double *ms, char *err)
{
    double t0 = cj_now_ms();
    tile_Status st = sim_launch(dev, fn, grid, threads, smem_bytes, args, err);
    *ms = cj_now_ms() - t0;
    return st;
}

const BackendOps rt_backend_sim = {
    TILE_BACKEND_SIM, "sim", sim_open, cj_close, cj_device_name, sim_arch, sim_target,
    cj_no_fallback, cj_cache_id, sim_max_grid, cj_malloc, cj_free, cj_h2d, cj_d2h,
    cj_memset, cj_sync, cj_finalize, cj_load, cj_unload, cj_get_function, sim_launch,
    cj_limits, NULL, sim_timed_launch, NULL, NULL, cj_driver_version,
};
