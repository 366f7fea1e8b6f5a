/* lower_dot.c: matrix products. The FMA path stages both operands through shared memory
 * (converted to the accumulator type, rows padded by one element against bank conflicts),
 * then each thread accumulates the result elements its layout owns over a loop on K.
 * Dots whose result has an mma encoding go to the tensor cores (lower_mma.c). */
#include <llvm-c/Target.h>
#include "layout_dot.h"
#include "lower_int.h"

/* Writes every element of x (converted to kind ck) to base[row * ld + col + off]. */
static void stage(Lower *L, TirValue *x, ElemKind ck, LLVMValueRef base, int ld, int off)
{
    LLVMTypeRef ct = lw_type(L, ck);
    LLVMBasicBlockRef join = lw_if_owner(L, lw_ll(L, x));
    ElemLoop lp;
    LLVMValueRef r = lw_loop_begin(L, &lp, lw_regs(L, x), L->t->unroll_elements), c[TIR_MAX_RANK];
    lw_coords(L, x, r, c);
    LLVMValueRef idx = LLVMBuildAdd(L->b, LLVMBuildMul(L->b, c[0], lw_i32c(L, ld), ""), c[1], "");
    idx = LLVMBuildAdd(L->b, idx, lw_i32c(L, off), "");
    lw_smem_store(L, lw_cast(L, lw_get(L, x, r), x->type.elem, ck), lw_smem_ptr(L, base, ct, idx));
    lw_loop_end(L, &lp);
    lw_end_if(L, join);
}

static LLVMValueRef smem_at(Lower *L, LLVMTypeRef t, LLVMValueRef base, LLVMValueRef idx)
{
    return lw_smem_load(L, t, lw_smem_ptr(L, base, t, idx));
}

static LLVMValueRef mul_add(Lower *L, ElemKind ck, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c)
{
    if (!et_is_float(ck))
        return LLVMBuildAdd(L->b, LLVMBuildMul(L->b, a, b, ""), c, "");
    LLVMValueRef args[3] = {a, b, c};
    LLVMTypeRef t = LLVMTypeOf(a);
    return target_intrinsic(&L->tc, "llvm.fmuladd", &t, 1, args, 3);
}

/* res[m, n] += a_s[m, k] * b_s[k, n] for every owned (m, n). */
static void accumulate(Lower *L, TirValue *res, ElemKind ck, LLVMValueRef base, LLVMValueRef k,
                       int lda, int ldb, int boff)
{
    LLVMTypeRef ct = lw_type(L, ck);
    ElemLoop lp;
    LLVMValueRef r = lw_loop_begin(L, &lp, lw_regs(L, res), L->t->unroll_elements), c[TIR_MAX_RANK];
    lw_coords(L, res, r, c);
    LLVMValueRef ai = LLVMBuildAdd(L->b, LLVMBuildMul(L->b, c[0], lw_i32c(L, lda), ""), k, "");
    LLVMValueRef bi = LLVMBuildAdd(L->b, LLVMBuildMul(L->b, k, lw_i32c(L, ldb), ""), c[1], "");
    bi = LLVMBuildAdd(L->b, bi, lw_i32c(L, boff), "");
    LLVMValueRef acc = lw_cast(L, lw_get(L, res, r), res->type.elem, ck);
    acc = mul_add(L, ck, smem_at(L, ct, base, ai), smem_at(L, ct, base, bi), acc);
    lw_set(L, res, r, lw_cast(L, acc, ck, res->type.elem));
    lw_loop_end(L, &lp);
}

static int lower_dot_fma(Lower *L, TirOp *op)
{
    TirValue *a = op->ops[0], *b = op->ops[1], *acc = op->ops[2], *res = op->results[0];
    int M = a->type.shape[0], K = a->type.shape[1], N = b->type.shape[1];
    ElemKind ck = res->type.elem == ET_F16 || res->type.elem == ET_BF16 ? ET_F32 : res->type.elem;
    int lda = K + 1, ldb = N + 1, boff = M * lda;
    int esz = (int)LLVMABISizeOfType(LLVMGetModuleDataLayout(L->mod), lw_type(L, ck));
    LLVMValueRef base = lw_smem(L, (boff + K * ldb) * esz);
    L->t->barrier(&L->tc);
    stage(L, a, ck, base, lda, 0);
    stage(L, b, ck, base, ldb, boff);
    L->t->barrier(&L->tc);
    lw_bind(L, res, lw_tile_storage(L, res));
    lw_copy_tile(L, res, lw_val(L, res), lw_val(L, acc));
    ElemLoop kl;
    LLVMValueRef k = lw_loop_begin(L, &kl, K, 0);
    accumulate(L, res, ck, base, k, lda, ldb, boff);
    lw_loop_end(L, &kl);
    L->t->barrier(&L->tc);
    return 0;
}

int lower_dot(Lower *L, TirOp *op)
{
    if (op->nops < 3 || op->ops[0]->type.rank != 2 || op->ops[1]->type.rank != 2)
        return lw_fail(L, op, "internal compiler error: dot needs rank-2 a, b and acc");
    if (dot_uses_mma(op, L->t))
        return lower_dot_mma(L, op);
    return lower_dot_fma(L, op);
}
