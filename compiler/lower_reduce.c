/* lower_reduce.c: reductions along one axis. Each thread first combines the elements it
 * holds along the axis, then warp shuffles combine the lanes that hold distinct coordinates
 * (replicas are never combined twice), then shared memory combines the warps. Every thread
 * ends with the results its slice layout owns. argmax/argmin carry (value, index) pairs: NaN
 * counts as the extreme value and ties go to the smaller index. f16/bf16 combine in f32. */
#include <math.h>
#include <llvm-c/Target.h>
#include "lower_int.h"

typedef struct Red {
    TirReduce kind;
    ElemKind ek;    /* operand element kind */
    ElemKind ck;    /* combine kind (f32 for f16/bf16) */
    LLVMTypeRef ct; /* combine type */
    int arg;        /* argmax / argmin */
} Red;

LLVMValueRef lw_shuffle_xor(Lower *L, LLVMValueRef x, int mask)
{
    LLVMTypeRef t = LLVMTypeOf(x);
    int bits = (int)LLVMSizeOfTypeInBits(LLVMGetModuleDataLayout(L->mod), t);
    LLVMTypeRef it = LLVMIntTypeInContext(L->ctx, (unsigned)bits), i32 = lw_i32(L);
    LLVMValueRef v = LLVMBuildBitCast(L->b, x, it, "");
    if (bits <= 32) {
        v = bits < 32 ? LLVMBuildZExt(L->b, v, i32, "") : v;
        v = L->t->shuffle_xor(&L->tc, v, mask);
        v = bits < 32 ? LLVMBuildTrunc(L->b, v, it, "") : v;
    } else {
        LLVMValueRef lo = LLVMBuildTrunc(L->b, v, i32, "");
        LLVMValueRef hi = LLVMBuildTrunc(L->b, LLVMBuildLShr(L->b, v, LLVMConstInt(it, 32, 0), ""), i32, "");
        lo = LLVMBuildZExt(L->b, L->t->shuffle_xor(&L->tc, lo, mask), it, "");
        hi = LLVMBuildZExt(L->b, L->t->shuffle_xor(&L->tc, hi, mask), it, "");
        v = LLVMBuildOr(L->b, lo, LLVMBuildShl(L->b, hi, LLVMConstInt(it, 32, 0), ""), "");
    }
    return LLVMBuildBitCast(L->b, v, t, "");
}

static LLVMValueRef identity(Lower *L, const Red *R)
{
    int isf = et_is_float(R->ck), sgn = et_is_signed(R->ck), bits = et_bits(R->ck);
    int is_max = R->kind == RED_MAX || R->kind == RED_ARGMAX;
    if (R->kind == RED_SUM)
        return LLVMConstNull(R->ct);
    if (isf)
        return LLVMConstReal(R->ct, is_max ? -INFINITY : INFINITY);
    if (!sgn)
        return is_max ? LLVMConstNull(R->ct) : LLVMConstAllOnes(R->ct);
    unsigned long long top = 1ull << (bits - 1);
    return LLVMConstInt(R->ct, is_max ? top : top - 1, 0);
}

static LLVMValueRef prefer(Lower *L, const Red *R, LLVMValueRef b, LLVMValueRef a, int strict)
{
    int is_max = R->kind == RED_MAX || R->kind == RED_ARGMAX;
    if (!et_is_float(R->ck)) {
        int s = et_is_signed(R->ck);
        LLVMIntPredicate p = is_max ? (s ? LLVMIntSGT : LLVMIntUGT) : (s ? LLVMIntSLT : LLVMIntULT);
        return LLVMBuildICmp(L->b, strict ? p : LLVMIntEQ, b, a, "");
    }
    LLVMValueRef bn = LLVMBuildFCmp(L->b, LLVMRealUNO, b, b, "");
    LLVMValueRef an = LLVMBuildFCmp(L->b, LLVMRealUNO, a, a, "");
    if (!strict) {
        LLVMValueRef eq = LLVMBuildFCmp(L->b, LLVMRealOEQ, b, a, "");
        return LLVMBuildOr(L->b, eq, LLVMBuildAnd(L->b, an, bn, ""), "");
    }
    LLVMValueRef gt = LLVMBuildFCmp(L->b, is_max ? LLVMRealOGT : LLVMRealOLT, b, a, "");
    return LLVMBuildOr(L->b, gt, LLVMBuildAnd(L->b, bn, LLVMBuildNot(L->b, an, ""), ""), "");
}

