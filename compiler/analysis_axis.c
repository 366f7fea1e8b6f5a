/* analysis_axis.c: the axis analysis of analysis_axis.h, one forward walk over the kernel
 * with a transfer rule per opcode (after Triton's AxisInfo visitors). Values nothing is
 * known about get contiguity, divisibility and constancy 1; loop-carried values too, but a
 * for loop's induction variable divides by what both its start and step divide by. */
#include <string.h>
#include "analysis_axis.h"

typedef struct Ax {
    const TirKernel *k;
    AxisInfo *tab;
    int64_t *assumed_div; /* by value id: a divisor an assume() states (0: none) */
    unsigned char *assumed_one; /* by value id: assume(x == 1) holds */
} Ax;

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t gcd64(int64_t a, int64_t b) { return min64(a, b); } /* powers of two */

static int64_t pow2_of(int64_t v)
{
    if (v == 0)
        return AXIS_MAX_DIV;
    uint64_t u = (uint64_t)v;
    return (int64_t)min64((int64_t)(u & (~u + 1)), AXIS_MAX_DIV);
}

static int rank_of(const TirValue *v) { return v->type.rank; }
static AxisInfo *at(Ax *a, const TirValue *v) { return &a->tab[v->id]; }

static void set_unknown(Ax *a, const TirValue *v)
{
    AxisInfo *x = at(a, v);
    for (int d = 0; d < TIR_MAX_RANK; d++)
        x->contig[d] = x->div[d] = x->cnst[d] = 1;
}

/* Divisibility of x's values at multiples of c along d: its runs start there only when
 * they are no longer than c. */
static int64_t div_at(const AxisInfo *x, int d, int64_t c)
{
    return x->contig[d] <= c ? x->div[d] : 1;
}

static void leaf(Ax *a, TirOp *op)
{
    TirValue *v = op->results[0];
    AxisInfo *x = at(a, v);
    set_unknown(a, v);
    if (op->code == TIR_CONST && et_is_int(v->type.elem))
        x->div[0] = pow2_of(op->attr.i);
    else if (op->code == TIR_PARAM) {
        const TirParam *p = &a->k->params[op->attr.i];
        if (p->type.elem == ET_PTR)
            x->div[0] = p->div > et_bytes(p->type.pointee) ? p->div : et_bytes(p->type.pointee);
        else if (p->div > 1)
            x->div[0] = p->div;
    } else if (op->code == TIR_ARANGE) {
        x->contig[0] = op->attr.i2 - op->attr.i;
        x->div[0] = pow2_of(op->attr.i);
    }
}

static void splat(Ax *a, TirOp *op)
{
    const AxisInfo *s = at(a, op->ops[0]);
    TirValue *v = op->results[0];
    AxisInfo *x = at(a, v);
    set_unknown(a, v);
    for (int d = 0; d < rank_of(v); d++) {
        x->div[d] = s->div[0];
        x->cnst[d] = v->type.shape[d];
    }
}

/* What divides every element of a value of rank n with facts s (not only its runs' starts). */
static int64_t div_every(const AxisInfo *s, int n)
{
    int64_t every = n ? AXIS_MAX_DIV : s->div[0];
    for (int d = 0; d < n; d++)
        every = min64(every, div_at(s, d, 1));
    return every;
}

static void expand_dims(Ax *a, TirOp *op)
{
    const TirValue *src = op->ops[0];
    AxisInfo s = *at(a, src), *x = at(a, op->results[0]);
    int axis = (int)op->attr.i, n = rank_of(src);
    int64_t every = div_every(&s, n);
    set_unknown(a, op->results[0]);
    for (int d = 0, j = 0; d <= n; d++) {
        if (d == axis) {
            x->div[d] = every;
            continue;
        }
        x->contig[d] = s.contig[j], x->div[d] = s.div[j], x->cnst[d] = s.cnst[j];
        j++;
    }
}

static void broadcast(Ax *a, TirOp *op)
{
    const TirValue *src = op->ops[0], *v = op->results[0];
    AxisInfo *x = at(a, v);
    *x = *at(a, src);
    for (int d = 0; d < rank_of(v); d++)
        if (src->type.shape[d] == 1 && v->type.shape[d] > 1) {
            x->contig[d] = 1;
            x->cnst[d] = v->type.shape[d];
        }
}

