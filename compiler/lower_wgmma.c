/* lower_wgmma.c: dot on Hopper's warpgroup MMA (wgmma.mma_async m64nNk16, sm_90a). The
 * accumulator keeps mma.sync's layout with every warp along M (warp w of a warpgroup owns
 * rows 16w..16w+15 of the group's 64, as wgmma's accumulator fragment does). B stays in the
 * shared buffer its local_load names, and so does A when it comes from one ("SS"); otherwise
 * A comes from registers in mma.sync's A fragment ("RS": attention's P). A 64-bit matrix
 * descriptor per operand and K step gives wgmma the address, the panel and 8-row strides and
 * the swizzle of a buffer in smem_layout_wgmma's layout (compiler/smem_layout.h): the
 * buffer's start is computed once and each wgmma adds its constant part, so one register pair
 * per operand stays live. Every operand (A's registers, the descriptors' bases) is ready
 * before the one fence, the wgmmas follow (one per warpgroup row block, K step and 256
 * columns), then the commit and the wait: only the descriptors' constant adds run between
 * them, and A's registers stay live until the wait, so none an in-flight wgmma reads can be
 * reused (ptxas before CUDA 13.3 may do that to a register-input wgmma's A registers). */
#include "layout_dot.h"
#include "lower_int.h"
#include "passes.h"
#include "smem_layout.h"

enum { WGMMA_MAX_N = 256, WGMMA_K = 16, MAX_STEPS = 256 };

/* The shared buffer operand i is read from, when its local_load is its only use. */
static TirValue *operand_buffer(Lower *L, const TirOp *dot, int i)
{
    const TirValue *x = dot->ops[i];
    const TirOp *ld = x->def;
    if (!ld || ld->code != TIR_LOCAL_LOAD || L->uses[x->id] != 1 || !x->layout ||
        x->layout->kind != LAYOUT_DOT_OPERAND)
        return NULL;
    TirValue *buf = ld->ops[0];
    const TirLayout *l = buf->layout;
    if (buf->type.rank != 2 || !l || l->kind != LAYOUT_SHARED || !l->panel)
        return NULL;
    int eb = et_bytes(buf->type.elem), row_bytes = l->panel * eb;
    TirLayout want = smem_layout_wgmma(2, buf->type.shape, eb, l->order);
    int rows = smem_numel(buf->type.shape, 2) / buf->type.shape[l->order[0]];
    int ok = tir_layout_equal(&want, l) && want.vec * eb == 16 &&
             (row_bytes == 128 || row_bytes == 64 || row_bytes == 32) && rows % 8 == 0 &&
             smem_buffer_bytes(buf) % (8 * row_bytes) == 0;
    return ok ? buf : NULL;
}

/* The descriptor's swizzle mode for rows of `bytes`: 1 (128 B), 2 (64 B), 3 (32 B). */
static int swizzle_mode(int bytes)
{
    return bytes == 128 ? 1 : bytes == 64 ? 2 : 3;
}

int lw_wgmma_dot(Lower *L, const TirOp *dot)
{
    const TirValue *res = dot->results[0];
    const TirLayout *l = res->layout;
    if (!L->t->wgmma || dot_kwidth(dot, L->t) != 2 || res->type.elem != ET_F32 || !l ||
        l->kind != LAYOUT_MMA || l->sliced || l->transposed || l->wpc[1] != 1 || l->wpc[0] % 4)
        return 0;
    int M = res->type.shape[0], N = res->type.shape[1], K = dot->ops[0]->type.shape[1];
    if (M % (16 * l->wpc[0]) || N % 8 || K % WGMMA_K || K / WGMMA_K > MAX_STEPS)
        return 0;
    const TirOp *ld = dot->ops[1]->def;
    return ld && ld->block == dot->block && operand_buffer(L, dot, 1) != NULL;
}

int lw_wgmma_reads_a(Lower *L, const TirOp *dot)
{
    const TirOp *ld = dot->ops[0]->def;
    return lw_wgmma_dot(L, dot) && ld && ld->block == dot->block && operand_buffer(L, dot, 0);
}

static int any_wgmma(Lower *L, const TirBlock *b)
{
    for (const TirOp *op = b ? b->first : NULL; op; op = op->next) {
        if (op->code == TIR_DOT && lw_wgmma_dot(L, op))
            return 1;
        for (int r = 0; r < op->nregions; r++)
            if (any_wgmma(L, op->regions[r]))
                return 1;
    }
    return 0;
}

