/* pass_layout.c: gives every value a layout. Values that must share a layout (operands and
 * results of elementwise ops, loads/stores, broadcasts, loop-carried and if-result values)
 * form classes (union-find); reductions, expand_dims and trans relate classes of different
 * ranks; dot results take mma encodings where the target has matrix instructions (else the
 * default rank-2 layout), their operands the matching dot-operand encodings. Loads take
 * coalesced layouts following their addresses; stores too where what they store has no
 * layout from its computation. Classes are then solved by propagation and defaults (highest
 * rank first), and relations left unsatisfied get TIR_CONVERT_LAYOUT ops. */
#include <string.h>
#include "analysis_axis.h"
#include "layout_dot.h"
#include "layout_shape.h"
#include "target.h"

typedef enum { REL_REDUCE, REL_EXPAND, REL_TRANS, REL_STORE, REL_SHAPE, REL_SCAN } RelKind;

typedef struct Rel {
    RelKind kind;
    TirOp *op;
} Rel;

typedef struct LP {
    TirKernel *k;
    const Target *t;
    Diags *d;
    int n;
    int *parent;
    TirLayout **cls;     /* layout of a class, at its root; NULL: not chosen yet */
    TirValue **vals;
    Rel *rels;
    int nrels, caprels;
    int hint[TIR_MAX_RANK + 1][TIR_MAX_RANK]; /* largest shape per rank */
    int hint_numel[TIR_MAX_RANK + 1];
    int ebytes[TIR_MAX_RANK + 1];
    TirOp *loops[64];
    int nloops;
    int dot_results[64], ndots, chained;
    int stores_open;      /* stores' addresses and values may take each other's layouts */
    const AxisInfo *axis; /* contiguity of addresses, by value id */
} LP;

static int find(LP *p, int x)
{
    while (p->parent[x] != x) {
        p->parent[x] = p->parent[p->parent[x]];
        x = p->parent[x];
    }
    return x;
}

static void unite(LP *p, TirValue *a, TirValue *b)
{
    if (!a || !b || a->type.rank == 0 || b->type.rank == 0)
        return;
    int x = find(p, a->id), y = find(p, b->id);
    if (x != y)
        p->parent[x] = y;
}

static TirLayout *cls_of(LP *p, TirValue *v) { return p->cls[find(p, v->id)]; }

static TirLayout *lay_new(LP *p, TirLayout l)
{
    TirLayout *n = arena_alloc(p->k->arena, sizeof *n);
    if (n)
        *n = l;
    return n;
}

static int set_cls(LP *p, TirValue *v, TirLayout l)
{
    int r = find(p, v->id);
    if (p->cls[r])
        return 0;
    p->cls[r] = lay_new(p, l);
    return 1;
}

static void add_rel(LP *p, RelKind kind, TirOp *op)
{
    if (p->nrels == p->caprels) {
        int cap = p->caprels ? p->caprels * 2 : 32;
        Rel *n = arena_alloc(p->k->arena, sizeof(Rel) * (size_t)cap);
        if (!n)
            return;
        if (p->nrels)
            memcpy(n, p->rels, sizeof(Rel) * (size_t)p->nrels);
        p->rels = n, p->caprels = cap;
    }
    p->rels[p->nrels++] = (Rel){kind, op};
}

/* ---- collecting values, classes and relations ---- */
static void note_value(LP *p, TirValue *v)
{
    if (v->id >= 0 && v->id < p->n)
        p->vals[v->id] = v;
    int r = v->type.rank, numel = tir_type_numel(&v->type);
    if (r > 0 && numel > p->hint_numel[r]) {
        p->hint_numel[r] = numel;
        memcpy(p->hint[r], v->type.shape, sizeof p->hint[r]);
    }
}

static void note_mem(LP *p, TirValue *ptr)
{
    int r = ptr->type.rank, b = et_bytes(ptr->type.pointee);
    if (r > 0 && b > p->ebytes[r])
        p->ebytes[r] = b;
}

