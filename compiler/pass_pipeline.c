/* pass_pipeline.c: software pipelining of `for` loops (num_stages = S >= 2). A load in the
 * loop body whose only use is a store into a shared buffer of the same iteration (what
 * pass_smem.c makes of a dot operand's conversion), with addresses computed from the
 * induction variable and loop invariants alone, becomes a ring of S buffers filled by async
 * copies S - 1 iterations ahead:
 *     prologue:  copies for iterations 0 .. S-2 (masked off past the trip count), one commit each
 *     body:      async_wait S-2; local_load stage k % S; copies for iteration k + S - 1 into
 *                stage (k + S - 1) % S; commit; ... the iteration's math ...
 *     after:     async_wait 0
 * so the copies of later iterations overlap this one's math. Run-time trip counts of 0, 1, ...
 * work: out-of-range iterations copy nothing (zero-filled) and are never read. An address may
 * also depend on loads (a block table's entries: paged attention's keys) when the loop stores
 * nothing: those loads are issued again, one iteration earlier than the copy they address and
 * masked off with it (prefetch_tables). The loads a stored tile is computed from (a
 * dequantization: i8, fp8 or int4 weights cast, unpacked and scaled for an f16 dot) are
 * pipelined too: each ring holds what its load loads, read back in the load's layout where
 * the load was, and the tile is computed and stored as before; such a load too small to copy
 * (a row of scales) is loaded an iteration ahead into registers (load_ahead). Loops with
 * break, continue or return, a step that is not a positive constant, a debug_barrier(), or no
 * such load are left alone; so are targets without async copies. */
#include <string.h>
#include "analysis_axis.h"
#include "passes.h"
#include "smem_layout.h"
#include "target.h"

enum { MAX_CANDS = 8, MAX_MAP = 256, MAX_DEPTH = 48, MAX_TABLE = 16 };
/* A dequantization's load too small for async copies (under 4 bytes a thread: a group's row
 * of scales) is loaded an iteration ahead into registers if it holds at most this many bytes
 * per warp. */
enum { AHEAD_BYTES = 256 };

typedef struct Cand {
    TirOp *alloc, *load, *store;
    TirOp *via;           /* the op reading the load on its way to the store (NULL: the load is
                             stored as it is): the ring holds the load's elements, in */
    TirLayout via_layout; /* this layout, read back where the load was */
    TirValue *ring;
} Cand;

typedef struct Map {
    const TirValue *from[MAX_MAP];
    TirValue *to[MAX_MAP];
    int n;
    TirValue *valid; /* the copied iteration exists (a scalar bool): masks cloned loads */
} Map;

typedef struct PP {
    TirKernel *k;
    const Target *t;
    const AxisInfo *axis;
    int stages;
    int loads_ok; /* the loop being pipelined stores nothing: addresses may come from loads */
    TirOp *ahead[MAX_CANDS]; /* small loads of a dequantization, loaded an iteration ahead */
    int nahead;
} PP;

static const TirLayout scalar_layout = {.kind = LAYOUT_SCALAR};

static int64_t pow2_floor(int64_t v)
{
    int64_t p = 1;
    while (p * 2 <= v)
        p *= 2;
    return v < 1 ? 0 : p;
}

int async_copy_vector(const TirValue *ptr, const TirValue *mask, const TirValue *buf,
                      const AxisInfo *axis)
{
    LinearLayout ll;
    if (!axis || !buf->layout || buf->type.elem == ET_BOOL ||
        layout_ll(ptr->layout, ptr->type.shape, ptr->type.rank, &ll))
        return 0;
    int cd = buf->layout->order[0], eb = et_bytes(buf->type.elem);
    int64_t n = ll_contiguous_regs(&ll, cd);
    const AxisInfo *a = &axis[ptr->id];
    n = n < buf->layout->vec ? n : buf->layout->vec;
    n = n < 16 / eb ? n : 16 / eb;
    n = n < a->contig[cd] ? n : a->contig[cd];
    n = n < a->div[cd] / eb ? n : a->div[cd] / eb;
    if (mask && mask->type.rank)
        n = n < axis[mask->id].cnst[cd] ? n : axis[mask->id].cnst[cd];
    n = pow2_floor(n);
    return n * eb >= 4 ? (int)n : 0;
}

/* ---- what may be pipelined ---- */
static int pure_op(TirOpcode c)
{
    switch (c) {
    case TIR_CONST: case TIR_ARANGE: case TIR_SPLAT: case TIR_EXPAND_DIMS: case TIR_BROADCAST:
    case TIR_TRANS: case TIR_CONVERT_LAYOUT: case TIR_BINARY: case TIR_CMP: case TIR_UNARY:
    case TIR_SELECT: case TIR_CAST: case TIR_FMA: case TIR_ADDPTR: case TIR_HINT:
        return 1;
    default:
        return 0;
    }
}

