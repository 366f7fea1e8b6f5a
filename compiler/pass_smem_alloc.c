/* pass_smem_alloc.c: places every local_alloc buffer in the program's shared memory. Ops are
 * numbered in program order; a buffer lives from its local_alloc to its last use, and a use
 * inside a loop the buffer was allocated outside of keeps it alive to the loop's end, and one
 * allocated inside a loop lives to the end of the iteration; on targets with ldmatrix a use of
 * what a local_load read counts as a use of its buffer (the reads may be made there). Largest
 * first, each buffer takes the lowest 128-byte-aligned offset (1024 for wgmma's operands)
 * that overlaps no buffer alive at the same time. Where padded buffers (smem_layout.h) do not
 * fit the target's limit, they are swizzled instead and placed again. */
#include <stdlib.h>
#include "passes.h"
#include "smem_layout.h"
#include "target.h"

enum { ALIGN = 128, WGMMA_ALIGN = 1024 };

typedef struct Buf {
    TirOp *alloc;
    int first, last, bytes;
} Buf;

typedef struct Alloc {
    Buf *bufs; /* grows as buffers are found */
    int nbufs, cap, pos, overflow;
    int deferred_reads; /* the target may leave a local_load's reads to its user (ldmatrix) */
    int loop_end[64];   /* end position of each enclosing loop, innermost last */
    int loop_start[64];
    int nloops;
} Alloc;

int smem_buffer_bytes(const TirValue *buf)
{
    const TirLayout *l = buf->layout && buf->layout->kind == LAYOUT_SHARED ? buf->layout : NULL;
    return et_bytes(buf->type.elem) * smem_buffer_elems(l, buf->type.shape, buf->type.rank);
}

static int op_count(const TirBlock *b)
{
    int n = 0;
    for (const TirOp *op = b ? b->first : NULL; op; op = op->next) {
        n++;
        for (int r = 0; r < op->nregions; r++)
            n += op_count(op->regions[r]);
    }
    return n;
}

static Buf *find_buf(Alloc *a, const TirValue *v)
{
    for (int i = 0; i < a->nbufs; i++)
        if (a->bufs[i].alloc->results[0] == v)
            return &a->bufs[i];
    return NULL;
}

/* A use at the current position; inside loops entered after the buffer was made, the use
 * reaches the end of the outermost such loop (the next iteration may read it again). */
static void note_use(Alloc *a, Buf *b)
{
    int last = a->pos;
    for (int i = 0; i < a->nloops; i++)
        if (a->loop_start[i] > b->first && a->loop_end[i] > last) {
            last = a->loop_end[i];
            break;
        }
    if (last > b->last)
        b->last = last;
}

static void walk(Alloc *a, TirBlock *blk)
{
    for (TirOp *op = blk ? blk->first : NULL; op; op = op->next) {
        a->pos++;
        if (op->code == TIR_LOCAL_ALLOC) {
            if (a->nbufs == a->cap) {
                int cap = a->cap ? 2 * a->cap : 64;
                Buf *grown = realloc(a->bufs, sizeof *grown * (size_t)cap);
                if (!grown) {
                    a->overflow = 1;
                    continue;
                }
                a->bufs = grown, a->cap = cap;
            }
            /* a buffer made inside a loop keeps its place for the whole iteration: buffers
             * of one iteration then never share space, which would cost barriers */
            int end = a->nloops ? a->loop_end[a->nloops - 1] : a->pos;
            a->bufs[a->nbufs++] = (Buf){op, a->pos, end,
                                        smem_buffer_bytes(op->results[0]) * op->results[0]->type.buffers};
        }
        for (int i = 0; i < op->nops; i++) {
            const TirValue *v = op->ops[i];
            /* a local_load's reads may be left to its user (mma fragments, lower_smem.c) */
            if (a->deferred_reads && v->def && v->def->code == TIR_LOCAL_LOAD)
                v = v->def->ops[0];
            Buf *b = v->type.buffers > 0 ? find_buf(a, v) : NULL;
            if (b)
                note_use(a, b);
        }
        int loop = (op->code == TIR_FOR || op->code == TIR_WHILE) && a->nloops < 64;
        if (loop) {
            a->loop_start[a->nloops] = a->pos;
            a->loop_end[a->nloops++] = a->pos + op_count(op->regions[0]) +
                                       (op->nregions > 1 ? op_count(op->regions[1]) : 0);
        }
        for (int r = 0; r < op->nregions; r++)
            walk(a, op->regions[r]);
        if (loop)
            a->nloops--;
    }
}