static void unite_all(LP *p, TirOp *op)
{
    TirValue *first = op->nres ? op->results[0] : NULL;
    for (int i = 0; i < op->nops; i++) {
        if (!first || first->type.rank == 0)
            first = op->ops[i];
        unite(p, first, op->ops[i]);
    }
}

static void unite_terminator(LP *p, TirOp *op)
{
    TirOp *owner = op->block ? op->block->parent : NULL;
    if (op->code == TIR_BREAK || op->code == TIR_CONTINUE)
        owner = p->nloops ? p->loops[p->nloops - 1] : NULL;
    if (!owner)
        return;
    int skip = op->code == TIR_CONDITION ? 1 : 0;
    for (int i = skip; i < op->nops && i - skip < owner->nres; i++)
        unite(p, op->ops[i], owner->results[i - skip]);
}

static void collect_block(LP *p, TirBlock *b);

static void collect_loop(LP *p, TirOp *op)
{
    int first_init = op->code == TIR_FOR ? 3 : 0;
    for (int i = 0; i < op->nres; i++) {
        unite(p, op->ops[first_init + i], op->results[i]);
        for (int r = 0; r < op->nregions; r++) {
            TirBlock *rb = op->regions[r];
            int a = (op->code == TIR_FOR ? 1 : 0) + i;
            if (rb && a < rb->nargs)
                unite(p, rb->args[a], op->results[i]);
        }
    }
    if (p->nloops < 64)
        p->loops[p->nloops++] = op;
    for (int r = 0; r < op->nregions; r++)
        collect_block(p, op->regions[r]);
    p->nloops--;
}

static void collect_op(LP *p, TirOp *op)
{
    for (int i = 0; i < op->nres; i++)
        note_value(p, op->results[i]);
    switch (op->code) {
    case TIR_BINARY: case TIR_CMP: case TIR_UNARY: case TIR_SELECT: case TIR_CAST:
    case TIR_FMA: case TIR_ADDPTR: case TIR_BROADCAST: case TIR_HINT: case TIR_PRINT:
        unite_all(p, op);
        break;
    case TIR_INLINE_ASM: /* every result and operand of the results' shape: one layout */
        unite_all(p, op);
        for (int i = 1; i < op->nres; i++)
            unite(p, op->results[0], op->results[i]);
        break;
    case TIR_LOAD: case TIR_ATOMIC: case TIR_PREFETCH:
        note_mem(p, op->ops[0]);
        unite_all(p, op);
        break;
    case TIR_STORE: /* the address and mask classes; the value may be converted to them */
        note_mem(p, op->ops[0]);
        if (op->nops > 2)
            unite(p, op->ops[0], op->ops[2]);
        if (op->ops[0]->type.rank > 0)
            add_rel(p, REL_STORE, op);
        break;
    case TIR_DOT: unite(p, op->ops[2], op->results[0]); break;
    case TIR_REDUCE:
        if (op->results[0]->type.rank > 0)
            add_rel(p, REL_REDUCE, op);
        break;
    case TIR_EXPAND_DIMS:
        if (op->ops[0]->type.rank > 0)
            add_rel(p, REL_EXPAND, op);
        break;
    case TIR_TRANS: add_rel(p, REL_TRANS, op); break;
    case TIR_JOIN: unite(p, op->ops[0], op->ops[1]); add_rel(p, REL_SHAPE, op); break;
    case TIR_SPLIT: unite(p, op->results[0], op->results[1]); add_rel(p, REL_SHAPE, op); break;
    case TIR_RESHAPE: case TIR_PERMUTE: add_rel(p, REL_SHAPE, op); break;
    case TIR_SCAN: case TIR_FLIP: add_rel(p, REL_SCAN, op); break;
    case TIR_SORT:
        if (op->nres > 1)
            unite(p, op->results[0], op->results[1]);
        add_rel(p, REL_SCAN, op);
        break;
    case TIR_FOR: case TIR_WHILE: collect_loop(p, op); return;
    case TIR_YIELD: case TIR_CONDITION: case TIR_BREAK: case TIR_CONTINUE:
        unite_terminator(p, op);
        break;
    default: break;
    }
    for (int r = 0; r < op->nregions; r++)
        collect_block(p, op->regions[r]);
}

