/* test_exec.c: execution tests. Runs every example and the language-feature kernels of
 * tests/exec/NAME.tile through the public runtime (tile.h only) on fresh random inputs, and compares
 * each output with a float64 reference computed here: relative error ||out - ref|| / ||ref||
 * within a tolerance by type (exact for integers). Outputs are poisoned before every launch
 * (NaN bytes for floats, 0xAB for integers) so unwritten elements show, and a guard zone after
 * every buffer catches writes past the end (masks).
 *   test_exec [--backend=cpu|cuda|sim|auto] [--seed=N] [--filter=GROUP] [--quick] [--root=DIR]
 * Exit: 0 all passed, 1 a failure, 77 the backend has no device (skip), 2 usage. */
#define _GNU_SOURCE
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "tile.h"
#include "test_exec.h"

#ifndef TEST_SOURCE_DIR
#define TEST_SOURCE_DIR "."
#endif

enum { GUARD = 16, MAX_BUFS = 32, MAX_MODULES = 64 };

const TyInfo TY[T_COUNT] = {
    {"bool", 1, 0, 0}, {"i8", 1, 0, 1},  {"i16", 2, 0, 1},  {"i32", 4, 0, 1}, {"i64", 8, 0, 1},
    {"u8", 1, 0, 0},   {"u16", 2, 0, 0}, {"u32", 4, 0, 0},  {"u64", 8, 0, 0}, {"f16", 2, 1, 1},
    {"bf16", 2, 1, 1}, {"f32", 4, 1, 1}, {"f64", 8, 1, 1},
};

/* Rounds v to nearest-even with `bits` significant bits and minimum normal exponent emin. */
static double round_fmt(double v, int bits, int emin)
{
    if (v == 0 || !isfinite(v))
        return v;
    int e;
    frexp(v, &e);
    if (e - 1 < emin)
        e = emin + 1;
    double scale = ldexp(1.0, bits - e);
    return nearbyint(v * scale) / scale;
}

static double to_f16(double v)
{
    double r = round_fmt(v, 11, -14);
    return fabs(r) > 65504 ? copysign(INFINITY, r) : r;
}

static double to_bf16(double v)
{
    double r = round_fmt(v, 8, -126);
    return fabs(r) > 0x1.fep127 ? copysign(INFINITY, r) : r; /* past the largest bf16 */
}

static uint16_t f16_encode(double r)
{
    uint16_t sign = signbit(r) ? 0x8000 : 0;
    r = fabs(r);
    if (isnan(r))
        return 0x7e00;
    if (isinf(r))
        return sign | 0x7c00;
    if (r < 0x1p-14)
        return sign | (uint16_t)(r * 0x1p24);
    int e;
    double m = frexp(r, &e);
    return sign | (uint16_t)((e - 1 + 15) << 10) | (uint16_t)((2 * m - 1) * 1024);
}

static double f16_decode(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
    return h & 0x8000 ? -v : v;
}

/* Rounds or wraps v to a value of type t (what a store of t keeps). */
double ty_round(Ty t, double v)
{
    switch (t) {
    case T_BOOL: return v != 0;
    case T_I8: return (int8_t)(int64_t)v;
    case T_I16: return (int16_t)(int64_t)v;
    case T_I32: return (int32_t)(int64_t)v;
    case T_I64: return v >= 0x1p63 ? 0x1p63 : (double)(int64_t)v;
    case T_U8: return (uint8_t)(int64_t)v;
    case T_U16: return (uint16_t)(int64_t)v;
    case T_U32: return (uint32_t)(int64_t)v;
    case T_U64: return v < 0 ? (double)(uint64_t)(int64_t)v : v >= 0x1p64 ? 0x1p64 : (double)(uint64_t)v;
    case T_F16: return to_f16(v);
    case T_BF16: return to_bf16(v);
    case T_F32: return (float)v;
    default: return v;
    }
}

