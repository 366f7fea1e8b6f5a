/* cuda_api.h: the part of the CUDA Driver API the runtime uses, declared here so that building
 * needs no CUDA headers. Every function is listed once in CUDA_FUNCS (name, return, args);
 * backend_cuda.c expands it into typedefs, pointers and the dlsym loop. */
#ifndef TILE_CUDA_API_H
#define TILE_CUDA_API_H
#include <stddef.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUlinkState_st *CUlinkState;
typedef int CUjit_option;
typedef struct CUevent_st *CUevent;
typedef struct CUipcMemHandle {
    char reserved[64];
} CUipcMemHandle;

enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_NO_DEVICE = 100,
    CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5,
    CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6,
    CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
    CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
    CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK = 12,
    CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
    CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
    CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
    CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3,
    CU_FUNC_ATTRIBUTE_NUM_REGS = 4,
    CU_EVENT_DEFAULT = 0,
    CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
    CU_JIT_INFO_LOG_BUFFER = 3,
    CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
    CU_JIT_ERROR_LOG_BUFFER = 5,
    CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
    CU_JIT_INPUT_PTX = 1,
    CU_STREAM_CAPTURE_STATUS_NONE = 0,
    CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS = 1,
};

/* X(name, symbol in libcuda, (parameters)) */
#define CUDA_FUNCS(X) \
    X(cuInit, "cuInit", (unsigned flags)) \
    X(cuDriverGetVersion, "cuDriverGetVersion", (int *version)) \
    X(cuDeviceGetCount, "cuDeviceGetCount", (int *count)) \
    X(cuDeviceGet, "cuDeviceGet", (CUdevice *dev, int ordinal)) \
    X(cuDeviceGetName, "cuDeviceGetName", (char *name, int len, CUdevice dev)) \
    X(cuDeviceGetAttribute, "cuDeviceGetAttribute", (int *v, int attr, CUdevice dev)) \
    X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", (CUcontext *ctx, CUdevice dev)) \
    X(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", (CUdevice dev)) \
    X(cuCtxSetCurrent, "cuCtxSetCurrent", (CUcontext ctx)) \
    X(cuCtxSynchronize, "cuCtxSynchronize", (void)) \
    X(cuModuleLoadDataEx, "cuModuleLoadDataEx", \
      (CUmodule *mod, const void *image, unsigned n, CUjit_option *opts, void **vals)) \
    X(cuModuleUnload, "cuModuleUnload", (CUmodule mod)) \
    X(cuModuleGetFunction, "cuModuleGetFunction", (CUfunction *f, CUmodule mod, const char *name)) \
    X(cuFuncSetAttribute, "cuFuncSetAttribute", (CUfunction f, int attr, int value)) \
    X(cuFuncGetAttribute, "cuFuncGetAttribute", (int *v, int attr, CUfunction f)) \
    X(cuEventCreate, "cuEventCreate", (CUevent *e, unsigned flags)) \
    X(cuEventDestroy, "cuEventDestroy_v2", (CUevent e)) \
    X(cuEventRecord, "cuEventRecord", (CUevent e, CUstream s)) \
    X(cuEventSynchronize, "cuEventSynchronize", (CUevent e)) \
    X(cuEventElapsedTime, "cuEventElapsedTime", (float *ms, CUevent start, CUevent end)) \
    X(cuLaunchKernel, "cuLaunchKernel", \
      (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, \
       unsigned bz, unsigned smem, CUstream stream, void **params, void **extra)) \
    X(cuMemAlloc, "cuMemAlloc_v2", (CUdeviceptr *p, size_t bytes)) \
    X(cuMemFree, "cuMemFree_v2", (CUdeviceptr p)) \
    X(cuMemcpyHtoD, "cuMemcpyHtoD_v2", (CUdeviceptr dst, const void *src, size_t n)) \
    X(cuMemcpyDtoH, "cuMemcpyDtoH_v2", (void *dst, CUdeviceptr src, size_t n)) \
    X(cuMemsetD8, "cuMemsetD8_v2", (CUdeviceptr dst, unsigned char v, size_t n)) \
    X(cuGetErrorString, "cuGetErrorString", (CUresult r, const char **s)) \
    X(cuLinkCreate, "cuLinkCreate_v2", \
      (unsigned n, CUjit_option *opts, void **vals, CUlinkState *state)) \
    X(cuLinkAddData, "cuLinkAddData_v2", \
      (CUlinkState state, int type, void *data, size_t size, const char *name, unsigned n, \
       CUjit_option *opts, void **vals)) \
    X(cuLinkComplete, "cuLinkComplete", (CUlinkState state, void **cubin, size_t *size)) \
    X(cuLinkDestroy, "cuLinkDestroy", (CUlinkState state)) \
    X(cuStreamIsCapturing, "cuStreamIsCapturing", (CUstream s, int *status))

/* Loaded when present (NULL otherwise): sharing buffers with a tuning worker process; what a
 * borrowed range is. */
#define CUDA_OPTIONAL_FUNCS(X) \
    X(cuMemGetAddressRange, "cuMemGetAddressRange_v2", \
      (CUdeviceptr *base, size_t *size, CUdeviceptr p)) \
    X(cuMemcpyDtoD, "cuMemcpyDtoD_v2", (CUdeviceptr dst, CUdeviceptr src, size_t n)) \
    X(cuIpcGetMemHandle, "cuIpcGetMemHandle", (CUipcMemHandle *h, CUdeviceptr p)) \
    X(cuIpcOpenMemHandle, "cuIpcOpenMemHandle_v2", \
      (CUdeviceptr *p, CUipcMemHandle h, unsigned flags)) \
    X(cuIpcCloseMemHandle, "cuIpcCloseMemHandle", (CUdeviceptr p)) \
    X(cuPointerGetAttribute, "cuPointerGetAttribute", (void *data, int attribute, CUdeviceptr p))

#endif
