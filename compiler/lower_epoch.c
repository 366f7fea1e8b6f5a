/* lower_epoch.c: the epilogue's per-thread index values computed afresh (NVIDIA).
 *
 * The lowering computes a layout's per-thread index parts once, in the kernel's first block
 * (lower.c's thread parts), and LLVM and ptxas share every such value between the code
 * before a loop and the code after it. Across the last loop with dots, whose accumulators
 * keep most registers busy, the epilogue's values (the output rows' addresses and masks)
 * are dead weight: at sm_80 with head_dim 128 ptxas kept them from the kernel's start and
 * spilled them to local memory. After that loop the thread index is read again plus a zero
 * that neither LLVM nor ptxas can see through (a volatile load of a shared word every thread
 * set to 0 at the start), and the thread parts start over: the epilogue's values are
 * computed there, from nothing live across the loop. The word sits after the kernel's shared
 * buffers, in the dynamic shared memory the launch asks for (16 bytes more); a static
 * shared variable would move the dynamic buffer off its 1024-byte-aligned start. */
#include "lower_int.h"

static int op_has_dot(const TirOp *op)
{
    if (op->code == TIR_DOT)
        return 1;
    for (int r = 0; r < op->nregions; r++)
        for (const TirOp *in = op->regions[r] ? op->regions[r]->first : NULL; in; in = in->next)
            if (op_has_dot(in))
                return 1;
    return 0;
}

int lw_epoch_wanted(const Lower *L, const TirOp *loop)
{
    const Target *t = L->t;
    if (t->kind != TARGET_NVPTX || L->loop || L->region || !op_has_dot(loop))
        return 0;
    if (t->smem_limit && L->smem_bytes + 16 > t->smem_limit) /* the shared word must fit */
        return 0;
    for (const TirOp *op = loop->next; op; op = op->next) /* the last loop with dots */
        if (op_has_dot(op))
            return 0;
    return 1;
}

/* The shared word after the kernel's buffers, set to 0 by every thread in the first block. */
static LLVMValueRef zero_word(Lower *L)
{
    int at = (L->smem_bytes + 15) / 16 * 16;
    L->smem_bytes = at + 16;
    LLVMValueRef off = lw_i32c(L, at);
    LLVMValueRef w = LLVMBuildGEP2(L->prologue, LLVMInt8TypeInContext(L->ctx),
                                   L->t->smem_base(&L->tc), &off, 1, "epoch.word");
    LLVMBuildStore(L->prologue, lw_i32c(L, 0), w); /* still the kernel's first block */
    return w;
}

void lw_new_epoch(Lower *L)
{
    LLVMValueRef z = LLVMBuildLoad2(L->b, lw_i32(L), zero_word(L), "epoch.zero");
    LLVMSetVolatile(z, 1);
    L->tid = LLVMBuildAdd(L->b, L->t->thread_id(&L->tc), z, "tid");
    LLVMBasicBlockRef next = lw_block(L, "epoch");
    LLVMValueRef br = LLVMBuildBr(L->b, next);
    LLVMPositionBuilderBefore(L->prologue, br);
    L->thread_parts = NULL;
    LLVMPositionBuilderAtEnd(L->b, next);
}