static void elem_write(Ty t, void *p, double v)
{
    float f = (float)v;
    uint32_t b;
    switch (t) {
    case T_BOOL: *(uint8_t *)p = v != 0; break;
    case T_I8: *(int8_t *)p = (int8_t)(int64_t)v; break;
    case T_I16: *(int16_t *)p = (int16_t)(int64_t)v; break;
    case T_I32: *(int32_t *)p = (int32_t)(int64_t)v; break;
    case T_I64: *(int64_t *)p = v >= 0x1p63 ? INT64_MAX : (int64_t)v; break;
    case T_U8: *(uint8_t *)p = (uint8_t)(int64_t)v; break;
    case T_U16: *(uint16_t *)p = (uint16_t)(int64_t)v; break;
    case T_U32: *(uint32_t *)p = (uint32_t)(int64_t)v; break;
    case T_U64: *(uint64_t *)p = v < 0 ? (uint64_t)(int64_t)v : v >= 0x1p64 ? UINT64_MAX : (uint64_t)v; break;
    case T_F16: *(uint16_t *)p = f16_encode(to_f16(v)); break;
    case T_BF16:
        f = (float)to_bf16(v);
        memcpy(&b, &f, 4);
        *(uint16_t *)p = (uint16_t)(b >> 16);
        break;
    case T_F32: *(float *)p = f; break;
    default: *(double *)p = v; break;
    }
}

static double elem_read(Ty t, const void *p)
{
    uint32_t b;
    float f;
    switch (t) {
    case T_BOOL: return *(const uint8_t *)p;
    case T_I8: return *(const int8_t *)p;
    case T_I16: return *(const int16_t *)p;
    case T_I32: return *(const int32_t *)p;
    case T_I64: return (double)*(const int64_t *)p;
    case T_U8: return *(const uint8_t *)p;
    case T_U16: return *(const uint16_t *)p;
    case T_U32: return *(const uint32_t *)p;
    case T_U64: return (double)*(const uint64_t *)p;
    case T_F16: return f16_decode(*(const uint16_t *)p);
    case T_BF16:
        b = (uint32_t) * (const uint16_t *)p << 16;
        memcpy(&f, &b, 4);
        return f;
    case T_F32: return *(const float *)p;
    default: return *(const double *)p;
    }
}

/* ---- test state ---- */

struct State S = {0};
static struct Runner {
    tile_Context *ctx;
    tile_Backend backend;
    const char *root, *filter;

    uint64_t rng;
    int passed, failed, skipped;
    struct { char *path; tile_Module *mod; } mods[MAX_MODULES];
    int nmods;
    /* the current case */
    char name[256];
    char err[1024];
    int skip;
    Buf bufs[MAX_BUFS];
    int nbufs;
} R;

void case_fail(const char *fmt, ...)
{
    if (R.err[0])
        return; /* keep the first failure */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(R.err, sizeof R.err, fmt, ap);
    va_end(ap);
}

uint64_t rnd(void)
{
    uint64_t z = (R.rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

double rnd_unit(void) { return (double)(rnd() >> 11) * 0x1p-53; }

/* An integer in [lo, hi] */
int64_t rnd_int(int64_t lo, int64_t hi) { return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1)); }

void begin(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(R.name, sizeof R.name, fmt, ap);
    va_end(ap);
    R.err[0] = '\0';
    R.skip = 0;
    R.nbufs = 0;
}

static Buf *buf_new(const char *name, Ty t, size_t n, int out)
{
    static Buf dummy;
    static double dummy_v[1 << 16];
    if (R.nbufs == MAX_BUFS) {
        case_fail("too many buffers");
        dummy.v = dummy_v;
        return &dummy;
    }
    Buf *b = &R.bufs[R.nbufs++];
    memset(b, 0, sizeof *b);
    b->name = name, b->t = t, b->n = n, b->out = out;
    size_t bytes = (n + GUARD) * (size_t)TY[t].size;
    b->v = calloc(n ? n : 1, sizeof(double));
    b->raw = malloc(bytes);
    if (!b->v || !b->raw) {
        fprintf(stderr, "test_exec: out of memory\n");
        exit(1);
    }
    tile_Status s = tile_malloc(R.ctx, bytes, &b->d);
    if (s != TILE_OK)
        case_fail("tile_malloc(%zu) failed: %s", bytes, tile_error(R.ctx));
    return b;
}

/* Random input values in [lo, hi): floats rounded to the type, integers in [lo, hi]. */
Buf *input(const char *name, Ty t, size_t n, double lo, double hi)
{
    Buf *b = buf_new(name, t, n, 0);
    for (size_t i = 0; i < n; i++)
        b->v[i] = TY[t].is_float ? ty_round(t, lo + (hi - lo) * rnd_unit())
                                 : (double)rnd_int((int64_t)lo, (int64_t)hi);
    return b;
}

