/* tilec.h: what the pieces of tilec's command line share (tilec/tilec.c holds main and the
 * check / emit / list subcommands, tilec/tilec_run.c the run subcommand). Internal to tilec. */
#ifndef TILEC_H
#define TILEC_H
#include <stdint.h>
#include <stdio.h>
#include "driver.h"
#include "tile.h"

enum { TILEC_MAX_DEFS = 64 };

/* Exit codes, as in clang and cproc. */
enum { EXIT_OK = 0, EXIT_ERROR = 1, EXIT_USAGE = 2 };

/* A loaded, parsed source file. */
typedef struct Source {
    SrcFile file;
    char *text;
    Arena *arena;
    Diags diags;
    Module *module; /* NULL when parsing failed */
} Source;

/* Prints "tilec: error: ..." and a hint to --help, exits 2. */
void tilec_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* Prints "tilec: error: ..." to stderr. */
void tilec_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* User text as a message echoes it: s itself when at most TILEC_CLIP_MAX bytes, else its
 * first TILEC_CLIP_MAX bytes and "..." (valid until 8 more calls; tilec/tilec_clip.c). */
enum { TILEC_CLIP_MAX = 200 };
const char *tilec_clip(const char *s);
/* p, or when it is NULL (an allocation failed) "tilec: error: out of memory" and exit 1. */
void *tilec_need(void *p);

/* Reads and parses `path`; prints diagnostics to stderr. Returns 0, or -1 when the file could
 * not be read (already reported). On parse errors src->module is NULL. */
int tilec_source_load(Source *src, const char *path);
/* tilec_source_load, but a module whose only errors are sema's stays loaded (src->diags.errors
 * says there were some): check and emit compile its other kernels (Func.sema_failed 0) so that
 * their errors are reported too. With `kernel` (--kernel=NAME), the other kernels' diagnostics
 * are left out (one note counts them; src->diags.errors still does). */
int tilec_source_load_report(Source *src, const char *path, const char *kernel);
/* Drops from d's list the diagnostics (and their notes) in the text of a kernel of m other
 * than `kernel` (NULL: keeps all); d's counts stay. Returns the number of errors dropped: what
 * --kernel=NAME leaves out (tilec_scope.c). */
int tilec_scope_diags(Diags *d, const Module *m, const char *kernel);
void tilec_source_free(Source *src);

/* Parses "NAME=VALUE" (VALUE an integer, true or false) into *out (name in `arena`). */
int tilec_parse_define(const char *text, Arena *arena, ConstBinding *out);
/* -D NAME=VALUE added to defs[0..*n) (room for one more): 0, or -1 for text that is not
 * NAME=VALUE; a name given twice is a usage error (tile_launch refuses a const given twice). */
int tilec_add_define(ConstBinding *defs, int *n, const char *text, Arena *arena);

/* Matches "--name=VALUE" or "--name VALUE" at argv[*i]; advances *i past a separate value. */
const char *tilec_opt_value(int argc, char **argv, int *i, const char *name);

/* ---- imports: -I DIR (tilec/tilec.c) ---- */
enum { TILEC_MAX_IMPORT_DIRS = 64 };
/* Matches "-I DIR" or "-IDIR" at argv[*i] (advancing past a separate DIR) and records DIR:
 * 1, or 0 when argv[*i] is something else. A bad one is a usage error. */
int tilec_opt_import_dir(int argc, char **argv, int *i);
/* The -I directories so far: as import options, and colon-separated for the runtime. */
const ImportOptions *tilec_import_options(void);
const char *tilec_import_path(void);

int tilec_cmd_run(int argc, char **argv);

/* ---- the runtime's log (tilec/tilec_log.c) ---- */
/* Sends the context's warnings to stderr ("tilec: warning: ..."), routine activity nowhere. */
void tilec_log_install(tile_Context *ctx);
/* Whether a result could not be saved to a cache since the program started. */
int tilec_log_save_failed(void);

/* ---- output files (tilec/tilec_output.c) ---- */
typedef struct TilecOutput {
    FILE *f;
    const char *path; /* NULL: standard output */
    char *tmp;        /* the temporary file renamed to path on success, or NULL */
} TilecOutput;
/* Opens `path` (NULL: standard output) for writing through a temporary file; -o naming
 * `input` is a usage error. 0, or -1 after printing why. */
int tilec_output_open(TilecOutput *out, const char *path, const char *input, int binary);
/* Whether two paths name the same file (the same path, or the same device and inode). */
int tilec_same_file(const char *a, const char *b);
/* Closes it: when ok, renames the temporary file into place; else removes it and leaves
 * the old file untouched. 0, or -1 after printing why. */
int tilec_output_close(TilecOutput *out, int ok);

/* ---- NAME=VALUE arguments of run and tune (tilec/tilec_values.c) ---- */
enum { TILEC_MAX_VALUES = 128 };
/* A value: an integer from -2^63 to 2^64 - 1, so that every i64 and every u64 value can be
 * given (f holds it as a double too), or a double. */
