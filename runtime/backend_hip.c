/* backend_hip.c: AMD GPUs through the HIP runtime, loaded with dlopen (libamdhip64.so, .so.6,
 * .so.5; $TILE_HIP_LIBRARY names another) so that building and running need no ROCm. The
 * compiler's AMDGPU code objects (CODE_AMDGPU_ELF, linked by ld.lld) load as they are; the
 * device's gfx name picks the compile target. Launches go on the default stream or the
 * caller's (tile_set_stream: a hipStream_t); events time them for the tuner. A sticky fault
 * (illegal address, launch failure) makes the context unusable, as on CUDA. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend.h"
#include "hip_api.h"
#include "target.h"

static struct {
#define X(name, sym, args) hipError_t(*name) args;
    HIP_FUNCS(X)
#undef X
    const char *(*hipGetErrorString)(hipError_t e);
    hipError_t (*hipGetDeviceProperties)(void *props, int device);
} hip;
static char runtime_error[512]; /* why the runtime did not load ("" when it did) */
static _Atomic int context_dead;

enum { PROPS_BYTES = 16384 }; /* more than any HIP version's hipDeviceProp_t */

typedef struct HipDev {
    int device;
    char name[256], arch[32], cache_id[384], driver[16];
    pthread_mutex_t tune_lock; /* guards the timing events and the L2 flush buffer */
    hipEvent_t ev[2];
    void *flush_buf;
    _Atomic(hipStream_t) stream;
} HipDev;

static void *open_library(void)
{
    const char *env = getenv("TILE_HIP_LIBRARY");
    if (env && *env)
        return dlopen(env, RTLD_NOW | RTLD_LOCAL);
    static const char *const names[] = {"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"};
    void *h = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !h; i++)
        h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    return h;
}

static void load_runtime(void)
{
    void *h = open_library();
    if (!h) {
        const char *env = getenv("TILE_HIP_LIBRARY");
        snprintf(runtime_error, sizeof runtime_error,
                 "cannot load the HIP runtime (%s): %s; install ROCm's HIP runtime",
                 env && *env ? env : "libamdhip64.so", dlerror());
        return;
    }
#define X(name, sym, args) \
    if (!(*(void **)&hip.name = dlsym(h, sym))) { \
        snprintf(runtime_error, sizeof runtime_error, "the HIP runtime lacks %s (too old?)", sym); \
        return; \
    }
    HIP_FUNCS(X)
#undef X
    *(void **)&hip.hipGetErrorString = dlsym(h, "hipGetErrorString");
    if (!(*(void **)&hip.hipGetDeviceProperties = dlsym(h, "hipGetDevicePropertiesR0600")))
        *(void **)&hip.hipGetDeviceProperties = dlsym(h, "hipGetDeviceProperties");
    if (!hip.hipGetErrorString || !hip.hipGetDeviceProperties) {
        snprintf(runtime_error, sizeof runtime_error, "the HIP runtime lacks hipGetErrorString "
                 "or hipGetDeviceProperties (too old?)");
        return;
    }
    hipError_t r = hip.hipInit(0);
    if (r != hipSuccess)
        snprintf(runtime_error, sizeof runtime_error,
                 "hipInit failed with HIP error %d (%s): no usable AMD GPU (none, or no access to "
                 "/dev/kfd)", r, hip.hipGetErrorString(r));
}

/* "HIP error 700 (an illegal memory access was encountered) in hipDeviceSynchronize" */
static tile_Status fail(hipError_t r, const char *call, char *err)
{
    const char *s = hip.hipGetErrorString ? hip.hipGetErrorString(r) : NULL;
    int sticky = r == hipErrorIllegalAddress || r == hipErrorLaunchFailure;
    if (sticky)
        atomic_store(&context_dead, 1);
    snprintf(err, BK_ERR_MAX, "HIP error %d (%s) in %s%s", r, s ? s : "unknown error", call,
             sticky ? " (the device context is unusable from now on)" : "");
    return r == hipErrorOutOfMemory ? TILE_ERROR_OUT_OF_MEMORY : TILE_ERROR_DEVICE;
}

