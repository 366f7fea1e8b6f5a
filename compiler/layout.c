/* layout.c: ownership math for TirLayout (the formulas are in tir.h's layout comment).
 * Compile-time facts (registers per thread, strides) are plain ints in LayoutInfo; the
 * per-thread parts (lane, warp, coordinates) are emitted as LLVM i32 arithmetic. All sizes
 * are powers of two, so divisions are shifts and remainders are masks. */
#include "layout.h"

static int lg2(int x)
{
    int n = 0;
    while ((1 << n) < x)
        n++;
    return n;
}

static int min_i(int a, int b) { return a < b ? a : b; }
static int max_i(int a, int b) { return a > b ? a : b; }

static void info_strides(LayoutInfo *li)
{
    int rs = 1, ls = 1, ws = 1;
    for (int j = 0; j < li->prank; j++) {
        int d = li->order[j];
        li->rstride[d] = rs;
        li->lstride[d] = ls;
        li->wstride[d] = ws;
        rs *= li->n[d];
        ls *= li->tpw[d];
        ws *= li->wpc[d];
    }
    li->R = rs;
    li->lanes = ls;
}

void layout_info(LayoutInfo *li, const TirLayout *l, const int *shape, int vrank)
{
    *li = (LayoutInfo){0};
    li->vrank = vrank;
    li->R = 1;
    li->lanes = 1;
    if (!l || l->kind != LAYOUT_BLOCKED)
        return;
    li->prank = l->rank;
    for (int d = 0, v = 0; d < l->rank; d++) {
        int sl = (l->sliced >> d) & 1;
        li->vdim[d] = sl ? -1 : v;
        li->S[d] = sl ? 1 : shape[v++];
        li->tpw[d] = l->tpw[d];
        li->wpc[d] = l->wpc[d];
        li->order[d] = l->order[d];
        li->sptp[d] = min_i(l->spt[d], li->S[d]);
        li->C[d] = li->sptp[d] * l->tpw[d] * l->wpc[d];
        li->n[d] = li->sptp[d] * max_i(1, li->S[d] / li->C[d]);
    }
    info_strides(li);
}

int layout_regs(const TirLayout *l, const int *shape, int vrank)
{
    LayoutInfo li;
    layout_info(&li, l, shape, vrank);
    return li.R;
}

int layout_distinct_lanes(const LayoutInfo *li, int d)
{
    return min_i(li->tpw[d], max_i(1, li->S[d] / li->sptp[d]));
}

int layout_distinct_warps(const LayoutInfo *li, int d)
{
    return min_i(li->wpc[d], max_i(1, li->S[d] / (li->sptp[d] * li->tpw[d])));
}

/* ---- emitted arithmetic ---- */
static LLVMValueRef cst(LLVMValueRef like, int v)
{
    return LLVMConstInt(LLVMTypeOf(like), (unsigned long long)v, 0);
}

static LLVMValueRef div_c(LLVMBuilderRef b, LLVMValueRef x, int c)
{
    return c <= 1 ? x : LLVMBuildLShr(b, x, cst(x, lg2(c)), "");
}

static LLVMValueRef rem_c(LLVMBuilderRef b, LLVMValueRef x, int c)
{
    return c <= 1 ? cst(x, 0) : LLVMBuildAnd(b, x, cst(x, c - 1), "");
}

static LLVMValueRef mul_c(LLVMBuilderRef b, LLVMValueRef x, int c)
{
    return c == 1 ? x : LLVMBuildMul(b, x, cst(x, c), "");
}

void layout_emit_reg_split(LLVMBuilderRef b, const LayoutInfo *li, LLVMValueRef r,
                           LLVMValueRef *i)
{
    for (int d = 0; d < li->prank; d++)
        i[d] = rem_c(b, div_c(b, r, li->rstride[d]), li->n[d]);
}

LLVMValueRef layout_emit_reg_join(LLVMBuilderRef b, const LayoutInfo *li, LLVMValueRef *i)
{
    LLVMValueRef r = NULL;
    for (int d = 0; d < li->prank; d++) {
        if (li->n[d] == 1)
            continue;
        LLVMValueRef t = mul_c(b, i[d], li->rstride[d]);
        r = r ? LLVMBuildAdd(b, r, t, "") : t;
    }
    return r ? r : LLVMConstInt(LLVMInt32TypeInContext(LLVMGetModuleContext(
                                    LLVMGetGlobalParent(LLVMGetBasicBlockParent(
                                        LLVMGetInsertBlock(b))))), 0, 0);
}

LLVMValueRef layout_emit_lane_d(LLVMBuilderRef b, const LayoutInfo *li, LLVMValueRef tid, int d)
{
    LLVMValueRef lane = rem_c(b, tid, li->lanes);
    return rem_c(b, div_c(b, lane, li->lstride[d]), li->tpw[d]);
}

