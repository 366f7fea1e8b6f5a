/* layout_dot.c: which encodings a dot takes on a target (layout_dot.h): mma.sync fragments
 * where the target has matrix instructions and the types and shapes fit one, else the FMA
 * path's blocked layouts; and how a dot's warps are spread over its result. */
#include "layout_dot.h"
#include "target.h"

int dot_kwidth(const TirOp *dot, const Target *t)
{
    if (!t->mma || dot->nops < 3)
        return 0;
    ElemKind a = dot->ops[0]->type.elem, b = dot->ops[1]->type.elem, c = dot->ops[2]->type.elem;
    const int *sa = dot->ops[0]->type.shape, *sb = dot->ops[1]->type.shape;
    int kw = 0;
    if (a != b)
        return 0;
    if (t->mma == TARGET_MMA_MFMA) /* v_mfma_f32_16x16x16 f16/bf16 at least */
        return (a == ET_F16 || a == ET_BF16) && c == ET_F32 && sa[0] >= 16 && sb[1] >= 16 &&
                       sa[1] >= 16 ? 4 : 0;
    if ((a == ET_F16 || a == ET_BF16) && c == ET_F32)
        kw = 2;
    else if (a == ET_I8 && c == ET_I32)
        kw = 4;
    else if (a == ET_F32 && c == ET_F32 && dot->attr.i == DOT_TF32)
        kw = 1;
    if (!kw || sa[0] < 16 || sb[1] < 8 || sa[1] < 8 * kw)
        return 0;
    return kw;
}

MmaKind dot_mma_kind(const TirOp *dot)
{
    switch (dot->ops[0]->type.elem) {
    case ET_BF16: return MMA_BF16_F32;
    case ET_F32: return MMA_TF32_F32;
    case ET_I8: return MMA_S8_S32;
    default: return MMA_F16_F32;
    }
}

/* Warps over the result's tiles of tm x tn. */
static void spread_warps(int M, int N, int tm, int tn, int num_warps, int *wm_out, int *wn_out)
{
    int wm = 1, wn = 1;
    while (wm * wn < num_warps) {
        int rows = M / (tm * wm), cols = N / (tn * wn);
        if (rows >= 2 && rows >= cols)
            wm *= 2;
        else if (cols >= 2)
            wn *= 2;
        else
            wm *= 2; /* more warps than tiles: the extra ones hold copies */
    }
    *wm_out = wm, *wn_out = wn;
}

static TirLayout mfma_layout(int M, int N, int num_warps, int chained, int want)
{
    int wm, wn;
    if (chained && M >= 16 * num_warps)
        wm = num_warps, wn = 1;
    else
        spread_warps(M, N, 16, 16, num_warps, &wm, &wn);
    int inst = M / wm >= 32 && N / wn >= 32 ? 32 : 16;
    if (want == 16 || (want == 32 && inst == 32)) /* mfma_size, where the tile allows it */
        inst = want;
    return layout_mfma(inst, wm, wn);
}

TirLayout dot_mma_layout(const TirOp *dot, const Target *t, int num_warps, int chained, int mfma_size)
{
    int M = dot->results[0]->type.shape[0], N = dot->results[0]->type.shape[1];
    int wm = 1, wn = 1;
    if (t->mma == TARGET_MMA_MFMA)
        return mfma_layout(M, N, num_warps, chained, mfma_size);
    /* chained dots (attention) keep P in registers between them with warps along M, when
     * there are rows for every warp; with fewer (decode's 16 rows) extra warps would only
     * repeat the same rows, so they split the columns and P is converted to the next dot */
    if (chained && M >= 16 * num_warps)
        return layout_mma(num_warps, 1);
    /* wgmma: whole warpgroups along M, each over all of N (compiler/lower_wgmma.c) */
    if (t->wgmma && num_warps % 4 == 0 && M % (16 * num_warps) == 0 && dot_kwidth(dot, t) == 2 &&
        dot->results[0]->type.elem == ET_F32)
        return layout_mma(num_warps, 1);
    spread_warps(M, N, 16, 8, num_warps, &wm, &wn);
    return layout_mma(wm, wn);
}

int dot_uses_mma(const TirOp *dot, const Target *t)
{
    const TirLayout *l = dot->results[0]->layout;
    return l && (l->kind == LAYOUT_MMA || l->kind == LAYOUT_MFMA) && !l->sliced && !l->transposed &&
           dot_kwidth(dot, t) > 0;
}

int layout_wgmma_operand(const Target *t, const TirLayout *to)
{
    return t->wgmma && to && to->kind == LAYOUT_DOT_OPERAND && to->parent == LAYOUT_MMA &&
           to->kwidth == 2 && !to->sliced && !to->transposed;
}

int dot_wgmma_reads(const Target *t, const TirOp *dot, const TirValue *x)
{
    const TirLayout *l = dot->results[0]->layout;
    return layout_wgmma_operand(t, x->layout) && l && l->kind == LAYOUT_MMA && l->wpc[1] == 1 &&
           l->wpc[0] % 4 == 0;
}
