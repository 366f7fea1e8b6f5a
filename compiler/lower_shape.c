/* lower_shape.c: ops that move elements between shapes or layouts: splat, expand_dims,
 * broadcast (register remapping within one parent layout), trans (a relabeling of the
 * registers: the result layout is the operand's with dims swapped) and convert_layout
 * (through shared memory unless both layouts give every thread the same elements). */
#include <string.h>
#include "lower_int.h"

static LLVMValueRef fresh(Lower *L, TirValue *res)
{
    LLVMValueRef s = lw_tile_storage(L, res);
    lw_bind(L, res, s);
    return s;
}

static int lower_splat(Lower *L, TirValue *src, TirValue *res)
{
    fresh(L, res);
    ElemLoop lp;
    LLVMValueRef r = lw_loop_begin(L, &lp, lw_regs(L, res), L->t->unroll_elements);
    lw_set(L, res, r, lw_val(L, src));
    lw_loop_end(L, &lp);
    return 0;
}

/* Row-major linear index of value coordinates c over shape; `swap` reads c as (c1, c0). */
static LLVMValueRef linear(Lower *L, const int *shape, int rank, LLVMValueRef *c, int swap)
{
    LLVMValueRef idx = lw_i32c(L, 0);
    for (int d = 0; d < rank; d++) {
        LLVMValueRef cd = swap && rank == 2 ? c[1 - d] : c[d];
        idx = LLVMBuildAdd(L->b, LLVMBuildMul(L->b, idx, lw_i32c(L, shape[d]), ""), cd, "");
    }
    return idx;
}

static void smem_write_all(Lower *L, TirValue *src, LLVMValueRef base)
{
    LLVMTypeRef mt = lw_mem_type(L, src->type.elem);
    LLVMBasicBlockRef join = lw_if_owner(L, lw_ll(L, src));
    ElemLoop lp;
    LLVMValueRef r = lw_loop_begin(L, &lp, lw_regs(L, src), L->t->unroll_elements), c[TIR_MAX_RANK];
    lw_coords(L, src, r, c);
    LLVMValueRef x = lw_get(L, src, r);
    if (src->type.elem == ET_BOOL)
        x = LLVMBuildZExt(L->b, x, mt, "");
    LLVMValueRef idx = linear(L, src->type.shape, src->type.rank, c, 0);
    lw_smem_store(L, x, lw_smem_ptr(L, base, mt, idx));
    lw_loop_end(L, &lp);
    lw_end_if(L, join);
}

static void smem_read_all(Lower *L, TirValue *src, TirValue *res, LLVMValueRef base, int swap)
{
    LLVMTypeRef mt = lw_mem_type(L, res->type.elem);
    ElemLoop lp;
    LLVMValueRef r = lw_loop_begin(L, &lp, lw_regs(L, res), L->t->unroll_elements), c[TIR_MAX_RANK];
    lw_coords(L, res, r, c);
    LLVMValueRef idx = linear(L, src->type.shape, src->type.rank, c, swap);
    LLVMValueRef x = lw_smem_load(L, mt, lw_smem_ptr(L, base, mt, idx));
    if (res->type.elem == ET_BOOL)
        x = LLVMBuildTrunc(L->b, x, lw_type(L, ET_BOOL), "");
    lw_set(L, res, r, x);
    lw_loop_end(L, &lp);
}

/* Moves src's elements into res's layout through shared memory. Element c of res is element
 * c of src (src and res differ only by size-1 dims), or (c1, c0) when `swap`. */
static int redistribute(Lower *L, TirValue *src, TirValue *res, int swap)
{
    int bytes = tir_type_numel(&src->type) * et_bytes(src->type.elem);
    LLVMValueRef base = lw_smem(L, bytes);
    fresh(L, res);
    L->t->barrier(&L->tc);
    smem_write_all(L, src, base);
    L->t->barrier(&L->tc);
    smem_read_all(L, src, res, base, swap);
    L->t->barrier(&L->tc);
    return 0;
}

