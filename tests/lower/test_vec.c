/* test_vec.c: vector loads and stores. Unit tests of the axis analysis on kernels written in
 * tile (contiguity, divisibility, mask constancy, a for loop's induction variable); PTX for
 * sm_90 carries ld/st.global.v4 when the launch's flags say pointers are 16-byte aligned and
 * sizes multiples of 16, and per-element accesses when a pointer is not; host numerics of the
 * vector code (flags forced through the runtime's compile hook) and of a launch with a
 * pointer one element off. Prints "N passed, M failed"; exits non-zero on failure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "analysis_axis.h"
#include "driver.h"
#include "runtime_internal.h"
#include "vec.h"
#include "tile.h"
#include "../testing.h"

static int passed, failed;


const char *ADD =
    "@grid(cdiv(n, BLOCK))\n"
    "kernel add(x: *f32, y: *f32, out: *f32, n: i32, const BLOCK: i32 = 1024) {\n"
    "    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
    "    let mask = offs < n;\n"
    "    store(out + offs, load(x + offs, mask=mask) + load(y + offs, mask=mask), mask=mask);\n"
    "}\n";

/* Row sums of a [M, K] (leading dimension lda) over a K loop, as matmul loads its tiles. */
const char *ROWSUM =
    "@grid(cdiv(M, BM))\n"
    "kernel rowsum(a: *f32, out: *f32, M: i32, K: i32, lda: i32, const BM: i32 = 16,\n"
    "              const BK: i32 = 32) {\n"
    "    let rm = program_id(0) * BM + arange(0, BM);\n"
    "    let rk = arange(0, BK);\n"
    "    let acc = zeros([BM, BK], f32);\n"
    "    for k in range(0, K, BK) {\n"
    "        let ka = k + rk;\n"
    "        acc = acc + load(a + rm[:, None] * lda + ka[None, :],\n"
    "                         mask=(rm[:, None] < M) && (ka[None, :] < K), other=1.0);\n"
    "    }\n"
    "    store(out + rm, sum(acc, 1), mask=rm < M);\n"
    "}\n";

const char *COPY16 =
    "@grid(cdiv(n, BLOCK))\n"
    "kernel copy16(x: *f16, out: *f16, n: i32, const BLOCK: i32 = 2048) {\n"
    "    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
    "    store(out + offs, load(x + offs, mask=offs < n), mask=offs < n);\n"
    "}\n";

/* ---- PTX ---- */
const Module *vec_parse(Arena *a, const char *src, Diags *d)
{
    SrcFile *f = arena_alloc(a, sizeof *f);
    *f = (SrcFile){"test.tile", src, strlen(src)};
    return tc_parse(a, f, d);
}

static char *ptx_of(Arena *a, const char *src, const char *name, const char *flags)
{
    Diags d;
    diags_init(&d, a);
    unsigned char f[16] = {0};
    for (int i = 0; flags && flags[i]; i++)
        f[i] = (unsigned char)(1 << (flags[i] - '0')); /* each char: log2 of the divisor */
    CompileRequest req = {.module = vec_parse(a, src, &d), .kernel = name, .target = "sm_90",
                          .stop_after = STAGE_OBJECT, .param_div = flags ? f : NULL};
    CompiledKernel ck = {0};
    if (!req.module || tc_compile(&req, a, &d, &ck) != 0) {
        diags_print(&d, stdout);
        return NULL;
    }
    return (char *)ck.code;
}

static int count(const char *text, const char *what)
{
    int n = 0;
    for (const char *s = text; (s = strstr(s, what)); s++)
        n++;
    return n;
}

/* Assembles the PTX with ptxas when it is there: no errors, no local memory. */
static int ptxas_ok(const char *ptx, const char *name)
{
    const char *ptxas = "/usr/local/cuda/bin/ptxas";
    if (access(ptxas, X_OK) != 0)
        return 1;
    char path[128], cmd[512];
    snprintf(path, sizeof path, "/tmp/tile_test_vec_%d_%s.ptx", (int)getpid(), name);
    FILE *f = fopen(path, "w");
    if (!f)
        return 0;
    fputs(ptx, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "%s -arch=sm_90 -v -o /dev/null %s 2>&1 | grep -q "
             "'0 bytes stack frame'", ptxas, path);
    int ok = system(cmd) == 0;
    unlink(path);
    return ok;
}

