/* test_lower.c: unit tests of layouts, lowering and codegen. Small kernels are built by hand
 * in tile IR, given layouts, lowered for the host, JIT-run with LLVM ORC and compared with a
 * float64 reference on random inputs (odd sizes, poisoned outputs); the same kernels are
 * emitted as PTX for sm_80 and sm_90 and assembled with ptxas when it exists (no local
 * memory allowed). Prints "N passed, M failed"; exits non-zero on failure. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>
#include "codegen.h"
#include "gpu.h"
#include "driver.h"
#include "layout.h"
#include "lower.h"
#include "target.h"
#include "../testing.h"

static int passed, failed;


/* ---- building tile IR ---- */
typedef struct B {
    TirKernel *k;
    TirBlock *blk;
} B;

static TirType ty(ElemKind e, int rank, int d0, int d1)
{
    TirType t = {.elem = e, .rank = rank};
    t.shape[0] = d0, t.shape[1] = d1;
    return t;
}

static TirType pty(ElemKind pointee, int rank, int d0, int d1)
{
    TirType t = ty(ET_PTR, rank, d0, d1);
    t.pointee = pointee;
    return t;
}

static TirOp *emit_op(B *b, TirOpcode code, TirValue **ops, int nops, TirType t, int nres)
{
    return tir_op_append(b->k, b->blk, code, (SrcLoc){0}, ops, nops, &t, nres);
}

static TirValue *emit(B *b, TirOpcode code, TirValue **ops, int nops, TirType t, int64_t i,
                      int64_t i2)
{
    TirOp *op = emit_op(b, code, ops, nops, t, 1);
    op->attr.i = i, op->attr.i2 = i2;
    return op->results[0];
}

static TirValue *cint(B *b, int v) { return emit(b, TIR_CONST, NULL, 0, ty(ET_I32, 0, 0, 0), v, 0); }
static TirValue *cf32(B *b, double f)
{
    TirOp *op = emit_op(b, TIR_CONST, NULL, 0, ty(ET_F32, 0, 0, 0), 1);
    op->attr.f = f;
    return op->results[0];
}
static TirValue *param(B *b, int i) { return emit(b, TIR_PARAM, NULL, 0, b->k->params[i].type, i, 0); }
static TirValue *pid(B *b, int axis) { return emit(b, TIR_PROGRAM_ID, NULL, 0, ty(ET_I32, 0, 0, 0), axis, 0); }
static TirValue *arange(B *b, int n) { return emit(b, TIR_ARANGE, NULL, 0, ty(ET_I32, 1, n, 0), 0, n); }

static TirType like(TirValue *v, int rank, int d0, int d1)
{
    TirType t = v->type;
    t.rank = rank, t.shape[0] = d0, t.shape[1] = d1;
    return t;
}

static TirValue *splat(B *b, TirValue *v, int rank, int d0, int d1)
{
    return emit(b, TIR_SPLAT, &v, 1, like(v, rank, d0, d1), 0, 0);
}

static TirValue *bin(B *b, TirBinOp op, TirValue *x, TirValue *y)
{
    TirValue *o[2] = {x, y};
    return emit(b, TIR_BINARY, o, 2, x->type, op, 0);
}

static TirValue *cmp(B *b, TirCmp c, TirValue *x, TirValue *y)
{
    TirValue *o[2] = {x, y};
    TirType t = x->type;
    t.elem = ET_BOOL;
    return emit(b, TIR_CMP, o, 2, t, c, 0);
}

static TirValue *unary(B *b, TirUnOp u, TirValue *x) { return emit(b, TIR_UNARY, &x, 1, x->type, u, 0); }

static TirValue *expand(B *b, TirValue *v, int axis)
{
    TirType t = v->type;
    for (int d = t.rank; d > axis; d--)
        t.shape[d] = t.shape[d - 1];
    t.shape[axis] = 1;
    t.rank++;
    return emit(b, TIR_EXPAND_DIMS, &v, 1, t, axis, 0);
}

static TirValue *bcast(B *b, TirValue *v, int d0, int d1)
{
    return emit(b, TIR_BROADCAST, &v, 1, like(v, 2, d0, d1), 0, 0);
}

static TirValue *addptr(B *b, TirValue *p, TirValue *off)
{
    TirValue *o[2] = {p, off};
    return emit(b, TIR_ADDPTR, o, 2, p->type, 0, 0);
}

static TirValue *load(B *b, TirValue *p, TirValue *mask, TirValue *other)
{
    TirValue *o[3] = {p, mask, other};
    TirType t = p->type;
    t.elem = t.pointee, t.pointee = ET_VOID;
    return emit(b, TIR_LOAD, o, other ? 3 : mask ? 2 : 1, t, 0, 0);
}

static void store(B *b, TirValue *p, TirValue *v, TirValue *mask)
{
    TirValue *o[3] = {p, v, mask};
    emit_op(b, TIR_STORE, o, mask ? 3 : 2, ty(ET_VOID, 0, 0, 0), 0);
}

