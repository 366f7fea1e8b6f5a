/* check_frame.h: rejects kernels whose stack frame would not fit the stack their code runs on
 * (host and sim targets, which keep tiles on the stack; see check_frame.c). */
#ifndef TILE_CHECK_FRAME_H
#define TILE_CHECK_FRAME_H
#include <llvm-c/Core.h>
#include "diag.h"
#include "tir.h"

struct Target;
/* 0 when the optimized module's frames fit the target's max_frame_bytes (or it has no limit),
 * -1 with a diagnostic at the kernel's largest tile. */
int check_frame(LLVMModuleRef m, const TirKernel *k, const struct Target *t, Diags *d);

#endif
