/* tilec.c: the tile compiler's command line, in the habits of clang and nvcc.
 *   tilec check FILE             diagnostics, and every kernel specialized with its defaults
 *   tilec emit FILE --emit=STAGE print one stage (tokens, ast, tir, llvm, ptx, asm, obj,
 *                                amdgcn, hsaco)
 *   tilec run FILE:KERNEL ...    launch with random inputs (or files) and time it
 *                                (tilec/tilec_run.c, tilec_run_io.c, tilec_run_device.c)
 *   tilec tune FILE:KERNEL ...   tune it for the given sizes (tilec/tilec_tune.c)
 *   tilec list FILE              the kernels of a file and their parameters
 *   tilec cache SUBCOMMAND       the tuning cache: list, show, clear, export, import
 *                                (tilec/tilec_cache.c)
 * Exit codes: 0 ok, 1 errors in the input (or a failed run), 2 usage. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <llvm-c/Core.h>
#include "imports.h"
#include "source_read.h"
#include "target.h"
#include "tilec.h"

/* tilec --help, in sections: `tilec SUBCOMMAND --help` prints the usage line and options of
 * that subcommand only. */
static const char *const HELP_COMMANDS =
    "usage: tilec COMMAND [OPTIONS]\n"
    "\n"
    "Commands:\n"
    "  check FILE                 report diagnostics; specialize every kernel with its\n"
    "                             default const values so type and shape errors show\n"
    "  emit FILE [--emit=STAGE]   stop after a stage and print it (default: tir)\n"
    "  run FILE[:KERNEL] [NAME=VALUE ...]\n"
    "                             run a kernel on random inputs (or files) and time it\n"
    "  tune FILE[:KERNEL] [NAME=VALUE ...]\n"
    "                             tune a kernel's @tune space for the key of these sizes\n"
    "  list FILE                  print the kernels of a file and their parameters\n"
    "  cache list|show|clear|export|import\n"
    "                             the tuning cache (see 'Subcommands of cache')\n"
    "\n";
static const char *const HELP_CHECK_EMIT =
    "Options of check and emit:\n"
    "  -D NAME=VALUE, -DNAME=VALUE  value of a const parameter (integer, true or false);\n"
    "                             also num_warps and num_stages\n"
    "  --kernel=NAME              only this kernel (default: every kernel)\n"
    "  --emit=STAGE               tokens | ast | tir | llvm | ptx | asm | obj | amdgcn | hsaco\n"
    "                             (amdgcn: AMDGPU assembly; hsaco: an AMDGPU code object\n"
    "                             linked by ld.lld; both default to --target=gfx942)\n"
    "  --target=TARGET            host | sim | sm_80 | sm_86 | sm_89 | sm_90 | sm_90a ... |\n"
    "                             gfx90a | gfx942 | gfx950 | gfx1100 | gfx1200\n"
    "                             (default host; sm_90 for --emit=ptx; sim: the GPU path as\n"
    "                             host code for the emulator of --backend=sim)\n"
    "  --dump-after=PASS          with --emit=tir: print the IR after that pass instead\n"
    "  --assume-aligned[=ptr]     specialize as a launch would where pointers are 16-byte\n"
    "                             aligned and integer params multiples of 16 (=ptr: pointers\n"
    "                             only), so vector loads and stores show in the output\n"
    "  --assume-divisor=PARAM=D   specialize as a launch whose argument PARAM (a pointer's\n"
    "                             address, an integer) is a multiple of D (1, 2, 4, 8, 16);\n"
    "                             repeatable, after --assume-aligned\n"
    "  --assume-one=PARAM         specialize as a launch whose integer argument PARAM is 1\n"
    "                             (a unit stride: its uses become the constant, as a launch\n"
    "                             with the value 1 does); repeatable\n"
    "  -o FILE                    write to FILE instead of standard output\n"
    "  -I DIR, -IDIR              look for imported files in DIR (repeatable; searched in\n"
    "                             order after the importing file's directory, before\n"
    "                             $TILE_PATH and the standard library); also for run, tune\n"
    "\n";
