/* lower.c: the core of lowering (lower.h): the kernel function, the storage of values
 * (tile registers in entry-block allocas, scalars as LLVM values), per-register loops,
 * shared-memory accesses (through the target's check hook), and the dispatch of ops to
 * lower_*.c by concern. */
#include <string.h>
#include <llvm-c/DebugInfo.h>
#include "codegen.h"
#include "lower_int.h"

LLVMTypeRef lw_i32(Lower *L) { return LLVMInt32TypeInContext(L->ctx); }
LLVMValueRef lw_i32c(Lower *L, int v) { return LLVMConstInt(lw_i32(L), (unsigned long long)(long long)v, 1); }

LLVMTypeRef lw_type(Lower *L, ElemKind k)
{
    switch (k) {
    case ET_BOOL: return LLVMInt1TypeInContext(L->ctx);
    case ET_I8: case ET_U8: return LLVMInt8TypeInContext(L->ctx);
    case ET_I16: case ET_U16: return LLVMInt16TypeInContext(L->ctx);
    case ET_I32: case ET_U32: return LLVMInt32TypeInContext(L->ctx);
    case ET_I64: case ET_U64: return LLVMInt64TypeInContext(L->ctx);
    case ET_F16: return LLVMHalfTypeInContext(L->ctx);
    case ET_BF16: return LLVMBFloatTypeInContext(L->ctx);
    case ET_F32: return LLVMFloatTypeInContext(L->ctx);
    case ET_F64: return LLVMDoubleTypeInContext(L->ctx);
    case ET_PTR: return LLVMPointerTypeInContext(L->ctx, (unsigned)L->t->global_as);
    case ET_F8E4M3: case ET_F8E5M2: return LLVMInt8TypeInContext(L->ctx); /* the bits */
    default: return LLVMInt8TypeInContext(L->ctx);
    }
}

LLVMTypeRef lw_mem_type(Lower *L, ElemKind k)
{
    return k == ET_BOOL ? LLVMInt8TypeInContext(L->ctx) : lw_type(L, k);
}

LLVMBasicBlockRef lw_block(Lower *L, const char *name)
{
    return LLVMAppendBasicBlockInContext(L->ctx, L->tc.fn, name);
}

int lw_fail(Lower *L, const TirOp *op, const char *msg)
{
    diag_error(L->d, op ? op->loc : (SrcLoc){0}, "%s", msg);
    L->failed = 1;
    return -1;
}

LLVMValueRef lw_alloca(Lower *L, LLVMTypeRef t, int n, const char *name)
{
    LLVMTypeRef at = n == 1 ? t : LLVMArrayType2(t, (uint64_t)n);
    LLVMValueRef a = LLVMBuildAlloca(L->tc.alloca_b, at, name);
    LLVMSetAlignment(a, 16);
    return a;
}

const LinearLayout *lw_ll(Lower *L, const TirValue *v)
{
    static const LinearLayout scalar = {0};
    LinearLayout *ll = L->lls[v->id];
    if (ll)
        return ll;
    ll = arena_alloc(L->k->arena, sizeof *ll);
    if (!ll || layout_ll(v->type.rank ? v->layout : NULL, v->type.shape, v->type.rank, ll)) {
        char *what = v->layout ? tir_layout_str(L->k->arena, v->layout) : "no layout";
        diag_error(L->d, v->def ? v->def->loc : (SrcLoc){0},
                   "internal compiler error: layout %s has no linear form at %s", what,
                   tir_type_str(L->k->arena, &v->type));
        L->failed = 1;
        return &scalar;
    }
    return L->lls[v->id] = ll;
}

int lw_regs(Lower *L, const TirValue *v) { return ll_regs(lw_ll(L, v)); }

/* The thread's part of a layout's flat offsets (its lane and warp bits) and its coordinates,
 * computed once per distinct set of bases and shape, in the kernel's prologue (which dominates
 * every use). */
