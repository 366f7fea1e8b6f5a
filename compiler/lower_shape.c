/* lower_shape.c: ops that move elements between shapes or layouts: splat, expand_dims,
 * broadcast (register remapping within one parent layout), and the moves between layouts
 * (expand_dims, trans, convert_layout), planned from the two linear layouts: nothing, a
 * register permutation, warp shuffles, or a trip through shared memory. */
#include <string.h>
#include "layout_convert.h"
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

/* src's registers described in res's dims: the same bases, with size-1 dims added or removed
 * (they add no bits to flat offsets), or with the two dims swapped. */
static void relabel(Lower *L, TirValue *src, TirValue *res, int swap, LinearLayout *out)
{
    const LinearLayout *a = lw_ll(L, src);
    if (swap) {
        ll_permute(a, (const int[]){1, 0}, out);
        return;
    }
    *out = *a;
    out->rank = res->type.rank;
    for (int d = 0; d < res->type.rank; d++)
        out->shape[d] = res->type.shape[d];
}

/* Each thread already holds its elements: res register r is src register map(r). */
static void move_regs(Lower *L, TirValue *src, TirValue *res, const ConvPlan *p)
{
    fresh(L, res);
    ElemLoop lp;
    LLVMValueRef r = lw_loop_begin(L, &lp, lw_regs(L, res), L->t->unroll_elements);
    LLVMValueRef sr = layout_emit_map(L->b, p->src_reg, p->dst_reg_bits, r);
    lw_set(L, res, r, lw_get(L, src, sr));
    lw_loop_end(L, &lp);
}

/* Within warps: res register r of lane l is src register map(r) of lane
 * lane_of_reg(r) ^ lane_of_lane(l), one shuffle per register. */
static void move_lanes(Lower *L, TirValue *src, TirValue *res, const ConvPlan *p)
{
    fresh(L, res);
    LLVMValueRef lane = LLVMBuildAnd(L->b, L->tid, lw_i32c(L, (1 << p->dst_lane_bits) - 1), "");
    LLVMValueRef from_lane = layout_emit_map(L->b, p->lane_of_lane, p->dst_lane_bits, lane);
    ElemLoop lp;
    LLVMValueRef r = lw_loop_begin(L, &lp, lw_regs(L, res), L->t->unroll_elements);
    LLVMValueRef sr = layout_emit_map(L->b, p->src_reg, p->dst_reg_bits, r);
    LLVMValueRef sl = LLVMBuildXor(L->b, from_lane,
                                   layout_emit_map(L->b, p->lane_of_reg, p->dst_reg_bits, r), "");
    lw_set(L, res, r, lw_shuffle_idx(L, lw_get(L, src, sr), sl));
    lw_loop_end(L, &lp);
}

/* Moves src's elements into res's layout by the cheapest plan (layout_convert.h). */
static int move(Lower *L, TirValue *src, TirValue *res, int swap)
{
    LinearLayout from;
    ConvPlan p;
    relabel(L, src, res, swap, &from);
    conv_plan(&from, lw_ll(L, res), &p);
    if (p.kind == CONV_SHUFFLE && !L->t->shuffle_idx)
        p.kind = CONV_SMEM;
    switch (p.kind) {
    case CONV_NONE: lw_copy_tile(L, res, fresh(L, res), lw_val(L, src)); return 0;
    case CONV_REGS: move_regs(L, src, res, &p); return 0;
    case CONV_SHUFFLE: move_lanes(L, src, res, &p); return 0;
    default: return redistribute(L, src, res, swap);
    }
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
    return move(L, src, res, 0);
}

int lower_shape(Lower *L, TirOp *op)
{
    TirValue *src = op->ops[0], *res = op->results[0];
    switch (op->code) {
    case TIR_SPLAT: return lower_splat(L, src, res);
    case TIR_EXPAND_DIMS: return lower_expand(L, op);
    case TIR_BROADCAST: return lower_broadcast(L, op);
    case TIR_TRANS: return move(L, src, res, 1);
    case TIR_CONVERT_LAYOUT:
        if (src->type.rank == 0) {
            lw_bind(L, res, lw_val(L, src));
            return 0;
        }
        return move(L, src, res, 0);
    default: return lw_fail(L, op, "internal compiler error: not a shape op");
    }
}
