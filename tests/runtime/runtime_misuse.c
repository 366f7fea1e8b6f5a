/* runtime_misuse.c: every entry point of tile.h called the way a careless or hostile caller
 * would: NULL arguments, closed and freed handles, double frees, copies and memsets past an
 * allocation's end, foreign pointers, overflowing grids, wrong launch arguments, files that
 * are not regular, callbacks that close the context or free the module of the call running
 * them. Each call must return an error status with a non-empty message and never
 * crash (CI runs this under ASan+UBSan).
 *   runtime_misuse --backend=cpu|sim [TEST]     exit 0 pass, 1 fail, 2 unknown test */
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tile.h"
#include "../testing.h"

static tile_Backend backend = TILE_BACKEND_CPU;

static const char *const SOURCE =
    "@grid(cdiv(n, BLOCK))\n"
    "kernel add(x: *f32, y: *f32, out: *f32, n: i32, const BLOCK: i32 = 64) {\n"
    "    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
    "    let mask = offs < n;\n"
    "    store(out + offs, load(x + offs, mask=mask) + load(y + offs, mask=mask), mask=mask);\n"
    "}\n";

/* The call must fail with a non-empty message, read from tile_error(msg_ctx) (NULL: the
 * thread's message, for calls given no live context). */
#define FAILS(msg_ctx, call) \
    do { \
        tile_Status st_ = (call); \
        const char *m_ = tile_error(msg_ctx); \
        if (st_ == TILE_OK || !m_ || !*m_) { \
            fprintf(stderr, "%s:%d: %s returned %d with message '%s'\n", __FILE__, __LINE__, \
                    #call, (int)st_, m_ ? m_ : "(null)"); \
            return 1; \
        } \
    } while (0)

/* The last message mentions `text`. */
#define SAYS(msg_ctx, text) \
    do { \
        if (!strstr(tile_error(msg_ctx), text)) { \
            fprintf(stderr, "%s:%d: message lacks '%s': %s\n", __FILE__, __LINE__, text, \
                    tile_error(msg_ctx)); \
            return 1; \
        } \
    } while (0)

typedef struct Fx {
    tile_Context *ctx;
    tile_Module *mod;
    tile_Kernel *k;
    tile_DevPtr x, y, out; /* N floats each */
} Fx;

enum { N = 100 };
static const size_t BYTES = N * sizeof(float);

static int fx_open(Fx *f)
{
    memset(f, 0, sizeof *f);
    OK(NULL, tile_context_open(backend, &f->ctx));
    OK(f->ctx, tile_module_load_string(f->ctx, "add.tile", SOURCE, &f->mod));
    OK(f->ctx, tile_kernel_get(f->mod, "add", &f->k));
    OK(f->ctx, tile_malloc(f->ctx, BYTES, &f->x));
    OK(f->ctx, tile_malloc(f->ctx, BYTES, &f->y));
    OK(f->ctx, tile_malloc(f->ctx, BYTES, &f->out));
    return 0;
}

static int launch_ok(Fx *f, tile_DevPtr x, tile_DevPtr out)
{
    tile_Arg args[] = { tile_ptr(x), tile_ptr(f->y), tile_ptr(out), tile_i32(N) };
    OK(f->ctx, tile_launch(f->k, args, 4, NULL, 0));
    return tile_synchronize(f->ctx) != TILE_OK;
}

/* ---- NULL everywhere ---- */
static int test_null_args(void)
{
    Fx f;
    tile_DevPtr p;
    tile_Module *m;
    tile_Kernel *k;
    unsigned grid[3] = { 1, 1, 1 };
    FAILS(NULL, tile_context_open(backend, NULL));
    /* device numbers: the CPU and sim backends have device 0 only; negative is a misuse */
    tile_Context *c2 = NULL;
    CHECK(tile_context_open_device(backend, 1, &c2) == TILE_ERROR_NO_DEVICE && !c2);
    SAYS(NULL, "has one device, 0");
    CHECK(tile_context_open_device(backend, -1, &c2) == TILE_ERROR_INVALID_ARGUMENT && !c2);
    SAYS(NULL, "0 or more");
    OK(NULL, tile_context_open_device(backend, 0, &c2));
    tile_context_close(c2);
    FAILS(NULL, tile_module_load_string(NULL, "x", SOURCE, &m));
    FAILS(NULL, tile_module_load_file(NULL, "x.tile", &m));
    FAILS(NULL, tile_kernel_get(NULL, "add", &k));
    FAILS(NULL, tile_malloc(NULL, 16, &p));
    FAILS(NULL, tile_free(NULL, 64));
    FAILS(NULL, tile_copy_to_device(NULL, 64, &p, 4));
    FAILS(NULL, tile_copy_to_host(NULL, &p, 64, 4));
    FAILS(NULL, tile_memset(NULL, 64, 0, 4));
    FAILS(NULL, tile_synchronize(NULL));
    FAILS(NULL, tile_borrow(NULL, 64, 4));
    FAILS(NULL, tile_unborrow(NULL, 64));
    FAILS(NULL, tile_launch(NULL, NULL, 0, NULL, 0));
    FAILS(NULL, tile_launch_grid(NULL, grid, NULL, 0, NULL, 0));
    FAILS(NULL, tile_tune(NULL, NULL, 0, NULL, 0, NULL, NULL));
    tile_context_close(NULL);
    tile_module_free(NULL);
    tile_set_log(NULL, NULL, NULL);
    FAILS(NULL, tile_set_tuning(NULL, TILE_TUNING_OFF));
    tile_Context *none = NULL;
    FAILS(NULL, tile_context_open((tile_Backend)99, &none));
    FAILS(NULL, tile_context_open((tile_Backend)-1, &none));
    CHECK(none == NULL && !strcmp(tile_backend_name((tile_Backend)99), "unknown"));
    CHECK(tile_backend(NULL) == TILE_BACKEND_AUTO);
    CHECK(tile_device_name(NULL) && tile_device_arch(NULL));

    if (fx_open(&f))
        return 1;
    FAILS(f.ctx, tile_module_load_string(f.ctx, "x", NULL, &m));
    FAILS(f.ctx, tile_module_load_string(f.ctx, "x", SOURCE, NULL));
    FAILS(f.ctx, tile_module_load_file(f.ctx, NULL, &m));
    FAILS(f.ctx, tile_module_load_file(f.ctx, "x.tile", NULL));
    FAILS(f.ctx, tile_kernel_get(f.mod, NULL, &k));
    FAILS(f.ctx, tile_kernel_get(f.mod, "add", NULL));
    FAILS(f.ctx, tile_malloc(f.ctx, 16, NULL));
    FAILS(f.ctx, tile_malloc(f.ctx, SIZE_MAX, &p));
    FAILS(f.ctx, tile_malloc(f.ctx, (size_t)1 << 62, &p)); /* more than any host has */
    SAYS(f.ctx, "tile_malloc: ");
    FAILS(f.ctx, tile_copy_to_device(f.ctx, f.x, NULL, 4));
    FAILS(f.ctx, tile_copy_to_host(f.ctx, NULL, f.x, 4));
    FAILS(f.ctx, tile_copy_to_device(f.ctx, 0, &p, 4));
    FAILS(f.ctx, tile_memset(f.ctx, 0, 0, 4));
    FAILS(f.ctx, tile_launch_grid(f.k, NULL, NULL, 0, NULL, 0));
    FAILS(f.ctx, tile_launch(f.k, NULL, 4, NULL, 0));
    FAILS(f.ctx, tile_tune(f.k, NULL, 4, NULL, 0, NULL, NULL));
    tile_Arg host[] = { tile_ptr((tile_DevPtr)(uintptr_t)&p), tile_ptr(f.y), tile_ptr(f.out),
                        tile_i32(N) };
    FAILS(f.ctx, tile_tune(f.k, host, 4, NULL, 0, NULL, NULL));
    FAILS(f.ctx, tile_set_tuning(f.ctx, (tile_Tuning)99)); /* the mode stays as it was */
    FAILS(f.ctx, tile_set_tuning(f.ctx, (tile_Tuning)0));
    OK(f.ctx, tile_set_tuning(f.ctx, TILE_TUNING_CACHED));
    tile_context_close(f.ctx);
    return 0;
}

/* ---- closed contexts ---- */
static int test_closed_context(void)
{
    Fx f;
    if (fx_open(&f))
        return 1;
    tile_Context *ctx = f.ctx;
    tile_context_close(ctx);
    tile_DevPtr p;
    tile_Module *m;
    tile_Kernel *k;
    float h[4];
    unsigned grid[3] = { 1, 1, 1 };
    tile_Arg args[] = { tile_ptr(f.x), tile_ptr(f.y), tile_ptr(f.out), tile_i32(N) };
    FAILS(NULL, tile_malloc(ctx, 16, &p));
    SAYS(NULL, "not a live tile_Context");
    FAILS(NULL, tile_free(ctx, f.x));
    FAILS(NULL, tile_copy_to_device(ctx, f.x, h, sizeof h));
    FAILS(NULL, tile_copy_to_host(ctx, h, f.x, sizeof h));
    FAILS(NULL, tile_memset(ctx, f.x, 0, sizeof h));
    FAILS(NULL, tile_synchronize(ctx));
    FAILS(NULL, tile_borrow(ctx, (tile_DevPtr)(uintptr_t)h, sizeof h));
    FAILS(NULL, tile_unborrow(ctx, (tile_DevPtr)(uintptr_t)h));
    FAILS(NULL, tile_module_load_string(ctx, "add.tile", SOURCE, &m));
    FAILS(NULL, tile_module_load_file(ctx, "add.tile", &m));
    FAILS(NULL, tile_kernel_get(f.mod, "add", &k)); /* the context freed its modules */
    FAILS(NULL, tile_launch(f.k, args, 4, NULL, 0));
    SAYS(NULL, "not a live tile_Kernel");
    FAILS(NULL, tile_launch_grid(f.k, grid, args, 4, NULL, 0));
    FAILS(NULL, tile_tune(f.k, args, 4, NULL, 0, NULL, NULL));
    CHECK(tile_backend(ctx) == TILE_BACKEND_AUTO && !strcmp(tile_device_name(ctx), ""));
    CHECK(!strcmp(tile_device_arch(ctx), "") && *tile_error(ctx));
    tile_set_log(ctx, NULL, NULL);
    tile_set_tuning(ctx, TILE_TUNING_OFF);
    tile_module_free(f.mod);
    tile_context_close(ctx); /* twice: nothing */
    CHECK(*tile_error(NULL));
    return 0;
}

/* ---- freed modules ---- */
static int test_freed_module(void)
{
    Fx f;
    if (fx_open(&f))
        return 1;
    tile_Kernel *k;
    tile_Module *again;
    tile_Arg args[] = { tile_ptr(f.x), tile_ptr(f.y), tile_ptr(f.out), tile_i32(N) };
    if (launch_ok(&f, f.x, f.out))
        return 1;
    tile_module_free(f.mod);
    tile_Kernel *dead = f.k;
    FAILS(NULL, tile_launch(f.k, args, 4, NULL, 0));
    SAYS(NULL, "tile_launch: ");
    FAILS(NULL, tile_kernel_get(f.mod, "add", &k));
    SAYS(NULL, "not a live tile_Module");
    /* introspection of dead handles: -1, NULL, an error status */
    tile_Param prm;
    CHECK(tile_module_num_kernels(f.mod) == -1 && !tile_module_kernel_name(f.mod, 0));
    CHECK(tile_kernel_num_params(dead) == -1);
    FAILS(NULL, tile_kernel_param(dead, 0, &prm));
    tile_module_free(f.mod); /* twice: nothing */
    /* a new module of the same source does not revive the old handles */
    OK(f.ctx, tile_module_load_string(f.ctx, "add.tile", SOURCE, &again));
    FAILS(NULL, tile_launch(f.k, args, 4, NULL, 0));
    FAILS(NULL, tile_kernel_get(f.mod, "add", &k));
    OK(f.ctx, tile_kernel_get(again, "add", &f.k));
    f.mod = again;
    /* live: add(x, y, out, n, const BLOCK); out of range and NULL are errors */
    CHECK(tile_module_num_kernels(again) == 1 && !strcmp(tile_module_kernel_name(again, 0), "add"));
    CHECK(!tile_module_kernel_name(again, 1) && !tile_module_kernel_name(again, -1));
    CHECK(tile_kernel_num_params(f.k) == 5);
    OK(f.ctx, tile_kernel_param(f.k, 0, &prm));
    CHECK(!strcmp(prm.name, "x") && prm.is_pointer && !prm.is_const && !strcmp(prm.type, "f32"));
    OK(f.ctx, tile_kernel_param(f.k, 4, &prm));
    CHECK(prm.is_const && !prm.is_pointer && !strcmp(prm.type, "i32"));
    FAILS(f.ctx, tile_kernel_param(f.k, 5, &prm));
    FAILS(f.ctx, tile_kernel_param(f.k, 0, NULL));
    if (launch_ok(&f, f.x, f.out))
        return 1;
    tile_context_close(f.ctx);
    return 0;
}

/* ---- copies and memsets ---- */
static int test_copy_ranges(void)
{
    Fx f;
    if (fx_open(&f))
        return 1;
    static float big[2 * N];
    tile_Context *ctx = f.ctx;
    FAILS(ctx, tile_copy_to_device(ctx, f.x, big, sizeof big));
    SAYS(ctx, "run past the end");
    FAILS(ctx, tile_copy_to_host(ctx, big, f.x, sizeof big));
    FAILS(ctx, tile_memset(ctx, f.x, 0, 1 << 30));
    FAILS(ctx, tile_memset(ctx, f.x, 0, SIZE_MAX));
    /* inside is fine, up to the last byte */
    OK(ctx, tile_copy_to_device(ctx, f.x + 40, big, BYTES - 40));
    OK(ctx, tile_copy_to_host(ctx, big, f.x + BYTES - 1, 1));
    OK(ctx, tile_memset(ctx, f.x + 4, 7, BYTES - 4));
    FAILS(ctx, tile_copy_to_device(ctx, f.x + 40, big, BYTES - 39));
    FAILS(ctx, tile_memset(ctx, f.x + BYTES, 0, 1)); /* one past the end */
    FAILS(ctx, tile_copy_to_host(ctx, big, (tile_DevPtr)-8, 16)); /* wraps past 2^64 */
    FAILS(ctx, tile_copy_to_host(ctx, big, 12345, 4)); /* never allocated */
    SAYS(ctx, "not in memory allocated");
    FAILS(ctx, tile_copy_to_device(ctx, (tile_DevPtr)(uintptr_t)big, big, 4)); /* host memory */
    OK(ctx, tile_copy_to_device(ctx, 12345, big, 0)); /* zero bytes: nothing to check */
    tile_DevPtr empty; /* an empty allocation: an address, and not one usable byte */
    OK(ctx, tile_malloc(ctx, 0, &empty));
    FAILS(ctx, tile_copy_to_device(ctx, empty, big, 1));
    SAYS(ctx, "past the end of the 0-byte allocated range");
    FAILS(ctx, tile_memset(ctx, empty, 0, 1));
    OK(ctx, tile_copy_to_host(ctx, big, empty, 0));
    OK(ctx, tile_free(ctx, empty));
    if (backend != TILE_BACKEND_CUDA) { /* device memory is host memory: buffers may overlap */
        float *dev = (float *)(uintptr_t)f.x;
        OK(ctx, tile_copy_to_host(ctx, dev + 1, f.x, BYTES - sizeof(float)));
        OK(ctx, tile_copy_to_device(ctx, f.x + 4, dev, BYTES - sizeof(float)));
    }
    OK(ctx, tile_free(ctx, f.y));
    FAILS(ctx, tile_copy_to_device(ctx, f.y, big, 4)); /* freed */
    FAILS(ctx, tile_memset(ctx, f.y, 0, 4));

    tile_Context *other;
    tile_DevPtr theirs;
    OK(NULL, tile_context_open(backend, &other));
    OK(other, tile_malloc(other, BYTES, &theirs));
    FAILS(ctx, tile_copy_to_device(ctx, theirs, big, 4)); /* another context's */
    FAILS(ctx, tile_memset(ctx, theirs, 0, 4));
    tile_context_close(other);
    tile_context_close(ctx);
    return 0;
}

/* ---- frees ---- */
static int test_frees(void)
{
    Fx f;
    if (fx_open(&f))
        return 1;
    tile_Context *ctx = f.ctx;
    OK(ctx, tile_free(ctx, 0));
    FAILS(ctx, tile_free(ctx, f.x + 4));
    SAYS(ctx, "not its start");
    OK(ctx, tile_free(ctx, f.x));
    FAILS(ctx, tile_free(ctx, f.x));
    FAILS(ctx, tile_free(ctx, 0xdeadbeef));
    static float host[16];
    tile_DevPtr h = (tile_DevPtr)(uintptr_t)host;
    OK(ctx, tile_borrow(ctx, h, sizeof host));
    FAILS(ctx, tile_free(ctx, h));
    SAYS(ctx, "tile_unborrow");
    FAILS(ctx, tile_unborrow(ctx, f.y));
    SAYS(ctx, "tile_free");
    OK(ctx, tile_unborrow(ctx, h));
    FAILS(ctx, tile_unborrow(ctx, h));
    tile_context_close(ctx);
    FAILS(NULL, tile_free(ctx, f.y)); /* after close */
    return 0;
}

/* ---- borrowed memory ---- */
static int test_borrow(void)
{
    Fx f;
    if (fx_open(&f))
        return 1;
    tile_Context *ctx = f.ctx;
    float *x = calloc(N, sizeof(float)), *out = calloc(N + 16, sizeof(float)), back[N];
    CHECK(x && out);
    for (int i = 0; i < N; i++)
        x[i] = (float)i;
    tile_DevPtr hx = (tile_DevPtr)(uintptr_t)x, hout = (tile_DevPtr)(uintptr_t)out;
    OK(ctx, tile_memset(ctx, f.y, 0, BYTES));
    FAILS(ctx, tile_borrow(ctx, hx, 0));
    FAILS(ctx, tile_borrow(ctx, 0, 16));
    FAILS(ctx, tile_borrow(ctx, (tile_DevPtr)-64, 128)); /* wraps */
    FAILS(ctx, tile_borrow(ctx, f.x + 8, 16)); /* inside an allocation */
    SAYS(ctx, "overlaps");
    OK(ctx, tile_borrow(ctx, hx, BYTES));
    FAILS(ctx, tile_borrow(ctx, hx + 4, BYTES)); /* overlaps a borrowed range */
    OK(ctx, tile_borrow(ctx, hout, BYTES + 16 * sizeof(float)));
    if (backend == TILE_BACKEND_CPU || backend == TILE_BACKEND_SIM) {
        if (launch_ok(&f, hx, hout))
            return 1;
        CHECK(out[N - 1] == (float)(N - 1) && out[N] == 0);
        OK(ctx, tile_copy_to_host(ctx, back, hout, BYTES));
        CHECK(back[7] == 7);
    }
    FAILS(ctx, tile_copy_to_host(ctx, back, hx, BYTES + 4));
    OK(ctx, tile_unborrow(ctx, hx));
    tile_Arg args[] = { tile_ptr(hx), tile_ptr(f.y), tile_ptr(hout), tile_i32(N) };
    FAILS(ctx, tile_launch(f.k, args, 4, NULL, 0)); /* no longer borrowed */
    SAYS(ctx, "argument 1 ('x')");
    tile_context_close(ctx); /* forgets hout without freeing it */
    free(x);
    free(out);
    return 0;
}

/* ---- launch arguments ---- */
static int test_launch_args(void)
{
    Fx f;
    if (fx_open(&f))
        return 1;
    tile_Context *ctx = f.ctx, *other;
    tile_DevPtr theirs;
    static float host[N];
    tile_Arg a[] = { tile_ptr(f.x), tile_ptr(f.y), tile_ptr(f.out), tile_i32(N) };
    FAILS(ctx, tile_launch(f.k, a, 3, NULL, 0));
    FAILS(ctx, tile_launch(f.k, a, -1, NULL, 0));
    FAILS(ctx, tile_launch(f.k, a, 4, NULL, 1));
    FAILS(ctx, tile_launch(f.k, a, 4, NULL, -5));
    tile_Const bad[] = { { "NOPE", 1 } }, null_name[] = { { NULL, 1 } };
    tile_Const zero[] = { { "BLOCK", 0 } }, twice[] = { { "BLOCK", 64 }, { "BLOCK", 128 } };
    FAILS(ctx, tile_launch(f.k, a, 4, bad, 1));
    FAILS(ctx, tile_launch(f.k, a, 4, twice, 2));
    SAYS(ctx, "const 'BLOCK' given twice");
    FAILS(ctx, tile_launch(f.k, a, 4, null_name, 1));
    FAILS(ctx, tile_launch(f.k, a, 4, zero, 1));
    tile_Arg kinds[][4] = {
        { tile_i32(1), tile_ptr(f.y), tile_ptr(f.out), tile_i32(N) },
        { tile_ptr(f.x), tile_ptr(f.y), tile_ptr(f.out), tile_ptr(f.x) },
        { tile_ptr(f.x), tile_ptr(f.y), tile_ptr(f.out), tile_f32(1.5) },
        { tile_ptr(f.x), tile_ptr(f.y), tile_ptr(f.out), tile_i64(1LL << 40) },
        { tile_ptr(0), tile_ptr(f.y), tile_ptr(f.out), tile_i32(N) },
        { tile_ptr(f.x), tile_ptr(f.y), tile_ptr(f.out + BYTES), tile_i32(N) },
        { tile_ptr(f.x), tile_ptr((tile_DevPtr)(uintptr_t)host), tile_ptr(f.out), tile_i32(N) },
        { tile_ptr(f.x), tile_ptr(12345), tile_ptr(f.out), tile_i32(N) },
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        FAILS(ctx, tile_launch(f.k, kinds[i], 4, NULL, 0));
    tile_Arg odd = a[3];
    odd.kind = (tile_ArgKind)42;
    tile_Arg bad_kind[] = { a[0], a[1], a[2], odd };
    FAILS(ctx, tile_launch(f.k, bad_kind, 4, NULL, 0));
    OK(ctx, tile_free(ctx, f.y));
    FAILS(ctx, tile_launch(f.k, a, 4, NULL, 0)); /* freed */
    SAYS(ctx, "not allocated by tile_malloc");
    OK(NULL, tile_context_open(backend, &other));
    OK(other, tile_malloc(other, BYTES, &theirs));
    tile_Arg foreign[] = { tile_ptr(f.x), tile_ptr(theirs), tile_ptr(f.out), tile_i32(N) };
    FAILS(ctx, tile_launch(f.k, foreign, 4, NULL, 0)); /* another context's */
    tile_context_close(other);
    tile_context_close(ctx);
    return 0;
}

/* ---- float arguments out of their parameter's range; u64 values from 2^63 up ---- */
static const char *const SCALARS =
    "kernel conv(out: *f32, h: f16, b: bf16, s: f32) {\n"
    "    store(out, h as f32);\n"
    "    store(out + 1, b as f32);\n"
    "    store(out + 2, s);\n"
    "}\n"
    "kernel put(out: *u64, d: u64) {\n"
    "    store(out, d);\n"
    "}\n";

static int launch_conv(tile_Kernel *k, tile_DevPtr out, tile_Arg h, tile_Arg b, tile_Arg s)
{
    tile_Arg a[] = { tile_ptr(out), h, b, s };
    return tile_launch(k, a, 4, NULL, 0);
}

static int test_float_range(void)
{
    tile_Context *ctx;
    tile_Module *m;
    tile_Kernel *k;
    tile_DevPtr out;
    float got[3];
    OK(NULL, tile_context_open(backend, &ctx));
    OK(ctx, tile_module_load_string(ctx, "scalars.tile", SCALARS, &m));
    OK(ctx, tile_kernel_get(m, "conv", &k));
    OK(ctx, tile_malloc(ctx, sizeof got, &out));
    tile_Arg one = tile_float(1.0);
    FAILS(ctx, launch_conv(k, out, tile_float(1e10), one, one));
    SAYS(ctx, "argument 2 ('h') is 10000000000, out of range for f16");
    FAILS(ctx, launch_conv(k, out, tile_int(100000), one, one));
    FAILS(ctx, launch_conv(k, out, tile_float(65520.0), one, one)); /* rounds to inf */
    FAILS(ctx, launch_conv(k, out, one, tile_float(-1e39), one));
    SAYS(ctx, "argument 3 ('b')");
    FAILS(ctx, launch_conv(k, out, one, one, tile_float(1e300)));
    SAYS(ctx, "argument 4 ('s') is 1.0000000000000001e+300, out of range for f32");
    /* the largest finite values, infinities and NaN pass */
    OK(ctx, launch_conv(k, out, tile_float(65504.0), tile_float(0x1.fep127), tile_float(0x1.fffffep127)));
    OK(ctx, tile_copy_to_host(ctx, got, out, sizeof got));
    CHECK(got[0] == 65504.0f && got[1] == 0x1.fep127f && got[2] == 0x1.fffffep127f);
    OK(ctx, launch_conv(k, out, tile_float(-INFINITY), tile_float(NAN), tile_float(INFINITY)));
    OK(ctx, tile_copy_to_host(ctx, got, out, sizeof got));
    CHECK(isinf(got[0]) && got[0] < 0 && isnan(got[1]) && isinf(got[2]));
    tile_context_close(ctx);
    return 0;
}

static int test_u64(void)
{
    tile_Context *ctx;
    tile_Module *m;
    tile_Kernel *k;
    tile_DevPtr out;
    const uint64_t values[] = { UINT64_MAX, UINT64_C(1) << 63, 12345 };
    OK(NULL, tile_context_open(backend, &ctx));
    OK(ctx, tile_module_load_string(ctx, "scalars.tile", SCALARS, &m));
    OK(ctx, tile_kernel_get(m, "put", &k));
    OK(ctx, tile_malloc(ctx, sizeof(uint64_t), &out));
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        uint64_t got = 0;
        tile_Arg a[] = { tile_ptr(out), tile_u64(values[i]) };
        OK(ctx, tile_launch(k, a, 2, NULL, 0));
        OK(ctx, tile_copy_to_host(ctx, &got, out, sizeof got));
        CHECK(got == values[i]);
    }
    tile_context_close(ctx);
    return 0;
}

/* ---- a kernel whose name is longer than any fixed buffer of the JIT's lookup ---- */
static int test_long_name(void)
{
    char name[601], source[800];
    memset(name, 'k', sizeof name - 1);
    name[sizeof name - 1] = 0;
    snprintf(source, sizeof source, "kernel %s(x: *f32) {\n    store(x, 7.0);\n}\n", name);
    tile_Context *ctx;
    tile_Module *m;
    tile_Kernel *k;
    tile_DevPtr x;
    float got = 0;
    OK(NULL, tile_context_open(backend, &ctx));
    OK(ctx, tile_module_load_string(ctx, "long.tile", source, &m));
    OK(ctx, tile_kernel_get(m, name, &k));
    OK(ctx, tile_malloc(ctx, sizeof got, &x));
    tile_Arg a[] = { tile_ptr(x) };
    OK(ctx, tile_launch(k, a, 1, NULL, 0));
    OK(ctx, tile_copy_to_host(ctx, &got, x, sizeof got));
    CHECK(got == 7.0f);
    tile_context_close(ctx);
    return 0;
}

/* ---- a bad TILE_CPU_THREADS: the default, and one warning to the first log sink ---- */
static char env_log[1024];
static int env_logs;

static void env_sink(void *user, const char *message)
{
    (void)user;
    if (strstr(message, "TILE_CPU_THREADS")) {
        snprintf(env_log, sizeof env_log, "%s", message);
        env_logs++;
    }
}

static int test_env_threads(void)
{
    tile_Context *a, *b;
    setenv("TILE_CPU_THREADS", "99999999999999999999", 1);
    tile_Status st = tile_context_open(backend, &a);
    tile_Status st2 = tile_context_open(backend, &b);
    unsetenv("TILE_CPU_THREADS");
    OK(NULL, st);
    OK(NULL, st2);
    tile_set_log(a, env_sink, NULL);
    tile_set_log(b, env_sink, NULL); /* once per process */
    CHECK(env_logs == 1);
    CHECK(strstr(env_log, "TILE_CPU_THREADS='99999999999999999999' ignored: expected an "
                          "integer from 1 to 1024; using"));
    CHECK(!strstr(tile_device_name(a), " 1024 threads"));
    tile_context_close(a);
    tile_context_close(b);
    return 0;
}

static char strict_log[1024];
static void strict_sink(void *user, const char *message)
{
    (void)user;
    if (strstr(message, "TILE_SIM_STRICT"))
        snprintf(strict_log, sizeof strict_log, "%s", message);
}

/* TILE_SIM_STRICT read at a launch: a value other than 0 or 1 is strict, and logged to the
 * sink installed before it (the launch's own); destroying an event twice says so */
static int test_env_strict(void)
{
    Fx f;
    if (fx_open(&f))
        return 1;
    strict_log[0] = 0;
    tile_set_log(f.ctx, strict_sink, NULL);
    setenv("TILE_SIM_STRICT", "false", 1);
    int bad = launch_ok(&f, f.x, f.out);
    unsetenv("TILE_SIM_STRICT");
    CHECK(!bad);
    CHECK(backend != TILE_BACKEND_SIM || strstr(strict_log, "TILE_SIM_STRICT='false' ignored"));
    tile_Event *e;
    OK(f.ctx, tile_event_create(f.ctx, &e));
    tile_event_destroy(e);
    tile_event_destroy(e);
    CHECK(strstr(tile_error(NULL), "tile_event_destroy"));
    tile_context_close(f.ctx);
    return 0;
}

/* ---- grids ---- */
static int test_grids(void)
{
    Fx f;
    if (fx_open(&f))
        return 1;
    tile_Context *ctx = f.ctx;
    tile_Arg a[] = { tile_ptr(f.x), tile_ptr(f.y), tile_ptr(f.out), tile_i32(N) };
    unsigned wraps[3] = { 1u << 21, 1u << 21, 1u << 22 }; /* 2^64 programs: 0 when wrapped */
    FAILS(ctx, tile_launch_grid(f.k, wraps, a, 4, NULL, 0));
    SAYS(ctx, backend == TILE_BACKEND_CPU ? "more than 2^63 - 1 programs" : "grid dimension y");
    unsigned huge[3] = { 0x7fffffffu, 0x7fffffffu, 0x7fffffffu };
    FAILS(ctx, tile_launch_grid(f.k, huge, a, 4, NULL, 0));
    unsigned past[3] = { 0xffffffffu, 1, 1 };
    FAILS(ctx, tile_launch_grid(f.k, past, a, 4, NULL, 0));
    SAYS(ctx, "grid dimension x");
    /* y and z: 65535 at most on a GPU, and on sim, which stands in for one; 2^31 - 1 on the
     * CPU */
    unsigned tall[3] = { 1, 65536, 1 }, deep[3] = { 2, 1, 70000 };
    if (backend == TILE_BACKEND_CPU) {
        OK(ctx, tile_launch_grid(f.k, deep, a, 4, NULL, 0));
    } else {
        FAILS(ctx, tile_launch_grid(f.k, tall, a, 4, NULL, 0));
        SAYS(ctx, "grid dimension y is 65536, outside 0..65535");
        FAILS(ctx, tile_launch_grid(f.k, deep, a, 4, NULL, 0));
        SAYS(ctx, "grid dimension z is 70000, outside 0..65535");
    }
    unsigned zero[3] = { 0, 5, 5 }; /* documented: launches nothing */
    OK(ctx, tile_launch_grid(f.k, zero, a, 4, NULL, 0));
    tile_Arg negative[] = { a[0], a[1], a[2], tile_i32(-1000) }; /* @grid gives a negative */
    FAILS(ctx, tile_launch(f.k, negative, 4, (tile_Const[]){ { "BLOCK", 1 } }, 1));
    tile_context_close(ctx);
    return 0;
}

/* ---- module files ---- */
static int test_files(void)
{
    tile_Context *ctx;
    tile_Module *m = NULL;
    OK(NULL, tile_context_open(backend, &ctx));
    char dir[] = "/tmp/tile_misuse_XXXXXX", path[64];
    CHECK(mkdtemp(dir));
    FAILS(ctx, tile_module_load_file(ctx, dir, &m));
    SAYS(ctx, "a directory");
    FAILS(ctx, tile_module_load_file(ctx, "/dev/zero", &m));
    SAYS(ctx, "not a regular file");
    snprintf(path, sizeof path, "%s/fifo.tile", dir);
    CHECK(mkfifo(path, 0600) == 0);
    FAILS(ctx, tile_module_load_file(ctx, path, &m)); /* no writer: must not block */
    SAYS(ctx, "a FIFO");
    unlink(path);
    snprintf(path, sizeof path, "%s/big.tile", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0 && ftruncate(fd, (64 << 20) + 1) == 0); /* sparse: costs no disk */
    close(fd);
    FAILS(ctx, tile_module_load_file(ctx, path, &m));
    SAYS(ctx, "64 MiB");
    unlink(path);
    FAILS(ctx, tile_module_load_file(ctx, "/nonexistent/dir/k.tile", &m));
    CHECK(m == NULL);
    rmdir(dir);
    tile_context_close(ctx);
    return 0;
}

/* ---- several threads: allocations, launches and module loads side by side ---- */
typedef struct Worker {
    Fx *f;
    int id, failed;
} Worker;

static int worker_round(Worker *w)
{
    Fx *f = w->f;
    tile_DevPtr out;
    tile_Module *m;
    float back[N];
    OK(f->ctx, tile_malloc(f->ctx, BYTES, &out));
    tile_Arg a[] = { tile_ptr(f->x), tile_ptr(f->y), tile_ptr(out), tile_i32(N) };
    OK(f->ctx, tile_launch(f->k, a, 4, NULL, 0));
    OK(f->ctx, tile_synchronize(f->ctx));
    OK(f->ctx, tile_copy_to_host(f->ctx, back, out, BYTES));
    CHECK(back[N - 1] == 2.0f * (N - 1));
    OK(f->ctx, tile_free(f->ctx, out));
    if (tile_free(f->ctx, out) == TILE_OK) /* a double free stays an error under contention */
        return 1;
    OK(f->ctx, tile_module_load_string(f->ctx, "t.tile", SOURCE, &m));
    tile_module_free(m);
    return 0;
}

static void *worker_main(void *user)
{
    Worker *w = user;
    for (int i = 0; i < 8 && !w->failed; i++)
        w->failed = worker_round(w);
    return NULL;
}

static int test_threads(void)
{
    Fx f;
    if (fx_open(&f))
        return 1;
    float h[N];
    for (int i = 0; i < N; i++)
        h[i] = (float)i;
    OK(f.ctx, tile_copy_to_device(f.ctx, f.x, h, BYTES));
    OK(f.ctx, tile_copy_to_device(f.ctx, f.y, h, BYTES));
    enum { THREADS = 4 };
    pthread_t t[THREADS];
    Worker w[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i] = (Worker){ &f, i, 0 };
        CHECK(pthread_create(&t[i], NULL, worker_main, &w[i]) == 0);
    }
    int failed = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        failed |= w[i].failed;
    }
    CHECK(!failed);
    tile_context_close(f.ctx);
    return 0;
}

