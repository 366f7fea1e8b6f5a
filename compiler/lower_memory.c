/* lower_memory.c: loads and stores of scalars and tiles of pointers. Each thread accesses
 * the elements its layout gives it; masked-off elements never touch memory (a branch per
 * element, which the GPU backend turns into predicated accesses after unrolling). Where the
 * axis analysis proves a thread's consecutive registers address consecutive, aligned memory
 * under one mask value, they go as one vector access of up to 16 bytes (lower_vector below). */
#include "analysis_axis.h"
#include "lower_int.h"

/* ---- hints (cache_modifier=, eviction_policy=, volatile=) ---- */
/* On targets that take them as !nontemporal (AMD): an access hinted to stream past the
 * caches. */
static int streaming(Lower *L, int hints)
{
    return L->t->nontemporal_hints && (tir_mem_cache(hints) == CACHE_CS || tir_mem_evict(hints) == EVICT_FIRST);
}

static void set_nontemporal(Lower *L, LLVMValueRef access)
{
    LLVMValueRef one = LLVMConstInt(LLVMInt32TypeInContext(L->ctx), 1, 0);
    LLVMMetadataRef md = LLVMValueAsMetadata(one);
    LLVMMetadataRef node = LLVMMDNodeInContext2(L->ctx, &md, 1);
    unsigned kind = LLVMGetMDKindIDInContext(L->ctx, "nontemporal", 11);
    LLVMSetMetadata(access, kind, LLVMMetadataAsValue(L->ctx, node));
}

/* A load of type t at p, aligned to `align`, with op's hints: volatile as LLVM's volatile on
 * every target (it wins over the others); a cache operator or an eviction policy through the
 * target's load_hinted (NVIDIA) or as !nontemporal (AMD), ignored elsewhere. */
static LLVMValueRef mem_load(Lower *L, const TirOp *op, LLVMTypeRef t, LLVMValueRef p, unsigned align)
{
    int hints = (int)op->attr.i, vol = (hints & TIR_MEM_VOLATILE) != 0;
    if (!vol && tir_mem_hinted(hints) && L->t->load_hinted) {
        L->tc.loc = op->loc;
        LLVMValueRef x = L->t->load_hinted(&L->tc, t, p, hints);
        if (x)
            return x;
    }
    LLVMValueRef x = LLVMBuildLoad2(L->b, t, p, "");
    LLVMSetAlignment(x, align);
    if (vol || (L->t->nontemporal_hints && tir_mem_cache(hints) == CACHE_CV))
        LLVMSetVolatile(x, 1);
    else if (streaming(L, hints))
        set_nontemporal(L, x);
    return x;
}

static void mem_store(Lower *L, const TirOp *op, LLVMValueRef x, LLVMValueRef p, unsigned align)
{
    int hints = (int)op->attr.i;
    if (tir_mem_hinted(hints) && L->t->store_hinted) {
        L->tc.loc = op->loc;
        if (L->t->store_hinted(&L->tc, x, p, hints))
            return;
    }
    LLVMValueRef st = LLVMBuildStore(L->b, x, p);
    LLVMSetAlignment(st, align);
    if (streaming(L, hints))
        set_nontemporal(L, st);
}

static LLVMValueRef load_elem(Lower *L, const TirOp *op, ElemKind k, LLVMValueRef p)
{
    LLVMTypeRef mt = lw_mem_type(L, k);
    LLVMValueRef x = mem_load(L, op, mt, p, (unsigned)et_bytes(k));
    if (k == ET_BOOL)
        x = LLVMBuildICmp(L->b, LLVMIntNE, x, LLVMConstNull(mt), "");
    return x;
}

static void store_elem(Lower *L, const TirOp *op, ElemKind k, LLVMValueRef p, LLVMValueRef x)
{
    if (k == ET_BOOL)
        x = LLVMBuildZExt(L->b, x, lw_mem_type(L, k), "");
    mem_store(L, op, x, p, (unsigned)et_bytes(k));
}