/* v follows from the induction variable and loop invariants through pure ops (and loads,
 * where loads_ok). */
static int from_iv(const TirValue *v, const TirBlock *body, int loads_ok, int depth)
{
    if (v == body->args[0] || !tir_defined_in(v, body))
        return 1;
    if (!v->def || depth > MAX_DEPTH ||
        !(pure_op(v->def->code) || (loads_ok && v->def->code == TIR_LOAD && !tir_op_is_volatile(v->def))))
        return 0;
    for (int i = 0; i < v->def->nops; i++)
        if (!from_iv(v->def->ops[i], body, loads_ok, depth + 1))
            return 0;
    return 1;
}

static int leaves_loop(const TirBlock *b)
{
    for (const TirOp *op = b ? b->first : NULL; op; op = op->next) {
        if (op->code == TIR_BREAK || op->code == TIR_CONTINUE || op->code == TIR_RETURN)
            return 1;
        for (int r = 0; r < op->nregions; r++)
            if (op->code != TIR_FOR && op->code != TIR_WHILE && leaves_loop(op->regions[r]))
                return 1;
    }
    return 0;
}

/* Whether b (or a region in it) holds the user's debug_barrier(): copies issued iterations
 * ahead would cross it, so its loop is not pipelined. */
static int has_user_barrier(const TirBlock *b)
{
    for (const TirOp *op = b ? b->first : NULL; op; op = op->next) {
        if (op->code == TIR_BARRIER && op->attr.i == TIR_BARRIER_USER)
            return 1;
        for (int r = 0; r < op->nregions; r++)
            if (has_user_barrier(op->regions[r]))
                return 1;
    }
    return 0;
}

static int uses_of(const TirBlock *b, const TirValue *v)
{
    int n = 0;
    for (const TirOp *op = b ? b->first : NULL; op; op = op->next) {
        for (int i = 0; i < op->nops; i++)
            n += op->ops[i] == v;
        for (int r = 0; r < op->nregions; r++)
            n += uses_of(op->regions[r], v);
    }
    return n;
}

/* Every use of buf in the body but `store` is a local_load (an FMA dot reading the buffer
 * directly cannot take a ring stage). */
static int only_loaded(const TirBlock *body, const TirValue *buf, const TirOp *store)
{
    for (const TirOp *op = body->first; op; op = op->next) {
        for (int i = 0; i < op->nops; i++)
            if (op->ops[i] == buf && op != store && op->code != TIR_LOCAL_LOAD)
                return 0;
        for (int r = 0; r < op->nregions; r++)
            if (uses_of(op->regions[r], buf))
                return 0;
    }
    return 1;
}

static int is_zero(const TirValue *v)
{
    const TirOp *d = v->def;
    if (d && d->code == TIR_SPLAT)
        d = d->ops[0]->def;
    return d && d->code == TIR_CONST && d->attr.i == 0 && d->attr.f == 0;
}

static int const_int(const TirValue *v, int64_t *out)
{
    if (!v->def || v->def->code != TIR_CONST || et_is_float(v->type.elem))
        return 0;
    *out = v->def->attr.i;
    return 1;
}

/* Ops a dequantization is made of between its loads and the staged tile: pure elementwise,
 * shape and layout ops (a cast, a scale, an int4 unpacking) and pure inline assembly of one
 * result; never address arithmetic. */
static int chain_op(const TirOp *op)
{
    if (op->code == TIR_INLINE_ASM)
        return (op->attr.i2 & TIR_ASM_PURE) && op->nres == 1;
    return (pure_op(op->code) && op->code != TIR_ADDPTR) || op->code == TIR_RESHAPE ||
           op->code == TIR_PERMUTE || op->code == TIR_JOIN;
}

/* The one local_store of this body into buf, a buffer of this body (a layout conversion
 * through shared memory: a row of scales brought to the layout of the weights it scales). */
static const TirOp *conversion_store(const TirBlock *body, const TirValue *buf)
{
    const TirOp *store = NULL;
    if (!buf->def || buf->def->code != TIR_LOCAL_ALLOC || buf->def->block != body)
        return NULL;
    for (const TirOp *op = body->first; op; op = op->next)
        if (op->code == TIR_LOCAL_STORE && op->ops[0] == buf) {
            if (store)
                return NULL;
            store = op;
        }
    return store;
}

/* Adds to out (n so far; returns the new count) the loads of this body that x is computed
 * from through chain ops and layout conversions of this body. */