typedef __int128 TilecInt;
typedef struct TilecNum {
    int is_float;
    TilecInt i;
    double f;
} TilecNum;
typedef struct TilecValue {
    const char *name, *expr;
    int hint; /* from a `// run:` line, not the command line */
    int implied; /* a const's value (-D or default) for the expressions, not an argument */
    int resolved;
    TilecNum num;
} TilecValue;
typedef struct TilecValues {
    TilecValue v[TILEC_MAX_VALUES];
    int n;
} TilecValues;
/* Adds NAME=EXPR (a usage error when malformed or too many). */
void tilec_value_add(TilecValues *vs, const char *text, int hint, Arena *a);
/* Evaluates every value (they may refer to each other in any order) with checked arithmetic:
 * an overflow, a division by zero, an unknown or circular name is a usage error. */
void tilec_values_resolve(TilecValues *vs);
/* The last value of that name, or NULL. */
TilecValue *tilec_value_find(TilecValues *vs, const char *name);
TilecValue *tilec_value_findn(TilecValues *vs, const char *name, size_t n);
/* A resolved value as an argument of type k: an integer in k's range (a float only when it
 * is whole), or a float within k's range; anything else is a usage error. A u64 value from
 * 2^63 up comes back as its 64 bits (what tile_u64 passes). */
int64_t tilec_value_int(const TilecValue *v, ElemKind k);
double tilec_value_float(const TilecValue *v, ElemKind k);
/* For values converted to elements of kind k (--fill): whether x is an integer within
 * integer kind k's range (bool: 0 or 1), with the range as text ("[-128, 127]");
 * the largest finite magnitude float kind k holds (f16 65504; fp8 kinds saturate, so any
 * float's). */
enum { TILEC_RANGE_TEXT = 64 };
int tilec_int_fits(ElemKind k, double x, char range[TILEC_RANGE_TEXT]);
double tilec_float_max(ElemKind k);
/* The bytes of a buffer of `count` elements of esz bytes; a usage error when count is
 * not positive or the size overflows or passes TILEC_MAX_BUFFER_BYTES. */
#define TILEC_MAX_BUFFER_BYTES (INT64_C(1) << 40)
size_t tilec_buffer_bytes(const char *name, const char *expr, int64_t count, int esz);

/* ---- tilec run's data files (tilec/tilec_run_io.c) ---- */
/* --load NAME=FILE / --save NAME=FILE: raw binary, the elements' bytes in host order. */
typedef struct TilecFileArg {
    const char *name, *path;
} TilecFileArg;
/* Parses NAME=FILE (strings in `a`); a usage error (exit 2) when malformed. */
void tilec_file_arg_parse(const char *text, const char *opt, Arena *a, TilecFileArg *out);
/* The file's length in elements of type k (a .npy file: its shape's, its dtype checked); a
 * usage error when it is missing, not a regular file, its size is not a multiple of the
 * element's, or a .npy header does not fit k. */
size_t tilec_file_elems(const TilecFileArg *fa, ElemKind k);
/* 0, or -1 after printing why. */
int tilec_file_read(const TilecFileArg *fa, ElemKind k, void *buf, size_t bytes);
int tilec_file_write(const TilecFileArg *fa, const void *buf, size_t bytes);

/* ---- tilec run beneath tile.h (tilec/tilec_run_device.c) ---- */
/* --verbose: prints what the launch of k with these arguments runs: the chosen consts
 * (marked given, @tune or default; `given` as passed to tile_launch), the grid, and the
 * driver's facts about the loaded code. 0, or -1 after printing why. */
int tilec_print_launch_facts(tile_Kernel *k, const tile_Arg *args, int nargs,
                             const tile_Const *given, int ngiven);
/* --cold: times up to `reps` launches as the tuner does (each alone, device events, inputs
 * cold: rotated copies or an L2 flush first) and prints the median. 0, or -1. */
int tilec_time_cold(tile_Kernel *k, const tile_Arg *args, int nargs, const tile_Const *given,
                    int ngiven, long reps, double buffer_bytes);
int tilec_cmd_tune(int argc, char **argv); /* tilec/tilec_tune.c */
/* Appends one kernel's PTX module to out as part of one merged module: the first whole, the
 * later ones without the header and the shared-memory declaration out has already
 * (*have_smem; start it at 0). tilec/tilec_ptx.c */
void tilec_ptx_append(FILE *out, const char *text, int first, int *have_smem);

/* A kernel ready to launch as `tilec run` sets it up (tilec/tilec_run.c): FILE:KERNEL,
 * NAME=VALUE, -D, --backend, --elems, --seed, --reps parsed from argv; buffers allocated and
 * filled with random values. */
typedef struct TilecSession {
    tile_Context *ctx;
    tile_Kernel *k;
    const char *file, *kernel;
    const tile_Arg *args;
    int nargs;
    const tile_Const *consts;
    int nconsts;
    long reps; /* --reps, 0 when not given */
    void *priv;
} TilecSession;
/* 0, or -1 after printing why (usage errors exit 2). Close it either way. */
int tilec_session_open(int argc, char **argv, TilecSession *s);
void tilec_session_close(TilecSession *s);
int tilec_cmd_cache(int argc, char **argv); /* tilec/tilec_cache.c */
int tilec_cmd_tune_worker(int argc, char **argv); /* tilec/tilec_worker.c, hidden */

#endif
