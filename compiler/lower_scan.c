/* lower_scan.c: ops along one axis held whole in each thread: inclusive scans (cumsum,
 * cumprod), flips and sorts (a bitonic network over the thread's registers; topk keeps the
 * first k; on the host, longer sorts as loops over scratch arrays). The layout pass gives the
 * operand and the result a layout that holds the axis in each thread's registers in
 * coordinate order (layout_axis_in_thread), so each thread works on its own registers: no
 * exchange between threads. f16/bf16 scans combine in f32 (the builder casts them). */
#include <stdlib.h>
#include "lower_int.h"

/* The registers along the axis, checked; 0, or -1 after a failure. */
static int axis_regs(Lower *L, TirOp *op, uint32_t *along, uint32_t *keep, int *n)
{
    const LinearLayout *ll = lw_ll(L, op->ops[0]);
    if (L->failed)
        return -1;
    int axis = (int)(op->attr.i2 & 15);
    *along = ll_dim_mask(ll, LL_REG, axis);
    *n = 1 << __builtin_popcount(*along);
    *keep = ((1u << ll->nbits[LL_REG]) - 1) & ~*along;
    if (*n != op->ops[0]->type.shape[axis] || !ll_equal(ll, lw_ll(L, op->results[0])))
        return lw_fail(L, op, "internal compiler error: an op along an axis not held in each thread");
    return 0;
}

static LLVMValueRef reg_of(Lower *L, LLVMValueRef base, int j, uint32_t along)
{
    return LLVMBuildOr(L->b, base, layout_emit_deposit(L->b, lw_i32c(L, j), along), "");
}

/* a after b in ascending order (NaN after every number) */
static LLVMValueRef after(Lower *L, ElemKind k, LLVMValueRef a, LLVMValueRef b)
{
    if (!et_is_float(k))
        return LLVMBuildICmp(L->b, et_is_signed(k) ? LLVMIntSGT : LLVMIntUGT, a, b, "");
    LLVMValueRef gt = LLVMBuildFCmp(L->b, LLVMRealOGT, a, b, "");
    LLVMValueRef an = LLVMBuildFCmp(L->b, LLVMRealUNO, a, a, ""), bn = LLVMBuildFCmp(L->b, LLVMRealUNO, b, b, "");
    return LLVMBuildOr(L->b, gt, LLVMBuildAnd(L->b, an, LLVMBuildNot(L->b, bn, ""), ""), "");
}

/* Bitonic sorting network over v[0..n-1] (n a power of two), carrying idx[] along when it
 * is not NULL. */
static void bitonic(Lower *L, ElemKind k, LLVMValueRef *v, LLVMValueRef *idx, int n, int descending)
{
    for (int size = 2; size <= n; size <<= 1)
        for (int stride = size >> 1; stride > 0; stride >>= 1)
            for (int i = 0; i < n; i++) {
                int j = i ^ stride;
                if (j < i)
                    continue;
                int up = ((i & size) == 0) != descending;
                LLVMValueRef swap = up ? after(L, k, v[i], v[j]) : after(L, k, v[j], v[i]);
                LLVMValueRef lo = LLVMBuildSelect(L->b, swap, v[j], v[i], "");
                v[j] = LLVMBuildSelect(L->b, swap, v[i], v[j], "");
                v[i] = lo;
                if (idx) {
                    lo = LLVMBuildSelect(L->b, swap, idx[j], idx[i], "");
                    idx[j] = LLVMBuildSelect(L->b, swap, idx[i], idx[j], "");
                    idx[i] = lo;
                }
            }
}

/* Longer sorts on targets that keep tiles in memory (the host) run the network as loops over
 * scratch arrays: the same comparisons, in code whose size does not grow with n (unrolled,
 * a 32-element argsort of 8 rows took LLVM 34 s to compile, 128 elements a minute). */
enum { SORT_UNROLLED_MAX = 8 };

static LLVMValueRef slot(Lower *L, LLVMTypeRef t, LLVMValueRef arr, int n, LLVMValueRef i)
{
    LLVMValueRef at[2] = {lw_i32c(L, 0), i};
    return LLVMBuildInBoundsGEP2(L->b, LLVMArrayType2(t, (uint64_t)n), arr, at, 2, "");
}