static void collect_block(LP *p, TirBlock *b)
{
    if (!b)
        return;
    for (int i = 0; i < b->nargs; i++)
        note_value(p, b->args[i]);
    for (TirOp *op = b->first; op; op = op->next)
        collect_op(p, op);
}

/* ---- solving ---- */
/* The default blocked layout of a rank, fitted to `shape` (p->hint[rank]: the largest shape
 * of that rank, so values of one rank agree). */
static TirLayout default_for(LP *p, int rank, const int *shape)
{
    int eb = p->ebytes[rank] ? p->ebytes[rank] : 4;
    return layout_default_blocked(rank, shape, eb, p->k->num_warps, p->t->threads_per_warp);
}

/* The layout whose slice at value axis `axis` is `l`, or 0 when none is sliced there. */
static int unslice(const TirLayout *l, int axis, TirLayout *out)
{
    for (int d = 0, v = 0; d < l->rank; d++) {
        int sl = (l->sliced >> d) & 1;
        if (sl && v == axis) {
            *out = *l;
            out->sliced &= ~(1u << d);
            return 1;
        }
        v += !sl;
    }
    return 0;
}

/* A store's value and address agree unless fix_rel converts the value. */
static int propagate_store(LP *p, TirOp *op)
{
    TirLayout *lp = cls_of(p, op->ops[0]), *lv = cls_of(p, op->ops[1]);
    if (lv && !lp)
        return set_cls(p, op->ops[0], *lv);
    if (lp && !lv)
        return set_cls(p, op->ops[1], *lp);
    return 0;
}

/* The layout a scan or flip runs in: its axis whole in each thread's registers. */
static TirLayout scan_layout(LP *p, const TirOp *op, const TirValue *v)
{
    const TirType *t = &v->type;
    return layout_axis_in_thread(t->rank, t->shape, (int)(op->attr.i2 & 15), p->k->num_warps,
                                 p->t->threads_per_warp);
}

/* Whether layout l crowds value v into fewer threads than it fills: more than twice the
 * registers a thread holds when v's elements are spread evenly, and more than `few`. */
static int crowded(LP *p, const TirValue *v, const TirLayout *l, int few)
{
    int threads = p->k->num_warps * p->t->threads_per_warp, numel = tir_type_numel(&v->type);
    int ideal = numel > threads ? numel / threads : 1;
    int regs = layout_regs(l, v->type.shape, v->type.rank);
    return regs > 2 * ideal && regs > few;
}

/* A shape op's layouts follow each other's (layout_shape.c); a split's operand takes its
 * results' only where that does not crowd it past 64 registers: each split back doubles the
 * registers, and the chains of splits that narrow a tile down (a reduce with a helper, topk)
 * would pull a small result's replicated layout back into a tile that every thread then holds
 * whole, past the limit of 255 (where the chain stops, its operand is converted to the
 * results' layout mapped back: at most 128 registers). */
static int propagate_shape(LP *p, TirOp *op)
{
    TirValue *in = op->ops[0], *out = op->results[0];
    TirLayout *li = cls_of(p, in), *lo = cls_of(p, out), t;
    if (li && !lo && layout_through(p->k->arena, op, 1, li, &t) == 0)
        return set_cls(p, out, t);
    if (lo && !li && layout_through(p->k->arena, op, 0, lo, &t) == 0 &&
        !(op->code == TIR_SPLIT && crowded(p, in, &t, 64)))
        return set_cls(p, in, t);
    return 0;
}