/* ---- tile_error(ctx) while other threads fail on the same context ----
 * Each failure replaces the context's message; the text a thread got from tile_error must stay
 * readable however many failures other threads have had since (ASan: no use after free). */
static void *error_worker(void *user)
{
    Fx *f = user;
    tile_Arg a[] = { tile_i32(1), tile_i32(2), tile_i32(3), tile_i32(4) };
    long bad = 0;
    for (int i = 0; i < 3000; i++) {
        if (tile_launch(f->k, a, 1 + i % 4, NULL, 0) == TILE_OK)
            bad++;
        const char *m = tile_error(f->ctx);
        bad += strncmp(m, "launch of 'add': ", 17) != 0;
    }
    return (void *)bad;
}

static int test_error_threads(void)
{
    Fx f;
    if (fx_open(&f))
        return 1;
    enum { THREADS = 4 };
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        CHECK(pthread_create(&t[i], NULL, error_worker, &f) == 0);
    long bad = 0;
    for (int i = 0; i < THREADS; i++) {
        void *r;
        pthread_join(t[i], &r);
        bad += (long)r;
    }
    CHECK(bad == 0);
    /* one thread: the text stays valid across calls, and follows the latest failure */
    FAILS(f.ctx, tile_malloc(f.ctx, 16, NULL));
    const char *first = tile_error(f.ctx);
    CHECK(tile_error(f.ctx) == first && strstr(first, "tile_malloc"));
    FAILS(f.ctx, tile_kernel_get(f.mod, NULL, NULL));
    SAYS(f.ctx, "tile_kernel_get");
    tile_context_close(f.ctx);
    return 0;
}

