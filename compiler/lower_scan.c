/* lower_scan.c: inclusive scans (cumsum, cumprod) along one axis. The layout pass gives the
 * operand and the result a layout that holds the whole axis in each thread's registers in
 * coordinate order (layout_axis_in_thread), so each thread scans its own registers: no
 * exchange between threads. f16/bf16 combine in f32. */
#include "lower_int.h"

int lower_scan(Lower *L, TirOp *op)
{
    TirValue *x = op->ops[0], *res = op->results[0];
    int axis = (int)(op->attr.i2 & 15), reverse = (int)((op->attr.i2 >> 4) & 1);
    const LinearLayout *ll = lw_ll(L, x);
    if (L->failed)
        return -1;
    uint32_t along = ll_dim_mask(ll, LL_REG, axis);
    int n = 1 << __builtin_popcount(along), nregs = ll->nbits[LL_REG];
    if (n != x->type.shape[axis] || !ll_equal(ll, lw_ll(L, res)))
        return lw_fail(L, op, "internal compiler error: a scan whose axis is not in each thread");
    ElemKind ek = x->type.elem, rk = res->type.elem;
    ElemKind ck = ek == ET_F16 || ek == ET_BF16 ? ET_F32 : rk;
    int isf = et_is_float(ck);
    uint32_t keep = ((1u << nregs) - 1) & ~along;
    lw_tile_new(L, res);
    ElemLoop lo;
    LW_FOR(L, &lo, 1 << __builtin_popcount(keep), L->t->unroll_elements, g) {
        LLVMValueRef base = layout_emit_deposit(L->b, g, keep), acc = NULL;
        for (int i = 0; i < n; i++) { /* the axis in order: a short unrolled chain */
            int j = reverse ? n - 1 - i : i;
            LLVMValueRef r = LLVMBuildOr(L->b, base, layout_emit_deposit(L->b, lw_i32c(L, j), along), "");
            LLVMValueRef v = lw_cast(L, lw_get(L, x, r), ek, ck);
            if (acc)
                v = op->attr.i == SCAN_ADD ? (isf ? LLVMBuildFAdd(L->b, acc, v, "") : LLVMBuildAdd(L->b, acc, v, ""))
                                           : (isf ? LLVMBuildFMul(L->b, acc, v, "") : LLVMBuildMul(L->b, acc, v, ""));
            acc = v;
            lw_set(L, res, r, lw_cast(L, acc, ck, rk));
        }
    }
    return 0;
}