static TirValue *reduce(B *b, TirReduce r, TirValue *x, int axis)
{
    TirType t = x->type;
    for (int d = axis; d + 1 < t.rank; d++)
        t.shape[d] = t.shape[d + 1];
    t.rank--;
    if (r == RED_ARGMAX || r == RED_ARGMIN)
        t.elem = ET_I32;
    return emit(b, TIR_REDUCE, &x, 1, t, r, axis);
}

static TirValue *dot(B *b, TirValue *x, TirValue *y, TirValue *acc)
{
    TirValue *o[3] = {x, y, acc};
    return emit(b, TIR_DOT, o, 3, acc->type, 0, 0);
}

static TirValue *trans(B *b, TirValue *x)
{
    return emit(b, TIR_TRANS, &x, 1, like(x, 2, x->type.shape[1], x->type.shape[0]), 0, 0);
}

/* 2-D pointer tile base + rows[:, None] * ld + cols[None, :] and its mask. */
static TirValue *ptr2(B *b, TirValue *base, TirValue *rows, TirValue *cols, TirValue *ld,
                      TirValue *nrows, TirValue *ncols, TirValue **mask)
{
    int R = rows->type.shape[0], C = cols->type.shape[0];
    TirValue *r2 = bcast(b, expand(b, rows, 1), R, C), *c2 = bcast(b, expand(b, cols, 0), R, C);
    TirValue *off = bin(b, BIN_ADD, bin(b, BIN_MUL, r2, splat(b, ld, 2, R, C)), c2);
    TirValue *mr = cmp(b, CMP_LT, r2, splat(b, nrows, 2, R, C));
    TirValue *mc = cmp(b, CMP_LT, c2, splat(b, ncols, 2, R, C));
    *mask = bin(b, BIN_AND, mr, mc);
    return addptr(b, splat(b, base, 2, R, C), off);
}

static B kernel_new(Arena *a, const char *name, const TirType *params, int n, int warps)
{
    B b = {tir_kernel_new(a, name), NULL};
    b.blk = b.k->body;
    b.k->symbol = name;
    b.k->num_warps = warps;
    b.k->params = arena_alloc(a, sizeof(TirParam) * (size_t)n);
    for (int i = 0; i < n; i++)
        b.k->params[i] = (TirParam){arena_printf(a, "p%d", i), params[i], i};
    b.k->nparams = n;
    return b;
}

/* ---- the kernels ---- */
enum { ADD_BLOCK = 256 };

static TirKernel *k_add(Arena *a)
{
    TirType ps[4] = {pty(ET_F32, 0, 0, 0), pty(ET_F32, 0, 0, 0), pty(ET_F32, 0, 0, 0), ty(ET_I32, 0, 0, 0)};
    B b = kernel_new(a, "vadd", ps, 4, 4);
    TirValue *offs = bin(&b, BIN_ADD, splat(&b, bin(&b, BIN_MUL, pid(&b, 0), cint(&b, ADD_BLOCK)), 1, ADD_BLOCK, 0),
                         arange(&b, ADD_BLOCK));
    TirValue *mask = cmp(&b, CMP_LT, offs, splat(&b, param(&b, 3), 1, ADD_BLOCK, 0));
    TirValue *x = load(&b, addptr(&b, splat(&b, param(&b, 0), 1, ADD_BLOCK, 0), offs), mask, NULL);
    TirValue *y = load(&b, addptr(&b, splat(&b, param(&b, 1), 1, ADD_BLOCK, 0), offs), mask, NULL);
    store(&b, addptr(&b, splat(&b, param(&b, 2), 1, ADD_BLOCK, 0), offs), bin(&b, BIN_ADD, x, y), mask);
    return b.k;
}

static int SM_BM = 4, SM_BN = 64; /* the second softmax test reduces across warps */

/* out = softmax(x) along rows; params x, out, M, N, stride */
static TirKernel *k_softmax(Arena *a)
{
    TirType ps[5] = {pty(ET_F32, 0, 0, 0), pty(ET_F32, 0, 0, 0), ty(ET_I32, 0, 0, 0), ty(ET_I32, 0, 0, 0), ty(ET_I32, 0, 0, 0)};
    B b = kernel_new(a, "softmax", ps, 5, 4);
    TirValue *rows = bin(&b, BIN_ADD, splat(&b, bin(&b, BIN_MUL, pid(&b, 0), cint(&b, SM_BM)), 1, SM_BM, 0), arange(&b, SM_BM));
    TirValue *cols = arange(&b, SM_BN), *mask, *mask2;
    TirValue *M = param(&b, 2), *N = param(&b, 3), *ld = param(&b, 4);
    TirValue *px = ptr2(&b, param(&b, 0), rows, cols, ld, M, N, &mask);
    TirValue *x = load(&b, px, mask, splat(&b, cf32(&b, -INFINITY), 2, SM_BM, SM_BN));
    TirValue *m = reduce(&b, RED_MAX, x, 1);
    TirValue *e = unary(&b, UN_EXP, bin(&b, BIN_SUB, x, bcast(&b, expand(&b, m, 1), SM_BM, SM_BN)));
    TirValue *s = reduce(&b, RED_SUM, e, 1);
    TirValue *y = bin(&b, BIN_DIV, e, bcast(&b, expand(&b, s, 1), SM_BM, SM_BN));
    TirValue *po = ptr2(&b, param(&b, 1), rows, cols, ld, M, N, &mask2);
    store(&b, po, y, mask2);
    return b.k;
}

