/* gpu.c: the CUDA driver API through dlopen, just enough for test_lower (gpu.h). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include "gpu.h"

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

#define CU_FUNCS(X)                                                                    \
    X(cuInit, (unsigned))                                                              \
    X(cuDeviceGet, (int *, int))                                                       \
    X(cuDeviceGetAttribute, (int *, int, int))                                         \
    X(cuDevicePrimaryCtxRetain, (void **, int))                                        \
    X(cuCtxSetCurrent, (void *))                                                       \
    X(cuModuleLoadDataEx, (void **, const void *, unsigned, int *, void **))          \
    X(cuModuleGetFunction, (void **, void *, const char *))                            \
    X(cuModuleUnload, (void *))                                                        \
    X(cuFuncSetAttribute, (void *, int, int))                                          \
    X(cuMemAlloc_v2, (CUdeviceptr *, size_t))                                          \
    X(cuMemFree_v2, (CUdeviceptr))                                                     \
    X(cuMemcpyHtoD_v2, (CUdeviceptr, const void *, size_t))                            \
    X(cuMemcpyDtoH_v2, (void *, CUdeviceptr, size_t))                                  \
    X(cuLaunchKernel, (void *, unsigned, unsigned, unsigned, unsigned, unsigned,       \
                       unsigned, unsigned, void *, void **, void **))                  \
    X(cuCtxSynchronize, (void))

#define DECL(name, args) static CUresult (*p_##name) args;
CU_FUNCS(DECL)
static void *ctx;
static int state; /* 0 unknown, 1 ok, -1 none */

static int load(void)
{
    if (state)
        return state;
    state = -1;
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    if (!h)
        return state;
#define LOAD(name, args) if (!(p_##name = (CUresult(*) args)dlsym(h, #name))) return state;
    CU_FUNCS(LOAD)
    int dev;
    if (p_cuInit(0) || p_cuDeviceGet(&dev, 0) || p_cuDevicePrimaryCtxRetain(&ctx, dev) ||
        p_cuCtxSetCurrent(ctx))
        return state;
    state = 1;
    return state;
}

int gpu_available(char *sm, size_t n)
{
    int major = 0, minor = 0;
    if (load() != 1 || p_cuDeviceGetAttribute(&major, 75, 0) || p_cuDeviceGetAttribute(&minor, 76, 0))
        return 0;
    snprintf(sm, n, "sm_%d%d", major, minor);
    return 1;
}

#define TRY(call)                                                                      \
    do {                                                                               \
        CUresult r_ = (call);                                                          \
        if (r_) {                                                                      \
            printf("cuda: %s failed (%d)\n", #call, r_);                               \
            return -1;                                                                 \
        }                                                                              \
    } while (0)

static int load_module(const char *ptx, const char *symbol, void **mod, void **fn)
{
    static char log[8192];
    int opts[2] = {5 /* ERROR_LOG_BUFFER */, 6 /* ERROR_LOG_BUFFER_SIZE_BYTES */};
    void *vals[2] = {log, (void *)(size_t)sizeof log};
    log[0] = 0;
    if (p_cuModuleLoadDataEx(mod, ptx, 2, opts, vals)) {
        printf("cuda: cannot load PTX: %s\n", log);
        return -1;
    }
    TRY(p_cuModuleGetFunction(fn, *mod, symbol));
    return 0;
}

int gpu_run(const char *ptx, const char *symbol, int threads, int smem, int gx, int gy,
            GpuArg *args, int nargs)
{
    void *mod, *fn, *params[32];
    CUdeviceptr dptr[32];
    if (load() != 1 || nargs > 32 || load_module(ptx, symbol, &mod, &fn) != 0)
        return -1;
    TRY(p_cuFuncSetAttribute(fn, 8 /* MAX_DYNAMIC_SHARED_SIZE_BYTES */, smem));
    for (int i = 0; i < nargs; i++) {
        if (args[i].host) {
            TRY(p_cuMemAlloc_v2(&dptr[i], args[i].bytes));
            TRY(p_cuMemcpyHtoD_v2(dptr[i], args[i].host, args[i].bytes));
            params[i] = &dptr[i];
        } else {
            params[i] = &args[i].scalar; /* little-endian: low bytes first */
        }
    }
    TRY(p_cuLaunchKernel(fn, (unsigned)gx, (unsigned)gy, 1, (unsigned)threads, 1, 1,
                         (unsigned)smem, NULL, params, NULL));
    TRY(p_cuCtxSynchronize());
    for (int i = 0; i < nargs; i++)
        if (args[i].host) {
            TRY(p_cuMemcpyDtoH_v2(args[i].host, dptr[i], args[i].bytes));
            p_cuMemFree_v2(dptr[i]);
        }
    p_cuModuleUnload(mod);
    return 0;
}
