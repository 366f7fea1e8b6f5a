/* lower_mma.c: dot on tensor cores (mma.sync m16n8; AMD's MFMA below). The operands arrive in their dot-operand
 * layouts and the accumulator in the mma layout, so every fragment is already in its
 * thread's registers: for each 16x8 tile of the result a thread owns and each step of K, the
 * registers of the A, B and C fragments are found by solving the linear layouts for the
 * tile's origin, packed into 32-bit words, and handed to the target's mma instruction.
 * Register indices are compile-time constants (no per-element loops). */
#include "layout_dot.h"
#include "lower_int.h"

static int lg2(int x)
{
    int n = 0;
    while ((1 << n) < x)
        n++;
    return n;
}

/* The register whose element sits at the tile origin (row, col) relative to this thread's
 * first tile; its instruction bits must be zero. */
int lw_frag_at(Frag *f, int row, int col)
{
    int c[2] = {row, col};
    uint32_t target = ll_flat(f->ll, c), x;
    if (!ll_solve(f->ll->basis[LL_REG], f->ll->nbits[LL_REG], target, &x))
        return -1;
    if (x & ((1u << f->inst_bits) - 1))
        return -1;
    f->base = x;
    return 0;
}

/* The i32 the registers xs[0..kw-1] were unpacked from, when they are the elements 0..kw-1 of
 * one vector (what ldmatrix pieces become): no unpacking and repacking. NULL otherwise. */
static LLVMValueRef unpacked_word(Lower *L, LLVMValueRef *xs, int kw)
{
    LLVMValueRef vec = NULL;
    for (int j = 0; j < kw; j++) {
        if (!LLVMIsAExtractElementInst(xs[j]))
            return NULL;
        LLVMValueRef v = LLVMGetOperand(xs[j], 0), idx = LLVMGetOperand(xs[j], 1);
        if ((vec && v != vec) || !LLVMIsAConstantInt(idx) || LLVMConstIntGetZExtValue(idx) != (unsigned)j)
            return NULL;
        vec = v;
    }
    if (LLVMGetVectorSize(LLVMTypeOf(vec)) != (unsigned)kw)
        return NULL;
    if (LLVMIsABitCastInst(vec) && LLVMTypeOf(LLVMGetOperand(vec, 0)) == lw_i32(L))
        return LLVMGetOperand(vec, 0);
    return LLVMBuildBitCast(L->b, vec, lw_i32(L), "");
}

/* Two 16-bit registers that are both narrowed from f32: one narrowing of the pair as a vector
 * (a single pair conversion, cvt.rn.bf16x2/f16x2 on NVIDIA, instead of two and a repack). */
static LLVMValueRef narrowed_pair(Lower *L, LLVMValueRef *xs)
{
    LLVMTypeRef f32 = LLVMFloatTypeInContext(L->ctx);
    for (int j = 0; j < 2; j++)
        if (!LLVMIsAFPTruncInst(xs[j]) || LLVMTypeOf(LLVMGetOperand(xs[j], 0)) != f32)
            return NULL;
    LLVMValueRef v = LLVMGetUndef(LLVMVectorType(f32, 2));
    for (int j = 0; j < 2; j++)
        v = LLVMBuildInsertElement(L->b, v, LLVMGetOperand(xs[j], 0), lw_i32c(L, j), "");
    v = LLVMBuildFPTrunc(L->b, v, LLVMVectorType(LLVMTypeOf(xs[0]), 2), "");
    return LLVMBuildBitCast(L->b, v, lw_i32(L), "");
}

/* Packs `kw` consecutive registers (from base + 32-bit word w) of value v into an i32. */
LLVMValueRef lw_pack_word(Lower *L, TirValue *v, uint32_t base, int w, int kw)
{
    ElemKind k = v->type.elem;
    int bits = 32 / kw;
    LLVMValueRef word = NULL, xs[4];
    for (int j = 0; j < kw && kw > 1; j++)
        xs[j] = lw_get(L, v, lw_i32c(L, (int)base + w * kw + j));
    if (kw > 1 && (word = unpacked_word(L, xs, kw)))
        return word;
    if (kw == 2 && (word = narrowed_pair(L, xs)))
        return word;
    for (int j = 0; j < kw; j++) {
        LLVMValueRef x = lw_get(L, v, lw_i32c(L, (int)base + w * kw + j));
        if (k == ET_F32)
            x = LLVMBuildBitCast(L->b, x, lw_i32(L), "");
        else
            x = LLVMBuildZExt(L->b, LLVMBuildBitCast(L->b, x, LLVMIntTypeInContext(L->ctx, (unsigned)bits), ""),
                              lw_i32(L), "");
        if (j)
            x = LLVMBuildShl(L->b, x, lw_i32c(L, j * bits), "");
        word = word ? LLVMBuildOr(L->b, word, x, "") : x;
    }
    return word;
}

static void one_mma(Lower *L, TirOp *op, MmaKind kind, int kw, Frag *a, Frag *b, Frag *c)
{
    TirValue *res = op->results[0];
    LLVMValueRef wa[4], wb[2], acc[4], d[4];
    for (int w = 0; w < 4; w++)
        wa[w] = lw_pack_word(L, op->ops[0], a->base, w, kw);
    for (int w = 0; w < 2; w++)
        wb[w] = lw_pack_word(L, op->ops[1], b->base, w, kw);
    for (int i = 0; i < 4; i++)
        acc[i] = lw_get(L, res, lw_i32c(L, (int)c->base + i));
    L->t->mma_sync(&L->tc, kind, wa, wb, acc, d);
    for (int i = 0; i < 4; i++)
        lw_set(L, res, lw_i32c(L, (int)c->base + i), d[i]);
}

