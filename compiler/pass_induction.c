/* pass_induction.c: values a `for` loop carries and advances by one loop-invariant amount in
 * every iteration (Triton's `a_ptrs += BLOCK_K * stride_ak`, `off += BLOCK`) become functions
 * of the induction variable inside the body:
 *     v = init + ((iv - lo) / step) * inc
 * so their loads are what loads of addresses computed from the induction variable are: the
 * axis analysis sees their contiguity (vector accesses) and the pipeliner their addresses
 * (asynchronous copies issued stages ahead). The carried value goes away when nothing after
 * the loop reads it; a scalar that something after the loop reads is left as it is. Pointers
 * take the product in 64 bits (the carried sum never wrapped); integers keep their type (the
 * carried sum wrapped the same way). Loops with a break or continue of their own, or a step
 * that is not a positive constant, are left alone. Runs on the specialized IR, before
 * layouts. */
#include "passes.h"

enum { MAX_CLONES = 32, MAX_CLONE_DEPTH = 6 };

typedef struct Rewrite {
    TirKernel *k;
    TirOp *loop, *at; /* the loop; new ops go before `at`, the body's first op */
    const TirValue *from[MAX_CLONES];
    TirValue *to[MAX_CLONES];
    int nclones;
} Rewrite;

static int const_int(const TirValue *v, int64_t *out)
{
    if (!v->def || v->def->code != TIR_CONST || !et_is_int(v->type.elem) || v->type.rank)
        return 0;
    *out = v->def->attr.i;
    return 1;
}

/* Whether b has a break or continue of the loop owning it (not of a loop nested in it). */
static int exits_loop(const TirBlock *b)
{
    for (const TirOp *op = b->first; op; op = op->next) {
        if (op->code == TIR_BREAK || op->code == TIR_CONTINUE)
            return 1;
        if (op->code == TIR_IF)
            for (int r = 0; r < op->nregions; r++)
                if (exits_loop(op->regions[r]))
                    return 1;
    }
    return 0;
}

static int cloneable(TirOpcode c)
{
    return c == TIR_CONST || c == TIR_BINARY || c == TIR_CAST || c == TIR_UNARY;
}

/* v at the top of the body: itself when defined outside it, else a copy of its chain of
 * constants and arithmetic on values defined outside; NULL when it depends on the body. */
static TirValue *invariant(Rewrite *rw, TirValue *v, int depth)
{
    TirBlock *body = rw->loop->regions[0];
    if (!tir_defined_in(v, body))
        return v;
    for (int i = 0; i < rw->nclones; i++)
        if (rw->from[i] == v)
            return rw->to[i];
    TirOp *d = v->def;
    if (!d || d->nres != 1 || !cloneable(d->code) || depth >= MAX_CLONE_DEPTH ||
        rw->nclones == MAX_CLONES)
        return NULL;
    TirValue *ops[4];
    for (int i = 0; i < d->nops; i++)
        if (i >= 4 || !(ops[i] = invariant(rw, d->ops[i], depth + 1)))
            return NULL;
    TirOp *c = tir_op_insert_before(rw->k, rw->at, d->code, d->loc, ops, d->nops, &v->type, 1);
    c->attr.i = d->attr.i, c->attr.i2 = d->attr.i2, c->attr.f = d->attr.f;
    rw->from[rw->nclones] = v;
    rw->to[rw->nclones++] = c->results[0];
    return c->results[0];
}

/* The scalar amount `y` adds to carried argument `arg` each iteration, or NULL. */
static TirValue *step_amount(const TirValue *arg, const TirValue *y)
{
    const TirOp *d = y->def;
    TirValue *inc = NULL;
    if (!d || d->block != arg->block)
        return NULL;
    if (d->code == TIR_ADDPTR && d->ops[0] == arg)
        inc = d->ops[1];
    else if (d->code == TIR_BINARY && d->attr.i == BIN_ADD && et_is_int(arg->type.elem))
        inc = d->ops[0] == arg ? d->ops[1] : d->ops[1] == arg ? d->ops[0] : NULL;
    if (inc && inc->type.rank)
        inc = inc->def && inc->def->code == TIR_SPLAT ? inc->def->ops[0] : NULL;
    return inc;
}