static ThreadPart *thread_part(Lower *L, const LinearLayout *ll)
{
    uint32_t tb[2 * LL_MAX_BITS];
    int nt = 0;
    for (int k = LL_LANE; k < LL_NDIMS; k++)
        for (int i = 0; i < ll->nbits[k]; i++)
            tb[nt++] = ll->basis[k][i];
    for (ThreadPart *p = L->thread_parts; p; p = p->next)
        if (p->n == nt && p->rank == ll->rank && !memcmp(p->basis, tb, sizeof(uint32_t) * (size_t)nt) &&
            !memcmp(p->shape, ll->shape, sizeof(int) * (size_t)ll->rank))
            return p;
    ThreadPart *p = arena_alloc(L->k->arena, sizeof *p);
    if (!p)
        return NULL;
    memcpy(p->basis, tb, sizeof(uint32_t) * (size_t)nt);
    memcpy(p->shape, ll->shape, sizeof(int) * (size_t)ll->rank);
    p->n = nt, p->rank = ll->rank;
    p->value = layout_emit_map(L->prologue, tb, nt, L->tid);
    layout_emit_unflat(L->prologue, ll, p->value, p->coord);
    p->next = L->thread_parts;
    L->thread_parts = p;
    return p;
}

LLVMValueRef lw_thread_flat(Lower *L, const LinearLayout *ll)
{
    ThreadPart *p = thread_part(L, ll);
    return p ? p->value : layout_emit_flat(L->b, ll, L->tid, lw_i32c(L, 0));
}

/* The flat-offset bits that the bases of kinds [from, to] can set. */
static uint32_t bits_of(const LinearLayout *ll, int from, int to)
{
    uint32_t bits = 0;
    for (int k = from; k <= to; k++)
        for (int i = 0; i < ll->nbits[k]; i++)
            bits |= ll->basis[k][i];
    return bits;
}

/* Coordinates of register r: the register's part (constants on GPU targets) XOR the thread's,
 * dim by dim (the bits of different dims never mix in a flat offset); a disjoint OR where the
 * two parts never share a bit, so the constant shows as an addend (split pointer offsets). */
void lw_coords(Lower *L, const TirValue *v, LLVMValueRef r, LLVMValueRef *coord)
{
    const LinearLayout *ll = lw_ll(L, v);
    LLVMValueRef flat = layout_emit_map(L->b, ll->basis[LL_REG], ll->nbits[LL_REG], r);
    layout_emit_unflat(L->b, ll, flat, coord);
    ThreadPart *p = ll->nbits[LL_LANE] + ll->nbits[LL_WARP] ? thread_part(L, ll) : NULL;
    int disjoint = p && !(bits_of(ll, LL_REG, LL_REG) & bits_of(ll, LL_LANE, LL_WARP));
    for (int d = 0; p && d < ll->rank; d++)
        coord[d] = LLVMIsAConstantInt(coord[d]) && LLVMConstIntGetZExtValue(coord[d]) == 0
                       ? p->coord[d] : layout_emit_combine(L->b, p->coord[d], coord[d], disjoint);
}

LLVMValueRef lw_tile_storage(Lower *L, const TirValue *v)
{
    return lw_alloca(L, lw_type(L, v->type.elem), lw_regs(L, v), "tile");
}

void lw_bind(Lower *L, const TirValue *v, LLVMValueRef x) { L->vals[v->id] = x; }
LLVMValueRef lw_val(Lower *L, const TirValue *v) { return L->vals[v->id]; }

LLVMValueRef lw_elem_ptr(Lower *L, const TirValue *v, LLVMValueRef storage, LLVMValueRef r)
{
    return LLVMBuildGEP2(L->b, lw_type(L, v->type.elem), storage, &r, 1, "");
}

/* The register index r as a C int, for values kept as SSA registers (-1 if not constant). */
static int const_index(Lower *L, const TirValue *v, LLVMValueRef r)
{
    if (!LLVMIsAConstantInt(r)) {
        lw_fail(L, v->def, "internal compiler error: a run-time register index on a GPU target");
        return -1;
    }
    long long i = LLVMConstIntGetSExtValue(r);
    if (i < 0 || i >= lw_regs(L, v)) {
        lw_fail(L, v->def, "internal compiler error: a register index out of range");
        return -1;
    }
    return (int)i;
}