/* ---- a deep (but valid) expression loaded and compiled on a thread with a small stack ---- */
static tile_Status small_stack_status;
static char small_stack_msg[256];

static void *small_stack_main(void *user)
{
    Fx *f = user;
    enum { DEPTH = 999 }; /* the front end allows 1000 levels */
    char *src = malloc(DEPTH * 2 + 128), *p = src;
    tile_Module *m;
    tile_Kernel *k;
    if (!src)
        return NULL;
    p += sprintf(p, "kernel deep(out: *f32) {\n    let v = ");
    for (int i = 0; i < DEPTH; i++)
        p += sprintf(p, "-");
    sprintf(p, "1.0;\n    store(out, v);\n}\n");
    small_stack_status = tile_module_load_string(f->ctx, "deep.tile", src, &m);
    if (small_stack_status == TILE_OK)
        small_stack_status = tile_kernel_get(m, "deep", &k);
    tile_Arg a[] = { tile_ptr(f->out) };
    if (small_stack_status == TILE_OK)
        small_stack_status = tile_launch(k, a, 1, NULL, 0);
    snprintf(small_stack_msg, sizeof small_stack_msg, "%s", tile_error(f->ctx));
    free(src);
    return NULL;
}

static int test_small_stack(void)
{
    Fx f;
    if (fx_open(&f))
        return 1;
    pthread_attr_t attr;
    pthread_t t;
    CHECK(pthread_attr_init(&attr) == 0);
    CHECK(pthread_attr_setstacksize(&attr, 256 << 10) == 0); /* common in thread pools */
    small_stack_status = TILE_ERROR_DEVICE;
    CHECK(pthread_create(&t, &attr, small_stack_main, &f) == 0);
    pthread_join(t, NULL);
    pthread_attr_destroy(&attr);
    if (small_stack_status != TILE_OK)
        fprintf(stderr, "small_stack: %d: %s\n", (int)small_stack_status, small_stack_msg);
    CHECK(small_stack_status == TILE_OK);
    float back;
    OK(f.ctx, tile_copy_to_host(f.ctx, &back, f.out, sizeof back));
    CHECK(back == -1.0f); /* 999 negations of 1 */
    tile_context_close(f.ctx);
    return 0;
}