static int propagate_rel(LP *p, const Rel *r)
{
    if (r->kind == REL_STORE)
        return p->stores_open ? propagate_store(p, r->op) : 0;
    if (r->kind == REL_SHAPE)
        return propagate_shape(p, r->op);
    if (r->kind == REL_SCAN) { /* both sides hold the axis in each thread (fix_rel converts) */
        return set_cls(p, r->op->results[0], scan_layout(p, r->op, r->op->results[0])) |
               set_cls(p, r->op->ops[0], scan_layout(p, r->op, r->op->ops[0]));
    }
    TirValue *a = r->op->ops[0], *res = r->op->results[0];
    TirLayout *la = cls_of(p, a), *lr = cls_of(p, res), t;
    int axis = (int)(r->kind == REL_REDUCE ? r->op->attr.i2 : r->op->attr.i);
    switch (r->kind) {
    case REL_REDUCE:
        return la && !lr ? set_cls(p, res, layout_slice(la, axis)) : 0;
    case REL_EXPAND:
        if (lr && !la)
            return set_cls(p, a, layout_slice(lr, axis));
        if (la && !lr && unslice(la, axis, &t))
            return set_cls(p, res, t);
        return 0;
    case REL_TRANS:
        if (la && !lr)
            return set_cls(p, res, layout_permute2(p->k->arena, la));
        if (lr && !la)
            return set_cls(p, a, layout_permute2(p->k->arena, lr));
        return 0;
    case REL_STORE: case REL_SHAPE: case REL_SCAN: return 0;
    }
    return 0;
}

/* One relation that changes something: reductions first (a row statistic of a tile takes the
 * tile's slice before an index vector it meets, which is cheap to recompute, lends it another),
 * then stores (a stored value's layout reaches its address before index vectors shared with
 * other accesses decide it), then the rest. */
static int propagate_one(LP *p)
{
    static const int order[3] = {REL_REDUCE, REL_STORE, -1};
    for (int pass = 0; pass < 3; pass++)
        for (int i = 0; i < p->nrels; i++) {
            int kind = (int)p->rels[i].kind;
            int mine = order[pass] >= 0 ? kind == order[pass]
                                        : kind != REL_REDUCE && kind != REL_STORE;
            if (mine && propagate_rel(p, &p->rels[i]))
                return 1;
        }
    return 0;
}

static int propagate(LP *p)
{
    int any = 0;
    while (propagate_one(p))
        any = 1;
    return any;
}

/* Gives the unsolved class of highest rank its default; 0 when none is left. */
static int pick_default(LP *p)
{
    TirValue *best = NULL;
    for (int i = 0; i < p->n; i++) {
        TirValue *v = p->vals[i];
        if (v && v->type.rank > 0 && !cls_of(p, v) && (!best || v->type.rank > best->type.rank))
            best = v;
    }
    if (!best)
        return 0;
    int rank = best->type.rank;
    TirLayout l = default_for(p, rank, p->hint[rank]);
    /* where the rank's default would crowd this value (dims of size 1 taking the lanes), fit
     * its own shape */
    if (crowded(p, best, &l, 0))
        l = default_for(p, rank, best->type.shape);
    return set_cls(p, best, l);
}

/* Calls fn on every dot of the kernel. */
static void each_dot(LP *p, TirBlock *b, void (*fn)(LP *, TirOp *), TirOp *arg)
{
    for (TirOp *op = b ? b->first : NULL; op; op = op->next) {
        if (op->code == TIR_DOT)
            fn(p, op);
        for (int r = 0; r < op->nregions; r++)
            each_dot(p, op->regions[r], fn, arg);
    }
}

/* Some dot's A operand is in the class of some dot's result (a chain of dots, as in
 * attention): all mma results then put their warps along M where they have 16 rows for each
 * warp (dot_mma_layout). */
