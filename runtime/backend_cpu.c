/* backend_cpu.c: the CPU backend. Host ELF objects from tc_compile (target "host") are linked
 * in-process by LLVM's ORC LLJIT, each into its own JITDylib (so specializations may share
 * symbol names); libm functions the code calls resolve to this process's C library. The
 * entry point is `void SYMBOL(void **args, const int32_t grid[6])`, grid = pid x,y,z then
 * nprog x,y,z; program instances run on the context's worker pool and launches are
 * synchronous. Device memory is 64-byte aligned host memory. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include "cpu_pool.h"
#include "runtime_internal.h"

enum { STACK_BYTES = 64 << 20, ALIGN = 64 };

typedef struct CpuDev {
    LLVMOrcLLJITRef jit;
    pthread_mutex_t jit_lock;
    atomic_uint ndylibs;
    CpuPool *pool;
    char name[160];
    char cache_id[512];
} CpuDev;

typedef void (*KernelEntry)(void **args, const int32_t *grid);

/* The C library functions generated host code may call. */
#define CPU_LIBM(X) \
    X(expf) X(exp) X(logf) X(log) X(sinf) X(sin) X(cosf) X(cos) X(tanf) X(tan) X(sqrtf) \
    X(sqrt) X(fmodf) X(fmod) X(exp2f) X(exp2) X(log2f) X(log2) X(log10f) X(log10) X(powf) \
    X(pow) X(tanhf) X(tanh) X(erff) X(erf) X(atanf) X(atan) X(atan2f) X(atan2) X(asinf) \
    X(asin) X(acosf) X(acos) X(sinhf) X(sinh) X(coshf) X(cosh) X(expm1f) X(expm1) \
    X(log1pf) X(log1p) X(fabsf) X(fabs) X(floorf) X(floor) X(ceilf) X(ceil) X(roundf) \
    X(round) X(truncf) X(trunc) X(rintf) X(rint) X(nearbyintf) X(nearbyint) X(fminf) \
    X(fmin) X(fmaxf) X(fmax) X(fmaf) X(fma) X(memcpy) X(memset) X(memmove)

static const char *llvm_error(LLVMErrorRef e, char *err, const char *what)
{
    char *msg = LLVMGetErrorMessage(e);
    snprintf(err, 1024, "%s: %s", what, msg);
    LLVMDisposeErrorMessage(msg);
    return err;
}

static void llvm_init(void)
{
    LLVMInitializeNativeTarget();
    LLVMInitializeNativeAsmPrinter();
}

static void describe_host(CpuDev *d)
{
    char *cpu = LLVMGetHostCPUName(), *features = LLVMGetHostCPUFeatures();
    char *triple = LLVMGetDefaultTargetTriple();
    snprintf(d->name, sizeof d->name, "host CPU (%s, %d threads)", cpu, cpu_pool_size(d->pool));
    /* code is compiled for this CPU's features: they belong in the disk cache's key */
    snprintf(d->cache_id, sizeof d->cache_id, "%s|%s|%016llx", triple, cpu,
             (unsigned long long)rt_hash64(features, strlen(features)));
    LLVMDisposeMessage(cpu);
    LLVMDisposeMessage(features);
    LLVMDisposeMessage(triple);
}

static int worker_count(void)
{
    const char *env = getenv("TILE_CPU_THREADS");
    long n = env && *env ? strtol(env, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 1024 ? 1024 : (int)n;
}

static tile_Status cpu_open(void **out, char *err)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, llvm_init);
    CpuDev *d = calloc(1, sizeof *d);
    if (!d) {
        snprintf(err, BK_ERR_MAX, "out of memory");
        return TILE_ERROR_OUT_OF_MEMORY;
    }
    LLVMErrorRef e = LLVMOrcCreateLLJIT(&d->jit, NULL);
    if (e) {
        llvm_error(e, err, "cannot create the LLVM JIT");
        free(d);
        return TILE_ERROR_NO_DEVICE;
    }
    if (!(d->pool = cpu_pool_new(worker_count(), STACK_BYTES, err, BK_ERR_MAX))) {
        LLVMOrcDisposeLLJIT(d->jit);
        free(d);
        return TILE_ERROR_NO_DEVICE;
    }
    pthread_mutex_init(&d->jit_lock, NULL);
    describe_host(d);
    *out = d;
    return TILE_OK;
}

static void cpu_close(void *dev)
{
    CpuDev *d = dev;
    cpu_pool_free(d->pool);
    LLVMErrorRef e = LLVMOrcDisposeLLJIT(d->jit);
    if (e)
        LLVMConsumeError(e);
    pthread_mutex_destroy(&d->jit_lock);
    free(d);
}

