/* runtime_internal.h: what the runtime's files share and tile.h hides: the context, module
 * and kernel records, the specialization cache, error helpers, hashing, and counters that the
 * tests read (compiles done, disk cache hits). Prefix rt_ throughout. */
#ifndef TILE_RUNTIME_INTERNAL_H
#define TILE_RUNTIME_INTERNAL_H
#include <pthread.h>
#include <stdint.h>
#include "backend.h"
#include "driver.h"
#include "tile.h"

/* ---- a map from 64-bit keys to non-NULL pointers (open addressing) ---- */
typedef struct RtMap {
    uint64_t *keys;
    void **vals; /* NULL marks an empty slot */
    size_t cap, len;
} RtMap;
void *rtmap_get(const RtMap *m, uint64_t key);
int rtmap_put(RtMap *m, uint64_t key, void *val); /* 0, or -1 when out of memory */
void *rtmap_remove(RtMap *m, uint64_t key);       /* the removed value or NULL */
void rtmap_free(RtMap *m);

/* ---- a context's live device memory: disjoint ranges sorted by base (ranges.c) ---- */
typedef struct RtRange {
    uint64_t base;
    size_t size;
    int borrowed; /* from tile_borrow, not tile_malloc */
    int empty;    /* tile_malloc(ctx, 0): one byte held (a distinct address), none usable */
} RtRange;
typedef struct RtRanges {
    RtRange *items;
    size_t len, cap;
} RtRanges;
enum { RTRANGES_OVERLAP = -1, RTRANGES_NOMEM = -2 };
/* 0, RTRANGES_OVERLAP (empty, wrapping past 2^64 or overlapping a range) or RTRANGES_NOMEM. */
int rtranges_add(RtRanges *r, uint64_t base, size_t size, int borrowed);
/* Removes the range starting exactly at base into *out: 0, or -1 when none starts there. */
int rtranges_remove(RtRanges *r, uint64_t base, RtRange *out);
const RtRange *rtranges_find(const RtRanges *r, uint64_t addr); /* the range holding addr */
/* The range holding all of [addr, addr + bytes), or NULL. */
const RtRange *rtranges_find_span(const RtRanges *r, uint64_t addr, size_t bytes);
void rtranges_free(RtRanges *r);

/* ---- live handles (handles.c) ---- */
typedef enum RtHandleKind { RT_CONTEXT = 1, RT_MODULE, RT_KERNEL, RT_EVENT } RtHandleKind;
int rt_handle_add(const void *h, RtHandleKind kind); /* 0, or -1 when out of memory */
void rt_handle_remove(const void *h);
int rt_handle_live(const void *h, RtHandleKind kind);
/* TILE_OK when h is a live handle of this kind, else TILE_ERROR_INVALID_ARGUMENT with the
 * thread's error message (tile_error(NULL)) naming the function `fn`. */
tile_Status rt_handle_check(const void *h, RtHandleKind kind, const char *fn);
/* Frees a dead handle's memory after the quarantine (see handles.c). */
void rt_handle_retire(void *block);
/* Calls in progress. A call that may run the caller's callbacks (a log sink, a tuning progress
 * callback) holds the context it works on, and the module when it works on a kernel, from
 * rt_call_enter to rt_call_leave. rt_call_enter checks h as rt_handle_check does (a kernel's
 * module and context must be live too). */
typedef struct RtCall {
    tile_Context *ctx;
    tile_Module *mod; /* NULL for a call on a context */
} RtCall;
tile_Status rt_call_enter(const void *h, RtHandleKind kind, const char *fn, RtCall *call);
void rt_call_leave(const RtCall *call);
/* The call in progress on ctx on the calling thread (so the caller is one of its callbacks),
 * or NULL. */
const char *rt_call_on_this_thread(const tile_Context *ctx);
/* Retires the live context or module h from the registry unless a call holds it: TILE_OK,
 * else TILE_ERROR_INVALID_ARGUMENT with the thread's message (dead, NULL, or in use by the
 * call named). After TILE_OK no call can enter h. */