static int chain_loads(const TirBlock *body, const TirValue *x, TirOp **out, int n, int depth)
{
    TirOp *d = x->def;
    if (!d || d->block != body || depth > MAX_DEPTH || n >= MAX_CANDS)
        return n;
    if (d->code == TIR_LOCAL_LOAD) {
        const TirOp *st = conversion_store(body, d->ops[0]);
        return st ? chain_loads(body, st->ops[2], out, n, depth + 1) : n;
    }
    if (d->code == TIR_LOAD) {
        for (int i = 0; i < n; i++)
            if (out[i] == d)
                return n;
        out[n] = d;
        return n + 1;
    }
    if (!chain_op(d))
        return n;
    for (int i = 0; i < d->nops; i++)
        n = chain_loads(body, d->ops[i], out, n, depth + 1);
    return n;
}

/* The op of body (not of a region in it) that reads v, the only use of v. */
static TirOp *only_user(const TirBlock *body, const TirValue *v)
{
    if (uses_of(body, v) != 1)
        return NULL;
    for (TirOp *op = body->first; op; op = op->next)
        for (int i = 0; i < op->nops; i++)
            if (op->ops[i] == v)
                return op;
    return NULL;
}

static const TirValue *mask_of(const TirOp *ld) { return ld->nops > 1 ? ld->ops[1] : NULL; }

/* Bytes of a tile of type t (one buffer of a shared one). */
static int64_t tile_bytes(const TirType *t) { return (int64_t)tir_type_numel(t) * et_bytes(t->elem); }

/* Whether ld's elements can be copied asynchronously into a buffer like buf (in vectors). */
static int copies_vectorize(const PP *p, const TirOp *ld, const TirValue *buf)
{
    return async_copy_vector(ld->ops[0], mask_of(ld), buf, p->axis) > 0;
}

/* ld is loaded in this body, once per iteration, from addresses (and under a mask) that
 * iterations ahead can compute. */
static int prefetchable(PP *p, const TirBlock *body, const TirOp *ld)
{
    const TirValue *mask = mask_of(ld);
    return ld->code == TIR_LOAD && !tir_op_is_volatile(ld) && ld->block == body &&
           !(ld->nops > 2 && !is_zero(ld->ops[2])) && from_iv(ld->ops[0], body, p->loads_ok, 0) &&
           !(mask && !from_iv(mask, body, p->loads_ok, 0));
}

/* A ring of its own for a load of a dequantization chain (c->via: the op reading it), in
 * buf's order where the shapes match, else in the load's: whether its copies vectorize. */
static int chain_ring(PP *p, const TirValue *buf, Cand *c)
{
    const TirValue *x = c->load->results[0];
    const TirLayout *xl = x->layout;
    int rank = x->type.rank, order[TIR_MAX_RANK], same = rank == buf->type.rank;
    /* a blocked layout's own order where it is the value's (a slice's counts parent dims) */
    int own = xl && xl->kind == LAYOUT_BLOCKED && !xl->sliced && xl->rank == rank;
    for (int d = 0; d < rank; d++) {
        same = same && x->type.shape[d] == buf->type.shape[d];
        order[d] = own ? xl->order[d] : rank - 1 - d;
    }
    c->via_layout = smem_layout_swizzled(x->type.rank, x->type.shape, et_bytes(x->type.elem),
                                         same ? buf->layout->order : order);
    TirValue ring = *x;
    ring.layout = &c->via_layout;
    return copies_vectorize(p, c->load, &ring);
}

/* Whether ld is pipelined already: a candidate of another store (two dots of one
 * dequantized tile) or loaded ahead. */
static int taken(const PP *p, const Cand *cs, int n, const TirOp *ld)
{
    for (int i = 0; i < n; i++)
        if (cs[i].load == ld)
            return 1;
    for (int i = 0; i < p->nahead; i++)
        if (p->ahead[i] == ld)
            return 1;
    return 0;
}

/* store = local_store(alloc made in this body, 0, load made in this body): one candidate, the
 * ring replacing the buffer. Or the stored tile is computed from loads (a dequantization:
 * i8, int4 or fp8 weights cast and scaled for an f16 product): each load used once whose
 * copies vectorize is a candidate with a ring of its own, holding what it loads, read back
 * where it was loaded; the buffer stays. Such rings together hold no more bytes than the
 * buffer (an f32 tile cast to f16 stays a load: its ring would be larger than the buffers
 * it feeds). Returns the number of candidates added to cs (which holds `done` already). */
