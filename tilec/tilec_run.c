/* tilec_run.c: `tilec run FILE:KERNEL [NAME=VALUE ...]`: launches a kernel through the public
 * runtime (tile.h) on random inputs, then times it. Scalar parameters take NAME=VALUE (an
 * expression over the other values); a pointer parameter gets a buffer of NAME=COUNT elements
 * (default --elems), filled with random values or read from a file (--load, tilec_run_io.c).
 * `// run: ...` lines in the source give defaults. Prints the compile time, the median and
 * minimum time per launch (or the tuner's cold timing, --cold), an effective bandwidth, and
 * the first values of every buffer the kernel wrote; --save writes buffers to files,
 * --verbose the specialization's facts (tilec_run_device.c). */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "tile.h"
#include "fp8.h"
#include "tilec.h"

enum { MAX_PARAMS = 64, MAX_REPS = 1000000 };

typedef struct RunOpts {
    const char *file, *kernel, *backend;
    long elems, reps;
    unsigned long seed;
    int check, reps_set, verbose, cold;
    TilecFileArg loads[MAX_PARAMS], saves[MAX_PARAMS];
    int nloads, nsaves;
    struct Fill { const char *name, *text; double lo, hi; } fills[MAX_PARAMS]; /* --fill */
    int nfills;
    ConstBinding defs[TILEC_MAX_DEFS];
    int ndefs;
    TilecValues vals;
} RunOpts;

/* One runtime parameter and, for pointers, its buffer. */
typedef struct RunParam {
    const Param *p;
    ElemKind elem; /* pointee for pointers */
    int is_ptr;
    size_t count, bytes;
    unsigned char *init, *result;
    tile_DevPtr dev;
    tile_Arg arg;
} RunParam;

/* After "// run": the text after the colon of `// run:` (every kernel) or `// run KERNEL:`
 * (KERNEL a kernel of the file, copied to name), or NULL: any other comment that starts with
 * the word ("// run-time sizes ...", "// run this: ...") is no run line. */
static const char *hint_values(const char *s, const Module *m, char *name, size_t size)
{
    name[0] = 0;
    if (*s == ':')
        return s + 1;
    if (*s != ' ' && *s != '\t')
        return NULL;
    s += strspn(s, " \t");
    size_t n = 0;
    while (isalnum((unsigned char)s[n]) || s[n] == '_')
        n++;
    const char *colon = s + n + strspn(s + n, " \t");
    if (n == 0 || n >= size || *colon != ':')
        return NULL;
    memcpy(name, s, n);
    name[n] = 0;
    const Func *f = module_find_func(m, name);
    return f && f->is_kernel ? colon + 1 : NULL;
}

/* A NAME=VALUE of a run line, or a diagnostic at it (file:line:col, the line, a caret) and
 * exit 1: the source is wrong, not the command line. */
static void hint_value_add(RunOpts *o, const Source *src, const char *tok, size_t len, Arena *a)
{
    const char *eq = memchr(tok, '=', len);
    if (!eq || eq == tok || eq + 1 == tok + len) {
        const char *line = src->text;
        int lineno = 1;
        for (const char *p = src->text; p < tok; p++)
            if (*p == '\n')
                lineno++, line = p + 1;
        Diags d;
        diags_init(&d, a);
        diag_error(&d, (SrcLoc){&src->file, lineno, (int)(tok - line) + 1, (int)len},
                   "expected NAME=VALUE in this `// run` line, got '%.*s'", (int)len, tok);
        diags_print(&d, stderr);
        exit(EXIT_ERROR);
    }
    tilec_value_add(&o->vals, tilec_need(arena_strndup(a, tok, len)), 1, a);
}

/* `// run: A=1 B=2` lines (for every kernel) and `// run KERNEL: ...` (for one). */
static void values_from_hints(RunOpts *o, const Source *src, const char *kernel, Arena *a)
{
    const char *text = src->text;
    for (const char *line = text; line && *line; line = strchr(line, '\n'), line += !!line) {
        const char *s = line + strspn(line, " \t"), *eol = strchr(line, '\n');
        char name[128];
        if (strncmp(s, "// run", 6) != 0 || !(s = hint_values(s + 6, src->module, name, sizeof name)))
            continue;
        if (name[0] && strcmp(name, kernel) != 0)
            continue;
        const char *end = eol ? eol : s + strlen(s);
        for (s += strspn(s, " \t\r"); s < end; s += strspn(s, " \t\r")) {
            size_t len = strcspn(s, " \t\r\n");
            hint_value_add(o, src, s, len, a);
            s += len;
        }
    }
}

/* ---- options ---- */

static tile_Backend backend_from_name(const char *name)
{
    if (strcmp(name, "auto") == 0)
        return TILE_BACKEND_AUTO;
    if (strcmp(name, "cpu") == 0)
        return TILE_BACKEND_CPU;
    if (strcmp(name, "cuda") == 0)
        return TILE_BACKEND_CUDA;
    if (strcmp(name, "hip") == 0)
        return TILE_BACKEND_HIP;
    if (strcmp(name, "sim") == 0)
        return TILE_BACKEND_SIM;
    tilec_usage_error("unknown --backend=%s (expected auto, cpu, cuda, hip or sim)",
                      tilec_clip(name));
}