static TirValue *emit(Rewrite *rw, TirOpcode code, int64_t attr, TirValue *a, TirValue *b,
                      const TirType *t)
{
    TirValue *ops[2] = {a, b};
    TirOp *op = tir_op_insert_before(rw->k, rw->at, code, rw->loop->loc, ops, b ? 2 : 1, t, 1);
    op->attr.i = attr;
    return op->results[0];
}

static TirValue *cast_to(Rewrite *rw, TirValue *v, ElemKind e)
{
    TirType t = {.elem = e};
    return v->type.elem == e ? v : emit(rw, TIR_CAST, 0, v, NULL, &t);
}

/* (iv - lo) / step: how many iterations came before this one (iv's type). */
static TirValue *iteration(Rewrite *rw, int64_t step)
{
    TirValue *iv = rw->loop->regions[0]->args[0], *lo = rw->loop->ops[0], *n = iv;
    int64_t lo_value;
    if (!const_int(lo, &lo_value) || lo_value != 0)
        n = emit(rw, TIR_BINARY, BIN_SUB, iv, lo, &iv->type);
    if (step != 1) {
        TirOp *s = tir_op_insert_before(rw->k, rw->at, TIR_CONST, rw->loop->loc, NULL, 0,
                                        &iv->type, 1);
        s->attr.i = step;
        n = emit(rw, TIR_BINARY, BIN_DIV, n, s->results[0], &iv->type);
    }
    return n;
}

/* init + n * inc, of arg's type, at the top of the body. */
static TirValue *advanced(Rewrite *rw, TirValue *arg, TirValue *init, TirValue *n,
                          TirValue *inc)
{
    int ptr = arg->type.elem == ET_PTR;
    ElemKind e = ptr ? ET_I64 : arg->type.elem;
    TirType scalar = {.elem = e}, tile = arg->type;
    TirValue *off = emit(rw, TIR_BINARY, BIN_MUL, cast_to(rw, n, e), cast_to(rw, inc, e),
                         &scalar);
    tile.elem = e, tile.pointee = ET_VOID;
    if (arg->type.rank)
        off = emit(rw, TIR_SPLAT, 0, off, NULL, &tile);
    return emit(rw, ptr ? TIR_ADDPTR : TIR_BINARY, BIN_ADD, init, off, &arg->type);
}

static int result_used(TirKernel *k, const TirValue *res)
{
    int *uses = arena_alloc(k->arena, sizeof(int) * (size_t)(k->next_value_id + 1));
    if (!uses)
        return 1;
    for (int i = 0; i <= k->next_value_id; i++)
        uses[i] = 0;
    tir_count_uses(k->body, uses);
    return uses[res->id] != 0;
}

static void rewrite_loop(TirKernel *k, TirOp *loop)
{
    TirBlock *body = loop->regions[0];
    int64_t step;
    if (!const_int(loop->ops[2], &step) || step <= 0 || !body->last ||
        body->last->code != TIR_YIELD || exits_loop(body))
        return;
    Rewrite rw = {.k = k, .loop = loop, .at = body->first};
    TirValue *n = NULL;
    for (int i = 0; i < body->nargs - 1; i++) {
        TirValue *arg = body->args[1 + i], *init = loop->ops[3 + i];
        TirValue *inc = step_amount(arg, body->last->ops[i]);
        int used_after = result_used(k, loop->results[i]);
        /* a scalar that stays carried gains nothing from also being recomputed */
        if (!inc || (used_after && !arg->type.rank) || !(inc = invariant(&rw, inc, 0)))
            continue;
        if (!n)
            n = iteration(&rw, step);
        tir_replace_uses(body, arg, advanced(&rw, arg, init, n, inc));
        if (!used_after) {
            tir_for_remove_carried(loop, i);
            i--;
        }
    }
}

static void visit(TirKernel *k, TirBlock *b)
{
    for (TirOp *op = b->first; op; op = op->next) {
        for (int r = 0; r < op->nregions; r++)
            visit(k, op->regions[r]);
        if (op->code == TIR_FOR)
            rewrite_loop(k, op);
    }
}

int pass_induction(TirKernel *k, const struct Target *t, Diags *d)
{
    (void)t, (void)d;
    visit(k, k->body);
    return 0;
}
