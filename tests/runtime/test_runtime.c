/* test_runtime.c: tests of libtile's runtime (runtime/): error paths, argument conversion,
 * the specialization and disk caches, CPU launches, the host JIT's reuse of freed modules'
 * dylibs, and CUDA launches where a GPU exists.
 * `test_runtime NAME` runs one test; exit 0 pass, 1 fail, 77 skip (CTest SKIP_RETURN_CODE).
 * Most tests feed hand-built code through rt_set_compile_hook (hook_kernel.c) so they test
 * the runtime alone; cpu_compiler and cuda go through the real compiler. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <dirent.h>
#include <pthread.h>
#include <unistd.h>
#include "cuda_arch.h"
#include "hook_kernel.h"
#include "runtime_internal.h"
#include "tile.h"

#ifndef TILE_SOURCE_DIR
#define TILE_SOURCE_DIR "."
#endif

#include "../testing.h"
#include "../tmpdir.h"
#define HAS(ctx, text) \
    do { \
        if (!strstr(tile_error(ctx), text)) { \
            fprintf(stderr, "%s:%d: error message lacks '%s': %s\n", __FILE__, __LINE__, text, \
                    tile_error(ctx)); \
            return 1; \
        } \
    } while (0)

/* A context (CPU, or sim) with the hook kernel loaded. */
static int hook_setup_on(tile_Backend be, tile_Context **ctx, tile_Module **mod, tile_Kernel **k)
{
    rt_set_compile_hook(hook_compile);
    OK(NULL, tile_context_open(be, ctx));
    OK(*ctx, tile_module_load_string(*ctx, "scale.tile", HOOK_SOURCE, mod));
    OK(*ctx, tile_kernel_get(*mod, "scale", k));
    return 0;
}

static int hook_setup(tile_Context **ctx, tile_Module **mod, tile_Kernel **k)
{
    return hook_setup_on(TILE_BACKEND_CPU, ctx, mod, k);
}

/* Runs scale over n floats with BLOCK, checks out[j] == s*j + 1. */
static int run_scale(tile_Context *ctx, tile_Kernel *k, int n, float s, int block)
{
    tile_DevPtr d;
    float *h = malloc(sizeof(float) * (size_t)(n + 1));
    CHECK(h);
    OK(ctx, tile_malloc(ctx, sizeof(float) * (size_t)n, &d));
    OK(ctx, tile_memset(ctx, d, 0, sizeof(float) * (size_t)n));
    tile_Arg args[] = { tile_ptr(d), tile_i32(n), tile_f32(s) };
    tile_Const c[] = { { "BLOCK", block } };
    OK(ctx, tile_launch(k, args, 3, c, 1));
    OK(ctx, tile_synchronize(ctx));
    OK(ctx, tile_copy_to_host(ctx, h, d, sizeof(float) * (size_t)n));
    OK(ctx, tile_free(ctx, d));
    for (int j = 0; j < n; j++)
        if (h[j] != s * (float)j + 1.0f) {
            fprintf(stderr, "scale: out[%d] = %g, expected %g\n", j, h[j], s * (float)j + 1.0f);
            free(h);
            return 1;
        }
    free(h);
    return 0;
}

/* ---- tests ---- */

