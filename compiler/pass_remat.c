/* pass_remat.c: conversions of values that are cheap to compute are replaced by computing
 * them again in the wanted layout. Index vectors and masks (aranges, splats of scalars, and
 * elementwise arithmetic, expand_dims and broadcasts over them) are used by loads in one
 * layout and by dot results in another; converting them would cost shared memory and
 * barriers, recomputing them costs a few integer instructions. The clone is placed where the
 * conversion was, and each op's layout is derived backwards from the wanted one. Small
 * integer gathers (a block table's entries for a tile of keys) are loaded again in the wanted
 * layout too, when nothing is stored between the load and the conversion: a few cached loads
 * instead of a shared-memory round trip, and an address that stays a function of the loop's
 * induction variable, as the pipeliner needs. Conversions that move nothing between threads
 * stay (register renaming), and one that another copy of the same value serves that way
 * converts that copy. */
#include "layout.h"
#include "layout_convert.h"
#include "passes.h"

enum { MAX_CHAIN = 40, MAX_RELOAD = 256, MAX_DONE = 32 };

static int cheap_op(TirOpcode c)
{
    switch (c) {
    case TIR_ARANGE: case TIR_SPLAT: case TIR_BINARY: case TIR_CMP: case TIR_UNARY:
    case TIR_CAST: case TIR_SELECT: case TIR_FMA: case TIR_ADDPTR: case TIR_BROADCAST:
    case TIR_EXPAND_DIMS: case TIR_CONVERT_LAYOUT:
        return 1;
    default:
        return 0;
    }
}

/* A load of a few integers that may run again at `at`: same block, no store in between. */
static int reloadable(const TirOp *ld, const TirOp *at)
{
    const TirValue *v = ld->results[0];
    if (!et_is_int(v->type.elem) || tir_type_numel(&v->type) > MAX_RELOAD || ld->block != at->block ||
        tir_op_is_volatile(ld))
        return 0;
    for (const TirOp *op = ld->next; op && op != at; op = op->next) {
        if (tir_op_writes_memory(op))
            return 0;
        for (int r = 0; r < op->nregions; r++)
            if (tir_block_stores(op->regions[r]))
                return 0;
        if (!op->next)
            return 0; /* `at` is not after the load */
    }
    return 1;
}

/* Counts the tile ops of x's chain (to be recomputed at `at`); -1 when something in it is not
 * cheap (a large or overwritten load, a block argument, a reduction, ...). Scalars end the
 * chain. */
static int chain_cost(const TirValue *x, const TirOp *at, int budget)
{
    if (x->type.rank == 0)
        return 0;
    if (!x->def || budget <= 0 ||
        !(cheap_op(x->def->code) || (x->def->code == TIR_LOAD && reloadable(x->def, at))))
        return -1;
    int n = 1;
    for (int i = 0; i < x->def->nops; i++) {
        int c = chain_cost(x->def->ops[i], at, budget - n);
        if (c < 0)
            return -1;
        n += c;
    }
    return n;
}

/* The layout operand i of op must have for op's result to have `want`. */
static TirLayout operand_layout(const TirOp *op, const TirLayout *want)
{
    if (op->code == TIR_EXPAND_DIMS)
        return layout_slice(want, (int)op->attr.i);
    return *want;
}

/* A copy of x's chain computing x in layout `want`, inserted before `at`. */
static TirValue *clone(TirKernel *k, TirOp *at, TirValue *x, const TirLayout *want)
{
    if (x->type.rank == 0)
        return x;
    TirOp *d = x->def;
    if (d->code == TIR_CONVERT_LAYOUT)
        return clone(k, at, d->ops[0], want);
    TirLayout ol = operand_layout(d, want);
    const TirLayout *opl = tir_layout_new(k->arena, ol);
    TirValue *ops[4];
    for (int i = 0; i < d->nops && i < 4; i++)
        ops[i] = clone(k, at, d->ops[i], opl);
    TirOp *c = tir_op_insert_before(k, at, d->code, d->loc, ops, d->nops, &x->type, 1);
    c->attr = d->attr;
    c->results[0]->layout = want;
    c->results[0]->name = x->name;
    return c->results[0];
}

/* Moving x into layout `to` moves nothing between threads (layout_convert.h: the same map,
 * or a register permutation): lowering renames registers, cheaper than computing again. */
static int free_move(const TirValue *x, const TirLayout *to)
{
    LinearLayout from, dst;
    if (layout_ll(x->layout, x->type.shape, x->type.rank, &from) ||
        layout_ll(to, x->type.shape, x->type.rank, &dst))
        return 0;
    ConvPlan plan;
    conv_plan(&from, &dst, &plan);
    return plan.kind == CONV_NONE || plan.kind == CONV_REGS;
}

/* What one block recomputed so far: the value converted, and its copy in another layout. */
typedef struct Done {
    const TirValue *from[MAX_DONE];
    TirValue *to[MAX_DONE];
    int n;
} Done;

/* A copy of `from` made earlier in this block that moves into `want` for free, or NULL:
 * paged attention's K^T and V copies want a block table's entries in two encodings of one
 * map, and are served by one load. */
static TirValue *done_before(const Done *d, const TirValue *from, const TirLayout *want)
{
    for (int i = 0; i < d->n; i++)
        if (d->from[i] == from && free_move(d->to[i], want))
            return d->to[i];
    return NULL;
}

static void visit(TirKernel *k, TirBlock *b)
{
    Done done = {.n = 0};
    for (TirOp *op = b->first, *next; op; op = next) {
        next = op->next;
        for (int r = 0; r < op->nregions; r++)
            visit(k, op->regions[r]);
        if (op->code != TIR_CONVERT_LAYOUT || op->ops[0]->type.rank == 0 ||
            op->ops[0]->type.buffers || free_move(op->ops[0], op->results[0]->layout))
            continue;
        TirValue *src = op->ops[0], *res = op->results[0], *copy = done_before(&done, src, res->layout);
        if (copy) {
            op->ops[0] = copy;
            continue;
        }
        if (chain_cost(src, op, MAX_CHAIN) < 0)
            continue;
        TirValue *x = clone(k, op, src, res->layout);
        tir_replace_uses(k->body, res, x);
        tir_op_remove(op);
        if (done.n < MAX_DONE)
            done.from[done.n] = src, done.to[done.n++] = x;
    }
}

int pass_rematerialize(TirKernel *k, const struct Target *t, Diags *d)
{
    (void)t, (void)d;
    visit(k, k->body);
    return 0;
}
