/* pass_reduce.c: a reduction whose axis spans several warps is split so that its exchange
 * between warps is an ordinary layout conversion (through shared memory, by pass_smem.c,
 * with the barriers of pass_barriers.c) rather than hidden in the reduction's lowering:
 *     p = reduce x            each warp's partial: the axis becomes one coordinate per warp
 *     q = convert_layout p    every thread gets all partials of its rows in registers
 *     r = reduce q            within each thread
 * argmax/argmin carry their indices along: the partial reduce has two results (values and
 * indices), both are converted, and the final reduce takes both. */
#include "passes.h"
#include "target.h"

static const TirLayout *linear(TirKernel *k, const LinearLayout *ll)
{
    LinearLayout *copy = arena_alloc(k->arena, sizeof *copy);
    TirLayout *l = arena_alloc(k->arena, sizeof *l);
    if (!copy || !l)
        return NULL;
    *copy = *ll;
    *l = (TirLayout){.kind = LAYOUT_LINEAR, .rank = ll->rank, .ll = copy};
    return l;
}

static TirValue *convert(TirKernel *k, TirOp *at, TirValue *x, const TirLayout *l)
{
    TirOp *c = tir_op_insert_before(k, at, TIR_CONVERT_LAYOUT, at->loc, &x, 1, &x->type, 1);
    c->results[0]->layout = l;
    return c->results[0];
}

static int split(TirKernel *k, TirOp *op)
{
    TirValue *x = op->ops[0];
    int axis = (int)op->attr.i2, arg = tir_reduce_is_arg((TirReduce)op->attr.i);
    LinearLayout s, p, q;
    if (layout_ll(x->layout, x->type.shape, x->type.rank, &s) ||
        !ll_dim_mask(&s, LL_WARP, axis))
        return 0;
    if (ll_reduce_warps(&s, axis, &p))
        return -1;
    ll_warps_to_regs(&p, axis, &q);
    const TirLayout *pl = linear(k, &p), *ql = linear(k, &q);
    if (!pl || !ql)
        return -1;
    TirType pt[2] = {x->type, x->type};
    pt[0].shape[axis] = pt[1].shape[axis] = p.shape[axis];
    pt[1].elem = ET_I32;
    TirOp *partial = tir_op_insert_before(k, op, TIR_REDUCE, op->loc, &x, 1, pt, arg ? 2 : 1);
    partial->attr = op->attr;
    TirValue *in[2];
    for (int i = 0; i < partial->nres; i++) {
        partial->results[i]->layout = pl;
        in[i] = convert(k, op, partial->results[i], ql);
    }
    TirOp *final = tir_op_insert_before(k, op, TIR_REDUCE, op->loc, in, arg ? 2 : 1,
                                        &op->results[0]->type, 1);
    final->attr = op->attr;
    final->results[0]->layout = op->results[0]->layout;
    final->results[0]->name = op->results[0]->name;
    tir_replace_uses(k->body, op->results[0], final->results[0]);
    tir_op_remove(op);
    return 0;
}

static int visit(TirKernel *k, TirBlock *b, Diags *d)
{
    for (TirOp *op = b ? b->first : NULL, *next; op; op = next) {
        next = op->next;
        for (int r = 0; r < op->nregions; r++)
            if (visit(k, op->regions[r], d))
                return -1;
        if (op->code == TIR_REDUCE && op->nops == 1 && op->ops[0]->type.rank > 0 &&
            op->results[0]->type.rank < op->ops[0]->type.rank && split(k, op)) {
            diag_error(d, op->loc, "internal compiler error: cannot split a reduction across warps");
            return -1;
        }
    }
    return 0;
}

int pass_split_reductions(TirKernel *k, const struct Target *t, Diags *d)
{
    return t->threads_per_warp > 1 ? visit(k, k->body, d) : 0;
}