static int candidates(PP *p, TirBlock *body, TirOp *store, Cand *cs, int done)
{
    Cand *c = cs + done;
    int room = MAX_CANDS - done;
    if (store->code != TIR_LOCAL_STORE) /* before reading its three operands */
        return 0;
    TirValue *buf = store->ops[0], *x = store->ops[2];
    int64_t idx;
    if (!buf->def || buf->def->block != body ||
        buf->type.buffers != 1 || !const_int(store->ops[1], &idx) || idx != 0)
        return 0;
    TirOp *ld = x->def;
    if (ld && ld->code == TIR_LOAD) {
        if (!prefetchable(p, body, ld) || uses_of(body, x) != 1 || !only_loaded(body, buf, store) ||
            !copies_vectorize(p, ld, buf))
            return 0;
        c->alloc = buf->def, c->load = ld, c->store = store, c->via = NULL, c->ring = NULL;
        return 1;
    }
    TirOp *loads[MAX_CANDS];
    int nl = chain_loads(body, x, loads, 0, 0), n = 0;
    int64_t room_bytes = tile_bytes(&buf->type);
    for (int i = 0; i < nl && n < room; i++) {
        const TirValue *v = loads[i]->results[0];
        int64_t bytes = tile_bytes(&v->type);
        Cand *ci = &c[n];
        ci->alloc = buf->def, ci->load = loads[i], ci->store = store, ci->ring = NULL;
        ci->via = only_user(body, v);
        if (!ci->via || !prefetchable(p, body, loads[i]) || taken(p, cs, done + n, loads[i]))
            continue;
        if (v->type.rank && bytes <= room_bytes && chain_ring(p, buf, ci))
            room_bytes -= bytes, n++;
        else if (bytes <= AHEAD_BYTES * p->k->num_warps && p->nahead < MAX_CANDS)
            p->ahead[p->nahead++] = loads[i];
    }
    return n;
}

/* ---- building ---- */
static TirValue *emit(PP *p, TirOp *at, TirOpcode code, TirValue **ops, int nops,
                      const TirType *t, const TirLayout *l)
{
    TirOp *op = tir_op_insert_before(p->k, at, code, at->loc, ops, nops, t, t ? 1 : 0);
    if (t)
        op->results[0]->layout = l;
    return t ? op->results[0] : NULL;
}

static TirValue *emit_const(PP *p, TirOp *at, ElemKind et, int64_t v)
{
    TirType t = {.elem = et};
    TirValue *c = emit(p, at, TIR_CONST, NULL, 0, &t, &scalar_layout);
    c->def->attr.i = v;
    return c;
}

static TirValue *emit_binary(PP *p, TirOp *at, int opc, TirValue *a, TirValue *b)
{
    TirValue *ops[2] = {a, b};
    TirValue *r = emit(p, at, TIR_BINARY, ops, 2, &a->type, a->layout);
    r->def->attr.i = opc;
    return r;
}

/* The mask of a cloned load: its own (if any) and the copied iteration's existence. */
static TirValue *load_mask(PP *p, TirOp *at, const TirOp *ld, TirValue **ops, Map *m)
{
    TirValue *valid = m->valid;
    const TirValue *ptr = ld->ops[0];
    if (ptr->type.rank) {
        TirType bt = ptr->type;
        bt.elem = ET_BOOL, bt.pointee = ET_VOID;
        valid = emit(p, at, TIR_SPLAT, &valid, 1, &bt, ptr->layout);
    }
    return ld->nops > 1 ? emit_binary(p, at, BIN_AND, ops[1], valid) : valid;
}

/* v's clone in m, or NULL */
static TirValue *mapped(const Map *m, const TirValue *v)
{
    for (int i = 0; i < m->n; i++)
        if (m->from[i] == v)
            return m->to[i];
    return NULL;
}

static TirValue *clone(PP *p, TirOp *at, TirValue *v, const TirBlock *body, Map *m)
{
    if (!tir_defined_in(v, body))
        return v;
    TirValue *done = mapped(m, v);
    if (done)
        return done;
    TirOp *d = v->def;
    TirValue *ops[8];
    int nops = d->nops;
    for (int i = 0; i < d->nops && i < 8; i++)
        ops[i] = clone(p, at, d->ops[i], body, m);
    if (d->code == TIR_LOAD) { /* only what this iteration would load: never past the table */
        ops[1] = load_mask(p, at, d, ops, m);
        nops = d->nops > 2 ? 3 : 2;
    }
    TirValue *c = emit(p, at, d->code, ops, nops, &v->type, v->layout);
    c->def->attr = d->attr;
    if (m->n < MAX_MAP)
        m->from[m->n] = v, m->to[m->n++] = c;
    return c;
}

/* async_copy ring[index] <- the candidate's load for the iteration whose induction variable
 * is iv, masked off unless `valid`. */