static int by_size(const void *x, const void *y)
{
    const Buf *a = x, *b = y;
    return a->bytes != b->bytes ? (a->bytes < b->bytes ? 1 : -1) : (a->first > b->first) - (a->first < b->first);
}

static int lives_overlap(const Buf *a, const Buf *b) { return a->first <= b->last && b->first <= a->last; }

/* Buffers wgmma reads through descriptors start on the 1024 bytes its swizzle repeats over. */
static int alignment(const Buf *b)
{
    const TirLayout *l = b->alloc->results[0]->layout;
    return l && l->panel ? WGMMA_ALIGN : ALIGN;
}

/* The lowest aligned offset where b fits beside the already placed buffers it overlaps. */
static int place(Alloc *a, int n, Buf *b)
{
    int off = 0, moved = 1, align = alignment(b);
    while (moved) {
        moved = 0;
        for (int i = 0; i < n; i++) {
            Buf *o = &a->bufs[i];
            int lo = (int)o->alloc->attr.i, hi = lo + o->bytes;
            if (lives_overlap(o, b) && off < hi && lo < off + b->bytes) {
                off = (hi + align - 1) / align * align;
                moved = 1;
            }
        }
    }
    return off;
}

/* Places every buffer; k->smem_alloc_bytes gets the total. -1 when out of memory. */
static int allocate(TirKernel *k, const Target *t)
{
    Alloc *a = calloc(1, sizeof *a);
    if (!a)
        return -1;
    a->deferred_reads = t->ldmatrix != NULL;
    walk(a, k->body);
    if (a->nbufs)
        qsort(a->bufs, (size_t)a->nbufs, sizeof(Buf), by_size);
    int total = 0;
    for (int i = 0; i < a->nbufs; i++) {
        a->bufs[i].alloc->attr.i = place(a, i, &a->bufs[i]);
        if (a->bufs[i].alloc->attr.i + a->bufs[i].bytes > total)
            total = (int)a->bufs[i].alloc->attr.i + a->bufs[i].bytes;
    }
    k->smem_alloc_bytes = (total + ALIGN - 1) / ALIGN * ALIGN;
    int overflow = a->overflow;
    free(a->bufs);
    free(a);
    return overflow ? -1 : 0;
}

/* Gives every padded buffer the swizzled layout instead (smem_layout.h); the number changed,
 * -1 when out of memory. */
static int unpad(TirKernel *k, TirBlock *blk)
{
    int n = 0;
    for (TirOp *op = blk ? blk->first : NULL; op; op = op->next) {
        for (int r = 0; r < op->nregions; r++) {
            int m = unpad(k, op->regions[r]);
            if (m < 0)
                return -1;
            n += m;
        }
        TirValue *buf = op->code == TIR_LOCAL_ALLOC ? op->results[0] : NULL;
        if (!buf || !buf->layout || !buf->layout->pad)
            continue;
        if (!(buf->layout = smem_buffer_unpadded(k->arena, buf)))
            return -1;
        n++;
    }
    return n;
}

/* Padding is worth its space only where the space is there: past the target's limit, the
 * buffers are placed again swizzled. */
int pass_smem_alloc(TirKernel *k, const Target *t, Diags *d)
{
    int rc = allocate(k, t);
    if (!rc && t->smem_limit && k->smem_alloc_bytes > t->smem_limit) {
        int n = unpad(k, k->body);
        rc = n < 0 ? -1 : n > 0 ? allocate(k, t) : 0;
    }
    if (rc) {
        diag_error(d, (SrcLoc){0}, "out of memory allocating shared memory");
        return -1;
    }
    if (t->smem_limit && k->smem_alloc_bytes > t->smem_limit) {
        diag_error(d, (SrcLoc){0}, "shared memory: %d bytes of buffers needed, %s allows %d per "
                   "program instance: use smaller blocks or fewer stages",
                   k->smem_alloc_bytes, t->name, t->smem_limit);
        return -1;
    }
    return 0;
}