/* ---- a log sink that launches a kernel of the module being compiled (no deadlock) ---- */
static int log_depth, log_inner_status = -1;

static void reentrant_log(void *user, const char *message)
{
    Fx *f = user;
    if (log_depth++ == 0 && strstr(message, "compiled")) {
        tile_Arg a[] = { tile_ptr(f->x), tile_ptr(f->y), tile_ptr(f->out), tile_i32(N) };
        tile_Const block[] = { { "BLOCK", 32 } }; /* another specialization: a compile */
        log_inner_status = tile_launch(f->k, a, 4, block, 1);
    }
    log_depth--;
}

static int test_log_reentry(void)
{
    Fx f;
    if (fx_open(&f))
        return 1;
    tile_set_log(f.ctx, reentrant_log, &f);
    if (launch_ok(&f, f.x, f.out))
        return 1;
    CHECK(log_inner_status == TILE_OK);
    tile_context_close(f.ctx);
    return 0;
}

/* ---- a callback closes the context or frees the module of the call that runs it ----
 * The call holds both while it runs: the close or free is refused (tile_error(NULL) says
 * why), the call finishes normally, and the handles are closed or freed after it. */
static const char *const TUNED =
    "@grid(cdiv(n, BLOCK))\n"
    "@tune(BLOCK = [32, 64])\n"
    "kernel add(x: *f32, y: *f32, out: *f32, n: i32, const BLOCK: i32 = 64) {\n"
    "    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
    "    let mask = offs < n;\n"
    "    store(out + offs, load(x + offs, mask=mask) + load(y + offs, mask=mask), mask=mask);\n"
    "}\n";