/* Exchanges arr[lo] and arr[hi] where swap. */
static void exchange(Lower *L, LLVMTypeRef t, LLVMValueRef arr, int n, LLVMValueRef lo,
                     LLVMValueRef hi, LLVMValueRef swap)
{
    LLVMValueRef pl = slot(L, t, arr, n, lo), ph = slot(L, t, arr, n, hi);
    LLVMValueRef a = LLVMBuildLoad2(L->b, t, pl, ""), b = LLVMBuildLoad2(L->b, t, ph, "");
    LLVMBuildStore(L->b, LLVMBuildSelect(L->b, swap, b, a, ""), pl);
    LLVMBuildStore(L->b, LLVMBuildSelect(L->b, swap, a, b, ""), ph);
}

/* The lower position of pair h of a step of this stride: h with a 0 bit inserted at
 * log2(stride). */
static LLVMValueRef pair_low(Lower *L, LLVMValueRef h, int stride)
{
    LLVMValueRef shift = lw_i32c(L, __builtin_ctz((unsigned)stride));
    LLVMValueRef high = LLVMBuildShl(L->b, LLVMBuildLShr(L->b, h, shift, ""), shift, "");
    high = LLVMBuildShl(L->b, high, lw_i32c(L, 1), "");
    return LLVMBuildOr(L->b, high, LLVMBuildAnd(L->b, h, lw_i32c(L, stride - 1), ""), "");
}

/* The network of `bitonic` over arrays vals[n] (and idx[n], or NULL): for each step one loop
 * over the n / 2 pairs (lo, lo + stride), lo having bit log2(stride) clear. */
static void bitonic_loops(Lower *L, ElemKind k, LLVMValueRef vals, LLVMValueRef idx, int n,
                          int descending)
{
    LLVMTypeRef t = lw_type(L, k), ti = lw_i32(L);
    for (int size = 2; size <= n; size <<= 1)
        for (int stride = size >> 1; stride > 0; stride >>= 1) {
            ElemLoop lp;
            LW_LOOP(L, &lp, n / 2, h) {
                LLVMValueRef lo = pair_low(L, h, stride), hi = LLVMBuildOr(L->b, lo, lw_i32c(L, stride), "");
                LLVMValueRef a = LLVMBuildLoad2(L->b, t, slot(L, t, vals, n, lo), "");
                LLVMValueRef b = LLVMBuildLoad2(L->b, t, slot(L, t, vals, n, hi), "");
                LLVMValueRef block = LLVMBuildAnd(L->b, lo, lw_i32c(L, size), ""); /* 0: ascending */
                LLVMValueRef up = LLVMBuildICmp(L->b, descending ? LLVMIntNE : LLVMIntEQ, block,
                                                lw_i32c(L, 0), "");
                LLVMValueRef swap = LLVMBuildSelect(L->b, up, after(L, k, a, b), after(L, k, b, a), "");
                exchange(L, t, vals, n, lo, hi, swap);
                if (idx)
                    exchange(L, ti, idx, n, lo, hi, swap);
            }
        }
}

/* lower_sort on memory tiles: each row copied into scratch arrays, sorted, its first k copied
 * out. */
static void sort_in_memory(Lower *L, TirOp *op, int n, int k, uint32_t ain, uint32_t aout,
                           uint32_t kin, uint32_t kout, int desc)
{
    TirValue *x = op->ops[0], *res = op->results[0], *ires = op->nres > 1 ? op->results[1] : NULL;
    LLVMTypeRef t = lw_type(L, x->type.elem), ti = lw_i32(L);
    LLVMValueRef vals = lw_alloca(L, t, n, "sort.v"), idx = ires ? lw_alloca(L, ti, n, "sort.i") : NULL;
    ElemLoop rows, in, out;
    LW_LOOP(L, &rows, 1 << __builtin_popcount(kin), g) {
        LLVMValueRef bi = layout_emit_deposit(L->b, g, kin), bo = layout_emit_deposit(L->b, g, kout);
        LW_FOR(L, &in, n, 0, j) {
            LLVMValueRef r = LLVMBuildOr(L->b, bi, layout_emit_deposit(L->b, j, ain), "");
            LLVMBuildStore(L->b, lw_get(L, x, r), slot(L, t, vals, n, j));
            if (idx)
                LLVMBuildStore(L->b, j, slot(L, ti, idx, n, j));
        }
        bitonic_loops(L, x->type.elem, vals, idx, n, desc);
        LW_FOR(L, &out, k, 0, j) {
            LLVMValueRef r = LLVMBuildOr(L->b, bo, layout_emit_deposit(L->b, j, aout), "");
            lw_set(L, res, r, LLVMBuildLoad2(L->b, t, slot(L, t, vals, n, j), ""));
            if (ires)
                lw_set(L, ires, r, LLVMBuildLoad2(L->b, ti, slot(L, ti, idx, n, j), ""));
        }
    }
}

