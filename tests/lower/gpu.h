/* gpu.h: a minimal CUDA driver-API runner for test_lower (dlopen'ed libcuda, no toolkit
 * headers): load PTX, copy buffers in, launch, copy them back. Skips where no GPU exists. */
#ifndef TILE_TEST_LOWER_GPU_H
#define TILE_TEST_LOWER_GPU_H
#include <stddef.h>
#include <stdint.h>

typedef struct GpuArg {
    void *host;      /* buffer (copied in and out), or NULL for a scalar */
    size_t bytes;
    int64_t scalar;  /* scalar value (passed with `scalar_bytes` bytes) */
    int scalar_bytes;
} GpuArg;

/* 1 when a CUDA device is usable; fills the "sm_XX" name. */
int gpu_available(char *sm, size_t n);
/* Runs `symbol` from ptx on a gx x gy grid of `threads` threads with `smem` dynamic shared
 * bytes. Returns 0, or -1 with a message printed. */
int gpu_run(const char *ptx, const char *symbol, int threads, int smem, int gx, int gy,
            GpuArg *args, int nargs);

#endif