enum { CLOSE_CONTEXT, FREE_MODULE, FREE_BUFFER };
static struct {
    Fx *f;
    int what, tries;
    char refusal[512]; /* tile_error(NULL) after the first try */
} closer;

static void close_or_free(void)
{
    if (closer.tries++)
        return;
    if (closer.what == CLOSE_CONTEXT)
        tile_context_close(closer.f->ctx);
    else if (closer.what == FREE_MODULE)
        tile_module_free(closer.f->mod);
    else if (tile_free(closer.f->ctx, closer.f->out) == TILE_OK) /* the launch's output */
        snprintf(closer.refusal, sizeof closer.refusal, "tile_free: not refused");
    snprintf(closer.refusal, sizeof closer.refusal, "%s",
             tile_error(closer.what == FREE_BUFFER ? closer.f->ctx : NULL));
}

static void closing_log(void *user, const char *message)
{
    (void)user, (void)message;
    close_or_free();
}

static void closing_progress(void *user, const tile_TuneProgress *p)
{
    (void)user, (void)p;
    close_or_free();
}

/* Runs `call` (0 launch, 1 tune, 2 set the log sink) with a callback that closes or frees
 * `what`; checks the refusal and that the handles are live and usable afterwards. */
static int callback_closes(int call, int what, const char *call_name)
{
    Fx f;
    if (call == 2) /* a warning of its own, kept for the next log sink installed */
        setenv("TILE_CPU_THREADS", "closed-by-the-log-sink", 1);
    int bad = fx_open(&f);
    unsetenv("TILE_CPU_THREADS");
    if (bad)
        return 1;
    OK(f.ctx, tile_module_load_string(f.ctx, "tuned.tile", TUNED, &f.mod));
    OK(f.ctx, tile_kernel_get(f.mod, "add", &f.k));
    memset(&closer, 0, sizeof closer);
    closer.f = &f, closer.what = what;
    tile_Arg a[] = { tile_ptr(f.x), tile_ptr(f.y), tile_ptr(f.out), tile_i32(N) };
    const tile_TuneReport *rep = NULL;
    if (call == 0) {
        tile_set_log(f.ctx, closing_log, NULL);
        OK(f.ctx, tile_launch(f.k, a, 4, NULL, 0)); /* its compile logs */
    } else if (call == 1) {
        tile_TuneOptions o = { .force = 1, .reps = 1, .progress = closing_progress };
        OK(f.ctx, tile_tune(f.k, a, 4, NULL, 0, &o, &rep));
        CHECK(rep && rep->best >= 0 && rep->nresults == 2);
    } else {
        tile_set_log(f.ctx, closing_log, NULL);
    }
    printf("%s\n", closer.refusal);
    CHECK(closer.tries >= 1);
    CHECK(strstr(closer.refusal, what == CLOSE_CONTEXT ? "tile_context_close: refused: "
                                 : what == FREE_MODULE ? "tile_module_free: refused: "
                                                       : "tile_free: refused: "));
    CHECK(strstr(closer.refusal, call_name));
    CHECK(tile_backend(f.ctx) == backend); /* still open */
    tile_set_log(f.ctx, NULL, NULL);
    OK(f.ctx, tile_launch(f.k, a, 4, NULL, 0)); /* the module too */
    tile_module_free(f.mod);
    CHECK(tile_kernel_get(f.mod, "add", &f.k) == TILE_ERROR_INVALID_ARGUMENT); /* freed now */
    tile_context_close(f.ctx);
    CHECK(tile_backend(f.ctx) == TILE_BACKEND_AUTO); /* closed now */
    return 0;
}

