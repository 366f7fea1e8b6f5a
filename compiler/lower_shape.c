/* lower_shape.c: ops that move elements between shapes or layouts: splat, expand_dims,
 * broadcast (register remapping within one parent layout), trans (a relabeling of the
 * registers: the result layout is the operand's with dims swapped) and convert_layout
 * (through shared memory unless both layouts give every thread the same elements). */
#include <string.h>
#include "lower_int.h"

static int info_same(const LayoutInfo *a, const LayoutInfo *b)
{
    if (a->R != b->R || a->prank != b->prank || a->lanes != b->lanes)
        return 0;
    for (int d = 0; d < a->prank; d++)
        if (a->S[d] != b->S[d] || a->sptp[d] != b->sptp[d] || a->C[d] != b->C[d] ||
            a->n[d] != b->n[d] || a->rstride[d] != b->rstride[d] ||
            a->lstride[d] != b->lstride[d] || a->wstride[d] != b->wstride[d] ||
            a->tpw[d] != b->tpw[d] || a->wpc[d] != b->wpc[d] || a->vdim[d] != b->vdim[d])
            return 0;
    return 1;
}

static LLVMValueRef fresh(Lower *L, TirValue *res)
{
    LLVMValueRef s = lw_tile_storage(L, res);
    lw_bind(L, res, s);
    return s;
}

static int lower_splat(Lower *L, TirValue *src, TirValue *res)
{
    fresh(L, res);
    ElemLoop lp;
    LLVMValueRef r = lw_loop_begin(L, &lp, lw_regs(res), L->t->unroll_elements);
    lw_set(L, res, r, lw_val(L, src));
    lw_loop_end(L, &lp);
    return 0;
}

/* Row-major linear index of value coordinates c over shape; `swap` reads c as (c1, c0). */
static LLVMValueRef linear(Lower *L, const int *shape, int rank, LLVMValueRef *c, int swap)
{
    LLVMValueRef idx = lw_i32c(L, 0);
    for (int d = 0; d < rank; d++) {
        LLVMValueRef cd = swap && rank == 2 ? c[1 - d] : c[d];
        idx = LLVMBuildAdd(L->b, LLVMBuildMul(L->b, idx, lw_i32c(L, shape[d]), ""), cd, "");
    }
    return idx;
}

static void smem_write_all(Lower *L, TirValue *src, LLVMValueRef base)
{
    LayoutInfo li;
    lw_info(&li, src);
    LLVMTypeRef mt = lw_mem_type(L, src->type.elem);
    ElemLoop lp;
    LLVMValueRef r = lw_loop_begin(L, &lp, li.R, L->t->unroll_elements), c[TIR_MAX_RANK];
    layout_emit_coords(L->b, &li, L->tid, r, c);
    LLVMValueRef x = lw_get(L, src, r);
    if (src->type.elem == ET_BOOL)
        x = LLVMBuildZExt(L->b, x, mt, "");
    LLVMValueRef idx = linear(L, src->type.shape, src->type.rank, c, 0);
    lw_smem_store(L, x, lw_smem_ptr(L, base, mt, idx));
    lw_loop_end(L, &lp);
}

static void smem_read_all(Lower *L, TirValue *src, TirValue *res, LLVMValueRef base, int swap)
{
    LayoutInfo li;
    lw_info(&li, res);
    LLVMTypeRef mt = lw_mem_type(L, res->type.elem);
    ElemLoop lp;
    LLVMValueRef r = lw_loop_begin(L, &lp, li.R, L->t->unroll_elements), c[TIR_MAX_RANK];
    layout_emit_coords(L->b, &li, L->tid, r, c);
    LLVMValueRef idx = linear(L, src->type.shape, src->type.rank, c, swap);
    LLVMValueRef x = lw_smem_load(L, mt, lw_smem_ptr(L, base, mt, idx));
    if (res->type.elem == ET_BOOL)
        x = LLVMBuildTrunc(L->b, x, lw_type(L, ET_BOOL), "");
    lw_set(L, res, r, x);
    lw_loop_end(L, &lp);
}

/* Moves src's elements into res's layout through shared memory. Element c of res is element
 * c of src (src and res differ only by size-1 dims), or (c1, c0) when `swap`. */
static int redistribute(Lower *L, TirValue *src, TirValue *res, int swap)
{
    int bytes = tir_type_numel(&src->type) * et_bytes(src->type.elem);
    LLVMValueRef base = lw_smem(L, bytes);
    fresh(L, res);
    L->t->barrier(&L->tc);
    smem_write_all(L, src, base);
    L->t->barrier(&L->tc);
    smem_read_all(L, src, res, base, swap);
    L->t->barrier(&L->tc);
    return 0;
}

static int same_registers(TirValue *src, TirValue *res)
{
    LayoutInfo a, b;
    lw_info(&a, src);
    lw_info(&b, res);
    return info_same(&a, &b);
}

static int copy_or_redistribute(Lower *L, TirValue *src, TirValue *res, int relabel_ok, int swap)
{
    if (relabel_ok) {
        lw_copy_tile(L, res, fresh(L, res), lw_val(L, src));
        return 0;
    }
    return redistribute(L, src, res, swap);
}

static int lower_broadcast(Lower *L, TirOp *op)
{
    TirValue *src = op->ops[0], *res = op->results[0];
    if (src->type.rank == 0)
        return lower_splat(L, src, res);
    if (!tir_layout_equal(src->layout, res->layout))
        return lw_fail(L, op, "internal compiler error: broadcast across layouts");
    LayoutInfo si, ri;
    lw_info(&si, src);
    lw_info(&ri, res);
    fresh(L, res);
    ElemLoop lp;
    LLVMValueRef r = lw_loop_begin(L, &lp, ri.R, L->t->unroll_elements), i[TIR_MAX_RANK];
    layout_emit_reg_split(L->b, &ri, r, i);
    LLVMValueRef sr = layout_emit_reg_join(L->b, &si, i);
    lw_set(L, res, r, lw_get(L, src, sr));
    lw_loop_end(L, &lp);
    return 0;
}

static int lower_expand(Lower *L, TirOp *op)
{
    TirValue *src = op->ops[0], *res = op->results[0];
    if (src->type.rank == 0)
        return lower_splat(L, src, res);
    TirLayout want = layout_slice(res->layout, (int)op->attr.i);
    int ok = tir_layout_equal(&want, src->layout) || same_registers(src, res);
    return copy_or_redistribute(L, src, res, ok, 0);
}

static int lower_trans(Lower *L, TirOp *op)
{
    TirValue *src = op->ops[0], *res = op->results[0];
    TirLayout want = layout_permute2(src->layout);
    return copy_or_redistribute(L, src, res, tir_layout_equal(&want, res->layout), 1);
}

int lower_shape(Lower *L, TirOp *op)
{
    TirValue *src = op->ops[0], *res = op->results[0];
    switch (op->code) {
    case TIR_SPLAT: return lower_splat(L, src, res);
    case TIR_EXPAND_DIMS: return lower_expand(L, op);
    case TIR_BROADCAST: return lower_broadcast(L, op);
    case TIR_TRANS: return lower_trans(L, op);
    case TIR_CONVERT_LAYOUT:
        if (src->type.rank == 0) {
            lw_bind(L, res, lw_val(L, src));
            return 0;
        }
        return copy_or_redistribute(L, src, res, same_registers(src, res), 0);
    default: return lw_fail(L, op, "internal compiler error: not a shape op");
    }
}
