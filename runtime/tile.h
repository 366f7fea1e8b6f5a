/* tile.h: the public API of libtile, the tile runtime.
 * Open a context on a backend, load a module of .tile source, get a kernel, allocate device
 * memory, launch. Every function returns a tile_Status; tile_error(ctx) explains the last
 * failure. The library never prints (unless asked to through a log callback) and never exits.
 * A wrong call costs an error status, not the host's memory; what a kernel does once launched
 * is another matter: a load or store past the end of its buffers is the kernel's bug, as on a
 * GPU, and on the CPU backend (host memory, no guard) it can corrupt this process's memory.
 *
 *   tile_Context *ctx;  tile_Module *mod;  tile_Kernel *k;
 *   tile_context_open(TILE_BACKEND_AUTO, &ctx);
 *   tile_module_load_file(ctx, "examples/add.tile", &mod);
 *   tile_kernel_get(mod, "add", &k);
 *   tile_Arg args[] = { tile_ptr(x), tile_ptr(y), tile_ptr(out), tile_i32(n) };
 *   tile_launch(k, args, 4, NULL, 0);
 *   tile_synchronize(ctx);
 */
#ifndef TILE_H
#define TILE_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TILE_VERSION_MAJOR 0
#define TILE_VERSION_MINOR 1
#define TILE_VERSION_PATCH 0
#define TILE_VERSION "0.1.0"
/* The version of the library in use ("0.1.0"), which may differ from the header's. */
const char *tile_version(void);

typedef enum tile_Status {
    TILE_OK = 0,
    TILE_ERROR_INVALID_ARGUMENT, /* a bad argument: NULL, wrong count or kind of launch args */
    TILE_ERROR_COMPILE,          /* the source or a specialization did not compile */
    TILE_ERROR_NOT_FOUND,        /* no such kernel, file or const parameter */
    TILE_ERROR_NO_DEVICE,        /* the requested backend has no usable device or driver */
    TILE_ERROR_DEVICE,           /* the device or driver reported an error */
    TILE_ERROR_OUT_OF_MEMORY,
    TILE_ERROR_IO,               /* reading a file or the cache failed */
    TILE_ERROR_UNSUPPORTED,      /* valid request the chosen backend cannot do yet */
    TILE_ERROR_ASSERT,           /* a device_assert failed in the launched kernel (the message
                                    names its file:line:col, program and element) */
} tile_Status;

typedef enum tile_Backend {
    TILE_BACKEND_AUTO = 0, /* CUDA when an NVIDIA GPU is found, else HIP when an AMD one is,
                              else the CPU */
    TILE_BACKEND_CPU,
    TILE_BACKEND_CUDA,
    TILE_BACKEND_HIP,
    TILE_BACKEND_SIM,      /* the GPU code path emulated on the CPU: warps of 32 threads, shared
                            * memory, barrier and race checking; slow, for testing and debugging */
} tile_Backend;

/* Handles are checked: a NULL, closed (context) or freed (module, and its kernels) handle
 * is TILE_ERROR_INVALID_ARGUMENT with the message in tile_error(NULL); closing or freeing
 * one twice does nothing. The calls that may run a callback (tile_launch, tile_launch_grid,
 * tile_tune, tile_module_load_*, tile_set_log: the log sink, the tuning progress callback)
 * hold their context, and their kernel's module, until they return: tile_context_close or
 * tile_module_free of a held one, from such a callback or from another thread, does nothing
 * and says why in tile_error(NULL) ("tile_context_close: refused: tile_launch is in progress
 * on this context ..."); close or free it after the call returns. Freeing a handle while
 * another thread uses it in any other call is not checked. */
typedef struct tile_Context tile_Context;
typedef struct tile_Module tile_Module;
typedef struct tile_Kernel tile_Kernel;

/* A device address (a CUdeviceptr, or a host pointer on the CPU backend). */
typedef uint64_t tile_DevPtr;

/* ---- contexts ----
 * Environment: TILE_BACKEND=cpu|cuda|hip|sim overrides TILE_BACKEND_AUTO; TILE_CPU_THREADS sets
 * the CPU (and sim) backend's worker count, 1 to 1024 (default: one per core; another value
 * is ignored and logged once to the first log sink set); TILE_SIM_STRICT=0 lets the
 * sim backend accept equal-value stores of several threads to the same shared bytes between
 * two barriers (reported as races by default). Compiled code is cached on disk under
 * $TILE_CACHE_DIR/kernels (default $XDG_CACHE_HOME/tile or ~/.cache/tile); TILE_CACHE_DIR=
 * (empty) or TILE_NO_DISK_CACHE=1 turns that off (a directory longer than PATH_MAX turns it
 * off too, with a warning to the log). TILE_PATH, a colon-separated list of
 * directories, is where a module's `import "PATH";` looks after the importing file's own
 * directory and tile_set_import_path's directories, before the standard library. */