static int test_log_closes_context(void)
{
    return callback_closes(0, CLOSE_CONTEXT, "tile_launch is in progress on this context");
}

static int test_log_frees_module(void)
{
    return callback_closes(0, FREE_MODULE, "tile_launch is in progress on this module");
}

static int test_progress_frees_module(void)
{
    return callback_closes(1, FREE_MODULE, "tile_tune is in progress on this module");
}

static int test_progress_closes_context(void)
{
    return callback_closes(1, CLOSE_CONTEXT, "tile_tune is in progress on this context");
}

static int test_log_frees_buffer(void)
{
    return callback_closes(0, FREE_BUFFER, "called from a callback of tile_launch");
}

static int test_set_log_closes_context(void)
{
    return callback_closes(2, CLOSE_CONTEXT, "tile_set_log is in progress on this context");
}

/* ---- TILE_SIM_TARGET changed after the context opened: the context keeps its path ---- */
static int test_sim_target(void)
{
    if (backend != TILE_BACKEND_SIM)
        return 0;
    Fx f;
    if (fx_open(&f))
        return 1;
    const char *arch = tile_device_arch(f.ctx);
    CHECK(!strcmp(arch, "sim") || !strcmp(arch, "sim-amd"));
    char was[16];
    snprintf(was, sizeof was, "%s", arch);
    const char *old = getenv("TILE_SIM_TARGET");
    char *saved = old ? strdup(old) : NULL;
    setenv("TILE_SIM_TARGET", strcmp(was, "sim") ? "sim" : "sim-amd", 1);
    CHECK(!strcmp(tile_device_arch(f.ctx), was));
    int bad = launch_ok(&f, f.x, f.out);
    if (saved)
        setenv("TILE_SIM_TARGET", saved, 1);
    else
        unsetenv("TILE_SIM_TARGET");
    free(saved);
    CHECK(!bad);
    tile_context_close(f.ctx);
    return 0;
}

