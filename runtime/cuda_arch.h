/* cuda_arch.h: the architecture the CUDA backend compiles for. */
#ifndef TILE_CUDA_ARCH_H
#define TILE_CUDA_ARCH_H

#include <stddef.h>

enum { CUDA_ARCH_MAX = 16 };

/* For a device of compute capability major.minor: its own architecture (sm_90a on 9.0, whose
 * wgmma needs the "a" target; sm_MN elsewhere) and the one its code falls back to (sm_90 on
 * 9.0, else the same), or, when `want` (TILE_CUDA_ARCH) is set and not empty, that older one
 * the device also runs: "sm_NN" with NN at most the device's, or "sm_NNa" for the device's own
 * NN only (sm_90a code runs on 9.0 alone); the sm_80 code path can so be run and timed on an
 * H100. 0, or -1 with a message in err (errlen bytes) for any other `want`. */
int cuda_arch_choose(const char *want, int major, int minor, char arch[CUDA_ARCH_MAX],
                     char fallback[CUDA_ARCH_MAX], char *err, size_t errlen);

#endif