tile_Status tile_context_open(tile_Backend backend, tile_Context **out);
/* The same on device number `device` (0-based; CUDA: the driver's device order, as
 * CUDA_VISIBLE_DEVICES leaves it; the CPU and sim backends have device 0 only): a device that
 * does not exist is TILE_ERROR_NO_DEVICE, naming how many there are. Several contexts, on one
 * device or on several, may be open at once in one process. */
tile_Status tile_context_open_device(tile_Backend backend, int device, tile_Context **out);
void tile_context_close(tile_Context *ctx); /* frees its modules and memory */
/* The message of the last failure on this context ("" if none): the calling thread's copy,
 * valid at least until this thread's next tile_error call (other threads' failures on the
 * context do not free it).
 * tile_error(NULL) says why this thread's last call failed that had no live context to
 * report on: tile_context_open, or a call given a NULL, closed or freed handle. */
const char *tile_error(const tile_Context *ctx);
tile_Backend tile_backend(const tile_Context *ctx);
const char *tile_backend_name(tile_Backend backend); /* "cpu", "cuda", "hip", "sim" */
const char *tile_device_name(const tile_Context *ctx); /* e.g. "NVIDIA H100 80GB HBM3" */
const char *tile_device_arch(const tile_Context *ctx); /* "sm_90", "host" */

/* Optional log sink (compile diagnostics as warnings, cache activity). It runs inside the
 * call that logs, on its thread or a tuning's compile threads; it may call the API, even
 * launch again, but not close that call's context or free its module (refused, see above). */
typedef void (*tile_LogFn)(void *user, const char *message);
void tile_set_log(tile_Context *ctx, tile_LogFn fn, void *user);

/* ---- modules and kernels ---- */
/* `name` is used in diagnostics ("file:line:col: error: ..."); a relative import looks in its
 * directory first when it has one (docs/language.md, "Imports"). */
tile_Status tile_module_load_string(tile_Context *ctx, const char *name, const char *source,
                                    tile_Module **out);
/* Reads regular files of at most 64 MiB only (a directory, FIFO or device is TILE_ERROR_IO).
 * A relative path that names no file here (and does not start with ./ or ../) is looked for
 * along the import search path: tile_set_import_path's directories, $TILE_PATH, the standard
 * library, so "attention/flash_fwd.tile" is the stdlib's kernel. */
tile_Status tile_module_load_file(tile_Context *ctx, const char *path, tile_Module **out);
void tile_module_free(tile_Module *mod);
/* Directories (colon-separated; NULL or "": none) where the imports of modules loaded from
 * now on look after the importing file's own directory and before $TILE_PATH. */
tile_Status tile_set_import_path(tile_Context *ctx, const char *dirs);
tile_Status tile_kernel_get(tile_Module *mod, const char *name, tile_Kernel **out);

/* The kernels of a module: count, and the name of kernel i (0-based, in source order; NULL
 * when i is out of range or mod is not a live module). */
int tile_module_num_kernels(tile_Module *mod);
const char *tile_module_kernel_name(tile_Module *mod, int i);

/* ---- kernel parameters ----
 * What a language binding needs to check and convert arguments without reading the source:
 * every parameter in declaration order. Runtime parameters (what tile_launch's args are, in
 * that order) have is_const 0; const parameters are given by name (tile_Const). */
typedef struct tile_Param {
    const char *name;
    int is_pointer;   /* a pointer: the argument is a tile_ptr */
    int is_const;     /* a const parameter */
    const char *type; /* element type: "f32", "i64", "bf16", "bool", ... (the pointee's) */
} tile_Param;
/* Number of parameters (runtime and const); -1 when k is not a live kernel. */
int tile_kernel_num_params(tile_Kernel *k);
/* Parameter i of k into *out (strings live as long as the module). */
tile_Status tile_kernel_param(tile_Kernel *k, int i, tile_Param *out);

