/* cpu_jit.c: the host backends' shared part (cpu_jit.h): an ORC LLJIT with one JITDylib per
 * loaded object, whose undefined symbols resolve to absolute symbols (the C library's math
 * functions, then the backend's) and then to this process; an unloaded object's dylib is
 * cleared and reused by a later load; 64-byte aligned host memory as device memory; the
 * worker pool. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include "codegen.h"
#include "cpu_jit.h"
#include "runtime_internal.h"

enum { STACK_BYTES = 64 << 20, ALIGN = 64 };

/* The C library functions generated host code may call. */
#define CPU_LIBM(X) \
    X(expf) X(exp) X(logf) X(log) X(sinf) X(sin) X(cosf) X(cos) X(tanf) X(tan) X(sqrtf) \
    X(sqrt) X(fmodf) X(fmod) X(exp2f) X(exp2) X(log2f) X(log2) X(log10f) X(log10) X(powf) \
    X(pow) X(tanhf) X(tanh) X(erff) X(erf) X(atanf) X(atan) X(atan2f) X(atan2) X(asinf) \
    X(asin) X(acosf) X(acos) X(sinhf) X(sinh) X(coshf) X(cosh) X(expm1f) X(expm1) \
    X(log1pf) X(log1p) X(fabsf) X(fabs) X(floorf) X(floor) X(ceilf) X(ceil) X(roundf) \
    X(round) X(truncf) X(trunc) X(rintf) X(rint) X(nearbyintf) X(nearbyint) X(fminf) \
    X(fmin) X(fmaxf) X(fmax) X(fmaf) X(fma) X(memcpy) X(memset) X(memmove)

/* LLVM's x86 code keeps bf16 values in f32 registers and narrows them with a call to
 * __truncsfbf2 (and widens with __extendbfsf2), which libgcc before GCC 13 lacks. These follow
 * that ABI (the 16 bits in the low half of a float register, as for _Float16): round to
 * nearest even, NaN stays a quiet NaN. */
static _Float16 bf16_from_f32(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    uint16_t r = isnan(x) ? (uint16_t)((u >> 16) | 0x40) : (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
    _Float16 h;
    memcpy(&h, &r, 2);
    return h;
}

static float f32_from_bf16(_Float16 h)
{
    uint16_t r;
    memcpy(&r, &h, 2);
    uint32_t u = (uint32_t)r << 16;
    float x;
    memcpy(&x, &u, 4);
    return x;
}

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

static void describe_host(CpuDev *d, const char *what, const char *cache_tag)
{
    char *cpu = LLVMGetHostCPUName(), *features = codegen_host_features();
    char *triple = LLVMGetDefaultTargetTriple();
    snprintf(d->name, sizeof d->name, "%s (%s, %d threads)", what, cpu, cpu_pool_size(d->pool));
    /* code is compiled for this CPU's features: they belong in the disk cache's key */
    snprintf(d->cache_id, sizeof d->cache_id, "%s%s|%s|%016llx", cache_tag, triple, cpu,
             (unsigned long long)rt_hash64(features, strlen(features)));
    LLVMDisposeMessage(cpu);
    LLVMDisposeMessage(features);
    LLVMDisposeMessage(triple);
}

enum { MAX_WORKERS = 1024 };

/* $TILE_CPU_THREADS, else one per core (a bad value is logged: env.c). */
static int worker_count(void)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    cores = cores < 1 ? 1 : cores > MAX_WORKERS ? MAX_WORKERS : cores;
    return (int)rt_env_long("TILE_CPU_THREADS", 1, MAX_WORKERS, cores, "one per core");
}

tile_Status cj_open(void **out, const char *what, const char *cache_tag,
                    const CjSymbol *extra, int nextra, char *err)
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
    d->extra = extra;
    d->nextra = nextra;
    describe_host(d, what, cache_tag);
    *out = d;
    return TILE_OK;
}

void cj_close(void *dev)
{
    CpuDev *d = dev;
    cpu_pool_free(d->pool);
    LLVMErrorRef e = LLVMOrcDisposeLLJIT(d->jit);
    if (e)
        LLVMConsumeError(e);
    pthread_mutex_destroy(&d->jit_lock);
    free(d->free_dylibs);
    free(d);
}