static const char *const HELP_RUN =
    "Options of run:\n"
    "  NAME=VALUE                 a scalar parameter's value: an integer or float expression\n"
    "                             (+ - * / % parentheses) over other parameters and the\n"
    "                             consts' values (-D, else their defaults), or inf, -inf,\n"
    "                             nan; for a pointer parameter, its buffer's length in\n"
    "                             elements\n"
    "  -D NAME=VALUE              a const parameter's value\n"
    "  --backend=BACKEND          auto | cpu | cuda | sim: where to run (default auto: CUDA\n"
    "                             if a GPU is found; sim: the GPU code path emulated on the\n"
    "                             CPU, with race and bounds checks, docs/sim.md)\n"
    "  --elems=N                  length of pointer buffers not given one (default: the\n"
    "                             largest integer argument, or 1048576)\n"
    "  --reps=N                   timed launches (default 10)\n"
    "  --seed=N                   seed of the random inputs (default 1)\n"
    "  --check                    also run on the CPU backend and compare every buffer\n"
    "  --fill NAME=V, NAME=LO:HI  fill pointer parameter NAME's buffer with V, or random\n"
    "                             values in [LO, HI] (integers: indices, lengths) or [LO, HI)\n"
    "                             (floats); other buffers: floats in [-1, 1), integers in\n"
    "                             [0, min(length, 100))\n"
    "  --load NAME=FILE           fill pointer parameter NAME's buffer from FILE: a .npy file\n"
    "                             (its dtype the parameter's, C order; its length the shape's)\n"
    "                             or raw binary (the elements' bytes in host order, as numpy's\n"
    "                             tofile writes them; its length the file's size / element's)\n"
    "  --save NAME=FILE           write NAME's buffer to FILE (raw) after the first launch,\n"
    "                             before the timed ones: kernels that accumulate save the\n"
    "                             result of one launch. --load and --save repeat per buffer\n"
    "  --verbose                  print the specialization launched: its consts (given,\n"
    "                             @tune or default), grid, and the driver's facts: registers\n"
    "                             and local memory (spills, stack) per thread, static and\n"
    "                             dynamic shared memory, max threads per block (n/a where\n"
    "                             the backend has no driver: cpu, sim)\n"
    "  --cold                     time as the tuner does: each launch alone (device events on\n"
    "                             GPUs) on cold inputs (copies rotated, or the L2 flushed\n"
    "                             before each); --reps bounds the launches (about 100 ms in\n"
    "                             all). Default: back-to-back launches, host clock, warm L2\n"
    "  Lines `// run: NAME=VALUE ...` (or `// run KERNEL: ...`) in the source give defaults.\n"
    "\n";
static const char *const HELP_TUNE =
    "Options of tune (and those of run but --check, --save, --verbose, --cold; -D values\n"
    "are fixed, not tuned):\n"
    "  --reps=N                   timed runs per configuration (default 10 on GPUs, 3 on CPU)\n"
    "  --budget=SECONDS           stop timing new configurations after this long\n"
    "  --samples=N                random search: time N configurations (chosen by the key)\n"
    "  --force                    re-time configurations the tuning cache has results for\n"
    "  --top=N                    rows of the ranked table (default 10)\n"
    "  Progress goes to stderr; results to the tuning cache ($TILE_CACHE_DIR/tuning).\n"
    "\n";
static const char *const HELP_CACHE =
    "Subcommands of cache (each takes --dir=DIR: default $TILE_CACHE_DIR, else\n"
    "$XDG_CACHE_HOME/tile, else ~/.cache/tile; tuning files live in DIR/tuning):\n"
    "  cache list                 one line per tuning file: kernel, device, arch, keys, path\n"
    "  cache show FILE|KERNEL [--top=N] [--all]\n"
    "                             each key's best configuration and its N fastest ones\n"
    "                             (default 10); --all adds failed and pruned ones\n"
    "  cache clear [KERNEL] [--yes]\n"
    "                             remove the tuning files (of one kernel); without --yes,\n"
    "                             only print what would be removed and exit 1\n"
    "  cache export OUT.json      all tuning files as one JSON document (-: standard output)\n"
    "  cache import IN.json       merge an export or a tuning file into the cache: entries\n"
    "                             are unioned, an imported result replaces the same one\n"
    "\n";
static const char *const HELP_TAIL =
    "  --help, --version\n"
    "\n"
    "Exit status: 0 success, 1 errors in the input or a failed run, 2 usage errors.\n";

static void print_help(void)
{
    const char *const parts[] = {HELP_COMMANDS, HELP_CHECK_EMIT, HELP_RUN, HELP_TUNE, HELP_CACHE,
                                 HELP_TAIL};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        fputs(parts[i], stdout);
}