Buf *output(const char *name, Ty t, size_t n, double tol)
{
    Buf *b = buf_new(name, t, n, 1);
    b->tol = tol;
    return b;
}

Buf *inout(const char *name, Ty t, size_t n, double tol)
{
    Buf *b = output(name, t, n, tol);
    if (!(b->init = calloc(n ? n : 1, sizeof(double)))) {
        fprintf(stderr, "test_exec: out of memory\n");
        exit(1);
    }
    return b;
}

Buf *scratch(const char *name, Ty t, size_t n)
{
    Buf *b = buf_new(name, t, n, 1);
    b->scratch = 1;
    return b;
}

/* o's per-element error bounds, allocated (zero) at the first use */
static double *bounds(Buf *o)
{
    if (!o->bound && !(o->bound = calloc(o->n ? o->n : 1, sizeof(double)))) {
        fprintf(stderr, "test_exec: out of memory\n");
        exit(1);
    }
    return o->bound;
}

void sum_bound(Buf *o, size_t i, double abs_sum, size_t nterms)
{
    double eps = o->t == T_F64 ? 0x1p-52 : o->t == T_F16 ? 0x1p-10 : o->t == T_BF16 ? 0x1p-7
                                                                    : 0x1p-23;
    bounds(o);
    if (i < o->n)
        o->bound[i] = (double)nterms * eps * abs_sum;
}

void ulp_bound(Buf *o, size_t i, double ulps)
{
    int bits = o->t == T_F64 ? 52 : o->t == T_F16 ? 10 : o->t == T_BF16 ? 7 : 23;
    int emin = o->t == T_F64 ? -1022 : o->t == T_F16 ? -14 : -126;
    int e = 0;
    if (o->v[i] != 0)
        frexp(o->v[i], &e);
    e = e - 1 < emin ? emin : e - 1; /* the exponent of the binade, subnormals at the bottom */
    if (i < o->n)
        bounds(o)[i] = ulps * ldexp(1.0, e - bits);
}

static int poison_byte(const Buf *b) { return b->out && TY[b->t].is_float ? 0xFF : 0xAB; }

static void upload(void)
{
    for (int i = 0; i < R.nbufs && !R.err[0]; i++) {
        Buf *b = &R.bufs[i];
        size_t esz = (size_t)TY[b->t].size;
        memset(b->raw, poison_byte(b), b->n * esz);
        memset(b->raw + b->n * esz, 0xAB, GUARD * esz);
        const double *vals = b->out ? b->init : b->v;
        for (size_t j = 0; vals && j < b->n; j++)
            elem_write(b->t, b->raw + j * esz, vals[j]);
        if (tile_copy_to_device(R.ctx, b->d, b->raw, (b->n + GUARD) * esz) != TILE_OK)
            case_fail("copy to device failed: %s", tile_error(R.ctx));
    }
}

static int is_poison(const Buf *b, const unsigned char *p)
{
    for (int k = 0; k < TY[b->t].size; k++)
        if (p[k] != poison_byte(b))
            return 0;
    return 1;
}

/* Compares one output with its reference; a mismatch becomes the case's failure. */
static void compare(Buf *b, double *rel_out)
{
    size_t esz = (size_t)TY[b->t].size, unwritten = 0, special = 0, bad = 0, first = (size_t)-1;
    double num = 0, den = 0;
    unsigned char want_raw[8];
    for (size_t i = 0; i < b->n; i++) {
        const unsigned char *p = b->raw + i * esz;
        double got = elem_read(b->t, p), want = b->v[i];
        elem_write(b->t, want_raw, want);
        int mismatch = 0;
        if (is_poison(b, p) && memcmp(want_raw, p, esz) != 0)
            unwritten++, mismatch = 1;
        else if (isnan(want) || isinf(want) || isnan(got) || isinf(got)) {
            if (!(isnan(want) && isnan(got)) && got != want)
                special++, mismatch = 1;
        } else if (b->bound) {
            mismatch = !(fabs(got - want) <= b->bound[i]);
            bad += mismatch;
        } else {
            double d = got - want;
            num += d * d, den += want * want;
            mismatch = b->tol == 0 ? got != want : fabs(d) > 10 * b->tol * (fabs(want) + 1);
            bad += b->tol == 0 && mismatch;
        }
        if (mismatch && first == (size_t)-1)
            first = i;
    }
    double rel = den > 0 ? sqrt(num / den) : sqrt(num);
    *rel_out = rel > *rel_out ? rel : *rel_out;
    if (!unwritten && !special && !bad && !(rel > b->tol))
        return;
    if (first == (size_t)-1)
        first = 0;
    case_fail("%s: relative error %.3g (tolerance %.1g), %zu unwritten, %zu wrong inf/nan, "
              "%zu wrong%s; e.g. [%zu] = %.9g, want %.9g", b->name, rel, b->tol, unwritten,
              special, bad, b->bound ? " (beyond their error bounds)" : "", first,
              b->n ? elem_read(b->t, b->raw + first * esz) : 0.0, b->n ? b->v[first] : 0.0);
}

