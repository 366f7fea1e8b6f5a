/* pass_sink.c: elementwise tiles computed before a tensor-core dot and first used after it
 * move down to just before that first use. Lowering emits ops in IR order and ptxas keeps
 * much of that order around a tensor-core dot, so a mask written before the dot it masks (flash
 * attention's causal mask: a bool per accumulator element) would stay live across the dot
 * next to its accumulator, and spill. Only pure ops move (no memory, no regions), within
 * their block; operands follow their users down, since the block is walked backwards. */
#include "passes.h"

static int pure_tile_op(const TirOp *op)
{
    if (op->nres != 1 || op->results[0]->type.rank == 0 || op->nregions)
        return 0;
    switch (op->code) {
    case TIR_ARANGE: case TIR_SPLAT: case TIR_BINARY: case TIR_CMP: case TIR_UNARY:
    case TIR_CAST: case TIR_SELECT: case TIR_FMA: case TIR_ADDPTR: case TIR_BROADCAST:
    case TIR_EXPAND_DIMS:
        return 1;
    default:
        return 0;
    }
}

static int block_uses(const TirBlock *b, const TirValue *v);

static int op_uses(const TirOp *op, const TirValue *v)
{
    for (int i = 0; i < op->nops; i++)
        if (op->ops[i] == v)
            return 1;
    for (int r = 0; r < op->nregions; r++)
        if (block_uses(op->regions[r], v))
            return 1;
    return 0;
}

static int block_uses(const TirBlock *b, const TirValue *v)
{
    for (const TirOp *op = b ? b->first : NULL; op; op = op->next)
        if (op_uses(op, v))
            return 1;
    return 0;
}

/* A dot on matrix instructions (a CUDA-core dot is a long run of FMAs that ptxas schedules
 * freely: sinking past it gains nothing there). */
static int tensor_core_dot(const TirOp *op)
{
    const TirLayout *l = op->code == TIR_DOT ? op->results[0]->layout : NULL;
    return l && (l->kind == LAYOUT_MMA || l->kind == LAYOUT_MFMA);
}

/* The first op after `op` in its block that uses its result, when a dot lies between them;
 * NULL otherwise (nothing to gain, or no use in this block). */
static TirOp *sink_target(TirOp *op)
{
    int past_dot = 0;
    for (TirOp *u = op->next; u; u = u->next) {
        if (op_uses(u, op->results[0]))
            return past_dot ? u : NULL;
        past_dot |= tensor_core_dot(u);
    }
    return NULL;
}

static void sink_block(TirBlock *b)
{
    for (TirOp *op = b->last, *prev; op; op = prev) {
        prev = op->prev;
        for (int r = 0; r < op->nregions; r++)
            sink_block(op->regions[r]);
        TirOp *to = pure_tile_op(op) ? sink_target(op) : NULL;
        if (to)
            tir_op_move_before(op, to);
    }
}

int pass_sink_past_dots(TirKernel *k, const struct Target *t, Diags *d)
{
    (void)t, (void)d;
    sink_block(k->body);
    return 0;
}