int lw_kernel_uses_wgmma(Lower *L)
{
    if (L->uses_wgmma < 0)
        L->uses_wgmma = L->t->wgmma && any_wgmma(L, L->k->body);
    return L->uses_wgmma;
}

/* The constant part of the descriptor of the [rows, K] (A) or [K, cols] (B) operand in
 * buffer `buf` for K step k0 and rows or columns from mn0, added to the buffer's start
 * (start_field). K-major buffers (K contiguous) hold the M or N rows in panels of K, 8-row
 * groups 8 rows apart; MN-major ones hold K rows per panel of M or N, panels a buffer's K rows
 * apart (the descriptor's leading offset). */
static unsigned long long descriptor(const TirValue *buf, int is_b, int k0, int mn0)
{
    const int *S = buf->type.shape;
    int eb = et_bytes(buf->type.elem), P = buf->layout->panel, row_bytes = P * eb;
    int kdim = is_b ? 0 : 1, K = S[kdim], MN = S[1 - kdim];
    long long start, lead = 1, stride = 8LL * row_bytes;
    if (buf->layout->order[0] == kdim) /* K-major */
        start = ((long long)(k0 / P) * MN * P + (long long)mn0 * P + k0 % P) * eb;
    else
        start = ((long long)(mn0 / P) * K * P + (long long)k0 * P) * eb, lead = (long long)K * row_bytes;
    return (unsigned long long)((start >> 4) & 0x3fff) |
           (unsigned long long)(lead > 1 ? (lead >> 4) & 0x3fff : 1) << 16 |
           (unsigned long long)((stride >> 4) & 0x3fff) << 32 |
           (unsigned long long)swizzle_mode(row_bytes) << 62;
}

/* A buffer's shared address in 16-byte units, as a descriptor's start field takes it. */
static LLVMValueRef start_field(Lower *L, LLVMValueRef base)
{
    LLVMTypeRef i64 = LLVMInt64TypeInContext(L->ctx);
    LLVMValueRef addr = LLVMBuildPtrToInt(L->b, base, i64, "");
    addr = LLVMBuildAnd(L->b, addr, LLVMConstInt(i64, 0x3ffff, 0), "");
    return LLVMBuildLShr(L->b, addr, LLVMConstInt(i64, 4, 0), "");
}

/* This thread's warpgroup's first row within a row block of A, as 16-byte units of A's
 * buffer: 64 rows per warpgroup. */
static LLVMValueRef warpgroup_rows(Lower *L, const TirValue *buf)
{
    int eb = et_bytes(buf->type.elem), P = buf->layout->panel, K = buf->type.shape[1];
    int units = buf->layout->order[0] == 1 ? 64 * P * eb / 16 /* K-major: 64 rows of a panel */
                                           : 64 / P * K * P * eb / 16; /* M-major: P <= 64 */
    LLVMTypeRef i64 = LLVMInt64TypeInContext(L->ctx);
    LLVMValueRef g = LLVMBuildLShr(L->b, L->tid, lw_i32c(L, 7), "");
    return LLVMBuildMul(L->b, LLVMBuildZExt(L->b, g, i64, ""), LLVMConstInt(i64, (unsigned)units, 0), "");
}

typedef struct Wg {
    Lower *L;
    TirOp *op;
    TirValue *abuf, *bbuf; /* abuf NULL: A from registers */
    LLVMValueRef aaddr, baddr; /* the buffers' start fields (A's at this warpgroup's rows) */
    Frag a, c;
    int M, N, K, sm, n;
} Wg;

/* One wgmma: row block m (this thread's warpgroup's 64 rows of it), columns n0..n0+n-1, K
 * step k; A's words (RS) or descriptor (SS), B's descriptor given. */
static int one_wgmma(Wg *w, int m, int n0, int k, LLVMValueRef *words)
{
    Lower *L = w->L;
    TirValue *res = w->op->results[0];
    LLVMValueRef acc[WGMMA_MAX_N / 2], d[WGMMA_MAX_N / 2];
    for (int j = 0; j < w->n / 8; j++) {
        if (lw_frag_at(&w->c, m, n0 + 8 * j))
            return -1;
        for (int i = 0; i < 4; i++)
            acc[4 * j + i] = lw_get(L, res, lw_i32c(L, (int)w->c.base + i));
    }
    unsigned long long adesc = w->abuf ? descriptor(w->abuf, 0, k, m) : 0;
    L->t->wgmma_mma(&L->tc, dot_mma_kind(w->op), w->n, words, w->aaddr, adesc, w->baddr,
                    descriptor(w->bbuf, 1, k, n0), w->abuf && w->abuf->layout->order[0] == 0,
                    w->bbuf->layout->order[0] == 1, acc, d);
    for (int j = 0; j < w->n / 8; j++) {
        lw_frag_at(&w->c, m, n0 + 8 * j);
        for (int i = 0; i < 4; i++)
            lw_set(L, res, lw_i32c(L, (int)w->c.base + i), d[4 * j + i]);
    }
    return 0;
}