/* Combines (a, ai) with (b, bi) into *v, *vi. */
static void combine(Lower *L, const Red *R, LLVMValueRef a, LLVMValueRef ai, LLVMValueRef b,
                    LLVMValueRef bi, LLVMValueRef *v, LLVMValueRef *vi)
{
    int isf = et_is_float(R->ck);
    LLVMValueRef ab[2] = {a, b};
    LLVMTypeRef t = R->ct;
    if (R->kind == RED_SUM) {
        *v = isf ? LLVMBuildFAdd(L->b, a, b, "") : LLVMBuildAdd(L->b, a, b, "");
    } else if (!R->arg && isf) {
        *v = target_intrinsic(&L->tc, R->kind == RED_MAX ? "llvm.maximum" : "llvm.minimum",
                              &t, 1, ab, 2);
    } else if (!R->arg) {
        *v = LLVMBuildSelect(L->b, prefer(L, R, b, a, 1), b, a, "");
    } else {
        LLVMValueRef better = prefer(L, R, b, a, 1), tie = prefer(L, R, b, a, 0);
        LLVMValueRef lower = LLVMBuildICmp(L->b, LLVMIntSLT, bi, ai, "");
        LLVMValueRef take = LLVMBuildOr(L->b, better, LLVMBuildAnd(L->b, tie, lower, ""), "");
        *v = LLVMBuildSelect(L->b, take, b, a, "");
        *vi = LLVMBuildSelect(L->b, take, bi, ai, "");
    }
}

static LLVMValueRef at(Lower *L, LLVMTypeRef t, LLVMValueRef arr, LLVMValueRef r)
{
    return LLVMBuildGEP2(L->b, t, arr, &r, 1, "");
}

/* Combines into partial[rr] (and index[rr]) the value x with index xi. */
static void accumulate(Lower *L, const Red *R, LLVMValueRef pv, LLVMValueRef pi, LLVMValueRef rr,
                       LLVMValueRef x, LLVMValueRef xi)
{
    LLVMValueRef vp = at(L, R->ct, pv, rr), ip = at(L, lw_i32(L), pi, rr);
    LLVMValueRef a = LLVMBuildLoad2(L->b, R->ct, vp, "");
    LLVMValueRef ai = LLVMBuildLoad2(L->b, lw_i32(L), ip, "");
    LLVMValueRef v, vi = ai;
    combine(L, R, a, ai, x, xi, &v, &vi);
    LLVMBuildStore(L->b, v, vp);
    LLVMBuildStore(L->b, vi, ip);
}

static LLVMValueRef load_at(Lower *L, LLVMTypeRef t, LLVMValueRef arr, LLVMValueRef r)
{
    return LLVMBuildLoad2(L->b, t, at(L, t, arr, r), "");
}

/* Phase 1: each thread over its own registers along the axis. */
static void reduce_thread(Lower *L, const Red *R, TirValue *src, const LayoutInfo *si,
                          const LayoutInfo *ri, int pd, LLVMValueRef pv, LLVMValueRef pi)
{
    int un = L->t->unroll_elements;
    ElemLoop lo, li;
    LLVMValueRef rr = lw_loop_begin(L, &lo, ri->R, un), i[TIR_MAX_RANK], c[TIR_MAX_RANK];
    LLVMBuildStore(L->b, identity(L, R), at(L, R->ct, pv, rr));
    LLVMBuildStore(L->b, lw_i32c(L, 0x7fffffff), at(L, lw_i32(L), pi, rr));
    layout_emit_reg_split(L->b, ri, rr, i);
    LLVMValueRef j = lw_loop_begin(L, &li, si->n[pd], un);
    i[pd] = j;
    LLVMValueRef r = layout_emit_reg_join(L->b, si, i);
    layout_emit_parent_coords(L->b, si, L->tid, r, c);
    LLVMValueRef x = lw_cast(L, lw_get(L, src, r), R->ek, R->ck);
    accumulate(L, R, pv, pi, rr, x, c[pd]);
    lw_loop_end(L, &li);
    lw_loop_end(L, &lo);
}

/* Phase 2: butterfly over the lanes holding distinct coordinates along the axis. */
static void reduce_lanes(Lower *L, const Red *R, const LayoutInfo *si, const LayoutInfo *ri,
                         int pd, LLVMValueRef pv, LLVMValueRef pi)
{
    int nl = layout_distinct_lanes(si, pd);
    for (int m = 1; m < nl; m *= 2) {
        ElemLoop lp;
        LLVMValueRef rr = lw_loop_begin(L, &lp, ri->R, L->t->unroll_elements);
        LLVMValueRef v = load_at(L, R->ct, pv, rr), vi = load_at(L, lw_i32(L), pi, rr);
        LLVMValueRef ov = lw_shuffle_xor(L, v, m * si->lstride[pd]);
        LLVMValueRef oi = R->arg ? lw_shuffle_xor(L, vi, m * si->lstride[pd]) : vi;
        accumulate(L, R, pv, pi, rr, ov, oi);
        lw_loop_end(L, &lp);
    }
}

static LLVMValueRef result_linear(Lower *L, TirValue *res, const LayoutInfo *ri, LLVMValueRef rr)
{
    LLVMValueRef c[TIR_MAX_RANK], idx = lw_i32c(L, 0);
    layout_emit_coords(L->b, ri, L->tid, rr, c);
    for (int d = 0; d < res->type.rank; d++)
        idx = LLVMBuildAdd(L->b, LLVMBuildMul(L->b, idx, lw_i32c(L, res->type.shape[d]), ""),
                           c[d], "");
    return idx;
}