LLVMValueRef lw_get(Lower *L, const TirValue *v, LLVMValueRef r)
{
    LLVMValueRef s = L->vals[v->id];
    if (v->type.rank == 0)
        return s;
    if (L->regs[v->id]) {
        int i = const_index(L, v, r);
        LLVMValueRef x = i >= 0 ? L->regs[v->id][i] : NULL;
        if (!x && i >= 0)
            lw_fail(L, v->def, "internal compiler error: a register read before it is written");
        return x ? x : LLVMGetUndef(lw_type(L, v->type.elem));
    }
    return LLVMBuildLoad2(L->b, lw_type(L, v->type.elem), lw_elem_ptr(L, v, s, r), "");
}

void lw_set(Lower *L, const TirValue *v, LLVMValueRef r, LLVMValueRef x)
{
    if (v->type.rank == 0) {
        L->vals[v->id] = x;
        return;
    }
    if (L->regs[v->id]) {
        int i = const_index(L, v, r);
        if (i >= 0)
            L->regs[v->id][i] = x;
        return;
    }
    LLVMBuildStore(L->b, x, lw_elem_ptr(L, v, L->vals[v->id], r));
}

void lw_tile_new(Lower *L, const TirValue *v)
{
    if (!L->t->unroll_elements) {
        lw_bind(L, v, lw_tile_storage(L, v));
        return;
    }
    L->regs[v->id] = arena_alloc(L->k->arena, sizeof(LLVMValueRef) * (size_t)lw_regs(L, v));
    L->vals[v->id] = NULL;
    if (!L->regs[v->id])
        lw_fail(L, v->def, "out of memory in lowering");
}

void lw_copy_value(Lower *L, const TirValue *dst, const TirValue *src)
{
    if (!L->regs[dst->id] && !L->regs[src->id]) {
        lw_copy_tile(L, dst, lw_val(L, dst), lw_val(L, src));
        return;
    }
    ElemLoop lp;
    LW_FOR(L, &lp, lw_regs(L, dst), L->t->unroll_elements, r)
        lw_set(L, dst, r, lw_get(L, src, r));
}

void lw_store_tile(Lower *L, const TirValue *v, LLVMValueRef dst)
{
    if (!L->regs[v->id]) {
        lw_copy_tile(L, v, dst, lw_val(L, v));
        return;
    }
    for (int i = 0; i < lw_regs(L, v); i++)
        LLVMBuildStore(L->b, L->regs[v->id][i] ? L->regs[v->id][i] : LLVMGetUndef(lw_type(L, v->type.elem)),
                       lw_elem_ptr(L, v, dst, lw_i32c(L, i)));
}

void lw_copy_tile(Lower *L, const TirValue *v, LLVMValueRef dst, LLVMValueRef src)
{
    if (dst == src)
        return;
    LLVMTypeRef at = LLVMArrayType2(lw_type(L, v->type.elem), (uint64_t)lw_regs(L, v));
    LLVMBuildMemCpy(L->b, dst, 16, src, 16, LLVMSizeOf(at));
}

/* Thread-index bits that only select replicas of a layout's elements. */
static uint32_t replica_bits(const LinearLayout *ll)
{
    return ll_zero_mask(ll, LL_LANE) | ll_zero_mask(ll, LL_WARP) << ll->nbits[LL_LANE];
}

LLVMValueRef lw_owner(Lower *L, const LinearLayout *ll)
{
    uint32_t bits = replica_bits(ll);
    if (!bits)
        return NULL;
    LLVMValueRef m = LLVMBuildAnd(L->b, L->tid, LLVMConstInt(lw_i32(L), bits, 0), "");
    return LLVMBuildICmp(L->b, LLVMIntEQ, m, lw_i32c(L, 0), "owner");
}

LLVMValueRef lw_writer(Lower *L, const TirValue *v)
{
    if (v->type.rank > 0)
        return lw_owner(L, lw_ll(L, v));
    if (L->k->num_warps * L->k->threads_per_warp <= 1)
        return NULL;
    return LLVMBuildICmp(L->b, LLVMIntEQ, L->tid, lw_i32c(L, 0), "thread0");
}

