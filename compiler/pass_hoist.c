/* pass_hoist.c: layout conversions of values defined outside a loop move in front of the
 * loop, so each runs once instead of every iteration (in attention, the Q tile's conversion
 * to the first dot's operand layout: shared memory and barriers, otherwise paid per block of
 * keys). Only conversions in the loop body itself move, innermost loops first, until none
 * can move further out. */
#include "passes.h"

static int is_loop(const TirOp *op) { return op->code == TIR_FOR || op->code == TIR_WHILE; }

/* Moves the hoistable conversions of loop op's regions before it; returns how many moved. */
static int hoist_from(TirKernel *k, TirOp *loop)
{
    int moved = 0;
    for (int r = 0; r < loop->nregions; r++) {
        TirBlock *body = loop->regions[r];
        for (TirOp *op = body->first, *next; op; op = next) {
            next = op->next;
            if (op->code != TIR_CONVERT_LAYOUT || tir_defined_in(op->ops[0], loop->regions[r]))
                continue;
            int inside_other = 0;
            for (int q = 0; q < loop->nregions; q++)
                inside_other |= tir_defined_in(op->ops[0], loop->regions[q]);
            if (inside_other)
                continue;
            TirOp *c = tir_op_insert_before(k, loop, TIR_CONVERT_LAYOUT, op->loc, op->ops, 1,
                                            &op->results[0]->type, 1);
            c->results[0]->layout = op->results[0]->layout;
            c->results[0]->name = op->results[0]->name;
            tir_replace_uses(body, op->results[0], c->results[0]);
            tir_op_remove(op);
            moved++;
        }
    }
    return moved;
}

static int visit(TirKernel *k, TirBlock *b)
{
    int moved = 0;
    for (TirOp *op = b->first; op; op = op->next) {
        for (int r = 0; r < op->nregions; r++)
            moved += visit(k, op->regions[r]);
        if (is_loop(op))
            moved += hoist_from(k, op);
    }
    return moved;
}

int pass_hoist_conversions(TirKernel *k, const struct Target *t, Diags *d)
{
    (void)t, (void)d;
    for (int round = 0; round < 8 && visit(k, k->body); round++) {}
    return 0;
}