/* A non-negative integer option of at most `max`; a usage error otherwise. */
static long parse_long(const char *s, const char *what, long max)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 0);
    if (*s == '\0' || *end != '\0' || v < 0 || errno == ERANGE)
        tilec_usage_error("bad %s '%s' (expected a non-negative integer)", what, tilec_clip(s));
    if (v > max)
        tilec_usage_error("bad %s '%s' (at most %ld)", what, tilec_clip(s), max);
    return v;
}

static const TilecFileArg *file_arg_find(const TilecFileArg *fs, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(fs[i].name, name))
            return &fs[i];
    return NULL;
}

/* --fill NAME=V (every element V) or NAME=LO:HI (random: integers in [LO, HI], floats in
 * [LO, HI)). */
static void fill_add(RunOpts *o, const char *text, Arena *a)
{
    const char *eq = strchr(text, '=');
    char *end;
    if (!eq || eq == text || o->nfills == MAX_PARAMS)
        tilec_usage_error("bad --fill '%s': expected NAME=VALUE or NAME=LO:HI", tilec_clip(text));
    struct Fill *f = &o->fills[o->nfills++];
    f->name = tilec_need(arena_strndup(a, text, (size_t)(eq - text)));
    f->text = text;
    f->lo = f->hi = strtod(eq + 1, &end);
    if (end != eq + 1 && *end == ':')
        f->hi = strtod(end + 1, &end);
    if (end == eq + 1 || *end || !(f->lo <= f->hi) || !isfinite(f->lo) || !isfinite(f->hi))
        tilec_usage_error("bad --fill '%s': expected NAME=VALUE or NAME=LO:HI with finite "
                          "LO <= HI", tilec_clip(text));
    for (int i = 0; i + 1 < o->nfills; i++)
        if (!strcmp(o->fills[i].name, f->name))
            tilec_usage_error("--fill %s given twice", tilec_clip(f->name));
}

/* A --fill's values must be elements of its buffer's type: integers within an integer
 * type's range (converting another double to it is undefined behaviour), magnitudes a float
 * type holds (an f16 stops at 65504: beyond is infinity; fp8 saturates, from a float). */
static void fill_check(const struct Fill *f, ElemKind k)
{
    char range[TILEC_RANGE_TEXT];
    double max = tilec_float_max(k);
    if (et_is_float(k) && (fabs(f->lo) > max || fabs(f->hi) > max))
        tilec_usage_error("bad --fill %s: out of the range of %s (finite values of magnitude at "
                          "most %g)", tilec_clip(f->text), et_name(k), max);
    if (!et_is_float(k) && (!tilec_int_fits(k, f->lo, range) || !tilec_int_fits(k, f->hi, range)))
        tilec_usage_error("bad --fill %s: %s takes integers in %s", tilec_clip(f->text),
                          et_name(k), range);
}

/* --load / --save NAME=FILE; one of each per NAME. */
static void file_arg_add(TilecFileArg *fs, int *n, const char *text, const char *opt, Arena *a)
{
    TilecFileArg fa;
    tilec_file_arg_parse(text, opt, a, &fa);
    if (file_arg_find(fs, *n, fa.name))
        tilec_usage_error("%s %s given twice", opt, tilec_clip(fa.name));
    if (*n == MAX_PARAMS)
        tilec_usage_error("too many %s options", opt);
    fs[(*n)++] = fa;
}

static void run_opts_parse(RunOpts *o, int argc, char **argv, Arena *a)
{
    memset(o, 0, sizeof *o);
    o->reps = 10, o->seed = 1, o->elems = -1, o->backend = "auto";
    for (int i = 0; i < argc; i++) {
        const char *s = argv[i], *v;
        if (tilec_opt_import_dir(argc, argv, &i))
            continue;
        if (strncmp(s, "-D", 2) == 0) {
            const char *def = s[2] ? s + 2 : (i + 1 < argc ? argv[++i] : NULL);
            if (!def || o->ndefs == TILEC_MAX_DEFS ||
                tilec_add_define(o->defs, &o->ndefs, def, a) != 0)
                tilec_usage_error("bad -D '%s': expected NAME=VALUE", def ? tilec_clip(def) : "");
        } else if ((v = tilec_opt_value(argc, argv, &i, "--backend")))
            o->backend = v;
        else if ((v = tilec_opt_value(argc, argv, &i, "--reps")))
            o->reps = parse_long(v, "--reps", MAX_REPS), o->reps_set = 1;
        else if ((v = tilec_opt_value(argc, argv, &i, "--elems")))
            o->elems = parse_long(v, "--elems", LONG_MAX);
        else if ((v = tilec_opt_value(argc, argv, &i, "--seed")))
            o->seed = (unsigned long)parse_long(v, "--seed", LONG_MAX);
        else if ((v = tilec_opt_value(argc, argv, &i, "--load")))
            file_arg_add(o->loads, &o->nloads, v, "--load", a);
        else if ((v = tilec_opt_value(argc, argv, &i, "--save")))
            file_arg_add(o->saves, &o->nsaves, v, "--save", a);
        else if ((v = tilec_opt_value(argc, argv, &i, "--fill")))
            fill_add(o, v, a);
        else if (strcmp(s, "--check") == 0)
            o->check = 1;
        else if (strcmp(s, "--verbose") == 0)
            o->verbose = 1;
        else if (strcmp(s, "--cold") == 0)
            o->cold = 1;
        else if (s[0] == '-' && s[1] != '\0' && !isdigit((unsigned char)s[1]))
            tilec_usage_error("unknown option '%s'", tilec_clip(s));
        else if (strchr(s, '=') && o->file)
            tilec_value_add(&o->vals, s, 0, a);
        else if (o->file)
            tilec_usage_error("unexpected argument '%s'", tilec_clip(s));
        else
            o->file = s;
    }
    if (!o->file)
        tilec_usage_error("no kernel given (expected FILE:KERNEL)");
    backend_from_name(o->backend); /* a bad name is a usage error before any work */
    char *colon = strrchr(o->file, ':');
    if (colon && colon[1] && !strchr(colon, '/')) {
        o->kernel = tilec_need(arena_strdup(a, colon + 1));
        o->file = tilec_need(arena_strndup(a, o->file, (size_t)(colon - o->file)));
    }
    for (int i = 0; i < o->nsaves; i++)
        if (tilec_same_file(o->saves[i].path, o->file))
            tilec_usage_error("--save %s=%s names the source file", tilec_clip(o->saves[i].name),
                              tilec_clip(o->saves[i].path));
}