static Map iteration_map(const TirBlock *body, TirValue *iv, TirValue *valid)
{
    Map m = {.n = 1, .valid = valid};
    m.from[0] = body->args[0], m.to[0] = iv;
    return m;
}

/* Adds to `out` (n so far, returns the new count) the loads v's computation depends on
 * nearest (a block table's entries; the loads those depend on come with their clones). */
static int address_loads(TirValue *v, const TirBlock *body, TirValue **out, int n, int depth)
{
    if (depth > MAX_DEPTH || n >= MAX_TABLE || !tir_defined_in(v, body) || !v->def)
        return n;
    if (v->def->code == TIR_LOAD) {
        for (int i = 0; i < n; i++)
            if (out[i] == v)
                return n;
        out[n] = v;
        return n + 1;
    }
    for (int i = 0; i < v->def->nops; i++)
        n = address_loads(v->def->ops[i], body, out, n, depth + 1);
    return n;
}

static void copy_for(PP *p, TirOp *at, Cand *c, const TirBlock *body, Map *m,
                     TirValue *index, int ring_write)
{
    TirValue *valid = m->valid;
    TirValue *ptr = clone(p, at, c->load->ops[0], body, m);
    TirType bt = ptr->type;
    bt.elem = ET_BOOL, bt.pointee = ET_VOID;
    TirValue *mask = emit(p, at, TIR_SPLAT, &valid, 1, &bt, ptr->layout);
    if (c->load->nops > 1) {
        TirValue *lm = clone(p, at, c->load->ops[1], body, m);
        mask = emit_binary(p, at, BIN_AND, lm, mask);
    }
    TirValue *ops[4] = {c->ring, index, ptr, mask};
    TirOp *cp = tir_op_insert_before(p->k, at, TIR_ASYNC_COPY, at->loc, ops, 4, NULL, 0);
    cp->attr.i = ring_write;
}

static void commit(PP *p, TirOp *at)
{
    tir_op_insert_before(p->k, at, TIR_ASYNC_COMMIT, at->loc, NULL, 0, NULL, 0);
}

static TirOp *wait_op(PP *p, TirOp *at, int pending)
{
    TirOp *w = tir_op_insert_before(p->k, at, TIR_ASYNC_WAIT, at->loc, NULL, 0, NULL, 0);
    w->attr.i = pending;
    return w;
}

/* iv < hi, as a scalar bool (steps are positive). */
static TirValue *in_range(PP *p, TirOp *at, TirValue *iv, TirValue *hi)
{
    TirType bt = {.elem = ET_BOOL};
    TirValue *ops[2] = {iv, hi};
    TirValue *c = emit(p, at, TIR_CMP, ops, 2, &bt, &scalar_layout);
    c->def->attr.i = CMP_LT;
    return c;
}

/* base + ahead < hi without computing base + ahead, which can wrap past the type's end (a
 * wrapped index would pass the test and copy from far outside the tensor): base < hi and the
 * distance hi - base, exact as an unsigned number then, exceeds ahead. */
static TirValue *ahead_in_range(PP *p, TirOp *at, TirValue *base, TirValue *hi, int64_t ahead)
{
    ElemKind uk = et_unsigned_of(base->type.elem);
    int bits = et_bits(uk);
    if (ahead == 0)
        return in_range(p, at, base, hi);
    if (bits < 64 && ahead >= ((int64_t)1 << bits) - 1)
        return emit_const(p, at, ET_BOOL, 0); /* no distance of the type exceeds it */
    TirType ut = {.elem = uk}, bt = {.elem = ET_BOOL};
    TirValue *below = in_range(p, at, base, hi);
    TirValue *gap = emit_binary(p, at, BIN_SUB, hi, base);
    TirValue *ops[2] = {emit(p, at, TIR_CAST, &gap, 1, &ut, &scalar_layout), emit_const(p, at, uk, ahead)};
    TirValue *far = emit(p, at, TIR_CMP, ops, 2, &bt, &scalar_layout);
    far->def->attr.i = CMP_GT;
    return emit_binary(p, at, BIN_AND, below, far);
}

static void prologue(PP *p, TirOp *loop, Cand *cs, int n, int64_t step)
{
    TirValue *lo = loop->ops[0], *hi = loop->ops[1];
    const TirBlock *body = loop->regions[0];
    for (int s = 0; s + 1 < p->stages; s++) {
        TirValue *iv = s ? emit_binary(p, loop, BIN_ADD, lo, emit_const(p, loop, lo->type.elem, s * step)) : lo;
        TirValue *valid = ahead_in_range(p, loop, lo, hi, s * step);
        TirValue *idx = emit_const(p, loop, ET_I32, s);
        for (int i = 0; i < n; i++) {
            Map m = iteration_map(body, iv, valid);
            copy_for(p, loop, &cs[i], body, &m, idx, 0);
        }
        commit(p, loop);
    }
}