enum { MM_BM = 32, MM_BN = 32, MM_BK = 16 };

/* c[M,N] = a[M,K] @ b[K,N] (or b given as bt[N,K] when `transposed`), one program per
 * output tile, a for-loop over K carrying the accumulator. params a, b, c, M, N, K. */
static TirKernel *k_matmul(Arena *a, int transposed)
{
    TirType ps[6] = {pty(ET_F32, 0, 0, 0), pty(ET_F32, 0, 0, 0), pty(ET_F32, 0, 0, 0), ty(ET_I32, 0, 0, 0), ty(ET_I32, 0, 0, 0), ty(ET_I32, 0, 0, 0)};
    B b = kernel_new(a, transposed ? "matmul_t" : "matmul", ps, 6, 4);
    TirValue *M = param(&b, 3), *N = param(&b, 4), *K = param(&b, 5);
    TirValue *rm = bin(&b, BIN_ADD, splat(&b, bin(&b, BIN_MUL, pid(&b, 0), cint(&b, MM_BM)), 1, MM_BM, 0), arange(&b, MM_BM));
    TirValue *rn = bin(&b, BIN_ADD, splat(&b, bin(&b, BIN_MUL, pid(&b, 1), cint(&b, MM_BN)), 1, MM_BN, 0), arange(&b, MM_BN));
    TirValue *acc0 = splat(&b, cf32(&b, 0.0), 2, MM_BM, MM_BN);
    TirValue *fops[4] = {cint(&b, 0), K, cint(&b, MM_BK), acc0};
    TirType rt = acc0->type;
    TirOp *loop = tir_op_append(b.k, b.blk, TIR_FOR, (SrcLoc){0}, fops, 4, &rt, 1);
    tir_op_add_regions(b.k, loop, 1);
    TirType at[2] = {ty(ET_I32, 0, 0, 0), rt};
    TirBlock *body = tir_block_new(b.k, 2, at);
    body->parent = loop;
    loop->regions[0] = body;
    B in = {b.k, body};
    TirValue *k0 = body->args[0], *acc = body->args[1], *ma, *mb;
    TirValue *rk = bin(&in, BIN_ADD, splat(&in, k0, 1, MM_BK, 0), arange(&in, MM_BK));
    TirValue *pa = ptr2(&in, param(&in, 0), rm, rk, K, M, K, &ma);
    TirValue *av = load(&in, pa, ma, splat(&in, cf32(&in, 0), 2, MM_BM, MM_BK));
    TirValue *bv;
    if (transposed) {
        TirValue *pb = ptr2(&in, param(&in, 1), rn, rk, K, N, K, &mb);
        bv = trans(&in, load(&in, pb, mb, splat(&in, cf32(&in, 0), 2, MM_BN, MM_BK)));
    } else {
        TirValue *pb = ptr2(&in, param(&in, 1), rk, rn, N, K, N, &mb);
        bv = load(&in, pb, mb, splat(&in, cf32(&in, 0), 2, MM_BK, MM_BN));
    }
    TirValue *nacc = dot(&in, av, bv, acc);
    emit_op(&in, TIR_YIELD, &nacc, 1, rt, 0);
    TirValue *mc;
    TirValue *pc = ptr2(&b, param(&b, 2), rm, rn, N, M, N, &mc);
    store(&b, pc, loop->results[0], mc);
    return b.k;
}

enum { AM_BM = 8, AM_BN = 64 };

/* out_max[i] = argmax(x[i, :N]), out_min[i] = argmin; params x, out_max, out_min, M, N */
static TirKernel *k_argmax(Arena *a)
{
    TirType ps[5] = {pty(ET_F32, 0, 0, 0), pty(ET_I32, 0, 0, 0), pty(ET_I32, 0, 0, 0), ty(ET_I32, 0, 0, 0), ty(ET_I32, 0, 0, 0)};
    B b = kernel_new(a, "argmax", ps, 5, 4);
    TirValue *M = param(&b, 3), *N = param(&b, 4), *mask;
    TirValue *rows = bin(&b, BIN_ADD, splat(&b, bin(&b, BIN_MUL, pid(&b, 0), cint(&b, AM_BM)), 1, AM_BM, 0), arange(&b, AM_BM));
    TirValue *px = ptr2(&b, param(&b, 0), rows, arange(&b, AM_BN), N, M, N, &mask);
    TirValue *x = load(&b, px, mask, splat(&b, cf32(&b, -INFINITY), 2, AM_BM, AM_BN));
    TirValue *xmin = load(&b, px, mask, splat(&b, cf32(&b, INFINITY), 2, AM_BM, AM_BN));
    TirValue *rmask = cmp(&b, CMP_LT, rows, splat(&b, M, 1, AM_BM, 0));
    store(&b, addptr(&b, splat(&b, param(&b, 1), 1, AM_BM, 0), rows), reduce(&b, RED_ARGMAX, x, 1), rmask);
    store(&b, addptr(&b, splat(&b, param(&b, 2), 1, AM_BM, 0), rows), reduce(&b, RED_ARGMIN, xmin, 1), rmask);
    return b.k;
}

