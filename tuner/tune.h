/* tune.h: the tuning engine. tune_run enumerates a kernel's configurations for one launch's
 * key, reuses the tuning cache's results, compiles the rest in parallel (tune_compile.c),
 * prunes what cannot fit the device, times the survivors (tune_time.c) and stores every
 * result and the best in the cache. tune_state.c keeps the per-kernel state the runtime's
 * fast path reads (key -> chosen configuration) and holds the public tuning API. */
#ifndef TILE_TUNE_H
#define TILE_TUNE_H
#include "runtime_internal.h"
#include "space.h"
#include "tcache.h"

/* Per-kernel tuning state (tile_Kernel.tune). */
/* One tile_tune report's arena, kept (in that arena) on its kernel's list. */
typedef struct ReportHold {
    Arena *arena;
    struct ReportHold *next;
} ReportHold;

typedef struct KTune {
    pthread_mutex_t lock;      /* guards chosen, tc */
    pthread_mutex_t tune_lock; /* one tuning at a time per kernel */
    Arena *arena;              /* space, names */
    TuneSpace space;
    int ntuned;                /* 0: the kernel has no @tune (or a bad one) */
    int recheck;               /* a cached choice may break the constraints at another launch
                                  of its key (space_key_exact): checked at each */
    RtMap chosen;              /* hash of key -> Choice chain */
    TCache *tc;                /* opened on first need */
    ReportHold *reports;       /* every tile_tune report, newest first: each stays valid
                                   (another thread may still read it) until the kernel goes */
} KTune;

/* The kernel whose tuning the calling thread works for (the tuning's own thread and its
 * compile threads), as it was before; k replaces it (NULL: none). A log sink or progress
 * callback such a thread runs that launches or tunes that kernel is refused (tune_state.c). */
const tile_Kernel *tune_thread_swap(const tile_Kernel *k);

/* The configuration a key runs with. */
typedef struct Choice {
    char *key;
    struct Choice *next;
    ConstBinding *vals; /* names point into KTune.space */
    int nvals;
} Choice;

/* One tuning: what to tune and how. */
typedef struct TuneRequest {
    tile_Kernel *k;
    KTune *kt;
    const tile_Arg *args;
    const tile_Const *given;
    int ngiven;
    const unsigned *grid; /* explicit grid, or NULL for @grid */
    const char *key;
    int force, reps, samples;
    double budget_s;
    void (*progress)(void *user, const tile_TuneProgress *p);
    void *user;
} TuneRequest;

/* Tunes; fills *rep (results in `a`). TILE_OK even when no configuration worked (rep->best
 * is -1 then); an error only for a bad request, a dead device context or no memory. */
tile_Status tune_run(const TuneRequest *req, Arena *a, tile_TuneReport *rep);

/* The first configuration a tuning of req would consider (enumeration order; the space
 * narrowed to the caller's consts, constraints seeing them and the scalar args): its values
 * into `first` (room for the space's parameters), their count into *n. None satisfies the
 * constraints: the tuning's error (the same status and message), or *n = 0 and TILE_OK with
 * allow_none. */
tile_Status tune_first_config(const TuneRequest *req, Arena *a, int allow_none,
                              ConstBinding *first, int *n);

/* tile_tune with an explicit grid (NULL: the kernel's @grid), for the tuning worker. */
tile_Status tune_tile_grid(tile_Kernel *k, const unsigned *grid, const tile_Arg *args,
                           int nargs, const tile_Const *consts, int nconsts,
                           const tile_TuneOptions *opts, const tile_TuneReport **report);

/* The runtime's chooser (RtChooser; tune_context.c installs it): when k is tuned and the
 * caller did not give every tuned const, replaces the tuned values in the resolved consts
 * `c` with this launch key's configuration (from memory, the tuning cache, tuning now, or
 * the fallback, by the context's mode); tune_forget drops k's tuning state. */
tile_Status tune_choose(tile_Kernel *k, const tile_Arg *args, const tile_Const *given,
                        int ngiven, ConstBinding *c, int n, const unsigned *grid, Arena *a);
void tune_forget(tile_Kernel *k);

/* ---- parallel compilation (tune_compile.c) ---- */
typedef struct CompileJob {
    const ConstBinding *consts; /* fully resolved */
    int nconsts;
    CacheEntry image;           /* out */
    tile_Status st;
    const char *reason;         /* out, on failure */
    double wall_ms, cpu_ms;     /* out */
    Arena *arena;               /* the job's own */
    int skipped;                /* out: not compiled, the time budget was spent */
} CompileJob;
/* Builds every job's image on `threads` threads (0: one per core). Once tune_now_ms() passes
 * deadline_ms (0: none) no new job starts: the rest are marked skipped (jobs under way
 * finish). Returns threads used. */
int tune_compile_all(tile_Kernel *k, const unsigned char *div, const char *target,
                     CompileJob *jobs, int n, int threads, double deadline_ms,
                     void (*done)(void *user, int finished), void *user);

/* ---- timing (tune_time.c): the one place a configuration runs ---- */
typedef struct TuneBuf {
    tile_DevPtr ptr;
    size_t bytes;
    void *saved; /* @restore: the contents before tuning */
} TuneBuf;

typedef struct TuneBench {
    tile_Context *ctx;
    tile_Kernel *k;
    const tile_Arg *args;
    TuneBuf *resets, *restores;
    int nresets, nrestores;
    int reps;
    double config_budget_ms; /* stop a configuration's repetitions past this */
    /* rotation of input sets (tune_rotate.c); nsets <= 1: one set, L2 flushed instead */
    int nsets, run, nallocs;
    tile_Arg *sets;          /* nsets x nparams arguments */
    tile_DevPtr *copies;     /* (nsets - 1) x nallocs extra allocations */
    size_t *copy_size;       /* per allocation */
} TuneBench;

