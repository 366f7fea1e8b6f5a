/* codegen.c: LLVM target machines, verification, the O3 pipeline and emission (codegen.h).
 * LLVM's targets are initialized once (pthread_once); everything else is per call, so
 * compiles in different threads with different LLVMContexts do not share state. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <llvm-c/Analysis.h>
#include <llvm-c/Support.h>
#include <llvm-c/Target.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include "codegen.h"
#include "target.h"

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void init_targets(void)
{
    LLVMInitializeNativeTarget();
    LLVMInitializeNativeAsmPrinter();
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTarget();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUAsmPrinter();
    LLVMInitializeAMDGPUAsmParser(); /* inline assembly in code objects (inline_asm_elementwise) */
    /* 32-bit shared-memory addresses: half the registers and the arithmetic of 64-bit ones
     * for every ldmatrix, cp.async destination and shared load or store */
    const char *const argv[] = {"tile", "-nvptx-short-ptr"};
    LLVMParseCommandLineOptions(2, argv, NULL);
}

static LLVMTargetMachineRef machine_at(const Target *t, LLVMCodeGenOptLevel level, Diags *d);

/* The host CPU's features as host code is compiled for them. On x86 the bf16 conversion
 * instructions (AVX512-BF16's and AVX-NE-CONVERT's vcvtneps2bf16) are left out: they flush
 * subnormal inputs and results to zero whatever MXCSR says, where LLVM's rounding to bf16
 * (and every other backend) keeps them. */
char *codegen_host_features(void)
{
    char *host = LLVMGetHostCPUFeatures(), *triple = LLVMGetDefaultTargetTriple();
    int x86 = !strncmp(triple, "x86_64", 6) || (triple[0] == 'i' && !strncmp(triple + 2, "86", 2));
    const char *off = x86 ? ",-avx512bf16,-avxneconvert" : "";
    size_t n = strlen(host) + strlen(off) + 1;
    char *buf = malloc(n), *out;
    if (buf) {
        snprintf(buf, n, "%s%s", host, off);
        out = LLVMCreateMessage(buf);
        free(buf);
    } else {
        out = LLVMCreateMessage(host);
    }
    LLVMDisposeMessage(host);
    LLVMDisposeMessage(triple);
    return out;
}

LLVMTargetMachineRef codegen_machine(const Target *t, Diags *d)
{
    return machine_at(t, LLVMCodeGenLevelAggressive, d);
}

static LLVMTargetMachineRef machine_at(const Target *t, LLVMCodeGenOptLevel level, Diags *d)
{
    pthread_once(&init_once, init_targets);
    char *triple = t->triple ? LLVMCreateMessage(t->triple) : LLVMGetDefaultTargetTriple();
    char *cpu = t->cpu ? LLVMCreateMessage(t->cpu) : LLVMGetHostCPUName();
    char *feat = t->features ? LLVMCreateMessage(t->features) : codegen_host_features();
    LLVMTargetRef target;
    char *err = NULL;
    LLVMTargetMachineRef tm = NULL;
    if (LLVMGetTargetFromTriple(triple, &target, &err))
        diag_error(d, (SrcLoc){0}, "no LLVM target for %s: %s", triple, err ? err : "?");
    else
        tm = LLVMCreateTargetMachine(target, triple, cpu, feat, level,
                                     LLVMRelocPIC, LLVMCodeModelDefault);
    if (!tm && !err)
        diag_error(d, (SrcLoc){0}, "cannot create an LLVM target machine for %s", t->name);
    LLVMDisposeMessage(err);
    LLVMDisposeMessage(triple);
    LLVMDisposeMessage(cpu);
    LLVMDisposeMessage(feat);
    return tm;
}

int codegen_prepare(LLVMModuleRef m, const Target *t, Diags *d)
{
    LLVMTargetMachineRef tm = codegen_machine(t, d);
    if (!tm)
        return -1;
    char *triple = LLVMGetTargetMachineTriple(tm);
    LLVMSetTarget(m, triple);
    LLVMDisposeMessage(triple);
    LLVMTargetDataRef td = LLVMCreateTargetDataLayout(tm);
    char *dl = LLVMCopyStringRepOfTargetData(td);
    LLVMSetDataLayout(m, dl);
    LLVMDisposeMessage(dl);
    LLVMDisposeTargetData(td);
    LLVMDisposeTargetMachine(tm);
    return 0;
}

int codegen_verify(LLVMModuleRef m, Diags *d)
{
    char *msg = NULL;
    int bad = LLVMVerifyModule(m, LLVMReturnStatusAction, &msg);
    if (bad)
        diag_error(d, (SrcLoc){0}, "internal compiler error: invalid LLVM IR: %s",
                   msg ? msg : "?");
    LLVMDisposeMessage(msg);
    return bad ? -1 : 0;
}

