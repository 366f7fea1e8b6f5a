/* compile_time.c: how long a kernel takes from source to target code inside one process (what
 * the runtime and the tuner pay; a tilec process adds the loading of LLVM): parse, sema,
 * specialize, passes, lowering, LLVM optimization and code generation, repeated, median.
 *   usage: compile_time FILE KERNEL [TARGET=sm_90] [REPS=21] [aligned]
 * `aligned` specializes as a launch with 16-byte aligned pointers and integers that are
 * multiples of 16 does (the usual case: vector loads, asynchronous copies).
 * Prints "KERNEL TARGET: median M ms, min m ms over REPS compiles (CPU: median C ms, min c ms)":
 * wall-clock time, then the process's CPU time, which a busy machine (another process or, on
 * a shared virtual machine, a neighbour) inflates less. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "driver.h"

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t cap = 0, n = 0, got;
    do {
        if (n + 4096 > cap && !(buf = realloc(buf, cap = cap * 2 + 4096)))
            break;
        got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
    } while (got > 0);
    fclose(f);
    if (buf)
        buf[n] = 0, *len = n;
    return buf;
}

static double clock_ms(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static int aligned; /* every runtime param 16-byte aligned / a multiple of 16 */

/* One compile from the source text: its wall-clock and CPU milliseconds in wall and cpu;
 * 0, or -1 on an error. */
static int compile_once(const char *path, const char *text, size_t len, const char *kernel,
                        const char *target, double *wall, double *cpu)
{
    double t0 = clock_ms(CLOCK_MONOTONIC), c0 = clock_ms(CLOCK_PROCESS_CPUTIME_ID);
    Arena *a = arena_new();
    Diags d;
    diags_init(&d, a);
    SrcFile file = {path, text, len};
    Module *m = a ? tc_parse(a, &file, &d) : NULL;
    const Func *f = m ? module_find_func(m, kernel) : NULL;
    unsigned char *all_div = aligned && f ? arena_alloc(a, (size_t)f->nparams + 1) : NULL;
    if (all_div)
        memset(all_div, 16, (size_t)f->nparams + 1);
    CompileRequest req = {.module = m, .kernel = kernel, .target = target, .stop_after = STAGE_OBJECT,
                          .param_div = all_div};
    CompiledKernel out;
    int rc = m ? tc_compile(&req, a, &d, &out) : -1;
    if (rc != 0)
        diags_print(&d, stderr);
    arena_free(a);
    *wall = clock_ms(CLOCK_MONOTONIC) - t0;
    *cpu = clock_ms(CLOCK_PROCESS_CPUTIME_ID) - c0;
    return rc == 0 ? 0 : -1;
}

static int by_value(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: compile_time FILE KERNEL [TARGET=sm_90] [REPS=21] [aligned]\n");
        return 2;
    }
    const char *target = argc > 3 ? argv[3] : "sm_90";
    int reps = argc > 4 ? atoi(argv[4]) : 21;
    aligned = argc > 5 && strcmp(argv[5], "aligned") == 0;
    size_t len = 0;
    char *text = read_all(argv[1], &len);
    if (!text || reps < 1 || reps > 10000) {
        fprintf(stderr, "compile_time: cannot read %s (or bad REPS)\n", argv[1]);
        return 2;
    }
    double *t = calloc(2 * (size_t)reps + 2, sizeof *t), *c = t + reps + 1;
    if (!t || compile_once(argv[1], text, len, argv[2], target, t, c)) /* warm-up: LLVM's setup */
        return 1;
    for (int i = 0; i < reps; i++)
        if (compile_once(argv[1], text, len, argv[2], target, &t[i], &c[i]))
            return 1;
    qsort(t, (size_t)reps, sizeof *t, by_value);
    qsort(c, (size_t)reps, sizeof *c, by_value);
    printf("%s %s%s: median %.1f ms, min %.1f ms over %d compiles (CPU: median %.1f ms, min %.1f ms)\n",
           argv[2], target, aligned ? " aligned" : "", t[reps / 2], t[0], reps, c[reps / 2], c[0]);
    free(t);
    free(text);
    return 0;
}
