/* tir_verify.c: structural checks of tile IR, run after building and after every pass:
 * region terminators, operand counts, matching shapes of elementwise operands, and
 * (after the layout pass) a layout on every value. Problems are internal errors. */
#include "tir.h"

typedef struct {
    const TirKernel *k;
    int need_layouts;
    Diags *diags;
    int problems;
} Verifier;

static void problem(Verifier *v, const TirOp *op, const char *what) {
    v->problems++;
    diag_error(v->diags, op->loc, "internal compiler error: tile IR %s: %s (%%%d)",
               tir_opcode_name(op->code), what, op->nres ? op->results[0]->id : -1);
}

static int is_terminator(TirOpcode c) {
    return c == TIR_YIELD || c == TIR_CONDITION || c == TIR_BREAK || c == TIR_CONTINUE ||
           c == TIR_RETURN;
}

static int expected_operands(const TirOp *op, int *min, int *max) {
    static const signed char fixed[TIR_OPCODE_COUNT] = {
        [TIR_CONST] = 0, [TIR_PARAM] = 0, [TIR_PROGRAM_ID] = 0, [TIR_NUM_PROGRAMS] = 0,
        [TIR_ARANGE] = 0, [TIR_SPLAT] = 1, [TIR_EXPAND_DIMS] = 1, [TIR_BROADCAST] = 1,
        [TIR_TRANS] = 1, [TIR_RESHAPE] = 1, [TIR_PERMUTE] = 1, [TIR_JOIN] = 2, [TIR_SPLIT] = 1,
        [TIR_HINT] = 1, [TIR_ASSUME] = 1, [TIR_ASSERT] = 1, [TIR_SCAN] = 1, [TIR_FLIP] = 1, [TIR_SORT] = 1,
        [TIR_CONVERT_LAYOUT] = 1, [TIR_BINARY] = 2, [TIR_CMP] = 2,
        [TIR_UNARY] = 1, [TIR_SELECT] = 3, [TIR_CAST] = 1, [TIR_FMA] = 3, [TIR_ADDPTR] = 2,
        [TIR_REDUCE] = 1, [TIR_DOT] = 3, [TIR_IF] = 1, [TIR_LOCAL_ALLOC] = 0,
        [TIR_LOCAL_STORE] = 3, [TIR_LOCAL_LOAD] = 2, [TIR_ASYNC_COMMIT] = 0,
        [TIR_ASYNC_WAIT] = 0, [TIR_BARRIER] = 0,
    };
    *min = *max = fixed[op->code];
    if (op->code == TIR_LOAD) *min = 1, *max = 3;
    else if (op->code == TIR_STORE) *min = 2, *max = 3;
    else if (op->code == TIR_PREFETCH) *min = 1, *max = 2;
    else if (op->code == TIR_ATOMIC) *min = 2, *max = 4;
    else if (op->code == TIR_ASYNC_COPY) *min = 3, *max = 4;
    else if (op->code == TIR_PRINT) *min = 0, *max = TIR_DEBUG_MAX_VALUES;
    else if (op->code == TIR_INLINE_ASM) *min = 0, *max = 1 << 20;
    else if (op->code == TIR_REDUCE) *min = 1, *max = 2; /* values [, argmax/argmin indices] */
    else if (op->code == TIR_FOR) *min = 3, *max = 1 << 20;
    else if (op->code == TIR_CONDITION) *min = 1, *max = 1 << 20;
    else if (op->code == TIR_WHILE || is_terminator(op->code)) *min = 0, *max = 1 << 20;
    return 0;
}

static int same_shape(const TirType *a, const TirType *b) {
    if (a->rank != b->rank) return 0;
    for (int d = 0; d < a->rank; d++)
        if (a->shape[d] != b->shape[d]) return 0;
    return 1;
}

static void check_elementwise(Verifier *v, const TirOp *op) {
    switch (op->code) {
    case TIR_BINARY: case TIR_CMP: case TIR_UNARY: case TIR_SELECT: case TIR_CAST:
    case TIR_FMA: case TIR_ADDPTR: case TIR_LOAD: case TIR_STORE: case TIR_PREFETCH: case TIR_ATOMIC:
    case TIR_PRINT:
        for (int i = 0; i < op->nops; i++)
            if (!same_shape(&op->ops[i]->type, &op->ops[0]->type))
                problem(v, op, "operand shapes differ");
        break;
    case TIR_INLINE_ASM:
        for (int i = 0; i < op->nops; i++)
            if (!same_shape(&op->ops[i]->type, &op->results[0]->type))
                problem(v, op, "operand shapes differ from the results'");
        for (int i = 0; i < op->nres; i++)
            if (!same_shape(&op->results[i]->type, &op->results[0]->type))
                problem(v, op, "result shapes differ");
        break;
    default: break;
    }
}