static const char *cpu_device_name(void *dev) { return ((CpuDev *)dev)->name; }
static const char *cpu_arch(void *dev) { return "host"; }
static const char *cpu_target(void *dev) { return "host"; }
static const char *cpu_fallback(void *dev) { return NULL; }
static const char *cpu_cache_id(void *dev) { return ((CpuDev *)dev)->cache_id; }

static void cpu_max_grid(void *dev, unsigned long long out[3])
{
    out[0] = out[1] = out[2] = INT32_MAX; /* program ids are i32 */
}

/* ---- memory ---- */
static tile_Status cpu_malloc(void *dev, size_t bytes, tile_DevPtr *out, char *err)
{
    size_t rounded = (bytes + ALIGN - 1) / ALIGN * ALIGN;
    void *p = rounded >= bytes ? aligned_alloc(ALIGN, rounded) : NULL;
    if (!p) {
        snprintf(err, BK_ERR_MAX, "out of host memory allocating %zu bytes", bytes);
        return TILE_ERROR_OUT_OF_MEMORY;
    }
    *out = (tile_DevPtr)(uintptr_t)p;
    return TILE_OK;
}

static tile_Status cpu_free(void *dev, tile_DevPtr p, char *err)
{
    free((void *)(uintptr_t)p);
    return TILE_OK;
}

static tile_Status cpu_h2d(void *dev, tile_DevPtr dst, const void *src, size_t n, char *err)
{
    memcpy((void *)(uintptr_t)dst, src, n);
    return TILE_OK;
}

static tile_Status cpu_d2h(void *dev, void *dst, tile_DevPtr src, size_t n, char *err)
{
    memcpy(dst, (const void *)(uintptr_t)src, n);
    return TILE_OK;
}

static tile_Status cpu_memset(void *dev, tile_DevPtr dst, int byte, size_t n, char *err)
{
    memset((void *)(uintptr_t)dst, byte, n);
    return TILE_OK;
}

static tile_Status cpu_sync(void *dev, char *err) { return TILE_OK; }

/* ---- code ---- */
static tile_Status cpu_finalize(void *dev, const void *code, size_t size, int is_ptx,
                                void **out, size_t *out_size, char *err)
{
    if (is_ptx) {
        snprintf(err, BK_ERR_MAX, "the CPU backend cannot load PTX");
        return TILE_ERROR_UNSUPPORTED;
    }
    if (!(*out = malloc(size ? size : 1))) {
        snprintf(err, BK_ERR_MAX, "out of memory");
        return TILE_ERROR_OUT_OF_MEMORY;
    }
    memcpy(*out, code, size);
    *out_size = size;
    return TILE_OK;
}

static LLVMErrorRef define_libm(CpuDev *d, LLVMOrcJITDylibRef jd)
{
    LLVMOrcExecutionSessionRef es = LLVMOrcLLJITGetExecutionSession(d->jit);
    char prefix = LLVMOrcLLJITGetGlobalPrefix(d->jit);
    static const struct { const char *name; void *addr; } fns[] = {
#define X(f) { #f, (void *)f },
        CPU_LIBM(X)
#undef X
    };
    enum { N = sizeof fns / sizeof fns[0] };
    LLVMOrcCSymbolMapPair pairs[N];
    for (int i = 0; i < N; i++) {
        char name[64];
        snprintf(name, sizeof name, "%s%s", prefix ? (char[2]){ prefix, 0 } : "", fns[i].name);
        pairs[i].Name = LLVMOrcExecutionSessionIntern(es, name);
        pairs[i].Sym.Address = (LLVMOrcExecutorAddress)(uintptr_t)fns[i].addr;
        pairs[i].Sym.Flags.GenericFlags = LLVMJITSymbolGenericFlagsExported |
                                          LLVMJITSymbolGenericFlagsCallable;
        pairs[i].Sym.Flags.TargetFlags = 0;
    }
    LLVMOrcMaterializationUnitRef mu = LLVMOrcAbsoluteSymbols(pairs, N);
    LLVMErrorRef e = LLVMOrcJITDylibDefine(jd, mu);
    if (e)
        LLVMOrcDisposeMaterializationUnit(mu);
    return e;
}

static LLVMErrorRef new_dylib(CpuDev *d, LLVMOrcJITDylibRef *jd)
{
    char name[64];
    snprintf(name, sizeof name, "tile.%u", atomic_fetch_add(&d->ndylibs, 1));
    *jd = LLVMOrcExecutionSessionCreateBareJITDylib(LLVMOrcLLJITGetExecutionSession(d->jit), name);
    LLVMErrorRef e = define_libm(d, *jd);
    LLVMOrcDefinitionGeneratorRef gen;
    if (!e)
        e = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
            &gen, LLVMOrcLLJITGetGlobalPrefix(d->jit), NULL, NULL);
    if (!e)
        LLVMOrcJITDylibAddGenerator(*jd, gen); /* anything else: this process's symbols */
    return e;
}