/* ---- memory ----
 * The context knows its memory: what tile_malloc gave out, and ranges the caller lends it
 * with tile_borrow. Copies and memsets must lie inside one such allocation or range (an
 * offset into it is fine); past its end, freed, another context's or unknown memory is
 * TILE_ERROR_INVALID_ARGUMENT. tile_free(ctx, 0) does nothing; freeing an address this
 * context did not allocate, an offset into an allocation, or one freed already is
 * TILE_ERROR_INVALID_ARGUMENT. Device memory is at least 64-byte aligned. */
tile_Status tile_malloc(tile_Context *ctx, size_t bytes, tile_DevPtr *out);
tile_Status tile_free(tile_Context *ctx, tile_DevPtr ptr);
tile_Status tile_copy_to_device(tile_Context *ctx, tile_DevPtr dst, const void *src, size_t bytes);
tile_Status tile_copy_to_host(tile_Context *ctx, void *dst, tile_DevPtr src, size_t bytes);
tile_Status tile_memset(tile_Context *ctx, tile_DevPtr dst, int byte, size_t bytes);
/* Lends the context `bytes` of memory allocated elsewhere (a framework's tensor, cuMemAlloc;
 * host memory on the CPU and sim backends) so kernels, copies and memsets may use it. The
 * caller vouches that [ptr, ptr + bytes) is valid device memory (host memory on the CPU and
 * sim backends) until tile_unborrow; it may not overlap memory the context already knows.
 * tile_unborrow takes the same ptr; tile_context_close forgets borrowed ranges without
 * freeing them. */
tile_Status tile_borrow(tile_Context *ctx, tile_DevPtr ptr, size_t bytes);
tile_Status tile_unborrow(tile_Context *ctx, tile_DevPtr ptr);
tile_Status tile_synchronize(tile_Context *ctx);

/* ---- streams ----
 * tile_set_stream: this context's launches go on `stream`, a CUstream the caller created on the
 * context's device (NULL: the default stream, as after tile_context_open); the caller keeps
 * it alive while it is set. Launches are asynchronous on a stream; copies, memsets and
 * tile_synchronize stay synchronous (default stream, whole device). The CPU and sim backends
 * have only the default stream: any other is TILE_ERROR_UNSUPPORTED.
 * CUDA graphs: launches on a stream being captured (cuStreamBeginCapture) are recorded into
 * the graph. Inside a capture nothing synchronizes or times: a launch whose configuration
 * would be tuned uses the tuning cache's choice, else the fallback (first) configuration,
 * and logs that it did; tile_tune, tile_synchronize, copies and memsets fail with
 * TILE_ERROR_INVALID_ARGUMENT. Launch each kernel once before capturing: its first launch
 * compiles and loads code, which a capture may not allow. */
tile_Status tile_set_stream(tile_Context *ctx, void *stream);

/* ---- timing on the stream ----
 * An event marks a point in the work of its context's launch stream: tile_event_record puts it
 * after everything launched there so far; tile_event_elapsed waits until `end` has passed and
 * gives the milliseconds between two recorded events of one context (CUDA and HIP events,
 * about 0.5 us resolution). The CPU and sim backends, whose launches finish before tile_launch
 * returns, use the host's monotonic clock at the time of recording. Recording is allowed inside
 * a graph capture; tile_event_elapsed is not (it waits). Destroy events before their context
 * (after it, tile_event_destroy only frees the handle). */
typedef struct tile_Event tile_Event;
tile_Status tile_event_create(tile_Context *ctx, tile_Event **out);
tile_Status tile_event_record(tile_Event *event);
tile_Status tile_event_elapsed(tile_Event *start, tile_Event *end, float *ms);
void tile_event_destroy(tile_Event *event);

/* ---- launching ---- */
typedef enum tile_ArgKind { TILE_ARG_PTR, TILE_ARG_INT, TILE_ARG_FLOAT } tile_ArgKind;
typedef struct tile_Arg {
    tile_ArgKind kind;
    union {
        tile_DevPtr ptr;
        int64_t i;
        double f;
    } v;
} tile_Arg;
static inline tile_Arg tile_ptr(tile_DevPtr p) { tile_Arg a; a.kind = TILE_ARG_PTR; a.v.ptr = p; return a; }
static inline tile_Arg tile_int(int64_t i) { tile_Arg a; a.kind = TILE_ARG_INT; a.v.i = i; return a; }
static inline tile_Arg tile_float(double f) { tile_Arg a; a.kind = TILE_ARG_FLOAT; a.v.f = f; return a; }
/* For a u64 parameter an integer's 64 bits are its value, so tile_u64 passes 0 to 2^64 - 1
 * (tile_int(-1) is 2^64 - 1 there too); for other parameters it is tile_int of the same bits. */