static void verify_block(Verifier *v, const TirBlock *b, int is_region);

static void check_regions(Verifier *v, const TirOp *op) {
    int want = op->code == TIR_FOR ? 1 : op->code == TIR_WHILE || op->code == TIR_IF ? 2 : 0;
    if (op->nregions != want) {
        problem(v, op, "wrong number of regions");
        return;
    }
    for (int r = 0; r < op->nregions; r++) {
        if (!op->regions[r]) problem(v, op, "missing region");
        else verify_block(v, op->regions[r], 1);
    }
}

static void check_layouts(Verifier *v, const TirOp *op) {
    for (int i = 0; i < op->nres; i++) {
        const TirValue *r = op->results[i];
        if (!r->layout) problem(v, op, "value without layout");
        else if ((r->type.rank == 0) != (r->layout->kind == LAYOUT_SCALAR))
            problem(v, op, "layout kind does not match rank");
        else if ((r->type.buffers > 0) != (r->layout->kind == LAYOUT_SHARED))
            problem(v, op, "shared layout on a register value, or the reverse");
    }
}

/* Shared buffers are made by local_alloc and only read or written by the shared-memory ops
 * (operand 0); a buffer's tiles have the shape of what is stored into or loaded from it. */
static void check_smem(Verifier *v, const TirOp *op) {
    int takes_buf = op->code == TIR_LOCAL_STORE || op->code == TIR_LOCAL_LOAD || op->code == TIR_ASYNC_COPY;
    for (int i = 0; i < op->nops; i++)
        if (op->ops[i] && op->ops[i]->type.buffers > 0 && !(takes_buf && i == 0) &&
            !(op->code == TIR_DOT && i < 2))
            problem(v, op, "shared buffer used as a register value");
    if (!takes_buf || op->nops < (op->code == TIR_LOCAL_LOAD ? 2 : 3)) return;
    const TirValue *buf = op->ops[0];
    const TirType *tile = op->code == TIR_LOCAL_LOAD ? &op->results[0]->type : &op->ops[2]->type;
    if (buf->type.buffers <= 0) problem(v, op, "operand 0 is not a shared buffer");
    else if (!same_shape(&buf->type, tile)) problem(v, op, "tile shape differs from the buffer's");
    if (op->ops[1]->type.rank != 0) problem(v, op, "buffer index is not a scalar");
}

static void verify_op(Verifier *v, const TirOp *op) {
    int min, max;
    expected_operands(op, &min, &max);
    if (op->nops < min || op->nops > max) problem(v, op, "wrong number of operands");
    for (int i = 0; i < op->nops; i++)
        if (!op->ops[i]) problem(v, op, "null operand");
    check_elementwise(v, op);
    if ((op->code == TIR_PRINT || op->code == TIR_ASSERT) &&
        (op->attr.i < 0 || op->attr.i >= v->k->nsites || v->k->sites[op->attr.i].kind !=
         (op->code == TIR_PRINT ? DEBUG_PRINT : DEBUG_ASSERT)))
        problem(v, op, "no such debug site");
    if (op->code == TIR_INLINE_ASM &&
        (op->attr.i < 0 || op->attr.i >= v->k->nasms || op->nres < 1 || tir_asm_pack(op->attr.i2) < 1))
        problem(v, op, "no such inline assembly, no result or no pack");
    check_smem(v, op);
    check_regions(v, op);
    if (v->need_layouts) check_layouts(v, op);
}

static void verify_block(Verifier *v, const TirBlock *b, int is_region) {
    for (const TirOp *op = b->first; op; op = op->next) {
        if (op->block != b) problem(v, op, "op linked into the wrong block");
        if (is_terminator(op->code) && op->next) problem(v, op, "terminator is not last");
        verify_op(v, op);
    }
    if (is_region && (!b->last || !is_terminator(b->last->code))) {
        v->problems++;
        diag_error(v->diags, (SrcLoc){0}, "internal compiler error: tile IR region without terminator");
    }
    if (v->need_layouts)
        for (int i = 0; i < b->nargs; i++)
            if (!b->args[i]->layout) {
                v->problems++;
                diag_error(v->diags, (SrcLoc){0}, "internal compiler error: block argument without layout");
            }
}

int tir_verify(const TirKernel *k, int need_layouts, Diags *diags) {
    Verifier v = {k, need_layouts, diags, 0};
    verify_block(&v, k->body, 0);
    return v.problems;
}
