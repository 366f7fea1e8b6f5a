/* lower_control.c: structured control flow (for, while, if) as LLVM CFG, and the region
 * terminators (yield, condition, break, continue, return). Loop-carried values, loop results
 * and if results live in entry-block allocas ("slots") that mem2reg/SROA promote. */
#include "lower_int.h"

static LLVMValueRef *slots_new(Lower *L, TirValue **tmpl, int n)
{
    LLVMValueRef *s = arena_alloc(L->k->arena, sizeof(LLVMValueRef) * (size_t)(n + 1));
    for (int i = 0; s && i < n; i++)
        s[i] = tmpl[i]->type.rank ? lw_tile_storage(L, tmpl[i])
                                  : lw_alloca(L, lw_type(L, tmpl[i]->type.elem), 1, "slot");
    return s;
}

/* A tile source that is some other slot of the same set would be clobbered by a direct copy. */
static int slots_hazard(Lower *L, TirValue **src, int n, LLVMValueRef *slots)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; src[i]->type.rank && j < n; j++)
            if (j != i && lw_val(L, src[i]) == slots[j])
                return 1;
    return 0;
}

static void slots_store(Lower *L, TirValue **src, int n, LLVMValueRef *slots)
{
    LLVMValueRef tmp[64];
    int hazard = n <= 64 && slots_hazard(L, src, n, slots);
    for (int i = 0; i < n; i++) {
        if (!src[i]->type.rank) {
            LLVMBuildStore(L->b, lw_val(L, src[i]), slots[i]);
        } else if (hazard) {
            tmp[i] = lw_tile_storage(L, src[i]);
            lw_store_tile(L, src[i], tmp[i]);
        } else {
            lw_store_tile(L, src[i], slots[i]);
        }
    }
    for (int i = 0; hazard && i < n; i++)
        if (src[i]->type.rank)
            lw_copy_tile(L, src[i], slots[i], tmp[i]);
}

/* Binds values to the contents of slots: tiles alias the slot, scalars are loaded. */
static void slots_bind(Lower *L, TirValue **vals, int n, LLVMValueRef *slots)
{
    for (int i = 0; i < n; i++)
        lw_bind(L, vals[i], vals[i]->type.rank
                                ? slots[i]
                                : LLVMBuildLoad2(L->b, lw_type(L, vals[i]->type.elem),
                                                 slots[i], ""));
}

static void branch_if_open(Lower *L, LLVMBasicBlockRef to)
{
    if (!LLVMGetBasicBlockTerminator(LLVMGetInsertBlock(L->b)))
        LLVMBuildBr(L->b, to);
}

static int lower_region(Lower *L, TirBlock *b, RegionTargets *rt, LLVMBasicBlockRef fallthrough)
{
    rt->outer = L->region;
    L->region = rt;
    int rc = b ? lower_block(L, b) : 0;
    L->region = rt->outer;
    branch_if_open(L, fallthrough);
    return rc;
}

/* Whether the loop runs (again): iv < hi going up, iv > hi going down; a step of 0 (possible
 * at run time) runs nothing rather than forever. */
static LLVMValueRef for_condition(Lower *L, LLVMValueRef iv, LLVMValueRef hi, LLVMValueRef step)
{
    LLVMValueRef zero = LLVMConstInt(LLVMTypeOf(step), 0, 0);
    LLVMValueRef up = LLVMBuildICmp(L->b, LLVMIntSGT, step, zero, "");
    LLVMValueRef down = LLVMBuildICmp(L->b, LLVMIntSLT, step, zero, "");
    LLVMValueRef lt = LLVMBuildICmp(L->b, LLVMIntSLT, iv, hi, "");
    LLVMValueRef gt = LLVMBuildICmp(L->b, LLVMIntSGT, iv, hi, "");
    LLVMValueRef no = LLVMConstInt(LLVMInt1TypeInContext(L->ctx), 0, 0);
    return LLVMBuildSelect(L->b, up, lt, LLVMBuildSelect(L->b, down, gt, no, ""), "");
}

/* Whether iv + step wrapped past the type's end (range(2147483640, n, 7) near INT32_MAX): the
 * next iv is then `hi`, which ends the loop, instead of going on from the other end forever
 * (a select rather than a second exit, which costs registers in the GPU's pipelined loops). */
static LLVMValueRef for_wrapped(Lower *L, LLVMValueRef cur, LLVMValueRef next, LLVMValueRef step)
{
    LLVMValueRef zero = LLVMConstInt(LLVMTypeOf(step), 0, 0);
    LLVMValueRef up = LLVMBuildICmp(L->b, LLVMIntSGT, step, zero, "");
    LLVMValueRef below = LLVMBuildICmp(L->b, LLVMIntSLT, next, cur, "");
    LLVMValueRef above = LLVMBuildICmp(L->b, LLVMIntSGT, next, cur, "");
    return LLVMBuildSelect(L->b, up, below, above, "");
}