static inline tile_Arg tile_u64(uint64_t u) { tile_Arg a; a.kind = TILE_ARG_INT; a.v.i = (int64_t)u; return a; }
#define tile_i32 tile_int
#define tile_i64 tile_int
#define tile_f32 tile_float

/* A value for a const parameter, by name (also "num_warps", "num_stages"). */
typedef struct tile_Const {
    const char *name;
    int64_t value;
} tile_Const;

/* Launches `k` over the grid of its @grid annotation (1,1,1 without one). `args` are the
 * kernel's runtime (non-const) parameters in declaration order; integers are converted to
 * the parameter's type (range-checked: 300 for an i8 is TILE_ERROR_INVALID_ARGUMENT; u64 see
 * tile_u64), numbers to a float parameter's type rounding to nearest (a finite value that
 * would round to infinity, 1e10 for an f16, is TILE_ERROR_INVALID_ARGUMENT; inf and nan pass;
 * fp8 saturates); a pointer must point into memory
 * of k's context (a tile_malloc allocation or a tile_borrow'ed range, at any offset; not
 * NULL, on every backend: host memory too must be borrowed on the CPU backend). Const
 * parameters not given take their default or first @tune candidate. The first launch of a specialization compiles it
 * (or finds it in the compiled-code cache). Asynchronous on GPUs: tile_synchronize waits;
 * synchronous on the CPU. A grid with a zero dimension launches nothing and returns TILE_OK;
 * a dimension past the device's limit (2^31 - 1 on the CPU and sim backends), or more than
 * 2^63 - 1 programs in all, is TILE_ERROR_INVALID_ARGUMENT. Only where a pointer starts is
 * checked: a kernel that loads or stores past the end of its buffers is wrong (mask its
 * accesses), and on the CPU backend its stores land in this process's heap.
 * Messages number arguments from 1: "argument 3 ('n') expects an integer, got a pointer".
 * Several threads may launch on one context at once. */
tile_Status tile_launch(tile_Kernel *k, const tile_Arg *args, int nargs,
                        const tile_Const *consts, int nconsts);
/* Same, with an explicit grid (overrides @grid). */
tile_Status tile_launch_grid(tile_Kernel *k, const unsigned grid[3], const tile_Arg *args,
                             int nargs, const tile_Const *consts, int nconsts);


/* ---- tuning ----
 * A kernel with @tune is tuned per key (its @key values): on a launch that does not give
 * every tuned const, the runtime uses the key's chosen configuration, from memory, else from
 * the tuning cache ($TILE_CACHE_DIR/tuning, default ~/.cache/tile/tuning), else by tuning now:
 * every configuration that satisfies the @constraints is compiled (in parallel, on every
 * core) and timed (warm-up, then the median of several runs; on GPUs with device events and
 * the L2 cache flushed before each run); the fastest wins (ties: the earlier in enumeration
 * order) and is saved, so every later process uses the same one. Giving every tuned const
 * pins a configuration and skips all of this. Buffers named in @reset are zeroed before each
 * timed run and once after tuning; those in @restore are saved before tuning and copied back
 * before each run and after tuning, so accumulating kernels see one launch's effect.
 * Modes: AUTO tunes unseen keys; CACHED (serving) never times: an unseen key runs the
 * fallback configuration (the first one the constraints allow, in enumeration order), logged
 * once per key to the log sink; OFF uses given values, defaults and first candidates, like a
 * kernel without @tune. Tuned consts the caller gives narrow the candidates (all of them
 * given: pinned, not checked); otherwise a launch never runs a configuration its @constraints
 * do not allow: OFF's defaults, where they do not allow them, give way to the first
 * configuration they allow (as CACHED's fallback), and where none is allowed (any mode) it is
 * TILE_ERROR_INVALID_ARGUMENT ("... no configuration of its @tune space satisfies its
 * @constraint with n=16"). Default: $TILE_TUNE
 * (auto|cached|off), else AUTO on GPUs and OFF on the CPU and sim backends (whose timings say
 * little about GPU kernels). TILE_PRINT_AUTOTUNING=1 logs each choice (kernel, key, config, where
 * it came from, time) to the log sink, or to stderr without one. Searching: exhaustive;
 * TILE_TUNE_SEARCH=random with TILE_TUNE_SAMPLES=N times N configurations chosen by a
 * deterministic function of the key; TILE_TUNE_BUDGET=SECONDS stops timing new ones.
 * Isolation: on CUDA (TILE_TUNE_ISOLATE=0|1 overrides, also for the CPU) configurations run in
 * a `tilec tune-worker` process on copies of the arguments, so one that faults is recorded as
 * failed without harming this context; TILE_TUNE_WORKER names the tilec to run. A value of
 * these variables that does not parse is logged once, naming what is used instead. */