enum { LP_BLOCK = 128 };

/* out[j] = sum_i x[i * 128 + j] for i < nchunks, a tile carried around a for-loop; also a
 * scalar total carried beside it. params x, out, nchunks, total_out */
static TirKernel *k_loop(Arena *a)
{
    TirType ps[4] = {pty(ET_F32, 0, 0, 0), pty(ET_F32, 0, 0, 0), ty(ET_I32, 0, 0, 0), pty(ET_F32, 0, 0, 0)};
    B b = kernel_new(a, "loop", ps, 4, 2);
    TirValue *ar = arange(&b, LP_BLOCK);
    TirValue *zero = splat(&b, cf32(&b, 0.0), 1, LP_BLOCK, 0);
    TirValue *fops[5] = {cint(&b, 0), param(&b, 2), cint(&b, 1), zero, cf32(&b, 0.0)};
    TirType rts[2] = {zero->type, ty(ET_F32, 0, 0, 0)};
    TirOp *loop = tir_op_append(b.k, b.blk, TIR_FOR, (SrcLoc){0}, fops, 5, rts, 2);
    tir_op_add_regions(b.k, loop, 1);
    TirType at[3] = {ty(ET_I32, 0, 0, 0), rts[0], rts[1]};
    TirBlock *body = tir_block_new(b.k, 3, at);
    body->parent = loop;
    loop->regions[0] = body;
    B in = {b.k, body};
    TirValue *base = bin(&in, BIN_MUL, body->args[0], cint(&in, LP_BLOCK));
    TirValue *offs = bin(&in, BIN_ADD, splat(&in, base, 1, LP_BLOCK, 0), ar);
    TirValue *x = load(&in, addptr(&in, splat(&in, param(&in, 0), 1, LP_BLOCK, 0), offs), NULL, NULL);
    TirValue *y[2] = {bin(&in, BIN_ADD, body->args[1], x),
                      bin(&in, BIN_ADD, body->args[2], reduce(&in, RED_SUM, x, 0))};
    emit_op(&in, TIR_YIELD, y, 2, rts[0], 0);
    store(&b, addptr(&b, splat(&b, param(&b, 1), 1, LP_BLOCK, 0), ar), loop->results[0], NULL);
    store(&b, param(&b, 3), loop->results[1], NULL);
    return b.k;
}

enum { CV_N = 32 };

/* out[i, j] = x[i] * 10 + x[j]: one rank-1 value expanded along both axes needs a layout
 * conversion. params x, out */
static TirKernel *k_convert(Arena *a)
{
    TirType ps[2] = {pty(ET_F32, 0, 0, 0), pty(ET_F32, 0, 0, 0)};
    B b = kernel_new(a, "convert", ps, 2, 4);
    TirValue *ar = arange(&b, CV_N);
    TirValue *x = load(&b, addptr(&b, splat(&b, param(&b, 0), 1, CV_N, 0), ar), NULL, NULL);
    TirValue *xi = bcast(&b, expand(&b, x, 1), CV_N, CV_N), *xj = bcast(&b, expand(&b, x, 0), CV_N, CV_N);
    TirValue *v = bin(&b, BIN_ADD, bin(&b, BIN_MUL, xi, splat(&b, cf32(&b, 10.0), 2, CV_N, CV_N)), xj);
    TirValue *mask;
    TirValue *n = cint(&b, CV_N);
    TirValue *po = ptr2(&b, param(&b, 1), ar, ar, n, n, n, &mask);
    store(&b, po, v, mask);
    return b.k;
}

enum { RP_M = 4, RP_N = 8 };

/* A tile smaller than the threads cover (replicated elements): rows[i] = sum(x[i, :]),
 * cols[j] = max(x[:, j]). params x, rows, cols */
static TirKernel *k_replicated(Arena *a)
{
    TirType ps[3] = {pty(ET_F32, 0, 0, 0), pty(ET_F32, 0, 0, 0), pty(ET_F32, 0, 0, 0)};
    B b = kernel_new(a, "replicated", ps, 3, 4);
    TirValue *rm = arange(&b, RP_M), *rn = arange(&b, RP_N), *mask;
    TirValue *px = ptr2(&b, param(&b, 0), rm, rn, cint(&b, RP_N), cint(&b, RP_M), cint(&b, RP_N), &mask);
    TirValue *x = load(&b, px, NULL, NULL);
    store(&b, addptr(&b, splat(&b, param(&b, 1), 1, RP_M, 0), rm), reduce(&b, RED_SUM, x, 1), NULL);
    store(&b, addptr(&b, splat(&b, param(&b, 2), 1, RP_N, 0), rn), reduce(&b, RED_MAX, x, 0), NULL);
    return b.k;
}

