/* hook_kernel.h: a hand-built host kernel that stands in for tc_compile in runtime tests. */
#ifndef TILE_TEST_HOOK_KERNEL_H
#define TILE_TEST_HOOK_KERNEL_H
#include "driver.h"

/* The source the hook's code belongs to (tc_parse still checks it). */
#define HOOK_SOURCE \
    "@grid(cdiv(n, BLOCK))\n" \
    "kernel scale(out: *f32, n: i32, s: f32, const BLOCK: i32 = 4) {\n" \
    "    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n" \
    "    store(out + offs, s * (offs as f32) + 1.0, mask=offs < n);\n" \
    "}\n"

/* RtCompileFn: out[j] = s * j + 1 for j < n; BLOCK = 13 fails with a diagnostic. */
int hook_compile(const CompileRequest *req, Arena *arena, Diags *diags, CompiledKernel *out);

#endif