LLVMBasicBlockRef lw_if_owner(Lower *L, const LinearLayout *ll)
{
    LLVMValueRef own = lw_owner(L, ll);
    if (!own)
        return NULL;
    LLVMBasicBlockRef then = lw_block(L, "owner"), join = lw_block(L, "owner.join");
    LLVMBuildCondBr(L->b, own, then, join);
    LLVMPositionBuilderAtEnd(L->b, then);
    return join;
}

void lw_end_if(Lower *L, LLVMBasicBlockRef join)
{
    if (!join)
        return;
    LLVMBuildBr(L->b, join);
    LLVMPositionBuilderAtEnd(L->b, join);
}

/* ---- per-register loops ---- */
/* Asks LLVM to unroll the loop whose latch branch is `br` at most `count` times (1: not). */
static void limit_unroll(Lower *L, LLVMValueRef br, int count)
{
    LLVMMetadataRef tmp = LLVMTemporaryMDNode(L->ctx, NULL, 0);
    LLVMMetadataRef kv[2] = {LLVMMDStringInContext2(L->ctx, "llvm.loop.unroll.count", 22),
                             LLVMValueAsMetadata(lw_i32c(L, count))};
    LLVMMetadataRef u = LLVMMDNodeInContext2(L->ctx, kv, 2);
    LLVMMetadataRef ops[2] = {tmp, u};
    LLVMMetadataRef loop = LLVMMDNodeInContext2(L->ctx, ops, 2);
    LLVMMetadataReplaceAllUsesWith(tmp, loop);
    unsigned kind = LLVMGetMDKindIDInContext(L->ctx, "llvm.loop", 9);
    LLVMSetMetadata(br, kind, LLVMMetadataAsValue(L->ctx, loop));
}

/* Host code copies a short element loop's body n times (LW_UNROLL_ALWAYS); an LLVM loop
 * nested in such copies may be unrolled by LLVM at most HOST_NESTED_BODIES / copies times, so
 * that the straight-line code stays bounded: a row max of an f32[16, 64] tile (16 copies of a
 * 64-element loop, which O3 unrolled in full and vectorized as one block) took 1.0 s to compile
 * and 8 rounds of an argmax over it 19 s. */
enum { HOST_NESTED_BODIES = 64 };

static int nested_unroll_limit(const Lower *L, int max_unroll)
{
    if (L->t->unroll_elements || L->straight_copies <= 1 || max_unroll)
        return max_unroll;
    int count = HOST_NESTED_BODIES / L->straight_copies;
    return count > 1 ? count : -1;
}

LLVMValueRef lw_for_begin(Lower *L, ElemLoop *lp, int n, int unroll, int max_unroll)
{
    *lp = (ElemLoop){.n = n, .unrolled = unroll || (n <= LW_UNROLL_ALWAYS && max_unroll >= 0),
                     .max_unroll = max_unroll};
    if (n <= 0)
        return NULL;
    if (lp->unrolled) {
        lp->outer_copies = L->straight_copies;
        if (!L->t->unroll_elements)
            L->straight_copies *= n;
        return lw_i32c(L, 0);
    }
    lp->max_unroll = nested_unroll_limit(L, max_unroll);
    lp->pre = LLVMGetInsertBlock(L->b);
    lp->body = lw_block(L, "r.loop");
    lp->exit = lw_block(L, "r.done");
    LLVMBuildBr(L->b, lp->body);
    LLVMPositionBuilderAtEnd(L->b, lp->body);
    lp->phi = LLVMBuildPhi(L->b, lw_i32(L), "r");
    LLVMValueRef zero = lw_i32c(L, 0);
    LLVMAddIncoming(lp->phi, &zero, &lp->pre, 1);
    return lp->phi;
}

LLVMValueRef lw_for_next(Lower *L, ElemLoop *lp)
{
    if (lp->unrolled) {
        if (++lp->i < lp->n)
            return lw_i32c(L, lp->i);
        L->straight_copies = lp->outer_copies;
        return NULL;
    }
    LLVMValueRef next = LLVMBuildNUWAdd(L->b, lp->phi, lw_i32c(L, 1), "");
    LLVMValueRef more = LLVMBuildICmp(L->b, LLVMIntULT, next, lw_i32c(L, lp->n), "");
    LLVMBasicBlockRef from = LLVMGetInsertBlock(L->b);
    LLVMValueRef br = LLVMBuildCondBr(L->b, more, lp->body, lp->exit);
    if (lp->max_unroll)
        limit_unroll(L, br, lp->max_unroll < 0 ? 1 : lp->max_unroll);
    LLVMAddIncoming(lp->phi, &next, &from, 1);
    LLVMPositionBuilderAtEnd(L->b, lp->exit);
    return NULL;
}