static void trans(Ax *a, TirOp *op)
{
    AxisInfo s = *at(a, op->ops[0]), *x = at(a, op->results[0]);
    for (int d = 0; d < 2; d++)
        x->contig[d] = s.contig[1 - d], x->div[d] = s.div[1 - d], x->cnst[d] = s.cnst[1 - d];
}

static void copy(Ax *a, TirOp *op) { *at(a, op->results[0]) = *at(a, op->ops[0]); }

/* a + b (scale: bytes per element of b when a is a pointer), or a - b. */
static void add(Ax *a, TirOp *op, int64_t scale, int sub)
{
    AxisInfo p = *at(a, op->ops[0]), q = *at(a, op->ops[1]), *x = at(a, op->results[0]);
    int n = rank_of(op->results[0]);
    for (int d = 0; d < (n ? n : 1); d++) {
        int64_t c = gcd64(p.contig[d], q.cnst[d]);
        if (!sub)
            c = max64(c, gcd64(p.cnst[d], q.contig[d]));
        x->contig[d] = c;
        x->div[d] = gcd64(div_at(&p, d, c), min64(div_at(&q, d, c) * scale, AXIS_MAX_DIV));
        x->cnst[d] = gcd64(p.cnst[d], q.cnst[d]);
    }
}

/* The value v is a tile of (through splats, broadcasts and expand_dims), or v. */
static const TirValue *splatted(const TirValue *v)
{
    while (v->def && (v->def->code == TIR_SPLAT || v->def->code == TIR_BROADCAST ||
                      v->def->code == TIR_EXPAND_DIMS))
        v = v->def->ops[0];
    return v;
}

/* The integer constant v is (or is a tile of), in *c. */
static int const_of(const TirValue *v, int64_t *c)
{
    v = splatted(v);
    if (!v->def || v->def->code != TIR_CONST || !et_is_int(v->type.elem))
        return 0;
    *c = v->def->attr.i;
    return 1;
}

/* Whether v is the integer 1 (a constant or a value assume() says is 1, or a tile of it). */
static int is_one(const Ax *a, const TirValue *v)
{
    int64_t c;
    return a->assumed_one[splatted(v)->id] || (const_of(v, &c) && c == 1);
}

static void mul(Ax *a, TirOp *op)
{
    if (is_one(a, op->ops[0]) || is_one(a, op->ops[1])) { /* x * 1: x's facts */
        *at(a, op->results[0]) = *at(a, op->ops[is_one(a, op->ops[0]) ? 1 : 0]);
        return;
    }
    AxisInfo p = *at(a, op->ops[0]), q = *at(a, op->ops[1]), *x = at(a, op->results[0]);
    int n = rank_of(op->results[0]);
    for (int d = 0; d < (n ? n : 1); d++) {
        x->contig[d] = 1;
        x->div[d] = min64(div_at(&p, d, 1) * div_at(&q, d, 1), AXIS_MAX_DIV);
        x->cnst[d] = gcd64(p.cnst[d], q.cnst[d]);
    }
}

/* Any elementwise op: runs of equal operands give runs of equal results. */
static void elementwise(Ax *a, TirOp *op)
{
    TirValue *v = op->results[0];
    AxisInfo *x = at(a, v);
    int64_t cn[TIR_MAX_RANK];
    for (int d = 0; d < TIR_MAX_RANK; d++) {
        cn[d] = rank_of(v) ? v->type.shape[d] : 1;
        for (int i = 0; i < op->nops; i++)
            cn[d] = gcd64(cn[d], at(a, op->ops[i])->cnst[d]);
    }
    set_unknown(a, v);
    for (int d = 0; d < rank_of(v); d++)
        x->cnst[d] = max64(cn[d], 1);
}

/* Runs where x < y (or x >= y) cannot change: x consecutive from a multiple of g, y a
 * constant multiple of g. */
static int64_t cmp_runs(const AxisInfo *x, const AxisInfo *y, int d)
{
    int64_t g = min64(x->contig[d], min64(x->div[d], div_at(y, d, 1)));
    return y->cnst[d] >= g ? g : 1;
}

static void cmp(Ax *a, TirOp *op)
{
    elementwise(a, op);
    const AxisInfo *p = at(a, op->ops[0]), *q = at(a, op->ops[1]);
    AxisInfo *x = at(a, op->results[0]);
    TirCmp c = (TirCmp)op->attr.i;
    for (int d = 0; d < rank_of(op->results[0]); d++) {
        if (c == CMP_LT || c == CMP_GE)
            x->cnst[d] = max64(x->cnst[d], cmp_runs(p, q, d));
        if (c == CMP_GT || c == CMP_LE)
            x->cnst[d] = max64(x->cnst[d], cmp_runs(q, p, d));
    }
}