/* ---- element values ---- */

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint16_t f32_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000, mant = x & 0x7fffff;
    int exp = (int)((x >> 23) & 0xff) - 127 + 15;
    if (exp >= 31)
        return (uint16_t)(sign | 0x7c00 | (((x >> 23) & 0xff) == 0xff && mant ? 0x200 : 0));
    if (exp <= 0) {
        if (exp < -10)
            return (uint16_t)sign;
        mant |= 0x800000;
        int shift = 14 - exp;
        uint32_t h = mant >> shift, rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
        h += rem > half || (rem == half && (h & 1));
        return (uint16_t)(sign | h);
    }
    uint32_t h = ((uint32_t)exp << 10) | (mant >> 13), rem = mant & 0x1fff;
    h += rem > 0x1000 || (rem == 0x1000 && (h & 1));
    return (uint16_t)(sign | h);
}

static float f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff, x;
    if (exp == 0x1f)
        x = sign | 0x7f800000 | (mant << 13);
    else if (exp == 0) {
        float f = ldexpf((float)mant, -24);
        return sign ? -f : f;
    } else
        x = sign | ((exp + 112) << 23) | (mant << 13);
    float f;
    memcpy(&f, &x, 4);
    return f;
}

/* Stores v (in range: fill_check) as element kind k at p. */
static void elem_store(ElemKind k, void *p, double v)
{
    float f = (float)v;
    uint32_t b;
    switch (k) {
    case ET_BOOL: *(uint8_t *)p = v != 0; break;
    case ET_I8: *(int8_t *)p = (int8_t)v; break;
    case ET_I16: *(int16_t *)p = (int16_t)v; break;
    case ET_I32: *(int32_t *)p = (int32_t)v; break;
    case ET_I64: *(int64_t *)p = (int64_t)v; break;
    case ET_U8: *(uint8_t *)p = (uint8_t)v; break;
    case ET_U16: *(uint16_t *)p = (uint16_t)v; break;
    case ET_U32: *(uint32_t *)p = (uint32_t)v; break;
    case ET_U64: *(uint64_t *)p = (uint64_t)v; break;
    case ET_F16: *(uint16_t *)p = f32_to_f16(f); break;
    case ET_BF16:
        memcpy(&b, &f, 4);
        *(uint16_t *)p = (uint16_t)((b + 0x7fff + ((b >> 16) & 1)) >> 16);
        break;
    case ET_F32: *(float *)p = f; break;
    case ET_F64: *(double *)p = v; break;
    case ET_F8E4M3: case ET_F8E5M2: *(uint8_t *)p = fp8_from_f32(f, k); break;
    default: break;
    }
}

static double elem_load(ElemKind k, const void *p)
{
    uint32_t b;
    float f;
    switch (k) {
    case ET_BOOL: return *(const uint8_t *)p;
    case ET_I8: return *(const int8_t *)p;
    case ET_I16: return *(const int16_t *)p;
    case ET_I32: return *(const int32_t *)p;
    case ET_I64: return (double)*(const int64_t *)p;
    case ET_U8: return *(const uint8_t *)p;
    case ET_U16: return *(const uint16_t *)p;
    case ET_U32: return *(const uint32_t *)p;
    case ET_U64: return (double)*(const uint64_t *)p;
    case ET_F16: return f16_to_f32(*(const uint16_t *)p);
    case ET_BF16:
        b = (uint32_t) * (const uint16_t *)p << 16;
        memcpy(&f, &b, 4);
        return f;
    case ET_F32: return *(const float *)p;
    case ET_F64: return *(const double *)p;
    case ET_F8E4M3: case ET_F8E5M2: return fp8_to_f32(*(const uint8_t *)p, k);
    default: return 0;
    }
}

/* --fill: V everywhere, or random values in [lo, hi] (integers) / [lo, hi) (floats). */
static void fill_spec(RunParam *rp, const struct Fill *f, uint64_t *seed)
{
    int esz = et_bytes(rp->elem);
    for (size_t i = 0; i < rp->count; i++) {
        uint64_t r = rng_next(seed);
        double v = f->lo, u = (double)(r >> 11) * 0x1p-53, span;
        if (f->hi > f->lo && et_is_float(rp->elem)) /* no f->hi - f->lo: it may overflow */
            v = f->lo * (1 - u) + f->hi * u;
        else if (f->hi > f->lo) { /* whole LO and HI (fill_check): a span up to 2^64 */
            span = f->hi - f->lo + 1;
            v = f->lo + (span < 0x1p64 ? (double)(r % (uint64_t)span) : (double)r);
        }
        v = v > f->hi ? f->hi : v; /* rounding near HI */
        elem_store(rp->elem, rp->init + i * (size_t)esz, v);
    }
}