/* `tilec SUBCOMMAND --help` (or -h anywhere after it): that subcommand's usage; 1 if printed. */
static int subcommand_help(int argc, char **argv)
{
    static const struct { const char *cmd, *usage, *const *sections[2]; } tab[] = {
        {"check", "usage: tilec check FILE [OPTIONS]\n\n", {&HELP_CHECK_EMIT, NULL}},
        {"emit", "usage: tilec emit FILE [--emit=STAGE] [OPTIONS]\n\n", {&HELP_CHECK_EMIT, NULL}},
        {"list", "usage: tilec list FILE [-I DIR]\n\n", {NULL, NULL}},
        {"run", "usage: tilec run FILE[:KERNEL] [NAME=VALUE ...] [OPTIONS]\n\n", {&HELP_RUN, NULL}},
        {"tune", "usage: tilec tune FILE[:KERNEL] [NAME=VALUE ...] [OPTIONS]\n\n",
         {&HELP_RUN, &HELP_TUNE}},
        {"cache", "usage: tilec cache list|show|clear|export|import [ARGS] [--dir=DIR]\n\n",
         {&HELP_CACHE, NULL}},
    };
    int asked = 0;
    for (int i = 2; i < argc && !asked; i++)
        asked = !strcmp(argv[i], "--help") || !strcmp(argv[i], "-h");
    for (size_t t = 0; asked && t < sizeof tab / sizeof tab[0]; t++) {
        if (strcmp(argv[1], tab[t].cmd) != 0)
            continue;
        fputs(tab[t].usage, stdout);
        for (int j = 0; j < 2; j++)
            if (tab[t].sections[j])
                fputs(*tab[t].sections[j], stdout);
        if (!strcmp(tab[t].cmd, "list"))
            fputs("Prints each kernel of FILE with its parameters, one line each.\n", stdout);
        fputs(HELP_TAIL, stdout);
        return 1;
    }
    return 0;
}

static void report(const char *fmt, va_list ap, const char *after)
{
    fputs("tilec: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs(after, stderr);
}

void tilec_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report(fmt, ap, "\n");
    va_end(ap);
}

void *tilec_need(void *p)
{
    if (!p) {
        tilec_error("out of memory");
        exit(EXIT_ERROR);
    }
    return p;
}

void tilec_usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report(fmt, ap, "\ntilec: see 'tilec --help'\n");
    va_end(ap);
    exit(EXIT_USAGE);
}

const char *tilec_opt_value(int argc, char **argv, int *i, const char *name)
{
    size_t n = strlen(name);
    const char *a = argv[*i];
    if (strncmp(a, name, n) != 0)
        return NULL;
    if (a[n] == '=')
        return a + n + 1;
    if (a[n] != '\0')
        return NULL;
    if (*i + 1 >= argc)
        tilec_usage_error("option '%s' needs a value", name);
    return argv[++*i];
}

/* ---- sources ---- */

/* -I directories, in order: for tc_parse_with here, and as the runtime's import path. */
static const char *import_dirs[TILEC_MAX_IMPORT_DIRS];
static ImportOptions import_opts = { .dirs = import_dirs };
static char import_path[TILEC_MAX_IMPORT_DIRS * 1024];

int tilec_opt_import_dir(int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    if (strncmp(a, "-I", 2) != 0)
        return 0;
    const char *dir = a[2] ? a + 2 : (*i + 1 < argc ? argv[++*i] : NULL);
    if (!dir || !*dir)
        tilec_usage_error("option '-I' needs a directory");
    if (strchr(dir, ':'))
        tilec_usage_error("-I %s: a directory name may not hold ':' (the import path's separator)",
                          tilec_clip(dir));
    if (strlen(dir) >= 1000)
        tilec_usage_error("-I %.40s...: the directory name is too long", dir);
    if (import_opts.ndirs == TILEC_MAX_IMPORT_DIRS)
        tilec_usage_error("too many -I options (at most %d)", TILEC_MAX_IMPORT_DIRS);
    size_t n = strlen(import_path);
    snprintf(import_path + n, sizeof import_path - n, "%s%s", n ? ":" : "", dir);
    import_dirs[import_opts.ndirs++] = dir;
    return 1;
}

const ImportOptions *tilec_import_options(void)
{
    return &import_opts;
}

const char *tilec_import_path(void)
{
    return import_path;
}

/* Frees what a failed load took and leaves src empty, so that a caller that frees every
 * Source it loaded (cmd_list) does not free the arena twice. */
static int source_load_failed(Source *src)
{
    arena_free(src->arena);
    free(src->text);
    memset(src, 0, sizeof *src);
    return -1;
}

/* Reads and parses path; with `report`, a module whose only errors are sema's is kept, and
 * with `kernel` too, only the diagnostics that concern that kernel are shown (a note counts
 * the others' errors, which still count). */