/* Whether res's registers are src's, one for one (the same linear layout, up to size-1
 * dims, which add no bits to flat offsets). */
static int same_registers(Lower *L, TirValue *src, TirValue *res)
{
    const LinearLayout *a = lw_ll(L, src), *b = lw_ll(L, res);
    LinearLayout t = *a;
    t.rank = b->rank;
    for (int d = 0; d < b->rank; d++)
        t.shape[d] = b->shape[d];
    return tir_type_numel(&src->type) == tir_type_numel(&res->type) && ll_equal(&t, b);
}

static int copy_or_redistribute(Lower *L, TirValue *src, TirValue *res, int relabel_ok, int swap)
{
    if (relabel_ok) {
        lw_copy_tile(L, res, fresh(L, res), lw_val(L, src));
        return 0;
    }
    return redistribute(L, src, res, swap);
}

/* For each register bit of res, the src registers holding its element (projected onto src's
 * shape) in the same thread; 0 when some element lives in another thread. */
static int broadcast_map(const LinearLayout *src, const LinearLayout *res, uint32_t *map)
{
    LinearLayout p;
    ll_project(res, src->shape, &p);
    for (int k = LL_LANE; k < LL_NDIMS; k++) {
        if (p.nbits[k] != src->nbits[k])
            return 0;
        for (int i = 0; i < p.nbits[k]; i++)
            if (p.basis[k][i] != src->basis[k][i])
                return 0;
    }
    for (int i = 0; i < p.nbits[LL_REG]; i++)
        if (!ll_solve(src->basis[LL_REG], src->nbits[LL_REG], p.basis[LL_REG][i], &map[i]))
            return 0;
    return 1;
}

static int lower_broadcast(Lower *L, TirOp *op)
{
    TirValue *src = op->ops[0], *res = op->results[0];
    if (src->type.rank == 0)
        return lower_splat(L, src, res);
    const LinearLayout *rl = lw_ll(L, res);
    uint32_t map[LL_MAX_BITS];
    if (!broadcast_map(lw_ll(L, src), rl, map))
        return lw_fail(L, op, "internal compiler error: broadcast across layouts");
    fresh(L, res);
    ElemLoop lp;
    LLVMValueRef r = lw_loop_begin(L, &lp, ll_regs(rl), L->t->unroll_elements);
    LLVMValueRef sr = layout_emit_map(L->b, map, rl->nbits[LL_REG], r);
    lw_set(L, res, r, lw_get(L, src, sr));
    lw_loop_end(L, &lp);
    return 0;
}

static int lower_expand(Lower *L, TirOp *op)
{
    TirValue *src = op->ops[0], *res = op->results[0];
    if (src->type.rank == 0)
        return lower_splat(L, src, res);
    return copy_or_redistribute(L, src, res, same_registers(L, src, res), 0);
}

static int lower_trans(Lower *L, TirOp *op)
{
    TirValue *src = op->ops[0], *res = op->results[0];
    LinearLayout t;
    ll_permute(lw_ll(L, src), (const int[]){1, 0}, &t);
    return copy_or_redistribute(L, src, res, ll_equal(&t, lw_ll(L, res)), 1);
}

int lower_shape(Lower *L, TirOp *op)
{
    TirValue *src = op->ops[0], *res = op->results[0];
    switch (op->code) {
    case TIR_SPLAT: return lower_splat(L, src, res);
    case TIR_EXPAND_DIMS: return lower_expand(L, op);
    case TIR_BROADCAST: return lower_broadcast(L, op);
    case TIR_TRANS: return lower_trans(L, op);
    case TIR_CONVERT_LAYOUT:
        if (src->type.rank == 0) {
            lw_bind(L, res, lw_val(L, src));
            return 0;
        }
        return copy_or_redistribute(L, src, res, same_registers(L, src, res), 0);
    default: return lw_fail(L, op, "internal compiler error: not a shape op");
    }
}