#define HIP_TRY(call, args) \
    do { \
        hipError_t r_ = hip.call args; \
        if (r_ != hipSuccess) \
            return fail(r_, #call, err); \
    } while (0)

static tile_Status current(HipDev *d, char *err)
{
    HIP_TRY(hipSetDevice, (d->device));
    return TILE_OK;
}

/* The gfx name in the device properties ("gfx942:sramecc+:xnack-" -> "gfx942"), found by
 * looking for it: the structure's layout differs between HIP versions. */
static void gfx_name(const char *props, char *out, size_t n)
{
    out[0] = 0;
    for (size_t i = 0; i + 4 < PROPS_BYTES; i++)
        if (!strncmp(props + i, "gfx", 3) && props[i + 3] >= '0' && props[i + 3] <= '9' &&
            (i == 0 || props[i - 1] == 0)) {
            size_t len = strcspn(props + i, ":");
            snprintf(out, n, "%.*s", (int)(len < n ? len : n - 1), props + i);
            return;
        }
}

static tile_Status describe(HipDev *d, char *err)
{
    int version = 0;
    char *props = calloc(1, PROPS_BYTES);
    if (!props) {
        snprintf(err, BK_ERR_MAX, "out of memory");
        return TILE_ERROR_OUT_OF_MEMORY;
    }
    hipError_t r = hip.hipGetDeviceProperties(props, d->device);
    if (r == hipSuccess)
        gfx_name(props, d->arch, sizeof d->arch);
    free(props);
    if (r != hipSuccess)
        return fail(r, "hipGetDeviceProperties", err);
    HIP_TRY(hipDeviceGetName, (d->name, sizeof d->name, d->device));
    HIP_TRY(hipDriverGetVersion, (&version));
    snprintf(d->driver, sizeof d->driver, "%d", version);
    snprintf(d->cache_id, sizeof d->cache_id, "hip %d|%s|%s", version, d->arch, d->name);
    if (!target_lookup(d->arch)) {
        snprintf(err, BK_ERR_MAX, "%s (%s): the compiler has no target for it (it knows gfx90a, "
                 "gfx942, gfx950, gfx1100, gfx1200)", d->name, d->arch[0] ? d->arch : "no gfx name");
        return TILE_ERROR_UNSUPPORTED;
    }
    return TILE_OK;
}

static tile_Status hip_open(void **out, int device, char *err)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, load_runtime);
    if (runtime_error[0]) {
        snprintf(err, BK_ERR_MAX, "%s", runtime_error);
        return TILE_ERROR_NO_DEVICE;
    }
    int count = 0;
    hipError_t r = hip.hipGetDeviceCount(&count);
    if (r != hipSuccess || count < 1) {
        snprintf(err, BK_ERR_MAX, "no AMD GPU found%s%s%s", r != hipSuccess ? " (hipGetDeviceCount: " : "",
                 r != hipSuccess ? hip.hipGetErrorString(r) : "", r != hipSuccess ? ")" : "");
        return TILE_ERROR_NO_DEVICE;
    }
    if (device < 0 || device >= count) {
        snprintf(err, BK_ERR_MAX, "no AMD GPU %d (there %s %d: 0 to %d)", device,
                 count == 1 ? "is" : "are", count, count - 1);
        return TILE_ERROR_NO_DEVICE;
    }
    HipDev *d = calloc(1, sizeof *d);
    if (!d) {
        snprintf(err, BK_ERR_MAX, "out of memory");
        return TILE_ERROR_OUT_OF_MEMORY;
    }
    d->device = device;
    pthread_mutex_init(&d->tune_lock, NULL);
    tile_Status st = current(d, err);
    if (st == TILE_OK)
        st = describe(d, err);
    if (st != TILE_OK) {
        pthread_mutex_destroy(&d->tune_lock);
        free(d);
        return st == TILE_ERROR_DEVICE ? TILE_ERROR_NO_DEVICE : st;
    }
    *out = d;
    return TILE_OK;
}

static void hip_close(void *dev)
{
    HipDev *d = dev;
    if (hip.hipSetDevice(d->device) == hipSuccess)
        hip.hipDeviceSynchronize();
    for (int i = 0; i < 2; i++)
        if (d->ev[i])
            hip.hipEventDestroy(d->ev[i]);
    if (d->flush_buf)
        hip.hipFree(d->flush_buf);
    pthread_mutex_destroy(&d->tune_lock);
    free(d);
}

static const char *hip_device_name(void *dev) { return ((HipDev *)dev)->name; }
static const char *hip_arch(void *dev) { return ((HipDev *)dev)->arch; }
static const char *hip_cache_id(void *dev) { return ((HipDev *)dev)->cache_id; }
static const char *hip_fallback(void *dev) { return NULL; }

static void hip_max_grid(void *dev, unsigned long long out[3])
{
    (void)dev; /* AMD's grid limit is on work-items: 2^32 - 1 of them along each dim */
    out[0] = 0x7fffffffull, out[1] = out[2] = 65535;
}

/* ---- memory ---- */
static tile_Status hip_malloc(void *dev, size_t bytes, tile_DevPtr *out, char *err)
{
    void *p;
    tile_Status st = current(dev, err);
    if (st != TILE_OK)
        return st;
    HIP_TRY(hipMalloc, (&p, bytes));
    *out = (tile_DevPtr)(uintptr_t)p;
    return TILE_OK;
}

