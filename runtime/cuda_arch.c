/* cuda_arch.c: the architecture the CUDA backend compiles for (cuda_arch.h). */
#include <stdio.h>
#include <string.h>
#include "cuda_arch.h"

/* "sm_NN" or "sm_NNa": NN in *number and whether it ends in "a"; 0, or -1 if it is neither. */
static int parse_arch(const char *s, int *number, int *a_suffix)
{
    if (strncmp(s, "sm_", 3) != 0)
        return -1;
    int n = 0, digits = 0;
    for (s += 3; *s >= '0' && *s <= '9' && digits < 4; s++, digits++)
        n = n * 10 + (*s - '0');
    *a_suffix = *s == 'a';
    if (digits < 2 || s[*a_suffix] != 0)
        return -1;
    *number = n;
    return 0;
}

int cuda_arch_choose(const char *want, int major, int minor, char arch[CUDA_ARCH_MAX],
                     char fallback[CUDA_ARCH_MAX], char *err, size_t errlen)
{
    int own = major * 10 + minor, n, a;
    snprintf(fallback, CUDA_ARCH_MAX, "sm_%d", own);
    if (!want || !*want) {
        snprintf(arch, CUDA_ARCH_MAX, "sm_%d%s", own, major == 9 ? "a" : "");
        return 0;
    }
    if (parse_arch(want, &n, &a) != 0 || n > own || (a && n != own) || n < 50) {
        snprintf(err, errlen, "TILE_CUDA_ARCH=%.32s: not an architecture this device (sm_%d) "
                              "runs: give sm_NN with NN from 50 to %d, or sm_%da", want, own, own, own);
        return -1;
    }
    snprintf(arch, CUDA_ARCH_MAX, "sm_%d%s", n, a ? "a" : "");
    snprintf(fallback, CUDA_ARCH_MAX, "sm_%d", n);
    return 0;
}