/* ---- shared memory ---- */

static int type_bytes(Lower *L, LLVMTypeRef t)
{
    return (int)LLVMABISizeOfType(LLVMGetModuleDataLayout(L->mod), t);
}

LLVMValueRef lw_smem_load(Lower *L, LLVMTypeRef t, LLVMValueRef ptr)
{
    if (L->t->smem_access)
        L->t->smem_access(&L->tc, ptr, type_bytes(L, t), 0);
    return LLVMBuildLoad2(L->b, t, ptr, "");
}

void lw_smem_store(Lower *L, LLVMValueRef x, LLVMValueRef ptr)
{
    if (L->t->smem_access)
        L->t->smem_access(&L->tc, ptr, type_bytes(L, LLVMTypeOf(x)), 1);
    LLVMBuildStore(L->b, x, ptr);
}

/* ---- ops ---- */
static int lower_op(Lower *L, TirOp *op)
{
    L->tc.loc = op->loc;
    switch (op->code) {
    case TIR_CONST: case TIR_PARAM: case TIR_PROGRAM_ID: case TIR_NUM_PROGRAMS:
    case TIR_ARANGE: case TIR_BINARY: case TIR_CMP: case TIR_UNARY: case TIR_SELECT:
    case TIR_CAST: case TIR_FMA: case TIR_ADDPTR:
        return lower_elementwise(L, op);
    case TIR_INLINE_ASM: return lower_inline_asm(L, op);
    case TIR_SPLAT: case TIR_EXPAND_DIMS: case TIR_BROADCAST: case TIR_TRANS:
    case TIR_CONVERT_LAYOUT: case TIR_RESHAPE: case TIR_PERMUTE: case TIR_JOIN: case TIR_SPLIT:
    case TIR_HINT:
        return lower_shape(L, op);
    case TIR_ASSUME: {
        LLVMValueRef c = lw_val(L, op->ops[0]);
        target_intrinsic(&L->tc, "llvm.assume", NULL, 0, &c, 1);
        return 0;
    }
    case TIR_LOAD: case TIR_STORE: case TIR_PREFETCH: return lower_memory(L, op);
    case TIR_ATOMIC: return lower_atomic(L, op);
    case TIR_PRINT: case TIR_ASSERT: return lower_debug(L, op);
    case TIR_LOCAL_ALLOC: case TIR_LOCAL_STORE: case TIR_LOCAL_LOAD: case TIR_ASYNC_COPY:
    case TIR_ASYNC_COMMIT: case TIR_ASYNC_WAIT: case TIR_BARRIER:
        return lower_smem(L, op);
    case TIR_REDUCE: return lower_reduce(L, op);
    case TIR_SCAN: return lower_scan(L, op);
    case TIR_FLIP: return lower_flip(L, op);
    case TIR_SORT: return lower_sort(L, op);
    case TIR_DOT: return lower_dot(L, op);
    default: return lower_control(L, op);
    }
}

/* Stops at the first op that fails, or that reported an error and went on (a value without
 * a linear layout): later ops would read values it never made. */
int lower_block(Lower *L, TirBlock *b)
{
    for (TirOp *op = b->first; op; op = op->next)
        if (lower_op(L, op) != 0 || L->failed)
            return -1;
    return 0;
}