/* The stage read in each iteration, carried by the loop: 0, 1, ..., S-1, 0, ... (a counter,
 * not a division of the induction variable, so the ring's addresses stay simple). */
static TirValue *stage_counter(PP *p, TirOp *loop)
{
    TirBlock *body = loop->regions[0];
    TirOp *yield = body->last;
    TirValue *rd = tir_for_add_carried(p->k, loop, emit_const(p, loop, ET_I32, 0));
    TirValue *next = emit_binary(p, yield, BIN_ADD, rd, emit_const(p, yield, ET_I32, 1));
    TirValue *ops[3] = {next, emit_const(p, yield, ET_I32, p->stages)};
    TirType bt = {.elem = ET_BOOL}, it = {.elem = ET_I32};
    TirValue *wrap = emit(p, yield, TIR_CMP, ops, 2, &bt, &scalar_layout);
    wrap->def->attr.i = CMP_EQ;
    ops[0] = wrap, ops[1] = emit_const(p, yield, ET_I32, 0), ops[2] = next;
    yield->ops[yield->nops - 1] = emit(p, yield, TIR_SELECT, ops, 3, &it, &scalar_layout);
    return rd;
}

/* The stage written in an iteration that reads `rd`: (rd + S - 1) % S, the one read last. */
static TirValue *stage_before(PP *p, TirOp *at, TirValue *rd)
{
    TirType bt = {.elem = ET_BOOL}, it = {.elem = ET_I32};
    TirValue *ops[3] = {rd, emit_const(p, at, ET_I32, 0)};
    TirValue *first = emit(p, at, TIR_CMP, ops, 2, &bt, &scalar_layout);
    first->def->attr.i = CMP_EQ;
    ops[0] = first, ops[1] = emit_const(p, at, ET_I32, p->stages - 1);
    ops[2] = emit_binary(p, at, BIN_SUB, rd, emit_const(p, at, ET_I32, 1));
    return emit(p, at, TIR_SELECT, ops, 3, &it, &scalar_layout);
}

/* Points the candidate's local_loads at the ring's stage `rd`; returns the last of them. A
 * load of a dequantization chain becomes a read of its stage, in the load's layout, just
 * before the op that read the load. */
static TirOp *read_ring(PP *p, Cand *c, TirBlock *body, TirValue *rd)
{
    if (c->via) {
        TirValue *x = c->load->results[0], *ops[2] = {c->ring, rd};
        TirValue *v = emit(p, c->via, TIR_LOCAL_LOAD, ops, 2, &x->type, x->layout);
        v->name = x->name;
        for (int i = 0; i < c->via->nops; i++)
            if (c->via->ops[i] == x)
                c->via->ops[i] = v;
        return v->def;
    }
    TirOp *last = NULL;
    TirValue *buf = c->alloc->results[0];
    for (TirOp *op = body->first; op; op = op->next)
        if (op->code == TIR_LOCAL_LOAD && op->ops[0] == buf) {
            op->ops[0] = c->ring, op->ops[1] = rd;
            last = op;
        }
    return last;
}

/* Table entries a stage ahead of the copies they address: iteration k loads, first thing,
 * the entries of iteration k + S and carries them to iteration k + 1, whose copy (for
 * iteration k + S) finds them in m; the first ones are loaded before the loop. A copy never
 * waits on a load of its own iteration, so the table's latency stays off the path from one
 * iteration's copies to the next's. */
static void prefetch_tables(PP *p, TirOp *loop, Cand *cs, int n, int64_t step, Map *m)
{
    TirBlock *body = loop->regions[0];
    TirValue *loads[MAX_TABLE], *lo = loop->ops[0], *hi = loop->ops[1], *iv = body->args[0];
    int nl = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < cs[i].load->nops && j < 2; j++)
            nl = address_loads(cs[i].load->ops[j], body, loads, nl, 0);
    if (!nl)
        return;
    int64_t ahead = (p->stages - 1) * step;
    TirValue *iv0 = emit_binary(p, loop, BIN_ADD, lo, emit_const(p, loop, lo->type.elem, ahead));
    Map before = iteration_map(body, iv0, ahead_in_range(p, loop, lo, hi, ahead));
    TirOp *first = body->first;
    TirValue *ivs = emit_binary(p, first, BIN_ADD, iv, emit_const(p, first, iv->type.elem, ahead + step));
    Map next = iteration_map(body, ivs, ahead_in_range(p, first, iv, hi, ahead + step));
    for (int i = 0; i < nl && m->n < MAX_MAP; i++) {
        TirValue *carried = tir_for_add_carried(p->k, loop, clone(p, loop, loads[i], body, &before));
        TirOp *yield = body->last;
        yield->ops[yield->nops - 1] = clone(p, first, loads[i], body, &next);
        m->from[m->n] = loads[i], m->to[m->n++] = carried;
    }
}