/* ---- compiling and running ---- */
typedef void (*HostFn)(void **args, const int32_t *grid);

typedef struct Jit {
    LLVMOrcLLJITRef jit;
    HostFn fn;
} Jit;

static int compile(TirKernel *k, const Target *t, CgOutput what, Arena *a, char **out, size_t *size)
{
    Diags d;
    diags_init(&d, a);
    int rc = -1;
    LLVMContextRef ctx = LLVMContextCreate();
    if (tc_passes(k, t, NULL, &d) == 0) {
        LLVMModuleRef m = lower_kernel(k, t, ctx, &d);
        if (m && codegen_verify(m, &d) == 0 && codegen_optimize(m, t, &d) == 0)
            rc = codegen_emit(m, t, what, a, out, size, &d);
        if (m)
            LLVMDisposeModule(m);
    }
    LLVMContextDispose(ctx);
    if (rc != 0) {
        diags_print(&d, stdout);
        tir_print(k, stdout);
    }
    return rc;
}

static int jit_load(Jit *j, const char *obj, size_t size, const char *symbol)
{
    LLVMOrcDefinitionGeneratorRef gen;
    LLVMOrcJITTargetAddress addr = 0;
    if (LLVMOrcCreateLLJIT(&j->jit, NULL))
        return -1;
    LLVMOrcJITDylibRef jd = LLVMOrcLLJITGetMainJITDylib(j->jit);
    if (LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(&gen, LLVMOrcLLJITGetGlobalPrefix(j->jit), NULL, NULL))
        return -1;
    LLVMOrcJITDylibAddGenerator(jd, gen);
    LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(obj, size, symbol);
    LLVMErrorRef err = LLVMOrcLLJITAddObjectFile(j->jit, jd, buf);
    if (!err)
        err = LLVMOrcLLJITLookup(j->jit, &addr, symbol);
    if (err) {
        char *msg = LLVMGetErrorMessage(err);
        printf("jit: %s\n", msg);
        LLVMDisposeErrorMessage(msg);
        return -1;
    }
    j->fn = (HostFn)(uintptr_t)addr;
    return 0;
}

static int on_gpu;      /* run on the CUDA device instead of the host JIT */
static char gpu_sm[16];

static void launch_host(Jit *j, GpuArg *args, int n, int gx, int gy)
{
    void *argv[32];
    for (int i = 0; i < n && i < 32; i++)
        argv[i] = args[i].host ? (void *)&args[i].host : (void *)&args[i].scalar;
    for (int y = 0; y < gy; y++)
        for (int x = 0; x < gx; x++) {
            int32_t grid[6] = {x, y, 0, gx, gy, 1};
            j->fn(argv, grid);
        }
}

/* Compiles the kernel for the host (JIT) or the GPU and runs it over a gx x gy grid. */
static int run_kernel(TirKernel *(*make)(Arena *), Arena *a, GpuArg *args, int n, int gx, int gy)
{
    TirKernel *k = make(a);
    char *code;
    size_t size;
    if (on_gpu) {
        if (compile(k, target_lookup(gpu_sm), CG_ASM, a, &code, &size) != 0)
            return -1;
        return gpu_run(code, k->symbol, k->num_warps * 32, k->smem_bytes, gx, gy, args, n);
    }
    Jit j;
    if (compile(k, target_host(), CG_OBJECT, a, &code, &size) != 0 ||
        jit_load(&j, code, size, k->symbol) != 0)
        return -1;
    launch_host(&j, args, n, gx, gy);
    LLVMOrcDisposeLLJIT(j.jit);
    return 0;
}

#define BUF(p, n) {.host = (p), .bytes = sizeof(*(p)) * (size_t)(n)}
#define I32(v) {.scalar = (v), .scalar_bytes = 4}

static float *rand_floats(int n, unsigned *seed)
{
    float *p = malloc(sizeof(float) * (size_t)n);
    for (int i = 0; i < n; i++)
        p[i] = (float)(rand_r(seed) % 20001 - 10000) / 2500.0f;
    return p;
}

static float *poisoned(int n)
{
    float *p = malloc(sizeof(float) * (size_t)n);
    for (int i = 0; i < n; i++)
        p[i] = NAN;
    return p;
}

static int close_to(double got, double want, double tol)
{
    return fabs(got - want) <= tol * (1.0 + fabs(want));
}