/* Without --fill: floats in [-1, 1); integers in [0, min(count, 100)) so that they work as
 * indices; bools 0 or 1. */
static void fill_random(RunParam *rp, uint64_t *seed)
{
    size_t imax = rp->count < 100 ? (rp->count ? rp->count : 1) : 100;
    struct Fill f = { .name = rp->p->name, .hi = rp->elem == ET_BOOL ? 1 : (double)(imax - 1) };
    if (et_is_float(rp->elem))
        f.lo = -1, f.hi = 1;
    fill_spec(rp, &f, seed);
}

static const struct Fill *fill_find(const RunOpts *o, const char *name)
{
    for (int i = 0; i < o->nfills; i++)
        if (!strcmp(o->fills[i].name, name))
            return &o->fills[i];
    return NULL;
}

/* ---- setting up parameters ---- */

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static TilecValue *value_get(RunOpts *o, const char *name)
{
    return tilec_value_find(&o->vals, name);
}

/* Default buffer length: the largest integer scalar argument, or 2^20. */
static int64_t default_elems(RunOpts *o, const Func *f)
{
    int64_t best = 0;
    for (int i = 0; i < f->nparams; i++) {
        const Param *p = &f->params[i];
        TilecValue *v = value_get(o, p->name);
        if (!p->is_const && p->type && !p->type->ptr_depth && v && !v->num.is_float &&
            v->num.i > best)
            best = v->num.i;
    }
    return best > 0 ? best : INT64_C(1) << 20;
}

static int is_pointer_param(const Func *f, const char *name)
{
    for (int j = 0; j < f->nparams; j++) {
        const Param *p = &f->params[j];
        if (!strcmp(p->name, name))
            return !p->is_const && p->type && p->type->ptr_depth;
    }
    return 0;
}

/* A --load, --save or --fill must name a pointer parameter of the kernel (`shown`: the
 * option's argument as the message repeats it). */
static void pointer_param_check(const Func *f, const char *opt, const char *name,
                                const char *shown)
{
    if (!is_pointer_param(f, name))
        tilec_usage_error("%s %s: '%s' is not a pointer parameter of '%s'", opt,
                          tilec_clip(shown), tilec_clip(name), tilec_clip(f->name));
}

static void files_check(const TilecFileArg *fs, int n, const char *opt, const Func *f)
{
    for (int i = 0; i < n; i++) {
        char shown[512];
        snprintf(shown, sizeof shown, "%s=%s", fs[i].name, fs[i].path);
        pointer_param_check(f, opt, fs[i].name, shown);
    }
}

/* A loaded buffer's length is its file's; a count given on the command line must agree. */
static size_t loaded_count(const TilecFileArg *fa, const RunParam *rp, const TilecValue *v)
{
    size_t count = tilec_file_elems(fa, rp->elem);
    if (!count)
        tilec_usage_error("--load %s=%s: the file holds no elements (the buffer of pointer "
                          "parameter '%s' needs at least one)", tilec_clip(fa->name),
                          tilec_clip(fa->path), tilec_clip(fa->name));
    if (v && !v->hint && (v->num.is_float || v->num.i < 0 || (uint64_t)v->num.i != count))
        tilec_usage_error("--load %s=%s holds %zu %s elements, but %s=%s", tilec_clip(fa->name),
                          tilec_clip(fa->path), count, et_name(rp->elem), tilec_clip(v->name),
                          tilec_clip(v->expr));
    return count;
}

static int params_setup(RunOpts *o, const Func *f, RunParam *rps, int *n)
{
    int64_t elems = o->elems >= 0 ? o->elems : default_elems(o, f);
    files_check(o->loads, o->nloads, "--load", f);
    files_check(o->saves, o->nsaves, "--save", f);
    for (int i = 0; i < o->nfills; i++)
        pointer_param_check(f, "--fill", o->fills[i].name, o->fills[i].name);
    *n = 0;
    for (int i = 0; i < f->nparams; i++) {
        const Param *p = &f->params[i];
        if (p->is_const)
            continue;
        RunParam *rp = &rps[(*n)++];
        memset(rp, 0, sizeof *rp);
        rp->p = p;
        rp->is_ptr = p->type->ptr_depth > 0;
        rp->elem = et_from_name(p->type->name);
        TilecValue *v = value_get(o, p->name);
        const TilecFileArg *load = file_arg_find(o->loads, o->nloads, p->name);
        const struct Fill *fill = rp->is_ptr ? fill_find(o, p->name) : NULL;
        if (fill)
            fill_check(fill, rp->elem);
        if (rp->is_ptr && load) {
            rp->count = loaded_count(load, rp, v);
            rp->bytes = rp->count * (size_t)et_bytes(rp->elem);
        } else if (rp->is_ptr) {
            int64_t count = v ? tilec_value_int(v, ET_I64) : elems;
            char why[64];
            snprintf(why, sizeof why, "%lld (%s)", (long long)count,
                     o->elems >= 0 ? "--elems" : "the largest integer argument");
            rp->bytes = tilec_buffer_bytes(p->name, v ? v->expr : why, count, et_bytes(rp->elem));
            rp->count = (size_t)count;
        } else if (!v) {
            tilec_usage_error("no value for scalar parameter '%s' of '%s' (add %s=VALUE)",
                              tilec_clip(p->name), tilec_clip(f->name), tilec_clip(p->name));
        } else if (et_is_float(rp->elem)) {
            rp->arg = tile_float(tilec_value_float(v, rp->elem));
        } else {
            rp->arg = tile_int(tilec_value_int(v, rp->elem));
        }
    }
    return 0;
}

