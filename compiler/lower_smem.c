/* lower_smem.c: the shared-memory ops of tile IR. A local_alloc is its buffer's address (the
 * allocator's offset from the shared base); local_store writes each thread's registers at the
 * offsets the buffer's swizzled layout gives their coordinates, in vectors of up to 16 bytes
 * where registers run along the buffer's contiguous dim; local_load reads them back into the
 * result's layout, with ldmatrix when that layout is made of 8x8 matrices of 32-bit pieces
 * (the mma operand fragments) and the target has it, else element by element. Barriers are
 * ops of their own, placed by compiler/pass_barriers.c. */
#include "analysis_axis.h"
#include "lower_int.h"
#include "passes.h"
#include "smem_layout.h"

static LLVMValueRef byte_gep(Lower *L, LLVMValueRef base, LLVMValueRef off)
{
    return LLVMBuildGEP2(L->b, LLVMInt8TypeInContext(L->ctx), base, &off, 1, "");
}

/* Address of buffer `index` of a local_alloc. */
static LLVMValueRef buffer_at(Lower *L, TirValue *buf, TirValue *index)
{
    LLVMValueRef i = lw_val(L, index);
    LLVMValueRef off = LLVMBuildMul(L->b, i, lw_i32c(L, smem_buffer_bytes(buf)), "");
    return byte_gep(L, lw_val(L, buf), off);
}

/* Address of the element at `coord` in a buffer. */
static LLVMValueRef elem_at(Lower *L, TirValue *buf, LLVMValueRef base, LLVMValueRef *coord)
{
    LLVMValueRef off = smem_emit_offset(L->b, buf->layout, buf->type.shape, buf->type.rank, coord);
    return LLVMBuildGEP2(L->b, lw_mem_type(L, buf->type.elem), base, &off, 1, "");
}

/* Registers per vector: the run of registers along the buffer's contiguous dim, within one
 * chunk of the swizzle and 16 bytes. */
static int vector_regs(const TirValue *buf, const LinearLayout *ll)
{
    int cd = buf->layout->order[0], eb = et_bytes(buf->type.elem);
    int n = ll_contiguous_regs(ll, cd);
    if (n > buf->layout->vec)
        n = buf->layout->vec;
    while (n * eb > 16)
        n /= 2;
    return buf->type.elem == ET_BOOL ? 1 : n;
}

static LLVMValueRef to_mem(Lower *L, ElemKind k, LLVMValueRef x)
{
    return k == ET_BOOL ? LLVMBuildZExt(L->b, x, lw_mem_type(L, k), "") : x;
}

static LLVMValueRef from_mem(Lower *L, ElemKind k, LLVMValueRef x)
{
    return k == ET_BOOL ? LLVMBuildTrunc(L->b, x, lw_type(L, k), "") : x;
}

static int lower_local_store(Lower *L, TirOp *op)
{
    TirValue *buf = op->ops[0], *v = op->ops[2];
    const LinearLayout *ll = lw_ll(L, v);
    int n = vector_regs(buf, ll);
    ElemKind k = v->type.elem;
    LLVMValueRef base = buffer_at(L, buf, op->ops[1]);
    LLVMBasicBlockRef join = lw_if_owner(L, ll);
    ElemLoop lp;
    LLVMValueRef c[TIR_MAX_RANK];
    LW_FOR(L, &lp, ll_regs(ll) / n, L->t->unroll_elements, g) {
        LLVMValueRef r0 = LLVMBuildMul(L->b, g, lw_i32c(L, n), "");
        lw_coords(L, v, r0, c);
        LLVMValueRef p = elem_at(L, buf, base, c), x;
        if (n == 1) {
            x = to_mem(L, k, lw_get(L, v, r0));
        } else {
            x = LLVMGetUndef(LLVMVectorType(lw_type(L, k), (unsigned)n));
            for (int j = 0; j < n; j++) {
                LLVMValueRef e = lw_get(L, v, LLVMBuildAdd(L->b, r0, lw_i32c(L, j), ""));
                x = LLVMBuildInsertElement(L->b, x, e, lw_i32c(L, j), "");
            }
        }
        lw_smem_store(L, x, p);
    }
    lw_end_if(L, join);
    return 0;
}

