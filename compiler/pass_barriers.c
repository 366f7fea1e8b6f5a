/* pass_barriers.c: places TIR_BARRIER ops. Walking the kernel in program order, it keeps the
 * shared-memory byte ranges read and written since the last barrier; an access that overlaps
 * a pending one where either writes gets a barrier before it, which clears the pending set.
 * Loops are walked until the state at their head stops growing (what the end of an iteration
 * leaves pending meets the next iteration's first accesses); an if's branches merge. Async
 * copies write their buffer when issued (so a pending read of it is waited for) and again when
 * a wait lands them. No op synchronizes inside its own lowering: every exchange through shared
 * memory is one of these ops. */
#include <string.h>
#include "passes.h"
#include "target.h"

enum { MAX_PENDING = 64 };

typedef struct Range {
    int lo, hi, write;
    int ring; /* a ring write of the pipeliner (another stage than this iteration reads) */
} Range;

typedef struct State {
    Range r[MAX_PENDING];
    int n;
} State;

typedef struct BP {
    TirKernel *k;
    const Target *t;
    Range async_dst[MAX_PENDING]; /* every async copy's destination */
    int nasync;
} BP;

static void add(State *s, Range r)
{
    for (int i = 0; i < s->n; i++)
        if (s->r[i].lo == r.lo && s->r[i].hi == r.hi && s->r[i].write == r.write)
            return;
    if (s->n < MAX_PENDING) {
        s->r[s->n++] = r;
        return;
    }
    s->r[0].lo = 0, s->r[0].hi = 1 << 30, s->r[0].write = 1; /* too many: everything */
    s->n = 1;
}

static void merge(State *into, const State *from)
{
    for (int i = 0; i < from->n; i++)
        add(into, from->r[i]);
}

static int conflicts(const State *s, Range r)
{
    for (int i = 0; i < s->n; i++)
        if (s->r[i].lo < r.hi && r.lo < s->r[i].hi && (s->r[i].write || r.write))
            return 1;
    return 0;
}

/* The bytes of buffer `index` of an alloc (all of them when the index is not a constant). */
static Range buffer_range(const TirValue *buf, const TirValue *index, int write)
{
    int base = (int)buf->def->attr.i, bytes = smem_buffer_bytes(buf);
    const TirOp *d = index ? index->def : NULL;
    if (!index)
        return (Range){base, base + bytes, write};
    if (d && d->code == TIR_CONST && d->attr.i >= 0 && d->attr.i < buf->type.buffers)
        return (Range){base + (int)d->attr.i * bytes, base + ((int)d->attr.i + 1) * bytes, write};
    return (Range){base, base + bytes * buf->type.buffers, write};
}

/* A ring copy of the pipeliner writes a stage other than every stage this iteration read,
 * and the iteration's first barrier ordered the reads of earlier iterations: pending reads
 * of its own buffer do not count. */
static int ring_conflicts(const State *s, Range r, Range whole)
{
    State t = {0};
    for (int i = 0; i < s->n; i++)
        if (s->r[i].write || s->r[i].hi <= whole.lo || s->r[i].lo >= whole.hi)
            t.r[t.n++] = s->r[i];
    return conflicts(&t, r);
}

static void barrier_before(BP *p, TirOp *op, State *s)
{
    tir_op_insert_before(p->k, op, TIR_BARRIER, op->loc, NULL, 0, NULL, 0);
    s->n = 0;
}

/* Whether a dot's read of r conflicts with what is pending. A dot that reads its operand's
 * buffer itself (mma fragments loaded K step by K step, lower_smem.c; again: the operand is
 * a local_load's result) reads it at the dot: ring writes since the local_load filled other
 * stages, so only other writes count. */
static int dot_conflicts(const State *s, Range r, int again)
{
    State t = {0};
    for (int i = 0; i < s->n; i++)
        if (!again || !s->r[i].ring)
            t.r[t.n++] = s->r[i];
    return conflicts(&t, r);
}