const char *cj_device_name(void *dev) { return ((CpuDev *)dev)->name; }
const char *cj_cache_id(void *dev) { return ((CpuDev *)dev)->cache_id; }
const char *cj_no_fallback(void *dev) { return NULL; }

const char *cj_driver_version(void *dev)
{
    (void)dev;
    return "";
}

void cj_max_grid(void *dev, unsigned long long out[3])
{
    out[0] = out[1] = out[2] = INT32_MAX; /* program ids are i32 */
}

/* ---- memory ---- */
/* The host's physical memory in bytes (0: unknown). A larger request cannot be met, and
 * asking malloc for it anyway may abort under sanitizers instead of returning NULL. */
static size_t host_memory_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0 || (unsigned long)pages > SIZE_MAX / (unsigned long)page)
        return 0;
    return (size_t)pages * (size_t)page;
}

tile_Status cj_malloc(void *dev, size_t bytes, tile_DevPtr *out, char *err)
{
    size_t rounded = (bytes + ALIGN - 1) / ALIGN * ALIGN, host = host_memory_bytes();
    if (host && bytes > host) {
        snprintf(err, BK_ERR_MAX, "%zu bytes is more than the host's %zu bytes of memory",
                 bytes, host);
        return TILE_ERROR_OUT_OF_MEMORY;
    }
    void *p = rounded >= bytes ? aligned_alloc(ALIGN, rounded) : NULL;
    if (!p) {
        snprintf(err, BK_ERR_MAX, "out of host memory allocating %zu bytes", bytes);
        return TILE_ERROR_OUT_OF_MEMORY;
    }
    *out = (tile_DevPtr)(uintptr_t)p;
    return TILE_OK;
}

tile_Status cj_free(void *dev, tile_DevPtr p, char *err)
{
    free((void *)(uintptr_t)p);
    return TILE_OK;
}

/* memmove: device memory is host memory here, so a caller's host buffer may overlap it. */
tile_Status cj_h2d(void *dev, tile_DevPtr dst, const void *src, size_t n, char *err)
{
    memmove((void *)(uintptr_t)dst, src, n);
    return TILE_OK;
}

tile_Status cj_d2h(void *dev, void *dst, tile_DevPtr src, size_t n, char *err)
{
    memmove(dst, (const void *)(uintptr_t)src, n);
    return TILE_OK;
}

tile_Status cj_memset(void *dev, tile_DevPtr dst, int byte, size_t n, char *err)
{
    memset((void *)(uintptr_t)dst, byte, n);
    return TILE_OK;
}

tile_Status cj_sync(void *dev, char *err) { return TILE_OK; }

/* ---- code ---- */
tile_Status cj_finalize(void *dev, const void *code, size_t size, CodeKind kind, void **out,
                        size_t *out_size, char *err)
{
    return bk_copy_image("CPU", CODE_HOST_OBJECT, code, size, kind, out, out_size, err);
}

static void symbol_pair(CpuDev *d, LLVMOrcCSymbolMapPair *pair, const char *fn, void *addr)
{
    pair->Name = LLVMOrcLLJITMangleAndIntern(d->jit, fn); /* with the platform's prefix */
    pair->Sym.Address = (LLVMOrcExecutorAddress)(uintptr_t)addr;
    pair->Sym.Flags.GenericFlags = LLVMJITSymbolGenericFlagsExported |
                                   LLVMJITSymbolGenericFlagsCallable;
    pair->Sym.Flags.TargetFlags = 0;
}

/* The C library's math functions and the backend's symbols, as absolute symbols. */
static LLVMErrorRef define_symbols(CpuDev *d, LLVMOrcJITDylibRef jd)
{
    static const CjSymbol libm[] = {
#define X(f) { #f, (void *)f },
        CPU_LIBM(X)
#undef X
        { "__truncsfbf2", (void *)bf16_from_f32 }, { "__extendbfsf2", (void *)f32_from_bf16 },
    };
    enum { N = sizeof libm / sizeof libm[0] };
    LLVMOrcCSymbolMapPair *pairs = malloc(sizeof *pairs * (size_t)(N + d->nextra));
    if (!pairs)
        return LLVMCreateStringError("out of memory");
    for (int i = 0; i < N + d->nextra; i++) {
        const CjSymbol *s = i < N ? &libm[i] : &d->extra[i - N];
        symbol_pair(d, &pairs[i], s->name, s->addr);
    }
    LLVMOrcMaterializationUnitRef mu = LLVMOrcAbsoluteSymbols(pairs, (size_t)(N + d->nextra));
    free(pairs);
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
    rt_count_jit_dylib();
    LLVMErrorRef e = define_symbols(d, *jd);
    LLVMOrcDefinitionGeneratorRef gen;
    if (!e)
        e = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
            &gen, LLVMOrcLLJITGetGlobalPrefix(d->jit), NULL, NULL);
    if (!e)
        LLVMOrcJITDylibAddGenerator(*jd, gen); /* anything else: this process's symbols */
    return e;
}