static int test_api_errors(void)
{
    tile_Context *ctx;
    tile_Module *mod;
    tile_Kernel *k;
    setenv("TILE_NO_DISK_CACHE", "1", 1);
    EXPECT(NULL, TILE_ERROR_INVALID_ARGUMENT, tile_context_open(TILE_BACKEND_CPU, NULL));
    /* no AMD GPU anywhere we test: no runtime library, or one that finds no device */
    EXPECT(NULL, TILE_ERROR_NO_DEVICE, tile_context_open(TILE_BACKEND_HIP, &ctx));
    CHECK((strstr(tile_error(NULL), "cannot load the HIP runtime") ||
           strstr(tile_error(NULL), "AMD GPU")) && !ctx);
    setenv("TILE_BACKEND", "tpu", 1);
    EXPECT(NULL, TILE_ERROR_INVALID_ARGUMENT, tile_context_open(TILE_BACKEND_AUTO, &ctx));
    CHECK(strstr(tile_error(NULL), "tpu"));
    setenv("TILE_BACKEND", "cpu", 1);
    OK(NULL, tile_context_open(TILE_BACKEND_AUTO, &ctx));
    unsetenv("TILE_BACKEND");
    CHECK(tile_backend(ctx) == TILE_BACKEND_CPU && !strcmp(tile_device_arch(ctx), "host"));
    CHECK(!strcmp(tile_backend_name(TILE_BACKEND_CUDA), "cuda") && *tile_device_name(ctx));

    EXPECT(ctx, TILE_ERROR_INVALID_ARGUMENT, tile_module_load_string(ctx, "x", NULL, &mod));
    EXPECT(ctx, TILE_ERROR_NOT_FOUND, tile_module_load_file(ctx, "/nonexistent/k.tile", &mod));
    HAS(ctx, "/nonexistent/k.tile");
    EXPECT(ctx, TILE_ERROR_COMPILE,
           tile_module_load_string(ctx, "bad.tile", "kernel f(x: *f32) {\n    let y = ;\n}\n", &mod));
    HAS(ctx, "bad.tile:2:13: error:");
    OK(ctx, tile_module_load_string(ctx, "scale.tile", HOOK_SOURCE, &mod));
    EXPECT(ctx, TILE_ERROR_NOT_FOUND, tile_kernel_get(mod, "nope", &k));
    HAS(ctx, "no kernel 'nope'");
    EXPECT(ctx, TILE_ERROR_INVALID_ARGUMENT, tile_kernel_get(mod, NULL, &k));

    tile_DevPtr p;
    int x = 0;
    EXPECT(ctx, TILE_ERROR_INVALID_ARGUMENT, tile_free(ctx, 12345));
    EXPECT(ctx, TILE_ERROR_INVALID_ARGUMENT, tile_malloc(ctx, 16, NULL));
    OK(ctx, tile_malloc(ctx, 16, &p));
    EXPECT(ctx, TILE_ERROR_INVALID_ARGUMENT, tile_copy_to_device(ctx, p, NULL, 4));
    EXPECT(ctx, TILE_ERROR_INVALID_ARGUMENT, tile_copy_to_host(ctx, &x, 0, 4));
    OK(ctx, tile_copy_to_device(ctx, p, NULL, 0));
    CHECK(p % 64 == 0);
    OK(ctx, tile_free(ctx, p));
    EXPECT(ctx, TILE_ERROR_INVALID_ARGUMENT, tile_free(ctx, p)); /* double free is caught */
    OK(ctx, tile_malloc(ctx, 0, &p)); /* left for tile_context_close to free */
    CHECK(tile_launch(NULL, NULL, 0, NULL, 0) == TILE_ERROR_INVALID_ARGUMENT);
    tile_context_close(ctx);
    tile_context_close(NULL);
    return 0;
}