static void note_chain(LP *p, TirOp *dot)
{
    p->dot_results[p->ndots < 64 ? p->ndots++ : 63] = find(p, dot->results[0]->id);
}

static void find_chain(LP *p, TirOp *dot)
{
    for (int i = 0; i < p->ndots; i++)
        if (find(p, dot->ops[0]->id) == p->dot_results[i])
            p->chained = 1;
}

/* A dot's result class starts as its mma encoding where the target can use one, else the
 * default blocked layout (the FMA path). */
static void anchor_dot(LP *p, TirOp *op)
{
    if (dot_kwidth(op, p->t))
        set_cls(p, op->results[0], dot_mma_layout(op, p->t, p->k->num_warps, p->chained, p->k->mfma_size));
    else
        set_cls(p, op->results[0], default_for(p, 2, p->hint[2]));
}

/* The order of a memory access's dims by the contiguity of its addresses (most contiguous
 * first; ties keep the last dim first) and the run length along the first. */
static int access_order(LP *p, TirValue *ptr, int *order)
{
    int rank = ptr->type.rank;
    const AxisInfo *ax = p->axis ? &p->axis[ptr->id] : NULL;
    for (int j = 0; j < rank; j++)
        order[j] = rank - 1 - j;
    for (int j = 1; j < rank && ax; j++) /* insertion sort, stable */
        for (int i = j; i > 0 && ax->contig[order[i]] > ax->contig[order[i - 1]]; i--) {
            int t = order[i];
            order[i] = order[i - 1], order[i - 1] = t;
        }
    int64_t run = ax ? ax->contig[order[0]] : 1;
    return run > 16 ? 16 : (int)run;
}

/* Whether a store's value layout already writes at least half the vector a coalesced layout
 * would along the addresses' contiguous dim (then the store keeps it: no conversion). */
static int stores_well(LP *p, TirValue *ptr, const TirLayout *value)
{
    int order[TIR_MAX_RANK], run = access_order(p, ptr, order), eb = et_bytes(ptr->type.pointee);
    int ideal = run * eb < 16 ? run * eb : 16;
    LinearLayout ll;
    if (ideal <= 4)
        return 1;
    if (layout_ll(value, ptr->type.shape, ptr->type.rank, &ll))
        return 0;
    return ll_contiguous_regs(&ll, order[0]) * eb * 2 >= ideal;
}

/* Accesses of kind `code` whose class has no layout yet take coalesced layouts that follow
 * their addresses; a store whose value already has a layout (a load's, a dot's) keeps it when
 * that stores well, and one whose value has none yet (a reduction's result, say) takes the
 * value's later (its address class stays open). */
static void anchor_access(LP *p, TirOp *op, TirOpcode code)
{
    TirValue *ptr = op->ops[0];
    if (op->code != code || ptr->type.rank == 0 || cls_of(p, ptr) || p->t->threads_per_warp <= 1)
        return;
    if (code == TIR_STORE && (!cls_of(p, op->ops[1]) || stores_well(p, ptr, cls_of(p, op->ops[1]))))
        return;
    int order[TIR_MAX_RANK], run = access_order(p, ptr, order);
    TirLayout l = layout_coalesced(ptr->type.rank, ptr->type.shape, et_bytes(ptr->type.pointee),
                                   order, run > 1 ? run : 16, p->k->num_warps,
                                   p->t->threads_per_warp);
    set_cls(p, ptr, l);
}

static void anchor_accesses(LP *p, TirBlock *b, TirOpcode code)
{
    for (TirOp *op = b ? b->first : NULL; op; op = op->next) {
        anchor_access(p, op, code);
        for (int r = 0; r < op->nregions; r++)
            anchor_accesses(p, op->regions[r], code);
    }
}

static void anchor_dots(LP *p)
{
    each_dot(p, p->k->body, note_chain, NULL);
    each_dot(p, p->k->body, find_chain, NULL);
    each_dot(p, p->k->body, anchor_dot, NULL);
}