static int source_load(Source *src, const char *path, int report, const char *kernel)
{
    memset(src, 0, sizeof *src);
    char err[1200];
    src->arena = arena_new();
    path = src->arena ? imports_locate(src->arena, path, tilec_import_options()) : NULL;
    if (!path) {
        tilec_error("out of memory");
        return source_load_failed(src);
    }
    if (src_read_file(path, &src->text, &src->file.len, NULL, err, sizeof err)) {
        tilec_error("%s", err);
        return source_load_failed(src);
    }
    src->file.name = path;
    src->file.text = src->text;
    diags_init(&src->diags, src->arena);
    const ImportOptions *io = tilec_import_options();
    src->module = report ? tc_parse_for_report(src->arena, &src->file, io, &src->diags)
                         : tc_parse_with(src->arena, &src->file, io, &src->diags);
    int elsewhere = report && src->module ? tilec_scope_diags(&src->diags, src->module, kernel) : 0;
    diags_print(&src->diags, stderr);
    if (elsewhere)
        fprintf(stderr, "%s: note: %d error%s in other kernels of the file left out (--kernel=%s); "
                "the file loads only once they are fixed\n", path, elsewhere, elsewhere == 1 ? "" : "s",
                kernel);
    if (src->diags.errors && !report)
        src->module = NULL;
    return 0;
}

int tilec_source_load(Source *src, const char *path) { return source_load(src, path, 0, NULL); }

int tilec_source_load_report(Source *src, const char *path, const char *kernel)
{
    return source_load(src, path, 1, kernel);
}

/* ks[0..n) without the kernels sema found an error in (reported already); the new count. */
static int drop_failed(const Func **ks, int n)
{
    int m = 0;
    for (int i = 0; i < n; i++)
        if (!ks[i]->sema_failed)
            ks[m++] = ks[i];
    return m;
}

void tilec_source_free(Source *src)
{
    if (src->arena)
        arena_free(src->arena);
    free(src->text);
}

/* ---- options shared by check and emit ---- */

int tilec_parse_define(const char *text, Arena *arena, ConstBinding *out)
{
    const char *eq = strchr(text, '=');
    if (!eq || eq == text)
        return -1;
    const char *v = eq + 1;
    if (strcmp(v, "true") == 0)
        out->value = 1;
    else if (strcmp(v, "false") == 0)
        out->value = 0;
    else {
        char *end;
        errno = 0;
        out->value = strtoll(v, &end, 0);
        if (*v == '\0' || *end != '\0' || errno)
            return -1;
    }
    out->name = arena_strndup(arena, text, (size_t)(eq - text));
    return out->name ? 0 : -1;
}

int tilec_add_define(ConstBinding *defs, int *n, const char *text, Arena *arena)
{
    ConstBinding d;
    if (tilec_parse_define(text, arena, &d) != 0)
        return -1;
    for (int i = 0; i < *n; i++) /* which one would count is nobody's guess: as tile_launch */
        if (strcmp(defs[i].name, d.name) == 0)
            tilec_usage_error("-D %s given twice (%s=%lld and %s)", tilec_clip(d.name),
                              tilec_clip(defs[i].name), (long long)defs[i].value,
                              tilec_clip(text));
    defs[(*n)++] = d;
    return 0;
}

typedef struct Opts {
    const char *file, *kernel, *emit, *target, *output, *dump_after, *aligned;
    ConstBinding defs[TILEC_MAX_DEFS], divs[TILEC_MAX_DEFS]; /* -D, --assume-divisor */
    int ndefs, ndivs;
} Opts;

static void opts_parse(Opts *o, int argc, char **argv, Arena *arena)
{
    memset(o, 0, sizeof *o);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v;
        if (tilec_opt_import_dir(argc, argv, &i))
            continue;
        if (strncmp(a, "-D", 2) == 0) {
            const char *def = a[2] ? a + 2 : (i + 1 < argc ? argv[++i] : NULL);
            if (!def)
                tilec_usage_error("option '-D' needs NAME=VALUE");
            if (o->ndefs == TILEC_MAX_DEFS)
                tilec_usage_error("too many -D options");
            if (tilec_add_define(o->defs, &o->ndefs, def, arena) != 0)
                tilec_usage_error("bad -D '%s': expected NAME=VALUE with an integer, true or "
                                  "false", tilec_clip(def));
        } else if (strncmp(a, "-o", 2) == 0 && strncmp(a, "-o=", 3) != 0) {
            o->output = a[2] ? a + 2 : (i + 1 < argc ? argv[++i] : NULL);
            if (!o->output)
                tilec_usage_error("option '-o' needs a file name");
        } else if ((v = tilec_opt_value(argc, argv, &i, "--emit")))
            o->emit = v;
        else if ((v = tilec_opt_value(argc, argv, &i, "--target")))
            o->target = v;
        else if ((v = tilec_opt_value(argc, argv, &i, "--kernel")))
            o->kernel = v;
        else if ((v = tilec_opt_value(argc, argv, &i, "--dump-after")))
            o->dump_after = v;
        else if ((v = tilec_opt_value(argc, argv, &i, "--output")))
            o->output = v;
        else if (strcmp(a, "--assume-aligned") == 0 || strcmp(a, "--assume-aligned=ptr") == 0)
            o->aligned = a;
        else if ((v = tilec_opt_value(argc, argv, &i, "--assume-divisor"))) {
            ConstBinding *d = &o->divs[o->ndivs];
            if (o->ndivs == TILEC_MAX_DEFS)
                tilec_usage_error("too many --assume-divisor options");
            if (tilec_parse_define(v, arena, d) != 0 || d->value < 1 || d->value > 16 ||
                (d->value & (d->value - 1)))
                tilec_usage_error("bad --assume-divisor '%s': expected PARAM=D with D 1, 2, 4, 8 "
                                  "or 16", tilec_clip(v));
            o->ndivs++;
        }
        else if ((v = tilec_opt_value(argc, argv, &i, "--assume-one"))) {
            if (o->ndivs == TILEC_MAX_DEFS)
                tilec_usage_error("too many --assume-divisor and --assume-one options");
            o->divs[o->ndivs++] = (ConstBinding){.name = v, .value = PARAM_DIV_ONE};
        }
        else if (a[0] == '-' && a[1] != '\0')
            tilec_usage_error("unknown option '%s'", tilec_clip(a));
        else if (o->file)
            tilec_usage_error("more than one input file ('%s' and '%s')", tilec_clip(o->file),
                              tilec_clip(a));
        else
            o->file = a;
    }
    if (!o->file)
        tilec_usage_error("no input file");
    /* once here, not once per kernel at its compile (an error per kernel, exit status 1) */
    if (o->target && !target_lookup(o->target))
        tilec_usage_error("unknown --target=%s (%s)", tilec_clip(o->target), TC_TARGETS_EXPECTED);
}