static void load_elements(Lower *L, TirValue *buf, TirValue *res, LLVMValueRef base)
{
    const LinearLayout *ll = lw_ll(L, res);
    int n = vector_regs(buf, ll);
    ElemKind k = res->type.elem;
    LLVMTypeRef t = n == 1 ? lw_mem_type(L, k) : LLVMVectorType(lw_type(L, k), (unsigned)n);
    ElemLoop lp;
    LLVMValueRef c[TIR_MAX_RANK];
    LW_FOR(L, &lp, ll_regs(ll) / n, L->t->unroll_elements, g) {
        LLVMValueRef r0 = LLVMBuildMul(L->b, g, lw_i32c(L, n), "");
        lw_coords(L, res, r0, c);
        LLVMValueRef x = lw_smem_load(L, t, elem_at(L, buf, base, c));
        for (int j = 0; j < n; j++) {
            LLVMValueRef e = n == 1 ? from_mem(L, k, x) : LLVMBuildExtractElement(L->b, x, lw_i32c(L, j), "");
            lw_set(L, res, LLVMBuildAdd(L->b, r0, lw_i32c(L, j), ""), e);
        }
    }
}

/* ---- ldmatrix ---- */
typedef struct Ldm {
    int unit;   /* elements per 32-bit piece */
    int p, q;   /* the dim a piece runs along; the dim of a matrix's 8 rows */
    int trans;  /* the buffer is contiguous along q */
} Ldm;

static int basis_is(const LinearLayout *ll, uint32_t b, int d, int v)
{
    int c[TIR_MAX_RANK];
    ll_coords(ll, b, c);
    return ll_basis_dim(ll, b) == d && c[d] == v;
}

/* Every basis outside one matrix keeps the matrix's rows and 16 bytes together. */
static int matrices_aligned(const LinearLayout *ll, const Ldm *m, int unit_bits)
{
    int c[TIR_MAX_RANK];
    for (int k = 0; k < LL_NDIMS; k++)
        for (int i = k == LL_REG ? unit_bits : k == LL_LANE ? 5 : 0; i < ll->nbits[k]; i++) {
            ll_coords(ll, ll->basis[k][i], c);
            if (c[m->p] % (4 * m->unit) || c[m->q] % 8)
                return 0;
        }
    return 1;
}

/* Whether res's layout is made of ldmatrix's 8x8 matrices of 32-bit pieces and buf holds
 * their 16-byte rows whole (along p: plain; along q for 16-bit elements: .trans). */
static int ldmatrix_plan(Lower *L, TirValue *buf, TirValue *res, Ldm *m)
{
    const LinearLayout *ll = lw_ll(L, res);
    int eb = et_bytes(res->type.elem), ub = eb == 4 ? 0 : eb == 2 ? 1 : 2;
    if (!L->t->ldmatrix || ll->rank != 2 || res->type.elem == ET_BOOL || eb > 4 ||
        ll->nbits[LL_LANE] != 5 || ll->nbits[LL_REG] < ub)
        return 0;
    m->unit = 1 << ub;
    m->p = ll_basis_dim(ll, ub ? ll->basis[LL_REG][0] : ll->basis[LL_LANE][0]);
    m->q = 1 - m->p;
    if (m->p < 0)
        return 0;
    for (int i = 0; i < ub; i++)
        if (!basis_is(ll, ll->basis[LL_REG][i], m->p, 1 << i))
            return 0;
    for (int j = 0; j < 2; j++)
        if (!basis_is(ll, ll->basis[LL_LANE][j], m->p, m->unit << j))
            return 0;
    for (int j = 2; j < 5; j++)
        if (!basis_is(ll, ll->basis[LL_LANE][j], m->q, 1 << (j - 2)))
            return 0;
    int cd = buf->layout->order[0];
    m->trans = cd == m->q;
    if ((m->trans && eb != 2) || buf->layout->vec * eb < 16 || smem_buffer_bytes(buf) % 16)
        return 0;
    return matrices_aligned(ll, m, ub);
}