/* The extent of a layout's own tiles along dim d: the smallest coordinate a repetition
 * register moves by, i.e. how far the warps' instruction tiles reach together. */
int lw_tile_span(const LinearLayout *ll, int inst_bits, int d)
{
    int span = ll->shape[d], c[2];
    for (int i = inst_bits; i < ll->nbits[LL_REG]; i++) {
        ll_coords(ll, ll->basis[LL_REG][i], c);
        if (c[d] && c[d] < span)
            span = c[d];
    }
    return span;
}

/* One MFMA for the tile whose fragments a, b, c point at: 4 A and 4 B elements, the
 * accumulator's inst * inst / 64 registers. */
static void one_mfma(Lower *L, TirOp *op, int inst, Frag *a, Frag *b, Frag *c)
{
    TirValue *res = op->results[0];
    LLVMValueRef xa[4], xb[4], acc[16], d[16];
    int nacc = inst * inst / 64;
    for (int i = 0; i < 4; i++) {
        xa[i] = lw_get(L, op->ops[0], lw_i32c(L, (int)a->base + i));
        xb[i] = lw_get(L, op->ops[1], lw_i32c(L, (int)b->base + i));
    }
    for (int i = 0; i < nacc; i++)
        acc[i] = lw_get(L, res, lw_i32c(L, (int)c->base + i));
    L->t->mfma(&L->tc, dot_mma_kind(op), inst, xa, xb, acc, d);
    for (int i = 0; i < nacc; i++)
        lw_set(L, res, lw_i32c(L, (int)c->base + i), d[i]);
}

/* dot on AMD's MFMA: the same walk as mma.sync's over inst x inst tiles and K steps of 16
 * (16x16x16) or 8 (32x32x8); fragments are 4 consecutive K elements of A and B per lane. */
static int lower_dot_mfma(Lower *L, TirOp *op)
{
    TirValue *res = op->results[0];
    int inst = res->layout->inst, K = op->ops[0]->type.shape[1], kstep = inst == 16 ? 16 : 8;
    Frag a = {lw_ll(L, op->ops[0]), 2}, b = {lw_ll(L, op->ops[1]), 2};
    Frag c = {lw_ll(L, res), lg2(inst * inst / 64)};
    if (L->failed)
        return -1;
    lw_tile_new(L, res);
    lw_copy_value(L, res, op->ops[2]);
    int sm = lw_tile_span(c.ll, c.inst_bits, 0), sn = lw_tile_span(c.ll, c.inst_bits, 1);
    int M = res->type.shape[0], N = res->type.shape[1];
    for (int k = 0; k < K; k += kstep)
        for (int m = 0; m < M; m += sm)
            for (int n = 0; n < N; n += sn) {
                if (lw_frag_at(&c, m, n) || lw_frag_at(&a, m, k) || lw_frag_at(&b, k, n))
                    return lw_fail(L, op, "internal compiler error: mfma fragments do not tile "
                                          "the dot's layouts");
                one_mfma(L, op, inst, &a, &b, &c);
            }
    return 0;
}

int lower_dot_mma(Lower *L, TirOp *op)
{
    if (op->results[0]->layout->kind == LAYOUT_MFMA)
        return lower_dot_mfma(L, op);
    if (lw_wgmma_dot(L, op))
        return lower_dot_wgmma(L, op);
    TirValue *res = op->results[0];
    int kw = dot_kwidth(op, L->t), K = op->ops[0]->type.shape[1];
    MmaKind kind = dot_mma_kind(op);
    Frag a = {lw_ll(L, op->ops[0]), lg2(4 * kw)}, b = {lw_ll(L, op->ops[1]), lg2(2 * kw)};
    Frag c = {lw_ll(L, res), 2};
    if (L->failed)
        return -1;
    lw_tile_new(L, res);
    lw_copy_value(L, res, op->ops[2]);
    int sm = lw_tile_span(c.ll, 2, 0), sn = lw_tile_span(c.ll, 2, 1);
    int M = res->type.shape[0], N = res->type.shape[1];
    for (int k = 0; k < K; k += 8 * kw) {
        /* this K step's fragments, where their loads were left to the dot */
        for (int m = 0; m < M; m += sm)
            if (!lw_frag_at(&a, m, k))
                lw_fetch_fragments(L, op->ops[0], (int)a.base, 4 * kw);
        for (int n = 0; n < N; n += sn)
            if (!lw_frag_at(&b, k, n))
                lw_fetch_fragments(L, op->ops[1], (int)b.base, 2 * kw);
        for (int m = 0; m < M; m += sm)
            for (int n = 0; n < N; n += sn) {
                if (lw_frag_at(&c, m, n) || lw_frag_at(&a, m, k) || lw_frag_at(&b, k, n))
                    return lw_fail(L, op, "internal compiler error: mma fragments do not tile "
                                          "the dot's layouts");
                one_mma(L, op, kind, kw, &a, &b, &c);
            }
    }
    return 0;
}