static int test_launch_errors(void)
{
    tile_Context *ctx;
    tile_Module *mod;
    tile_Kernel *k;
    tile_DevPtr d;
    setenv("TILE_NO_DISK_CACHE", "1", 1);
    if (hook_setup(&ctx, &mod, &k))
        return 1;
    OK(ctx, tile_malloc(ctx, 64, &d));
    tile_Arg good[] = { tile_ptr(d), tile_i32(16), tile_f32(2) };
    EXPECT(ctx, TILE_ERROR_INVALID_ARGUMENT, tile_launch(k, good, 2, NULL, 0));
    HAS(ctx, "expected 3 arguments, got 2");
    EXPECT(ctx, TILE_ERROR_INVALID_ARGUMENT, tile_launch(k, NULL, 3, NULL, 0));
    tile_Arg not_ptr[] = { tile_i32(5), tile_i32(16), tile_f32(2) };
    EXPECT(ctx, TILE_ERROR_INVALID_ARGUMENT, tile_launch(k, not_ptr, 3, NULL, 0));
    HAS(ctx, "launch of 'scale': argument 1 ('out') expects a pointer, got an integer");
    tile_Arg ptr_for_int[] = { tile_ptr(d), tile_ptr(d), tile_f32(2) };
    EXPECT(ctx, TILE_ERROR_INVALID_ARGUMENT, tile_launch(k, ptr_for_int, 3, NULL, 0));
    HAS(ctx, "argument 2 ('n') expects an integer, got a pointer");
    tile_Arg float_for_int[] = { tile_ptr(d), tile_float(1.5), tile_f32(2) };
    EXPECT(ctx, TILE_ERROR_INVALID_ARGUMENT, tile_launch(k, float_for_int, 3, NULL, 0));
    HAS(ctx, "got a float");
    tile_Arg too_big[] = { tile_ptr(d), tile_i64(1LL << 40), tile_f32(2) };
    EXPECT(ctx, TILE_ERROR_INVALID_ARGUMENT, tile_launch(k, too_big, 3, NULL, 0));
    HAS(ctx, "out of range for i32");
    tile_Const unknown[] = { { "BLOCKX", 4 } };
    EXPECT(ctx, TILE_ERROR_NOT_FOUND, tile_launch(k, good, 3, unknown, 1));
    HAS(ctx, "no const parameter 'BLOCKX'");

    long before = rt_stats().compiles;
    tile_Arg empty[] = { tile_ptr(d), tile_i32(0), tile_f32(2) };
    OK(ctx, tile_launch(k, empty, 3, NULL, 0)); /* grid cdiv(0, 4) = 0: nothing to do */
    unsigned zero[3] = { 0, 1, 1 }, huge[3] = { 1u << 31, 1, 1 };
    OK(ctx, tile_launch_grid(k, zero, good, 3, NULL, 0));
    CHECK(rt_stats().compiles == before);
    EXPECT(ctx, TILE_ERROR_INVALID_ARGUMENT, tile_launch_grid(k, huge, good, 3, NULL, 0));
    HAS(ctx, "grid dimension x");

    tile_Const unlucky[] = { { "BLOCK", 13 } };
    EXPECT(ctx, TILE_ERROR_COMPILE, tile_launch(k, good, 3, unlucky, 1));
    HAS(ctx, "unlucky");
    HAS(ctx, "compile of 'scale' [BLOCK=13");
    /* the context goes on working after every error above */
    OK(ctx, tile_free(ctx, d));
    if (run_scale(ctx, k, 16, 2.0f, 4))
        return 1;
    tile_context_close(ctx);
    return 0;
}

static int test_convert(void)
{
    CHECK(rt_f16_bits(1.0) == 0x3c00 && rt_f16_bits(-2.0) == 0xc000);
    CHECK(rt_f16_bits(65504.0) == 0x7bff && rt_f16_bits(65520.0) == 0x7c00);
    CHECK(rt_f16_bits(65519.0) == 0x7bff && rt_f16_bits(1e10) == 0x7c00);
    CHECK(rt_f16_bits(INFINITY) == 0x7c00 && rt_f16_bits(-INFINITY) == 0xfc00);
    CHECK((rt_f16_bits(NAN) & 0x7c00) == 0x7c00 && (rt_f16_bits(NAN) & 0x3ff));
    CHECK(rt_f16_bits(0x1p-24) == 0x0001 && rt_f16_bits(0x1p-26) == 0);
    CHECK(rt_f16_bits(0x1p-25) == 0 && rt_f16_bits(0x1.8p-25) == 0x0001); /* ties to even */
    CHECK(rt_f16_bits(0x1p-14) == 0x0400 && rt_f16_bits(0x1.ffcp-15) == 0x0400);
    CHECK(rt_f16_bits(0x1.ff8p-15) == 0x03ff);
    CHECK(rt_f16_bits(2049.0) == 0x6800 && rt_f16_bits(2051.0) == 0x6802);
    CHECK(rt_f16_bits(-0.0) == 0x8000 && rt_f16_bits(0.1) == 0x2e66);
    CHECK(rt_bf16_bits(1.0) == 0x3f80 && rt_bf16_bits(3.14159) == 0x4049);
    CHECK(rt_bf16_bits(-1.5) == 0xbfc0 && rt_bf16_bits(1e39) == 0x7f80);
    CHECK(rt_bf16_bits(3.4e38) == 0x7f80 && rt_bf16_bits(3.38e38) == 0x7f7e);
    return 0;
}

typedef struct ThreadRun {
    tile_Context *ctx;
    tile_Kernel *k;
    int id, failed;
} ThreadRun;