/* ---- the kernel ---- */
static int begin_kernel(Lower *L)
{
    TirKernel *k = L->k;
    LLVMTypeRef *pt = arena_alloc(k->arena, sizeof(LLVMTypeRef) * (size_t)(k->nparams + 1));
    L->params = arena_alloc(k->arena, sizeof(LLVMValueRef) * (size_t)(k->nparams + 1));
    L->vals = arena_alloc(k->arena, sizeof(LLVMValueRef) * (size_t)(k->next_value_id + 1));
    L->lls = arena_alloc(k->arena, sizeof(LinearLayout *) * (size_t)(k->next_value_id + 1));
    L->regs = arena_alloc(k->arena, sizeof(LLVMValueRef *) * (size_t)(k->next_value_id + 1));
    L->uses = arena_alloc(k->arena, sizeof(int) * (size_t)(k->next_value_id + 1));
    L->deferred = arena_alloc(k->arena, sizeof(void *) * (size_t)(k->next_value_id + 1));
    L->uses_wgmma = -1;
    if (!pt || !L->params || !L->vals || !L->lls || !L->regs || !L->uses || !L->deferred)
        return lw_fail(L, NULL, "out of memory in lowering");
    tir_count_uses(k->body, L->uses);
    for (int i = 0; i < k->nparams; i++)
        pt[i] = lw_type(L, k->params[i].type.elem);
    int debug = k->nsites > 0; /* the debug buffer comes after the kernel's own params */
    if (debug)
        pt[k->nparams] = lw_type(L, ET_PTR);
    const char *sym = k->symbol ? k->symbol : k->name;
    L->t->kernel_begin(&L->tc, sym, pt, k->nparams + debug, L->params);
    L->tid = L->t->thread_id(&L->tc);
    /* a prologue for per-thread index arithmetic shared by the whole kernel */
    LLVMBasicBlockRef body = lw_block(L, "body");
    LLVMValueRef br = LLVMBuildBr(L->b, body);
    L->prologue = LLVMCreateBuilderInContext(L->ctx);
    LLVMPositionBuilderBefore(L->prologue, br);
    LLVMPositionBuilderAtEnd(L->b, body);
    L->ret_bb = lw_block(L, "ret");
    return 0;
}

static void finish_kernel(Lower *L)
{
    if (!LLVMGetBasicBlockTerminator(LLVMGetInsertBlock(L->b)))
        LLVMBuildBr(L->b, L->ret_bb);
    LLVMPositionBuilderAtEnd(L->b, L->ret_bb);
    LLVMBuildRetVoid(L->b);
    int threads = L->k->num_warps * L->t->threads_per_warp;
    L->tc.waves_per_eu = L->k->waves_per_eu;
    L->t->kernel_finish(&L->tc, threads, L->smem_bytes);
    L->k->smem_bytes = L->smem_bytes;
    if (L->t->module_finish && L->t->module_finish(&L->tc) != 0)
        L->failed = 1;
}

/* Lowers the kernel's body; an arena allocation failure on the way jumps back here, so the
 * builders and the module are still disposed of. */
static void lower_guarded(Lower *L)
{
    jmp_buf jump;
    jmp_buf *prev = arena_set_failure_jump(L->k->arena, &jump);
    if (setjmp(jump) == 0) {
        if (codegen_prepare(L->mod, L->t, L->d) == 0 && begin_kernel(L) == 0 &&
            lower_block(L, L->k->body) == 0)
            finish_kernel(L);
        else
            L->failed = 1;
    } else {
        lw_fail(L, NULL, "out of memory lowering the kernel");
    }
    arena_set_failure_jump(L->k->arena, prev);
}

LLVMModuleRef lower_kernel(TirKernel *k, const Target *t, LLVMContextRef ctx, Diags *d)
{
    Lower L = {.k = k, .t = t, .ctx = ctx, .d = d, .smem_bytes = k->smem_alloc_bytes,
               .straight_copies = 1};
    int errors_before = d->errors;
    L.mod = LLVMModuleCreateWithNameInContext(k->name ? k->name : "kernel", ctx);
    L.b = LLVMCreateBuilderInContext(ctx);
    L.tc = (TargetCtx){.ctx = ctx, .mod = L.mod, .b = L.b,
                       .alloca_b = LLVMCreateBuilderInContext(ctx), .diags = d};
    lower_guarded(&L);
    LLVMDisposeBuilder(L.b);
    LLVMDisposeBuilder(L.tc.alloca_b);
    if (L.prologue)
        LLVMDisposeBuilder(L.prologue);
    if (L.failed || d->errors > errors_before) {
        LLVMDisposeModule(L.mod);
        return NULL;
    }
    return L.mod;
}
