/* pass_smem.c: layout conversions that cannot stay in registers become explicit shared
 * memory: `y = convert_layout x` whose plan (layout_convert.h) is CONV_SMEM turns into
 *     buf = local_alloc            (swizzled along x's contiguous register dim)
 *     local_store buf, 0, x
 *     y = local_load buf, 0
 * and the operands of dots on the FMA path go to buffers their K loop reads, so that the
 * allocator (pass_smem_alloc.c) gives every buffer its place and the barrier pass
 * (pass_barriers.c) orders the accesses, instead of each lowering routine doing both. The old
 * values of atomics done by one thread per element reach the element's replicas the same way. */
#include "layout_convert.h"
#include "layout_dot.h"
#include "passes.h"
#include "smem_layout.h"
#include "target.h"

/* The dim x's registers run along first (its vectors), or the last dim. */
static int contiguous_dim(const LinearLayout *ll)
{
    for (int i = 0; i < ll->nbits[LL_REG]; i++) {
        unsigned dims = ll_basis_dims(ll, ll->basis[LL_REG][i]);
        if (dims && !(dims & (dims - 1)))
            return __builtin_ctz(dims);
    }
    return ll->rank - 1;
}

static const TirLayout *new_layout(TirKernel *k, TirLayout l)
{
    TirLayout *p = arena_alloc(k->arena, sizeof *p);
    if (p)
        *p = l;
    return p;
}

static TirValue *index_zero_at(TirKernel *k, TirBlock *blk, TirOp *before, SrcLoc loc)
{
    static const TirLayout scalar = {.kind = LAYOUT_SCALAR};
    TirType i32 = {.elem = ET_I32};
    TirOp *c = tir_op_insert_at(k, blk, before, TIR_CONST, loc, NULL, 0, &i32, 1);
    c->attr.i = 0;
    c->results[0]->layout = &scalar;
    return c->results[0];
}

static TirValue *index_zero(TirKernel *k, TirOp *before)
{
    return index_zero_at(k, before->block, before, before->loc);
}

/* x written to a fresh shared buffer and read back in layout `to`, before `before` (NULL: at
 * the end of `blk`); the loaded value, or NULL when out of memory. Only the owner of each
 * element writes it. `wgmma`: the buffer takes the layout wgmma reads B from. */
static TirValue *bounce(TirKernel *k, TirBlock *blk, TirOp *before, SrcLoc loc, TirValue *x,
                        const LinearLayout *src, const TirLayout *to, int wgmma)
{
    int order[TIR_MAX_RANK], cont = contiguous_dim(src), rank = x->type.rank;
    order[0] = cont;
    for (int j = 1, d = rank - 1; j < rank; d--)
        if (d != cont)
            order[j++] = d;
    TirType bt = x->type;
    bt.buffers = 1;
    TirOp *alloc = tir_op_insert_at(k, blk, before, TIR_LOCAL_ALLOC, loc, NULL, 0, &bt, 1);
    alloc->attr.i = -1;
    TirValue *buf = alloc->results[0];
    int eb = et_bytes(x->type.elem);
    buf->layout = new_layout(k, wgmma ? smem_layout_wgmma(rank, x->type.shape, eb, order)
                                      : smem_layout_swizzled(rank, x->type.shape, eb, order));
    TirValue *zero = index_zero_at(k, blk, before, loc);
    TirValue *st[3] = {buf, zero, x};
    tir_op_insert_at(k, blk, before, TIR_LOCAL_STORE, loc, st, 3, NULL, 0);
    TirValue *ld[2] = {buf, zero};
    TirOp *load = tir_op_insert_at(k, blk, before, TIR_LOCAL_LOAD, loc, ld, 2, &x->type, 1);
    load->results[0]->layout = to;
    load->results[0]->name = x->name;
    return buf->layout ? load->results[0] : NULL;
}