static tile_Status hip_free(void *dev, tile_DevPtr p, char *err)
{
    tile_Status st = current(dev, err);
    if (st == TILE_OK)
        HIP_TRY(hipFree, ((void *)(uintptr_t)p));
    return st;
}

static tile_Status hip_h2d(void *dev, tile_DevPtr dst, const void *src, size_t n, char *err)
{
    tile_Status st = current(dev, err);
    if (st == TILE_OK)
        HIP_TRY(hipMemcpyHtoD, ((void *)(uintptr_t)dst, (void *)src, n));
    return st;
}

static tile_Status hip_d2h(void *dev, void *dst, tile_DevPtr src, size_t n, char *err)
{
    tile_Status st = current(dev, err);
    if (st == TILE_OK)
        HIP_TRY(hipMemcpyDtoH, (dst, (void *)(uintptr_t)src, n));
    return st;
}

static tile_Status hip_memset(void *dev, tile_DevPtr dst, int byte, size_t n, char *err)
{
    tile_Status st = current(dev, err);
    if (st == TILE_OK)
        HIP_TRY(hipMemsetD8, ((void *)(uintptr_t)dst, (unsigned char)byte, n));
    return st;
}

static tile_Status hip_sync(void *dev, char *err)
{
    tile_Status st = current(dev, err);
    if (st == TILE_OK)
        HIP_TRY(hipDeviceSynchronize, ());
    return st;
}

/* ---- code ---- */
/* The compiler's code object loads as it is. */
static tile_Status hip_finalize(void *dev, const void *code, size_t size, CodeKind kind,
                                void **out, size_t *out_size, char *err)
{
    return bk_copy_image("HIP", CODE_AMDGPU_ELF, code, size, kind, out, out_size, err);
}

static tile_Status hip_load(void *dev, const void *image, size_t size, void **mod, char *err)
{
    (void)size;
    tile_Status st = current(dev, err);
    if (st == TILE_OK)
        HIP_TRY(hipModuleLoadData, ((hipModule_t *)mod, image));
    return st;
}

static void hip_unload(void *dev, void *mod)
{
    if (hip.hipSetDevice(((HipDev *)dev)->device) == hipSuccess)
        hip.hipModuleUnload(mod);
}

static tile_Status hip_get_function(void *dev, void *mod, const char *symbol, int smem,
                                    void **fn, char *err)
{
    tile_Status st = current(dev, err);
    if (st != TILE_OK)
        return st;
    const Target *t = target_lookup(((HipDev *)dev)->arch);
    if (t && t->smem_limit && smem > t->smem_limit) {
        snprintf(err, BK_ERR_MAX, "'%s' needs %d bytes of shared memory (LDS), the device allows %d",
                 symbol, smem, t->smem_limit);
        return TILE_ERROR_UNSUPPORTED;
    }
    HIP_TRY(hipModuleGetFunction, ((hipFunction_t *)fn, mod, symbol));
    return TILE_OK;
}

static tile_Status launch_on(HipDev *d, void *fn, const unsigned grid[3], int threads, int smem,
                             void **args, hipStream_t stream, char *err)
{
    HIP_TRY(hipModuleLaunchKernel, (fn, grid[0], grid[1], grid[2], (unsigned)threads, 1, 1,
                                    (unsigned)smem, stream, args, NULL));
    return TILE_OK;
}

static tile_Status hip_launch(void *dev, void *fn, const unsigned grid[3], int threads,
                              int smem_bytes, void **args, char *err)
{
    HipDev *d = dev;
    tile_Status st = current(d, err);
    return st == TILE_OK ? launch_on(d, fn, grid, threads, smem_bytes, args,
                                     atomic_load(&d->stream), err)
                         : st;
}

/* ---- for the tuner ---- */
static void hip_limits(void *dev, BkLimits *out)
{
    const Target *t = target_lookup(((HipDev *)dev)->arch);
    int lds = t ? t->smem_limit : 65536;
    *out = (BkLimits){lds, 512 * 1024, 1024, 256ll << 20};
}

static tile_Status hip_func_attrs(void *dev, void *fn, BkFuncAttrs *out, char *err)
{
    tile_Status st = current(dev, err);
    if (st != TILE_OK)
        return st;
    HIP_TRY(hipFuncGetAttribute, (&out->num_regs, HIP_FUNC_ATTRIBUTE_NUM_REGS, fn));
    HIP_TRY(hipFuncGetAttribute, (&out->static_smem, HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn));
    HIP_TRY(hipFuncGetAttribute, (&out->local_bytes, HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, fn));
    HIP_TRY(hipFuncGetAttribute, (&out->max_threads, HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fn));
    return TILE_OK;
}