/* Element r of a load's `other` operand (the value where the mask is off; default 0). */
static LLVMValueRef other_one(Lower *L, TirOp *op, LLVMValueRef r)
{
    ElemKind k = op->results[0]->type.elem;
    return op->nops > 2 ? lw_get(L, op->ops[2], r) : LLVMConstNull(lw_type(L, k));
}

/* Element r of a load (ops ptr [, mask [, other]]) under `mask` (NULL: none). */
static LLVMValueRef load_one(Lower *L, TirOp *op, const TirValue *mask, LLVMValueRef r)
{
    ElemKind k = op->results[0]->type.elem;
    LLVMValueRef p = lw_get(L, op->ops[0], r);
    if (!mask)
        return load_elem(L, op, k, p);
    LLVMValueRef m = lw_get(L, mask, r);
    LLVMValueRef other = other_one(L, op, r);
    LLVMBasicBlockRef from = LLVMGetInsertBlock(L->b);
    LLVMBasicBlockRef ld = lw_block(L, "ld"), join = lw_block(L, "ld.join");
    LLVMBuildCondBr(L->b, m, ld, join);
    LLVMPositionBuilderAtEnd(L->b, ld);
    LLVMValueRef x = load_elem(L, op, k, p);
    LLVMBuildBr(L->b, join);
    LLVMPositionBuilderAtEnd(L->b, join);
    LLVMValueRef phi = LLVMBuildPhi(L->b, lw_type(L, k), "");
    LLVMValueRef vals[2] = {x, other};
    LLVMBasicBlockRef bbs[2] = {ld, from};
    LLVMAddIncoming(phi, vals, bbs, 2);
    return phi;
}

/* `own && mask` (either may be NULL: no condition). */
static LLVMValueRef and_owner(Lower *L, LLVMValueRef own, LLVMValueRef mask)
{
    return own && mask ? LLVMBuildAnd(L->b, own, mask, "") : own ? own : mask;
}

/* Element r of a store: ops are ptr, value [, mask]; only where `own` (NULL: everywhere). */
static void store_one(Lower *L, TirOp *op, LLVMValueRef r, LLVMValueRef own)
{
    ElemKind k = op->ops[1]->type.elem;
    LLVMValueRef p = lw_get(L, op->ops[0], r), x = lw_get(L, op->ops[1], r);
    LLVMValueRef cond = and_owner(L, own, op->nops > 2 ? lw_get(L, op->ops[2], r) : NULL);
    if (!cond) {
        store_elem(L, op, k, p, x);
        return;
    }
    LLVMBasicBlockRef st = lw_block(L, "st"), join = lw_block(L, "st.join");
    LLVMBuildCondBr(L->b, cond, st, join);
    LLVMPositionBuilderAtEnd(L->b, st);
    store_elem(L, op, k, p, x);
    LLVMBuildBr(L->b, join);
    LLVMPositionBuilderAtEnd(L->b, join);
}

/* ---- vector accesses ---- */
static int64_t pow2_floor(int64_t v)
{
    int64_t p = 1;
    while (p * 2 <= v)
        p *= 2;
    return v < 1 ? 0 : p;
}

/* How many consecutive registers hold consecutive elements along one dim (*dim). */
static int contiguous_regs(const LinearLayout *ll, int *dim)
{
    if (ll->rank == 0 || ll->nbits[LL_REG] == 0)
        return 1;
    *dim = ll_basis_dim(ll, ll->basis[LL_REG][0]);
    return ll_contiguous_regs(ll, *dim);
}

/* Registers per vector for a load or store: 1 unless along the layout's fastest dim the
 * thread holds runs the analysis proves contiguous, aligned to the vector, and under a mask
 * constant over them. */