/* Replaces the conversion op by a trip through a fresh shared buffer. */
static int through_smem(TirKernel *k, const Target *t, TirOp *op, const LinearLayout *src)
{
    TirValue *y = op->results[0];
    TirValue *z = bounce(k, op->block, op, op->loc, op->ops[0], src, y->layout, layout_wgmma_operand(t, y->layout));
    if (!z)
        return -1;
    tir_replace_uses(k->body, y, z);
    tir_op_remove(op);
    return 0;
}

static TirOp *single_user(TirBlock *b, const TirValue *v, int *count);

/* An atomic whose elements have replicas (a scalar one, a tile smaller than the program) is
 * done by one thread per element, the owner. The others read the old values from shared
 * memory; a release order covers the whole program's earlier writes (a barrier before it),
 * an acquire order its later reads (a barrier after it: the exchange's, or one of its own). */
static int order_atomic(TirKernel *k, TirOp *op)
{
    TirValue *old = op->results[0];
    LinearLayout ll;
    int n = 0, sem = (int)(op->attr.i2 & 15);
    if (layout_ll(old->layout, old->type.shape, old->type.rank, &ll))
        return 0;
    if (!ll_zero_mask(&ll, LL_LANE) && !ll_zero_mask(&ll, LL_WARP))
        return 0;
    if (sem == SEM_RELEASE || sem == SEM_ACQ_REL)
        tir_op_insert_before(k, op, TIR_BARRIER, op->loc, NULL, 0, NULL, 0);
    single_user(k->body, old, &n);
    if (n == 0) {
        if (sem == SEM_ACQUIRE || sem == SEM_ACQ_REL)
            tir_op_insert_at(k, op->block, op->next, TIR_BARRIER, op->loc, NULL, 0, NULL, 0);
        return 0;
    }
    TirValue *shared = bounce(k, op->block, op->next, op->loc, old, &ll, old->layout, 0);
    if (!shared)
        return -1;
    TirOp *store = shared->def->prev;
    tir_replace_uses(k->body, old, shared);
    store->ops[2] = old;
    return 0;
}

/* An FMA dot's operand moves to a buffer its K loop reads: A with M contiguous and B with N
 * contiguous, so the lanes of a warp read neighbouring elements. The store goes before the
 * outermost enclosing loop (or if) that does not compute the operand: a loop-invariant
 * operand is stored once. */
static int operand_to_smem(TirKernel *k, TirOp *dot, int i)
{
    TirValue *x = dot->ops[i];
    TirOp *at = dot;
    while (at->block->parent && !tir_defined_in(x, at->block))
        at = at->block->parent;
    int order[2] = {i == 0 ? 0 : 1, i == 0 ? 1 : 0};
    TirType bt = x->type;
    bt.buffers = 1;
    TirOp *alloc = tir_op_insert_before(k, at, TIR_LOCAL_ALLOC, dot->loc, NULL, 0, &bt, 1);
    alloc->attr.i = -1;
    TirValue *buf = alloc->results[0];
    buf->layout = new_layout(k, smem_layout_swizzled(2, x->type.shape, et_bytes(x->type.elem), order));
    TirValue *st[3] = {buf, index_zero(k, at), x};
    tir_op_insert_before(k, at, TIR_LOCAL_STORE, dot->loc, st, 3, NULL, 0);
    dot->ops[i] = buf;
    return buf->layout ? 0 : -1;
}

