/* codegen.h: from an LLVM module to target code: the target machine for a Target, the
 * verifier (failures become internal-error diagnostics), the new-PM O3 pipeline, and
 * emission of textual IR, assembly (PTX) or a relocatable object. Safe to use from several
 * threads at once as long as each works in its own LLVMContext. */
#ifndef TILE_CODEGEN_H
#define TILE_CODEGEN_H
#include <stddef.h>
#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>
#include "arena.h"
#include "diag.h"

struct Target;

typedef enum { CG_LLVM_IR, CG_ASM, CG_OBJECT } CgOutput;

/* The features host code is compiled for (LLVM's host features, x86's flushing bf16
 * conversions left out); the caller frees it with LLVMDisposeMessage. */
char *codegen_host_features(void);
/* A target machine for t (the caller disposes it); NULL with a diagnostic. */
LLVMTargetMachineRef codegen_machine(const struct Target *t, Diags *d);
/* Sets the module's triple and data layout for t. 0 ok, -1 with a diagnostic. */
int codegen_prepare(LLVMModuleRef m, const struct Target *t, Diags *d);
/* Runs the LLVM verifier; failures are reported as internal errors. 0 ok, -1 broken. */
int codegen_verify(LLVMModuleRef m, Diags *d);
/* Runs "default<O3>" (with the target's own passes, e.g. NVVMReflect); "default<O1>" for very
 * large host and sim modules (codegen.c). 0 ok, -1 error. */
int codegen_optimize(LLVMModuleRef m, const struct Target *t, Diags *d);
/* Emits the module as text IR, assembly or an object into arena memory (NUL-terminated;
 * *size excludes the NUL). 0 ok, -1 with a diagnostic. */
int codegen_emit(LLVMModuleRef m, const struct Target *t, CgOutput what, Arena *a,
                 char **out, size_t *size, Diags *d);

#endif
