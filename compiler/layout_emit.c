/* layout_emit.c: the LLVM i32 arithmetic that applies linear layouts at run time: a thread's
 * flat offsets and coordinates, and bit scatter/gather for register indices. On GPU targets
 * register indices are constants after unrolling, so only the thread's part stays. */
#include "layout.h"

static int lg2u(uint32_t x)
{
    int n = 0;
    while ((1u << n) < x)
        n++;
    return n;
}

static uint32_t low_mask(int bits) { return bits >= 32 ? ~0u : (1u << bits) - 1; }

static int is_pow2u(uint32_t x) { return x && !(x & (x - 1)); }

static LLVMValueRef cst(LLVMValueRef like, uint32_t v)
{
    return LLVMConstInt(LLVMTypeOf(like), v, 0);
}

static LLVMValueRef shift(LLVMBuilderRef b, LLVMValueRef x, int by)
{
    if (by > 0)
        return LLVMBuildShl(b, x, cst(x, (uint32_t)by), "");
    if (by < 0)
        return LLVMBuildLShr(b, x, cst(x, (uint32_t)-by), "");
    return x;
}

LLVMValueRef layout_emit_combine(LLVMBuilderRef b, LLVMValueRef acc, LLVMValueRef t, int disjoint)
{
    if (!acc)
        return t;
    if (!disjoint)
        return LLVMBuildXor(b, acc, t, "");
    LLVMValueRef o = LLVMBuildOr(b, acc, t, "");
    if (LLVMIsAInstruction(o))
        LLVMSetIsDisjoint(o, 1);
    return o;
}

static int bases_disjoint(const uint32_t *basis, int n)
{
    uint32_t seen = 0;
    for (int i = 0; i < n; i++) {
        if (seen & basis[i])
            return 0;
        seen |= basis[i];
    }
    return 1;
}

LLVMValueRef layout_emit_map(LLVMBuilderRef b, const uint32_t *basis, int n, LLVMValueRef x)
{
    LLVMValueRef acc = NULL;
    int disjoint = bases_disjoint(basis, n);
    for (int i = 0; i < n;) {
        if (!basis[i]) {
            i++;
            continue;
        }
        LLVMValueRef t;
        int len = 1;
        if (is_pow2u(basis[i])) {
            while (i + len < n && basis[i + len] == basis[i] << len)
                len++;
            t = LLVMBuildAnd(b, shift(b, x, -i), cst(x, low_mask(len)), "");
            t = shift(b, t, lg2u(basis[i]));
        } else {
            t = LLVMBuildAnd(b, shift(b, x, -i), cst(x, 1), "");
            t = LLVMBuildMul(b, t, cst(x, basis[i]), "");
        }
        acc = layout_emit_combine(b, acc, t, disjoint);
        i += len;
    }
    return acc ? acc : cst(x, 0);
}

LLVMValueRef layout_emit_flat(LLVMBuilderRef b, const LinearLayout *ll, LLVMValueRef tid,
                              LLVMValueRef r)
{
    uint32_t tb[2 * LL_MAX_BITS];
    int nt = 0;
    for (int i = 0; i < ll->nbits[LL_LANE]; i++)
        tb[nt++] = ll->basis[LL_LANE][i];
    for (int i = 0; i < ll->nbits[LL_WARP]; i++)
        tb[nt++] = ll->basis[LL_WARP][i];
    LLVMValueRef rf = layout_emit_map(b, ll->basis[LL_REG], ll->nbits[LL_REG], r);
    if (nt == 0)
        return rf;
    LLVMValueRef tf = layout_emit_map(b, tb, nt, tid);
    return LLVMBuildXor(b, rf, tf, "");
}

void layout_emit_unflat(LLVMBuilderRef b, const LinearLayout *ll, LLVMValueRef flat,
                        LLVMValueRef *coord)
{
    for (int d = 0; d < ll->rank; d++) {
        LLVMValueRef c = shift(b, flat, -ll_dim_shift(ll, d));
        coord[d] = ll->shape[d] == 1 ? cst(flat, 0)
                                     : LLVMBuildAnd(b, c, cst(flat, (uint32_t)ll->shape[d] - 1), "");
    }
}

void layout_emit_coords(LLVMBuilderRef b, const LinearLayout *ll, LLVMValueRef tid,
                        LLVMValueRef r, LLVMValueRef *coord)
{
    layout_emit_unflat(b, ll, layout_emit_flat(b, ll, tid, r), coord);
}

LLVMValueRef layout_emit_deposit(LLVMBuilderRef b, LLVMValueRef x, uint32_t mask)
{
    uint32_t basis[32];
    int n = 0;
    for (int i = 0; i < 32; i++)
        if ((mask >> i) & 1)
            basis[n++] = 1u << i;
    return layout_emit_map(b, basis, n, x);
}

LLVMValueRef layout_emit_extract(LLVMBuilderRef b, LLVMValueRef x, uint32_t mask)
{
    LLVMValueRef acc = NULL;
    for (int i = 0, k = 0; i < 32;) {
        if (!((mask >> i) & 1)) {
            i++;
            continue;
        }
        int len = 1;
        while (i + len < 32 && ((mask >> (i + len)) & 1))
            len++;
        LLVMValueRef t = LLVMBuildAnd(b, shift(b, x, -i), cst(x, low_mask(len)), "");
        acc = layout_emit_combine(b, acc, shift(b, t, k), 1);
        k += len;
        i += len;
    }
    return acc ? acc : cst(x, 0);
}
