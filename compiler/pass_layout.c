/* pass_layout.c: gives every value a layout. Values that must share a layout (operands and
 * results of elementwise ops, loads/stores, broadcasts, loop-carried and if-result values)
 * form classes (union-find); reductions, expand_dims and trans relate classes of different
 * ranks; dot results take the default rank-2 layout. Classes are solved by propagation from
 * defaults (highest rank first), and relations left unsatisfied get TIR_CONVERT_LAYOUT ops. */
#include <string.h>
#include "layout.h"
#include "target.h"

typedef enum { REL_REDUCE, REL_EXPAND, REL_TRANS } RelKind;

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
    case TIR_FMA: case TIR_ADDPTR: case TIR_BROADCAST:
        unite_all(p, op);
        break;
    case TIR_LOAD:
        note_mem(p, op->ops[0]);
        unite_all(p, op);
        break;
    case TIR_STORE:
        note_mem(p, op->ops[0]);
        unite_all(p, op);
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
static TirLayout default_for(LP *p, int rank)
{
    int eb = p->ebytes[rank] ? p->ebytes[rank] : 4;
    return layout_default_blocked(rank, p->hint[rank], eb, p->k->num_warps,
                                  p->t->threads_per_warp);
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

static int propagate_rel(LP *p, const Rel *r)
{
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
            return set_cls(p, res, layout_permute2(la));
        if (lr && !la)
            return set_cls(p, a, layout_permute2(lr));
        return 0;
    }
    return 0;
}

static int propagate(LP *p)
{
    int any = 0, changed = 1;
    while (changed) {
        changed = 0;
        for (int i = 0; i < p->nrels; i++)
            changed |= propagate_rel(p, &p->rels[i]);
        any |= changed;
    }
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
    return best ? set_cls(p, best, default_for(p, best->type.rank)) : 0;
}

static void force_dots(LP *p, TirBlock *b)
{
    for (TirOp *op = b ? b->first : NULL; op; op = op->next) {
        if (op->code == TIR_DOT)
            set_cls(p, op->results[0], default_for(p, 2));
        for (int r = 0; r < op->nregions; r++)
            force_dots(p, op->regions[r]);
    }
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
    TirOp *c = before ? tir_op_insert_before(p->k, before, TIR_CONVERT_LAYOUT, before->loc, &v, 1,
                                             &v->type, 1)
                      : tir_op_append(p->k, blk, TIR_CONVERT_LAYOUT, (SrcLoc){0}, &v, 1,
                                      &v->type, 1);
    c->results[0]->layout = lay_new(p, *l);
    return c->results[0];
}

/* `res` of `op` must have layout `want`; its users keep the class layout through a convert. */
static void convert_result(LP *p, TirOp *op, const TirLayout *want)
{
    TirValue *res = op->results[0];
    const TirLayout *had = res->layout;
    TirValue *c = convert_before(p, op->next, op->block, res, had);
    tir_replace_uses(p->k->body, res, c);
    c->def->ops[0] = res;
    res->layout = lay_new(p, *want);
}

static void fix_rel(LP *p, const Rel *r)
{
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
        want = layout_permute2(a->layout);
        if (!tir_layout_equal(&want, res->layout))
            convert_result(p, r->op, &want);
        break;
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
    force_dots(&p, k->body);
    do
        propagate(&p);
    while (pick_default(&p));
    apply(&p);
    for (int i = 0; i < p.nrels; i++)
        fix_rel(&p, &p.rels[i]);
    return 0;
}
