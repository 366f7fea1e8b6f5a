/* smem_layout.c: swizzled and padded shared-memory layouts (smem_layout.h). The contiguous
 * dim (C elements) is cut into panels of P (P = C without panels); an element's offset is
 * (col / P) * rows * W + row * W + ((chunk ^ phase(row)) * vec + col % vec), chunk =
 * (col % P) / vec, phase(row) = (row / per_phase) % max_phase, W = P + pad the row's width.
 * Without padding all are powers of two, so the map is linear over GF(2) (compiler/layout.c
 * turns it into a linear layout); a padded layout has no swizzle and no panels, and its linear
 * layout is that of the offsets before padding (row * C + col). */
#include "smem_layout.h"

static int lg2(int x)
{
    int n = 0;
    while ((1 << n) < x)
        n++;
    return n;
}

static int min_i(int a, int b) { return a < b ? a : b; }
static int max_i(int a, int b) { return a > b ? a : b; }

TirLayout smem_layout_swizzled(int rank, const int *shape, int elem_bytes, const int *order)
{
    TirLayout l = {.kind = LAYOUT_SHARED, .rank = rank, .per_phase = 1, .max_phase = 1};
    for (int j = 0; j < rank; j++)
        l.order[j] = order[j];
    int C = shape[order[0]], eb = elem_bytes > 0 ? elem_bytes : 1;
    l.vec = max_i(1, min_i(16 / eb, C));
    int chunks = C / l.vec, rows = smem_numel(shape, rank) / C;
    if (chunks > 1 && rows > 1) {
        l.per_phase = max_i(1, 128 / (C * eb));
        l.max_phase = max_i(1, min_i(chunks, 8 / l.per_phase));
    }
    return l;
}

TirLayout smem_layout_padded(int rank, const int *shape, int elem_bytes, const int *order)
{
    TirLayout l = smem_layout_swizzled(rank, shape, elem_bytes, order);
    int C = shape[order[0]], eb = elem_bytes > 0 ? elem_bytes : 1;
    if (l.vec * eb != 16 || (C / l.vec) % 8 || smem_numel(shape, rank) == C)
        return l; /* rows under 128 bytes: padding would cost more than 1/8 */
    l.per_phase = l.max_phase = 1;
    l.pad = l.vec;
    return l;
}

const TirLayout *smem_buffer_unpadded(Arena *a, const TirValue *buf)
{
    const TirLayout *l = buf->layout;
    if (!l->pad)
        return l;
    return tir_layout_new(a, smem_layout_swizzled(l->rank, buf->type.shape, et_bytes(buf->type.elem),
                                                  l->order));
}

int smem_buffer_elems(const TirLayout *l, const int *shape, int rank)
{
    int n = smem_numel(shape, rank);
    return l && l->pad ? n + n / shape[l->order[0]] * l->pad : n;
}

int smem_numel(const int *shape, int rank)
{
    int n = 1;
    for (int d = 0; d < rank; d++)
        n *= shape[d];
    return n;
}

TirLayout smem_layout_wgmma(int rank, const int *shape, int elem_bytes, const int *order)
{
    int C = shape[order[0]], P = min_i(C, 128 / (elem_bytes > 0 ? elem_bytes : 1));
    int panel_shape[TIR_MAX_RANK];
    for (int d = 0; d < rank; d++)
        panel_shape[d] = d == order[0] ? P : shape[d];
    TirLayout l = smem_layout_swizzled(rank, panel_shape, elem_bytes, order);
    l.panel = P;
    return l;
}

int smem_panel(const TirLayout *l, const int *shape)
{
    return l->panel > 0 ? l->panel : shape[l->order[0]];
}

uint32_t smem_offset(const TirLayout *l, const int *shape, int rank, const int *coord)
{
    uint32_t row = 0, stride = 1;
    for (int j = 1; j < rank; j++) {
        row += (uint32_t)coord[l->order[j]] * stride;
        stride *= (uint32_t)shape[l->order[j]];
    }
    uint32_t P = (uint32_t)smem_panel(l, shape), col = (uint32_t)coord[l->order[0]] % P;
    uint32_t panel = (uint32_t)coord[l->order[0]] / P;
    uint32_t vec = (uint32_t)l->vec, phase = (row / (uint32_t)l->per_phase) % (uint32_t)l->max_phase;
    uint32_t width = P + (uint32_t)l->pad;
    return (panel * stride + row) * width + ((col / vec) ^ phase) * vec + col % vec;
}

static LLVMValueRef cst(LLVMValueRef like, uint32_t v) { return LLVMConstInt(LLVMTypeOf(like), v, 0); }

LLVMValueRef smem_emit_offset(LLVMBuilderRef b, const TirLayout *l, const int *shape, int rank,
                              LLVMValueRef *coord)
{
    LLVMValueRef col = coord[l->order[0]], row = cst(col, 0);
    uint32_t stride = 1;
    for (int j = 1; j < rank; j++) {
        LLVMValueRef c = LLVMBuildMul(b, coord[l->order[j]], cst(col, stride), "");
        row = LLVMBuildAdd(b, row, c, "");
        stride *= (uint32_t)shape[l->order[j]];
    }
    int P = smem_panel(l, shape);
    LLVMValueRef at = row; /* the row counted over the panels */
    if (P < shape[l->order[0]]) { /* panels: the panel index is the outermost row index */
        LLVMValueRef panel = LLVMBuildLShr(b, col, cst(col, (uint32_t)lg2(P)), "");
        at = LLVMBuildAdd(b, row, LLVMBuildMul(b, panel, cst(col, stride), ""), "");
        col = LLVMBuildAnd(b, col, cst(col, (uint32_t)P - 1), "");
    }
    if (l->pad) /* rows of P + pad elements, not swizzled */
        return LLVMBuildAdd(b, LLVMBuildMul(b, at, cst(col, (uint32_t)(P + l->pad)), ""), col, "");
    LLVMValueRef chunk = LLVMBuildLShr(b, col, cst(col, (uint32_t)lg2(l->vec)), "");
    if (l->max_phase > 1) {
        LLVMValueRef ph = LLVMBuildLShr(b, row, cst(col, (uint32_t)lg2(l->per_phase)), "");
        ph = LLVMBuildAnd(b, ph, cst(col, (uint32_t)l->max_phase - 1), "");
        chunk = LLVMBuildXor(b, chunk, ph, "");
    }
    LLVMValueRef in = LLVMBuildAnd(b, col, cst(col, (uint32_t)l->vec - 1), "");
    LLVMValueRef off = LLVMBuildShl(b, chunk, cst(col, (uint32_t)lg2(l->vec)), "");
    off = LLVMBuildOr(b, off, in, "");
    return LLVMBuildAdd(b, LLVMBuildShl(b, at, cst(col, (uint32_t)lg2(P)), ""), off, "");
}