/* const params given as NAME=VALUE instead of -D are accepted too */
static void consts_collect(RunOpts *o, const Func *f, tile_Const *cs, int *n)
{
    *n = 0;
    for (int i = 0; i < o->ndefs; i++)
        cs[(*n)++] = (tile_Const){o->defs[i].name, o->defs[i].value};
    for (int i = 0; i < f->nparams; i++) {
        TilecValue *v = value_get(o, f->params[i].name);
        if (!f->params[i].is_const || !v || v->implied || *n == TILEC_MAX_DEFS * 2)
            continue;
        for (int j = 0; j < o->ndefs; j++)
            if (!strcmp(o->defs[j].name, v->name))
                tilec_usage_error("const '%s' given twice (-D %s=%lld and %s=%s)",
                                  tilec_clip(v->name), tilec_clip(v->name),
                                  (long long)o->defs[j].value, tilec_clip(v->name),
                                  tilec_clip(v->expr));
        cs[(*n)++] = (tile_Const){f->params[i].name, tilec_value_int(v, ET_I64)};
    }
}

/* The host copies must fit this machine's memory: an allocation that overcommit lets through
 * would otherwise be filled page by page until the OOM killer ends the process (or another). */
static int buffers_fit(const RunParam *rps, int n, int copies)
{
    double need = 0, have = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    for (int i = 0; i < n; i++)
        need += rps[i].is_ptr ? (double)rps[i].bytes * copies : 0;
    if (have <= 0 || need <= have)
        return 0;
    tilec_error("the buffers need %.0f bytes of host memory (%d cop%s each), more than this "
                "machine's %.0f", need, copies, copies == 1 ? "y" : "ies", have);
    return -1;
}

/* Host copies of every buffer: a --load file's contents, else random values; `result` too
 * when with_result. */
static int buffers_init(RunOpts *o, RunParam *rps, int n, int with_result)
{
    uint64_t seed = o->seed;
    if (buffers_fit(rps, n, with_result ? 2 : 1) != 0)
        return -1;
    for (int i = 0; i < n; i++) {
        RunParam *rp = &rps[i];
        if (!rp->is_ptr)
            continue;
        rp->init = malloc(rp->bytes + 1);
        rp->result = with_result ? malloc(rp->bytes + 1) : NULL;
        if (!rp->init || (with_result && !rp->result)) {
            tilec_error("out of memory for buffer '%s'", tilec_clip(rp->p->name));
            return -1;
        }
        const TilecFileArg *load = file_arg_find(o->loads, o->nloads, rp->p->name);
        const struct Fill *fill = fill_find(o, rp->p->name);
        if (fill && load)
            tilec_usage_error("--fill %s and --load %s: give one", tilec_clip(fill->name),
                              tilec_clip(load->name));
        if (fill)
            fill_spec(rp, fill, &seed);
        else if (!load)
            fill_random(rp, &seed);
        else if (tilec_file_read(load, rp->elem, rp->init, rp->bytes) != 0)
            return -1;
    }
    return 0;
}

/* ---- running ---- */

typedef struct Runner {
    tile_Context *ctx;
    tile_Kernel *k;
    tile_Module *mod;
    RunParam *rps;
    int n;
    tile_Arg args[MAX_PARAMS];
    tile_Const consts[TILEC_MAX_DEFS * 2];
    int nconsts;
} Runner;

static const char *status_name(tile_Status s)
{
    static const char *const names[] = {"ok", "invalid argument", "compile error", "not found",
                                        "no device", "device error", "out of memory",
                                        "I/O error", "unsupported", "device_assert"};
    return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "unknown status";
}

static int fail(Runner *r, tile_Status s, const char *what)
{
    const char *msg = r->ctx ? tile_error(r->ctx) : "";
    tilec_error("%s: %s%s%s", what, status_name(s), msg && *msg ? ": " : "", msg ? msg : "");
    return -1;
}

static int runner_open(Runner *r, tile_Backend b, const char *file, const char *kernel)
{
    tile_Status s = tile_context_open(b, &r->ctx);
    if (s != TILE_OK) {
        const char *why = tile_error(r->ctx); /* NULL context: this thread's last error */
        tilec_error("cannot open the %s backend: %s%s%s", tile_backend_name(b), status_name(s),
                    why && *why ? ": " : "", why ? why : "");
        return -1;
    }
    tilec_log_install(r->ctx);
    if ((s = tile_set_import_path(r->ctx, tilec_import_path())) != TILE_OK)
        return fail(r, s, "setting the import path failed");
    if ((s = tile_module_load_file(r->ctx, file, &r->mod)) != TILE_OK)
        return fail(r, s, "loading the module failed");
    if ((s = tile_kernel_get(r->mod, kernel, &r->k)) != TILE_OK)
        return fail(r, s, "no such kernel");
    return 0;
}

