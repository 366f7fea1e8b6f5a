/* backend_cuda.c: the CUDA backend, over the Driver API loaded with dlopen("libcuda.so.1")
 * on first use (no CUDA needed to build). PTX from tc_compile is linked into a cubin with
 * cuLink* (the form the disk cache keeps, so later processes skip the driver's PTX JIT), then
 * loaded with cuModuleLoadDataEx. One primary context per device; launches go to the default
 * stream and are asynchronous until tile_synchronize. */
#include <dlfcn.h>
#include <stdatomic.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend.h"
#include "cuda_api.h"
#include "cuda_arch.h"

enum { LOG_MAX = 8192, DEFAULT_SMEM = 48 * 1024, CUDA_ERROR_OUT_OF_MEMORY = 2 };

static struct {
#define X(name, sym, args) CUresult (*name) args;
    CUDA_FUNCS(X)
    CUDA_OPTIONAL_FUNCS(X)
#undef X
} cu;
static char driver_error[512]; /* why the driver did not load ("" when it did) */
static _Atomic int context_dead; /* a sticky fault happened: the primary context is unusable */

typedef struct CudaDev {
    CUdevice dev;
    int ordinal; /* the device number tile_context_open_device was given */
    CUcontext ctx;
    char name[256], arch[CUDA_ARCH_MAX], fallback[CUDA_ARCH_MAX], cache_id[384];
    unsigned long long max_grid[3];
    int smem_optin, regs_per_block, threads_per_block, l2_bytes, version;
    char driver[16];
    pthread_mutex_t tune_lock; /* guards the timing events and the L2 flush buffer */
    CUevent ev[2];
    CUdeviceptr flush_buf;
    CUmodule flush_mod;   /* tile_l2_read (cuda_l2_read.c), loaded at the first flush */
    CUfunction flush_fn;  /* NULL where it could not load: the flush is a memset then */
    _Atomic(CUstream) stream; /* where launches go: the caller's (tile_set_stream) or NULL */
} CudaDev;

static void load_driver(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(driver_error, sizeof driver_error,
                 "cannot load the CUDA driver (libcuda.so.1): %s", dlerror());
        return;
    }
#define X(name, sym, args) \
    if (!(*(void **)&cu.name = dlsym(h, sym))) { \
        snprintf(driver_error, sizeof driver_error, "the CUDA driver lacks %s (too old?)", sym); \
        return; \
    }
    CUDA_FUNCS(X)
#undef X
#define X(name, sym, args) *(void **)&cu.name = dlsym(h, sym);
    CUDA_OPTIONAL_FUNCS(X)
#undef X
    CUresult r = cu.cuInit(0);
    if (r != CUDA_SUCCESS)
        snprintf(driver_error, sizeof driver_error, "cuInit failed with CUDA error %d%s", r,
                 r == CUDA_ERROR_NO_DEVICE ? " (no CUDA-capable device)" : "");
}

/* "CUDA error 700 (an illegal memory access was encountered) in cuCtxSynchronize" */
static tile_Status fail(CUresult r, const char *call, char *err)
{
    const char *s = NULL;
    if (cu.cuGetErrorString(r, &s) != CUDA_SUCCESS || !s)
        s = "unknown error";
    /* illegal address, hardware stack error, illegal instruction, misaligned address,
     * invalid address space, invalid pc, launch failure: the context cannot be used again */
    int sticky = r == 700 || (r >= 714 && r <= 719);
    if (sticky)
        atomic_store(&context_dead, 1);
    snprintf(err, BK_ERR_MAX, "CUDA error %d (%s) in %s%s", r, s, call,
             sticky ? " (the CUDA context is unusable from now on)" : "");
    return r == CUDA_ERROR_OUT_OF_MEMORY ? TILE_ERROR_OUT_OF_MEMORY : TILE_ERROR_DEVICE;
}