/* The kernels to work on: the one named by --kernel, or all. Returns the count. */
static int select_kernels(const Module *m, const char *name, const Func **out, int max)
{
    int n = 0;
    for (int i = 0; i < m->nfuncs && n < max; i++) {
        const Func *f = m->funcs[i];
        if (f->is_kernel && (!name || strcmp(f->name, name) == 0))
            out[n++] = f;
    }
    return n;
}

/* Room for every kernel of the source (no limit on their number), in its arena; NULL when
 * out of memory (kernels_or_fail reports it). */
static const Func **kernel_slots(const Source *src)
{
    return arena_alloc(src->arena, sizeof(const Func *) * ((size_t)src->module->nfuncs + 1));
}

static int kernels_or_fail(const Source *src, const char *name, const Func **ks)
{
    if (!ks) {
        tilec_error("out of memory");
        return -1;
    }
    int n = select_kernels(src->module, name, ks, src->module->nfuncs);
    if (n == 0 && name) {
        const Func *f = module_find_func(src->module, name);
        tilec_error("%s: %s '%s'", tilec_clip(src->file.name),
                    f ? "not a kernel:" : "no kernel named", tilec_clip(name));
        return -1;
    }
    return n;
}

/* Every -D must name a const parameter of at least one of the kernels (the library says). */
static int defines_or_fail(const Func **ks, int n, const Opts *o)
{
    Arena *a = tilec_need(arena_new());
    Diags d;
    diags_init(&d, a);
    int rc = tc_check_defines(ks, n, o->defs, o->ndefs, &d);
    diags_print(&d, stderr);
    arena_free(a);
    return rc;
}

/* ---- check ---- */

/* Specializes one kernel up to the tile IR, its diagnostics into d (shared by the kernels of
 * the file, so one error in a body several @types kernels share is said once). Kernels with a
 * const parameter that has no value are skipped (a note says so): they can only be checked
 * once given one with -D. Any other failure to resolve the consts is an error. */
static int check_kernel(const Source *src, const Func *f, const Opts *o, Diags *d)
{
    Arena *a = tilec_need(arena_new());
    Diags own;
    diags_init(&own, a);
    ConstBinding vals[TILEC_MAX_DEFS + 8], defs[TILEC_MAX_DEFS];
    int ndefs = tc_defines_for(f, o->defs, o->ndefs, defs), rc = 0, errors = d->errors;
    int nvals = tc_resolve_consts(f, defs, ndefs, vals, TILEC_MAX_DEFS + 8, a, &own);
    if (nvals == TC_CONSTS_MISSING) {
        fprintf(stderr, "%s:%d:%d: note: kernel '%s' not specialized: %s\n", src->file.name,
                f->loc.line, f->loc.col, f->name,
                own.first ? own.first->msg : "a const parameter has no value (give it with -D)");
    } else if (nvals < 0) {
        diags_print(&own, stderr);
        rc = -1;
    } else {
        CompileRequest req = {.module = src->module, .kernel = f->name, .consts = defs,
                              .nconsts = ndefs, .target = o->target ? o->target : TC_TARGET_HOST,
                              .stop_after = STAGE_TIR};
        rc = tc_compile(&req, a, d, NULL);
        if (d->errors > errors)
            rc = -1;
    }
    arena_free(a);
    return rc;
}