static void set_piece(Lower *L, TirValue *res, int r0, int unit, LLVMValueRef piece)
{
    LLVMTypeRef et = lw_type(L, res->type.elem);
    if (unit == 1) {
        lw_set(L, res, lw_i32c(L, r0), LLVMBuildBitCast(L->b, piece, et, ""));
        return;
    }
    LLVMValueRef v = LLVMBuildBitCast(L->b, piece, LLVMVectorType(et, (unsigned)unit), "");
    for (int j = 0; j < unit; j++)
        lw_set(L, res, lw_i32c(L, r0 + j), LLVMBuildExtractElement(L->b, v, lw_i32c(L, j), ""));
}

/* Lane l's row offset (elements) for the group of matrices starting at register r0: row
 * l % 8 of matrix l / 8, whose origin is where the registers of that matrix's first lane sit. */
static LLVMValueRef row_offset(Lower *L, TirValue *buf, TirValue *res, const Ldm *m, int r0,
                               int nmat)
{
    const LinearLayout *ll = lw_ll(L, res);
    LLVMValueRef lane = LLVMBuildAnd(L->b, L->tid, lw_i32c(L, 31), "");
    LLVMValueRef warp_tid = LLVMBuildAnd(L->b, L->tid, lw_i32c(L, ~31), "");
    LLVMValueRef mat = LLVMBuildAnd(L->b, LLVMBuildLShr(L->b, lane, lw_i32c(L, 3), ""),
                                    lw_i32c(L, nmat - 1), "");
    LLVMValueRef r = LLVMBuildAdd(L->b, lw_i32c(L, r0), LLVMBuildMul(L->b, mat, lw_i32c(L, m->unit), ""), "");
    LLVMValueRef c[TIR_MAX_RANK];
    layout_emit_coords(L->b, ll, warp_tid, r, c);
    int along = m->trans ? m->p : m->q;
    c[along] = LLVMBuildAdd(L->b, c[along], LLVMBuildAnd(L->b, lane, lw_i32c(L, 7), ""), "");
    return smem_emit_offset(L->b, buf->layout, buf->type.shape, buf->type.rank, c);
}

/* The offset row_offset emits, computed here for one lane and warp. */
static uint32_t row_offset_at(const LinearLayout *ll, const TirValue *buf, const Ldm *m,
                              uint32_t r0, int nmat, uint32_t lane, uint32_t warp)
{
    uint32_t r = r0 + ((lane >> 3) & (uint32_t)(nmat - 1)) * (uint32_t)m->unit;
    int c[TIR_MAX_RANK];
    ll_coords(ll, ll_apply(ll, r, 0, warp), c);
    c[m->trans ? m->p : m->q] += (int)(lane & 7);
    return smem_offset(buf->layout, buf->type.shape, buf->type.rank, c);
}

/* A group's row offsets split into a thread part (the group at r0 = 0) and a constant group
 * part g, the offset of lane 0 of warp 0: over GF(2) in (lane, warp, r0) where the buffer's
 * swizzle and the layout are linear (offset = thread part ^ g), and as a sum where a padded
 * buffer's offsets are affine (offset = thread part + g). The constant folds into the
 * instruction: one register per distinct first term instead of one per group, and no
 * per-group arithmetic in loops. For a sum, *reach is 0 (the thread part is used whole); for
 * the XOR form, the bits the thread part can reach, and the group's first term is (thread
 * part ^ (g & reach)) and its constant g & ~reach. 0 when neither holds. */
static int row_offset_split(Lower *L, TirValue *buf, TirValue *res, const Ldm *m, int r0,
                            int nmat, uint32_t *group, uint32_t *reach)
{
    const LinearLayout *ll = lw_ll(L, res);
    uint32_t g = row_offset_at(ll, buf, m, (uint32_t)r0, nmat, 0, 0), bits = 0;
    int sum = 1, xor = 1;
    for (uint32_t w = 0; w < (1u << ll->nbits[LL_WARP]); w++)
        for (uint32_t lane = 0; lane < 32; lane++) {
            uint32_t t = row_offset_at(ll, buf, m, 0, nmat, lane, w);
            uint32_t at = row_offset_at(ll, buf, m, (uint32_t)r0, nmat, lane, w);
            sum &= at == t + g;
            xor &= at == (t ^ g);
            bits |= t;
        }
    *group = g, *reach = sum ? 0 : bits;
    return sum || xor;
}

