/* lower_memory.c: loads and stores of scalars and tiles of pointers. Each thread accesses
 * the elements its layout gives it; masked-off elements never touch memory (a branch per
 * element, which the GPU backend turns into predicated accesses after unrolling). */
#include "lower_int.h"

static LLVMValueRef load_elem(Lower *L, ElemKind k, LLVMValueRef p)
{
    LLVMTypeRef mt = lw_mem_type(L, k);
    LLVMValueRef x = LLVMBuildLoad2(L->b, mt, p, "");
    LLVMSetAlignment(x, (unsigned)et_bytes(k));
    if (k == ET_BOOL)
        x = LLVMBuildICmp(L->b, LLVMIntNE, x, LLVMConstNull(mt), "");
    return x;
}

static void store_elem(Lower *L, ElemKind k, LLVMValueRef p, LLVMValueRef x)
{
    if (k == ET_BOOL)
        x = LLVMBuildZExt(L->b, x, lw_mem_type(L, k), "");
    LLVMValueRef st = LLVMBuildStore(L->b, x, p);
    LLVMSetAlignment(st, (unsigned)et_bytes(k));
}

/* Element r of a load: ops are ptr [, mask [, other]]. */
static LLVMValueRef load_one(Lower *L, TirOp *op, LLVMValueRef r)
{
    ElemKind k = op->results[0]->type.elem;
    LLVMValueRef p = lw_get(L, op->ops[0], r);
    if (op->nops < 2)
        return load_elem(L, k, p);
    LLVMValueRef m = lw_get(L, op->ops[1], r);
    LLVMValueRef other = op->nops > 2 ? lw_get(L, op->ops[2], r) : LLVMConstNull(lw_type(L, k));
    LLVMBasicBlockRef from = LLVMGetInsertBlock(L->b);
    LLVMBasicBlockRef ld = lw_block(L, "ld"), join = lw_block(L, "ld.join");
    LLVMBuildCondBr(L->b, m, ld, join);
    LLVMPositionBuilderAtEnd(L->b, ld);
    LLVMValueRef x = load_elem(L, k, p);
    LLVMBuildBr(L->b, join);
    LLVMPositionBuilderAtEnd(L->b, join);
    LLVMValueRef phi = LLVMBuildPhi(L->b, lw_type(L, k), "");
    LLVMValueRef vals[2] = {x, other};
    LLVMBasicBlockRef bbs[2] = {ld, from};
    LLVMAddIncoming(phi, vals, bbs, 2);
    return phi;
}

/* Element r of a store: ops are ptr, value [, mask]. */
static void store_one(Lower *L, TirOp *op, LLVMValueRef r)
{
    ElemKind k = op->ops[1]->type.elem;
    LLVMValueRef p = lw_get(L, op->ops[0], r), x = lw_get(L, op->ops[1], r);
    if (op->nops < 3) {
        store_elem(L, k, p, x);
        return;
    }
    LLVMBasicBlockRef st = lw_block(L, "st"), join = lw_block(L, "st.join");
    LLVMBuildCondBr(L->b, lw_get(L, op->ops[2], r), st, join);
    LLVMPositionBuilderAtEnd(L->b, st);
    store_elem(L, k, p, x);
    LLVMBuildBr(L->b, join);
    LLVMPositionBuilderAtEnd(L->b, join);
}

static int lower_load(Lower *L, TirOp *op)
{
    TirValue *res = op->results[0];
    if (res->type.rank == 0) {
        lw_bind(L, res, load_one(L, op, NULL));
        return 0;
    }
    lw_bind(L, res, lw_tile_storage(L, res));
    ElemLoop lp;
    LLVMValueRef r = lw_loop_begin(L, &lp, lw_regs(res), L->t->unroll_elements);
    lw_set(L, res, r, load_one(L, op, r));
    lw_loop_end(L, &lp);
    return 0;
}

static int lower_store(Lower *L, TirOp *op)
{
    TirValue *ptr = op->ops[0];
    if (ptr->type.rank == 0) {
        store_one(L, op, NULL);
        return 0;
    }
    ElemLoop lp;
    LLVMValueRef r = lw_loop_begin(L, &lp, lw_regs(ptr), L->t->unroll_elements);
    store_one(L, op, r);
    lw_loop_end(L, &lp);
    return 0;
}

int lower_memory(Lower *L, TirOp *op)
{
    return op->code == TIR_LOAD ? lower_load(L, op) : lower_store(L, op);
}