tile_Status rt_handle_release(const void *h, RtHandleKind kind, const char *fn);
/* The thread's last error that had no live context to go to (tile_error(NULL)). */
tile_Status rt_thread_error(tile_Status st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
const char *rt_thread_error_text(void);
void rt_thread_error_clear(void);

/* ---- hashing (BLAKE3, bundled with LLVM) ---- */
uint64_t rt_hash64(const void *data, size_t n);

/* ---- records ---- */
typedef struct KParam {
    const char *name;
    int is_ptr;
    ElemKind elem; /* scalar type; ET_VOID when the AST names no known type */
} KParam;

struct tile_Kernel {
    tile_Module *mod;
    const Func *func;
    KParam *params; /* runtime (non-const) params in declaration order */
    int nparams;
    const Expr *grid[3]; /* @grid expressions; ngrid == 0: grid (1,1,1) */
    int ngrid;
    struct KTune *_Atomic tune; /* tuning state (tuner/tune_state.c), made on first launch */
};

/* One compiled and loaded specialization (kernel + const values + target). */
typedef struct Spec {
    char *key;
    struct Spec *next; /* same 64-bit hash */
    void *bk_mod, *fn;
    int num_threads, smem_bytes;
    int nparams;
    ElemKind *elems; /* runtime param types, ET_PTR for pointers */
    struct DebugSiteInfo *sites; /* print and device_assert sites (malloc'ed), NULL: none; */
    int nsites;                  /* with any, the code takes the debug buffer after elems */
} Spec;

struct tile_Module {
    tile_Context *ctx;
    tile_Module *next; /* in ctx->modules */
    Arena *arena;      /* source text and AST */
    SrcFile file;
    int from_file;     /* file.text was read from file.name (imports look in its directory) */
    Module *ast;       /* ast->files: every source file it was built from (imports) */
    tile_Kernel *kernels;
    int nkernels;
    pthread_mutex_t lock;         /* guards specs */
    pthread_mutex_t compile_lock; /* one compile at a time per module (recursive) */
    RtMap specs;                  /* hash of key -> Spec chain */
    int calls;                    /* calls in progress on its kernels (rt_call_enter), */
    const char *call_fn;          /* the first of which; both under the handles' lock */
};

typedef struct RtChooser RtChooser; /* below: who picks tuned consts at launch */

struct tile_Context {
    const BackendOps *ops;
    void *dev;
    char target[32]; /* current tc_compile target (may fall back, e.g. sm_90a -> sm_90) */
    pthread_mutex_t lock; /* guards err, modules, allocs */
    char *err;
    tile_LogFn log;
    void *log_user;
    tile_Module *modules;
    RtRanges allocs; /* tile_malloc'ed and borrowed memory (CPU and GPU), under lock */
    _Atomic int tuning; /* tile_Tuning; 0: not set (TILE_TUNE, else auto on GPUs, off on CPU) */
    char *import_path;  /* tile_set_import_path's directories, colon-separated, or NULL */
    const RtChooser *chooser; /* picks tuned consts at launch; NULL: the defaults */
    pthread_mutex_t debug_lock; /* held from rt_debug_arm to rt_debug_report: one launch
                                   with debug sites at a time uses debug_buf */
    tile_DevPtr debug_buf;      /* print and device_assert records (debug.c) */
    int calls;                  /* calls in progress on it (rt_call_enter), the first */
    const char *call_fn;        /* of which; both under the handles' lock */
    int fork_gen;               /* rt_fork_generation() when it was opened */
};

/* How many fork()s made this process since the first context was opened: a context opened
 * before the last one belongs to the parent (its threads and device state are not in this
 * process), and every call on it is refused (context.c). */
int rt_fork_generation(void);

/* ---- errors and logging ---- */
/* Sets the context's error message and returns `st`. */
tile_Status rt_error(tile_Context *ctx, tile_Status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void rt_log(tile_Context *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- environment variables (env.c) ---- */
/* Whether a number was read from s (strtol/strtod stopped at end) and only white space
 * follows it. */
int rt_number_ends(const char *s, const char *end);
/* Whether s holds one integer in [lo, hi] (white space after it allowed), into *v. */
int rt_parse_long(const char *s, long lo, long hi, long *v);
/* $name as an integer in [lo, hi]; unset or empty: dflt; anything else: dflt, and a warning
 * ("using DFLT (WHY)"; why may be NULL) kept for the next log sink installed. */
long rt_env_long(const char *name, long lo, long hi, long dflt, const char *why);
/* Logs to ctx's sink (if it has one) the warnings no sink has heard yet. */
void rt_env_warnings_log(tile_Context *ctx);

/* 1 while the context's stream is being captured into a graph (tile_set_stream). */
int rt_capturing(tile_Context *ctx);
/* TILE_OK, or TILE_ERROR_INVALID_ARGUMENT and the message "WHAT: ... captured" when it is. */
tile_Status rt_refuse_in_capture(tile_Context *ctx, const char *what);

/* The allocation or borrowed range holding addr, copied into *out: 1, or 0 when none. */
int rt_alloc_of(tile_Context *ctx, uint64_t addr, RtRange *out);

/* ---- a deep stack for the front end and the compiler (bigstack.c) ----
 * Runs fn(arg) on a stack of at least RT_STACK_BYTES, enough for any source the front end
 * accepts: in place when the calling thread's own stack is that large (the tuner's compile
 * threads), else on a thread of its own while the caller waits (on the caller's stack when no
 * thread can be started). */
enum { RT_STACK_BYTES = 32 << 20 };
void rt_call_on_big_stack(void (*fn)(void *), void *arg);

/* ---- module source files (source_file.c) ---- */
/* Reads a regular file of at most SRC_MAX_BYTES (lang/source_read.h) into *text (malloc'ed,
 * NUL-terminated); an error status and the context's message otherwise. */
tile_Status rt_read_source(tile_Context *ctx, const char *path, char **text, size_t *len);
/* Loads a module from its text: tile_module_load_file (from_file = 1) and _string (0); the
 * tuning worker reloads a module through it as its parent loaded it. */
tile_Status rt_module_load(tile_Context *ctx, const char *name, const char *source, size_t len,
                           int from_file, tile_Module **out);
/* Unlinks a module from its context and frees it (its handles retired, or about to be). */
void rt_module_destroy(tile_Module *mod);

/* ---- print and device_assert (debug.c) ---- */
/* For a launch of s: *buf = the context's debug buffer (DEBUG_BUFFER_BYTES, made on first
 * use) with its header cleared, taking debug_lock; 0 (and no lock) when s has no debug
 * sites or on failure. */
tile_Status rt_debug_arm(tile_Context *ctx, const Spec *s, tile_DevPtr *buf);
/* Follows every rt_debug_arm that gave a buffer, whatever the launch's status `st`: when it
 * is TILE_OK and not `quiet`, waits for the launch, prints its print records to stdout in
 * order (program, run of the print, element) and returns TILE_ERROR_ASSERT naming the
 * first failed device_assert, if any (else st). Releases debug_lock. */
tile_Status rt_debug_report(tile_Context *ctx, const Spec *s, const char *name, tile_Status st,
                            int quiet);
/* Frees the context's debug buffer. */
void rt_debug_release(tile_Context *ctx);

/* ---- pieces of tile_launch ---- */
/* Checks count and kinds of args against the kernel's params (before any compile). */
tile_Status rt_args_check(tile_Kernel *k, const tile_Arg *args, int nargs);
/* What tile_launch checks of its inputs before resolving anything (tile_tune shares it): the
 * arrays (NULL or negative counts), rt_args_check, the consts' names (known, none twice). */
tile_Status rt_launch_check(tile_Kernel *k, const tile_Arg *args, int nargs,
                            const tile_Const *consts, int nconsts);
/* Converts args to the types of a specialization's params: slots[i] holds the value,
 * ptrs[i] points at it; a spec with debug sites takes `debug_buf` in one more slot (the
 * arrays hold s->nparams + 1). */
tile_Status rt_args_pack(tile_Kernel *k, const Spec *s, const tile_Arg *args,
                         tile_DevPtr debug_buf, uint64_t *slots, void **ptrs);
uint16_t rt_f16_bits(double x);
uint16_t rt_bf16_bits(double x);

/* Finds or compiles (through the disk cache) the specialization of k for `consts` (fully
 * resolved, declaration order) and the arguments' divisors `div` (one per runtime param,
 * CompileRequest.param_div; NULL: nothing known). */
tile_Status rt_spec_get(tile_Kernel *k, const ConstBinding *consts, int nconsts,
                        const unsigned char *div, Spec **out);
void rt_spec_free_all(tile_Module *mod);
void rt_current_target(tile_Context *ctx, char target[32]);
/* The divisors of these arguments (NULL on the CPU backend), in `a`. */
const unsigned char *rt_arg_divisors(tile_Kernel *k, const tile_Arg *args, Arena *a);
/* The launch grid for resolved consts: @grid over consts and integer scalar args. */
tile_Status rt_grid(tile_Kernel *k, const ConstBinding *c, int n, const tile_Arg *args,
                    Arena *a, unsigned grid[3]);

/* What a launch would run: resolved consts (tuned values chosen), grid, specialization. */
typedef struct RtLaunchPlan {
    const ConstBinding *consts; /* declaration order, in the caller's arena */
    int nconsts;
    unsigned grid[3];
    Spec *spec;
} RtLaunchPlan;
/* Makes tile_launch's decisions (tuning the key first where the context's mode says so) and
 * finds or compiles the specialization, without launching; scratch in `a`. For tilec run
 * --verbose and --cold. */
tile_Status rt_launch_plan(tile_Kernel *k, const tile_Arg *args, int nargs,
                           const tile_Const *consts, int nconsts, Arena *a, RtLaunchPlan *out);

/* ---- the disk cache of compiled code ---- */
typedef struct CacheEntry {
    char *symbol;
    int num_threads, smem_bytes;
    int nparams;
    ElemKind *elems;
    void *image; /* loadable code (host object, cubin) */
    size_t image_size;
    uint64_t code_hash; /* hash of the compiled code without its symbol name; 0: unknown */
    char *debug_sites;  /* CompiledKernel.debug_sites (malloc'ed), NULL: none */
} CacheEntry;
/* Fills `path` (PATH_MAX) with the cache file for this specialization; 0, or -1 when the
 * disk cache is disabled. */
int rt_cache_path(tile_Kernel *k, const ConstBinding *consts, int nconsts,
                  const unsigned char *div, const char *target, char *path);
/* 0 and a filled entry (free with rt_cache_entry_free), or -1 when absent or invalid (a
 * damaged file is logged to ctx's sink). */
int rt_cache_read(tile_Context *ctx, const char *path, CacheEntry *e); /* ctx may be NULL */
/* Writes atomically (temp file + rename); 0 or -1 (errors are logged, never fatal). */
int rt_cache_write(tile_Context *ctx, const char *path, const CacheEntry *e);
void rt_cache_entry_free(CacheEntry *e);

/* ---- for the tuner: many specializations built at once ---- */
/* Finds (disk cache) or compiles and finalizes one specialization into *e (free with
 * rt_cache_entry_free). Thread-safe: no context error is set; on failure *reason (in `a`
 * or static) says why. */
tile_Status rt_spec_image(tile_Kernel *k, const ConstBinding *c, int n,
                          const unsigned char *div, const char *target, Arena *a,
                          CacheEntry *e, const char **reason);
/* Loads an image into the module's map (or finds the one there); err on failure. */
tile_Status rt_spec_install(tile_Kernel *k, const ConstBinding *c, int n,
                            const unsigned char *div, const char *target,
                            const CacheEntry *e, Spec **out, char *err);

/* ---- choosing tuned consts at launch ----
 * The runtime does not tune: a context asks the chooser it was opened with (the tuner, a
 * layer above, installs itself through tile_context_open: tuner/tune_context.c). */
struct RtChooser {
    /* When k is tuned and the caller did not give every tuned const: replaces the tuned
     * values in the resolved consts `c` with this launch's chosen configuration. */
    tile_Status (*choose)(tile_Kernel *k, const tile_Arg *args, const tile_Const *given,
                          int ngiven, ConstBinding *c, int n, const unsigned *grid, Arena *a);
    /* Drops what the chooser keeps for k (its module is being freed). */
    void (*forget)(tile_Kernel *k);
};

/* tile_context_open_device with a chooser (NULL: every launch takes the defaults). */
tile_Status rt_context_open(tile_Backend backend, int device, const RtChooser *chooser,
                            tile_Context **out);

/* ---- counters and hooks for tests ---- */
typedef struct RtStats {
    long compiles;   /* tc_compile calls that reached STAGE_OBJECT */
    long disk_hits;  /* specializations loaded from the disk cache */
    long disk_writes;
    long jit_dylibs; /* JITDylibs the host backends created (cpu_jit.c reuses freed ones) */
} RtStats;
RtStats rt_stats(void);
/* Replaces tc_compile (NULL restores it): lets tests feed hand-made code. */
typedef int (*RtCompileFn)(const CompileRequest *req, Arena *arena, Diags *diags,
                           CompiledKernel *out);
void rt_set_compile_hook(RtCompileFn fn);
RtCompileFn rt_compile_fn(void);
void rt_count_compile(void);
void rt_count_disk_hit(void);
void rt_count_disk_write(void);
void rt_count_jit_dylib(void);

#endif
