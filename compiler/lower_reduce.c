/* lower_reduce.c: reductions along one axis. Each thread first combines the elements it
 * holds along the axis, then warp shuffles combine the lanes that hold distinct coordinates
 * (replicas are never combined twice). Every thread ends with the results its slice layout
 * owns. Warps along the axis never meet here: pass_reduce.c splits such reductions into a
 * per-warp partial reduction (the axis keeps one coordinate per warp), a layout conversion
 * and an in-thread reduction, whose index operand carries argmax/argmin positions.
 * argmax/argmin carry (value, index) pairs: NaN counts as the extreme value and ties go to the
 * smaller index (the larger for the _LAST kinds). f16/bf16 combine in f32. */
#include <math.h>
#include <llvm-c/Target.h>
#include "lower_int.h"

typedef struct Red {
    TirReduce kind;
    ElemKind ek;    /* operand element kind */
    ElemKind ck;    /* combine kind (f32 for f16/bf16) */
    LLVMTypeRef ct; /* combine type */
    int arg;        /* argmax / argmin */
    int last;       /* ties go to the larger index */
} Red;

static LLVMValueRef shuffle32(Lower *L, LLVMValueRef v, int mask, LLVMValueRef lane)
{
    return lane ? L->t->shuffle_idx(&L->tc, v, lane) : L->t->shuffle_xor(&L->tc, v, mask);
}

/* A value of any type up to 64 bits through 32-bit shuffles (xor `mask`, or from `lane`). */
static LLVMValueRef shuffle(Lower *L, LLVMValueRef x, int mask, LLVMValueRef lane)
{
    LLVMTypeRef t = LLVMTypeOf(x);
    int bits = (int)LLVMSizeOfTypeInBits(LLVMGetModuleDataLayout(L->mod), t);
    LLVMTypeRef it = LLVMIntTypeInContext(L->ctx, (unsigned)bits), i32 = lw_i32(L);
    LLVMValueRef v = LLVMGetTypeKind(t) == LLVMPointerTypeKind ? LLVMBuildPtrToInt(L->b, x, it, "")
                                                                 : LLVMBuildBitCast(L->b, x, it, "");
    if (bits <= 32) {
        v = bits < 32 ? LLVMBuildZExt(L->b, v, i32, "") : v;
        v = shuffle32(L, v, mask, lane);
        v = bits < 32 ? LLVMBuildTrunc(L->b, v, it, "") : v;
    } else {
        LLVMValueRef lo = LLVMBuildTrunc(L->b, v, i32, "");
        LLVMValueRef hi = LLVMBuildTrunc(L->b, LLVMBuildLShr(L->b, v, LLVMConstInt(it, 32, 0), ""), i32, "");
        lo = LLVMBuildZExt(L->b, shuffle32(L, lo, mask, lane), it, "");
        hi = LLVMBuildZExt(L->b, shuffle32(L, hi, mask, lane), it, "");
        v = LLVMBuildOr(L->b, lo, LLVMBuildShl(L->b, hi, LLVMConstInt(it, 32, 0), ""), "");
    }
    return LLVMGetTypeKind(t) == LLVMPointerTypeKind ? LLVMBuildIntToPtr(L->b, v, t, "")
                                                     : LLVMBuildBitCast(L->b, v, t, "");
}

LLVMValueRef lw_shuffle_xor(Lower *L, LLVMValueRef x, int mask) { return shuffle(L, x, mask, NULL); }
LLVMValueRef lw_shuffle_idx(Lower *L, LLVMValueRef x, LLVMValueRef lane) { return shuffle(L, x, 0, lane); }

static LLVMValueRef identity(Lower *L, const Red *R)
{
    int isf = et_is_float(R->ck), sgn = et_is_signed(R->ck), bits = et_bits(R->ck);
    int is_max = tir_reduce_is_max(R->kind);
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
    int is_max = tir_reduce_is_max(R->kind);
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
        LLVMValueRef wins = LLVMBuildICmp(L->b, R->last ? LLVMIntSGT : LLVMIntSLT, bi, ai, "");
        LLVMValueRef take = LLVMBuildOr(L->b, better, LLVMBuildAnd(L->b, tie, wins, ""), "");
        *v = LLVMBuildSelect(L->b, take, b, a, "");
        *vi = LLVMBuildSelect(L->b, take, bi, ai, "");
    }
}