/* Events on the default stream around one launch. */
static tile_Status timed_locked(HipDev *d, void *fn, const unsigned grid[3], int threads, int smem,
                                void **args, double *ms, char *err)
{
    float t = 0;
    for (int i = 0; i < 2; i++)
        if (!d->ev[i])
            HIP_TRY(hipEventCreate, (&d->ev[i]));
    HIP_TRY(hipEventRecord, (d->ev[0], NULL));
    tile_Status st = launch_on(d, fn, grid, threads, smem, args, NULL, err);
    if (st != TILE_OK)
        return st;
    HIP_TRY(hipEventRecord, (d->ev[1], NULL));
    HIP_TRY(hipEventSynchronize, (d->ev[1]));
    HIP_TRY(hipEventElapsedTime, (&t, d->ev[0], d->ev[1]));
    *ms = t;
    return TILE_OK;
}

static tile_Status hip_timed_launch(void *dev, void *fn, const unsigned grid[3], int threads,
                                    int smem, void **args, double *ms, char *err)
{
    HipDev *d = dev;
    tile_Status st = current(d, err);
    if (st != TILE_OK)
        return st;
    pthread_mutex_lock(&d->tune_lock);
    st = timed_locked(d, fn, grid, threads, smem, args, ms, err);
    pthread_mutex_unlock(&d->tune_lock);
    return st;
}

/* Writes a buffer larger than the last-level cache (256 MiB: MI300's Infinity Cache). */
static tile_Status flush_locked(HipDev *d, char *err)
{
    size_t n = (size_t)512 << 20;
    if (!d->flush_buf)
        HIP_TRY(hipMalloc, (&d->flush_buf, n));
    HIP_TRY(hipMemsetD8, (d->flush_buf, 0, n));
    return TILE_OK;
}

static tile_Status hip_flush_l2(void *dev, char *err)
{
    HipDev *d = dev;
    tile_Status st = current(d, err);
    if (st != TILE_OK)
        return st;
    pthread_mutex_lock(&d->tune_lock);
    st = flush_locked(d, err);
    pthread_mutex_unlock(&d->tune_lock);
    return st;
}

static int hip_context_lost(void *dev)
{
    (void)dev;
    return atomic_load(&context_dead);
}

static const char *hip_driver_version(void *dev) { return ((HipDev *)dev)->driver; }

static tile_Status hip_set_stream(void *dev, void *stream, char *err)
{
    (void)err;
    atomic_store(&((HipDev *)dev)->stream, (hipStream_t)stream);
    return TILE_OK;
}

static int hip_capturing(void *dev)
{
    int status = hipStreamCaptureStatusNone;
    return hip.hipStreamIsCapturing(atomic_load(&((HipDev *)dev)->stream), &status) != hipSuccess ||
           status != hipStreamCaptureStatusNone;
}

/* ---- events on the launch stream ---- */
static tile_Status hip_event_create(void *dev, void **ev, char *err)
{
    tile_Status st = current(dev, err);
    if (st == TILE_OK)
        HIP_TRY(hipEventCreate, ((hipEvent_t *)ev));
    return st;
}

static void hip_event_destroy(void *dev, void *ev)
{
    char err[BK_ERR_MAX];
    if (current(dev, err) == TILE_OK)
        hip.hipEventDestroy((hipEvent_t)ev);
}

static tile_Status hip_event_record(void *dev, void *ev, char *err)
{
    tile_Status st = current(dev, err);
    if (st == TILE_OK)
        HIP_TRY(hipEventRecord, ((hipEvent_t)ev, atomic_load(&((HipDev *)dev)->stream)));
    return st;
}

static tile_Status hip_event_elapsed(void *dev, void *start, void *end, float *ms, char *err)
{
    tile_Status st = current(dev, err);
    if (st != TILE_OK)
        return st;
    HIP_TRY(hipEventSynchronize, ((hipEvent_t)end));
    HIP_TRY(hipEventElapsedTime, (ms, (hipEvent_t)start, (hipEvent_t)end));
    return TILE_OK;
}

const BackendOps rt_backend_hip = {
    TILE_BACKEND_HIP, "hip", hip_open, hip_close, hip_device_name, hip_arch, hip_arch,
    hip_fallback, hip_cache_id, hip_max_grid, hip_malloc, hip_free, hip_h2d, hip_d2h,
    hip_memset, hip_sync, hip_finalize, hip_load, hip_unload, hip_get_function,
    hip_launch, hip_limits, hip_func_attrs, hip_timed_launch, hip_flush_l2,
    hip_context_lost, hip_driver_version, hip_set_stream, hip_capturing,
    hip_event_create, hip_event_destroy, hip_event_record, hip_event_elapsed,
};