static int cmd_check(int argc, char **argv)
{
    Arena *arena = tilec_need(arena_new());
    Opts o;
    opts_parse(&o, argc, argv, arena);
    Source src;
    int rc = EXIT_ERROR;
    if (tilec_source_load_report(&src, o.file, o.kernel) != 0)
        goto out;
    if (src.module) {
        const Func **ks = kernel_slots(&src);
        int n = kernels_or_fail(&src, o.kernel, ks), bad = n < 0 || src.diags.errors;
        if (n > 0 && defines_or_fail(ks, n, &o) != 0)
            bad = 1, n = 0;
        n = n > 0 ? drop_failed(ks, n) : n;
        Diags d;
        diags_init(&d, arena);
        for (int i = 0; i < n; i++)
            bad |= check_kernel(&src, ks[i], &o, &d) != 0;
        diags_print(&d, stderr);
        rc = bad ? EXIT_ERROR : EXIT_OK;
    }
    tilec_source_free(&src);
out:
    arena_free(arena);
    return rc;
}

/* ---- emit ---- */

typedef struct EmitKind {
    const char *name;
    Stage stage;
    const char *default_target;
} EmitKind;

static const EmitKind EMIT_KINDS[] = {
    {"tokens", STAGE_TOKENS, TC_TARGET_HOST}, {"ast", STAGE_AST, TC_TARGET_HOST},
    {"tir", STAGE_TIR, TC_TARGET_HOST},       {"llvm", STAGE_LLVM, TC_TARGET_HOST},
    {"ptx", STAGE_ASM, "sm_90"},              {"asm", STAGE_ASM, TC_TARGET_HOST},
    {"obj", STAGE_OBJECT, TC_TARGET_HOST},    {"amdgcn", STAGE_ASM, "gfx942"},
    {"hsaco", STAGE_OBJECT, "gfx942"},
};

static const EmitKind *emit_kind(const char *name)
{
    for (size_t i = 0; i < sizeof EMIT_KINDS / sizeof EMIT_KINDS[0]; i++)
        if (strcmp(EMIT_KINDS[i].name, name) == 0)
            return &EMIT_KINDS[i];
    return NULL;
}

/* --assume-aligned and --assume-divisor: CompileRequest.param_div for f's runtime params
 * (16: aligned), or NULL (nothing assumed); an --assume-divisor naming no runtime param of f
 * is a usage error. */
static const unsigned char *assumed_divisors(const Func *f, const Opts *o, Arena *a)
{
    unsigned char *div = o->aligned || o->ndivs ? arena_alloc(a, (size_t)f->nparams + 1) : NULL;
    int n = 0, ints = o->aligned && strcmp(o->aligned, "--assume-aligned") == 0;
    char used[TILEC_MAX_DEFS] = { 0 };
    for (int i = 0; div && i < f->nparams; i++) {
        const Param *p = &f->params[i];
        if (p->is_const)
            continue;
        div[n] = o->aligned && p->type &&
                 (p->type->ptr_depth || (ints && et_is_int(et_from_name(p->type->name)))) ? 16 : 1;
        for (int j = 0; j < o->ndivs; j++)
            if (strcmp(o->divs[j].name, p->name) == 0) {
                if (o->divs[j].value == PARAM_DIV_ONE &&
                    (p->type->ptr_depth || !et_is_int(et_from_name(p->type->name))))
                    tilec_usage_error("--assume-one=%s: '%s' is not an integer parameter",
                                      tilec_clip(p->name), tilec_clip(p->name));
                div[n] = (unsigned char)o->divs[j].value, used[j] = 1;
            }
        n++;
    }
    for (int j = 0; div && j < o->ndivs; j++) {
        const ConstBinding *d = &o->divs[j];
        if (!used[j] && d->value == PARAM_DIV_ONE)
            tilec_usage_error("--assume-one=%s: '%s' is not a runtime parameter of kernel '%s'",
                              tilec_clip(d->name), tilec_clip(d->name), tilec_clip(f->name));
        if (!used[j])
            tilec_usage_error("--assume-divisor=%s=%lld: '%s' is not a runtime parameter of "
                              "kernel '%s'", tilec_clip(d->name), (long long)d->value,
                              tilec_clip(d->name), tilec_clip(f->name));
    }
    return div;
}

