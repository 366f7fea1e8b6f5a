/* lower_debug.c: print and device_assert (TIR_PRINT, TIR_ASSERT) as records in the launch's
 * debug buffer, the kernel's last param (layout in compiler/debug_abi.h). Each element is
 * recorded once, by the thread that owns it; the runtime sorts and prints the records after
 * the launch. A print record carries the how-manieth print its thread ran: every thread of a
 * program runs the same prints (control flow is uniform), so the count names one run of a
 * print in the program and the runtime can put each run's elements back together. */
#include <string.h>
#include "debug_abi.h"
#include "lower_int.h"

static LLVMValueRef word_ptr(Lower *L, LLVMValueRef index)
{
    LLVMValueRef buf = L->params[L->k->nparams];
    return LLVMBuildGEP2(L->b, lw_i32(L), buf, &index, 1, "");
}

static void store_word(Lower *L, LLVMValueRef index, LLVMValueRef x)
{
    LLVMBuildStore(L->b, x, word_ptr(L, index));
}

static unsigned gpu_scope(Lower *L)
{
    const char *name = L->t->sync_scopes[SCOPE_GPU];
    name = name ? name : "";
    return LLVMGetSyncScopeID(L->ctx, name, strlen(name));
}

/* Opens `if (cond)`; returns the join block (lw_end_if closes it). */
static LLVMBasicBlockRef open_if(Lower *L, LLVMValueRef cond, const char *name)
{
    LLVMBasicBlockRef then = lw_block(L, name), join = lw_block(L, "debug.join");
    LLVMBuildCondBr(L->b, cond, then, join);
    LLVMPositionBuilderAtEnd(L->b, then);
    return join;
}

/* Row-major index of v's element r in this thread (0 for scalars). */
static LLVMValueRef flat_index(Lower *L, const TirValue *v, LLVMValueRef r)
{
    if (v->type.rank == 0)
        return lw_i32c(L, 0);
    LLVMValueRef coord[TIR_MAX_RANK], flat = lw_i32c(L, 0);
    lw_coords(L, v, r, coord);
    for (int d = 0; d < v->type.rank; d++)
        flat = LLVMBuildAdd(L->b, LLVMBuildMul(L->b, flat, lw_i32c(L, v->type.shape[d]), ""),
                            coord[d], "");
    return flat;
}

/* The 64 bits a record holds for x of kind k (debug_abi.h). */
static LLVMValueRef bits64(Lower *L, LLVMValueRef x, ElemKind k)
{
    LLVMTypeRef i64 = LLVMInt64TypeInContext(L->ctx);
    if (k == ET_PTR)
        return LLVMBuildPtrToInt(L->b, x, i64, "");
    if (et_is_float(k)) {
        LLVMTypeRef f64 = LLVMDoubleTypeInContext(L->ctx);
        return LLVMBuildBitCast(L->b, k == ET_F64 ? x : LLVMBuildFPExt(L->b, x, f64, ""), i64, "");
    }
    if (k == ET_I64 || k == ET_U64)
        return x;
    return et_is_signed(k) ? LLVMBuildSExt(L->b, x, i64, "") : LLVMBuildZExt(L->b, x, i64, "");
}

static void write_record(Lower *L, LLVMValueRef slot, LLVMValueRef head, LLVMValueRef run,
                         LLVMValueRef index, LLVMValueRef value)
{
    LLVMValueRef base = LLVMBuildAdd(L->b, lw_i32c(L, DEBUG_HEADER_WORDS),
                                     LLVMBuildMul(L->b, slot, lw_i32c(L, DEBUG_RECORD_WORDS), ""), "");
    LLVMTypeRef i32 = lw_i32(L);
    LLVMValueRef words[DEBUG_RECORD_WORDS] = {
        head, run, index, L->t->program_id(&L->tc, 0), L->t->program_id(&L->tc, 1),
        L->t->program_id(&L->tc, 2), LLVMBuildTrunc(L->b, value, i32, ""),
        LLVMBuildTrunc(L->b, LLVMBuildLShr(L->b, value, LLVMConstInt(LLVMTypeOf(value), 32, 0), ""), i32, ""),
    };
    for (int w = 0; w < DEBUG_RECORD_WORDS; w++)
        store_word(L, LLVMBuildAdd(L->b, base, lw_i32c(L, w), ""), words[w]);
}

