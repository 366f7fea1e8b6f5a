/* lower_dot.c: matrix products. On the FMA path each thread accumulates the result elements
 * its layout gives it over a loop on K, reading the operands from the shared buffers
 * pass_smem.c put them in (GPU targets) or from its own registers (the host, where one thread
 * holds whole tiles). Dots whose result has an mma encoding go to the tensor cores
 * (lower_mma.c). */
#include <llvm-c/Target.h>
#include "layout_dot.h"
#include "lower_int.h"
#include "smem_layout.h"

static LLVMValueRef mul_add(Lower *L, ElemKind ck, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c)
{
    if (!et_is_float(ck))
        return LLVMBuildAdd(L->b, LLVMBuildMul(L->b, a, b, ""), c, "");
    LLVMValueRef args[3] = {a, b, c};
    LLVMTypeRef t = LLVMTypeOf(a);
    return target_intrinsic(&L->tc, "llvm.fmuladd", &t, 1, args, 3);
}

/* For an operand held whole by every thread (the host), the register of each flat-offset bit:
 * the inverse of its linear layout. 0 when some element is not in this thread's registers. */
static int register_map(const LinearLayout *ll, uint32_t *inv)
{
    if (ll_zero_mask(ll, LL_LANE) != (1u << ll->nbits[LL_LANE]) - 1 ||
        ll_zero_mask(ll, LL_WARP) != (1u << ll->nbits[LL_WARP]) - 1)
        return 0;
    for (int j = 0; j < ll_flat_bits(ll); j++)
        if (!ll_solve(ll->basis[LL_REG], ll->nbits[LL_REG], 1u << j, &inv[j]))
            return 0;
    return 1;
}

/* Element (row, col) of operand x, as kind ck: from its shared buffer (GPU targets, placed by
 * pass_smem.c), or from registers where one thread holds the whole tile (the host). */
static LLVMValueRef operand_at(Lower *L, TirValue *x, ElemKind ck, LLVMValueRef row, LLVMValueRef col)
{
    LLVMValueRef c[2] = {row, col}, e;
    if (x->type.buffers > 0) {
        LLVMValueRef off = smem_emit_offset(L->b, x->layout, x->type.shape, 2, c);
        LLVMTypeRef t = lw_type(L, x->type.elem);
        e = lw_smem_load(L, t, LLVMBuildGEP2(L->b, t, lw_val(L, x), &off, 1, ""));
    } else {
        const LinearLayout *ll = lw_ll(L, x);
        uint32_t inv[32];
        if (!register_map(ll, inv)) {
            lw_fail(L, x->def, "internal compiler error: an FMA dot operand in registers spread over threads");
            return LLVMGetUndef(lw_type(L, ck));
        }
        LLVMValueRef flat = LLVMBuildAdd(L->b, LLVMBuildMul(L->b, row, lw_i32c(L, x->type.shape[1]), ""), col, "");
        e = lw_get(L, x, layout_emit_map(L->b, inv, ll_flat_bits(ll), flat));
    }
    return lw_cast(L, e, x->type.elem, ck);
}

/* res[m, n] + a[m, k] * b[k, n] at k, in the combine kind. */
static LLVMValueRef product_at(Lower *L, TirOp *op, ElemKind ck, LLVMValueRef *c, LLVMValueRef k,
                               LLVMValueRef acc)
{
    LLVMValueRef a = operand_at(L, op->ops[0], ck, c[0], k), b = operand_at(L, op->ops[1], ck, k, c[1]);
    return mul_add(L, ck, a, b, acc);
}

/* x's bits scattered to the set bits of mask, and the reverse. */
static uint32_t deposit(uint32_t x, uint32_t mask)
{
    uint32_t r = 0;
    for (int b = 0, j = 0; b < 32; b++)
        if ((mask >> b) & 1)
            r |= ((x >> j++) & 1u) << b;
    return r;
}

static uint32_t extract(uint32_t x, uint32_t mask)
{
    uint32_t r = 0;
    for (int b = 0, j = 0; b < 32; b++)
        if ((mask >> b) & 1)
            r |= ((x >> b) & 1u) << j++;
    return r;
}

/* The rows (d = 0) or columns (d = 1) of the result this thread holds, as coordinates: one
 * per combination of the register bits that move along d (the result's layout has
 * single-dim bases). *mask gets those register bits. */