/* Each small load of p->ahead is issued an iteration early: the loop carries the next
 * iteration's elements (the first ones loaded before it), so the load's latency overlaps an
 * iteration of work instead of stalling the dequantization that reads it. */
static void load_ahead(PP *p, TirOp *loop, int64_t step)
{
    TirBlock *body = loop->regions[0];
    TirValue *lo = loop->ops[0], *hi = loop->ops[1], *iv = body->args[0];
    TirOp *top = body->first;
    TirValue *ivn = emit_binary(p, top, BIN_ADD, iv, emit_const(p, top, iv->type.elem, step));
    TirValue *next_valid = ahead_in_range(p, top, iv, hi, step), *first_valid = in_range(p, loop, lo, hi);
    for (int i = 0; i < p->nahead; i++) {
        TirValue *x = p->ahead[i]->results[0];
        TirOp *user = only_user(body, x);
        Map first = iteration_map(body, lo, first_valid), next = iteration_map(body, ivn, next_valid);
        TirValue *carried = tir_for_add_carried(p->k, loop, clone(p, loop, x, body, &first));
        TirOp *yield = body->last;
        yield->ops[yield->nops - 1] = clone(p, top, x, body, &next);
        for (int j = 0; user && j < user->nops; j++)
            if (user->ops[j] == x)
                user->ops[j] = carried;
        tir_op_remove(p->ahead[i]);
    }
}

/* The body waits for its stage and reads it; right after a candidate's last read, the copy
 * for iteration k + S - 1 goes into the stage read one iteration earlier; the copies of an
 * iteration are committed together after the last one. Loads their addresses need (table
 * entries) come from the iteration before (prefetch_tables). */
static void rewrite_body(PP *p, TirOp *loop, Cand *cs, int n, int64_t step)
{
    TirBlock *body = loop->regions[0];
    TirValue *iv = body->args[0], *hi = loop->ops[1];
    TirOp *first = body->first;
    TirValue *ivn = emit_binary(p, first, BIN_ADD, iv, emit_const(p, first, iv->type.elem, (p->stages - 1) * step));
    TirValue *valid = ahead_in_range(p, first, iv, hi, (p->stages - 1) * step);
    Map m = iteration_map(body, ivn, valid);
    if (p->loads_ok)
        prefetch_tables(p, loop, cs, n, step, &m);
    wait_op(p, first, p->stages - 2);
    TirValue *rd = stage_counter(p, loop);
    for (int i = 0; i < n; i++) {
        TirOp *last = read_ring(p, &cs[i], body, rd);
        TirOp *at = last && last->next ? last->next : body->last;
        TirValue *wr = stage_before(p, at, rd);
        Map mi = m; /* what this copy clones stays its own: another copy may come earlier */
        copy_for(p, at, &cs[i], body, &mi, wr, 1);
    }
    TirOp *last_copy = NULL;
    for (TirOp *op = body->first; op; op = op->next)
        if (op->code == TIR_ASYNC_COPY)
            last_copy = op;
    commit(p, last_copy->next);
    for (int i = 0; i < n; i++) {
        tir_op_remove(cs[i].load);
        if (!cs[i].via) {
            tir_op_remove(cs[i].store);
            tir_op_remove(cs[i].alloc);
        }
    }
}

/* What may run after the prologue instead of before it: math, loads, and the staging of other
 * shared buffers; never stores, atomics, async operations or ops holding regions. */
static int movable(const TirOp *op)
{
    return op->nregions == 0 &&
           (pure_op(op->code) || (op->code == TIR_LOAD && !tir_op_is_volatile(op)) || op->code == TIR_LOCAL_ALLOC ||
            op->code == TIR_LOCAL_STORE || op->code == TIR_LOCAL_LOAD);
}

/* Whether an op in [from, to) reads a result of op. */
static int used_in(const TirOp *op, const TirOp *from, const TirOp *to)
{
    for (const TirOp *u = from; u && u != to; u = u->next)
        for (int i = 0; i < u->nops; i++)
            if (u->ops[i]->def == op)
                return 1;
    return 0;
}

/* The prologue, [first, loop), is issued as early as its operands allow: the ops just before
 * it that it does not read and that may move (an attention kernel's staging of Q in shared
 * memory, which waits for Q's load) go after it, in their order, so the first copies are in
 * flight while those wait for their memory. */