/* Element r of a print: claims one record per value and writes those that fit. */
static void print_element(Lower *L, TirOp *op, LLVMValueRef r, LLVMValueRef run)
{
    int n = op->nops ? op->nops : 1;
    LLVMValueRef slot = LLVMBuildAtomicRMWSyncScope(
        L->b, LLVMAtomicRMWBinOpAdd, word_ptr(L, lw_i32c(L, DEBUG_PRINT_COUNT)), lw_i32c(L, n),
        LLVMAtomicOrderingMonotonic, gpu_scope(L));
    LLVMValueRef index = op->nops ? flat_index(L, op->ops[0], r) : lw_i32c(L, 0);
    for (int j = 0; j < n; j++) {
        LLVMValueRef at = LLVMBuildAdd(L->b, slot, lw_i32c(L, j), "");
        LLVMBasicBlockRef join = open_if(L, LLVMBuildICmp(L->b, LLVMIntULT, at, lw_i32c(L, DEBUG_RECORDS), ""),
                                         "print.fits");
        LLVMValueRef x = op->nops ? bits64(L, lw_get(L, op->ops[j], r), op->ops[j]->type.elem)
                                  : LLVMConstInt(LLVMInt64TypeInContext(L->ctx), 0, 0);
        write_record(L, at, lw_i32c(L, (int)op->attr.i | j << 16), run, index, x);
        lw_end_if(L, join);
    }
}

/* This thread's count of prints run, then one more. */
static LLVMValueRef next_run(Lower *L)
{
    if (!L->prints_run) {
        L->prints_run = lw_alloca(L, lw_i32(L), 1, "prints_run");
        LLVMBuildStore(L->prologue, lw_i32c(L, 0), L->prints_run);
    }
    LLVMValueRef run = LLVMBuildLoad2(L->b, lw_i32(L), L->prints_run, "");
    LLVMBuildStore(L->b, LLVMBuildAdd(L->b, run, lw_i32c(L, 1), ""), L->prints_run);
    return run;
}

static int lower_print(Lower *L, TirOp *op)
{
    LLVMValueRef run = next_run(L);
    TirValue *shape_of = op->nops ? op->ops[0] : NULL;
    LLVMValueRef own = NULL;
    if (!shape_of || shape_of->type.rank == 0)
        own = L->k->num_warps * L->k->threads_per_warp > 1
                  ? LLVMBuildICmp(L->b, LLVMIntEQ, L->tid, lw_i32c(L, 0), "thread0") : NULL;
    else
        own = lw_writer(L, shape_of);
    LLVMBasicBlockRef join = own ? open_if(L, own, "print") : NULL;
    ElemLoop lp;
    int n = shape_of && shape_of->type.rank ? lw_regs(L, shape_of) : 1;
    LW_FOR(L, &lp, n, L->t->unroll_elements, r) {
        print_element(L, op, r, run);
    }
    if (join)
        lw_end_if(L, join);
    return 0;
}

/* Element r of a failed assertion: the first failure of the launch claims the header. */
static void assert_element(Lower *L, TirOp *op, LLVMValueRef r, LLVMValueRef own)
{
    TirValue *cond = op->ops[0];
    LLVMValueRef bad = LLVMBuildNot(L->b, lw_get(L, cond, r), "");
    if (own)
        bad = LLVMBuildAnd(L->b, bad, own, "");
    LLVMBasicBlockRef join = open_if(L, bad, "assert.failed");
    LLVMValueRef pair = LLVMBuildAtomicCmpXchgSyncScope(
        L->b, word_ptr(L, lw_i32c(L, DEBUG_ASSERT_SITE)), lw_i32c(L, 0),
        lw_i32c(L, (int)op->attr.i + 1), LLVMAtomicOrderingMonotonic,
        LLVMAtomicOrderingMonotonic, gpu_scope(L));
    LLVMValueRef won = LLVMBuildExtractValue(L->b, pair, 1, "");
    LLVMBasicBlockRef join2 = open_if(L, won, "assert.first");
    for (int axis = 0; axis < 3; axis++)
        store_word(L, lw_i32c(L, DEBUG_ASSERT_PID + axis), L->t->program_id(&L->tc, axis));
    store_word(L, lw_i32c(L, DEBUG_ASSERT_INDEX), flat_index(L, cond, r));
    lw_end_if(L, join2);
    lw_end_if(L, join);
}

static int lower_assert(Lower *L, TirOp *op)
{
    TirValue *cond = op->ops[0];
    LLVMValueRef own = lw_writer(L, cond);
    ElemLoop lp;
    LW_FOR(L, &lp, cond->type.rank ? lw_regs(L, cond) : 1, L->t->unroll_elements, r) {
        assert_element(L, op, r, own);
    }
    return 0;
}

int lower_debug(Lower *L, TirOp *op)
{
    if (L->k->nsites <= 0)
        return lw_fail(L, op, "a debug op in a kernel without debug sites");
    return op->code == TIR_PRINT ? lower_print(L, op) : lower_assert(L, op);
}