/* A dylib for one object, under jit_lock: a cleared one from the free list, else a new one.
 * Clearing removed the absolute symbols with everything else, so they are defined again; the
 * generator for this process's symbols is not a definition and stays. */
static LLVMErrorRef take_dylib(CpuDev *d, LLVMOrcJITDylibRef *jd)
{
    if (!d->nfree)
        return new_dylib(d, jd);
    *jd = d->free_dylibs[d->nfree - 1];
    LLVMErrorRef e = define_symbols(d, *jd);
    if (!e)
        d->nfree--; /* else it stays on the list, still empty */
    return e;
}

/* Clears jd (its code and every symbol) and keeps it for a later load, under jit_lock. One
 * that does not clear cleanly, or finds no room on the list, stays in the session unused. */
static void give_back_dylib(CpuDev *d, LLVMOrcJITDylibRef jd)
{
    LLVMErrorRef e = LLVMOrcJITDylibClear(jd);
    if (e) {
        LLVMConsumeError(e);
        return;
    }
    if (d->nfree == d->free_cap) {
        int cap = d->free_cap ? 2 * d->free_cap : 8;
        LLVMOrcJITDylibRef *p = realloc(d->free_dylibs, sizeof *p * (size_t)cap);
        if (!p)
            return;
        d->free_dylibs = p;
        d->free_cap = cap;
    }
    d->free_dylibs[d->nfree++] = jd;
}

tile_Status cj_load(void *dev, const void *image, size_t size, void **mod, char *err)
{
    CpuDev *d = dev;
    LLVMOrcJITDylibRef jd;
    pthread_mutex_lock(&d->jit_lock);
    LLVMErrorRef e = take_dylib(d, &jd);
    if (!e) {
        LLVMMemoryBufferRef buf =
            LLVMCreateMemoryBufferWithMemoryRangeCopy(image, size, "tile-kernel.o");
        e = LLVMOrcLLJITAddObjectFile(d->jit, jd, buf); /* takes buf, even when it fails */
        if (e)
            give_back_dylib(d, jd);
    }
    pthread_mutex_unlock(&d->jit_lock);
    if (e) {
        llvm_error(e, err, "cannot load the host object");
        return TILE_ERROR_COMPILE;
    }
    *mod = jd;
    return TILE_OK;
}

void cj_unload(void *dev, void *mod)
{
    CpuDev *d = dev;
    pthread_mutex_lock(&d->jit_lock);
    give_back_dylib(d, mod); /* frees its code; the empty dylib serves the next load */
    pthread_mutex_unlock(&d->jit_lock);
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

tile_Status cj_get_function(void *dev, void *mod, const char *symbol, int smem, void **fn,
                            char *err)
{
    CpuDev *d = dev;
    LLVMOrcExecutionSessionRef es = LLVMOrcLLJITGetExecutionSession(d->jit);
    LLVMOrcCJITDylibSearchOrderElement order = { mod, LLVMOrcJITDylibLookupFlagsMatchAllSymbols };
    /* the platform's prefix added by LLVM: a symbol of any length */
    LLVMOrcCLookupSetElement sym = { LLVMOrcLLJITMangleAndIntern(d->jit, symbol),
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

/* ---- for the tuner ---- */
void cj_limits(void *dev, BkLimits *out)
{
    (void)dev;
    long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (llc <= 0)
        llc = sysconf(_SC_LEVEL2_CACHE_SIZE);
    *out = (BkLimits){ 0, 0, 0, llc > 0 ? llc : 0 };
}

double cj_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}