typedef enum tile_Tuning {
    TILE_TUNING_AUTO = 1,
    TILE_TUNING_CACHED,
    TILE_TUNING_OFF,
} tile_Tuning;
tile_Status tile_set_tuning(tile_Context *ctx, tile_Tuning mode); /* another mode: an error */

typedef enum tile_TuneStatus {
    TILE_TUNE_OK,      /* timed (now, or earlier: from the cache) */
    TILE_TUNE_FAILED,  /* did not compile, load or run: see reason */
    TILE_TUNE_PRUNED,  /* cannot fit the device (shared memory, registers, threads) */
    TILE_TUNE_SKIPPED, /* not timed: outside the random sample or past the time budget */
} tile_TuneStatus;

typedef struct tile_TuneResult {
    const char *config; /* "BLOCK_M=64,BLOCK_N=32,num_warps=4" */
    tile_TuneStatus status;
    double ms;          /* median time of one launch (TILE_TUNE_OK) */
    double compile_ms;  /* compile time of this configuration (0 if not compiled now) */
    const char *reason; /* why it failed, was pruned or skipped ("" otherwise) */
    int cached;         /* the result came from the cache, it was not timed now */
    int index;          /* position in enumeration order */
    int local_bytes;    /* local memory per thread of its code (register spills, stack), in
                           bytes, as the device reports it; -1 where not known */
} tile_TuneResult;

/* What tile_tune reports; owned by the kernel, valid until its module is freed (a later
 * tile_tune, from any thread, leaves it alone; each report takes memory until then). */
typedef struct tile_TuneReport {
    const char *key;                /* the tuning key, e.g. "n=4096;" */
    const tile_TuneResult *results; /* ranked: timed by time, then failed, pruned, skipped */
    int nresults;
    int best;                       /* index into results of the chosen one, -1 if none */
    int total, timed, failed, pruned, cached, skipped;
    double wall_s, compile_wall_s, compile_cpu_s, timing_s;
    int threads;                    /* compile threads used */
} tile_TuneReport;

typedef struct tile_TuneProgress {
    const char *phase;  /* "compile" or "time" */
    int done, total;    /* configurations finished in this phase / in it */
    int failed;         /* failed or pruned so far */
    double best_ms;     /* < 0: none yet */
    const char *best_config;
    double eta_s;       /* estimated seconds left, < 0 unknown */
} tile_TuneProgress;

/* A negative count, or a budget_s that is negative, inf or nan, is TILE_ERROR_INVALID_ARGUMENT
 * naming the field (the rules of the matching environment variables; 0 is the default). */
typedef struct tile_TuneOptions {
    int force;        /* re-time configurations the cache has results for */
    int reps;         /* most timed runs per configuration, >= 0 (0: about 100 ms' worth, 3 to
                         100) */
    double budget_s;  /* stop timing new configurations after this many seconds, finite, >= 0
                         (0: $TILE_TUNE_BUDGET) */
    int samples;      /* > 0: time this many, sampled (0: $TILE_TUNE_SEARCH/SAMPLES) */
    void (*progress)(void *user, const tile_TuneProgress *p); /* may be NULL; may not
                                 close the kernel's context or free its module (refused) */
    void *user;
} tile_TuneOptions;

/* Tunes k ahead of time for the key of these arguments (as tile_launch takes them; consts
 * given fix those values and are seen by constraints), whatever the mode; stores the result
 * in the cache and in memory so later launches with this key use it. `opts` may be NULL.
 * *report (may be NULL) receives the ranked results. Does not launch the chosen config.
 * args and consts are checked as tile_launch checks them (same statuses and messages: an
 * unknown const is TILE_ERROR_NOT_FOUND). When no configuration worked (each one failed to
 * compile, load or run, timed out, was pruned or skipped) it returns TILE_ERROR_COMPILE, the
 * message saying so with the first failure's configuration and reason; *report still
 * receives the results (best is -1). */
tile_Status tile_tune(tile_Kernel *k, const tile_Arg *args, int nargs, const tile_Const *consts,
                      int nconsts, const tile_TuneOptions *opts, const tile_TuneReport **report);

#ifdef __cplusplus
}
#endif
#endif