/* Allocates device buffers and uploads the initial contents. */
static int runner_upload(Runner *r, int alloc)
{
    for (int i = 0; i < r->n; i++) {
        RunParam *rp = &r->rps[i];
        tile_Status s = TILE_OK;
        if (!rp->is_ptr) {
            r->args[i] = rp->arg;
            continue;
        }
        size_t bytes = rp->bytes ? rp->bytes : 1;
        if (alloc && (s = tile_malloc(r->ctx, bytes, &rp->dev)) != TILE_OK)
            return fail(r, s, "allocating a buffer failed");
        if (rp->bytes && (s = tile_copy_to_device(r->ctx, rp->dev, rp->init, rp->bytes)) != TILE_OK)
            return fail(r, s, "copying to the device failed");
        r->args[i] = tile_ptr(rp->dev);
    }
    return 0;
}

static int runner_launch(Runner *r)
{
    tile_Status s = tile_launch(r->k, r->args, r->n, r->consts, r->nconsts);
    if (s == TILE_OK)
        s = tile_synchronize(r->ctx);
    return s == TILE_OK ? 0 : fail(r, s, "launch failed");
}

static int runner_download(Runner *r, unsigned char **dst)
{
    for (int i = 0; i < r->n; i++) {
        RunParam *rp = &r->rps[i];
        if (!rp->is_ptr || !rp->bytes)
            continue;
        tile_Status s = tile_copy_to_host(r->ctx, dst[i], rp->dev, rp->bytes);
        if (s != TILE_OK)
            return fail(r, s, "copying back failed");
    }
    return 0;
}