static int visit(TirKernel *k, const Target *t, TirBlock *b, Diags *d)
{
    for (TirOp *op = b->first, *next; op; op = next) {
        next = op->next;
        for (int r = 0; r < op->nregions; r++)
            if (visit(k, t, op->regions[r], d))
                return -1;
        if (op->code == TIR_DOT && t->threads_per_warp > 1 && !dot_uses_mma(op, t)) {
            if (operand_to_smem(k, op, 0) || operand_to_smem(k, op, 1)) {
                diag_error(d, op->loc, "out of memory in the shared-memory pass");
                return -1;
            }
            continue;
        }
        if (op->code == TIR_ATOMIC && t->threads_per_warp > 1 && order_atomic(k, op)) {
            diag_error(d, op->loc, "out of memory in the shared-memory pass");
            return -1;
        }
        if (op->code != TIR_CONVERT_LAYOUT || op->ops[0]->type.rank == 0)
            continue;
        LinearLayout a, c;
        ConvPlan p;
        if (layout_ll(op->ops[0]->layout, op->ops[0]->type.shape, op->ops[0]->type.rank, &a) ||
            layout_ll(op->results[0]->layout, op->results[0]->type.shape, op->results[0]->type.rank, &c)) {
            diag_error(d, op->loc, "internal compiler error: a conversion between layouts with no linear form");
            return -1;
        }
        conv_plan(&a, &c, &p);
        int smem = p.kind == CONV_SMEM || (p.kind == CONV_SHUFFLE && !t->shuffle_idx);
        if (smem && through_smem(k, t, op, &a)) {
            diag_error(d, op->loc, "out of memory in the shared-memory pass");
            return -1;
        }
    }
    return 0;
}

/* The single user of v, or NULL (none, or several). */
static TirOp *single_user(TirBlock *b, const TirValue *v, int *count)
{
    TirOp *user = NULL;
    for (TirOp *op = b ? b->first : NULL; op; op = op->next) {
        for (int i = 0; i < op->nops; i++)
            if (op->ops[i] == v)
                user = op, (*count)++;
        for (int r = 0; r < op->nregions; r++) {
            TirOp *u = single_user(op->regions[r], v, count);
            if (u)
                user = u;
        }
    }
    return user;
}

/* 32-bit registers per thread that a tile in registers takes. */
static int operand_registers(const TirValue *v)
{
    LinearLayout ll;
    if (layout_ll(v->layout, v->type.shape, v->type.rank, &ll))
        return 0;
    return ll_regs(&ll) * et_bytes(v->type.elem) / 4;
}

/* A local_load (hoisted out of a loop with its conversion) whose only user is an mma dot inside
 * the loop moves next to the dot when the tile would hold more than 32 registers per thread:
 * the buffer is written once, and the dot reads its fragments K step by K step every
 * iteration instead of keeping the whole tile in registers (attention's Q: 64 registers per
 * thread at BLOCK_M 128, head_dim 128; at head_dim 64, 16 registers stay), or always where
 * wgmma reads it from the buffer. */
static void sink_operand_loads(TirKernel *k, const Target *t, TirBlock *b)
{
    for (TirOp *op = b ? b->first : NULL, *next; op; op = next) {
        next = op->next;
        for (int r = 0; r < op->nregions; r++)
            sink_operand_loads(k, t, op->regions[r]);
        if (op->code != TIR_LOCAL_LOAD)
            continue;
        int n = 0;
        TirOp *user = single_user(k->body, op->results[0], &n);
        if (n != 1 || !user || user->code != TIR_DOT || user->block == op->block ||
            !dot_uses_mma(user, t) || user->ops[2] == op->results[0] ||
            (operand_registers(op->results[0]) <= 32 && !dot_wgmma_reads(t, user, op->results[0])))
            continue;
        TirOp *moved = tir_op_insert_before(k, user, TIR_LOCAL_LOAD, op->loc, op->ops, 2,
                                            &op->results[0]->type, 1);
        moved->results[0]->layout = op->results[0]->layout;
        moved->results[0]->name = op->results[0]->name;
        for (int i = 0; i < 2; i++)
            if (user->ops[i] == op->results[0])
                user->ops[i] = moved->results[0];
        tir_op_remove(op);
    }
}

int pass_smem_conversions(TirKernel *k, const Target *t, Diags *d)
{
    if (visit(k, t, k->body, d))
        return -1;
    if (t->threads_per_warp > 1)
        sink_operand_loads(k, t, k->body);
    return 0;
}
