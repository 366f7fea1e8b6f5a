/* launch_overhead.c: host time of one tile_launch of a tiny, already compiled kernel: the
 * median over 10,000 launches (each timed alone with a monotonic clock), for a kernel
 * without @tune, one with @tune whose key is cached in memory (the tuned fast path), and
 * the same kernel pinned (every tuned const given). GPU launches are asynchronous, so this
 * is the runtime's own overhead plus cuLaunchKernel's; a synchronize every 1,000 launches
 * keeps the queue short. On the CPU backend the time includes running the kernel.
 *   launch_overhead [--backend=cpu|cuda] [--launches=N] [--elems=N]  (N <= 4096, default 4096)
 * One line per case: "<case>: median X us, p10 Y us, p90 Z us (N launches)". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tile.h"

static const char *SRC =
    "@grid(cdiv(n, BLOCK))\n"
    "kernel plain(x: *f32, n: i32, const BLOCK: i32 = 128) {\n"
    "    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
    "    store(x + offs, load(x + offs, mask=offs < n) + 1.0, mask=offs < n);\n"
    "}\n"
    "@grid(cdiv(n, BLOCK))\n"
    "@tune(BLOCK = [128, 256], num_warps = [4, 2])\n"
    "@key(n: pow2)\n"
    "kernel tuned(x: *f32, n: i32, const BLOCK: i32 = 128) {\n"
    "    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
    "    store(x + offs, load(x + offs, mask=offs < n) + 1.0, mask=offs < n);\n"
    "}\n";

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int measure(tile_Context *ctx, const char *name, tile_Kernel *k, tile_Arg *args,
                   const tile_Const *consts, int nconsts, int n)
{
    double *t = malloc(sizeof *t * (size_t)n);
    if (!t)
        return 1;
    for (int i = 0; i < 100; i++) /* warm-up: compile, tune, fill the caches */
        if (tile_launch(k, args, 2, consts, nconsts) != TILE_OK) {
            fprintf(stderr, "%s: %s\n", name, tile_error(ctx));
            free(t);
            return 1;
        }
    tile_synchronize(ctx);
    for (int i = 0; i < n; i++) {
        double t0 = now_us();
        tile_Status st = tile_launch(k, args, 2, consts, nconsts);
        t[i] = now_us() - t0;
        if (st != TILE_OK) {
            fprintf(stderr, "%s: %s\n", name, tile_error(ctx));
            free(t);
            return 1;
        }
        if (i % 1000 == 999)
            tile_synchronize(ctx);
    }
    tile_synchronize(ctx);
    qsort(t, (size_t)n, sizeof *t, cmp);
    printf("%s: median %.2f us, p10 %.2f us, p90 %.2f us (%d launches)\n", name, t[n / 2],
           t[n / 10], t[n * 9 / 10], n);
    free(t);
    return 0;
}

int main(int argc, char **argv)
{
    tile_Backend b = TILE_BACKEND_AUTO;
    int n = 10000, n_elems = 4096;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--backend=cpu"))
            b = TILE_BACKEND_CPU;
        else if (!strcmp(argv[i], "--backend=cuda"))
            b = TILE_BACKEND_CUDA;
        else if (!strncmp(argv[i], "--elems=", 8))
            n_elems = atoi(argv[i] + 8) > 0 && atoi(argv[i] + 8) <= 4096 ? atoi(argv[i] + 8) : n_elems;
        else if (!strncmp(argv[i], "--launches=", 11))
            n = atoi(argv[i] + 11) > 0 ? atoi(argv[i] + 11) : n;
        else {
            fprintf(stderr, "usage: launch_overhead [--backend=cpu|cuda] [--launches=N] [--elems=N<=4096]\n");
            return 2;
        }
    }
    tile_Context *ctx;
    tile_Module *mod;
    tile_Kernel *plain, *tuned;
    tile_DevPtr x;
    if (tile_context_open(b, &ctx) != TILE_OK) {
        fprintf(stderr, "launch_overhead: %s\n", tile_error(NULL));
        return 1;
    }
    tile_set_tuning(ctx, TILE_TUNING_AUTO); /* also on the CPU backend */
    if (tile_module_load_string(ctx, "overhead.tile", SRC, &mod) != TILE_OK ||
        tile_kernel_get(mod, "plain", &plain) != TILE_OK ||
        tile_kernel_get(mod, "tuned", &tuned) != TILE_OK ||
        tile_malloc(ctx, 4096 * sizeof(float), &x) != TILE_OK ||
        tile_memset(ctx, x, 0, 4096 * sizeof(float)) != TILE_OK) {
        fprintf(stderr, "launch_overhead: %s\n", tile_error(ctx));
        return 1;
    }
    printf("launch overhead on %s (%s)\n", tile_backend_name(tile_backend(ctx)),
           tile_device_name(ctx));
    tile_Arg args[] = { tile_ptr(x), tile_i32(n_elems) };
    tile_Const pin[] = { { "BLOCK", 128 }, { "num_warps", 4 } };
    int rc = measure(ctx, "no @tune", plain, args, NULL, 0, n);
    rc |= measure(ctx, "@tune, key cached", tuned, args, NULL, 0, n);
    rc |= measure(ctx, "@tune, pinned", tuned, args, pin, 2, n);
    tile_context_close(ctx);
    return rc;
}
