/* lower_shape.c: ops that move elements between shapes or layouts: splat, expand_dims,
 * broadcast (register remapping within one parent layout), join and split (register pairs),
 * and the moves between layouts (expand_dims, trans, reshape, permute, convert_layout), planned from the two linear layouts: nothing, a
 * register permutation or warp shuffles (moves through shared memory are explicit ops by
 * then: compiler/pass_smem.c). */
#include <string.h>
#include "layout_convert.h"
#include "layout_shape.h"
#include "lower_int.h"

static void fresh(Lower *L, TirValue *res) { lw_tile_new(L, res); }

static int lower_splat(Lower *L, TirValue *src, TirValue *res)
{
    fresh(L, res);
    ElemLoop lp;
    LW_FOR(L, &lp, lw_regs(L, res), L->t->unroll_elements, r) {
        lw_set(L, res, r, lw_val(L, src));
    }
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
    LW_FOR(L, &lp, lw_regs(L, res), L->t->unroll_elements, r) {
        LLVMValueRef sr = layout_emit_map(L->b, p->src_reg, p->dst_reg_bits, r);
        lw_set(L, res, r, lw_get(L, src, sr));
    }
}

/* Within warps: res register r of lane l is src register map(r) of lane
 * lane_of_reg(r) ^ lane_of_lane(l), one shuffle per register. */
static void move_lanes(Lower *L, TirValue *src, TirValue *res, const ConvPlan *p)
{
    fresh(L, res);
    LLVMValueRef lane = LLVMBuildAnd(L->b, L->tid, lw_i32c(L, (1 << p->dst_lane_bits) - 1), "");
    LLVMValueRef from_lane = layout_emit_map(L->b, p->lane_of_lane, p->dst_lane_bits, lane);
    ElemLoop lp;
    LW_FOR(L, &lp, lw_regs(L, res), L->t->unroll_elements, r) {
        LLVMValueRef sr = layout_emit_map(L->b, p->src_reg, p->dst_reg_bits, r);
        LLVMValueRef sl = LLVMBuildXor(L->b, from_lane,
                                       layout_emit_map(L->b, p->lane_of_reg, p->dst_reg_bits, r), "");
        lw_set(L, res, r, lw_shuffle_idx(L, lw_get(L, src, sr), sl));
    }
}

/* Moves src's elements, whose layout `from` describes in res's dims, into res's layout by
 * the cheapest plan (layout_convert.h). */
static int move_from(Lower *L, TirValue *src, TirValue *res, const LinearLayout *from)
{
    ConvPlan p;
    conv_plan(from, lw_ll(L, res), &p);
    if (p.kind == CONV_SHUFFLE && !L->t->shuffle_idx)
        p.kind = CONV_SMEM;
    switch (p.kind) {
    case CONV_NONE:
        fresh(L, res);
        lw_copy_value(L, res, src);
        return 0;
    case CONV_REGS: move_regs(L, src, res, &p); return 0;
    case CONV_SHUFFLE: move_lanes(L, src, res, &p); return 0;
    default:
        return lw_fail(L, src->def, "internal compiler error: a layout conversion through shared "
                                    "memory reached lowering (pass_smem.c makes those explicit)");
    }
}

static int move(Lower *L, TirValue *src, TirValue *res, int swap)
{
    LinearLayout from;
    relabel(L, src, res, swap, &from);
    return move_from(L, src, res, &from);
}

/* reshape, permute: the operand's map seen through the op, moved into the result's layout */
static int lower_remap(Lower *L, TirOp *op)
{
    LinearLayout from;
    if (layout_map_ll(op, lw_ll(L, op->ops[0]), &from) != 0)
        return lw_fail(L, op, "internal compiler error: no layout through a shape op");
    return move_from(L, op->ops[0], op->results[0], &from);
}

/* join: register 2r + j of the pair tile is register r of operand j (layout_shape.c puts
 * the new dim in register bit 0); split: the other way round. */
static int lower_pairs(Lower *L, TirOp *op)
{
    int join = op->code == TIR_JOIN;
    TirValue *pairs = join ? op->results[0] : op->ops[0];
    TirValue *half = join ? op->ops[0] : op->results[0];
    LinearLayout want;
    if (ll_join(lw_ll(L, half), &want) != 0 || !ll_equal(&want, lw_ll(L, pairs)) ||
        (join && !ll_equal(lw_ll(L, op->ops[1]), lw_ll(L, half))) ||
        (!join && !ll_equal(lw_ll(L, op->results[1]), lw_ll(L, half))))
        return lw_fail(L, op, "internal compiler error: join/split layouts do not pair up");
    for (int j = 0; j < 2; j++)
        fresh(L, join ? pairs : op->results[j]);
    ElemLoop lp;
    LW_FOR(L, &lp, lw_regs(L, half), L->t->unroll_elements, r) {
        for (int j = 0; j < 2; j++) {
            LLVMValueRef pr = LLVMBuildAdd(L->b, LLVMBuildShl(L->b, r, lw_i32c(L, 1), ""), lw_i32c(L, j), "");
            if (join)
                lw_set(L, pairs, pr, lw_get(L, op->ops[j], r));
            else
                lw_set(L, op->results[j], r, lw_get(L, pairs, pr));
        }
    }
    return 0;
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
    LW_FOR(L, &lp, ll_regs(rl), L->t->unroll_elements, r) {
        LLVMValueRef sr = layout_emit_map(L->b, map, rl->nbits[LL_REG], r);
        lw_set(L, res, r, lw_get(L, src, sr));
    }
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
    case TIR_RESHAPE: case TIR_PERMUTE: return lower_remap(L, op);
    case TIR_JOIN: case TIR_SPLIT: return lower_pairs(L, op);
    case TIR_CONVERT_LAYOUT: case TIR_HINT:
        if (src->type.rank == 0) {
            lw_bind(L, res, lw_val(L, src));
            return 0;
        }
        return move(L, src, res, 0);
    default: return lw_fail(L, op, "internal compiler error: not a shape op");
    }
}