/* Address of lane l's row for the group at register r0 (see row_offset). */
static LLVMValueRef row_address(Lower *L, TirValue *buf, TirValue *res, LLVMValueRef base,
                                const Ldm *m, int r0, int nmat)
{
    LLVMTypeRef et = lw_mem_type(L, buf->type.elem);
    uint32_t group, reach;
    if (!row_offset_split(L, buf, res, m, r0, nmat, &group, &reach)) {
        LLVMValueRef off = row_offset(L, buf, res, m, r0, nmat);
        return LLVMBuildGEP2(L->b, et, base, &off, 1, "");
    }
    LLVMValueRef t = row_offset(L, buf, res, m, 0, nmat);
    LLVMValueRef near = LLVMBuildXor(L->b, t, lw_i32c(L, (int)(group & reach)), "");
    LLVMValueRef far = lw_i32c(L, (int)(group & ~reach));
    LLVMValueRef p = LLVMBuildGEP2(L->b, et, base, &near, 1, "");
    return LLVMBuildGEP2(L->b, et, p, &far, 1, "");
}

static void load_ldmatrix(Lower *L, TirValue *buf, TirValue *res, LLVMValueRef base, const Ldm *m)
{
    int R = lw_regs(L, res), pieces = R / m->unit;
    int nmat = pieces < 4 ? pieces : 4;
    for (int r0 = 0; r0 < R; r0 += nmat * m->unit) {
        LLVMValueRef out[4], p = row_address(L, buf, res, base, m, r0, nmat);
        if (L->t->smem_access)
            L->t->smem_access(&L->tc, p, 16, 0);
        L->t->ldmatrix(&L->tc, nmat, m->trans, p, out);
        for (int j = 0; j < nmat; j++)
            set_piece(L, res, r0 + j * m->unit, m->unit, out[j]);
    }
}

typedef struct Deferred {
    TirValue *buf, *res;
    LLVMValueRef base;
    Ldm m;
    int group;            /* registers per ldmatrix */
    unsigned char *done;  /* by group */
} Deferred;

/* The mma dot in the same block whose operand is the load's only use, on GPU targets; NULL
 * when there is none. */
static TirOp *deferrable(Lower *L, TirOp *op)
{
    TirValue *res = op->results[0];
    if (!L->t->unroll_elements || L->uses[res->id] != 1)
        return NULL;
    for (TirOp *u = op->next; u; u = u->next)
        if (u->code == TIR_DOT && (u->ops[0] == res || u->ops[1] == res))
            return u->results[0]->layout && u->results[0]->layout->kind == LAYOUT_MMA ? u : NULL;
    return NULL;
}

/* Leaves the load's reads to its dot: ldmatrix group by group (m), or the whole buffer to
 * wgmma's descriptors (m NULL). */
static int defer(Lower *L, TirValue *buf, TirValue *res, LLVMValueRef base, const Ldm *m)
{
    Deferred *d = arena_alloc(L->k->arena, sizeof *d);
    int R = lw_regs(L, res);
    if (!d)
        return 0;
    *d = (Deferred){buf, res, base, {0}, 0, NULL};
    if (m) {
        int pieces = R / m->unit;
        d->m = *m, d->group = (pieces < 4 ? pieces : 4) * m->unit;
        d->done = arena_alloc(L->k->arena, (size_t)(R / d->group + 1));
        if (!d->done)
            return 0;
    }
    L->deferred[res->id] = d;
    return 1;
}

int lw_deferred_buffer(Lower *L, const TirValue *v, TirValue **buf, LLVMValueRef *base)
{
    Deferred *d = L->deferred[v->id];
    if (!d || d->group)
        return 0;
    *buf = d->buf, *base = d->base;
    return 1;
}

int lw_fetch_fragments(Lower *L, const TirValue *v, int first_reg, int nregs)
{
    Deferred *d = L->deferred[v->id];
    if (!d || !d->group)
        return 0;
    for (int g = first_reg / d->group; g * d->group < first_reg + nregs; g++) {
        if (d->done[g])
            continue;
        d->done[g] = 1;
        int r0 = g * d->group, nmat = d->group / d->m.unit;
        LLVMValueRef out[4], p = row_address(L, d->buf, d->res, d->base, &d->m, r0, nmat);
        if (L->t->smem_access)
            L->t->smem_access(&L->tc, p, 16, 0);
        L->t->ldmatrix(&L->tc, nmat, d->m.trans, p, out);
        for (int j = 0; j < nmat; j++)
            set_piece(L, d->res, r0 + j * d->m.unit, d->m.unit, out[j]);
    }
    return 1;
}

