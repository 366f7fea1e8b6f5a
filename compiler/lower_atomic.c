/* lower_atomic.c: atomics on global memory (TIR_ATOMIC). Each element of the pointer tile is
 * updated once, by the thread that owns it (replicas in other lanes or warps skip it; their
 * copies of the old value come through shared memory, pass_smem.c), as one LLVM atomicrmw or
 * cmpxchg with the op's memory order and the target's name for its scope. LLVM expands what
 * the hardware lacks (a float max, a 16-bit add) into compare-and-swap loops. */
#include <string.h>
#include "lower_int.h"

static LLVMAtomicOrdering ordering(TirSem sem)
{
    switch (sem) {
    case SEM_RELAXED: return LLVMAtomicOrderingMonotonic;
    case SEM_ACQUIRE: return LLVMAtomicOrderingAcquire;
    case SEM_RELEASE: return LLVMAtomicOrderingRelease;
    default: return LLVMAtomicOrderingAcquireRelease;
    }
}

static LLVMAtomicRMWBinOp rmw_op(TirAtomic op, ElemKind k)
{
    int f = et_is_float(k), s = et_is_signed(k);
    switch (op) {
    case ATOM_ADD: return f ? LLVMAtomicRMWBinOpFAdd : LLVMAtomicRMWBinOpAdd;
    case ATOM_MAX: return f ? LLVMAtomicRMWBinOpFMax : s ? LLVMAtomicRMWBinOpMax : LLVMAtomicRMWBinOpUMax;
    case ATOM_MIN: return f ? LLVMAtomicRMWBinOpFMin : s ? LLVMAtomicRMWBinOpMin : LLVMAtomicRMWBinOpUMin;
    case ATOM_AND: return LLVMAtomicRMWBinOpAnd;
    case ATOM_OR: return LLVMAtomicRMWBinOpOr;
    case ATOM_XOR: return LLVMAtomicRMWBinOpXor;
    default: return LLVMAtomicRMWBinOpXchg;
    }
}

/* Compare-and-swap on the bits of x (floats compare bit patterns). */
static LLVMValueRef cas(Lower *L, ElemKind k, LLVMValueRef p, LLVMValueRef cmp, LLVMValueRef x,
                        LLVMAtomicOrdering ord, unsigned scope)
{
    LLVMTypeRef t = lw_type(L, k), it = LLVMIntTypeInContext(L->ctx, (unsigned)et_bits(k));
    if (et_is_float(k)) {
        cmp = LLVMBuildBitCast(L->b, cmp, it, "");
        x = LLVMBuildBitCast(L->b, x, it, "");
    }
    LLVMAtomicOrdering fail = ord == LLVMAtomicOrderingAcquireRelease ? LLVMAtomicOrderingAcquire
                              : ord == LLVMAtomicOrderingRelease   ? LLVMAtomicOrderingMonotonic
                                                                   : ord;
    LLVMValueRef pair = LLVMBuildAtomicCmpXchgSyncScope(L->b, p, cmp, x, ord, fail, scope);
    LLVMSetAlignment(pair, (unsigned)et_bytes(k));
    LLVMValueRef old = LLVMBuildExtractValue(L->b, pair, 0, "");
    return et_is_float(k) ? LLVMBuildBitCast(L->b, old, t, "") : old;
}

/* atomicrmw; where the target needs it, as fences around a relaxed one (the PTX mapping of
 * C++'s release and acquire atomics: fence, relaxed atom, fence). */
static LLVMValueRef rmw(Lower *L, LLVMAtomicRMWBinOp op, ElemKind k, LLVMValueRef p,
                        LLVMValueRef x, LLVMAtomicOrdering ord, unsigned scope)
{
    int fences = L->t->rmw_fences && ord != LLVMAtomicOrderingMonotonic;
    int rel = ord == LLVMAtomicOrderingRelease || ord == LLVMAtomicOrderingAcquireRelease;
    int acq = ord == LLVMAtomicOrderingAcquire || ord == LLVMAtomicOrderingAcquireRelease;
    if (fences && rel)
        LLVMBuildFenceSyncScope(L->b, LLVMAtomicOrderingRelease, scope, "");
    LLVMValueRef old = LLVMBuildAtomicRMWSyncScope(L->b, op, p, x, fences ? LLVMAtomicOrderingMonotonic : ord, scope);
    LLVMSetAlignment(old, (unsigned)et_bytes(k));
    if (fences && acq)
        LLVMBuildFenceSyncScope(L->b, LLVMAtomicOrderingAcquire, scope, "");
    return old;
}

/* The update of element r (when `pred`, else 0); its old value. */
static LLVMValueRef atomic_one(Lower *L, TirOp *op, LLVMValueRef r, LLVMValueRef pred,
                               unsigned scope)
{
    ElemKind k = op->results[0]->type.elem;
    TirAtomic what = (TirAtomic)op->attr.i;
    LLVMAtomicOrdering ord = ordering((TirSem)(op->attr.i2 & 15));
    LLVMValueRef p = lw_get(L, op->ops[0], r), x = lw_get(L, op->ops[1], r);
    int mi = tir_atomic_mask_index(op);
    if (mi >= 0) {
        LLVMValueRef m = lw_get(L, op->ops[mi], r);
        pred = pred ? LLVMBuildAnd(L->b, pred, m, "") : m;
    }
    LLVMBasicBlockRef from = LLVMGetInsertBlock(L->b), go = NULL, join = NULL;
    if (pred) {
        go = lw_block(L, "atom"), join = lw_block(L, "atom.join");
        LLVMBuildCondBr(L->b, pred, go, join);
        LLVMPositionBuilderAtEnd(L->b, go);
    }
    LLVMValueRef old;
    if (what == ATOM_CAS) {
        old = cas(L, k, p, lw_get(L, op->ops[2], r), x, ord, scope);
    } else {
        old = rmw(L, rmw_op(what, k), k, p, x, ord, scope);
    }
    if (!pred)
        return old;
    go = LLVMGetInsertBlock(L->b);
    LLVMBuildBr(L->b, join);
    LLVMPositionBuilderAtEnd(L->b, join);
    LLVMValueRef phi = LLVMBuildPhi(L->b, lw_type(L, k), "");
    LLVMValueRef vals[2] = {old, LLVMConstNull(lw_type(L, k))};
    LLVMBasicBlockRef bbs[2] = {go, from};
    LLVMAddIncoming(phi, vals, bbs, 2);
    return phi;
}

int lower_atomic(Lower *L, TirOp *op)
{
    TirValue *res = op->results[0];
    const char *name = L->t->sync_scopes[op->attr.i2 >> 4];
    name = name ? name : "";
    unsigned scope = LLVMGetSyncScopeID(L->ctx, name, strlen(name));
    LLVMValueRef owner = lw_owner(L, lw_ll(L, op->ops[0]));
    lw_tile_new(L, res);
    ElemLoop lp;
    LW_FOR(L, &lp, lw_regs(L, res), L->t->unroll_elements, r) {
        lw_set(L, res, r, atomic_one(L, op, r, owner, scope));
    }
    return 0;
}