static int vec_width(Lower *L, TirOp *op, ElemKind k)
{
    const TirValue *ptr = op->ops[0];
    if (!L->k->axis || ptr->type.rank == 0 || k == ET_BOOL || k == ET_PTR)
        return 1;
    for (int i = 0; i < op->nops + op->nres; i++) {
        const TirValue *v = i < op->nops ? op->ops[i] : op->results[i - op->nops];
        if (v->type.rank && !tir_layout_equal(v->layout, ptr->layout))
            return 1;
    }
    const LinearLayout *ll = lw_ll(L, ptr);
    int vd, run = contiguous_regs(ll, &vd), eb = et_bytes(k);
    if (run <= 1)
        return 1;
    const AxisInfo *ax = &L->k->axis[ptr->id];
    int64_t v = run < 16 / eb ? run : 16 / eb;
    v = ax->contig[vd] < v ? ax->contig[vd] : v;
    v = ax->div[vd] / eb < v ? ax->div[vd] / eb : v;
    TirValue *mask = op->code == TIR_LOAD ? (op->nops > 1 ? op->ops[1] : NULL)
                                          : (op->nops > 2 ? op->ops[2] : NULL);
    if (mask && mask->type.rank) {
        int64_t c = L->k->axis[mask->id].cnst[vd];
        v = c < v ? c : v;
    }
    v = pow2_floor(v);
    return v > 1 ? (int)v : 1;
}

static LLVMValueRef reg_at(Lower *L, LLVMValueRef r0, int j)
{
    return j ? LLVMBuildAdd(L->b, r0, lw_i32c(L, j), "") : r0;
}

/* Registers r0 .. r0+n-1 of v (or zeros when v is NULL) as one <n x T>. */
static LLVMValueRef gather_regs(Lower *L, const TirValue *v, ElemKind k, LLVMValueRef r0, int n)
{
    LLVMTypeRef et = lw_type(L, k);
    LLVMValueRef x = LLVMGetUndef(LLVMVectorType(et, (unsigned)n));
    for (int j = 0; j < n; j++) {
        LLVMValueRef e = v ? lw_get(L, v, reg_at(L, r0, j)) : LLVMConstNull(et);
        x = LLVMBuildInsertElement(L->b, x, e, lw_i32c(L, j), "");
    }
    return x;
}

/* One aligned vector load of n elements from p, under mask m (NULL: none). */
static LLVMValueRef load_vec(Lower *L, TirOp *op, ElemKind k, LLVMValueRef p, LLVMValueRef m,
                             LLVMValueRef r0, int n)
{
    LLVMTypeRef vt = LLVMVectorType(lw_type(L, k), (unsigned)n);
    LLVMBasicBlockRef from = LLVMGetInsertBlock(L->b), ld = NULL, join = NULL;
    LLVMValueRef other = NULL;
    if (m) {
        other = gather_regs(L, op->nops > 2 ? op->ops[2] : NULL, k, r0, n);
        ld = lw_block(L, "vld"), join = lw_block(L, "vld.join");
        LLVMBuildCondBr(L->b, m, ld, join);
        LLVMPositionBuilderAtEnd(L->b, ld);
    }
    LLVMValueRef x = mem_load(L, op, vt, p, (unsigned)(n * et_bytes(k)));
    if (!m)
        return x;
    LLVMBuildBr(L->b, join);
    LLVMPositionBuilderAtEnd(L->b, join);
    LLVMValueRef phi = LLVMBuildPhi(L->b, vt, "");
    LLVMValueRef vals[2] = {x, other};
    LLVMBasicBlockRef bbs[2] = {ld, from};
    LLVMAddIncoming(phi, vals, bbs, 2);
    return phi;
}

static void load_group(Lower *L, TirOp *op, const TirValue *mask, LLVMValueRef r0, int n)
{
    TirValue *res = op->results[0];
    ElemKind k = res->type.elem;
    LLVMValueRef p = lw_get(L, op->ops[0], r0);
    LLVMValueRef m = mask ? lw_get(L, mask, r0) : NULL;
    LLVMValueRef x = load_vec(L, op, k, p, m, r0, n);
    for (int j = 0; j < n; j++)
        lw_set(L, res, reg_at(L, r0, j), LLVMBuildExtractElement(L->b, x, lw_i32c(L, j), ""));
}