static void check_guard_and_inputs(Buf *b, const unsigned char *orig)
{
    size_t esz = (size_t)TY[b->t].size;
    for (size_t k = 0; k < GUARD * esz; k++)
        if (b->raw[b->n * esz + k] != 0xAB) {
            case_fail("%s: written past its end (element %zu)", b->name, b->n + k / esz);
            return;
        }
    if (!b->out && memcmp(orig, b->raw, b->n * esz) != 0)
        case_fail("%s: an input buffer was modified", b->name);
}

static double download_and_check(void)
{
    double rel = 0;
    for (int i = 0; i < R.nbufs && !R.err[0]; i++) {
        Buf *b = &R.bufs[i];
        size_t bytes = (b->n + GUARD) * (size_t)TY[b->t].size;
        unsigned char *orig = malloc(bytes);
        if (!orig)
            exit(1);
        memcpy(orig, b->raw, bytes);
        if (tile_copy_to_host(R.ctx, b->raw, b->d, bytes) != TILE_OK)
            case_fail("copy to host failed: %s", tile_error(R.ctx));
        else {
            check_guard_and_inputs(b, orig);
            if (b->out && !b->scratch)
                compare(b, &rel);
        }
        free(orig);
    }
    return rel;
}

static tile_Module *module(const char *file)
{
    for (int i = 0; i < R.nmods; i++)
        if (strcmp(R.mods[i].path, file) == 0)
            return R.mods[i].mod;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", R.root, file);
    tile_Module *m = NULL;
    tile_Status s = tile_module_load_file(R.ctx, path, &m);
    if (s != TILE_OK) {
        case_fail("loading %s failed: %s", path, tile_error(R.ctx));
        return NULL;
    }
    if (R.nmods < MAX_MODULES) {
        R.mods[R.nmods].path = strdup(file);
        R.mods[R.nmods++].mod = m;
    }
    return m;
}

static void finish(double rel)
{
    if (R.skip) {
        R.skipped++;
        printf("skip %s: %s\n", R.name, R.err);
    } else if (R.err[0]) {
        R.failed++;
        printf("FAIL %s: %s\n", R.name, R.err);
    } else {
        R.passed++;
        printf("ok   %s (rel err %.2g)\n", R.name, rel);
    }
    fflush(stdout);
    for (int i = 0; i < R.nbufs; i++) {
        if (R.bufs[i].d)
            tile_free(R.ctx, R.bufs[i].d);
        free(R.bufs[i].v);
        free(R.bufs[i].bound);
        free(R.bufs[i].init);
        free(R.bufs[i].raw);
    }
    R.nbufs = 0;
}

/* Uploads the inputs, poisons the outputs, launches, compares, reports. */
void run(const char *file, const char *kernel, const tile_Arg *args, int nargs,
                const tile_Const *consts, int nconsts)
{
    Launch l = {kernel, args, nargs, consts, nconsts};
    run_seq(file, &l, 1);
}

/* Launches one kernel; 0 when it failed (the case's failure says why, or marks a skip). */
static int launch_one(tile_Module *m, const char *file, const Launch *l)
{
    tile_Kernel *k = NULL;
    if (tile_kernel_get(m, l->kernel, &k) != TILE_OK) {
        case_fail("no kernel %s in %s: %s", l->kernel, file, tile_error(R.ctx));
        return 0;
    }
    tile_Status s = tile_launch(k, l->args, l->nargs, l->consts, l->nconsts);
    if (s == TILE_OK)
        s = tile_synchronize(R.ctx);
    if (s == TILE_ERROR_UNSUPPORTED)
        R.skip = 1, case_fail("unsupported: %s", tile_error(R.ctx));
    else if (s != TILE_OK)
        case_fail("launch of %s failed (status %d): %s", l->kernel, (int)s, tile_error(R.ctx));
    return s == TILE_OK;
}