/* The child of a fork(): every call on the parent's context is refused (its worker threads are
 * not in the child; a launch there waited forever), closing it does not hang, a context of its
 * own works; the parent's goes on. */
static int fork_child(Fx *f)
{
    alarm(60); /* a hang is a failure, not a stuck test */
    tile_Arg args[] = { tile_ptr(f->x), tile_ptr(f->y), tile_ptr(f->out), tile_i32(N) };
    tile_DevPtr p;
    if (tile_launch(f->k, args, 4, NULL, 0) != TILE_ERROR_INVALID_ARGUMENT ||
        !strstr(tile_error(NULL), "before a fork()") ||
        tile_malloc(f->ctx, 16, &p) != TILE_ERROR_INVALID_ARGUMENT)
        return 1;
    tile_context_close(f->ctx);
    Fx g;
    if (fx_open(&g) || launch_ok(&g, g.x, g.out))
        return 1;
    tile_context_close(g.ctx);
    return 0;
}

static int test_fork(void)
{
    Fx f;
    if (fx_open(&f) || launch_ok(&f, f.x, f.out))
        return 1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0)
        _exit(fork_child(&f));
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(!launch_ok(&f, f.x, f.out));
    tile_context_close(f.ctx);
    return 0;
}

static const NamedTest TESTS[] = {
    { "null_args", test_null_args },     { "closed_context", test_closed_context },
    { "freed_module", test_freed_module }, { "copy_ranges", test_copy_ranges },
    { "frees", test_frees },             { "borrow", test_borrow },
    { "launch_args", test_launch_args }, { "grids", test_grids },
    { "files", test_files },             { "threads", test_threads },
    { "error_threads", test_error_threads }, { "small_stack", test_small_stack },
    { "log_reentry", test_log_reentry }, { "sim_target", test_sim_target },
    { "float_range", test_float_range }, { "u64", test_u64 },
    { "long_name", test_long_name },     { "env_threads", test_env_threads },
    { "log_closes_context", test_log_closes_context },
    { "log_frees_module", test_log_frees_module },
    { "progress_frees_module", test_progress_frees_module },
    { "progress_closes_context", test_progress_closes_context },
    { "set_log_closes_context", test_set_log_closes_context },
    { "log_frees_buffer", test_log_frees_buffer },
    { "fork", test_fork },               { "env_strict", test_env_strict },
};

int main(int argc, char **argv)
{
    setenv("TILE_NO_DISK_CACHE", "1", 1);
    setenv("TILE_TUNE", "off", 1);
    if (argc > 1 && !strncmp(argv[1], "--backend=", 10)) {
        backend = !strcmp(argv[1] + 10, "sim") ? TILE_BACKEND_SIM : TILE_BACKEND_CPU;
        argv[1] = argv[0];
        argc--, argv++;
    }
    return run_named_tests("runtime_misuse", TESTS, (int)(sizeof TESTS / sizeof TESTS[0]),
                           argc, argv);
}
