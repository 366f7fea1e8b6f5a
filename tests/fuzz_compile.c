/* fuzz_compile.c: libFuzzer target for everything before LLVM: front end, const
 * resolution, specialization to tile IR, verification and every pass after it (for sm_90, sim,
 * the host, and AMD's gfx942 with waves of 64 lanes and MFMA layouts) on arbitrary source. Nothing may crash, hang or leak. Built by
 * scripts/fuzz.sh with clang -fsanitize=fuzzer,address,undefined; seeds in tests/fuzz_corpus. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "driver.h"
#include "layout.h"
#include "spec.h"
#include "target.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void specialize_all(Arena *a, const Module *m, Diags *d) {
    enum { NT = 4 };
    const Target *targets[NT] = {target_lookup("sm_90"), target_lookup("sim"), target_lookup("host"),
                                 target_lookup("gfx942")};
    for (int i = 0; i < m->nfuncs; i++) {
        if (!m->funcs[i]->is_kernel) continue;
        for (int t = 0; t < NT; t++) {
            ConstBinding c[96];
            int n = tc_resolve_consts(m->funcs[i], NULL, 0, c, 96, a, d);
            if (n < 0 || !targets[t]) continue;
            TirKernel *k = spec_kernel(a, m, m->funcs[i], c, n, targets[t]->threads_per_warp, d);
            if (!k || tir_verify(k, 0, d)) continue;
            tc_passes(k, targets[t], NULL, d);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size + 1);
    Arena *arena = arena_new();
    if (!text || !arena) {
        free(text);
        arena_free(arena);
        return 0;
    }
    memcpy(text, data, size);
    text[size] = 0;
    SrcFile file = {"fuzz.tile", text, size};
    Diags diags;
    diags_init(&diags, arena);
    diags.max_errors = 20;
    ImportOptions no_imports = {.disabled = 1}; /* a fuzzer must not read arbitrary files */
    Module *m = tc_parse_with(arena, &file, &no_imports, &diags);
    if (m) specialize_all(arena, m, &diags);
    diags_render_all(&diags, arena);
    arena_free(arena);
    free(text);
    return 0;
}