int lower_sort(Lower *L, TirOp *op)
{
    TirValue *x = op->ops[0], *res = op->results[0];
    int axis = (int)(op->attr.i2 & 15), desc = (int)((op->attr.i2 >> 4) & 1);
    const LinearLayout *li = lw_ll(L, x), *lr = lw_ll(L, res);
    if (L->failed)
        return -1;
    uint32_t ain = ll_dim_mask(li, LL_REG, axis), aout = ll_dim_mask(lr, LL_REG, axis);
    uint32_t kin = ((1u << li->nbits[LL_REG]) - 1) & ~ain, kout = ((1u << lr->nbits[LL_REG]) - 1) & ~aout;
    int n = 1 << __builtin_popcount(ain), k = 1 << __builtin_popcount(aout);
    if (n != x->type.shape[axis] || k != res->type.shape[axis] || __builtin_popcount(kin) != __builtin_popcount(kout))
        return lw_fail(L, op, "internal compiler error: a sort along an axis not held in each thread");
    TirValue *ires = op->nres > 1 ? op->results[1] : NULL;
    if (!L->t->unroll_elements && n > SORT_UNROLLED_MAX) {
        lw_tile_new(L, res);
        if (ires)
            lw_tile_new(L, ires);
        sort_in_memory(L, op, n, k, ain, aout, kin, kout, desc);
        return 0;
    }
    LLVMValueRef *v = calloc((size_t)(2 * n), sizeof *v), *idx = ires ? v + n : NULL;
    if (!v)
        return lw_fail(L, op, "out of memory lowering a sort");
    lw_tile_new(L, res);
    if (ires)
        lw_tile_new(L, ires);
    ElemLoop lo;
    LW_FOR(L, &lo, 1 << __builtin_popcount(kin), L->t->unroll_elements, g) {
        LLVMValueRef bi = layout_emit_deposit(L->b, g, kin), bo = layout_emit_deposit(L->b, g, kout);
        for (int j = 0; j < n; j++) {
            v[j] = lw_get(L, x, reg_of(L, bi, j, ain));
            if (idx)
                idx[j] = lw_i32c(L, j);
        }
        bitonic(L, x->type.elem, v, idx, n, desc);
        for (int j = 0; j < k; j++) {
            lw_set(L, res, reg_of(L, bo, j, aout), v[j]);
            if (ires)
                lw_set(L, ires, reg_of(L, bo, j, aout), idx[j]);
        }
    }
    free(v);
    return 0;
}

/* Flips and scans along an axis of more than this many elements, on targets that keep tiles
 * in memory (the host), run as LLVM loops along the axis: unrolled, a 4096-element cumsum took
 * LLVM 9 s to compile, 16384 elements a minute, 262144 more than five. */
enum { AXIS_UNROLLED_MAX = 64 };

static int axis_as_loop(Lower *L, int n)
{
    return !L->t->unroll_elements && n > AXIS_UNROLLED_MAX;
}

static LLVMValueRef reg_at(Lower *L, LLVMValueRef base, LLVMValueRef j, uint32_t along)
{
    return LLVMBuildOr(L->b, base, layout_emit_deposit(L->b, j, along), "");
}