static void issue_early(TirOp *first, TirOp *loop)
{
    TirOp *after = loop;
    for (TirOp *q = first->prev; q && movable(q) && !used_in(q, first, loop); q = first->prev) {
        tir_op_move_before(q, after);
        after = q;
    }
}

/* The bytes of every shared buffer in b, as if none shared space with another: more than
 * the allocator will place. */
static int64_t smem_bound(const TirBlock *b)
{
    int64_t n = 0;
    for (const TirOp *op = b ? b->first : NULL; op; op = op->next) {
        if (op->code == TIR_LOCAL_ALLOC) {
            const TirValue *v = op->results[0];
            n += (int64_t)smem_buffer_elems(v->layout, v->type.shape, v->type.rank) *
                 et_bytes(v->type.elem) * (v->type.buffers > 0 ? v->type.buffers : 1);
        }
        for (int r = 0; r < op->nregions; r++)
            n += smem_bound(op->regions[r]);
    }
    return n;
}

/* Rings of a dequantization are added to the buffers the kernel has: where they could take
 * it past the target's shared memory, its loads stay as they were (and a configuration
 * that compiled before still compiles); rings replacing a buffer stay. Returns the number
 * of candidates kept, the ones replacing buffers first in cs. */
static int fit_chains(PP *p, Cand *cs, int n)
{
    int64_t extra = 0;
    for (int i = 0; i < n; i++)
        if (cs[i].via)
            extra += tile_bytes(&cs[i].load->results[0]->type) * p->stages;
    if (!p->t->smem_limit || smem_bound(p->k->body) + extra <= p->t->smem_limit)
        return n;
    int kept = 0;
    for (int i = 0; i < n; i++)
        if (!cs[i].via)
            cs[kept++] = cs[i];
    p->nahead = 0;
    return kept;
}

static int pipeline_loop(PP *p, TirOp *loop)
{
    TirBlock *body = loop->regions[0];
    int64_t step;
    Cand cs[MAX_CANDS];
    int n = 0;
    if (!const_int(loop->ops[2], &step) || step <= 0 || leaves_loop(body) || has_user_barrier(body))
        return 0;
    p->loads_ok = !tir_block_stores(body);
    p->nahead = 0;
    for (TirOp *op = body->first; op && n < MAX_CANDS; op = op->next)
        n += candidates(p, body, op, cs, n);
    n = fit_chains(p, cs, n);
    if (!n)
        return 0;
    const TirLayout *ring[MAX_CANDS];
    for (int i = 0; i < n; i++) {
        /* cp.async fills a ring: never padded (smem_layout.h); a chain load's has its own */
        Arena *a = p->k->arena;
        ring[i] = cs[i].via ? tir_layout_new(a, cs[i].via_layout)
                            : smem_buffer_unpadded(a, cs[i].alloc->results[0]);
        if (!ring[i])
            return 0; /* out of memory: the loop stays as it is */
    }
    TirOp *before = loop->prev;
    for (int i = 0; i < n; i++) {
        TirType rt = cs[i].via ? cs[i].load->results[0]->type : cs[i].alloc->results[0]->type;
        rt.buffers = p->stages;
        cs[i].ring = emit(p, loop, TIR_LOCAL_ALLOC, NULL, 0, &rt, ring[i]);
        cs[i].ring->def->attr.i = -1;
    }
    prologue(p, loop, cs, n, step);
    rewrite_body(p, loop, cs, n, step);
    load_ahead(p, loop, step);
    issue_early(before ? before->next : loop->block->first, loop);
    if (loop->next)
        wait_op(p, loop->next, 0);
    else
        tir_op_append(p->k, loop->block, TIR_ASYNC_WAIT, loop->loc, NULL, 0, NULL, 0);
    return n;
}

/* Each loop at its own depth: range(..., num_stages=N), else the kernel's num_stages. */
static void visit(PP *p, TirBlock *b)
{
    for (TirOp *op = b ? b->first : NULL; op; op = op->next) {
        for (int r = 0; r < op->nregions; r++)
            visit(p, op->regions[r]);
        if (op->code != TIR_FOR)
            continue;
        p->stages = op->attr.i ? (int)op->attr.i : p->k->num_stages;
        if (p->stages < 2)
            continue;
        if (!p->axis)
            p->axis = axis_analyze(p->k);
        pipeline_loop(p, op);
    }
}

int pass_pipeline(TirKernel *k, const Target *t, Diags *d)
{
    (void)d;
    PP p = {.k = k, .t = t};
    if (!t->async_copy || t->threads_per_warp <= 1)
        return 0;
    visit(&p, k->body);
    return 0;
}