/* A class whose layout is a linear map made for one of its values (by a shape op) may hold
 * larger values (broadcasts of it, tiles that share its index vectors): the map grows to the
 * class's largest shape, so that each value's layout is a projection of it. */
static int grow_linear(LP *p)
{
    for (int i = 0; i < p->n; i++) {
        TirValue *v = p->vals[i];
        TirLayout *l = v && v->type.rank > 0 ? cls_of(p, v) : NULL;
        if (l && layout_grow(p->k->arena, l, v->type.shape, v->type.rank) != 0) {
            diag_error(p->d, v->def ? v->def->loc : (SrcLoc){0},
                       "internal compiler error: a linear layout grows past its input bits");
            return -1;
        }
    }
    return 0;
}

/* ---- applying ---- */
static void apply(LP *p)
{
    TirLayout *scalar = lay_new(p, (TirLayout){.kind = LAYOUT_SCALAR});
    for (int i = 0; i < p->n; i++) {
        TirValue *v = p->vals[i];
        if (v)
            v->layout = v->type.rank == 0 ? scalar : cls_of(p, v);
    }
}

/* A convert of v to layout l, placed before `before` (or at the end of `blk`). */
static TirValue *convert_before(LP *p, TirOp *before, TirBlock *blk, TirValue *v,
                                const TirLayout *l)
{
    TirOp *c = tir_op_insert_at(p->k, blk, before, TIR_CONVERT_LAYOUT,
                                before ? before->loc : (SrcLoc){0}, &v, 1, &v->type, 1);
    c->results[0]->layout = lay_new(p, *l);
    return c->results[0];
}

/* `res` of `op` must have layout `want`; its users keep the class layout through a convert. */
static void convert_result_at(LP *p, TirOp *op, int i, const TirLayout *want)
{
    TirValue *res = op->results[i];
    const TirLayout *had = res->layout;
    TirValue *c = convert_before(p, op->next, op->block, res, had);
    tir_replace_uses(p->k->body, res, c);
    c->def->ops[0] = res;
    res->layout = lay_new(p, *want);
}

static void convert_result(LP *p, TirOp *op, const TirLayout *want)
{
    convert_result_at(p, op, 0, want);
}

/* The result takes the operand's layout mapped through the op, converted to what its users
 * settled on; a split (whose operand may not hold its pairs in one thread) converts its
 * operand to the results' layout mapped back instead, as do the operands of a join. */
static void fix_shape(LP *p, TirOp *op)
{
    TirValue *out = op->results[0];
    TirLayout want;
    if (op->code != TIR_SPLIT && layout_through(p->k->arena, op, 1, op->ops[0]->layout, &want) == 0) {
        if (!tir_layout_equal(&want, out->layout))
            convert_result(p, op, &want);
        return;
    }
    if (layout_through(p->k->arena, op, 0, out->layout, &want) != 0)
        return;
    for (int i = 0; i < op->nops; i++)
        if (!tir_layout_equal(&want, op->ops[i]->layout))
            op->ops[i] = convert_before(p, op, NULL, op->ops[i], lay_new(p, want));
}

static void fix_scan(LP *p, TirOp *op)
{
    TirLayout in = scan_layout(p, op, op->ops[0]), out = scan_layout(p, op, op->results[0]);
    if (!tir_layout_equal(&in, op->ops[0]->layout))
        op->ops[0] = convert_before(p, op, NULL, op->ops[0], lay_new(p, in));
    for (int i = 0; i < op->nres; i++) /* a sort's values and indices */
        if (!tir_layout_equal(&out, op->results[i]->layout))
            convert_result_at(p, op, i, &out);
}