/* ---- the host tests ---- */
static int t_add(Arena *a)
{
    unsigned seed = 1;
    int n = 1000, pad = 24;
    float *x = rand_floats(n, &seed), *y = rand_floats(n, &seed), *out = poisoned(n + pad);
    GpuArg args[4] = {BUF(x, n), BUF(y, n), BUF(out, n + pad), I32(n)};
    CHECKF(run_kernel(k_add, a, args, 4, (n + ADD_BLOCK - 1) / ADD_BLOCK, 1) == 0, "vadd did not run");
    for (int i = 0; i < n; i++)
        CHECKF(out[i] == x[i] + y[i], "vadd[%d] = %g, want %g", i, out[i], x[i] + y[i]);
    for (int i = n; i < n + pad; i++)
        CHECKF(isnan(out[i]), "vadd wrote past n at %d", i);
    free(x), free(y), free(out);
    return 0;
}

static int t_softmax(Arena *a)
{
    unsigned seed = 2;
    int M = 13, N = 50, ld = 53;
    float *x = rand_floats(M * ld, &seed), *out = poisoned(M * ld);
    GpuArg args[5] = {BUF(x, M * ld), BUF(out, M * ld), I32(M), I32(N), I32(ld)};
    CHECKF(run_kernel(k_softmax, a, args, 5, (M + SM_BM - 1) / SM_BM, 1) == 0, "softmax did not run");
    for (int i = 0; i < M; i++) {
        double mx = -INFINITY, s = 0;
        for (int c = 0; c < N; c++)
            mx = fmax(mx, x[i * ld + c]);
        for (int c = 0; c < N; c++)
            s += exp(x[i * ld + c] - mx);
        for (int c = 0; c < ld; c++) {
            float got = out[i * ld + c];
            if (c >= N)
                CHECKF(isnan(got), "softmax wrote masked element (%d,%d)", i, c);
            else
                CHECKF(close_to(got, exp(x[i * ld + c] - mx) / s, 1e-5), "softmax(%d,%d) = %g", i, c, got);
        }
    }
    free(x), free(out);
    return 0;
}

static TirKernel *k_matmul_n(Arena *a) { return k_matmul(a, 0); }
static TirKernel *k_matmul_t(Arena *a) { return k_matmul(a, 1); }

static int run_matmul(Arena *a, int transposed)
{
    unsigned seed = 3;
    int M = 45, N = 37, K = 29;
    float *A = rand_floats(M * K, &seed), *Bm = rand_floats(K * N, &seed), *C = poisoned(M * N);
    GpuArg args[6] = {BUF(A, M * K), BUF(Bm, K * N), BUF(C, M * N), I32(M), I32(N), I32(K)};
    CHECKF(run_kernel(transposed ? k_matmul_t : k_matmul_n, a, args, 6, (M + MM_BM - 1) / MM_BM,
                     (N + MM_BN - 1) / MM_BN) == 0, "matmul did not run");
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            double s = 0;
            for (int k = 0; k < K; k++)
                s += (double)A[m * K + k] * (transposed ? Bm[n * K + k] : Bm[k * N + n]);
            CHECKF(close_to(C[m * N + n], s, 1e-4), "matmul(%d,%d) = %g, want %g", m, n, C[m * N + n], s);
        }
    free(A), free(Bm), free(C);
    return 0;
}

static int t_matmul(Arena *a) { return run_matmul(a, 0); }
static int t_trans_dot(Arena *a) { return run_matmul(a, 1); }

static int t_argmax(Arena *a)
{
    unsigned seed = 4;
    int M = 11, N = 37;
    float *x = rand_floats(M * N, &seed);
    for (int c = 0; c < N; c++)
        x[1 * N + c] = 1.0f; /* all ties: index 0 */
    x[2 * N + 5] = x[2 * N + 30] = 99.0f, x[2 * N + 7] = x[2 * N + 33] = -99.0f;
    x[3 * N + 9] = NAN, x[3 * N + 20] = NAN; /* NaN is the extreme: first NaN */
    int32_t *omax = malloc(sizeof(int32_t) * 16), *omin = malloc(sizeof(int32_t) * 16);
    memset(omax, 0x7f, sizeof(int32_t) * 16), memset(omin, 0x7f, sizeof(int32_t) * 16);
    GpuArg args[5] = {BUF(x, M * N), BUF(omax, 16), BUF(omin, 16), I32(M), I32(N)};
    CHECKF(run_kernel(k_argmax, a, args, 5, (M + AM_BM - 1) / AM_BM, 1) == 0, "argmax did not run");
    for (int i = 0; i < M; i++) {
        int bi = 0, li = 0;
        for (int c = 1; c < N; c++) {
            float v = x[i * N + c], b = x[i * N + bi], l = x[i * N + li];
            if ((v > b) || (isnan(v) && !isnan(b))) bi = c;
            if ((v < l) || (isnan(v) && !isnan(l))) li = c;
        }
        CHECKF(omax[i] == bi, "argmax row %d = %d, want %d", i, omax[i], bi);
        CHECKF(omin[i] == li, "argmin row %d = %d, want %d", i, omin[i], li);
    }
    CHECKF(omax[M] == 0x7f7f7f7f, "argmax wrote a masked row");
    free(x), free(omax), free(omin);
    return 0;
}