static int t_ptx_add(Arena *a)
{
    char *v = ptx_of(a, ADD, "add", "4444"), *x_off = ptx_of(a, ADD, "add", "0444");
    char *none = ptx_of(a, ADD, "add", NULL);
    CHECKF(v && x_off && none, "no PTX");
    CHECKF(count(v, "ld.global.v4.b32") + count(v, "ld.global.v4.f32") == 4 &&
          count(v, "st.global.v4") == 2 && !count(v, "ld.global.b32"),
          "aligned add: want 4 vector loads and 2 vector stores:\n%s", v);
    CHECKF(count(x_off, "ld.global.v4") == 2 && count(x_off, "ld.global.b32") == 8,
          "add with x misaligned: y vectorized, x per element:\n%s", x_off);
    CHECKF(!count(none, "global.v"), "add without flags vectorized");
    CHECKF(ptxas_ok(v, "add") && ptxas_ok(x_off, "add_x"), "ptxas rejects the add PTX");
    return 0;
}

static int t_ptx_loop(Arena *a)
{
    char *v = ptx_of(a, ROWSUM, "rowsum", "44444"), *lda = ptx_of(a, ROWSUM, "rowsum", "44440");
    char *even = ptx_of(a, ROWSUM, "rowsum", "44411"); /* K and lda multiples of 2 only */
    CHECKF(v && lda && even, "no PTX");
    CHECKF(count(v, "ld.global.v4") >= 1 && !count(v, "ld.global.b32"),
          "rowsum: the loop's loads should be vectors:\n%s", v);
    CHECKF(!count(lda, "ld.global.v4"), "rowsum with lda unknown vectorized");
    CHECKF(count(even, "ld.global.v2") >= 1 && !count(even, "ld.global.v4") &&
          !count(even, "ld.global.b32") && !count(even, "ld.global.f32"),
          "rowsum with K and lda even: want 8-byte loads only:\n%s", even);
    CHECKF(ptxas_ok(v, "rowsum") && ptxas_ok(even, "rowsum_even"), "ptxas rejects the rowsum PTX");
    return 0;
}

static int t_ptx_f16(Arena *a)
{
    char *v = ptx_of(a, COPY16, "copy16", "444");
    CHECKF(v, "no PTX");
    CHECKF(count(v, "ld.global.v4.b32") >= 1 && count(v, "st.global.v4.b32") >= 1 &&
          !count(v, "ld.global.b16"), "f16 copy: want 8 halves per v4.b32 access:\n%s", v);
    CHECKF(ptxas_ok(v, "copy16"), "ptxas rejects the f16 PTX");
    return 0;
}

/* ---- host numerics: the CPU backend passes no flags, so the hook gives the launch's ---- */
static const char *hook_flags;

static int hook_compile(const CompileRequest *req, Arena *a, Diags *d, CompiledKernel *out)
{
    unsigned char f[16] = {0};
    for (int i = 0; hook_flags && hook_flags[i]; i++)
        f[i] = (unsigned char)(1 << (hook_flags[i] - '0'));
    CompileRequest r = *req;
    r.param_div = hook_flags ? f : NULL;
    return tc_compile(&r, a, d, out);
}

typedef struct Host {
    tile_Context *ctx;
    tile_Module *mod;
    tile_Kernel *k;
} Host;

static int host_open(Host *h, const char *src, const char *name, const char *flags)
{
    hook_flags = flags;
    rt_set_compile_hook(hook_compile);
    CHECKF(tile_context_open(TILE_BACKEND_CPU, &h->ctx) == TILE_OK, "no CPU context");
    CHECKF(tile_module_load_string(h->ctx, "test.tile", src, &h->mod) == TILE_OK &&
          tile_kernel_get(h->mod, name, &h->k) == TILE_OK, "%s", tile_error(h->ctx));
    return 0;
}

static void host_close(Host *h)
{
    tile_module_free(h->mod);
    tile_context_close(h->ctx);
    rt_set_compile_hook(NULL);
}

static tile_DevPtr upload(Host *h, const float *src, int n)
{
    tile_DevPtr p = 0;
    if (tile_malloc(h->ctx, sizeof(float) * (size_t)(n + 8), &p) == TILE_OK && src)
        tile_copy_to_device(h->ctx, p, src, sizeof(float) * (size_t)n);
    return p;
}

