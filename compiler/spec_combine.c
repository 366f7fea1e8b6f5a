/* spec_combine.c: reduce(x, axis, combine_fn) and associative_scan(x, axis, combine_fn) with a
 * helper as the combine function (spec.h), built from shape ops and calls of the helper inlined
 * on whole tiles, so they run on every backend without an IR op of their own; the same with an
 * operator (+, *) for cumsum and cumprod along axes too long for one thread to hold, and flip
 * along such axes (a flip of each digit of the position). The axis goes last and the other dims are flattened: x [M, n]. A reduction
 * is a tree: log2(n) combines of the even and odd elements. A scan is the odd-even recursion:
 * the scan of the pairs' combines gives the prefixes ending at odd positions, and each even
 * element is the exclusive prefix before it combined with it (2 log2(n) combines deep, about
 * 2n in all); a reverse scan mirrors it (suffixes from even positions, each odd element
 * combined with the suffix after it). The function must be associative; it need not be
 * commutative: operands keep their index order. Tiles are spread over the threads as usual, so
 * the shape ops move data between threads where they must (layout conversions). A tuple of k
 * tiles goes through the same steps member by member, the helper taking and giving k values. */
#include <string.h>
#include "spec.h"

typedef struct Combine {
    Spec *s;
    const Func *f; /* the helper, or NULL: the operator op */
    OpKind op;
    int k; /* members of each operand: a tuple's, or 1 */
    ElemKind et[SPEC_TUPLE_MAX];
    SrcLoc at;
} Combine;

/* x [M, n] -> its even and odd elements along the last dim, [M, n / 2] each. */
static void halves(Spec *s, TirValue *x, TirValue **even, TirValue **odd, SrcLoc at)
{
    int m = x->type.shape[0], n = x->type.shape[1];
    TirValue *p = spec_reshape(s, x, 3, (const int[]){m, n / 2, 2}, at);
    TirType t = tir_type_make(x->type.elem, 2, (const int[]){m, n / 2});
    TirType types[2] = {t, t};
    TirOp *op = tir_op_append(s->k, s->block, TIR_SPLIT, at, &p, 1, types, 2);
    *even = op->results[0];
    *odd = op->results[1];
}

/* a, b [M, k] -> [M, 2k]: a at even positions, b at odd. */
static TirValue *interleave(Spec *s, TirValue *a, TirValue *b, SrcLoc at)
{
    int m = a->type.shape[0], k = a->type.shape[1];
    TirValue *ops[2] = {a, b};
    TirValue *j = spec_emit(s, TIR_JOIN, at, ops, 2, tir_type_make(a->type.elem, 3, (const int[]){m, k, 2}));
    return spec_reshape(s, j, 2, (const int[]){m, 2 * k}, at);
}

/* What a helper returned, for a diagnostic: a value by its element type alone (the helper
 * runs on rows of the compiler's making, whose shape would only puzzle), else its kind. */
static const char *returned(Combine *c, const Val *r)
{
    return val_is_value(r) ? et_name(val_elem(r)) : val_type_str(c->s, r);
}

/* The helper's results as k values, or NULL after a diagnostic. */
static const Val *results(Combine *c, const Val *r)
{
    int n = r->kind == V_TUPLE ? r->nitems : r->kind == V_VOID ? 0 : 1;
    if (n == c->k)
        return r->kind == V_TUPLE ? r->items : r;
    if (c->k == 1)
        diag_error(c->s->diags, c->at, "combine function '%s' must return one value of its "
                   "operands' type (%s), got %s", c->f->name, et_name(c->et[0]), returned(c, r));
    else
        diag_error(c->s->diags, c->at, "combine function '%s' must return %d values (one for each "
                   "member of the tuple), got %s", c->f->name, c->k,
                   n == 1 ? "one" : arena_printf(c->s->arena, "%d", n));
    return NULL;
}