static void store_group(Lower *L, TirOp *op, LLVMValueRef r0, int n, LLVMValueRef own)
{
    ElemKind k = op->ops[1]->type.elem;
    LLVMValueRef p = lw_get(L, op->ops[0], r0), x = gather_regs(L, op->ops[1], k, r0, n);
    LLVMValueRef cond = and_owner(L, own, op->nops > 2 ? lw_get(L, op->ops[2], r0) : NULL);
    LLVMBasicBlockRef join = NULL;
    if (cond) {
        LLVMBasicBlockRef st = lw_block(L, "vst");
        join = lw_block(L, "vst.join");
        LLVMBuildCondBr(L->b, cond, st, join);
        LLVMPositionBuilderAtEnd(L->b, st);
    }
    mem_store(L, op, x, p, (unsigned)(n * et_bytes(k)));
    if (join) {
        LLVMBuildBr(L->b, join);
        LLVMPositionBuilderAtEnd(L->b, join);
    }
}

/* The tile access as R/n vector accesses of n registers each (loads under `mask`, stores
 * only where `own`). */
static void lower_vector(Lower *L, TirOp *op, int n, const TirValue *mask, LLVMValueRef own)
{
    ElemLoop lp;
    LW_FOR(L, &lp, lw_regs(L, op->ops[0]) / n, L->t->unroll_elements, g) {
        LLVMValueRef r0 = LLVMBuildMul(L->b, g, lw_i32c(L, n), "");
        if (op->code == TIR_LOAD)
            load_group(L, op, mask, r0, n);
        else
            store_group(L, op, r0, n, own);
    }
}

/* ---- tiles and scalars ---- */
/* The scalar a tile mask applies to every element alike: the mask a splat of it, or the `and`
 * of such a splat and a per-element mask (*rest; NULL when there is none). NULL if neither. */
static const TirValue *uniform_guard(const TirValue *mask, const TirValue **rest)
{
    *rest = mask;
    if (!mask || !mask->type.rank || !mask->def)
        return NULL;
    const TirOp *d = mask->def;
    if (d->code == TIR_SPLAT) {
        *rest = NULL;
        return d->ops[0];
    }
    if (d->code != TIR_BINARY || d->attr.i != BIN_AND)
        return NULL;
    for (int i = 0; i < 2; i++) {
        const TirOp *s = d->ops[i]->def;
        if (s && s->code == TIR_SPLAT && tir_layout_equal(d->ops[1 - i]->layout, mask->layout)) {
            *rest = d->ops[1 - i];
            return s->ops[0];
        }
    }
    return NULL;
}

/* Every element of the tile load under `mask` (NULL: none). */
static void load_tile(Lower *L, TirOp *op, const TirValue *mask)
{
    TirValue *res = op->results[0];
    int n = vec_width(L, op, res->type.elem);
    if (n > 1) {
        lower_vector(L, op, n, mask, NULL);
        return;
    }
    ElemLoop lp;
    LW_FOR(L, &lp, lw_regs(L, res), L->t->unroll_elements, r) {
        lw_set(L, res, r, load_one(L, op, mask, r));
    }
}

/* A tile load whose mask is `guard` (one scalar) and `rest`, with registers as SSA values:
 * one branch on the guard around all of its accesses instead of one per element, so the
 * thread's accesses of one address (a block table's entry shared by its keys) are one. */
