/* check_registers.c: a cheap resource check after layout assignment, before LLVM. On GPU
 * targets a tile value lives in its threads' registers; one whose share exceeds the registers
 * a thread can have (the target's max_regs) must spill to local memory, so such a
 * specialization is rejected early with a hint (the tuner then drops it without paying for
 * its compile). */
#include "check_registers.h"
#include "layout.h"
#include "layout_dot.h"
#include "target.h"

/* Data tiles: floats, and whatever is loaded or a dot's result. Pointer, offset and mask
 * tiles are left out: they are recomputed from bases and aranges rather than kept live. */
static int is_data(const TirValue *v) {
    TirOpcode c = v->def ? v->def->code : TIR_YIELD;
    return et_is_float(v->type.elem) || c == TIR_LOAD || c == TIR_DOT;
}

/* Whether some op other than a dot whose wgmma reads it from shared memory uses v in b. */
static int other_use(const TirBlock *b, const Target *t, const TirValue *v) {
    for (const TirOp *op = b ? b->first : NULL; op; op = op->next) {
        for (int i = 0; i < op->nops; i++)
            if (op->ops[i] == v && !(op->code == TIR_DOT && i < 2 && op->block == v->def->block &&
                                     dot_wgmma_reads(t, op, v)))
                return 1;
        for (int r = 0; r < op->nregions; r++)
            if (other_use(op->regions[r], t, v)) return 1;
    }
    return 0;
}

/* A dot operand loaded from memory (a conversion of a load, which goes through a shared buffer
 * in wgmma's layout, or that buffer's local_load) that only wgmma reads: on a target with
 * wgmma it is never in registers. */
static int stays_shared(const TirKernel *k, const Target *t, const TirValue *v) {
    const TirOp *op = v->def;
    if (!op || !layout_wgmma_operand(t, v->layout)) return 0;
    const TirOp *src = op->ops[0]->def;
    int from_memory = op->code == TIR_CONVERT_LAYOUT ? src && src->code == TIR_LOAD
                      : op->code == TIR_LOCAL_LOAD   ? op->ops[0]->layout && op->ops[0]->layout->panel
                                                     : 0;
    return from_memory && !other_use(k->body, t, v);
}

/* 32-bit registers one thread needs for value v. */
static int value_regs(const TirValue *v) {
    if (!v->layout || v->layout->kind == LAYOUT_SCALAR || v->type.buffers || !is_data(v)) return 1;
    int per_thread = layout_regs(v->layout, v->type.shape, v->type.rank);
    int bytes = et_bytes(v->type.elem);
    return (per_thread * bytes + 3) / 4;
}

static const TirValue *largest(const TirKernel *k, const Target *t, const TirBlock *b,
                               const TirValue *best) {
    for (int i = 0; i < b->nargs; i++)
        if (!best || value_regs(b->args[i]) > value_regs(best)) best = b->args[i];
    for (const TirOp *op = b->first; op; op = op->next) {
        for (int i = 0; i < op->nres; i++)
            if ((!best || value_regs(op->results[i]) > value_regs(best)) &&
                !stays_shared(k, t, op->results[i]))
                best = op->results[i];
        for (int r = 0; r < op->nregions; r++) best = largest(k, t, op->regions[r], best);
    }
    return best;
}

int check_registers(const TirKernel *k, const Target *t, Diags *d) {
    if (!t->max_regs) return 0;
    const TirValue *v = largest(k, t, k->body, NULL);
    if (!v || value_regs(v) <= t->max_regs) return 0;
    SrcLoc loc = v->def ? v->def->loc : (SrcLoc){0};
    int64_t numel = 1, held = (int64_t)layout_regs(v->layout, v->type.shape, v->type.rank) *
                              k->num_warps * t->threads_per_warp;
    for (int i = 0; i < v->type.rank; i++)
        numel *= v->type.shape[i];
    /* a layout that repeats the tile across threads (a product too small to spread over the
     * warps: every warp holds all of it) needs as many registers with more warps */
    const char *hint = held > numel ? "use smaller blocks (each element is held by several "
                                      "threads, so more warps would not help)"
                                    : "use more warps or smaller blocks";
    diag_error(d, loc, "tile %s needs %d registers per thread with %d warps (at most %d): %s",
               tir_type_str(k->arena, &v->type), value_regs(v), k->num_warps, t->max_regs, hint);
    return -1;
}