/* Result i of the helper, checked to have member i's type and a's shape (or to broadcast). */
static TirValue *result(Combine *c, const Val *r, int i, const TirValue *a)
{
    if (!val_is_value(r) || val_elem(r) != c->et[i]) {
        if (c->k == 1)
            diag_error(c->s->diags, c->at, "combine function '%s' must return one value of its "
                       "operands' type (%s), got %s", c->f->name, et_name(c->et[0]), returned(c, r));
        else
            diag_error(c->s->diags, c->at, "combine function '%s' must return member %d's type (%s) "
                       "as its result %d, got %s", c->f->name, i + 1, et_name(c->et[i]), i + 1,
                       returned(c, r));
        return NULL;
    }
    if (val_rank(r) && memcmp(val_shape(r), a->type.shape, sizeof(int) * 2)) {
        diag_error(c->s->diags, c->at, "combine function '%s' must work element by element (a "
                   "result of its operands' shape), got %s", c->f->name, val_type_str(c->s, r));
        return NULL;
    }
    return spec_materialize(c->s, *r, c->et[i], 2, a->type.shape, c->at);
}

/* out = combine_fn(a..., b...) (or a op b), member by member; 0 after a diagnostic. */
static int apply(Combine *c, TirValue *const *a, TirValue *const *b, TirValue **out)
{
    if (!c->f) {
        Val r = spec_binary(c->s, c->op, val_tile(a[0]), val_tile(b[0]), c->at);
        out[0] = r.kind == V_ERROR ? NULL : spec_materialize(c->s, r, c->et[0], 2, a[0]->type.shape, c->at);
        return out[0] != NULL;
    }
    Val args[2 * SPEC_TUPLE_MAX];
    for (int i = 0; i < c->k; i++)
        args[i] = val_tile(a[i]), args[c->k + i] = val_tile(b[i]);
    Val r = spec_apply_helper(c->s, c->f, args, 2 * c->k, c->at);
    const Val *rs = r.kind == V_ERROR ? NULL : results(c, &r);
    if (!rs)
        return 0;
    for (int i = 0; i < c->k; i++)
        if (!(out[i] = result(c, &rs[i], i, a[i])))
            return 0;
    return 1;
}

static int check_x(Spec *s, TirValue *x, const char *what, SrcLoc at)
{
    if (x->type.elem == ET_PTR) {
        diag_error(s->diags, at, "%s() of pointers is not supported", what);
        return 0;
    }
    return 1;
}

static Combine combine_new(Spec *s, TirValue *const *x, int k, const Func *f, SrcLoc at)
{
    Combine c = {s, f, OP_ADD, k, {ET_I32}, at};
    for (int i = 0; i < k; i++)
        c.et[i] = x[i]->type.elem;
    return c;
}

static int check_xs(Spec *s, TirValue *const *x, int k, const char *what, SrcLoc at)
{
    for (int i = 0; i < k; i++)
        if (!check_x(s, x[i], what, at))
            return 0;
    return 1;
}

/* The k results: one value, or a tuple of them. */
static Val tuple_of(Spec *s, TirValue *const *r, int k)
{
    if (k == 1)
        return val_tile(r[0]);
    Val t = {.kind = V_TUPLE, .nitems = k};
    t.items = arena_alloc(s->arena, sizeof(Val) * (size_t)k);
    if (!t.items)
        return val_error();
    for (int i = 0; i < k; i++)
        t.items[i] = val_tile(r[i]);
    return t;
}

/* The reduction r [M, 1] in its final shape: x's other dims (keep: the reduced ones as
 * 1), or a scalar. */
static TirValue *reduced_shape(Spec *s, TirValue *r, const TirType *like, int axis, int keep, SrcLoc at)
{
    int shape[TIR_MAX_RANK], n = 0, whole = axis < 0;
    for (int i = 0; i < like->rank; i++)
        if (keep || (!whole && i != axis))
            shape[n++] = keep && (whole || i == axis) ? 1 : like->shape[i];
    if (n > 0)
        return spec_reshape(s, r, n, shape, at);
    TirValue *one = spec_reshape(s, r, 1, (const int[]){1}, at); /* the one element of [1] */
    TirValue *v = spec_emit(s, TIR_REDUCE, at, &one, 1, tir_type_make(r->type.elem, 0, NULL));
    v->def->attr.i = RED_MAX;
    v->def->attr.i2 = 0;
    return v;
}