static tile_Status cpu_load(void *dev, const void *image, size_t size, void **mod, char *err)
{
    CpuDev *d = dev;
    LLVMOrcJITDylibRef jd;
    pthread_mutex_lock(&d->jit_lock);
    LLVMErrorRef e = new_dylib(d, &jd);
    if (!e) {
        LLVMMemoryBufferRef buf =
            LLVMCreateMemoryBufferWithMemoryRangeCopy(image, size, "tile-kernel.o");
        e = LLVMOrcLLJITAddObjectFile(d->jit, jd, buf);
    }
    pthread_mutex_unlock(&d->jit_lock);
    if (e) {
        llvm_error(e, err, "cannot load the host object");
        return TILE_ERROR_COMPILE;
    }
    *mod = jd;
    return TILE_OK;
}

static void cpu_unload(void *dev, void *mod)
{
    CpuDev *d = dev;
    pthread_mutex_lock(&d->jit_lock);
    LLVMErrorRef e = LLVMOrcJITDylibClear(mod); /* frees its code; the empty dylib stays */
    pthread_mutex_unlock(&d->jit_lock);
    if (e)
        LLVMConsumeError(e);
}

/* ---- symbol lookup in one dylib (ExecutionSession lookups answer through a callback) ---- */
typedef struct Found {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int done;
    uint64_t addr;
    char *msg;
} Found;

static void on_found(LLVMErrorRef e, LLVMOrcCSymbolMapPairs res, size_t n, void *ctx)
{
    Found *f = ctx;
    pthread_mutex_lock(&f->lock);
    if (e)
        f->msg = LLVMGetErrorMessage(e);
    else if (n)
        f->addr = res[0].Sym.Address;
    f->done = 1;
    pthread_cond_signal(&f->cond);
    pthread_mutex_unlock(&f->lock);
}

static tile_Status cpu_get_function(void *dev, void *mod, const char *symbol, int smem,
                                    void **fn, char *err)
{
    CpuDev *d = dev;
    char name[512], prefix = LLVMOrcLLJITGetGlobalPrefix(d->jit);
    snprintf(name, sizeof name, "%s%s", prefix ? (char[2]){ prefix, 0 } : "", symbol);
    LLVMOrcExecutionSessionRef es = LLVMOrcLLJITGetExecutionSession(d->jit);
    LLVMOrcCJITDylibSearchOrderElement order = { mod, LLVMOrcJITDylibLookupFlagsMatchAllSymbols };
    LLVMOrcCLookupSetElement sym = { LLVMOrcExecutionSessionIntern(es, name),
                                     LLVMOrcSymbolLookupFlagsRequiredSymbol };
    Found f = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, NULL };
    LLVMOrcExecutionSessionLookup(es, LLVMOrcLookupKindStatic, &order, 1, &sym, 1, on_found, &f);
    pthread_mutex_lock(&f.lock);
    while (!f.done)
        pthread_cond_wait(&f.cond, &f.lock);
    pthread_mutex_unlock(&f.lock);
    if (f.msg || !f.addr) {
        snprintf(err, BK_ERR_MAX, "cannot find '%s' in the host object: %s", symbol,
                 f.msg ? f.msg : "no address");
        if (f.msg)
            LLVMDisposeErrorMessage(f.msg);
        return TILE_ERROR_COMPILE;
    }
    *fn = (void *)(uintptr_t)f.addr;
    return TILE_OK;
}

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
/* The last-level cache stands for a GPU's L2 (the tuner's input rotation sizes by it). */
static void cpu_limits(void *dev, BkLimits *out)
{
    (void)dev;
    long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (llc <= 0)
        llc = sysconf(_SC_LEVEL2_CACHE_SIZE);
    *out = (BkLimits){ 0, 0, 0, llc > 0 ? llc : 0 };
}

static tile_Status cpu_timed_launch(void *dev, void *fn, const unsigned grid[3], int threads,
                                    int smem_bytes, void **args, double *ms, char *err)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    tile_Status st = cpu_launch(dev, fn, grid, threads, smem_bytes, args, err);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    *ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-6;
    return st;
}

static const char *cpu_driver_version(void *dev)
{
    (void)dev;
    return "";
}

const BackendOps rt_backend_cpu = {
    TILE_BACKEND_CPU, "cpu", cpu_open, cpu_close, cpu_device_name, cpu_arch, cpu_target,
    cpu_fallback, cpu_cache_id, cpu_max_grid, cpu_malloc, cpu_free, cpu_h2d, cpu_d2h,
    cpu_memset, cpu_sync, cpu_finalize, cpu_load, cpu_unload, cpu_get_function, cpu_launch,
    cpu_limits, NULL, cpu_timed_launch, NULL, NULL, cpu_driver_version,
};