static int lower_for(Lower *L, TirOp *op)
{
    int n = op->nres;
    TirBlock *body = op->regions[0];
    LLVMValueRef lo = lw_val(L, op->ops[0]), hi = lw_val(L, op->ops[1]);
    LLVMValueRef step = lw_val(L, op->ops[2]);
    LLVMValueRef *slots = slots_new(L, op->results, n);
    LLVMValueRef ivslot = lw_alloca(L, LLVMTypeOf(lo), 1, "iv");
    slots_store(L, op->ops + 3, n, slots);
    LLVMBuildStore(L->b, lo, ivslot);
    LLVMBasicBlockRef head = lw_block(L, "for.head"), bodyb = lw_block(L, "for.body");
    LLVMBasicBlockRef latch = lw_block(L, "for.latch"), exit = lw_block(L, "for.exit");
    LLVMBuildBr(L->b, head);
    LLVMPositionBuilderAtEnd(L->b, head);
    LLVMValueRef iv = LLVMBuildLoad2(L->b, LLVMTypeOf(lo), ivslot, "iv");
    LLVMBuildCondBr(L->b, for_condition(L, iv, hi, step), bodyb, exit);
    LLVMPositionBuilderAtEnd(L->b, bodyb);
    lw_bind(L, body->args[0], iv);
    slots_bind(L, body->args + 1, n, slots);
    LoopTargets lt = {op, exit, latch, slots, slots, L->loop};
    RegionTargets rt = {.yield_bb = latch, .yield_slots = slots, .owner = op};
    L->loop = &lt;
    int rc = lower_region(L, body, &rt, latch);
    L->loop = lt.outer;
    LLVMPositionBuilderAtEnd(L->b, latch);
    LLVMValueRef cur = LLVMBuildLoad2(L->b, LLVMTypeOf(lo), ivslot, "");
    LLVMValueRef next = LLVMBuildAdd(L->b, cur, step, "");
    next = LLVMBuildSelect(L->b, for_wrapped(L, cur, next, step), hi, next, ""); /* then it ends */
    LLVMBuildStore(L->b, next, ivslot);
    LLVMBuildBr(L->b, head);
    LLVMPositionBuilderAtEnd(L->b, exit);
    slots_bind(L, op->results, n, slots);
    if (lw_epoch_wanted(L, op))
        lw_new_epoch(L);
    return rc;
}

static int lower_while(Lower *L, TirOp *op)
{
    int n = op->nres;
    LLVMValueRef *a = slots_new(L, op->results, n), *b = slots_new(L, op->results, n);
    slots_store(L, op->ops, n, a);
    LLVMBasicBlockRef before = lw_block(L, "while.cond"), body = lw_block(L, "while.body");
    LLVMBasicBlockRef exit = lw_block(L, "while.exit");
    LLVMBuildBr(L->b, before);
    LLVMPositionBuilderAtEnd(L->b, before);
    slots_bind(L, op->regions[0]->args, n, a);
    RegionTargets rc_ = {.true_bb = body, .false_bb = exit, .cond_slots = b, .owner = op};
    int rc = lower_region(L, op->regions[0], &rc_, exit);
    LLVMPositionBuilderAtEnd(L->b, body);
    slots_bind(L, op->regions[1]->args, n, b);
    LoopTargets lt = {op, exit, before, b, a, L->loop};
    RegionTargets rb = {.yield_bb = before, .yield_slots = a, .owner = op};
    L->loop = &lt;
    rc |= lower_region(L, op->regions[1], &rb, before);
    L->loop = lt.outer;
    LLVMPositionBuilderAtEnd(L->b, exit);
    slots_bind(L, op->results, n, b);
    return rc;
}

static int lower_if(Lower *L, TirOp *op)
{
    LLVMValueRef *slots = slots_new(L, op->results, op->nres);
    LLVMBasicBlockRef tb = lw_block(L, "if.then"), eb = lw_block(L, "if.else");
    LLVMBasicBlockRef merge = lw_block(L, "if.end");
    LLVMBuildCondBr(L->b, lw_val(L, op->ops[0]), tb, eb);
    RegionTargets rt = {.yield_bb = merge, .yield_slots = slots, .owner = op};
    LLVMPositionBuilderAtEnd(L->b, tb);
    int rc = lower_region(L, op->regions[0], &rt, merge);
    LLVMPositionBuilderAtEnd(L->b, eb);
    rc |= lower_region(L, op->nregions > 1 ? op->regions[1] : NULL, &rt, merge);
    LLVMPositionBuilderAtEnd(L->b, merge);
    slots_bind(L, op->results, op->nres, slots);
    return rc;
}

/* After a terminator, later code (if any) goes to a block nothing reaches. */
static void start_dead_block(Lower *L)
{
    LLVMPositionBuilderAtEnd(L->b, lw_block(L, "dead"));
}

static int lower_terminator(Lower *L, TirOp *op)
{
    RegionTargets *rt = L->region;
    LoopTargets *lt = L->loop;
    switch (op->code) {
    case TIR_YIELD:
        if (!rt || !rt->yield_bb)
            return lw_fail(L, op, "internal compiler error: yield outside a region");
        slots_store(L, op->ops, op->nops, rt->yield_slots);
        LLVMBuildBr(L->b, rt->yield_bb);
        break;
    case TIR_CONDITION:
        if (!rt || !rt->true_bb)
            return lw_fail(L, op, "internal compiler error: condition outside a while");
        slots_store(L, op->ops + 1, op->nops - 1, rt->cond_slots);
        LLVMBuildCondBr(L->b, lw_val(L, op->ops[0]), rt->true_bb, rt->false_bb);
        break;
    case TIR_BREAK: case TIR_CONTINUE:
        if (!lt)
            return lw_fail(L, op, "internal compiler error: break/continue outside a loop");
        slots_store(L, op->ops, op->nops, op->code == TIR_BREAK ? lt->res_slots : lt->cont_slots);
        LLVMBuildBr(L->b, op->code == TIR_BREAK ? lt->brk : lt->cont);
        break;
    case TIR_RETURN: LLVMBuildBr(L->b, L->ret_bb); break;
    default: return lw_fail(L, op, "internal compiler error: op not supported by lowering");
    }
    start_dead_block(L);
    return 0;
}

int lower_control(Lower *L, TirOp *op)
{
    switch (op->code) {
    case TIR_FOR: return lower_for(L, op);
    case TIR_WHILE: return lower_while(L, op);
    case TIR_IF: return lower_if(L, op);
    default: return lower_terminator(L, op);
    }
}