static void runner_close(Runner *r)
{
    if (r->ctx)
        tile_context_close(r->ctx);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void print_size(double bytes)
{
    if (bytes >= 1e9)
        printf("%.2f GB", bytes / 1e9);
    else if (bytes >= 1e6)
        printf("%.2f MB", bytes / 1e6);
    else
        printf("%.1f KB", bytes / 1e3);
}

/* The first values of every buffer the first launch changed. */
static void print_outputs(Runner *r)
{
    for (int i = 0; i < r->n; i++) {
        RunParam *rp = &r->rps[i];
        if (!rp->is_ptr || !rp->bytes || memcmp(rp->init, rp->result, rp->bytes) == 0)
            continue;
        int esz = et_bytes(rp->elem);
        size_t show = rp->count < 6 ? rp->count : 6, nonfinite = 0;
        printf("  %s = [", rp->p->name);
        for (size_t j = 0; j < show; j++)
            printf("%s%.6g", j ? ", " : "", elem_load(rp->elem, rp->result + j * (size_t)esz));
        for (size_t j = 0; j < rp->count; j++)
            nonfinite += !isfinite(elem_load(rp->elem, rp->result + j * (size_t)esz));
        printf("%s] (%zu x %s written", rp->count > show ? ", ..." : "", rp->count,
               et_name(rp->elem));
        if (nonfinite)
            printf(", %zu not finite", nonfinite);
        printf(")\n");
    }
}

/* Runs the kernel on the CPU backend on the same inputs and compares every buffer. */
static int check_against_cpu(Runner *main, RunOpts *o)
{
    Runner ref = *main;
    ref.ctx = NULL, ref.mod = NULL, ref.k = NULL;
    unsigned char *outs[MAX_PARAMS] = {0};
    int rc = -1;
    if (runner_open(&ref, TILE_BACKEND_CPU, o->file, o->kernel) != 0 || runner_upload(&ref, 1) != 0)
        goto out;
    for (int i = 0; i < ref.n; i++)
        if (ref.rps[i].is_ptr && !(outs[i] = malloc(ref.rps[i].bytes + 1)))
            goto out;
    if (runner_launch(&ref) != 0 || runner_download(&ref, outs) != 0)
        goto out;
    rc = 0;
    for (int i = 0; i < ref.n; i++) {
        RunParam *rp = &ref.rps[i];
        if (!rp->is_ptr || (memcmp(rp->init, rp->result, rp->bytes) == 0 &&
                            memcmp(rp->init, outs[i], rp->bytes) == 0))
            continue; /* an input neither run wrote */
        double num = 0, den = 0, maxerr = 0;
        int esz = et_bytes(rp->elem);
        for (size_t j = 0; j < rp->count; j++) {
            double a = elem_load(rp->elem, rp->result + j * (size_t)esz);
            double b = elem_load(rp->elem, outs[i] + j * (size_t)esz);
            double d = a == b || (isnan(a) && isnan(b)) ? 0 : fabs(a - b); /* inf == inf */
            num += d * d;
            den += isfinite(b) ? b * b : 0; /* an infinity would hide every other error */
            maxerr = d > maxerr || isnan(d) ? d : maxerr;
        }
        double rel = den > 0 ? sqrt(num / den) : sqrt(num);
        double tol = rp->elem == ET_F16 || rp->elem == ET_BF16 ? 1e-2
                     : rp->elem == ET_F8E4M3 ? 0.13 : rp->elem == ET_F8E5M2 ? 0.26 /* an fp8 ulp */
                     : et_is_float(rp->elem) ? 1e-4 : 0;
        int ok = !(rel > tol) && !isnan(rel);
        printf("  check %s against cpu: relative error %.3g, max abs error %.3g: %s\n",
               rp->p->name, rel, maxerr, ok ? "ok" : "MISMATCH");
        rc |= ok ? 0 : -1;
    }
out:
    for (int i = 0; i < ref.n; i++)
        free(outs[i]);
    runner_close(&ref);
    return rc;
}

/* --save: the buffers after the first launch (host copies in rp->result). */
static int buffers_save(RunOpts *o, Runner *r)
{
    for (int i = 0; i < r->n; i++) {
        const TilecFileArg *save = file_arg_find(o->saves, o->nsaves, r->rps[i].p->name);
        if (save && tilec_file_write(save, r->rps[i].result, r->rps[i].bytes) != 0)
            return -1;
        if (save)
            printf("  saved %s (%zu x %s) to %s\n", save->name, r->rps[i].count,
                   et_name(r->rps[i].elem), save->path);
    }
    return 0;
}

static double buffers_bytes(const Runner *r)
{
    double bytes = 0;
    for (int i = 0; i < r->n; i++)
        bytes += (double)r->rps[i].bytes;
    return bytes;
}

static int time_launches(Runner *r, long reps)
{
    if (reps <= 0)
        return 0;
    double *t = malloc(sizeof(double) * (size_t)reps);
    if (!t)
        return -1;
    for (long i = 0; i < reps; i++) {
        double t0 = now_ms();
        if (runner_launch(r) != 0) {
            free(t);
            return -1;
        }
        t[i] = now_ms() - t0;
    }
    qsort(t, (size_t)reps, sizeof *t, cmp_double);
    double med = reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
    double bytes = buffers_bytes(r);
    printf("  %ld launches: median %.4f ms, min %.4f ms; ", reps, med, t[0]);
    print_size(bytes);
    printf(" of buffers -> %.2f GB/s effective\n", med > 0 ? bytes / (med * 1e6) : 0.0);
    free(t);
    return 0;
}

static int run_kernel(RunOpts *o, const Func *f)
{
    RunParam rps[MAX_PARAMS];
    int n = 0;
    if (f->nparams > MAX_PARAMS)
        tilec_usage_error("kernel '%s' has %d parameters: tilec run takes at most %d "
                          "(tile_launch takes any kernel)", tilec_clip(f->name), f->nparams,
                          MAX_PARAMS);
    params_setup(o, f, rps, &n);
    Runner r = {.rps = rps, .n = n};
    consts_collect(o, f, r.consts, &r.nconsts);
    int rc = -1;
    if (buffers_init(o, rps, n, 1) != 0)
        goto out;
    /* the runtime may compile when loading the module or at the first launch: time both */
    double t0 = now_ms();
    if (runner_open(&r, backend_from_name(o->backend), o->file, o->kernel) != 0)
        goto out;
    double t_load = now_ms() - t0;
    if (runner_upload(&r, 1) != 0)
        goto out;
    printf("%s:%s on %s (%s)\n", o->file, o->kernel, tile_backend_name(tile_backend(r.ctx)),
           tile_device_name(r.ctx));
    t0 = now_ms();
    if (runner_launch(&r) != 0)
        goto out;
    printf("  load + compile: %.1f ms, first launch: %.1f ms\n", t_load, now_ms() - t0);
    unsigned char *res[MAX_PARAMS];
    for (int i = 0; i < n; i++)
        res[i] = rps[i].result;
    if (runner_download(&r, res) != 0 || buffers_save(o, &r) != 0)
        goto out;
    if (o->verbose && tilec_print_launch_facts(r.k, r.args, r.n, r.consts, r.nconsts) != 0)
        goto out;
    print_outputs(&r);
    if (o->check && check_against_cpu(&r, o) != 0)
        goto out;
    if (o->cold)
        rc = o->reps > 0 ? tilec_time_cold(r.k, r.args, r.n, r.consts, r.nconsts, o->reps,
                                           buffers_bytes(&r)) : 0;
    else
        rc = time_launches(&r, o->reps);
out:
    runner_close(&r);
    for (int i = 0; i < n; i++)
        free(rps[i].init), free(rps[i].result);
    return rc;
}

static const Func *find_kernel(RunOpts *o, const Module *m, Arena *a)
{
    const Func *only = NULL;
    int nk = 0;
    for (int i = 0; i < m->nfuncs; i++)
        if (m->funcs[i]->is_kernel)
            only = m->funcs[i], nk++;
    if (!o->kernel) {
        if (nk != 1)
            tilec_usage_error("%s has %d kernels: name one as %s:KERNEL", tilec_clip(o->file), nk,
                              tilec_clip(o->file));
        o->kernel = tilec_need(arena_strdup(a, only->name));
    }
    const Func *f = module_find_func(m, o->kernel);
    if (!f || !f->is_kernel) {
        tilec_error("%s: no kernel named '%s'", tilec_clip(o->file), tilec_clip(o->kernel));
        return NULL;
    }
    return f;
}

/* A NAME=VALUE of the command line must name a parameter of the kernel (`// run:` lines
 * may set names that only other kernels of the file have). */
static void values_check_names(const TilecValues *vs, const Func *f)
{
    for (int i = 0; i < vs->n; i++) {
        int known = 0;
        for (int j = 0; j < f->nparams && !known; j++)
            known = !strcmp(f->params[j].name, vs->v[i].name);
        if (!vs->v[i].hint && !known)
            tilec_usage_error("%s=%s: '%s' is not a parameter of kernel '%s'",
                              tilec_clip(vs->v[i].name), tilec_clip(vs->v[i].expr),
                              tilec_clip(vs->v[i].name), tilec_clip(f->name));
    }
}

/* The kernel's const values as names the NAME=VALUE expressions may use (q=seq*HEAD_DIM):
 * those given with -D and those with a default (@tune consts without one have no single
 * value and stay unknown), as the launch resolves them. */
static void values_from_consts(RunOpts *o, const Func *f, Arena *a)
{
    ConstBinding defs[TILEC_MAX_DEFS], vals[TILEC_MAX_DEFS + 8];
    int ndefs = tc_defines_for(f, o->defs, o->ndefs, defs);
    Diags quiet;
    diags_init(&quiet, a);
    int n = tc_resolve_consts(f, defs, ndefs, vals, TILEC_MAX_DEFS + 8, a, &quiet);
    for (int i = 0; i < f->nparams; i++) {
        const Param *p = &f->params[i];
        const ConstBinding *c = NULL;
        for (int j = 0; j < ndefs; j++)
            c = !strcmp(defs[j].name, p->name) ? &defs[j] : c;
        for (int j = 0; !c && p->default_value && j < n; j++)
            c = !strcmp(vals[j].name, p->name) ? &vals[j] : NULL;
        if (!p->is_const || !c || o->vals.n == TILEC_MAX_VALUES)
            continue;
        char text[96];
        snprintf(text, sizeof text, "%s=%lld", p->name, (long long)c->value);
        tilec_value_add(&o->vals, text, 1, a);
        o->vals.v[o->vals.n - 1].implied = 1;
    }
}

/* `// run:` hints first, so that the command line (added later) wins in tilec_value_find;
 * before both, the kernel's const values. */
static void values_load(RunOpts *o, const Source *src, const Func *f, Arena *a)
{
    TilecValues *given = tilec_need(malloc(sizeof *given));
    *given = o->vals;
    o->vals.n = 0;
    values_from_consts(o, f, a);
    values_from_hints(o, src, f->name, a);
    for (int i = 0; i < given->n; i++) {
        if (o->vals.n == TILEC_MAX_VALUES)
            tilec_usage_error("too many NAME=VALUE arguments and `// run:` values (at most %d)",
                              TILEC_MAX_VALUES);
        o->vals.v[o->vals.n++] = given->v[i];
    }
    free(given);
    values_check_names(&o->vals, f);
    tilec_values_resolve(&o->vals);
}

int tilec_cmd_run(int argc, char **argv)
{
    Arena *a = arena_new();
    RunOpts *o = calloc(1, sizeof *o);
    if (!a || !o) {
        tilec_error("out of memory");
        return EXIT_ERROR;
    }
    run_opts_parse(o, argc, argv, a);
    int rc = EXIT_ERROR;
    Source src;
    if (tilec_source_load(&src, o->file) != 0)
        goto out;
    const Func *f = src.module ? find_kernel(o, src.module, a) : NULL;
    if (f) {
        values_load(o, &src, f, a);
        rc = run_kernel(o, f) == 0 ? EXIT_OK : EXIT_ERROR;
    }
    tilec_source_free(&src);
out:
    free(o);
    arena_free(a);
    return rc;
}

/* ---- a kernel ready to launch, for other subcommands (tilec_tune.c) ---- */

typedef struct SessionPriv {
    Arena *arena;
    RunOpts opts;
    Source src;
    int src_loaded;
    RunParam rps[MAX_PARAMS];
    Runner r;
} SessionPriv;

static int session_setup(SessionPriv *p, TilecSession *s, const Func *f)
{
    RunOpts *o = &p->opts;
    int n = 0;
    if (f->nparams > MAX_PARAMS)
        tilec_usage_error("kernel '%s' has %d parameters: tilec run takes at most %d "
                          "(tile_launch takes any kernel)", tilec_clip(f->name), f->nparams,
                          MAX_PARAMS);
    if (o->nsaves || o->verbose || o->cold)
        tilec_usage_error("--save, --verbose and --cold are options of run, not of tune");
    values_load(o, &p->src, f, p->arena);
    params_setup(o, f, p->rps, &n);
    p->r = (Runner){.rps = p->rps, .n = n};
    consts_collect(o, f, p->r.consts, &p->r.nconsts);
    if (buffers_init(o, p->rps, n, 0) != 0)
        return -1;
    if (runner_open(&p->r, backend_from_name(o->backend), o->file, o->kernel) != 0 ||
        runner_upload(&p->r, 1) != 0)
        return -1;
    *s = (TilecSession){ p->r.ctx, p->r.k, o->file, o->kernel, p->r.args, n, p->r.consts,
                         p->r.nconsts, o->reps_set ? o->reps : 0, p };
    return 0;
}

int tilec_session_open(int argc, char **argv, TilecSession *s)
{
    SessionPriv *p = calloc(1, sizeof *p);
    memset(s, 0, sizeof *s);
    if (!p || !(p->arena = arena_new())) {
        free(p);
        tilec_error("out of memory");
        return -1;
    }
    s->priv = p;
    run_opts_parse(&p->opts, argc, argv, p->arena);
    if (tilec_source_load(&p->src, p->opts.file) != 0)
        return -1;
    p->src_loaded = 1;
    const Func *f = p->src.module ? find_kernel(&p->opts, p->src.module, p->arena) : NULL;
    return f ? session_setup(p, s, f) : -1;
}

void tilec_session_close(TilecSession *s)
{
    SessionPriv *p = s->priv;
    if (!p)
        return;
    runner_close(&p->r);
    for (int i = 0; i < p->r.n; i++)
        free(p->rps[i].init);
    if (p->src_loaded)
        tilec_source_free(&p->src);
    arena_free(p->arena);
    free(p);
    s->priv = NULL;
}
