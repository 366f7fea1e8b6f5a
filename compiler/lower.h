/* lower.h: tile IR (with layouts assigned) -> LLVM IR for one target. One lowering path
 * serves every target: each thread computes the elements its layouts give it, and the
 * target record supplies ids, barriers, shuffles, shared memory and math. */
#ifndef TILE_LOWER_H
#define TILE_LOWER_H
#include <llvm-c/Core.h>
#include "diag.h"
#include "tir.h"

struct Target;

/* Builds a module holding the kernel function k->symbol (or k->name) in `ctx`, with the
 * target's triple and data layout. Sets k->smem_bytes. Returns NULL with diagnostics on
 * failure. The module is not optimized (see codegen.h). */
LLVMModuleRef lower_kernel(TirKernel *k, const struct Target *t, LLVMContextRef ctx, Diags *d);

#endif