/* x / c or x >> s (c = 2^s) for a constant power of two: every element a multiple of d >= c
 * is divided exactly (whatever its sign), into a multiple of d / c (K / 2 of a K multiple
 * of 16: a row of packed 4-bit weights starts at a multiple of 8 bytes). */
static void divide(Ax *a, TirOp *op, int shift)
{
    AxisInfo p = *at(a, op->ops[0]);
    int64_t c;
    elementwise(a, op);
    if (!const_of(op->ops[1], &c) || c < 0 || (shift ? c > 62 : c < 1 || (c & (c - 1))))
        return;
    c = shift ? (int64_t)1 << c : c;
    AxisInfo *x = at(a, op->results[0]);
    int n = rank_of(op->results[0]);
    int64_t every = div_every(&p, n);
    for (int d = 0; d < (n ? n : 1); d++)
        x->div[d] = every >= c ? every / c : 1;
}

static void binary(Ax *a, TirOp *op)
{
    if (!et_is_int(op->results[0]->type.elem)) {
        elementwise(a, op);
        return;
    }
    switch ((TirBinOp)op->attr.i) {
    case BIN_ADD: add(a, op, 1, 0); break;
    case BIN_SUB: add(a, op, 1, 1); break;
    case BIN_MUL: mul(a, op); break;
    case BIN_DIV: divide(a, op, 0); break;
    case BIN_SHR: divide(a, op, 1); break;
    default: elementwise(a, op); break;
    }
}

/* Element bytes of a pointer; a number counts in bytes. */
static int step_bytes(const TirValue *v) { return v->type.elem == ET_PTR ? et_bytes(v->type.pointee) : 1; }

/* An address as a number, a number as an address, or a pointer to other elements: the same
 * bytes, so divisibility and constancy carry; contiguity (in elements) only where both sides
 * count the same step. */
static void address_cast(Ax *a, TirOp *op)
{
    AxisInfo src = *at(a, op->ops[0]), *x = at(a, op->results[0]);
    *x = src;
    if (step_bytes(op->ops[0]) == step_bytes(op->results[0]))
        return;
    for (int d = 0; d < TIR_MAX_RANK; d++) {
        x->div[d] = div_at(&src, d, 1);
        x->contig[d] = 1;
    }
}

static void cast(Ax *a, TirOp *op)
{
    ElemKind from = op->ops[0]->type.elem, to = op->results[0]->type.elem;
    if (from == ET_PTR || to == ET_PTR)
        address_cast(a, op);
    else if (et_is_int(from) && et_is_int(to))
        copy(a, op);
    else
        elementwise(a, op);
}

static void walk_block(Ax *a, const TirBlock *b);

static void block_args_unknown(Ax *a, const TirBlock *b)
{
    for (int i = 0; i < b->nargs; i++)
        set_unknown(a, b->args[i]);
}

static void control(Ax *a, TirOp *op)
{
    for (int r = 0; r < op->nregions; r++)
        block_args_unknown(a, op->regions[r]);
    if (op->code == TIR_FOR) {
        int64_t lo = at(a, op->ops[0])->div[0], step = at(a, op->ops[2])->div[0];
        at(a, op->regions[0]->args[0])->div[0] = gcd64(lo, step);
    }
    for (int r = 0; r < op->nregions; r++)
        walk_block(a, op->regions[r]);
    for (int i = 0; i < op->nres; i++)
        set_unknown(a, op->results[i]);
}

/* multiple_of / max_contiguous: the operand's facts, raised to what the hint states */
static void hint(Ax *a, TirOp *op)
{
    AxisInfo *x = at(a, op->results[0]);
    *x = *at(a, op->ops[0]);
    for (int d = 0; d < (rank_of(op->ops[0]) ? rank_of(op->ops[0]) : 1); d++) {
        int64_t v = (int64_t)1 << ((op->attr.i2 >> (5 * d)) & 31);
        if (op->attr.i == HINT_MULTIPLE_OF)
            x->div[d] = max64(x->div[d], v);
        else
            x->contig[d] = max64(x->contig[d], v);
    }
}