static int t_loop(Arena *a)
{
    unsigned seed = 5;
    int chunks = 7;
    float *x = rand_floats(chunks * LP_BLOCK, &seed), *out = poisoned(LP_BLOCK), total = NAN;
    GpuArg args[4] = {BUF(x, chunks * LP_BLOCK), BUF(out, LP_BLOCK), I32(chunks), BUF(&total, 1)};
    CHECKF(run_kernel(k_loop, a, args, 4, 1, 1) == 0, "loop did not run");
    double all = 0;
    for (int c = 0; c < LP_BLOCK; c++) {
        double s = 0;
        for (int i = 0; i < chunks; i++)
            s += x[i * LP_BLOCK + c];
        all += s;
        CHECKF(close_to(out[c], s, 1e-5), "loop[%d] = %g, want %g", c, out[c], s);
    }
    CHECKF(close_to(total, all, 1e-4), "loop total = %g, want %g", total, all);
    free(x), free(out);
    return 0;
}

static int t_convert(Arena *a)
{
    unsigned seed = 6;
    float *x = rand_floats(CV_N, &seed), *out = poisoned(CV_N * CV_N);
    GpuArg args[2] = {BUF(x, CV_N), BUF(out, CV_N * CV_N)};
    CHECKF(run_kernel(k_convert, a, args, 2, 1, 1) == 0, "convert did not run");
    for (int i = 0; i < CV_N; i++)
        for (int c = 0; c < CV_N; c++)
            CHECKF(out[i * CV_N + c] == x[i] * 10.0f + x[c], "convert(%d,%d) = %g", i, c, out[i * CV_N + c]);
    free(x), free(out);
    return 0;
}

static int t_softmax_wide(Arena *a)
{
    SM_BM = 2, SM_BN = 512;
    int rc = t_softmax(a);
    SM_BM = 4, SM_BN = 64;
    return rc;
}

static int t_replicated(Arena *a)
{
    unsigned seed = 7;
    float *x = rand_floats(RP_M * RP_N, &seed), *rows = poisoned(RP_M), *cols = poisoned(RP_N);
    GpuArg args[3] = {BUF(x, RP_M * RP_N), BUF(rows, RP_M), BUF(cols, RP_N)};
    CHECKF(run_kernel(k_replicated, a, args, 3, 1, 1) == 0, "replicated did not run");
    for (int i = 0; i < RP_M; i++) {
        double s = 0;
        for (int j = 0; j < RP_N; j++)
            s += x[i * RP_N + j];
        CHECKF(close_to(rows[i], s, 1e-5), "row sum %d = %g, want %g", i, rows[i], s);
    }
    for (int j = 0; j < RP_N; j++) {
        float m = -INFINITY;
        for (int i = 0; i < RP_M; i++)
            m = fmaxf(m, x[i * RP_N + j]);
        CHECKF(cols[j] == m, "col max %d = %g, want %g", j, cols[j], m);
    }
    free(x), free(rows), free(cols);
    return 0;
}

/* ---- layouts ---- */
static int t_layout_math(Arena *a)
{
    int shape[2] = {64, 64};
    TirLayout l = layout_default_blocked(2, shape, 4, 4, 32);
    CHECKF(l.spt[1] == 4 && l.tpw[1] == 16 && l.tpw[0] == 2 && l.wpc[0] == 4, "default blocked 64x64");
    CHECKF(layout_regs(&l, shape, 2) == 32, "64x64 over 128 threads: 32 registers");
    int small[2] = {4, 8};
    CHECKF(layout_regs(&l, small, 2) == 4, "4x8 (replicated) holds spt'=4 per thread");
    TirLayout s = layout_slice(&l, 1);
    int row[1] = {64};
    CHECKF(layout_regs(&s, row, 1) == 8, "slice along dim 1 of 64 rows: 8 per thread");
    int one = 1024;
    TirLayout l1 = layout_default_blocked(1, &one, 4, 4, 32);
    CHECKF(l1.spt[0] == 4 && l1.tpw[0] == 32 && l1.wpc[0] == 4, "default rank-1");
    TirLayout h = layout_default_blocked(2, shape, 4, 1, 1);
    CHECKF(layout_regs(&h, shape, 2) == 4096, "host layout owns whole tiles");
    (void)a;
    return 0;
}

/* ---- PTX through ptxas ---- */
static const char *ptxas_path(void)
{
    static char buf[512];
    const char *home = getenv("CUDA_HOME");
    if (home) {
        snprintf(buf, sizeof buf, "%s/bin/ptxas", home);
        if (access(buf, X_OK) == 0)
            return buf;
    }
    return access("/usr/local/cuda/bin/ptxas", X_OK) == 0 ? "/usr/local/cuda/bin/ptxas" : NULL;
}

