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

/* How a buffer keeps its elements (smem_layout.h). */
typedef enum { BUF_SWIZZLED, BUF_WGMMA, BUF_PADDED } BufKind;

static BufKind buffer_kind(const Target *t, const TirLayout *to, int rank)
{
    if (layout_wgmma_operand(t, to))
        return BUF_WGMMA; /* the layout wgmma reads B from */
    if (t->pad_operand_rows && rank == 2 && to->kind == LAYOUT_DOT_OPERAND &&
        to->parent == LAYOUT_MMA)
        return BUF_PADDED; /* mma operands; the pipeliner's rings go back to swizzled ones */
    return BUF_SWIZZLED;
}

/* x written to a fresh shared buffer and read back in layout `to`, before `before` (NULL: at
 * the end of `blk`); the loaded value, or NULL when out of memory. Only the owner of each
 * element writes it. */
static TirValue *bounce(TirKernel *k, TirBlock *blk, TirOp *before, SrcLoc loc, TirValue *x,
                        const LinearLayout *src, const TirLayout *to, BufKind kind)
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
    const int *shape = x->type.shape;
    buf->layout = tir_layout_new(k->arena, kind == BUF_WGMMA    ? smem_layout_wgmma(rank, shape, eb, order)
                                : kind == BUF_PADDED ? smem_layout_padded(rank, shape, eb, order)
                                                     : smem_layout_swizzled(rank, shape, eb, order));
    TirValue *zero = index_zero_at(k, blk, before, loc);
    TirValue *st[3] = {buf, zero, x};
    tir_op_insert_at(k, blk, before, TIR_LOCAL_STORE, loc, st, 3, NULL, 0);
    TirValue *ld[2] = {buf, zero};
    TirOp *load = tir_op_insert_at(k, blk, before, TIR_LOCAL_LOAD, loc, ld, 2, &x->type, 1);
    load->results[0]->layout = to;
    load->results[0]->name = x->name;
    return buf->layout ? load->results[0] : NULL;
}

/* The conversions already made through shared memory: a later conversion of the same value
 * to the same layout, where the earlier one dominates it, takes the earlier result (attention's
 * Q, converted before each of its two loops over keys, is stored once and not kept in
 * registers through the first loop to be stored again before the second; where the dots read
 * it from the buffer, sink_operand_loads gives each loop its own load). */
enum { MAX_BOUNCES = 64 };
typedef struct {
    TirValue *x, *loaded;
    TirBlock *block;
} Bounce;
typedef struct {
    Bounce b[MAX_BOUNCES];
    int n;
} Bounces;

/* Whether b is inner or equal to `outer` (ops earlier in `outer` dominate every op in b). */
static int inside(const TirBlock *b, const TirBlock *outer)
{
    for (; b; b = b->parent ? b->parent->block : NULL)
        if (b == outer)
            return 1;
    return 0;
}

static TirValue *earlier_bounce(const Bounces *seen, const TirOp *op)
{
    for (int i = 0; i < seen->n; i++) {
        const Bounce *b = &seen->b[i];
        if (b->x == op->ops[0] && tir_layout_equal(b->loaded->layout, op->results[0]->layout) &&
            inside(op->block, b->block))
            return b->loaded;
    }
    return NULL;
}

/* Replaces the conversion op by a trip through a fresh shared buffer, or by the result of an
 * earlier conversion of the same value that dominates it. */
static int through_smem(TirKernel *k, const Target *t, TirOp *op, const LinearLayout *src,
                        Bounces *seen)
{
    TirValue *y = op->results[0];
    TirValue *z = earlier_bounce(seen, op);
    if (z) {
        tir_replace_uses(k->body, y, z);
        tir_op_remove(op);
        return 0;
    }
    z = bounce(k, op->block, op, op->loc, op->ops[0], src, y->layout,
               buffer_kind(t, y->layout, y->type.rank));
    if (!z)
        return -1;
    if (seen->n < MAX_BOUNCES)
        seen->b[seen->n++] = (Bounce){op->ops[0], z, op->block};
    tir_replace_uses(k->body, y, z);
    tir_op_remove(op);
    return 0;
}

enum { MAX_SINK_USERS = 8 };

/* The ops of b that use v (an op using it twice counts once); -1 when more than `max`. */
static int users_of(TirBlock *b, const TirValue *v, TirOp **users, int n, int max)
{
    for (TirOp *op = b ? b->first : NULL; op && n >= 0; op = op->next) {
        for (int i = 0; i < op->nops; i++)
            if (op->ops[i] == v) {
                if (n == max)
                    return -1;
                users[n++] = op;
                break;
            }
        for (int r = 0; r < op->nregions && n >= 0; r++)
            n = users_of(op->regions[r], v, users, n, max);
    }
    return n;
}

/* An atomic whose elements have replicas (a scalar one, a tile smaller than the program) is
 * done by one thread per element, the owner. The others read the old values from shared
 * memory; a release order covers the whole program's earlier writes (a barrier before it),
 * an acquire order its later reads (a barrier after it: the exchange's, or one of its own). */
