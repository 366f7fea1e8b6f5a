/* oom_check.c: every arena allocation failure is handled. Compiles each given .tile file
 * (every kernel, host target, up to a host object) again and again, making the N-th arena
 * allocation and all after it fail (arena_fail_after), for N from 0 until a compile needs no
 * more than N: each attempt must fail with an "out of memory" diagnostic, never crash (run it
 * under ASan to catch a NULL or wild access that happens not to crash).
 *   oom_check FILE.tile ...      Exit: 0 ok, 1 a failure, 2 usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "driver.h"

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    long n = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1)) &&
        fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) buf[n] = 0, *len = (size_t)n;
    return buf;
}

static int mentions_oom(const Diags *d) {
    for (const Diag *g = d->first; g; g = g->next)
        if (g->msg && strstr(g->msg, "out of memory")) return 1;
    return 0;
}

/* Compiles every kernel of the file; 0 ok, 1 failed with errors. */
static int compile_file(Arena *a, const SrcFile *file, Diags *d) {
    Module *m = tc_parse(a, file, d);
    if (!m) return 1;
    for (int i = 0; i < m->nfuncs; i++) {
        if (!m->funcs[i]->is_kernel) continue;
        CompileRequest req = {.module = m, .kernel = m->funcs[i]->name, .target = "host",
                              .stop_after = STAGE_OBJECT};
        CompiledKernel out;
        if (tc_compile(&req, a, d, &out)) return 1;
    }
    return 0;
}

/* One attempt with allocation `n` failing; 1 when it completed without needing it. */
static int attempt(const SrcFile *file, long n, int *bad) {
    Arena *a = arena_new();
    if (!a) return 0;
    Diags d;
    diags_init(&d, a);
    arena_fail_after(n);
    int failed = compile_file(a, file, &d);
    arena_fail_after(-1);
    int hit = mentions_oom(&d);
    if (failed && !hit) {
        fprintf(stderr, "FAIL: %s with allocation %ld failing: errors but no 'out of memory' (first: %s)\n",
                file->name, n, d.first && d.first->msg ? d.first->msg : "none");
        *bad = 1;
    } else if (!failed && hit) {
        fprintf(stderr, "FAIL: %s with allocation %ld failing: 'out of memory' reported, yet it succeeded\n",
                file->name, n);
        *bad = 1;
    }
    arena_free(a);
    return !failed;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: oom_check FILE.tile ...\n");
        return 2;
    }
    int bad = 0;
    for (int i = 1; i < argc; i++) {
        size_t len = 0;
        char *text = read_file(argv[i], &len);
        if (!text) {
            fprintf(stderr, "oom_check: cannot read %s\n", argv[i]);
            return 2;
        }
        SrcFile file = {argv[i], text, len};
        long n = 0, tries = 0;
        /* every N at first, then steps growing by 1/16: a few hundred compiles per file */
        while (!attempt(&file, n, &bad) && !bad) {
            n += n < 256 ? 1 : n / 16;
            tries++;
        }
        printf("%s: %ld allocation failures handled (compiles with %ld allocations)\n", argv[i], tries, n);
        free(text);
    }
    return bad;
}
