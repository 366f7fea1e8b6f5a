/* hip_api.h: the part of AMD's HIP runtime API the runtime uses, declared here so that
 * building needs no HIP headers (values as in HIP 5 and 6). Every function is listed once in
 * HIP_FUNCS (name, symbol, args); backend_hip.c expands it into pointers and the dlsym loop.
 * Device attributes are not used: their numbering changed between HIP versions. */
#ifndef TILE_HIP_API_H
#define TILE_HIP_API_H
#include <stddef.h>

typedef int hipError_t;
typedef struct ihipModule_t *hipModule_t;
typedef struct ihipModuleSymbol_t *hipFunction_t;
typedef struct ihipStream_t *hipStream_t;
typedef struct ihipEvent_t *hipEvent_t;

enum {
    hipSuccess = 0,
    hipErrorOutOfMemory = 2,
    hipErrorNoDevice = 100,
    hipErrorIllegalAddress = 700,
    hipErrorLaunchFailure = 719,
    HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
    HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
    HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3,
    HIP_FUNC_ATTRIBUTE_NUM_REGS = 4,
    hipStreamCaptureStatusNone = 0,
};

/* X(name, symbol in libamdhip64, (parameters)): all return hipError_t */
#define HIP_FUNCS(X) \
    X(hipInit, "hipInit", (unsigned flags)) \
    X(hipDriverGetVersion, "hipDriverGetVersion", (int *version)) \
    X(hipGetDeviceCount, "hipGetDeviceCount", (int *count)) \
    X(hipSetDevice, "hipSetDevice", (int device)) \
    X(hipDeviceGetName, "hipDeviceGetName", (char *name, int len, int device)) \
    X(hipDeviceSynchronize, "hipDeviceSynchronize", (void)) \
    X(hipModuleLoadData, "hipModuleLoadData", (hipModule_t *mod, const void *image)) \
    X(hipModuleUnload, "hipModuleUnload", (hipModule_t mod)) \
    X(hipModuleGetFunction, "hipModuleGetFunction", \
      (hipFunction_t *f, hipModule_t mod, const char *name)) \
    X(hipFuncGetAttribute, "hipFuncGetAttribute", (int *v, int attr, hipFunction_t f)) \
    X(hipModuleLaunchKernel, "hipModuleLaunchKernel", \
      (hipFunction_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, \
       unsigned bz, unsigned smem, hipStream_t stream, void **params, void **extra)) \
    X(hipMalloc, "hipMalloc", (void **p, size_t bytes)) \
    X(hipFree, "hipFree", (void *p)) \
    X(hipMemcpyHtoD, "hipMemcpyHtoD", (void *dst, void *src, size_t n)) \
    X(hipMemcpyDtoH, "hipMemcpyDtoH", (void *dst, void *src, size_t n)) \
    X(hipMemsetD8, "hipMemsetD8", (void *dst, unsigned char v, size_t n)) \
    X(hipEventCreate, "hipEventCreate", (hipEvent_t *e)) \
    X(hipEventDestroy, "hipEventDestroy", (hipEvent_t e)) \
    X(hipEventRecord, "hipEventRecord", (hipEvent_t e, hipStream_t s)) \
    X(hipEventSynchronize, "hipEventSynchronize", (hipEvent_t e)) \
    X(hipEventElapsedTime, "hipEventElapsedTime", (float *ms, hipEvent_t start, hipEvent_t end)) \
    X(hipStreamIsCapturing, "hipStreamIsCapturing", (hipStream_t s, int *status))

/* Besides: const char *hipGetErrorString(hipError_t), and hipGetDeviceProperties (the
 * symbol hipGetDevicePropertiesR0600 in HIP 6), whose structure differs between versions:
 * only the gfx name is read from it, by looking for it. */

#endif