static int emit_kernel(const Source *src, const Func *f, const Opts *o, const EmitKind *ek,
                       FILE *out)
{
    Arena *a = tilec_need(arena_new());
    Diags d;
    diags_init(&d, a);
    CompiledKernel ck;
    memset(&ck, 0, sizeof ck);
    ConstBinding defs[TILEC_MAX_DEFS];
    int ndefs = tc_defines_for(f, o->defs, o->ndefs, defs);
    CompileRequest req = {.module = src->module, .kernel = f->name, .consts = defs,
                          .nconsts = ndefs, .target = o->target ? o->target : ek->default_target,
                          .stop_after = ek->stage, .dump_after_pass = o->dump_after};
    req.param_div = assumed_divisors(f, o, a);
    /* obj: written here as bytes; every other stage is printed by the driver */
    req.dump = ek->stage == STAGE_OBJECT ? NULL : out;
    int rc = tc_compile(&req, a, &d, ek->stage == STAGE_OBJECT ? &ck : NULL);
    diags_print(&d, stderr);
    if (rc == 0 && !d.errors && ek->stage == STAGE_OBJECT && ck.code &&
        fwrite(ck.code, 1, ck.code_size, out) != ck.code_size) {
        tilec_error("writing the object of '%s' failed", tilec_clip(f->name));
        rc = -1;
    }
    arena_free(a);
    return rc != 0 || d.errors ? -1 : 0;
}

/* PTX of several kernels: one module (ptxas rejects modules one after another). */
static int emit_ptx_module(const Source *src, const Func **ks, int n, const Opts *o,
                           const EmitKind *ek, FILE *out)
{
    int bad = 0, have_smem = 0;
    for (int i = 0; i < n; i++) {
        char *text = NULL;
        size_t size = 0;
        FILE *mem = open_memstream(&text, &size);
        if (!mem) {
            tilec_error("out of memory");
            return -1;
        }
        int rc = emit_kernel(src, ks[i], o, ek, mem);
        fclose(mem);
        if (rc == 0 && text) {
            if (i > 0)
                fputc('\n', out);
            tilec_ptx_append(out, text, i == 0, &have_smem);
        }
        bad |= rc != 0;
        free(text);
    }
    return bad ? -1 : 0;
}

static int emit_module(const Source *src, const Opts *o, const EmitKind *ek, FILE *out)
{
    if (ek->stage == STAGE_AST) {
        ast_dump(src->module, out);
        return 0;
    }
    const Func **ks = kernel_slots(src);
    int n = kernels_or_fail(src, o->kernel, ks), bad = n < 0;
    if (n > 0 && defines_or_fail(ks, n, o) != 0)
        return -1;
    if (ek->stage == STAGE_OBJECT && n > 1) {
        tilec_error("%s has %d kernels: choose one with --kernel=NAME for --emit=%s",
                    tilec_clip(src->file.name), n, ek->name);
        return -1;
    }
    n = n > 0 ? drop_failed(ks, n) : n; /* the others are compiled for their errors */
    const char *target = o->target ? o->target : ek->default_target;
    if (ek->stage == STAGE_ASM && n > 1 && target && !strncmp(target, "sm_", 3))
        return emit_ptx_module(src, ks, n, o, ek, out);
    for (int i = 0; i < n; i++) {
        if (i > 0)
            fputc('\n', out);
        bad |= emit_kernel(src, ks[i], o, ek, out) != 0;
    }
    return bad ? -1 : 0;
}

/* --emit=ptx is NVIDIA's assembly, amdgcn and hsaco AMD's: a target of another kind (host,
 * sim, the other vendor's) is a usage error. */
static void emit_target_check(const EmitKind *ek, const char *target)
{
    int ptx = !strcmp(ek->name, "ptx"), amd = !strcmp(ek->name, "amdgcn") || !strcmp(ek->name, "hsaco");
    if (ptx && strncmp(target, "sm_", 3) != 0)
        tilec_usage_error("--emit=ptx needs an NVIDIA target (--target=sm_NN), not '%s' "
                          "(--emit=asm prints any target's assembly)", tilec_clip(target));
    if (amd && strncmp(target, "gfx", 3) != 0)
        tilec_usage_error("--emit=%s needs an AMD target (--target=gfxNNN), not '%s'", ek->name,
                          tilec_clip(target));
}

