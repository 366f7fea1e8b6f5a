/* check_frame.c: the stack check of the host and sim targets, after LLVM's optimizations. Their
 * code keeps tiles in stack slots (allocas), and runs on stacks of a fixed size (the CPU
 * backend's worker threads, the emulator's per-thread stacks): a frame past that size would
 * overflow it and kill the host process. So the static allocas left in the optimized module
 * are summed, as a bound on the frame, and a kernel past the target's max_frame_bytes is
 * refused with a diagnostic naming its largest tile, as the register check does on GPUs. */
#include <llvm-c/Target.h>
#include "check_frame.h"
#include "target.h"

/* Bytes of the static allocas of f (those in its entry block with a constant count). */
static unsigned long long frame_bytes(LLVMTargetDataRef td, LLVMValueRef f)
{
    unsigned long long total = 0;
    LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(f);
    for (LLVMValueRef i = LLVMGetFirstInstruction(entry); i; i = LLVMGetNextInstruction(i)) {
        if (LLVMGetInstructionOpcode(i) != LLVMAlloca)
            continue;
        LLVMValueRef count = LLVMGetOperand(i, 0);
        unsigned long long n = LLVMIsAConstantInt(count) ? LLVMConstIntGetZExtValue(count) : 1;
        total += n * LLVMABISizeOfType(td, LLVMGetAllocatedType(i));
    }
    return total;
}

static unsigned long long tile_bytes(const TirValue *v)
{
    unsigned long long n = 1;
    for (int d = 0; d < v->type.rank; d++)
        n *= (unsigned long long)v->type.shape[d];
    return n * (unsigned long long)(v->type.elem == ET_PTR ? 8 : et_bytes(v->type.elem));
}

static const TirValue *largest_tile(const TirBlock *b, const TirValue *best)
{
    for (const TirOp *op = b->first; op; op = op->next) {
        for (int i = 0; i < op->nres; i++)
            if (!best || tile_bytes(op->results[i]) > tile_bytes(best))
                best = op->results[i];
        for (int r = 0; r < op->nregions; r++)
            best = largest_tile(op->regions[r], best);
    }
    return best;
}

int check_frame(LLVMModuleRef m, const TirKernel *k, const Target *t, Diags *d)
{
    if (!t->max_frame_bytes)
        return 0;
    LLVMTargetDataRef td = LLVMCreateTargetData(LLVMGetDataLayoutStr(m));
    unsigned long long total = 0;
    for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f))
        if (LLVMCountBasicBlocks(f))
            total += frame_bytes(td, f);
    LLVMDisposeTargetData(td);
    if (total <= (unsigned long long)t->max_frame_bytes)
        return 0;
    const TirValue *v = largest_tile(k->body, NULL);
    SrcLoc loc = v && v->def ? v->def->loc : (SrcLoc){0};
    diag_error(d, loc, "kernel '%s' needs %llu bytes of stack for its tiles on the %s target, "
               "more than its limit of %lld (the largest tile is %s): use smaller blocks",
               k->name, total, t->name, t->max_frame_bytes,
               v ? tir_type_str(k->arena, &v->type) : "?");
    return -1;
}