static int lower_local_load(Lower *L, TirOp *op)
{
    TirValue *buf = op->ops[0], *res = op->results[0];
    LLVMValueRef base = buffer_at(L, buf, op->ops[1]);
    lw_tile_new(L, res);
    TirOp *dot = deferrable(L, op);
    if (dot && ((dot->ops[1] == res && lw_wgmma_dot(L, dot)) ||
                (dot->ops[0] == res && lw_wgmma_reads_a(L, dot))))
        return defer(L, buf, res, base, NULL) ? 0 : lw_fail(L, op, "out of memory");
    Ldm m;
    if (!ldmatrix_plan(L, buf, res, &m))
        load_elements(L, buf, res, base);
    else if (!dot || !defer(L, buf, res, base, &m))
        load_ldmatrix(L, buf, res, base, &m);
    return 0;
}

/* async_copy buf, index, ptr [, mask]: each thread copies its elements in vectors of n
 * (async_copy_vector) straight from global memory to the buffer; masked-off vectors read
 * nothing and land as zeros. One copy per element: replicas of the pointer layout skip. */
static int lower_async_copy(Lower *L, TirOp *op)
{
    TirValue *buf = op->ops[0], *ptr = op->ops[2], *mask = op->nops > 3 ? op->ops[3] : NULL;
    int n = async_copy_vector(ptr, mask, buf, L->k->axis), eb = et_bytes(buf->type.elem);
    if (!n || !L->t->async_copy)
        return lw_fail(L, op, "internal compiler error: async copy without a vector width");
    LLVMValueRef base = buffer_at(L, buf, op->ops[1]);
    LLVMBasicBlockRef join = lw_if_owner(L, lw_ll(L, ptr));
    ElemLoop lp;
    LLVMValueRef c[TIR_MAX_RANK];
    LW_FOR(L, &lp, lw_regs(L, ptr) / n, L->t->unroll_elements, g) {
        LLVMValueRef r0 = LLVMBuildMul(L->b, g, lw_i32c(L, n), "");
        lw_coords(L, ptr, r0, c);
        LLVMValueRef dst = elem_at(L, buf, base, c), src = lw_get(L, ptr, r0);
        LLVMValueRef bytes = lw_i32c(L, n * eb);
        if (mask)
            bytes = LLVMBuildSelect(L->b, lw_get(L, mask, r0), bytes, lw_i32c(L, 0), "");
        if (L->t->smem_access)
            L->t->smem_access(&L->tc, dst, n * eb, 1);
        L->t->async_copy(&L->tc, dst, src, n * eb, bytes);
    }
    lw_end_if(L, join);
    return 0;
}

int lower_smem(Lower *L, TirOp *op)
{
    switch (op->code) {
    case TIR_LOCAL_ALLOC:
        if (op->attr.i < 0)
            return lw_fail(L, op, "internal compiler error: shared buffer without an offset");
        lw_bind(L, op->results[0], byte_gep(L, L->t->smem_base(&L->tc), lw_i32c(L, (int)op->attr.i)));
        return 0;
    case TIR_LOCAL_STORE: return lower_local_store(L, op);
    case TIR_LOCAL_LOAD: return lower_local_load(L, op);
    case TIR_BARRIER:
        if (lw_kernel_uses_wgmma(L)) /* the writes before it, seen by wgmma's async proxy */
            L->t->wgmma_proxy_fence(&L->tc);
        L->t->barrier(&L->tc);
        return 0;
    case TIR_ASYNC_COPY: return lower_async_copy(L, op);
    case TIR_ASYNC_COMMIT:
        if (L->t->async_commit)
            L->t->async_commit(&L->tc);
        return 0;
    case TIR_ASYNC_WAIT:
        if (L->t->async_wait)
            L->t->async_wait(&L->tc, (int)op->attr.i);
        return 0;
    default: return lw_fail(L, op, "internal compiler error: shared-memory op not supported yet");
    }
}