#define CU_TRY(call, args) \
    do { \
        CUresult r_ = cu.call args; \
        if (r_ != CUDA_SUCCESS) \
            return fail(r_, #call, err); \
    } while (0)

static tile_Status current(CudaDev *d, char *err)
{
    CU_TRY(cuCtxSetCurrent, (d->ctx));
    return TILE_OK;
}

static tile_Status describe(CudaDev *d, char *err)
{
    int major, minor, version, g[3];
    CU_TRY(cuDeviceGetName, (d->name, sizeof d->name, d->dev));
    CU_TRY(cuDeviceGetAttribute, (&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d->dev));
    CU_TRY(cuDeviceGetAttribute, (&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d->dev));
    CU_TRY(cuDeviceGetAttribute, (&d->smem_optin,
                                  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, d->dev));
    for (int i = 0; i < 3; i++)
        CU_TRY(cuDeviceGetAttribute, (&g[i], CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X + i, d->dev));
    CU_TRY(cuDeviceGetAttribute, (&d->regs_per_block,
                                  CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, d->dev));
    CU_TRY(cuDeviceGetAttribute, (&d->threads_per_block,
                                  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, d->dev));
    CU_TRY(cuDeviceGetAttribute, (&d->l2_bytes, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, d->dev));
    CU_TRY(cuDriverGetVersion, (&version));
    snprintf(d->driver, sizeof d->driver, "%d", version);
    for (int i = 0; i < 3; i++)
        d->max_grid[i] = (unsigned long long)g[i];
    if (cuda_arch_choose(getenv("TILE_CUDA_ARCH"), major, minor, d->arch, d->fallback, err,
                         BK_ERR_MAX) != 0)
        return TILE_ERROR_INVALID_ARGUMENT;
    snprintf(d->cache_id, sizeof d->cache_id, "cuda %d|%s|%s", version, d->arch, d->name);
    return TILE_OK;
}

static tile_Status cuda_open(void **out, int device, char *err)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, load_driver);
    if (driver_error[0]) {
        snprintf(err, BK_ERR_MAX, "%s", driver_error);
        return TILE_ERROR_NO_DEVICE;
    }
    int count = 0;
    CU_TRY(cuDeviceGetCount, (&count));
    if (count < 1) {
        snprintf(err, BK_ERR_MAX, "no CUDA device found");
        return TILE_ERROR_NO_DEVICE;
    }
    if (device < 0 || device >= count) {
        snprintf(err, BK_ERR_MAX, "no CUDA device %d (there %s %d: 0 to %d)", device,
                 count == 1 ? "is" : "are", count, count - 1);
        return TILE_ERROR_NO_DEVICE;
    }
    CudaDev *d = calloc(1, sizeof *d);
    if (!d) {
        snprintf(err, BK_ERR_MAX, "out of memory");
        return TILE_ERROR_OUT_OF_MEMORY;
    }
    d->ordinal = device;
    tile_Status st = TILE_OK;
    pthread_mutex_init(&d->tune_lock, NULL);
    CUresult r = cu.cuDeviceGet(&d->dev, device);
    if (r != CUDA_SUCCESS)
        st = fail(r, "cuDeviceGet", err);
    else if ((r = cu.cuDevicePrimaryCtxRetain(&d->ctx, d->dev)) != CUDA_SUCCESS)
        st = fail(r, "cuDevicePrimaryCtxRetain", err);
    else if ((st = current(d, err)) == TILE_OK)
        st = describe(d, err);
    if (st != TILE_OK) {
        if (d->ctx)
            cu.cuDevicePrimaryCtxRelease(d->dev);
        free(d);
        return st == TILE_ERROR_DEVICE ? TILE_ERROR_NO_DEVICE : st;
    }
    *out = d;
    return TILE_OK;
}