/* Instructions in m, counted up to `limit`. */
static long module_instructions(LLVMModuleRef m, long limit)
{
    long n = 0;
    for (LLVMValueRef f = LLVMGetFirstFunction(m); f && n <= limit; f = LLVMGetNextFunction(f))
        for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(f); b && n <= limit; b = LLVMGetNextBasicBlock(b))
            for (LLVMValueRef i = LLVMGetFirstInstruction(b); i; i = LLVMGetNextInstruction(i))
                n++;
    return n;
}

/* O3's loop and vectorizer passes grow faster than linearly with the size of a function (a
 * host kernel of 2,000 tile statements took 87 s): past CG_LARGE_MODULE instructions, host and
 * sim code get O1 and the quick code generator, whose cost stays near-linear. GPU code gets O1
 * always: the lowering already emits straight-line, vectorized code per thread, and O3's extra
 * passes (unrolling, the vectorizers, GVN) left every hot loop of the examples' matmul and
 * attention kernels the same (same PTX loop bodies, registers and spills) while taking a
 * quarter of the compile time (docs/performance.md). */
enum { CG_LARGE_MODULE = 50000 };

static int is_large(LLVMModuleRef m, const Target *t)
{
    return t->kind != TARGET_NVPTX && module_instructions(m, CG_LARGE_MODULE) > CG_LARGE_MODULE;
}

static const char *pipeline_for(LLVMModuleRef m, const Target *t)
{
    return t->kind == TARGET_NVPTX || is_large(m, t) ? "default<O1>" : "default<O3>";
}

int codegen_optimize(LLVMModuleRef m, const Target *t, Diags *d)
{
    LLVMTargetMachineRef tm = codegen_machine(t, d);
    if (!tm)
        return -1;
    LLVMPassBuilderOptionsRef opts = LLVMCreatePassBuilderOptions();
    LLVMErrorRef err = LLVMRunPasses(m, pipeline_for(m, t), tm, opts);
    LLVMDisposePassBuilderOptions(opts);
    LLVMDisposeTargetMachine(tm);
    if (err) {
        char *msg = LLVMGetErrorMessage(err);
        diag_error(d, (SrcLoc){0}, "internal compiler error: LLVM passes: %s", msg);
        LLVMDisposeErrorMessage(msg);
        return -1;
    }
    return 0;
}

static int copy_out(const char *p, size_t n, Arena *a, char **out, size_t *size, Diags *d)
{
    char *buf = arena_alloc(a, n + 1);
    if (!buf) {
        diag_error(d, (SrcLoc){0}, "out of memory emitting code");
        return -1;
    }
    memcpy(buf, p, n);
    buf[n] = 0;
    *out = buf;
    *size = n;
    return 0;
}

/* The code generator's level: the quick one for large host and sim modules (LLVM's instruction
 * scheduler is superlinear in a block's length: 40,000 scalar statements took 4.7 s, 0.8 s
 * with it); the default one for NVPTX, whose Aggressive level only adds GVN after straight-line
 * strength reduction, which changed no loop of the examples and cost 7 ms a compile (ptxas
 * optimizes the PTX again); the aggressive one for the rest of the host code. */
static LLVMCodeGenOptLevel codegen_level(LLVMModuleRef m, const Target *t)
{
    if (is_large(m, t))
        return LLVMCodeGenLevelNone;
    return t->kind == TARGET_NVPTX ? LLVMCodeGenLevelDefault : LLVMCodeGenLevelAggressive;
}

int codegen_emit(LLVMModuleRef m, const Target *t, CgOutput what, Arena *a, char **out,
                 size_t *size, Diags *d)
{
    if (what == CG_LLVM_IR) {
        char *s = LLVMPrintModuleToString(m);
        int rc = copy_out(s, strlen(s), a, out, size, d);
        LLVMDisposeMessage(s);
        return rc;
    }
    LLVMTargetMachineRef tm = machine_at(t, codegen_level(m, t), d);
    if (!tm)
        return -1;
    LLVMMemoryBufferRef buf = NULL;
    char *err = NULL;
    int rc = -1;
    if (LLVMTargetMachineEmitToMemoryBuffer(tm, m, what == CG_ASM ? LLVMAssemblyFile
                                                                 : LLVMObjectFile,
                                            &err, &buf))
        diag_error(d, (SrcLoc){0}, "internal compiler error: LLVM code generation: %s",
                   err ? err : "?");
    else
        rc = copy_out(LLVMGetBufferStart(buf), LLVMGetBufferSize(buf), a, out, size, d);
    if (buf)
        LLVMDisposeMemoryBuffer(buf);
    LLVMDisposeMessage(err);
    LLVMDisposeTargetMachine(tm);
    return rc;
}