static int result_lines(Lower *L, TirValue *res, int d, uint32_t *mask, LLVMValueRef *coord)
{
    const LinearLayout *ll = lw_ll(L, res);
    *mask = ll_dim_mask(ll, LL_REG, d);
    int n = 1 << __builtin_popcount(*mask);
    for (int i = 0; i < n; i++) {
        LLVMValueRef c[TIR_MAX_RANK];
        lw_coords(L, res, lw_i32c(L, (int)deposit((uint32_t)i, *mask)), c);
        coord[i] = c[d];
    }
    return n;
}

/* GPU targets: a run-time loop over K; in each step the thread reads the elements of A in its
 * rows and of B in its columns once, then updates every element it holds (straight-line). */
static void k_outside(Lower *L, TirOp *op, ElemKind ck, int K)
{
    TirValue *res = op->results[0];
    enum { MAXL = 256 };
    LLVMValueRef rows[MAXL], cols[MAXL], av[MAXL], bv[MAXL];
    uint32_t mm, nm;
    const LinearLayout *ll = lw_ll(L, res);
    if (!ll_single_dim_bases(ll) || __builtin_popcount(ll_dim_mask(ll, LL_REG, 0)) > 8 ||
        __builtin_popcount(ll_dim_mask(ll, LL_REG, 1)) > 8) {
        lw_fail(L, op, "internal compiler error: an FMA dot result layout with mixed bases");
        return;
    }
    int nr = result_lines(L, res, 0, &mm, rows), nc = result_lines(L, res, 1, &nm, cols);
    ElemLoop kl, lp; /* each K step holds a row and a column of operands: unroll little */
    LW_FOR_UNROLL_AT_MOST(L, &kl, K, 4, k) {
        for (int i = 0; i < nr; i++)
            av[i] = operand_at(L, op->ops[0], ck, rows[i], k);
        for (int j = 0; j < nc; j++)
            bv[j] = operand_at(L, op->ops[1], ck, k, cols[j]);
        LW_FOR(L, &lp, lw_regs(L, res), 1, r) {
            uint32_t reg = (uint32_t)LLVMConstIntGetZExtValue(r);
            int i = (int)extract(reg, mm), j = (int)extract(reg, nm);
            LLVMValueRef acc = lw_cast(L, lw_get(L, res, r), res->type.elem, ck);
            lw_set(L, res, r, lw_cast(L, mul_add(L, ck, av[i], bv[j], acc), ck, res->type.elem));
        }
    }
}

/* The host: each element's sum over K in a register, one element after the other. */
static void k_inside(Lower *L, TirOp *op, ElemKind ck, int K)
{
    TirValue *res = op->results[0];
    LLVMValueRef sum = lw_alloca(L, lw_type(L, ck), 1, "dot.acc");
    ElemLoop kl, lp;
    LLVMValueRef c[TIR_MAX_RANK];
    LW_FOR(L, &lp, lw_regs(L, res), 0, r) {
        lw_coords(L, res, r, c);
        LLVMBuildStore(L->b, lw_cast(L, lw_get(L, res, r), res->type.elem, ck), sum);
        LW_FOR(L, &kl, K, 0, k) {
            LLVMValueRef acc = LLVMBuildLoad2(L->b, lw_type(L, ck), sum, "");
            LLVMBuildStore(L->b, product_at(L, op, ck, c, k, acc), sum);
        }
        lw_set(L, res, r, lw_cast(L, LLVMBuildLoad2(L->b, lw_type(L, ck), sum, ""), ck, res->type.elem));
    }
}

/* The FMA path. */
static int lower_dot_fma(Lower *L, TirOp *op)
{
    TirValue *acc = op->ops[2], *res = op->results[0];
    int K = op->ops[0]->type.shape[1];
    ElemKind ck = res->type.elem == ET_F16 || res->type.elem == ET_BF16 ? ET_F32 : res->type.elem;
    lw_bind(L, res, lw_tile_storage(L, res)); /* updated across the run-time K loop: an alloca */
    lw_copy_value(L, res, acc);
    if (L->t->unroll_elements)
        k_outside(L, op, ck, K);
    else
        k_inside(L, op, ck, K);
    return 0;
}

int lower_dot(Lower *L, TirOp *op)
{
    if (op->nops < 3 || op->ops[0]->type.rank != 2 || op->ops[1]->type.rank != 2)
        return lw_fail(L, op, "internal compiler error: dot needs rank-2 a, b and acc");
    if (dot_uses_mma(op, L->t))
        return lower_dot_mma(L, op);
    return lower_dot_fma(L, op);
}