int lower_flip(Lower *L, TirOp *op)
{
    uint32_t along, keep;
    int n;
    if (axis_regs(L, op, &along, &keep, &n))
        return -1;
    lw_tile_new(L, op->results[0]);
    ElemLoop lo, lj;
    LW_FOR(L, &lo, 1 << __builtin_popcount(keep), L->t->unroll_elements, g) {
        LLVMValueRef base = layout_emit_deposit(L->b, g, keep);
        if (axis_as_loop(L, n)) {
            LW_LOOP(L, &lj, n, j) {
                LLVMValueRef from = LLVMBuildSub(L->b, lw_i32c(L, n - 1), j, "");
                lw_set(L, op->results[0], reg_at(L, base, j, along), lw_get(L, op->ops[0], reg_at(L, base, from, along)));
            }
            continue;
        }
        for (int j = 0; j < n; j++)
            lw_set(L, op->results[0], reg_of(L, base, j, along), lw_get(L, op->ops[0], reg_of(L, base, n - 1 - j, along)));
    }
    return 0;
}

static LLVMValueRef scan_combine(Lower *L, const TirOp *op, ElemKind ck, LLVMValueRef acc, LLVMValueRef v)
{
    int isf = et_is_float(ck);
    if (op->attr.i == SCAN_ADD)
        return isf ? LLVMBuildFAdd(L->b, acc, v, "") : LLVMBuildAdd(L->b, acc, v, "");
    return isf ? LLVMBuildFMul(L->b, acc, v, "") : LLVMBuildMul(L->b, acc, v, "");
}

/* One row of lower_scan as an LLVM loop along the axis, the running value in an alloca of the
 * combining type ck: the first element starts it (no identity: 0.0 + -0.0 is +0.0). */
static void scan_loop(Lower *L, const TirOp *op, LLVMValueRef base, uint32_t along, int n, ElemKind ck)
{
    TirValue *x = op->ops[0], *res = op->results[0];
    int reverse = (int)((op->attr.i2 >> 4) & 1);
    LLVMTypeRef tc = lw_type(L, ck);
    LLVMValueRef slot = lw_alloca(L, tc, 1, "scan.acc");
    LLVMValueRef first = reg_of(L, base, reverse ? n - 1 : 0, along);
    LLVMValueRef acc = lw_cast(L, lw_get(L, x, first), x->type.elem, ck);
    LLVMBuildStore(L->b, acc, slot);
    lw_set(L, res, first, lw_cast(L, acc, ck, res->type.elem));
    ElemLoop lp;
    LW_LOOP(L, &lp, n - 1, i) {
        LLVMValueRef j = LLVMBuildAdd(L->b, i, lw_i32c(L, 1), ""); /* the axis after the first */
        if (reverse)
            j = LLVMBuildSub(L->b, lw_i32c(L, n - 1), j, "");
        LLVMValueRef r = reg_at(L, base, j, along);
        LLVMValueRef v = lw_cast(L, lw_get(L, x, r), x->type.elem, ck);
        acc = scan_combine(L, op, ck, LLVMBuildLoad2(L->b, tc, slot, ""), v);
        LLVMBuildStore(L->b, acc, slot);
        lw_set(L, res, r, lw_cast(L, acc, ck, res->type.elem));
    }
}

int lower_scan(Lower *L, TirOp *op)
{
    TirValue *x = op->ops[0], *res = op->results[0];
    int reverse = (int)((op->attr.i2 >> 4) & 1), n;
    uint32_t along, keep;
    if (axis_regs(L, op, &along, &keep, &n))
        return -1;
    ElemKind ek = x->type.elem, rk = res->type.elem;
    ElemKind ck = ek == ET_F16 || ek == ET_BF16 ? ET_F32 : rk;
    lw_tile_new(L, res);
    ElemLoop lo;
    LW_FOR(L, &lo, 1 << __builtin_popcount(keep), L->t->unroll_elements, g) {
        LLVMValueRef base = layout_emit_deposit(L->b, g, keep), acc = NULL;
        if (axis_as_loop(L, n)) {
            scan_loop(L, op, base, along, n, ck);
            continue;
        }
        for (int i = 0; i < n; i++) { /* the axis in order: a short unrolled chain */
            int j = reverse ? n - 1 - i : i;
            LLVMValueRef r = reg_of(L, base, j, along);
            LLVMValueRef v = lw_cast(L, lw_get(L, x, r), ek, ck);
            if (acc)
                v = scan_combine(L, op, ck, acc, v);
            acc = v;
            lw_set(L, res, r, lw_cast(L, acc, ck, rk));
        }
    }
    return 0;
}