static void cuda_close(void *dev)
{
    CudaDev *d = dev;
    cu.cuCtxSetCurrent(d->ctx);
    cu.cuCtxSynchronize();
    for (int i = 0; i < 2; i++)
        if (d->ev[i])
            cu.cuEventDestroy(d->ev[i]);
    if (d->flush_buf)
        cu.cuMemFree(d->flush_buf);
    if (d->flush_mod)
        cu.cuModuleUnload(d->flush_mod);
    cu.cuDevicePrimaryCtxRelease(d->dev);
    pthread_mutex_destroy(&d->tune_lock);
    free(d);
}

static const char *cuda_device_name(void *dev) { return ((CudaDev *)dev)->name; }
static const char *cuda_arch(void *dev) { return ((CudaDev *)dev)->arch; }
static const char *cuda_target(void *dev) { return ((CudaDev *)dev)->arch; }
static const char *cuda_cache_id(void *dev) { return ((CudaDev *)dev)->cache_id; }

static const char *cuda_fallback(void *dev)
{
    CudaDev *d = dev;
    return strcmp(d->arch, d->fallback) ? d->fallback : NULL;
}

static void cuda_max_grid(void *dev, unsigned long long out[3])
{
    memcpy(out, ((CudaDev *)dev)->max_grid, sizeof ((CudaDev *)dev)->max_grid);
}

/* ---- memory ---- */
static tile_Status cuda_malloc(void *dev, size_t bytes, tile_DevPtr *out, char *err)
{
    CUdeviceptr p;
    tile_Status st = current(dev, err);
    if (st != TILE_OK)
        return st;
    CU_TRY(cuMemAlloc, (&p, bytes));
    *out = p;
    return TILE_OK;
}

static tile_Status cuda_free(void *dev, tile_DevPtr p, char *err)
{
    tile_Status st = current(dev, err);
    if (st == TILE_OK)
        CU_TRY(cuMemFree, (p));
    return st;
}

static tile_Status cuda_h2d(void *dev, tile_DevPtr dst, const void *src, size_t n, char *err)
{
    tile_Status st = current(dev, err);
    if (st == TILE_OK)
        CU_TRY(cuMemcpyHtoD, (dst, src, n));
    return st;
}

static tile_Status cuda_d2h(void *dev, void *dst, tile_DevPtr src, size_t n, char *err)
{
    tile_Status st = current(dev, err);
    if (st == TILE_OK)
        CU_TRY(cuMemcpyDtoH, (dst, src, n));
    return st;
}

static tile_Status cuda_memset(void *dev, tile_DevPtr dst, int byte, size_t n, char *err)
{
    tile_Status st = current(dev, err);
    if (st == TILE_OK)
        CU_TRY(cuMemsetD8, (dst, (unsigned char)byte, n));
    return st;
}

static tile_Status cuda_sync(void *dev, char *err)
{
    tile_Status st = current(dev, err);
    if (st == TILE_OK)
        CU_TRY(cuCtxSynchronize, ());
    return st;
}

/* ---- code ---- */
/* Appends the JIT's error log, if any, to err. */
static tile_Status with_log(tile_Status st, const char *log, char *err)
{
    size_t n = strlen(err);
    if (st != TILE_OK && log[0] && n + 2 < BK_ERR_MAX)
        snprintf(err + n, BK_ERR_MAX - n, ": %s", log);
    return st;
}

static tile_Status link_ptx(CUlinkState link, const void *ptx, size_t size, void **out,
                            size_t *out_size, char *err)
{
    char *text = malloc(size + 1); /* the driver wants NUL-terminated PTX */
    void *cubin;
    if (!text) {
        snprintf(err, BK_ERR_MAX, "out of memory");
        return TILE_ERROR_OUT_OF_MEMORY;
    }
    memcpy(text, ptx, size);
    text[size] = 0;
    CUresult r = cu.cuLinkAddData(link, CU_JIT_INPUT_PTX, text, size + 1, "kernel.ptx", 0, NULL,
                                  NULL);
    free(text);
    if (r != CUDA_SUCCESS)
        return fail(r, "cuLinkAddData", err);
    CU_TRY(cuLinkComplete, (link, &cubin, out_size));
    if (!(*out = malloc(*out_size))) {
        snprintf(err, BK_ERR_MAX, "out of memory");
        return TILE_ERROR_OUT_OF_MEMORY;
    }
    memcpy(*out, cubin, *out_size); /* cubin belongs to the link state */
    return TILE_OK;
}