/* run() for kernels launched one after the other on the same buffers (e.g. a kernel and the
 * one that reduces its workspace): compares after the last. */
void run_seq(const char *file, const Launch *launches, int n)
{
    double rel = 0;
    tile_Module *m = R.err[0] ? NULL : module(file);
    upload();
    int ok = m && !R.err[0];
    for (int i = 0; i < n && ok; i++)
        ok = launch_one(m, file, &launches[i]);
    if (ok)
        rel = download_and_check();
    finish(rel);
}

/* What fd 1 received while `capturing` was set up, read back (malloc'ed). */
static char *read_back(FILE *tmp)
{
    long n = ftell(tmp);
    char *text = malloc(n > 0 ? (size_t)n + 1 : 1);
    if (!text)
        return NULL;
    rewind(tmp);
    size_t got = n > 0 ? fread(text, 1, (size_t)n, tmp) : 0;
    text[got] = 0;
    return text;
}

void run_expect(const char *file, const Launch *l, tile_Status want, const char *message,
                const char *printed)
{
    tile_Module *m = R.err[0] ? NULL : module(file);
    tile_Kernel *k = NULL;
    upload();
    if (!R.err[0] && tile_kernel_get(m, l->kernel, &k) != TILE_OK)
        case_fail("no kernel %s in %s: %s", l->kernel, file, tile_error(R.ctx));
    FILE *tmp = R.err[0] ? NULL : tmpfile();
    int saved = tmp ? dup(1) : -1;
    if (!R.err[0] && (!tmp || saved < 0))
        case_fail("cannot capture standard output");
    double rel = 0;
    if (!R.err[0]) {
        fflush(stdout);
        dup2(fileno(tmp), 1);
        tile_Status s = tile_launch(k, l->args, l->nargs, l->consts, l->nconsts);
        if (s == TILE_OK)
            s = tile_synchronize(R.ctx);
        fflush(stdout);
        dup2(saved, 1);
        char *text = read_back(tmp);
        const char *msg = s == TILE_OK ? "" : tile_error(R.ctx);
        if (s != want)
            case_fail("launch of %s: status %d, expected %d: %s", l->kernel, (int)s, (int)want, msg);
        else if (message && !strstr(msg, message))
            case_fail("launch of %s: message \"%s\" lacks \"%s\"", l->kernel, msg, message);
        else if (printed && (!text || strcmp(text, printed)))
            case_fail("launch of %s printed:\n%s---- expected:\n%s----", l->kernel,
                      text ? text : "(nothing)", printed);
        free(text);
        if (!R.err[0])
            rel = download_and_check();
    }
    if (saved >= 0)
        close(saved);
    if (tmp)
        fclose(tmp);
    finish(rel);
}

/* ---- examples ---- */

static void t_add(void)
{
    static const int sizes[] = {1, 1000, 4097, 1 << 20};
    for (int s = 0; s < 4; s++) {
        int n = sizes[s];
        if (S.quick && n > 100000)
            continue;
        for (int w = 0; w < 2; w++) {
            begin("add n=%d num_warps=%d", n, w ? 8 : 4);
            Buf *x = input("x", T_F32, n, -1, 1), *y = input("y", T_F32, n, -1, 1);
            Buf *o = output("out", T_F32, n, TOL_F32);
            for (int i = 0; i < n; i++)
                o->v[i] = (float)(x->v[i] + y->v[i]);
            run("examples/add.tile", "add", ARGS(P(x), P(y), P(o), I(n)),
                CONSTS({"num_warps", w ? 8 : 4}));
        }
    }
}

static void t_softmax(void)
{
    static const int cases[][3] = {{1, 1, 1}, {37, 781, 1}, {130, 1024, 4}, {5, 3, 2}, {64, 100, 1}};
    for (int c = 0; c < 5; c++) {
        int rows = cases[c][0], cols = cases[c][1], R = cases[c][2];
        begin("softmax %dx%d ROWS=%d", rows, cols, R);
        Buf *x = input("x", T_F32, (size_t)rows * cols, -4, 4);
        Buf *o = output("out", T_F32, (size_t)rows * cols, TOL_F32);
        for (int r = 0; r < rows; r++) {
            double m = -INFINITY, sum = 0;
            const double *xr = x->v + (size_t)r * cols;
            for (int j = 0; j < cols; j++)
                m = fmax(m, xr[j]);
            for (int j = 0; j < cols; j++)
                sum += exp(xr[j] - m);
            for (int j = 0; j < cols; j++)
                o->v[(size_t)r * cols + j] = exp(xr[j] - m) / sum;
        }
        run("examples/softmax.tile", "softmax", ARGS(P(x), P(o), I(rows), I(cols)),
            CONSTS({"ROWS", R}));
    }
}