static int cmd_emit(int argc, char **argv)
{
    Arena *arena = tilec_need(arena_new());
    Opts o;
    opts_parse(&o, argc, argv, arena);
    const EmitKind *ek = emit_kind(o.emit ? o.emit : "tir");
    if (!ek)
        tilec_usage_error("unknown --emit=%s (expected tokens, ast, tir, llvm, ptx, asm, obj, amdgcn or hsaco)",
                          tilec_clip(o.emit));
    emit_target_check(ek, o.target ? o.target : ek->default_target);
    if (o.dump_after && ek->stage != STAGE_TIR)
        tilec_usage_error("--dump-after needs --emit=tir");
    if (o.dump_after && !tc_dump_point_known(o.dump_after))
        tilec_usage_error("unknown --dump-after=%s (expected one of: %s)", tilec_clip(o.dump_after),
                          TC_DUMP_POINTS);
    Source src;
    int rc = EXIT_ERROR;
    if (tilec_source_load_report(&src, o.file, o.kernel) != 0)
        goto out;
    TilecOutput out;
    if (tilec_output_open(&out, o.output, o.file, ek->stage == STAGE_OBJECT) != 0) {
        tilec_source_free(&src);
        goto out;
    }
    if (ek->stage == STAGE_TOKENS) {
        lex_dump_tokens(&src.file, out.f);
        rc = EXIT_OK;
    } else if (src.module) { /* with sema's errors: the other kernels' are reported too */
        rc = emit_module(&src, &o, ek, out.f) == 0 && !src.diags.errors ? EXIT_OK : EXIT_ERROR;
    }
    if (tilec_output_close(&out, rc == EXIT_OK) != 0)
        rc = EXIT_ERROR;
    tilec_source_free(&src);
out:
    arena_free(arena);
    return rc;
}

/* ---- list ---- */

static void print_param(const Param *p, FILE *out)
{
    fprintf(out, "%s%s", p->is_const ? "const " : "", p->name);
    if (p->type)
        fprintf(out, ": %s%s", p->type->ptr_depth ? "*" : "", p->type->name);
}

static int cmd_list(int argc, char **argv)
{
    Arena *arena = tilec_need(arena_new());
    Opts o;
    opts_parse(&o, argc, argv, arena);
    Source src;
    int rc = EXIT_ERROR;
    if (tilec_source_load(&src, o.file) == 0 && src.module) {
        const Func **ks = kernel_slots(&src);
        int n = kernels_or_fail(&src, o.kernel, ks);
        for (int i = 0; i < n; i++) {
            printf("%s(", ks[i]->name);
            for (int j = 0; j < ks[i]->nparams; j++) {
                if (j)
                    printf(", ");
                print_param(&ks[i]->params[j], stdout);
            }
            printf(")\n");
        }
        rc = n < 0 ? EXIT_ERROR : EXIT_OK;
    }
    if (src.arena || src.text)
        tilec_source_free(&src);
    arena_free(arena);
    return rc;
}

/* ---- main ---- */

static void print_version(void)
{
    unsigned major = 0, minor = 0, patch = 0;
    LLVMGetVersion(&major, &minor, &patch);
    printf("tilec %s (tile language compiler)\nLLVM %u.%u.%u\n", TILE_COMPILER_VERSION, major,
           minor, patch);
}

static int has_emit_option(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strncmp(argv[i], "--emit", 6) == 0)
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        tilec_usage_error("no command given");
    const char *fail = getenv("TILE_TEST_ARENA_FAIL_AFTER"); /* tests/tilec_oom.sh */
    if (fail && *fail)
        arena_fail_after(strtol(fail, NULL, 10));
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        print_help();
        return EXIT_OK;
    }
    if (subcommand_help(argc, argv))
        return EXIT_OK;
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        print_version();
        return EXIT_OK;
    }
    if (strcmp(cmd, "check") == 0)
        return cmd_check(argc - 2, argv + 2);
    if (strcmp(cmd, "emit") == 0)
        return cmd_emit(argc - 2, argv + 2);
    if (strcmp(cmd, "run") == 0)
        return tilec_cmd_run(argc - 2, argv + 2);
    if (strcmp(cmd, "tune") == 0)
        return tilec_cmd_tune(argc - 2, argv + 2);
    if (strcmp(cmd, "list") == 0)
        return cmd_list(argc - 2, argv + 2);
    if (strcmp(cmd, "cache") == 0)
        return tilec_cmd_cache(argc - 2, argv + 2);
    if (strcmp(cmd, "tune-worker") == 0) /* hidden: the tuner's worker process */
        return tilec_cmd_tune_worker(argc - 2, argv + 2);
    /* `tilec --emit=tir FILE` and `tilec FILE` read as emit and check, like a C compiler */
    if (has_emit_option(argc, argv))
        return cmd_emit(argc - 1, argv + 1);
    size_t n = strlen(cmd);
    if (cmd[0] != '-' && n > 5 && strcmp(cmd + n - 5, ".tile") == 0)
        return cmd_check(argc - 1, argv + 1);
    if (cmd[0] == '-')
        tilec_usage_error("unknown option '%s'", tilec_clip(cmd));
    tilec_usage_error("unknown command '%s' (expected check, emit, run, list, tune or cache)",
                      tilec_clip(cmd));
}