static int order_atomic(TirKernel *k, TirOp *op)
{
    TirValue *old = op->results[0];
    LinearLayout ll;
    int sem = (int)(op->attr.i2 & 15);
    TirOp *user;
    if (layout_ll(old->layout, old->type.shape, old->type.rank, &ll))
        return 0;
    if (!ll_zero_mask(&ll, LL_LANE) && !ll_zero_mask(&ll, LL_WARP))
        return 0;
    if (sem == SEM_RELEASE || sem == SEM_ACQ_REL)
        tir_op_insert_before(k, op, TIR_BARRIER, op->loc, NULL, 0, NULL, 0);
    if (users_of(k->body, old, &user, 0, 1) == 0) {
        if (sem == SEM_ACQUIRE || sem == SEM_ACQ_REL)
            tir_op_insert_at(k, op->block, op->next, TIR_BARRIER, op->loc, NULL, 0, NULL, 0);
        return 0;
    }
    TirValue *shared = bounce(k, op->block, op->next, op->loc, old, &ll, old->layout, BUF_SWIZZLED);
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
    buf->layout = tir_layout_new(k->arena, smem_layout_swizzled(2, x->type.shape, et_bytes(x->type.elem), order));
    TirValue *st[3] = {buf, index_zero(k, at), x};
    tir_op_insert_before(k, at, TIR_LOCAL_STORE, dot->loc, st, 3, NULL, 0);
    dot->ops[i] = buf;
    return buf->layout ? 0 : -1;
}

static int visit(TirKernel *k, const Target *t, TirBlock *b, Bounces *seen, Diags *d)
{
    for (TirOp *op = b->first, *next; op; op = next) {
        next = op->next;
        for (int r = 0; r < op->nregions; r++)
            if (visit(k, t, op->regions[r], seen, d))
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
        if (smem && through_smem(k, t, op, &a, seen)) {
            diag_error(d, op->loc, "out of memory in the shared-memory pass");
            return -1;
        }
    }
    return 0;
}

/* 32-bit registers per thread that a tile in registers takes. */
static int operand_registers(const TirValue *v)
{
    LinearLayout ll;
    if (layout_ll(v->layout, v->type.shape, v->type.rank, &ll))
        return 0;
    return ll_regs(&ll) * et_bytes(v->type.elem) / 4;
}

/* Whether dot, a user of the loaded value v, should read v from its buffer next to itself: an
 * mma dot whose tile would hold more than 32 registers per thread, or one that wgmma reads
 * from the buffer; never the accumulator. A lone user in v's own block reads v where it is. */
static int reads_at_dot(const Target *t, const TirOp *dot, const TirValue *v, int lone)
{
    return dot->code == TIR_DOT && (!lone || dot->block != v->def->block) &&
           dot_uses_mma(dot, t) && dot->ops[2] != v &&
           (operand_registers(v) > 32 || dot_wgmma_reads(t, dot, v));
}

/* A local_load (hoisted out of loops with its conversion) whose users are all dots that read it
 * at the dot (reads_at_dot) moves next to each of them: the buffer is written once, and each dot
 * reads its fragments K step by K step every iteration instead of keeping the whole tile in
 * registers (attention's Q: 64 registers per thread at BLOCK_M 128, head_dim 128; at head_dim
 * 64, 16 registers stay), or always where wgmma reads it from the buffer. */
static void sink_operand_loads(TirKernel *k, const Target *t, TirBlock *b)
{
    for (TirOp *op = b ? b->first : NULL, *next; op; op = next) {
        next = op->next;
        for (int r = 0; r < op->nregions; r++)
            sink_operand_loads(k, t, op->regions[r]);
        if (op->code != TIR_LOCAL_LOAD)
            continue;
        TirOp *users[MAX_SINK_USERS];
        TirValue *v = op->results[0];
        int n = users_of(k->body, v, users, 0, MAX_SINK_USERS), all = n > 0;
        for (int i = 0; i < n; i++)
            all &= reads_at_dot(t, users[i], v, n == 1);
        if (!all)
            continue;
        for (int i = 0; i < n; i++) {
            TirOp *moved = tir_op_insert_before(k, users[i], TIR_LOCAL_LOAD, op->loc, op->ops, 2,
                                                &v->type, 1);
            moved->results[0]->layout = v->layout;
            moved->results[0]->name = v->name;
            for (int j = 0; j < 2; j++)
                if (users[i]->ops[j] == v)
                    users[i]->ops[j] = moved->results[0];
        }
        tir_op_remove(op);
    }
}

int pass_smem_conversions(TirKernel *k, const Target *t, Diags *d)
{
    Bounces seen = {.n = 0};
    if (visit(k, t, k->body, &seen, d))
        return -1;
    if (t->threads_per_warp > 1)
        sink_operand_loads(k, t, k->body);
    return 0;
}