/* out = x + y over n elements, x read from `xoff` elements into its buffer. */
static int run_add(int n, int xoff, const char *flags)
{
    Host h;
    if (host_open(&h, ADD, "add", flags))
        return -1;
    float *x = malloc(sizeof(float) * (size_t)(n + 8)), *y = malloc(sizeof(float) * (size_t)n);
    float *out = malloc(sizeof(float) * (size_t)(n + 8));
    for (int i = 0; i < n + 8; i++)
        x[i] = (float)(i % 97) * 0.5f, out[i] = -7.0f;
    for (int i = 0; i < n; i++)
        y[i] = (float)(i % 13);
    tile_DevPtr dx = upload(&h, x, n + 8), dy = upload(&h, y, n), dout = upload(&h, out, n + 8);
    tile_Arg args[] = {tile_ptr(dx + (tile_DevPtr)(4 * xoff)), tile_ptr(dy), tile_ptr(dout),
                       tile_i32(n)};
    tile_Const c[] = {{"BLOCK", 256}};
    int ok = tile_launch(h.k, args, 4, c, 1) == TILE_OK &&
             tile_copy_to_host(h.ctx, out, dout, sizeof(float) * (size_t)(n + 8)) == TILE_OK;
    int bad = -1;
    for (int i = 0; ok && i < n + 8 && bad < 0; i++)
        if (out[i] != (i < n ? x[i + xoff] + y[i] : -7.0f))
            bad = i;
    free(x), free(y), free(out);
    host_close(&h);
    CHECKF(ok, "add launch failed");
    CHECKF(bad < 0, "add n=%d xoff=%d flags=%s: wrong at %d", n, xoff, flags ? flags : "-", bad);
    return 0;
}

static int t_host_add(Arena *a)
{
    (void)a;
    return run_add(1008, 0, "4444") || run_add(1024, 0, "4444") || run_add(1000, 1, "0440") ||
           run_add(1008, 1, "0444") || run_add(1000, 0, NULL);
}

static int run_rowsum(int M, int K, int lda, const char *flags)
{
    Host h;
    if (host_open(&h, ROWSUM, "rowsum", flags))
        return -1;
    float *A = malloc(sizeof(float) * (size_t)(M * lda)), *out = malloc(sizeof(float) * (size_t)M);
    for (int i = 0; i < M * lda; i++)
        A[i] = (float)(i % 7) - 2.0f;
    tile_DevPtr da = upload(&h, A, M * lda), dout = upload(&h, NULL, M);
    tile_Arg args[] = {tile_ptr(da), tile_ptr(dout), tile_i32(M), tile_i32(K), tile_i32(lda)};
    int ok = tile_launch(h.k, args, 5, NULL, 0) == TILE_OK &&
             tile_copy_to_host(h.ctx, out, dout, sizeof(float) * (size_t)M) == TILE_OK;
    int bad = -1, BK = 32;
    for (int m = 0; ok && m < M && bad < 0; m++) {
        double want = (double)((K + BK - 1) / BK * BK - K); /* other=1.0 past K */
        for (int kk = 0; kk < K; kk++)
            want += A[m * lda + kk];
        if (out[m] != (float)want)
            bad = m;
    }
    free(A), free(out);
    host_close(&h);
    CHECKF(ok && bad < 0, "rowsum M=%d K=%d lda=%d: wrong at row %d", M, K, lda, bad);
    return 0;
}

static int t_host_loop(Arena *a)
{
    (void)a;
    return run_rowsum(40, 96, 112, "44444") || run_rowsum(37, 80, 80, "44444") ||
           run_rowsum(33, 75, 77, "44000");
}

typedef struct Test {
    const char *name;
    int (*fn)(Arena *);
} Test;

int main(void)
{
    static const Test tests[] = {
        {"axis_add", t_axis_add}, {"axis_loop", t_axis_loop}, {"axis_divide", t_axis_divide}, {"ptx_add", t_ptx_add},
        {"ptx_loop", t_ptx_loop}, {"ptx_f16", t_ptx_f16},     {"host_add", t_host_add},
        {"host_loop", t_host_loop},
    };
    setenv("TILE_NO_DISK_CACHE", "1", 1); /* the hook's flags are not in the CPU keys */
    for (unsigned i = 0; i < sizeof tests / sizeof tests[0]; i++) {
        Arena *a = arena_new();
        int rc = tests[i].fn(a);
        arena_free(a);
        printf("%s %s\n", rc == 0 ? "ok  " : "FAIL", tests[i].name);
        rc == 0 ? passed++ : failed++;
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