/* Copies the arguments' allocations into enough input sets to exceed twice the L2, when they
 * fit in it and the kernel has no @reset/@restore (see tune_rotate.c). Never fails for lack
 * of memory: it times without rotation then. */
tile_Status tune_rotation_init(TuneBench *b, Arena *a);
/* The arguments of the next run. */
const tile_Arg *tune_rotation_next(TuneBench *b);
void tune_rotation_fini(TuneBench *b);
/* Input sets of the most recent tuning's timing (for tests): 1 without rotation. */
int tune_last_rotation(void);
/* The runtime's allocation holding p: 1 and its base and size, or 0. */
int tune_alloc_of(tile_Context *ctx, tile_DevPtr p, tile_DevPtr *base, size_t *size);

/* Sets up the @reset / @restore buffers (saving the latter). */
tile_Status tune_bench_init(TuneBench *b, tile_Kernel *k, const tile_Arg *args, Arena *a);
/* Copies @restore buffers back and zeroes @reset ones (before each run, and after tuning). */
tile_Status tune_bench_prepare(TuneBench *b, char *err);
void tune_bench_fini(TuneBench *b);

/* Why a loaded specialization cannot run on this device (NULL: it can), in `a`. */
const char *tune_prune_reason(tile_Context *ctx, const Spec *s, Arena *a);
/* The result a tuning keeps among r[0..n-1] (in enumeration order), or -1 when none is timed:
 * the earliest within 0.5% of the fastest; one that uses local memory only when it is more
 * than 3% faster than every one that uses none (tune_select.c). */
int tune_pick(const tile_TuneResult *r, int n);
/* Local memory per thread of s's loaded code (register spills, stack), bytes; -1 where the
 * backend does not say. */
int tune_local_bytes(tile_Context *ctx, const Spec *s);

/* Times one loaded configuration: a warm-up run, then timed runs (each after restoring
 * buffers and flushing L2, outside the timed interval). TUNE_SCREEN: a few runs, one when the
 * first is far slower than `best_ms` (a rough median to rank by); TUNE_FULL: up to b->reps
 * (or about 100 ms of kernel time), stopping early past the per-config budget. TRES_OK with
 * the median in *ms, or TRES_FAILED with a reason; *fatal = 1 when the device context died (a
 * sticky fault; tune_isolate.c keeps that from reaching the caller's context). */
typedef enum { TUNE_SCREEN, TUNE_FULL } TuneTiming;
TResStatus tune_time_config(TuneBench *b, Spec *s, const unsigned grid[3], TuneTiming how,
                            double best_ms, double *ms, char *reason, size_t cap, int *fatal);

/* ---- process isolation (tune_isolate.c) ---- */
/* What the tuning workers did, for the report. */
typedef struct TuneIsolation {
    const char **evaluated; /* configurations a worker evaluated now (in the arena) */
    int nevaluated;
    const char *left_reason; /* why a configuration the cache lacks afterwards was not timed */
} TuneIsolation;

/* Whether this tuning should run in worker processes: $TILE_TUNE_ISOLATE=0|1, else on for
 * CUDA (a sticky fault would kill the caller's context) and off elsewhere. */
int tune_isolate_wanted(tile_Context *ctx);

/* The worker's exit status when it could not map a buffer the job shares (the parent then
 * writes the buffers into the job instead). */
enum { TUNE_WORKER_NO_SHARING = 4 };
/* Tunes in `tilec tune-worker` processes, which save every result to the tuning cache as
 * they go; a configuration that crashes a worker is recorded there as failed and a new worker
 * goes on. Then reloads the kernel's cache (now holding every result) and adds the workers'
 * compile and timing totals to rep. 1 when done so; 0 when isolation is impossible here (no
 * worker executable, a pointer the runtime did not allocate, no cache file; logged): tune in
 * this process then. `ntodo` only scales the progress reports. */
int tune_isolate(const TuneRequest *req, int samples, double budget_ms, int ntodo,
                 tile_TuneReport *rep, Arena *a, TuneIsolation *out);
/* In a worker: the descriptor of $TILE_TUNE_TRACE_FD, where the engine writes "begin CONFIG"
 * before evaluating a configuration and "end" after; -1 elsewhere. */
int tune_trace_fd(void);

double tune_now_ms(void);
long tune_timings(void); /* configurations screened in this process (for tests) */

/* ---- the tuner's environment variables, read strictly (tune_env.c) ----
 * Unset or empty: the default. A value that does not parse (or is out of range) gives the
 * default too, and ctx's log sink hears of it once per process for each variable (again when
 * its value changes): the variable, the value, what is accepted and `used` (what the default
 * means; NULL: its number). ctx may be NULL: no warning then. */
long tune_env_int(tile_Context *ctx, const char *name, long lo, long hi, long dflt,
                  const char *used);
/* A finite number of seconds, > 0 (>= 0 with zero_ok). */
double tune_env_seconds(tile_Context *ctx, const char *name, int zero_ok, double dflt,
                        const char *used);
/* The index of value (the variable's text, as the caller read it) in words (NULL-terminated);
 * -1 when it is NULL or empty, -2 when it is none of them (logged with `used`). */
int tune_env_word(tile_Context *ctx, const char *name, const char *value,
                  const char *const *words, const char *used);
extern const char *const TUNE_ENV_FLAG[]; /* words of a flag: "0", "1" */

#endif