/* The registers of res, read (set 0) or written back (set 1) through v. */
static void all_registers(Lower *L, TirValue *res, LLVMValueRef *v, int set)
{
    for (int i = 0; i < lw_regs(L, res); i++) {
        if (set)
            lw_set(L, res, lw_i32c(L, i), v[i]);
        else
            v[i] = lw_get(L, res, lw_i32c(L, i));
    }
}

/* A's words for every K step and row block (RS), in tied[0..]; their count, -1 on error. */
static int pack_a(Wg *w, LLVMValueRef *tied)
{
    int nw = 0;
    for (int k = 0; k < w->K; k += WGMMA_K)
        for (int m = 0; m < w->M; m += w->sm) {
            if (lw_frag_at(&w->a, m, k))
                return -1;
            lw_fetch_fragments(w->L, w->op->ops[0], (int)w->a.base, 8);
            for (int i = 0; i < 4; i++)
                tied[nw++] = lw_pack_word(w->L, w->op->ops[0], w->a.base, i, 2);
        }
    return nw;
}

static int issue(Wg *w, LLVMValueRef *words)
{
    Lower *L = w->L;
    int rows = w->M / w->sm, cols = (w->N + w->n - 1) / w->n, steps = w->K / WGMMA_K;
    TirValue *res = w->op->results[0];
    int R = lw_regs(L, res), nw = w->abuf ? 0 : 4 * rows * steps;
    LLVMValueRef *tied = arena_alloc(L->k->arena, sizeof *tied * (size_t)(nw + R + 1));
    if (!tied)
        return -1;
    for (int i = 0; i < nw; i++)
        tied[i] = words[i];
    all_registers(L, res, tied + nw, 0);
    L->t->wgmma_fence(&L->tc, 1, tied, nw + R);
    all_registers(L, res, tied + nw, 1);
    for (int s = 0; s < steps; s++)
        for (int r = 0; r < rows; r++)
            for (int j = 0; j < cols; j++)
                if (one_wgmma(w, r * w->sm, j * w->n, s * WGMMA_K,
                              w->abuf ? NULL : tied + 4 * (s * rows + r)))
                    return -1;
    all_registers(L, res, tied + nw, 0);
    L->t->wgmma_wait(&L->tc, tied + nw, R, tied, nw);
    all_registers(L, res, tied + nw, 1);
    return 0;
}

int lower_dot_wgmma(Lower *L, TirOp *op)
{
    TirValue *res = op->results[0];
    Wg w = {.L = L, .op = op, .a = {lw_ll(L, op->ops[0]), 3}, .c = {lw_ll(L, res), 2}};
    LLVMValueRef abase = NULL, bbase;
    if (!lw_deferred_buffer(L, op->ops[1], &w.bbuf, &bbase) ||
        (lw_wgmma_reads_a(L, op) && !lw_deferred_buffer(L, op->ops[0], &w.abuf, &abase)))
        return lw_fail(L, op, "internal compiler error: wgmma without its operand's buffer");
    if (L->failed)
        return -1;
    lw_tile_new(L, res);
    lw_copy_value(L, res, op->ops[2]);
    w.M = res->type.shape[0], w.N = res->type.shape[1], w.K = op->ops[0]->type.shape[1];
    w.sm = lw_tile_span(w.c.ll, 2, 0), w.n = w.N < WGMMA_MAX_N ? w.N : WGMMA_MAX_N;
    w.baddr = start_field(L, bbase);
    if (w.abuf)
        w.aaddr = LLVMBuildAdd(L->b, start_field(L, abase), warpgroup_rows(L, w.abuf), "");
    LLVMValueRef *words = NULL;
    if (!w.abuf) {
        words = arena_alloc(L->k->arena, sizeof *words * (size_t)(4 * (w.M / w.sm) * (w.K / WGMMA_K)));
        if (!words || pack_a(&w, words) < 0)
            return lw_fail(L, op, "internal compiler error: wgmma fragments do not tile the "
                                  "dot's layouts");
    }
    if (issue(&w, words))
        return lw_fail(L, op, "internal compiler error: wgmma fragments do not tile the dot's "
                              "layouts");
    return 0;
}