LLVMValueRef layout_emit_warp_d(LLVMBuilderRef b, const LayoutInfo *li, LLVMValueRef tid, int d)
{
    LLVMValueRef warp = div_c(b, tid, li->lanes);
    return rem_c(b, div_c(b, warp, li->wstride[d]), li->wpc[d]);
}

void layout_emit_parent_coords(LLVMBuilderRef b, const LayoutInfo *li, LLVMValueRef tid,
                               LLVMValueRef r, LLVMValueRef *coord)
{
    LLVMValueRef i[TIR_MAX_RANK];
    layout_emit_reg_split(b, li, r, i);
    for (int d = 0; d < li->prank; d++) {
        if (li->S[d] == 1) {
            coord[d] = cst(r, 0);
            continue;
        }
        LLVMValueRef rep = div_c(b, i[d], li->sptp[d]);
        LLVMValueRef s = rem_c(b, i[d], li->sptp[d]);
        LLVMValueRef w = layout_emit_warp_d(b, li, tid, d);
        LLVMValueRef l = layout_emit_lane_d(b, li, tid, d);
        LLVMValueRef pos = LLVMBuildAdd(b, mul_c(b, w, li->tpw[d]), l, "");
        LLVMValueRef c = LLVMBuildAdd(b, mul_c(b, rep, li->C[d]), mul_c(b, pos, li->sptp[d]), "");
        coord[d] = rem_c(b, LLVMBuildAdd(b, c, s, ""), li->S[d]);
    }
}

void layout_emit_coords(LLVMBuilderRef b, const LayoutInfo *li, LLVMValueRef tid,
                        LLVMValueRef r, LLVMValueRef *coord)
{
    LLVMValueRef pc[TIR_MAX_RANK];
    layout_emit_parent_coords(b, li, tid, r, pc);
    for (int d = 0; d < li->prank; d++)
        if (li->vdim[d] >= 0)
            coord[li->vdim[d]] = pc[d];
}

/* ---- constructing layouts ---- */
static void default_order(TirLayout *l, int rank)
{
    for (int j = 0; j < rank; j++)
        l->order[j] = rank - 1 - j;
}

static int hint_numel(int rank, const int *shape)
{
    int n = 1;
    for (int d = 0; d < rank; d++)
        n *= shape[d];
    return n;
}

TirLayout layout_default_blocked(int rank, const int *shape, int elem_bytes, int num_warps,
                                 int threads_per_warp)
{
    TirLayout l = {.kind = LAYOUT_BLOCKED, .rank = rank};
    default_order(&l, rank);
    for (int d = 0; d < rank; d++)
        l.spt[d] = l.tpw[d] = l.wpc[d] = 1;
    if (threads_per_warp <= 1) {
        for (int d = 0; d < rank; d++)
            l.spt[d] = 1 << 20;
        return l;
    }
    int threads = num_warps * threads_per_warp;
    int vec = 16 / (elem_bytes > 0 ? elem_bytes : 4);
    vec = min_i(vec, max_i(1, hint_numel(rank, shape) / threads));
    l.spt[rank - 1] = max_i(1, min_i(vec, shape[rank - 1]));
    int lanes = threads_per_warp;
    for (int d = rank - 1; d >= 0; d--) {
        l.tpw[d] = min_i(lanes, max_i(1, shape[d] / l.spt[d]));
        lanes /= l.tpw[d];
    }
    l.tpw[0] *= lanes;
    int warps = num_warps;
    for (int d = 0; d < rank; d++) {
        l.wpc[d] = min_i(warps, max_i(1, shape[d] / (l.spt[d] * l.tpw[d])));
        warps /= l.wpc[d];
    }
    l.wpc[0] *= warps;
    return l;
}

int layout_parent_dim(const TirLayout *l, int axis)
{
    for (int d = 0, v = 0; d < l->rank; d++) {
        if ((l->sliced >> d) & 1)
            continue;
        if (v++ == axis)
            return d;
    }
    return -1;
}

TirLayout layout_slice(const TirLayout *parent, int value_axis)
{
    TirLayout l = *parent;
    int d = layout_parent_dim(parent, value_axis);
    if (d >= 0)
        l.sliced |= 1u << d;
    return l;
}

TirLayout layout_permute2(const TirLayout *l)
{
    TirLayout t = *l;
    int p0 = layout_parent_dim(l, 0), p1 = layout_parent_dim(l, 1);
    if (p0 < 0 || p1 < 0)
        return t;
    t.spt[p0] = l->spt[p1], t.spt[p1] = l->spt[p0];
    t.tpw[p0] = l->tpw[p1], t.tpw[p1] = l->tpw[p0];
    t.wpc[p0] = l->wpc[p1], t.wpc[p1] = l->wpc[p0];
    for (int j = 0; j < l->rank; j++)
        t.order[j] = l->order[j] == p0 ? p1 : l->order[j] == p1 ? p0 : l->order[j];
    return t;
}
