/* vec_axis.c: the axis analysis's unit tests for test_vec.c (apart because compiler/spec.h
 * and the runtime's internals both name a struct Spec): kernels written in tile are
 * specialized with given divisibility flags and the analysis of their loads is checked. */
#include <stdio.h>
#include <string.h>
#include "analysis_axis.h"
#include "spec.h"
#include "vec.h"
#include "../testing.h"


/* ---- the analysis ---- */
static TirKernel *specialize(Arena *a, const char *src, const char *name, const char *flags)
{
    Diags d;
    diags_init(&d, a);
    const Module *m = vec_parse(a, src, &d);
    const Func *f = m ? module_find_func(m, name) : NULL;
    ConstBinding c[16];
    int n = f ? tc_resolve_consts(f, NULL, 0, c, 16, a, &d) : -1;
    TirKernel *k = n >= 0 ? spec_kernel(a, m, f, c, n, 32, &d) : NULL;
    for (int i = 0; k && i < k->nparams; i++)
        k->params[i].div = 1 << (flags[i] - '0'); /* each char: log2 of the divisor */
    if (!k)
        diags_print(&d, stdout);
    return k;
}

/* The nth op of `code` in program order (regions included). */
static TirOp *find_op(TirBlock *b, TirOpcode code, int *nth)
{
    for (TirOp *op = b->first; op; op = op->next) {
        if (op->code == code && (*nth)-- == 0)
            return op;
        for (int r = 0; r < op->nregions; r++) {
            TirOp *in = find_op(op->regions[r], code, nth);
            if (in)
                return in;
        }
    }
    return NULL;
}

static TirOp *nth_op(TirKernel *k, TirOpcode code, int nth) { return find_op(k->body, code, &nth); }

int t_axis_add(Arena *a)
{
    TirKernel *k = specialize(a, ADD, "add", "4444");
    CHECKF(k, "add does not specialize");
    const AxisInfo *ax = axis_analyze(k);
    TirOp *ld = nth_op(k, TIR_LOAD, 0);
    CHECKF(ax && ld && ld->nops >= 2, "no masked load");
    const AxisInfo *p = &ax[ld->ops[0]->id], *m = &ax[ld->ops[1]->id];
    CHECKF(p->contig[0] == 1024 && p->div[0] == 16, "x + offs: contig %lld div %lld",
          (long long)p->contig[0], (long long)p->div[0]);
    CHECKF(m->cnst[0] == 16, "offs < n: constancy %lld, want 16", (long long)m->cnst[0]);
    k = specialize(a, ADD, "add", "0440");
    ax = axis_analyze(k);
    ld = nth_op(k, TIR_LOAD, 0);
    p = &ax[ld->ops[0]->id], m = &ax[ld->ops[1]->id];
    CHECKF(p->div[0] == 4 && m->cnst[0] == 1, "unaligned x: div %lld (want 4), mask %lld (want 1)",
          (long long)p->div[0], (long long)m->cnst[0]);
    return 0;
}

int t_axis_loop(Arena *a)
{
    TirKernel *k = specialize(a, ROWSUM, "rowsum", "44444");
    CHECKF(k, "rowsum does not specialize");
    const AxisInfo *ax = axis_analyze(k);
    TirOp *fo = nth_op(k, TIR_FOR, 0), *ld = nth_op(k, TIR_LOAD, 0);
    CHECKF(fo && ld && ld->nops == 3, "no loop or masked load");
    CHECKF(ax[fo->regions[0]->args[0]->id].div[0] == 32, "iv divisibility %lld, want 32",
          (long long)ax[fo->regions[0]->args[0]->id].div[0]);
    const AxisInfo *p = &ax[ld->ops[0]->id], *m = &ax[ld->ops[1]->id];
    CHECKF(p->contig[1] == 32 && p->div[1] == 16 && p->contig[0] == 1,
          "a tile: contig [%lld, %lld] div %lld", (long long)p->contig[0],
          (long long)p->contig[1], (long long)p->div[1]);
    CHECKF(m->cnst[1] == 16, "mask constancy along K %lld, want 16", (long long)m->cnst[1]);
    k = specialize(a, ROWSUM, "rowsum", "44440"); /* lda not a multiple of 16 */
    ax = axis_analyze(k);
    ld = nth_op(k, TIR_LOAD, 0);
    CHECKF(ax[ld->ops[0]->id].div[1] == 4, "lda unknown: div %lld, want 4",
          (long long)ax[ld->ops[0]->id].div[1]);
    k = specialize(a, ROWSUM, "rowsum", "44411"); /* K and lda multiples of 2: 8-byte rows */
    ax = axis_analyze(k);
    ld = nth_op(k, TIR_LOAD, 0);
    CHECKF(ax[ld->ops[0]->id].div[1] == 8 && ax[ld->ops[1]->id].cnst[1] == 2,
          "lda and K even: div %lld (want 8), mask constancy %lld (want 2)",
          (long long)ax[ld->ops[0]->id].div[1], (long long)ax[ld->ops[1]->id].cnst[1]);
    return 0;
}


/* Rows of packed 4-bit weights, K / 2 (or K >> 1) bytes long: divided exactly, a multiple
 * of 16 gives rows at multiples of 8; a divisor the operand's divisibility does not cover
 * (K / 32, K / 3) gives nothing. */
static const char *HALF_ROWS =
    "kernel half_rows(w: *u8, out: *u8, K: i32, const D: i32 = 2, const SHIFT: bool = false) {\n"
    "    let r = arange(0, 8);\n"
    "    let c = arange(0, 16);\n"
    "    let row = K / D;\n"
    "    if SHIFT {\n"
    "        row = K >> 1;\n"
    "    }\n"
    "    store(out + r[:, None] * 16 + c[None, :], load(w + r[:, None] * row + c[None, :]));\n"
    "}\n";

static int64_t row_divisor(Arena *a, const char *consts)
{
    Diags d;
    diags_init(&d, a);
    const Module *m = vec_parse(a, HALF_ROWS, &d);
    const Func *f = m ? module_find_func(m, "half_rows") : NULL;
    ConstBinding c[4];
    int n = f ? tc_resolve_consts(f, NULL, 0, c, 4, a, &d) : -1;
    for (int i = 0; i < n; i++) {
        if (!strcmp(c[i].name, "D"))
            c[i].value = consts[0] - '0';
        if (!strcmp(c[i].name, "SHIFT"))
            c[i].value = consts[1] == 's';
    }
    TirKernel *k = n >= 0 ? spec_kernel(a, m, f, c, n, 32, &d) : NULL;
    if (!k)
        return -1;
    for (int i = 0; i < 3; i++)
        k->params[i].div = 16; /* w, out, K */
    const AxisInfo *ax = axis_analyze(k);
    TirOp *ld = nth_op(k, TIR_LOAD, 0);
    return ax && ld ? ax[ld->ops[0]->id].div[1] : -1; /* where each row's run starts */
}

int t_axis_divide(Arena *a)
{
    int64_t half = row_divisor(a, "2-"), shift = row_divisor(a, "2s");
    int64_t by8 = row_divisor(a, "8-"), by3 = row_divisor(a, "3-");
    CHECKF(half == 8 && shift == 8, "K / 2 and K >> 1 of a K multiple of 16: rows divisible by %lld and %lld, want 8",
          (long long)half, (long long)shift);
    CHECKF(by8 == 2 && by3 == 1, "K / 8: rows divisible by %lld (want 2); K / 3: %lld (want 1)",
          (long long)by8, (long long)by3);
    return 0;
}