/* Phase 3: across warps through shared memory (values, then indices). */
static void reduce_warps(Lower *L, const Red *R, TirValue *res, const LayoutInfo *si,
                         const LayoutInfo *ri, int pd, LLVMValueRef pv, LLVMValueRef pi)
{
    int nw = layout_distinct_warps(si, pd), un = L->t->unroll_elements;
    if (nw <= 1)
        return;
    int numel = res->type.rank ? tir_type_numel(&res->type) : 1;
    int vbytes = (numel * nw * (int)LLVMABISizeOfType(LLVMGetModuleDataLayout(L->mod), R->ct) + 15) / 16 * 16;
    LLVMValueRef base = lw_smem(L, vbytes + numel * nw * 4);
    LLVMValueRef ibase = LLVMBuildGEP2(L->b, LLVMInt8TypeInContext(L->ctx), base,
                                       (LLVMValueRef[]){lw_i32c(L, vbytes)}, 1, "");
    L->t->barrier(&L->tc);
    ElemLoop lp;
    LLVMValueRef rr = lw_loop_begin(L, &lp, ri->R, un);
    LLVMValueRef w = LLVMBuildURem(L->b, layout_emit_warp_d(L->b, si, L->tid, pd), lw_i32c(L, nw), "");
    LLVMValueRef slot = LLVMBuildAdd(L->b, LLVMBuildMul(L->b, result_linear(L, res, ri, rr), lw_i32c(L, nw), ""), w, "");
    lw_smem_store(L, load_at(L, R->ct, pv, rr), at(L, R->ct, base, slot));
    lw_smem_store(L, load_at(L, lw_i32(L), pi, rr), at(L, lw_i32(L), ibase, slot));
    lw_loop_end(L, &lp);
    L->t->barrier(&L->tc);
    rr = lw_loop_begin(L, &lp, ri->R, un);
    LLVMBuildStore(L->b, identity(L, R), at(L, R->ct, pv, rr));
    LLVMBuildStore(L->b, lw_i32c(L, 0x7fffffff), at(L, lw_i32(L), pi, rr));
    LLVMValueRef first = LLVMBuildMul(L->b, result_linear(L, res, ri, rr), lw_i32c(L, nw), "");
    for (int k = 0; k < nw; k++) {
        LLVMValueRef s = LLVMBuildAdd(L->b, first, lw_i32c(L, k), "");
        LLVMValueRef sv = lw_smem_load(L, R->ct, at(L, R->ct, base, s));
        LLVMValueRef si = lw_smem_load(L, lw_i32(L), at(L, lw_i32(L), ibase, s));
        accumulate(L, R, pv, pi, rr, sv, si);
    }
    lw_loop_end(L, &lp);
    L->t->barrier(&L->tc);
}

static void write_result(Lower *L, const Red *R, TirValue *res, const LayoutInfo *ri,
                         LLVMValueRef pv, LLVMValueRef pi)
{
    ElemKind rk = res->type.elem;
    if (res->type.rank == 0) {
        LLVMValueRef z = lw_i32c(L, 0);
        lw_bind(L, res, R->arg ? load_at(L, lw_i32(L), pi, z)
                               : lw_cast(L, load_at(L, R->ct, pv, z), R->ck, rk));
        return;
    }
    lw_bind(L, res, lw_tile_storage(L, res));
    ElemLoop lp;
    LLVMValueRef rr = lw_loop_begin(L, &lp, ri->R, L->t->unroll_elements);
    LLVMValueRef x = R->arg ? load_at(L, lw_i32(L), pi, rr)
                            : lw_cast(L, load_at(L, R->ct, pv, rr), R->ck, rk);
    lw_set(L, res, rr, x);
    lw_loop_end(L, &lp);
}

int lower_reduce(Lower *L, TirOp *op)
{
    TirValue *src = op->ops[0], *res = op->results[0];
    int axis = (int)op->attr.i2;
    Red R = {.kind = (TirReduce)op->attr.i, .ek = src->type.elem};
    R.arg = R.kind == RED_ARGMAX || R.kind == RED_ARGMIN;
    R.ck = (R.ek == ET_F16 || R.ek == ET_BF16) ? ET_F32 : R.ek;
    R.ct = lw_type(L, R.ck);
    int pd = layout_parent_dim(src->layout, axis);
    TirLayout sl = layout_slice(src->layout, axis);
    if (pd < 0 || (res->type.rank && !tir_layout_equal(&sl, res->layout)))
        return lw_fail(L, op, "internal compiler error: reduce result layout is not a slice");
    LayoutInfo si, ri;
    lw_info(&si, src);
    layout_info(&ri, &sl, res->type.shape, res->type.rank);
    LLVMValueRef pv = lw_alloca(L, R.ct, ri.R, "red.v"), pi = lw_alloca(L, lw_i32(L), ri.R, "red.i");
    reduce_thread(L, &R, src, &si, &ri, pd, pv, pi);
    reduce_lanes(L, &R, &si, &ri, pd, pv, pi);
    reduce_warps(L, &R, res, &si, &ri, pd, pv, pi);
    write_result(L, &R, res, &ri, pv, pi);
    return 0;
}