static tile_Status cuda_finalize(void *dev, const void *code, size_t size, CodeKind kind,
                                 void **out, size_t *out_size, char *err)
{
    if (kind != CODE_PTX) {
        snprintf(err, BK_ERR_MAX, "the CUDA backend loads PTX, not %s", tc_code_kind_name(kind));
        return TILE_ERROR_UNSUPPORTED;
    }
    tile_Status st = current(dev, err);
    if (st != TILE_OK)
        return st;
    char *log = calloc(1, LOG_MAX); /* must outlive the link state */
    CUjit_option opts[] = { CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES };
    void *vals[] = { log, (void *)(size_t)LOG_MAX };
    CUlinkState link;
    CUresult r = log ? cu.cuLinkCreate(2, opts, vals, &link) : CUDA_ERROR_OUT_OF_MEMORY;
    if (r != CUDA_SUCCESS) {
        free(log);
        return fail(r, "cuLinkCreate", err);
    }
    st = link_ptx(link, code, size, out, out_size, err);
    cu.cuLinkDestroy(link);
    st = with_log(st, log, err);
    free(log);
    return st;
}

static tile_Status cuda_load(void *dev, const void *image, size_t size, void **mod, char *err)
{
    tile_Status st = current(dev, err);
    if (st != TILE_OK)
        return st;
    char log[LOG_MAX] = "";
    CUjit_option opts[] = { CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES };
    void *vals[] = { log, (void *)(size_t)LOG_MAX };
    CUresult r = cu.cuModuleLoadDataEx((CUmodule *)mod, image, 2, opts, vals);
    return r == CUDA_SUCCESS ? TILE_OK : with_log(fail(r, "cuModuleLoadDataEx", err), log, err);
}

static void cuda_unload(void *dev, void *mod)
{
    char err[BK_ERR_MAX];
    if (current(dev, err) == TILE_OK)
        cu.cuModuleUnload(mod);
}

static tile_Status cuda_get_function(void *dev, void *mod, const char *symbol, int smem,
                                     void **fn, char *err)
{
    CudaDev *d = dev;
    tile_Status st = current(d, err);
    if (st != TILE_OK)
        return st;
    if (smem > d->smem_optin) {
        snprintf(err, BK_ERR_MAX, "'%s' needs %d bytes of shared memory, the device allows %d",
                 symbol, smem, d->smem_optin);
        return TILE_ERROR_UNSUPPORTED;
    }
    CU_TRY(cuModuleGetFunction, ((CUfunction *)fn, mod, symbol));
    if (smem > DEFAULT_SMEM)
        CU_TRY(cuFuncSetAttribute, (*fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem));
    return TILE_OK;
}

static tile_Status cuda_launch(void *dev, void *fn, const unsigned grid[3], int threads,
                               int smem_bytes, void **args, char *err)
{
    tile_Status st = current(dev, err);
    CUstream stream = atomic_load(&((CudaDev *)dev)->stream);
    if (st == TILE_OK)
        CU_TRY(cuLaunchKernel, (fn, grid[0], grid[1], grid[2], (unsigned)threads, 1, 1,
                                (unsigned)smem_bytes, stream, args, NULL));
    return st;
}

static tile_Status cuda_set_stream(void *dev, void *stream, char *err)
{
    (void)err;
    atomic_store(&((CudaDev *)dev)->stream, (CUstream)stream);
    return TILE_OK;
}

/* A stream being captured (or one the driver cannot ask about) counts as capturing: then
 * nothing synchronizes or times on the device. */