/* Each result register's running (value, index): SSA values on targets that unroll the
 * element loops (register numbers are constants there), else arrays in memory. */
typedef struct Partial {
    LLVMValueRef mem_v, mem_i; /* memory: [nr x ct] and [nr x i32] */
    LLVMValueRef *v, *i;       /* SSA: nr each */
} Partial;

static int partial_init(Lower *L, const Red *R, int nr, Partial *p)
{
    if (!L->t->unroll_elements) {
        p->mem_v = lw_alloca(L, R->ct, nr, "red.v");
        p->mem_i = lw_alloca(L, lw_i32(L), nr, "red.i");
        p->v = p->i = NULL;
        return 0;
    }
    p->v = arena_alloc(L->k->arena, 2 * sizeof(LLVMValueRef) * (size_t)nr);
    p->i = p->v ? p->v + nr : NULL;
    return p->v ? 0 : -1;
}

static int reg_number(LLVMValueRef rr) { return (int)LLVMConstIntGetZExtValue(rr); }

static LLVMValueRef at(Lower *L, LLVMTypeRef t, LLVMValueRef arr, LLVMValueRef r)
{
    return LLVMBuildGEP2(L->b, t, arr, &r, 1, "");
}

static LLVMValueRef get_value(Lower *L, const Red *R, const Partial *p, LLVMValueRef rr)
{
    return p->v ? p->v[reg_number(rr)] : LLVMBuildLoad2(L->b, R->ct, at(L, R->ct, p->mem_v, rr), "");
}

/* The index of register rr; only argmax and argmin keep indices (else undef). */
static LLVMValueRef get_index(Lower *L, const Red *R, const Partial *p, LLVMValueRef rr)
{
    if (!R->arg)
        return LLVMGetUndef(lw_i32(L));
    return p->v ? p->i[reg_number(rr)] : LLVMBuildLoad2(L->b, lw_i32(L), at(L, lw_i32(L), p->mem_i, rr), "");
}

static void set_partial(Lower *L, const Red *R, const Partial *p, LLVMValueRef rr, LLVMValueRef v,
                        LLVMValueRef vi)
{
    if (p->v) {
        p->v[reg_number(rr)] = v, p->i[reg_number(rr)] = vi;
        return;
    }
    LLVMBuildStore(L->b, v, at(L, R->ct, p->mem_v, rr));
    if (R->arg)
        LLVMBuildStore(L->b, vi, at(L, lw_i32(L), p->mem_i, rr));
}

/* Combines into register rr's partial the value x with index xi. */
static void accumulate(Lower *L, const Red *R, const Partial *p, LLVMValueRef rr, LLVMValueRef x,
                       LLVMValueRef xi)
{
    LLVMValueRef ai = get_index(L, R, p, rr), v, vi = ai;
    combine(L, R, get_value(L, R, p, rr), ai, x, xi, &v, &vi);
    set_partial(L, R, p, rr, v, vi);
}

/* Which index bits of the operand's layout move along the reduced axis. */
typedef struct Plan {
    const LinearLayout *s; /* operand */
    LinearLayout r;        /* result */
    int axis;
    uint32_t reg_axis, lane_axis, warp_axis;
    TirValue *index;       /* argmax/argmin of partial results: their indices (else NULL) */
    int partial;           /* the result keeps one coordinate per warp along the axis */
} Plan;

/* Phase 1: each thread over its own registers along the axis. */
static void reduce_thread(Lower *L, const Red *R, TirValue *src, const Plan *P, const Partial *p)
{
    int un = L->t->unroll_elements, nreg = P->s->nbits[LL_REG];
    uint32_t keep = ((1u << nreg) - 1) & ~P->reg_axis;
    ElemLoop lo, li;
    LLVMValueRef c[TIR_MAX_RANK];
    LW_FOR(L, &lo, ll_regs(&P->r), un, rr) {
        set_partial(L, R, p, rr, identity(L, R), lw_i32c(L, R->last ? -1 : 0x7fffffff));
        LLVMValueRef base = layout_emit_deposit(L->b, rr, keep);
        LW_FOR(L, &li, 1 << __builtin_popcount(P->reg_axis), un, j) {
            LLVMValueRef r = LLVMBuildOr(L->b, base, layout_emit_deposit(L->b, j, P->reg_axis), "");
            LLVMValueRef x = lw_cast(L, lw_get(L, src, r), R->ek, R->ck), xi = NULL;
            if (R->arg && P->index)
                xi = lw_get(L, P->index, r);
            else if (R->arg)
                lw_coords(L, src, r, c), xi = c[P->axis];
            accumulate(L, R, p, rr, x, xi);
        }
    }
}