/* Assembles ptx for sm; fails on errors or any stack frame / local memory. */
static int ptxas_check(const char *ptx, size_t size, const char *sm, const char *name)
{
    char path[256], cmd[1024], line[512];
    snprintf(path, sizeof path, "/tmp/tile_test_lower_%d_%s_%s.ptx", (int)getpid(), name, sm);
    FILE *f = fopen(path, "w");
    CHECKF(f, "cannot write %s", path);
    fwrite(ptx, 1, size, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "%s -arch=%s -v -o /dev/null %s 2>&1", ptxas_path(), sm, path);
    FILE *p = popen(cmd, "r");
    CHECKF(p, "cannot run ptxas");
    int bad = 0;
    while (fgets(line, sizeof line, p)) {
        int stack = 0;
        char *s = strstr(line, "bytes stack frame");
        if (s) {
            while (s > line && s[-1] == ' ') s--;
            while (s > line && s[-1] >= '0' && s[-1] <= '9') s--;
            stack = atoi(s);
        }
        if (strstr(line, "error") || stack > 0 || strstr(line, "bytes lmem"))
            bad = 1, printf("  %s %s: %s", name, sm, line);
        else if (getenv("TILE_TEST_VERBOSE") || strstr(line, "registers"))
            printf("  %s %s: %s", name, sm, line);
    }
    int rc = pclose(p);
    CHECKF(!bad && rc == 0, "ptxas rejected %s for %s (kept %s)", name, sm, path);
    unlink(path);
    return 0;
}

static int t_ptx(Arena *a)
{
    static TirKernel *(*makers[])(Arena *) = {k_add, k_softmax, k_matmul_n, k_matmul_t,
                                              k_argmax, k_loop, k_convert, k_replicated};
    static const char *sms[] = {"sm_80", "sm_90"};
    for (unsigned s = 0; s < 2; s++)
        for (unsigned i = 0; i < sizeof makers / sizeof makers[0]; i++) {
            TirKernel *k = makers[i](a);
            char *ptx;
            size_t size;
            CHECKF(compile(k, target_lookup(sms[s]), CG_ASM, a, &ptx, &size) == 0,
                  "%s: no PTX for %s", k->name, sms[s]);
            CHECKF(strstr(ptx, ".entry"), "%s: no .entry in PTX", k->name);
            if (ptxas_path() && ptxas_check(ptx, size, sms[s], k->name) != 0)
                return -1;
        }
    if (!ptxas_path())
        printf("  (ptxas not found: PTX not assembled)\n");
    return 0;
}

static int t_targets(Arena *a)
{
    CHECKF(target_lookup("host") == target_host(), "host target");
    const Target *t = target_lookup("sm_90a");
    CHECKF(t && t->kind == TARGET_NVPTX && t->sm == 90 && strcmp(t->cpu, "sm_90a") == 0, "sm_90a");
    CHECKF(target_lookup("sm_90a") == t, "targets are cached");
    CHECKF(!target_lookup("sm_x") && !target_lookup("gfx91x") && !target_lookup("gfx"),
           "unknown targets");
    const Target *amd = target_lookup("gfx942"), *rdna = target_lookup("gfx1100");
    CHECKF(amd && amd->kind == TARGET_AMDGPU && amd->threads_per_warp == 64 &&
           amd->mma == TARGET_MMA_MFMA && target_lookup("gfx942") == amd, "gfx942");
    CHECKF(rdna && rdna->threads_per_warp == 32 && rdna->mma == TARGET_MMA_NONE, "gfx1100");
    const Target *samd = target_lookup("sim-amd");
    CHECKF(samd && samd->kind == TARGET_SIM && samd->threads_per_warp == 64, "sim-amd");
    (void)a;
    return 0;
}

typedef struct Test {
    const char *name;
    int (*fn)(Arena *);
    int numeric; /* also run on the GPU when one exists */
} Test;

static void run_tests(const Test *tests, int n, int gpu)
{
    on_gpu = gpu;
    for (int i = 0; i < n; i++) {
        if (gpu && !tests[i].numeric)
            continue;
        Arena *a = arena_new();
        int rc = tests[i].fn(a);
        arena_free(a);
        printf("%s %s%s%s\n", rc == 0 ? "ok  " : "FAIL", tests[i].name, gpu ? " on " : "",
               gpu ? gpu_sm : "");
        rc == 0 ? passed++ : failed++;
    }
}

int main(void)
{
    static const Test tests[] = {
        {"targets", t_targets, 0}, {"layout_math", t_layout_math, 0}, {"vadd", t_add, 1},
        {"softmax", t_softmax, 1}, {"softmax_wide", t_softmax_wide, 1},
        {"replicated", t_replicated, 1}, {"matmul", t_matmul, 1}, {"trans_dot", t_trans_dot, 1},
        {"argmax", t_argmax, 1}, {"loop", t_loop, 1}, {"convert", t_convert, 1},
        {"ptx", t_ptx, 0},
    };
    int n = (int)(sizeof tests / sizeof tests[0]);
    LLVMInitializeNativeTarget();
    LLVMInitializeNativeAsmPrinter();
    run_tests(tests, n, 0);
    if (gpu_available(gpu_sm, sizeof gpu_sm))
        run_tests(tests, n, 1);
    else
        printf("(no CUDA device: GPU runs skipped)\n");
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