static int cuda_capturing(void *dev)
{
    CUstream stream = atomic_load(&((CudaDev *)dev)->stream);
    int status = CU_STREAM_CAPTURE_STATUS_NONE;
    char err[BK_ERR_MAX];
    if (current(dev, err) != TILE_OK)
        return 0;
    return cu.cuStreamIsCapturing(stream, &status) != CUDA_SUCCESS ||
           status != CU_STREAM_CAPTURE_STATUS_NONE;
}

/* ---- events on the launch stream ---- */
static tile_Status cuda_event_create(void *dev, void **ev, char *err)
{
    tile_Status st = current(dev, err);
    if (st == TILE_OK)
        CU_TRY(cuEventCreate, ((CUevent *)ev, CU_EVENT_DEFAULT));
    return st;
}

static void cuda_event_destroy(void *dev, void *ev)
{
    char err[BK_ERR_MAX];
    if (current(dev, err) == TILE_OK)
        cu.cuEventDestroy((CUevent)ev);
}

static tile_Status cuda_event_record(void *dev, void *ev, char *err)
{
    tile_Status st = current(dev, err);
    if (st == TILE_OK)
        CU_TRY(cuEventRecord, ((CUevent)ev, atomic_load(&((CudaDev *)dev)->stream)));
    return st;
}

static tile_Status cuda_event_elapsed(void *dev, void *start, void *end, float *ms, char *err)
{
    tile_Status st = current(dev, err);
    if (st != TILE_OK)
        return st;
    CU_TRY(cuEventSynchronize, ((CUevent)end));
    CU_TRY(cuEventElapsedTime, (ms, (CUevent)start, (CUevent)end));
    return TILE_OK;
}

/* ---- buffers shared with a tuning worker ---- */
/* The device current, and the driver able to share memory between processes. */
static tile_Status ipc_ready(void *dev, char *err)
{
    tile_Status st = current(dev, err);
    if (st == TILE_OK && !(cu.cuMemGetAddressRange && cu.cuMemcpyDtoD && cu.cuIpcGetMemHandle &&
                           cu.cuIpcOpenMemHandle && cu.cuIpcCloseMemHandle)) {
        snprintf(err, BK_ERR_MAX, "the CUDA driver cannot share memory between processes");
        st = TILE_ERROR_UNSUPPORTED;
    }
    return st;
}

static tile_Status cuda_ipc_export(void *dev, tile_DevPtr p, unsigned char *handle,
                                   size_t *offset, char *err)
{
    CUdeviceptr base;
    size_t size;
    CUipcMemHandle h;
    tile_Status st = ipc_ready(dev, err);
    if (st != TILE_OK)
        return st;
    CU_TRY(cuMemGetAddressRange, (&base, &size, p));
    CU_TRY(cuIpcGetMemHandle, (&h, base));
    CU_TRY(cuCtxSynchronize, ()); /* what is queued to write the buffer lands before it is read */
    memcpy(handle, h.reserved, BK_IPC_HANDLE);
    *offset = (size_t)(p - base);
    return TILE_OK;
}