static void load_guarded(Lower *L, TirOp *op, const TirValue *guard, const TirValue *rest)
{
    TirValue *res = op->results[0];
    int n = lw_regs(L, res);
    LLVMValueRef *other = arena_alloc(L->k->arena, sizeof(LLVMValueRef) * (size_t)n);
    if (!other) {
        lw_fail(L, op, "out of memory in lowering");
        return;
    }
    for (int i = 0; i < n; i++)
        other[i] = other_one(L, op, lw_i32c(L, i));
    LLVMBasicBlockRef from = LLVMGetInsertBlock(L->b);
    LLVMBasicBlockRef ld = lw_block(L, "gld"), join = lw_block(L, "gld.join");
    LLVMBuildCondBr(L->b, lw_get(L, guard, NULL), ld, join);
    LLVMPositionBuilderAtEnd(L->b, ld);
    load_tile(L, op, rest);
    LLVMBasicBlockRef end = LLVMGetInsertBlock(L->b);
    LLVMBuildBr(L->b, join);
    LLVMPositionBuilderAtEnd(L->b, join);
    for (int i = 0; i < n; i++) {
        LLVMValueRef r = lw_i32c(L, i);
        LLVMValueRef phi = LLVMBuildPhi(L->b, lw_type(L, res->type.elem), "");
        LLVMValueRef vals[2] = {lw_get(L, res, r), other[i]};
        LLVMBasicBlockRef bbs[2] = {end, from};
        LLVMAddIncoming(phi, vals, bbs, 2);
        lw_set(L, res, r, phi);
    }
}

static int lower_load(Lower *L, TirOp *op)
{
    TirValue *res = op->results[0];
    const TirValue *mask = op->nops > 1 ? op->ops[1] : NULL, *rest;
    if (res->type.rank == 0) {
        lw_bind(L, res, load_one(L, op, mask, NULL));
        return 0;
    }
    lw_tile_new(L, res);
    const TirValue *guard = L->regs[res->id] ? uniform_guard(mask, &rest) : NULL;
    if (guard)
        load_guarded(L, op, guard, rest);
    else
        load_tile(L, op, mask);
    return 0;
}

static int lower_store(Lower *L, TirOp *op)
{
    TirValue *ptr = op->ops[0];
    /* each element (a scalar included) is written once, by its owner, not by every replica: a
     * program that loads a value and stores it back changed (a counter under a lock) must
     * not have other threads store it again */
    LLVMValueRef own = lw_writer(L, ptr);
    if (ptr->type.rank == 0) {
        store_one(L, op, NULL, own);
        return 0;
    }
    int n = vec_width(L, op, op->ops[1]->type.elem);
    if (n > 1) {
        lower_vector(L, op, n, NULL, own);
        return 0;
    }
    ElemLoop lp;
    LW_FOR(L, &lp, lw_regs(L, ptr), L->t->unroll_elements, r) {
        store_one(L, op, r, own);
    }
    return 0;
}

/* Element r of a prefetch (ops: ptr [, mask]) where `own`. */
static void prefetch_one(Lower *L, TirOp *op, LLVMValueRef r, LLVMValueRef own)
{
    LLVMValueRef p = lw_get(L, op->ops[0], r);
    LLVMValueRef cond = and_owner(L, own, op->nops > 1 ? lw_get(L, op->ops[1], r) : NULL);
    if (!cond) {
        L->t->prefetch(&L->tc, p, (int)op->attr.i);
        return;
    }
    LLVMBasicBlockRef go = lw_block(L, "pf"), join = lw_block(L, "pf.join");
    LLVMBuildCondBr(L->b, cond, go, join);
    LLVMPositionBuilderAtEnd(L->b, go);
    L->t->prefetch(&L->tc, p, (int)op->attr.i);
    LLVMBuildBr(L->b, join);
    LLVMPositionBuilderAtEnd(L->b, join);
}

/* A prefetch: one per element, by its owner (replicas ask nothing); nothing at all where the
 * target has no prefetch. */
static int lower_prefetch(Lower *L, TirOp *op)
{
    if (!L->t->prefetch)
        return 0;
    TirValue *ptr = op->ops[0];
    LLVMValueRef own = lw_writer(L, ptr);
    if (ptr->type.rank == 0) {
        prefetch_one(L, op, NULL, own);
        return 0;
    }
    ElemLoop lp;
    LW_FOR(L, &lp, lw_regs(L, ptr), L->t->unroll_elements, r) {
        prefetch_one(L, op, r, own);
    }
    return 0;
}

int lower_memory(Lower *L, TirOp *op)
{
    if (op->code == TIR_PREFETCH)
        return lower_prefetch(L, op);
    return op->code == TIR_LOAD ? lower_load(L, op) : lower_store(L, op);
}