static Val reduce_tree(Combine *c, TirValue *const *x, int axis, int keep);

Val spec_reduce_with(Spec *s, TirValue *const *x, int k, int axis, const Func *f, int keep, SrcLoc at)
{
    Combine c = combine_new(s, x, k, f, at);
    if (!check_xs(s, x, k, "reduce", at))
        return val_error();
    return reduce_tree(&c, x, axis, keep);
}

Val spec_reduce_op(Spec *s, TirValue *x, int axis, OpKind op, int keep, SrcLoc at)
{
    Combine c = combine_new(s, &x, 1, NULL, at);
    c.op = op;
    return reduce_tree(&c, &x, axis, keep);
}

/* The tree of combines of x's k members along axis (-1: every element). */
static Val reduce_tree(Combine *c, TirValue *const *x, int axis, int keep)
{
    Spec *s = c->s;
    SrcLoc at = c->at;
    int k = c->k, numel = tir_type_numel(&x[0]->type);
    TirValue *r[SPEC_TUPLE_MAX], *a[SPEC_TUPLE_MAX], *b[SPEC_TUPLE_MAX];
    for (int i = 0; i < k; i++)
        r[i] = axis < 0 ? spec_reshape(s, x[i], 2, (const int[]){1, numel}, at) : spec_to_rows(s, x[i], axis, at);
    while (r[0]->type.shape[1] > 1) {
        for (int i = 0; i < k; i++)
            halves(s, r[i], &a[i], &b[i], at);
        if (!apply(c, a, b, r))
            return val_error();
    }
    for (int i = 0; i < k; i++)
        r[i] = reduced_shape(s, r[i], &x[0]->type, axis, keep, at);
    return tuple_of(s, r, k);
}

/* A bool [M, n / 2] tile: true at position `at` of each row. */
static TirValue *position_is(Combine *c, int m, int half, int at)
{
    TirValue *idx = spec_emit(c->s, TIR_ARANGE, c->at, NULL, 0,
                              tir_type_make(ET_I32, 1, (const int[]){half}));
    idx->def->attr.i = 0, idx->def->attr.i2 = half;
    Val is = spec_binary(c->s, OP_EQ, val_tile(idx), val_const_int(ET_I32, at, 1), c->at);
    return spec_materialize(c->s, is, ET_BOOL, 2, (const int[]){m, half}, c->at);
}

/* The inclusive scan of the members x [M, n] and their exclusive one (element 0 of each
 * row: any value); `reverse`: suffixes instead, the exclusive one's last element any value. */
static int scan_rows(Combine *c, TirValue *const *x, int reverse, TirValue **incl, TirValue **excl)
{
    int k = c->k, m = x[0]->type.shape[0], n = x[0]->type.shape[1];
    if (n == 1) {
        for (int i = 0; i < k; i++)
            incl[i] = excl[i] = x[i];
        return 1;
    }
    TirValue *a[SPEC_TUPLE_MAX], *b[SPEC_TUPLE_MAX], *pairs[SPEC_TUPLE_MAX];
    TirValue *t[SPEC_TUPLE_MAX], *et[SPEC_TUPLE_MAX], *joined[SPEC_TUPLE_MAX];
    for (int i = 0; i < k; i++)
        halves(c->s, x[i], &a[i], &b[i], c->at);
    if (!apply(c, a, b, pairs) || !scan_rows(c, pairs, reverse, t, et))
        return 0;
    /* forward: the prefix before each even element, then it; reverse: each odd element,
     * then the suffix after it */
    if (!(reverse ? apply(c, b, et, joined) : apply(c, et, a, joined)))
        return 0;
    TirValue *edge = position_is(c, m, n / 2, reverse ? n / 2 - 1 : 0);
    if (!edge)
        return 0;
    for (int i = 0; i < k; i++) {
        TirValue *sel[3] = {edge, reverse ? b[i] : a[i], joined[i]};
        TirValue *own = spec_emit(c->s, TIR_SELECT, c->at, sel, 3, a[i]->type);
        incl[i] = reverse ? interleave(c->s, t[i], own, c->at) : interleave(c->s, own, t[i], c->at);
        excl[i] = reverse ? interleave(c->s, own, et[i], c->at) : interleave(c->s, et[i], own, c->at);
    }
    return 1;
}