static tile_Status cuda_ipc_copy(void *dev, const unsigned char *handle, size_t offset,
                                 tile_DevPtr dst, size_t n, char *err)
{
    CUipcMemHandle h;
    CUdeviceptr src;
    tile_Status st = ipc_ready(dev, err);
    if (st != TILE_OK)
        return st;
    memcpy(h.reserved, handle, BK_IPC_HANDLE);
    CU_TRY(cuIpcOpenMemHandle, (&src, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
    CUresult r = cu.cuMemcpyDtoD(dst, src + offset, n);
    if (r == CUDA_SUCCESS)
        r = cu.cuCtxSynchronize();
    cu.cuIpcCloseMemHandle(src);
    return r == CUDA_SUCCESS ? TILE_OK : fail(r, "cuMemcpyDtoD from a shared buffer", err);
}

/* ---- borrowed memory ---- */
enum { CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2, CU_POINTER_ATTRIBUTE_IS_MANAGED = 8,
       CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9, CU_MEMORYTYPE_DEVICE = 2 };

/* Where the driver says byte p lives: 0 and *gpu = its device's number (-1: host memory the
 * driver maps, or managed memory: every device reaches it); -1 where it knows no such byte. */
static int byte_home(tile_DevPtr p, int *gpu)
{
    unsigned type = 0, managed = 0;
    *gpu = -1;
    if (cu.cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p) != CUDA_SUCCESS)
        return -1;
    if (cu.cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, p) != CUDA_SUCCESS)
        managed = 0;
    if (type == CU_MEMORYTYPE_DEVICE && !managed &&
        cu.cuPointerGetAttribute(gpu, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p) != CUDA_SUCCESS)
        *gpu = -1;
    return 0;
}

/* A kernel given a host pointer the driver does not know, another GPU's memory or a freed
 * address faults, and the fault loses the CUDA context for the whole process: refused here.
 * Both ends are checked (a range running into unmapped addresses); a range over two
 * allocations of this device passes (the driver cannot tell one from pieces of one). */
static tile_Status cuda_check_borrow(void *dev, tile_DevPtr p, size_t n, char *err)
{
    CudaDev *d = dev;
    if (!cu.cuPointerGetAttribute)
        return TILE_OK;
    tile_Status st = current(dev, err);
    if (st != TILE_OK)
        return st;
    tile_DevPtr ends[2] = {p, p + (n - 1)};
    for (int i = 0; i < 2; i++) {
        int gpu;
        if (byte_home(ends[i], &gpu) != 0) {
            snprintf(err, BK_ERR_MAX, "%s 0x%llx is not memory the CUDA driver knows (device "
                     "memory comes from cuMemAlloc or a framework's allocator; host memory must "
                     "be allocated or registered with CUDA: cuMemHostAlloc, cuMemHostRegister)",
                     i ? "the range's last byte at" : "address", (unsigned long long)ends[i]);
            return TILE_ERROR_INVALID_ARGUMENT;
        }
        if (gpu >= 0 && gpu != d->ordinal) {
            snprintf(err, BK_ERR_MAX, "0x%llx is memory of CUDA device %d; this context is on "
                     "device %d", (unsigned long long)ends[i], gpu, d->ordinal);
            return TILE_ERROR_INVALID_ARGUMENT;
        }
    }
    return TILE_OK;
}

/* ---- for the tuner ---- */
static void cuda_limits(void *dev, BkLimits *out)
{
    CudaDev *d = dev;
    *out = (BkLimits){ d->smem_optin, d->regs_per_block, d->threads_per_block, d->l2_bytes };
}

static tile_Status cuda_func_attrs(void *dev, void *fn, BkFuncAttrs *out, char *err)
{
    tile_Status st = current(dev, err);
    if (st != TILE_OK)
        return st;
    CU_TRY(cuFuncGetAttribute, (&out->num_regs, CU_FUNC_ATTRIBUTE_NUM_REGS, fn));
    CU_TRY(cuFuncGetAttribute, (&out->static_smem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn));
    CU_TRY(cuFuncGetAttribute, (&out->local_bytes, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, fn));
    CU_TRY(cuFuncGetAttribute, (&out->max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fn));
    return TILE_OK;
}

static tile_Status events_ready(CudaDev *d, char *err)
{
    for (int i = 0; i < 2; i++)
        if (!d->ev[i])
            CU_TRY(cuEventCreate, (&d->ev[i], CU_EVENT_DEFAULT));
    return TILE_OK;
}