static void *thread_main(void *arg)
{
    ThreadRun *t = arg;
    for (int i = 0; i < 20 && !t->failed; i++)
        t->failed = run_scale(t->ctx, t->k, 100 + t->id * 7 + i, (float)t->id, 1 << (i % 4));
    return NULL;
}

static int test_cpu_hook(void)
{
    tile_Context *ctx;
    tile_Module *mod;
    tile_Kernel *k;
    setenv("TILE_NO_DISK_CACHE", "1", 1);
    if (hook_setup(&ctx, &mod, &k))
        return 1;
    long c0 = rt_stats().compiles;
    if (run_scale(ctx, k, 1000, 0.5f, 16) || run_scale(ctx, k, 37, 3.0f, 16))
        return 1;
    CHECK(rt_stats().compiles == c0 + 1); /* one specialization */
    if (run_scale(ctx, k, 1000, 0.25f, 64) || run_scale(ctx, k, 1, 1.0f, 4))
        return 1; /* BLOCK=4 is the default: same key as no const given */
    CHECK(rt_stats().compiles == c0 + 3);
    tile_DevPtr d;
    float h[8];
    OK(ctx, tile_malloc(ctx, sizeof h, &d));
    tile_Arg int_for_float[] = { tile_ptr(d), tile_i32(8), tile_int(3) };
    OK(ctx, tile_launch(k, int_for_float, 3, NULL, 0));
    OK(ctx, tile_copy_to_host(ctx, h, d, sizeof h));
    CHECK(h[7] == 22.0f);
    CHECK(rt_stats().compiles == c0 + 3);

    pthread_t th[4];
    ThreadRun runs[4];
    for (int i = 0; i < 4; i++) {
        runs[i] = (ThreadRun){ ctx, k, i, 0 };
        pthread_create(&th[i], NULL, thread_main, &runs[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        CHECK(!runs[i].failed);
    }
    CHECK(rt_stats().compiles == c0 + 6); /* BLOCK 1, 2, 8 added, each compiled once */
    tile_module_free(mod);
    tile_context_close(ctx);
    return 0;
}

/* ---- JITDylib reuse (cpu_jit.c) ---- */
/* A module loaded, launched once (its code goes into a JITDylib) and freed. */
static int load_launch_free(tile_Context *ctx, int i)
{
    tile_Module *mod;
    tile_Kernel *k;
    OK(ctx, tile_module_load_string(ctx, "scale.tile", HOOK_SOURCE, &mod));
    OK(ctx, tile_kernel_get(mod, "scale", &k));
    int rc = run_scale(ctx, k, 50 + i, 1.5f, 4 << (i % 3));
    tile_module_free(mod);
    return rc;
}

static void *cycle_main(void *arg)
{
    ThreadRun *t = arg;
    for (int i = 0; i < 10 && !t->failed; i++)
        t->failed = load_launch_free(t->ctx, t->id * 10 + i);
    return NULL;
}

/* Loading, launching and freeing modules over and over reuses the freed modules' dylibs: the
 * number created is the most loaded at once (1 in turn; at most 4 from 4 threads), not one
 * per load. On the sim backend the code calls the backend's symbols, which only a dylib's own
 * definitions provide, so a reused dylib must have them again. */
static int jit_reuse_on(tile_Backend be)
{
    tile_Context *ctx;
    rt_set_compile_hook(hook_compile);
    setenv("TILE_NO_DISK_CACHE", "1", 1);
    OK(NULL, tile_context_open(be, &ctx));
    long d0 = rt_stats().jit_dylibs;
    for (int i = 0; i < 40; i++)
        if (load_launch_free(ctx, i))
            return 1;
    CHECK(rt_stats().jit_dylibs == d0 + 1);
    pthread_t th[4];
    ThreadRun runs[4];
    for (int i = 0; i < 4; i++) {
        runs[i] = (ThreadRun){ ctx, NULL, i, 0 };
        CHECK(pthread_create(&th[i], NULL, cycle_main, &runs[i]) == 0);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < 4; i++)
        CHECK(!runs[i].failed);
    long made = rt_stats().jit_dylibs - d0;
    printf("%s: 80 loads, %ld dylibs\n", tile_backend_name(be), made);
    CHECK(made >= 1 && made <= 4);
    tile_context_close(ctx);
    return 0;
}

static int test_jit_reuse(void)
{
    return jit_reuse_on(TILE_BACKEND_CPU) || jit_reuse_on(TILE_BACKEND_SIM);
}

/* static_print's note reaches the context's log when its specialization compiles, with its
 * values for that specialization (each BLOCK its own line), and only then. */
static char printed[512];

static void on_note(void *user, const char *msg)
{
    (void)user;
    const char *at = strstr(msg, "static_print");
    if (at) /* its line, without the source line and caret after it */
        snprintf(printed + strlen(printed), sizeof printed - strlen(printed), "%.*s|",
                 (int)strcspn(at, "\n"), at);
}

static int test_static_print(void)
{
    static const char src[] =
        "kernel show(x: *f32, const BLOCK: i32 = 4) {\n"
        "    static_print(\"BLOCK\", BLOCK, BLOCK * 0.5);\n"
        "    store(x + arange(0, BLOCK), 1.0);\n"
        "}\n";
    tile_Context *ctx;
    tile_Module *mod;
    tile_Kernel *k;
    tile_DevPtr d;
    setenv("TILE_NO_DISK_CACHE", "1", 1);
    OK(NULL, tile_context_open(TILE_BACKEND_CPU, &ctx));
    tile_set_log(ctx, on_note, NULL);
    OK(ctx, tile_module_load_string(ctx, "show.tile", src, &mod));
    OK(ctx, tile_kernel_get(mod, "show", &k));
    OK(ctx, tile_malloc(ctx, 64 * sizeof(float), &d));
    for (int block = 4; block <= 16; block *= 2)
        for (int again = 0; again < 2; again++) { /* the second launch reuses the code */
            tile_Arg args[1] = {tile_ptr(d)};
            tile_Const c[1] = {{"BLOCK", block}};
            OK(ctx, tile_launch(k, args, 1, c, 1));
        }
    CHECK(!strcmp(printed, "static_print: BLOCK 4 2.0|static_print: BLOCK 8 4.0|static_print: BLOCK 16 8.0|"));
    tile_free(ctx, d);
    tile_context_close(ctx);
    return 0;
}

/* ---- disk cache ---- */
static char cache_root[256];

static int make_cache_dir(void)
{
    CHECK(test_tmpdir(cache_root, sizeof cache_root, "tile-rt-test") == 0); /* gone at exit */
    setenv("TILE_CACHE_DIR", cache_root, 1);
    unsetenv("TILE_NO_DISK_CACHE");
    return 0;
}

/* Path of the only finished file in the cache (not a temp file); "" if none or several. */
static int cache_files(char *path, size_t cap)
{
    char dir[300];
    snprintf(dir, sizeof dir, "%s/kernels", cache_root);
    DIR *d = opendir(dir);
    int n = 0;
    path[0] = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        if (e->d_name[0] != '.') {
            n++;
            snprintf(path, cap, "%s/%s", dir, e->d_name);
        }
    if (d)
        closedir(d);
    return n;
}

static int log_loaded; /* log lines that reported a disk cache hit */

static void on_log(void *user, const char *msg)
{
    if (strstr(msg, "loaded 'scale' from"))
        (*(int *)user)++;
}

/* One context, one launch of scale (BLOCK=8); returns 0 when the results are right. */
static int one_process_run(void)
{
    tile_Context *ctx;
    tile_Module *mod;
    tile_Kernel *k;
    if (hook_setup(&ctx, &mod, &k))
        return 1;
    tile_set_log(ctx, on_log, &log_loaded);
    if (run_scale(ctx, k, 100, 2.0f, 8))
        return 1;
    tile_context_close(ctx);
    return 0;
}

static int corrupt(const char *path, int truncate_it)
{
    FILE *f = fopen(path, "r+b");
    CHECK(f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    if (truncate_it) {
        fclose(f);
        CHECK(truncate(path, size / 2) == 0);
        return 0;
    }
    fseek(f, size / 2, SEEK_SET);
    int c = fgetc(f);
    fseek(f, size / 2, SEEK_SET);
    fputc(c ^ 0x5a, f);
    fclose(f);
    return 0;
}

static int test_disk_cache(void)
{
    char path[600];
    if (make_cache_dir())
        return 1;
    RtStats s0 = rt_stats();
    if (one_process_run())
        return 1;
    RtStats s1 = rt_stats();
    CHECK(s1.compiles == s0.compiles + 1 && s1.disk_writes == s0.disk_writes + 1);
    CHECK(cache_files(path, sizeof path) == 1);
    if (one_process_run()) /* a new context finds the object on disk */
        return 1;
    RtStats s2 = rt_stats();
    CHECK(s2.compiles == s1.compiles && s2.disk_hits == s1.disk_hits + 1 && log_loaded == 1);

    for (int t = 0; t < 2; t++) { /* flipped byte, then truncation: ignored and rewritten */
        if (corrupt(path, t) || one_process_run())
            return 1;
        RtStats s = rt_stats();
        CHECK(s.compiles == s2.compiles + t + 1 && s.disk_hits == s2.disk_hits);
        CHECK(cache_files(path, sizeof path) == 1);
    }
    RtStats s3 = rt_stats();
    if (one_process_run())
        return 1;
    CHECK(rt_stats().disk_hits == s3.disk_hits + 1);

    setenv("TILE_NO_DISK_CACHE", "1", 1);
    if (one_process_run())
        return 1;
    CHECK(rt_stats().disk_hits == s3.disk_hits + 1 && rt_stats().compiles == s3.compiles + 1);
    unsetenv("TILE_NO_DISK_CACHE");
    setenv("TILE_CACHE_DIR", "", 1);
    if (one_process_run())
        return 1;
    CHECK(rt_stats().disk_writes == s3.disk_writes);
    return 0;
}

/* Several processes compile the same specialization at once into an empty cache: every
 * one succeeds, and what is left is one valid file. */
static int test_disk_cache_concurrent(void)
{
    char path[600];
    if (make_cache_dir())
        return 1;
    enum { N = 4 };
    pid_t kids[N];
    for (int i = 0; i < N; i++)
        if ((kids[i] = fork()) == 0)
            _exit(one_process_run());
    for (int i = 0; i < N; i++) {
        int status;
        CHECK(waitpid(kids[i], &status, 0) == kids[i]);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    CHECK(cache_files(path, sizeof path) == 1);
    CacheEntry e;
    CHECK(rt_cache_read(NULL, path, &e) == 0 && !strcmp(e.symbol, "scale") && e.nparams == 3);
    rt_cache_entry_free(&e);
    RtStats s = rt_stats();
    if (one_process_run())
        return 1;
    CHECK(rt_stats().disk_hits == s.disk_hits + 1 && rt_stats().compiles == s.compiles);
    return 0;
}

/* ---- through the real compiler ---- */
static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static int run_add(tile_Backend backend)
{
    tile_Context *ctx;
    tile_Module *mod;
    tile_Kernel *k;
    rt_set_compile_hook(NULL); /* the real compiler */
    tile_Status st = tile_context_open(backend, &ctx);
    if (st == TILE_ERROR_NO_DEVICE) {
        printf("SKIP: %s\n", tile_error(NULL));
        return 77;
    }
    OK(NULL, st);
    printf("device: %s (%s)\n", tile_device_name(ctx), tile_device_arch(ctx));
    OK(ctx, tile_module_load_file(ctx, TILE_SOURCE_DIR "/examples/add.tile", &mod));
    OK(ctx, tile_kernel_get(mod, "add", &k));
    enum { N = 10007 };
    static float x[N], y[N], out[N];
    for (int i = 0; i < N; i++) {
        x[i] = (float)i;
        y[i] = 0.5f * (float)i;
    }
    tile_DevPtr dx, dy, dout;
    OK(ctx, tile_malloc(ctx, sizeof x, &dx));
    OK(ctx, tile_malloc(ctx, sizeof y, &dy));
    OK(ctx, tile_malloc(ctx, sizeof out, &dout));
    OK(ctx, tile_copy_to_device(ctx, dx, x, sizeof x));
    OK(ctx, tile_copy_to_device(ctx, dy, y, sizeof y));
    tile_Arg args[] = { tile_ptr(dx), tile_ptr(dy), tile_ptr(dout), tile_i32(N) };
    tile_Const c[] = { { "BLOCK", 256 } };
    double t0 = now_ms();
    st = tile_launch(k, args, 4, c, 1);
    if (st == TILE_ERROR_COMPILE && backend == TILE_BACKEND_CPU) {
        printf("SKIP: the compiler cannot build add.tile yet: %s\n", tile_error(ctx));
        return 77;
    }
    OK(ctx, st);
    OK(ctx, tile_synchronize(ctx));
    double t1 = now_ms();
    for (int i = 0; i < 1000; i++)
        OK(ctx, tile_launch(k, args, 4, c, 1));
    OK(ctx, tile_synchronize(ctx));
    printf("first launch %.2f ms, then %.2f us per launch\n", t1 - t0, now_ms() - t1);
    OK(ctx, tile_copy_to_host(ctx, out, dout, sizeof out));
    for (int i = 0; i < N; i++)
        if (out[i] != x[i] + y[i]) {
            fprintf(stderr, "add: out[%d] = %g, expected %g\n", i, out[i], x[i] + y[i]);
            return 1;
        }
    tile_context_close(ctx);
    return 0;
}

static int test_cpu_compiler(void)
{
    setenv("TILE_NO_DISK_CACHE", "1", 1);
    return run_add(TILE_BACKEND_CPU);
}

static int test_cuda(void)
{
    if (make_cache_dir())
        return 1;
    RtStats s0 = rt_stats();
    int rc = run_add(TILE_BACKEND_CUDA);
    if (rc)
        return rc;
    RtStats s1 = rt_stats();
    if ((rc = run_add(TILE_BACKEND_CUDA))) /* the cubin comes from the disk cache */
        return rc;
    CHECK(s1.compiles == s0.compiles + 1 && rt_stats().disk_hits == s1.disk_hits + 1);
    return 0;
}

/* A kernel that writes through a bad pointer: the error names the CUDA call and reason. */
static int test_cuda_fault(void)
{
    tile_Context *ctx;
    tile_Module *mod;
    tile_Kernel *k;
    rt_set_compile_hook(NULL);
    setenv("TILE_NO_DISK_CACHE", "1", 1);
    tile_Status st = tile_context_open(TILE_BACKEND_CUDA, &ctx);
    if (st == TILE_ERROR_NO_DEVICE) {
        printf("SKIP: %s\n", tile_error(NULL));
        return 77;
    }
    OK(ctx, tile_module_load_file(ctx, TILE_SOURCE_DIR "/examples/add.tile", &mod));
    OK(ctx, tile_kernel_get(mod, "add", &k));
    tile_Arg args[] = { tile_ptr(16), tile_ptr(16), tile_ptr(16), tile_i32(1 << 20) };
    OK(ctx, tile_launch(k, args, 4, NULL, 0));
    EXPECT(ctx, TILE_ERROR_DEVICE, tile_synchronize(ctx));
    HAS(ctx, "CUDA error 700");
    HAS(ctx, "in cuCtxSynchronize");
    printf("%s\n", tile_error(ctx));
    tile_context_close(ctx);
    return 0;
}

/* The sim backend runs the hook's sim entry with 64 threads and 64 bytes of shared memory;
 * a divergent barrier or a shared store out of bounds fails the launch with the message of
 * the lowest failing program. TILE_BACKEND=sim picks it for AUTO. */
static int test_sim_hook(void)
{
    tile_Context *ctx;
    tile_Module *mod;
    tile_Kernel *k;
    setenv("TILE_NO_DISK_CACHE", "1", 1);
    if (hook_setup_on(TILE_BACKEND_SIM, &ctx, &mod, &k))
        return 1;
    CHECK(tile_backend(ctx) == TILE_BACKEND_SIM && !strcmp(tile_device_arch(ctx), "sim"));
    CHECK(!strcmp(tile_backend_name(TILE_BACKEND_SIM), "sim"));
    if (run_scale(ctx, k, 1000, 0.5f, 16))
        return 1;
    tile_DevPtr d;
    OK(ctx, tile_malloc(ctx, 100 * sizeof(float), &d));
    tile_Arg args[] = { tile_ptr(d), tile_i32(100), tile_f32(1) };
    EXPECT(ctx, TILE_ERROR_DEVICE, tile_launch(k, args, 3, (tile_Const[]){ { "BLOCK", 7 } }, 1));
    HAS(ctx, "launch of 'scale': sim: program (0,0,0): divergent barrier/shuffle: thread 0 "
             "(warp 0, lane 0) waits at a barrier while thread 37 (warp 1, lane 5) has returned");
    EXPECT(ctx, TILE_ERROR_DEVICE, tile_launch(k, args, 3, (tile_Const[]){ { "BLOCK", 9 } }, 1));
    HAS(ctx, "program (0,0,0): shared memory out of bounds: thread 0 (warp 0, lane 0) writes 4 "
             "bytes at offset 64 of 64");
    OK(ctx, tile_launch(k, args, 3, NULL, 0)); /* still usable */
    tile_context_close(ctx);
    setenv("TILE_BACKEND", "sim", 1);
    OK(NULL, tile_context_open(TILE_BACKEND_AUTO, &ctx));
    unsetenv("TILE_BACKEND");
    CHECK(tile_backend(ctx) == TILE_BACKEND_SIM);
    tile_context_close(ctx);
    return 0;
}

/* One choice of cuda_arch_choose: "ARCH FALLBACK", or "error" */
static const char *arch_choice(const char *want, int major, int minor)
{
    static char out[64];
    char arch[CUDA_ARCH_MAX], fallback[CUDA_ARCH_MAX], err[256] = "";
    if (cuda_arch_choose(want, major, minor, arch, fallback, err, sizeof err) != 0)
        return strstr(err, "TILE_CUDA_ARCH=") ? "error" : "error without a message";
    snprintf(out, sizeof out, "%s %s", arch, fallback);
    return out;
}

/* The CUDA backend's architecture: the device's own, or an older one from TILE_CUDA_ARCH
 * (no device needed: the choice alone). */
static int test_cuda_arch(void)
{
    CHECK(!strcmp(arch_choice(NULL, 9, 0), "sm_90a sm_90"));
    CHECK(!strcmp(arch_choice("", 9, 0), "sm_90a sm_90"));
    CHECK(!strcmp(arch_choice(NULL, 8, 6), "sm_86 sm_86"));
    CHECK(!strcmp(arch_choice("sm_80", 9, 0), "sm_80 sm_80"));
    CHECK(!strcmp(arch_choice("sm_90", 9, 0), "sm_90 sm_90"));
    CHECK(!strcmp(arch_choice("sm_90a", 9, 0), "sm_90a sm_90"));
    CHECK(!strcmp(arch_choice("sm_86", 8, 9), "sm_86 sm_86"));
    CHECK(!strcmp(arch_choice("sm_100", 10, 0), "sm_100 sm_100"));
    const char *bad[] = {"sm_90", "sm_80a", "sm_9", "sm_", "sm_8x", "compute_80", "sm_80 ",
                         "sm_00080", "sm_40", "sm_90aa", "SM_80", "sm_-80"};
    for (int i = 0; i < (int)(sizeof bad / sizeof bad[0]); i++)
        CHECK(!strcmp(arch_choice(bad[i], 8, 9), "error"));
    CHECK(!strcmp(arch_choice("sm_90a", 10, 0), "error")); /* 9.0-only code on a 10.0 device */
    return 0;
}

static const NamedTest tests[] = {
    { "api_errors", test_api_errors },
    { "launch_errors", test_launch_errors },
    { "convert", test_convert },
    { "cpu_hook", test_cpu_hook },
    { "jit_reuse", test_jit_reuse },
    { "static_print", test_static_print },
    { "sim_hook", test_sim_hook },
    { "disk_cache", test_disk_cache },
    { "disk_cache_concurrent", test_disk_cache_concurrent },
    { "cpu_compiler", test_cpu_compiler },
    { "cuda", test_cuda },
    { "cuda_fault", test_cuda_fault },
    { "cuda_arch", test_cuda_arch },
};

int main(int argc, char **argv)
{
    return run_named_tests("test_runtime", tests, (int)(sizeof tests / sizeof tests[0]), argc, argv);
}