/* Phase 2: butterfly over the lanes holding distinct coordinates along the axis. */
static void reduce_lanes(Lower *L, const Red *R, const Plan *P, const Partial *p)
{
    for (int j = 0; j < P->s->nbits[LL_LANE]; j++) {
        if (!((P->lane_axis >> j) & 1))
            continue;
        ElemLoop lp;
        LW_FOR(L, &lp, ll_regs(&P->r), L->t->unroll_elements, rr) {
            LLVMValueRef ov = lw_shuffle_xor(L, get_value(L, R, p, rr), 1 << j);
            LLVMValueRef oi = R->arg ? lw_shuffle_xor(L, get_index(L, R, p, rr), 1 << j) : NULL;
            accumulate(L, R, p, rr, ov, oi);
        }
    }
}

static void write_values(Lower *L, const Red *R, TirValue *res, const Plan *P, const Partial *p,
                         int indices)
{
    ElemKind rk = res->type.elem;
    if (res->type.rank == 0) {
        LLVMValueRef z = lw_i32c(L, 0);
        lw_bind(L, res, indices ? get_index(L, R, p, z) : lw_cast(L, get_value(L, R, p, z), R->ck, rk));
        return;
    }
    lw_tile_new(L, res);
    ElemLoop lp;
    LW_FOR(L, &lp, ll_regs(&P->r), L->t->unroll_elements, rr) {
        LLVMValueRef x = indices ? get_index(L, R, p, rr) : lw_cast(L, get_value(L, R, p, rr), R->ck, rk);
        lw_set(L, res, rr, x);
    }
}

/* The final values (or argmax/argmin indices); a partial argmax writes both. */
static void write_result(Lower *L, const Red *R, TirOp *op, const Plan *P, const Partial *p)
{
    if (P->partial && op->nres == 2) {
        write_values(L, R, op->results[0], P, p, 0);
        write_values(L, R, op->results[1], P, p, 1);
        return;
    }
    write_values(L, R, op->results[0], P, p, R->arg);
}

/* The result's layout follows from the operand's: the axis removed, or (partial) one
 * coordinate per warp along it. Warps along the axis of a full reduction are split apart by
 * pass_reduce.c beforehand. */
static int plan(Lower *L, TirOp *op, Plan *P)
{
    TirValue *src = op->ops[0], *res = op->results[0];
    P->s = lw_ll(L, src);
    P->axis = (int)op->attr.i2;
    P->partial = res->type.rank == src->type.rank;
    P->index = op->nops > 1 ? op->ops[1] : NULL;
    P->warp_axis = ll_dim_mask(P->s, LL_WARP, P->axis);
    int rc = P->partial ? ll_reduce_warps(P->s, P->axis, &P->r) : ll_reduce(P->s, P->axis, &P->r);
    if (rc != 0 || (!P->partial && P->warp_axis))
        return -1;
    if (res->type.rank && !ll_equal(&P->r, lw_ll(L, res)))
        return -1;
    P->reg_axis = ll_dim_mask(P->s, LL_REG, P->axis);
    P->lane_axis = ll_dim_mask(P->s, LL_LANE, P->axis);
    return 0;
}

int lower_reduce(Lower *L, TirOp *op)
{
    TirValue *src = op->ops[0];
    Red R = {.kind = (TirReduce)op->attr.i, .ek = src->type.elem};
    R.arg = tir_reduce_is_arg(R.kind);
    R.last = R.kind == RED_ARGMAX_LAST || R.kind == RED_ARGMIN_LAST;
    R.ck = (R.ek == ET_F16 || R.ek == ET_BF16) ? ET_F32 : R.ek;
    R.ct = lw_type(L, R.ck);
    Plan P;
    if (plan(L, op, &P) != 0)
        return lw_fail(L, op, "internal compiler error: reduce result layout is not the "
                              "operand's with the axis removed");
    Partial p;
    if (partial_init(L, &R, ll_regs(&P.r), &p) != 0)
        return lw_fail(L, op, "out of memory lowering a reduction");
    reduce_thread(L, &R, src, &P, &p);
    reduce_lanes(L, &R, &P, &p);
    write_result(L, &R, op, &P, &p);
    return 0;
}
