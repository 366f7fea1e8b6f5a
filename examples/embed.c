/* embed.c: a C program that embeds the tile runtime through tile.h alone. It loads
 * examples/softmax.tile, runs the softmax kernel on the best device (CUDA when a GPU is found,
 * else the CPU), checks the result against a C reference and prints the time per launch.
 *   usage: embed [--backend=auto|cpu|cuda] [PATH/TO/softmax.tile] */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tile.h"

#ifndef EXAMPLES_DIR
#define EXAMPLES_DIR "examples"
#endif

enum { ROWS = 1000, COLS = 781, REPS = 20 };

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

/* out[r, :] = softmax(x[r, :]), in double */
static void softmax_ref(const float *x, double *out, int rows, int cols)
{
    for (int r = 0; r < rows; r++) {
        const float *row = x + (size_t)r * cols;
        double m = -INFINITY, s = 0;
        for (int c = 0; c < cols; c++)
            m = row[c] > m ? row[c] : m;
        for (int c = 0; c < cols; c++)
            s += exp(row[c] - m);
        for (int c = 0; c < cols; c++)
            out[(size_t)r * cols + c] = exp(row[c] - m) / s;
    }
}

static int failed(tile_Context *ctx, tile_Status s, const char *what)
{
    fprintf(stderr, "embed: %s failed (status %d): %s\n", what, (int)s, ctx ? tile_error(ctx) : "");
    return 1;
}

static int run(tile_Context *ctx, const char *path)
{
    size_t n = (size_t)ROWS * COLS, bytes = n * sizeof(float);
    float *x = malloc(bytes), *y = malloc(bytes);
    double *ref = malloc(n * sizeof(double));
    if (!x || !y || !ref)
        return fprintf(stderr, "embed: out of memory\n"), 1;
    srand(42);
    for (size_t i = 0; i < n; i++)
        x[i] = 8.0f * ((float)rand() / (float)RAND_MAX) - 4.0f;

    tile_Module *mod;
    tile_Kernel *k;
    tile_DevPtr dx, dy;
    tile_Status s;
    if ((s = tile_module_load_file(ctx, path, &mod)) != TILE_OK)
        return failed(ctx, s, "loading the module");
    if ((s = tile_kernel_get(mod, "softmax", &k)) != TILE_OK)
        return failed(ctx, s, "finding the kernel");
    if ((s = tile_malloc(ctx, bytes, &dx)) != TILE_OK || (s = tile_malloc(ctx, bytes, &dy)) != TILE_OK)
        return failed(ctx, s, "allocating");
    if ((s = tile_copy_to_device(ctx, dx, x, bytes)) != TILE_OK)
        return failed(ctx, s, "copying to the device");

    tile_Arg args[] = {tile_ptr(dx), tile_ptr(dy), tile_i32(ROWS), tile_i32(COLS)};
    tile_Const consts[] = {{"BLOCK_N", 1024}};
    double t0 = now_ms();
    if ((s = tile_launch(k, args, 4, consts, 1)) != TILE_OK || (s = tile_synchronize(ctx)) != TILE_OK)
        return failed(ctx, s, "the first launch");
    double t_first = now_ms() - t0;
    t0 = now_ms();
    for (int i = 0; i < REPS; i++)
        if ((s = tile_launch(k, args, 4, consts, 1)) != TILE_OK)
            return failed(ctx, s, "launching");
    if ((s = tile_synchronize(ctx)) != TILE_OK)
        return failed(ctx, s, "synchronizing");
    double t_launch = (now_ms() - t0) / REPS;
    if ((s = tile_copy_to_host(ctx, y, dy, bytes)) != TILE_OK)
        return failed(ctx, s, "copying back");

    softmax_ref(x, ref, ROWS, COLS);
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        double d = y[i] - ref[i];
        num += d * d, den += ref[i] * ref[i];
    }
    double rel = sqrt(num / den);
    printf("device: %s (%s backend, %s)\n", tile_device_name(ctx),
           tile_backend_name(tile_backend(ctx)), tile_device_arch(ctx));
    printf("softmax of %d x %d: first launch (with compile) %.1f ms, then %.3f ms per launch\n",
           ROWS, COLS, t_first, t_launch);
    printf("relative error against the C reference: %.2e: %s\n", rel, rel < 1e-5 ? "ok" : "WRONG");
    free(x), free(y), free(ref);
    return rel < 1e-5 ? 0 : 1;
}

int main(int argc, char **argv)
{
    const char *path = EXAMPLES_DIR "/softmax.tile";
    tile_Backend backend = TILE_BACKEND_AUTO;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--backend=cpu") == 0)
            backend = TILE_BACKEND_CPU;
        else if (strcmp(argv[i], "--backend=cuda") == 0)
            backend = TILE_BACKEND_CUDA;
        else if (strcmp(argv[i], "--backend=auto") == 0)
            backend = TILE_BACKEND_AUTO;
        else if (argv[i][0] == '-') {
            fprintf(stderr, "usage: embed [--backend=auto|cpu|cuda] [softmax.tile]\n");
            return 2;
        } else
            path = argv[i];
    }
    tile_Context *ctx;
    tile_Status s = tile_context_open(backend, &ctx);
    if (s != TILE_OK)
        return failed(NULL, s, "opening a context");
    int rc = run(ctx, path);
    tile_context_close(ctx);
    return rc;
}