static void layernorm_ref(const Buf *x, const Buf *w, const Buf *b, Buf *o, int rows, int cols,
                          double eps)
{
    for (int r = 0; r < rows; r++) {
        const double *xr = x->v + (size_t)r * cols;
        double mean = 0, var = 0;
        for (int j = 0; j < cols; j++)
            mean += xr[j];
        mean /= cols;
        for (int j = 0; j < cols; j++)
            var += (xr[j] - mean) * (xr[j] - mean);
        var /= cols;
        for (int j = 0; j < cols; j++)
            o->v[(size_t)r * cols + j] = (xr[j] - mean) / sqrt(var + (float)eps) * w->v[j] + b->v[j];
    }
}

static void t_layernorm(void)
{
    static const int cases[][3] = {{5, 1000, 0}, {64, 17, 0}, {1, 1024, 0}, {3, 3000, 1}, {2, 100, 1}};
    for (int c = 0; c < 5; c++) {
        int rows = cases[c][0], cols = cases[c][1], wide = cases[c][2];
        begin("%s %dx%d", wide ? "layernorm_wide" : "layernorm", rows, cols);
        Buf *x = input("x", T_F32, (size_t)rows * cols, -2, 2);
        Buf *w = input("w", T_F32, cols, -1, 1), *b = input("b", T_F32, cols, -1, 1);
        Buf *o = output("out", T_F32, (size_t)rows * cols, TOL_F32);
        layernorm_ref(x, w, b, o, rows, cols, 1e-5);
        run("examples/layernorm.tile", wide ? "layernorm_wide" : "layernorm",
            ARGS(P(x), P(w), P(b), P(o), I(rows), I(cols), F(1e-5)), NO_CONSTS);
    }
}

void matmul_ref_bounded(const Buf *a, const Buf *b, Buf *c, int M, int N, int K)
{
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0, abs_sum = 0;
            for (int k = 0; k < K; k++) {
                double p = a->v[(size_t)i * K + k] * b->v[(size_t)k * N + j];
                s += p, abs_sum += fabs(p);
            }
            c->v[(size_t)i * N + j] = s;
            sum_bound(c, (size_t)i * N + j, abs_sum, (size_t)K);
        }
}

static void matmul_ref(const Buf *a, const Buf *b, Buf *c, int M, int N, int K)
{
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int k = 0; k < K; k++)
                s += a->v[(size_t)i * K + k] * b->v[(size_t)k * N + j];
            c->v[(size_t)i * N + j] = s;
        }
}

static void t_matmul(void)
{
    /* M, N, K, small blocks; 357 rows of 32-row blocks: a group of 8 block rows and one of 4 */
    static const int cases[][4] = {{64, 64, 64, 0}, {100, 37, 129, 0}, {1, 70, 5, 0},
                                   {129, 65, 33, 1}, {128, 128, 64, 0}, {77, 130, 40, 0},
                                   {357, 100, 24, 1}};
    for (int c = 0; c < (int)(sizeof cases / sizeof cases[0]); c++) {
        int M = cases[c][0], N = cases[c][1], K = cases[c][2], small = cases[c][3];
        for (int kind = 0; kind < 3; kind++) {
            static const char *const names[] = {"matmul", "matmul_f16", "matmul_bf16"};
            static const Ty tys[] = {T_F32, T_F16, T_BF16};
            static const double tols[] = {TOL_F32, TOL_F16, 1e-2};
            Ty t = tys[kind];
            begin("%s %dx%dx%d%s", names[kind], M, N, K, small ? " blocks 32x32x16" : "");
            Buf *a = input("a", t, (size_t)M * K, -1, 1), *b = input("b", t, (size_t)K * N, -1, 1);
            Buf *o = output("c", t, (size_t)M * N, tols[kind]);
            matmul_ref(a, b, o, M, N, K);
            tile_Arg args[] = {P(a), P(b), P(o), I(M), I(N), I(K), I(K), I(N), I(N)};
            tile_Const cs[] = {{"BLOCK_M", 32}, {"BLOCK_N", 32}, {"BLOCK_K", 16}};
            run("examples/matmul.tile", names[kind], args, 9, cs, small ? 3 : 0);
        }
    }
}