static void fix_rel(LP *p, const Rel *r)
{
    if (r->kind == REL_SCAN) {
        fix_scan(p, r->op);
        return;
    }
    if (r->kind == REL_SHAPE) {
        fix_shape(p, r->op);
        return;
    }
    if (r->kind == REL_STORE) {
        TirValue *ptr = r->op->ops[0], *v = r->op->ops[1];
        if (!tir_layout_equal(ptr->layout, v->layout))
            r->op->ops[1] = convert_before(p, r->op, NULL, v, ptr->layout);
        return;
    }
    TirValue *a = r->op->ops[0], *res = r->op->results[0];
    TirLayout want;
    switch (r->kind) {
    case REL_REDUCE:
        want = layout_slice(a->layout, (int)r->op->attr.i2);
        if (!tir_layout_equal(&want, res->layout))
            convert_result(p, r->op, &want);
        break;
    case REL_EXPAND:
        want = layout_slice(res->layout, (int)r->op->attr.i);
        if (!tir_layout_equal(&want, a->layout))
            r->op->ops[0] = convert_before(p, r->op, NULL, a, &want);
        break;
    case REL_TRANS:
        want = layout_permute2(p->k->arena, a->layout);
        if (!tir_layout_equal(&want, res->layout))
            convert_result(p, r->op, &want);
        break;
    case REL_STORE: case REL_SHAPE: case REL_SCAN: break;
    }
}

/* The operands of an mma dot in its dot-operand encodings. */
static void fix_dot_operands(LP *p, TirOp *op)
{
    if (!dot_uses_mma(op, p->t))
        return;
    int kw = dot_kwidth(op, p->t);
    for (int i = 0; i < 2; i++) {
        TirLayout want = layout_dot_operand(op->results[0]->layout, i, kw);
        if (!tir_layout_equal(&want, op->ops[i]->layout))
            op->ops[i] = convert_before(p, op, NULL, op->ops[i], &want);
    }
}

/* The dots' encodings reach through shape ops first (a batched dot's slices, split from and
 * joined into rank-3 tiles, give those tiles the mma encoding with the batch in registers),
 * before loads and stores anchor their coalesced layouts on the same classes. */
static void spread_dots_through_shapes(LP *p)
{
    for (int changed = 1; changed;) {
        changed = 0;
        for (int i = 0; i < p->nrels; i++)
            if (p->rels[i].kind == REL_SHAPE && propagate_shape(p, p->rels[i].op))
                changed = 1;
    }
}

int pass_assign_layouts(TirKernel *k, const Target *t, Diags *d)
{
    LP p = {.k = k, .t = t, .d = d, .n = k->next_value_id};
    k->threads_per_warp = t->threads_per_warp;
    if (t->threads_per_warp == 1)
        k->num_warps = 1;
    p.parent = arena_alloc(k->arena, sizeof(int) * (size_t)(p.n + 1));
    p.cls = arena_alloc(k->arena, sizeof(TirLayout *) * (size_t)(p.n + 1));
    p.vals = arena_alloc(k->arena, sizeof(TirValue *) * (size_t)(p.n + 1));
    if (!p.parent || !p.cls || !p.vals) {
        diag_error(d, (SrcLoc){0}, "out of memory in the layout pass");
        return -1;
    }
    for (int i = 0; i < p.n; i++)
        p.parent[i] = i;
    collect_block(&p, k->body);
    p.axis = axis_analyze(k);
    anchor_dots(&p);
    spread_dots_through_shapes(&p);
    anchor_accesses(&p, k->body, TIR_LOAD);
    anchor_accesses(&p, k->body, TIR_ATOMIC);
    anchor_accesses(&p, k->body, TIR_PREFETCH);
    anchor_accesses(&p, k->body, TIR_STORE);
    p.stores_open = 1;
    do
        propagate(&p);
    while (pick_default(&p));
    if (grow_linear(&p))
        return -1;
    apply(&p);
    for (int i = 0; i < p.nrels; i++)
        fix_rel(&p, &p.rels[i]);
    each_dot(&p, k->body, fix_dot_operands, NULL);
    return 0;
}
