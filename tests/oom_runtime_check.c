/* oom_runtime_check.c: every arena allocation failure outside the compiler is handled too.
 * Runs a small program through the public API (CPU backend: load a module from source, launch
 * a kernel, tune a kernel with a small @tune space) again and again, making the N-th arena
 * allocation and all after it fail (arena_fail_after), for N from 0 until a run needs no more
 * than N (every N up to 128, then every 6th; --every: all of them). Each call must then
 * succeed or fail with a status and a message, never crash (under ASan: never touch memory
 * it should not, even where that happens not to crash).
 *   oom_runtime_check [--every]      Exit: 0 ok, 1 a failure. */
#define _GNU_SOURCE /* mkdtemp */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "arena.h"
#include "tile.h"

static const char SOURCE[] =
    "@grid(cdiv(n, BLOCK))\n"
    "kernel add(x: *f32, y: *f32, n: i32, const BLOCK: i32 = 16) {\n"
    "    let i = program_id(0) * BLOCK + arange(0, BLOCK);\n"
    "    store(y + i, load(x + i, mask=i < n) + 1.0, mask=i < n);\n"
    "}\n"
    "@tune(BLOCK=[8, 16], num_warps=[1, 2])\n"
    "@grid(cdiv(n, BLOCK))\n"
    "kernel scale(x: *f32, n: i32, const BLOCK: i32) {\n"
    "    let i = program_id(0) * BLOCK + arange(0, BLOCK);\n"
    "    store(x + i, load(x + i, mask=i < n) * 2.0, mask=i < n);\n"
    "}\n";

enum { N = 40 };

/* A failed call: its message must be there (the status alone tells a server nothing). */
static int failed(tile_Context *ctx, tile_Status st, const char *what, long n, int *bad)
{
    if (st == TILE_OK)
        return 0;
    const char *msg = tile_error(ctx);
    if (!msg || !*msg) {
        fprintf(stderr, "FAIL: %s with allocation %ld failing: status %d without a message\n", what, n, (int)st);
        *bad = 1;
    }
    return 1;
}

static int launch_add(tile_Context *ctx, tile_Module *m, tile_DevPtr x, tile_DevPtr y, long n, int *bad)
{
    tile_Kernel *k;
    if (failed(ctx, tile_kernel_get(m, "add", &k), "tile_kernel_get", n, bad))
        return 1;
    tile_Arg args[] = {tile_ptr(x), tile_ptr(y), tile_int(N)};
    if (failed(ctx, tile_launch(k, args, 3, NULL, 0), "tile_launch", n, bad) ||
        failed(ctx, tile_synchronize(ctx), "tile_synchronize", n, bad))
        return 1;
    float out[N];
    if (failed(ctx, tile_copy_to_host(ctx, out, y, sizeof out), "tile_copy_to_host", n, bad))
        return 1;
    for (int i = 0; i < N; i++)
        if (out[i] != (float)i + 1) {
            fprintf(stderr, "FAIL: allocation %ld failing: add gave y[%d] = %g, want %d\n", n, i, out[i], i + 1);
            *bad = 1;
            return 1;
        }
    return 0;
}

static int tune_scale(tile_Context *ctx, tile_Module *m, tile_DevPtr x, long n, int *bad)
{
    tile_Kernel *k;
    if (failed(ctx, tile_kernel_get(m, "scale", &k), "tile_kernel_get", n, bad))
        return 1;
    tile_Arg args[] = {tile_ptr(x), tile_int(N)};
    tile_TuneOptions opts = {.force = 1, .reps = 1};
    const tile_TuneReport *rep = NULL;
    if (failed(ctx, tile_tune(k, args, 2, NULL, 0, &opts, &rep), "tile_tune", n, bad))
        return 1;
    if (rep && rep->best >= 0 && rep->results[rep->best].config)
        return failed(ctx, tile_launch(k, args, 2, NULL, 0), "tile_launch (tuned)", n, bad);
    return 1; /* nothing timed: a configuration failed for want of memory */
}

/* The whole program with allocation n failing; 1 when every step succeeded. */
static int attempt(long n, int *bad)
{
    tile_Context *ctx;
    arena_fail_after(n);
    int ok = 0;
    if (tile_context_open(TILE_BACKEND_CPU, &ctx) != TILE_OK) {
        arena_fail_after(-1);
        return 0;
    }
    tile_Module *m = NULL;
    tile_DevPtr x = 0, y = 0;
    float in[N];
    for (int i = 0; i < N; i++)
        in[i] = (float)i;
    if (!failed(ctx, tile_module_load_string(ctx, "oom.tile", SOURCE, &m), "tile_module_load_string", n, bad) &&
        !failed(ctx, tile_malloc(ctx, sizeof in, &x), "tile_malloc", n, bad) &&
        !failed(ctx, tile_malloc(ctx, sizeof in, &y), "tile_malloc", n, bad) &&
        !failed(ctx, tile_copy_to_device(ctx, x, in, sizeof in), "tile_copy_to_device", n, bad) &&
        !launch_add(ctx, m, x, y, n, bad) && !tune_scale(ctx, m, x, n, bad))
        ok = 1;
    arena_fail_after(-1);
    tile_context_close(ctx);
    return ok;
}

int main(int argc, char **argv)
{
    int every = argc > 1 && strcmp(argv[1], "--every") == 0;
    char dir[] = "/tmp/tile_oom_XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    setenv("TILE_CACHE_DIR", dir, 1); /* tuning results go there, not to the user's cache */
    setenv("TILE_NO_DISK_CACHE", "1", 1);
    setenv("TILE_TUNE_ISOLATE", "0", 1);
    int bad = 0;
    long n = 0, tries = 0;
    while (!attempt(n, &bad) && !bad && tries < 5000) {
        n += n < 128 || every ? 1 : 6; /* then a stride, to stay within seconds (--every: all) */
        tries++;
    }
    printf("runtime and tuner: %ld allocation failures handled (the run takes %ld allocations)\n", tries, n);
    char cmd[64];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "oom_runtime_check: could not remove %s\n", dir);
    return bad || tries >= 5000;
}
