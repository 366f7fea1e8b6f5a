/* pass_dce.c: removes ops whose results nothing uses and that have no other effect (the
 * address arithmetic of loads the pipeliner replaced, conversions left unused), so that later
 * passes, dumps and LLVM see only what is computed. */
#include "passes.h"

static int pure(const TirOp *op)
{
    switch (op->code) {
    case TIR_CONST: case TIR_PARAM: case TIR_PROGRAM_ID: case TIR_NUM_PROGRAMS: case TIR_ARANGE:
    case TIR_SPLAT: case TIR_EXPAND_DIMS: case TIR_BROADCAST: case TIR_TRANS:
    case TIR_RESHAPE: case TIR_PERMUTE: case TIR_JOIN: case TIR_SPLIT: case TIR_HINT:
    case TIR_CONVERT_LAYOUT: case TIR_BINARY: case TIR_CMP: case TIR_UNARY: case TIR_SELECT:
    case TIR_CAST: case TIR_FMA: case TIR_ADDPTR: case TIR_LOAD: case TIR_REDUCE: case TIR_SCAN: case TIR_FLIP: case TIR_SORT: case TIR_DOT:
    case TIR_LOCAL_LOAD:
        return 1;
    case TIR_INLINE_ASM: /* unless its assembly has an effect */
        return (op->attr.i2 & TIR_ASM_PURE) != 0;
    default:
        return 0;
    }
}

/* Removes unused pure ops, last to first so chains go in one sweep; returns how many. */
static int sweep(TirBlock *b, int *uses)
{
    int removed = 0;
    for (TirOp *op = b ? b->last : NULL, *prev; op; op = prev) {
        prev = op->prev;
        for (int r = 0; r < op->nregions; r++)
            removed += sweep(op->regions[r], uses);
        if (!pure(op) || op->nres == 0 || tir_op_is_volatile(op))
            continue;
        int used = 0;
        for (int i = 0; i < op->nres; i++)
            used |= uses[op->results[i]->id] != 0;
        if (used)
            continue;
        for (int i = 0; i < op->nops; i++)
            uses[op->ops[i]->id]--;
        tir_op_remove(op);
        removed++;
    }
    return removed;
}

int pass_remove_dead(TirKernel *k, const struct Target *t, Diags *d)
{
    (void)t;
    int *uses = arena_alloc(k->arena, sizeof(int) * (size_t)(k->next_value_id + 1));
    if (!uses) {
        diag_error(d, (SrcLoc){0}, "out of memory removing dead code");
        return -1;
    }
    tir_count_uses(k->body, uses);
    sweep(k->body, uses);
    return 0;
}