/* The value x of `assume(x % C == 0)` (C a power of two) and C; NULL otherwise. */
static const TirValue *assumed_multiple(const TirOp *as, int64_t *c)
{
    const TirOp *eq = as->ops[0]->def, *rem, *k, *zero;
    if (!eq || eq->code != TIR_CMP || eq->attr.i != CMP_EQ || !(rem = eq->ops[0]->def) ||
        rem->code != TIR_BINARY || rem->attr.i != BIN_REM || !(zero = eq->ops[1]->def) ||
        zero->code != TIR_CONST || zero->attr.i != 0 || !(k = rem->ops[1]->def) ||
        k->code != TIR_CONST || k->attr.i <= 0 || (k->attr.i & (k->attr.i - 1)))
        return NULL;
    *c = k->attr.i;
    return rem->ops[0];
}

/* The integer x of `assume(x == 1)` (or `1 == x`); NULL otherwise. */
static const TirValue *assumed_one(const TirOp *as)
{
    const TirOp *eq = as->ops[0]->def;
    if (!eq || eq->code != TIR_CMP || eq->attr.i != CMP_EQ)
        return NULL;
    for (int i = 0; i < 2; i++) {
        const TirOp *k = eq->ops[i]->def;
        const TirValue *x = eq->ops[1 - i];
        if (k && k->code == TIR_CONST && k->attr.i == 1 && et_is_int(x->type.elem) &&
            !x->type.rank)
            return x;
    }
    return NULL;
}

static void collect_assumes(Ax *a, const TirBlock *b)
{
    for (const TirOp *op = b ? b->first : NULL; op; op = op->next) {
        int64_t c;
        const TirValue *x = op->code == TIR_ASSUME ? assumed_multiple(op, &c) : NULL;
        const TirValue *one = op->code == TIR_ASSUME ? assumed_one(op) : NULL;
        if (one)
            a->assumed_one[one->id] = 1;
        if (x && x->type.rank == 0)
            a->assumed_div[x->id] = max64(a->assumed_div[x->id], c);
        for (int r = 0; r < op->nregions; r++)
            collect_assumes(a, op->regions[r]);
    }
}

static void op_rule(Ax *a, TirOp *op)
{
    switch (op->code) {
    case TIR_HINT: hint(a, op); break;
    case TIR_CONST: case TIR_PARAM: case TIR_PROGRAM_ID: case TIR_NUM_PROGRAMS:
    case TIR_ARANGE: leaf(a, op); break;
    case TIR_SPLAT: splat(a, op); break;
    case TIR_EXPAND_DIMS: expand_dims(a, op); break;
    case TIR_BROADCAST: broadcast(a, op); break;
    case TIR_TRANS: trans(a, op); break;
    case TIR_CONVERT_LAYOUT: copy(a, op); break;
    case TIR_BINARY: binary(a, op); break;
    case TIR_CMP: cmp(a, op); break;
    case TIR_CAST: cast(a, op); break;
    case TIR_UNARY: case TIR_SELECT: case TIR_FMA: elementwise(a, op); break;
    case TIR_ADDPTR: add(a, op, et_bytes(op->ops[0]->type.pointee), 0); break;
    case TIR_FOR: case TIR_WHILE: case TIR_IF: control(a, op); break;
    default:
        for (int i = 0; i < op->nres; i++)
            set_unknown(a, op->results[i]);
        break;
    }
}

static void walk_block(Ax *a, const TirBlock *b)
{
    for (TirOp *op = b->first; op; op = op->next) {
        op_rule(a, op);
        for (int i = 0; i < op->nres; i++)
            if (a->assumed_div[op->results[i]->id])
                at(a, op->results[i])->div[0] = max64(at(a, op->results[i])->div[0],
                                                      a->assumed_div[op->results[i]->id]);
    }
}

AxisInfo *axis_analyze(const TirKernel *k)
{
    size_t n = (size_t)(k->next_value_id + 1);
    Ax a = {k, arena_alloc(k->arena, sizeof(AxisInfo) * n),
            arena_alloc(k->arena, sizeof(int64_t) * n), arena_alloc(k->arena, n)};
    if (!a.tab || !a.assumed_div || !a.assumed_one)
        return NULL;
    memset(a.assumed_div, 0, sizeof(int64_t) * n);
    memset(a.assumed_one, 0, n);
    collect_assumes(&a, k->body);
    for (int i = 0; i <= k->next_value_id; i++)
        for (int d = 0; d < TIR_MAX_RANK; d++)
            a.tab[i].contig[d] = a.tab[i].div[d] = a.tab[i].cnst[d] = 1;
    walk_block(&a, k->body);
    return a.tab;
}