static void attention_ref(const Buf *q, const Buf *k, const Buf *v, Buf *o, int BH, int S_,
                          int D, int causal, double scale)
{
    double *p = malloc(sizeof(double) * (size_t)S_);
    for (int bh = 0; bh < BH; bh++) {
        size_t base = (size_t)bh * S_ * D;
        for (int i = 0; i < S_; i++) {
            int n = causal ? i + 1 : S_;
            double m = -INFINITY, sum = 0;
            for (int j = 0; j < n; j++) {
                double s = 0;
                for (int d = 0; d < D; d++)
                    s += q->v[base + (size_t)i * D + d] * k->v[base + (size_t)j * D + d];
                p[j] = s * scale;
                m = fmax(m, p[j]);
            }
            for (int j = 0; j < n; j++)
                sum += p[j] = exp(p[j] - m);
            for (int d = 0; d < D; d++) {
                double acc = 0;
                for (int j = 0; j < n; j++)
                    acc += p[j] * v->v[base + (size_t)j * D + d];
                o->v[base + (size_t)i * D + d] = acc / sum;
            }
        }
    }
    free(p);
}

static void t_attention(void)
{
    /* batch, heads, seq, head_dim, causal, type (0 f32, 1 f16, 2 bf16), scale * sqrt(head_dim)
     * (negative and zero scales too: the kernel folds the scale into exp2 and Q's sign) */
    static const int cases[][7] = {{1, 2, 128, 64, 0, 1, 1}, {1, 2, 128, 64, 1, 1, 1},
                                   {2, 1, 100, 64, 1, 1, 1}, {1, 1, 37, 64, 0, 1, 1},
                                   {1, 2, 77, 64, 0, 0, 1},  {1, 2, 77, 64, 1, 0, 1},
                                   {1, 1, 50, 32, 1, 0, 1},  {1, 1, 300, 64, 1, 1, 1},
                                   {1, 2, 130, 64, 0, 2, 1}, {2, 1, 200, 64, 1, 2, 1},
                                   {1, 1, 90, 128, 1, 1, 1}, {1, 1, 64, 128, 0, 2, 1},
                                   {1, 1, 70, 64, 1, 1, -1}, {1, 2, 77, 64, 0, 0, 0},
                                   {1, 1, 100, 64, 0, 2, -4}, {1, 1, 96, 64, 1, 1, 8}};
    for (int c = 0; c < (int)(sizeof cases / sizeof cases[0]); c++) {
        int B = cases[c][0], H = cases[c][1], Sq = cases[c][2], D = cases[c][3];
        int causal = cases[c][4], kind = cases[c][5];
        if (S.quick && Sq > 128)
            continue;
        static const char *const names[] = {"flash_attention_f32", "flash_attention",
                                            "flash_attention_bf16"};
        static const Ty tys[] = {T_F32, T_F16, T_BF16};
        static const double tols[] = {2e-5, 3e-3, 2e-2};
        Ty t = tys[kind];
        const char *kname = names[kind];
        double scale = cases[c][6] / sqrt(D);
        begin("%s b=%d h=%d seq=%d d=%d causal=%d scale=%g", kname, B, H, Sq, D, causal, scale);
        size_t n = (size_t)B * H * Sq * D;
        Buf *q = input("q", t, n, -1, 1), *k = input("k", t, n, -1, 1), *v = input("v", t, n, -1, 1);
        Buf *o = output("o", t, n, tols[kind]);
        attention_ref(q, k, v, o, B * H, Sq, D, causal, (float)scale);
        run("examples/flash_attention.tile", kname,
            ARGS(P(q), P(k), P(v), P(o), I(B), I(H), I(Sq), F(scale)),
            CONSTS({"HEAD_DIM", D}, {"CAUSAL", causal}));
    }
}


/* ---- main ---- */

typedef struct Group {
    const char *name;
    void (*fn)(void);
} Group;