/* Both operands of a dot are read at the dot: one barrier before it covers both, and both
 * reads stay pending after it (a barrier placed for the second operand's read must not drop
 * the first's, or a later write to the first's buffer would race with the dot). */
static void dot_reads(BP *p, TirOp *op, State *s)
{
    Range r[2];
    int again[2], n = 0, need = 0;
    for (int i = 0; i < 2; i++) {
        const TirValue *x = op->ops[i];
        if (x->type.buffers > 0)
            r[n] = buffer_range(x, NULL, 0), again[n++] = 0;
        else if (x->def && x->def->code == TIR_LOCAL_LOAD)
            r[n] = buffer_range(x->def->ops[0], x->def->ops[1], 0), again[n++] = 1;
    }
    for (int i = 0; i < n; i++)
        need |= dot_conflicts(s, r[i], again[i]);
    if (need)
        barrier_before(p, op, s);
    for (int i = 0; i < n; i++)
        add(s, r[i]);
}

static void access(BP *p, TirOp *op, State *s, Range r)
{
    if (conflicts(s, r))
        barrier_before(p, op, s);
    add(s, r);
}

static void walk(BP *p, TirBlock *b, State *s);

static void walk_loop(BP *p, TirOp *op, State *s)
{
    State in = *s, out;
    for (int iter = 0; iter < 4; iter++) {
        out = in;
        for (int r = 0; r < op->nregions; r++)
            walk(p, op->regions[r], &out);
        State next = in;
        merge(&next, &out);
        if (next.n == in.n)
            break;
        in = next;
    }
    merge(s, &out);
}

static void walk_if(BP *p, TirOp *op, State *s)
{
    State a = *s, b = *s;
    walk(p, op->regions[0], &a);
    if (op->nregions > 1)
        walk(p, op->regions[1], &b);
    *s = a;
    merge(s, &b);
}

static void visit(BP *p, TirOp *op, State *s)
{
    switch (op->code) {
    case TIR_LOCAL_STORE: access(p, op, s, buffer_range(op->ops[0], op->ops[1], 1)); break;
    case TIR_LOCAL_LOAD: access(p, op, s, buffer_range(op->ops[0], op->ops[1], 0)); break;
    case TIR_ASYNC_COPY:
        if (op->attr.i == 1) {
            Range r = buffer_range(op->ops[0], op->ops[1], 1);
            if (ring_conflicts(s, r, r))
                barrier_before(p, op, s);
            r.ring = 1;
            add(s, r);
        } else {
            access(p, op, s, buffer_range(op->ops[0], op->ops[1], 1));
        }
        break;
    case TIR_ASYNC_WAIT:
        for (int i = 0; i < p->nasync; i++)
            add(s, p->async_dst[i]);
        break;
    case TIR_BARRIER: s->n = 0; break;
    case TIR_DOT: dot_reads(p, op, s); break;
    case TIR_FOR: case TIR_WHILE: walk_loop(p, op, s); break;
    case TIR_IF: walk_if(p, op, s); break;
    default: break;
    }
}

static void walk(BP *p, TirBlock *b, State *s)
{
    for (TirOp *op = b ? b->first : NULL, *next; op; op = next) {
        next = op->next;
        visit(p, op, s);
    }
}

static void find_async(BP *p, TirBlock *b)
{
    for (TirOp *op = b ? b->first : NULL; op; op = op->next) {
        if (op->code == TIR_ASYNC_COPY && p->nasync < MAX_PENDING)
            p->async_dst[p->nasync++] = buffer_range(op->ops[0], op->ops[1], 1);
        for (int r = 0; r < op->nregions; r++)
            find_async(p, op->regions[r]);
    }
}

int pass_barriers(TirKernel *k, const Target *t, Diags *d)
{
    BP p = {.k = k, .t = t};
    State s = {0};
    if (t->threads_per_warp <= 1)
        return 0; /* one thread: nothing to order */
    find_async(&p, k->body);
    walk(&p, k->body, &s);
    return 0;
}
