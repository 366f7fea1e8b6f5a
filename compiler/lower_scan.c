/* lower_scan.c: ops along one axis held whole in each thread: inclusive scans (cumsum,
 * cumprod) and flips. The layout pass gives the operand and the result a layout that holds
 * the axis in each thread's registers in coordinate order (layout_axis_in_thread), so each
 * thread works on its own registers: no exchange between threads. f16/bf16 scans combine in
 * f32 (the builder casts them). */
#include "lower_int.h"

/* The registers along the axis, checked; 0, or -1 after a failure. */
static int axis_regs(Lower *L, TirOp *op, uint32_t *along, uint32_t *keep, int *n)
{
    const LinearLayout *ll = lw_ll(L, op->ops[0]);
    if (L->failed)
        return -1;
    int axis = (int)(op->attr.i2 & 15);
    *along = ll_dim_mask(ll, LL_REG, axis);
    *n = 1 << __builtin_popcount(*along);
    *keep = ((1u << ll->nbits[LL_REG]) - 1) & ~*along;
    if (*n != op->ops[0]->type.shape[axis] || !ll_equal(ll, lw_ll(L, op->results[0])))
        return lw_fail(L, op, "internal compiler error: an op along an axis not held in each thread");
    return 0;
}

static LLVMValueRef reg_of(Lower *L, LLVMValueRef base, int j, uint32_t along)
{
    return LLVMBuildOr(L->b, base, layout_emit_deposit(L->b, lw_i32c(L, j), along), "");
}

int lower_flip(Lower *L, TirOp *op)
{
    uint32_t along, keep;
    int n;
    if (axis_regs(L, op, &along, &keep, &n))
        return -1;
    lw_tile_new(L, op->results[0]);
    ElemLoop lo;
    LW_FOR(L, &lo, 1 << __builtin_popcount(keep), L->t->unroll_elements, g) {
        LLVMValueRef base = layout_emit_deposit(L->b, g, keep);
        for (int j = 0; j < n; j++)
            lw_set(L, op->results[0], reg_of(L, base, j, along), lw_get(L, op->ops[0], reg_of(L, base, n - 1 - j, along)));
    }
    return 0;
}

int lower_scan(Lower *L, TirOp *op)
{
    TirValue *x = op->ops[0], *res = op->results[0];
    int reverse = (int)((op->attr.i2 >> 4) & 1), n;
    uint32_t along, keep;
    if (axis_regs(L, op, &along, &keep, &n))
        return -1;
    ElemKind ek = x->type.elem, rk = res->type.elem;
    ElemKind ck = ek == ET_F16 || ek == ET_BF16 ? ET_F32 : rk;
    int isf = et_is_float(ck);
    lw_tile_new(L, res);
    ElemLoop lo;
    LW_FOR(L, &lo, 1 << __builtin_popcount(keep), L->t->unroll_elements, g) {
        LLVMValueRef base = layout_emit_deposit(L->b, g, keep), acc = NULL;
        for (int i = 0; i < n; i++) { /* the axis in order: a short unrolled chain */
            int j = reverse ? n - 1 - i : i;
            LLVMValueRef r = reg_of(L, base, j, along);
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