static const Group GROUPS[] = {
    {"add", t_add},         {"softmax", t_softmax},     {"layernorm", t_layernorm},
    {"matmul", t_matmul},   {"attention", t_attention}, {"elementwise", t_elementwise},
    {"math", t_math},       {"compare", t_compare},     {"intops", t_intops},
    {"casts", t_casts},     {"reduce", t_reduce},       {"dot", t_dot},
    {"control", t_control}, {"helpers", t_helpers},     {"memory", t_memory},
    {"grid", t_grid},       {"broadcast", t_broadcast}, {"mma", t_mma},
    {"intdiv", t_intdiv},     {"fcast", t_fcast},
    {"imports", t_imports},   {"flash_fwd", t_flash_fwd}, {"decode", t_attn_decode},
    {"paged", t_attn_paged},  {"types", t_types},       {"atomics", t_atomics},
    {"random", t_random},   {"shapes", t_shapes},
    {"fp8", t_fp8},         {"debug", t_debug},         {"combine", t_combine},
    {"ports_norm", t_ports_norm}, {"ports_loss", t_ports_loss},
    {"ports_matmul", t_ports_matmul}, {"ports_misc", t_ports_misc},
    {"ports_more", t_ports_more},
    {"barrier", t_barrier},   {"porting", t_porting},
    {"tuple_reduce", t_tuple_reduce}, {"block_ptr", t_block_ptr},
    {"hints", t_hints}, {"tritonops", t_triton_ops}, {"tritonforms", t_triton_forms},
    {"inline_asm", t_inline_asm},
};

static int usage(void)
{
    fprintf(stderr, "usage: test_exec [--backend=cpu|cuda|sim|auto] [--seed=N] [--filter=GROUP[,GROUP]] "
                    "[--quick] [--root=SOURCE_DIR]\n");
    return 2;
}

static int selected(const char *group)
{
    if (!R.filter)
        return 1;
    size_t n = strlen(group);
    for (const char *f = R.filter; *f;) {
        size_t len = strcspn(f, ",");
        if (len == n && strncmp(f, group, n) == 0)
            return 1;
        f += len + (f[len] == ',');
    }
    return 0;
}

int main(int argc, char **argv)
{
    R.root = TEST_SOURCE_DIR;
    R.rng = (uint64_t)time(NULL);
    R.backend = TILE_BACKEND_CPU;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--backend=", 10) == 0) {
            const char *b = a + 10;
            if (strcmp(b, "cpu") == 0)
                R.backend = TILE_BACKEND_CPU;
            else if (strcmp(b, "cuda") == 0)
                R.backend = TILE_BACKEND_CUDA;
            else if (strcmp(b, "sim") == 0)
                R.backend = TILE_BACKEND_SIM;
            else if (strcmp(b, "auto") == 0)
                R.backend = TILE_BACKEND_AUTO;
            else
                return usage();
        } else if (strncmp(a, "--seed=", 7) == 0)
            R.rng = strtoull(a + 7, NULL, 0);
        else if (strncmp(a, "--filter=", 9) == 0)
            R.filter = a + 9;
        else if (strncmp(a, "--root=", 7) == 0)
            R.root = a + 7;
        else if (strcmp(a, "--quick") == 0)
            S.quick = 1;
        else
            return usage();
    }
    uint64_t seed = R.rng;
    tile_Status s = tile_context_open(R.backend, &R.ctx);
    if (s == TILE_ERROR_NO_DEVICE) {
        printf("skipped: no %s device: %s\n", tile_backend_name(R.backend),
               R.ctx ? tile_error(R.ctx) : "the backend did not open");
        return 77;
    }
    if (s != TILE_OK) {
        printf("cannot open the %s backend (status %d)\n", tile_backend_name(R.backend), (int)s);
        return 1;
    }
    S.host = tile_backend(R.ctx) == TILE_BACKEND_CPU;
    S.cuda = tile_backend(R.ctx) == TILE_BACKEND_CUDA;
    printf("test_exec: backend %s, device %s, seed %llu (repeat with --seed=%llu)\n",
           tile_backend_name(tile_backend(R.ctx)), tile_device_name(R.ctx),
           (unsigned long long)seed, (unsigned long long)seed);
    for (size_t g = 0; g < sizeof GROUPS / sizeof GROUPS[0]; g++)
        if (selected(GROUPS[g].name))
            GROUPS[g].fn();
    printf("%d passed, %d failed", R.passed, R.failed);
    if (R.skipped)
        printf(", %d skipped", R.skipped);
    printf("\n");
    for (int i = 0; i < R.nmods; i++)
        free(R.mods[i].path);
    tile_context_close(R.ctx);
    return R.failed ? 1 : 0;
}