/* Events on the default stream around one launch. */
static tile_Status timed_locked(CudaDev *d, void *fn, const unsigned grid[3], int threads,
                                int smem, void **args, double *ms, char *err)
{
    float t = 0;
    tile_Status st = events_ready(d, err);
    if (st != TILE_OK)
        return st;
    CU_TRY(cuEventRecord, (d->ev[0], NULL));
    CU_TRY(cuLaunchKernel, (fn, grid[0], grid[1], grid[2], (unsigned)threads, 1, 1,
                            (unsigned)smem, NULL, args, NULL));
    CU_TRY(cuEventRecord, (d->ev[1], NULL));
    CU_TRY(cuEventSynchronize, (d->ev[1]));
    CU_TRY(cuEventElapsedTime, (&t, d->ev[0], d->ev[1]));
    *ms = t;
    return TILE_OK;
}

static tile_Status cuda_timed_launch(void *dev, void *fn, const unsigned grid[3], int threads,
                                     int smem, void **args, double *ms, char *err)
{
    CudaDev *d = dev;
    tile_Status st = current(d, err);
    if (st != TILE_OK)
        return st;
    pthread_mutex_lock(&d->tune_lock);
    st = timed_locked(d, fn, grid, threads, smem, args, ms, err);
    pthread_mutex_unlock(&d->tune_lock);
    return st;
}

extern const char cuda_l2_read_ptx[];

/* Empties the L2 before a timed launch: a kernel reads a zeroed buffer twice its size
 * (cuda_l2_read.c), leaving clean lines, so the timed kernel pays for no write-back of the
 * flush; where that kernel cannot load, a memset of the buffer (dirty lines) as before. */
static tile_Status flush_locked(CudaDev *d, char *err)
{
    size_t n = 2 * (size_t)(d->l2_bytes > 0 ? d->l2_bytes : 64 << 20);
    if (!d->flush_buf) {
        CU_TRY(cuMemAlloc, (&d->flush_buf, n));
        CU_TRY(cuMemsetD8, (d->flush_buf, 0, n));
        if (cu.cuModuleLoadDataEx(&d->flush_mod, cuda_l2_read_ptx, 0, NULL, NULL) == CUDA_SUCCESS &&
            cu.cuModuleGetFunction(&d->flush_fn, d->flush_mod, "tile_l2_read") != CUDA_SUCCESS)
            d->flush_fn = NULL;
    }
    if (!d->flush_fn) {
        CU_TRY(cuMemsetD8, (d->flush_buf, 0, n));
        return TILE_OK;
    }
    unsigned long long chunks = n / 16;
    void *args[] = {&d->flush_buf, &chunks, &d->flush_buf};
    CU_TRY(cuLaunchKernel, (d->flush_fn, 1024, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
    return TILE_OK;
}

static tile_Status cuda_flush_l2(void *dev, char *err)
{
    CudaDev *d = dev;
    tile_Status st = current(d, err);
    if (st != TILE_OK)
        return st;
    pthread_mutex_lock(&d->tune_lock);
    st = flush_locked(d, err);
    pthread_mutex_unlock(&d->tune_lock);
    return st;
}

static int cuda_context_lost(void *dev)
{
    (void)dev;
    return atomic_load(&context_dead);
}

static const char *cuda_driver_version(void *dev) { return ((CudaDev *)dev)->driver; }

const BackendOps rt_backend_cuda = {
    TILE_BACKEND_CUDA, "cuda", cuda_open, cuda_close, cuda_device_name, cuda_arch, cuda_target,
    cuda_fallback, cuda_cache_id, cuda_max_grid, cuda_malloc, cuda_free, cuda_h2d, cuda_d2h,
    cuda_memset, cuda_sync, cuda_finalize, cuda_load, cuda_unload, cuda_get_function,
    cuda_launch, cuda_limits, cuda_func_attrs, cuda_timed_launch, cuda_flush_l2,
    cuda_context_lost, cuda_driver_version, cuda_set_stream, cuda_capturing,
    cuda_event_create, cuda_event_destroy, cuda_event_record, cuda_event_elapsed,
    cuda_ipc_export, cuda_ipc_copy, cuda_check_borrow,
};