static Val scan_along(Combine *c, TirValue *const *x, int axis, int reverse)
{
    TirValue *rows[SPEC_TUPLE_MAX], *incl[SPEC_TUPLE_MAX], *excl[SPEC_TUPLE_MAX];
    for (int i = 0; i < c->k; i++)
        rows[i] = spec_to_rows(c->s, x[i], axis, c->at);
    if (!scan_rows(c, rows, reverse, incl, excl))
        return val_error();
    for (int i = 0; i < c->k; i++)
        incl[i] = spec_from_rows(c->s, incl[i], &x[i]->type, axis, c->at);
    return tuple_of(c->s, incl, c->k);
}

Val spec_scan_with(Spec *s, TirValue *const *x, int k, int axis, const Func *f, int reverse, SrcLoc at)
{
    Combine c = combine_new(s, x, k, f, at);
    if (!check_xs(s, x, k, "associative_scan", at))
        return val_error();
    return scan_along(&c, x, axis, reverse);
}

int spec_axis_in_thread(const Spec *s, const TirValue *x, int axis)
{
    if (s->k->threads_per_warp == 1) /* the host target: one thread owns whole tiles anyway */
        return 1;
    int n = x->type.shape[axis], rest = tir_type_numel(&x->type) / n;
    int threads = s->k->threads_per_warp * (s->k->num_warps > 0 ? s->k->num_warps : 1);
    return (long)n * (rest > threads ? rest / threads : 1) <= SPEC_IN_THREAD_AXIS;
}

Val spec_scan_op(Spec *s, TirValue *x, int axis, OpKind op, int reverse, SrcLoc at)
{
    Combine c = combine_new(s, &x, 1, NULL, at);
    c.op = op;
    return scan_along(&c, &x, axis, reverse);
}

/* flip of x [M, n]: viewed as [M, f1, .., fk] (factors of at most SPEC_IN_THREAD_AXIS), n - 1 - p
 * reverses every digit of p, so each dim is flipped in turn by an in-thread TIR_FLIP (the
 * layout pass moves the data between threads in between). NULL when n needs more than
 * TIR_MAX_RANK - 1 factors. */
static TirValue *flip_rows(Spec *s, TirValue *x, SrcLoc at)
{
    int shape[TIR_MAX_RANK] = {x->type.shape[0]}, rank = 1;
    for (int n = x->type.shape[1]; n > 1; n /= SPEC_IN_THREAD_AXIS) {
        if (rank == TIR_MAX_RANK)
            return NULL;
        shape[rank++] = n < SPEC_IN_THREAD_AXIS ? n : SPEC_IN_THREAD_AXIS;
    }
    TirValue *v = spec_reshape(s, x, rank, shape, at);
    for (int d = 1; d < rank; d++) {
        v = spec_emit(s, TIR_FLIP, at, &v, 1, v->type);
        v->def->attr.i2 = d;
    }
    return spec_reshape(s, v, 2, x->type.shape, at);
}

Val spec_flip_rows(Spec *s, TirValue *x, int axis, SrcLoc at)
{
    TirValue *r = flip_rows(s, spec_to_rows(s, x, axis, at), at);
    if (!r) {
        diag_error(s->diags, at, "flip() along a dim of %d elements: at most %d",
                   x->type.shape[axis], SPEC_IN_THREAD_AXIS * SPEC_IN_THREAD_AXIS * SPEC_IN_THREAD_AXIS);
        return val_error();
    }
    return val_tile(spec_from_rows(s, r, &x->type, axis, at));
}
