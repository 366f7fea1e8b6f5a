/* test_asm.c: the inline_asm group of the execution tests (tests/exec/inline_asm.tile):
 * inline_asm_elementwise's PTX on the CUDA backend against references computed here; on the
 * CPU and sim backends, which run no GPU assembly, the launch must fail with a compile error
 * that says so (and the next launch must work). */
#include <math.h>
#include "test_exec.h"

#define AS "tests/exec/inline_asm.tile"

static void two_results(int n)
{
    begin("inline asm: two calls, two results, a scalar operand, n=%d", n);
    Buf *x = input("x", T_I32, (size_t)n, -1000, 1000), *y = input("y", T_F32, (size_t)n, -10, 10);
    Buf *o = output("o", T_I32, (size_t)n, EXACT), *of = output("of", T_F32, (size_t)n, EXACT);
    for (int i = 0; i < n; i++) {
        o->v[i] = x->v[i] * 8 + (x->v[i] + 5 + 1);
        of->v[i] = 2 * y->v[i];
    }
    run(AS, "two_results", ARGS(P(x), P(y), I(5), P(o), P(of), I(n)), NO_CONSTS);
}

static void bytes_plus_one(int n)
{
    begin("inline asm: u8 four to a register, n=%d", n);
    Buf *x = input("x", T_U8, (size_t)n, 0, 255), *o = output("o", T_U8, (size_t)n, EXACT);
    for (int i = 0; i < n; i++)
        o->v[i] = (double)(((int)x->v[i] + 1) & 255);
    run(AS, "bytes_plus_one", ARGS(P(x), P(o), I(n)), NO_CONSTS);
}

static void halves(int n)
{
    begin("inline asm: f16 two to a register and one alone, n=%d", n);
    Buf *x = input("x", T_F16, (size_t)n, -100, 100);
    Buf *o2 = output("o2", T_F16, (size_t)n, EXACT), *on = output("on", T_F16, (size_t)n, EXACT);
    for (int i = 0; i < n; i++)
        o2->v[i] = 2 * x->v[i], on->v[i] = -x->v[i];
    run(AS, "halves", ARGS(P(x), P(o2), P(on), I(n)), NO_CONSTS);
}

static void triple4(int n)
{
    begin("inline asm: runs of four 32-bit elements, n=%d", n);
    Buf *x = input("x", T_I32, (size_t)n, -100000, 100000), *o = output("o", T_I32, (size_t)n, EXACT);
    for (int i = 0; i < n; i++)
        o->v[i] = 3 * x->v[i];
    run(AS, "triple4", ARGS(P(x), P(o), I(n)), NO_CONSTS);
}

static void outer(void)
{
    begin("inline asm: a 2-D tile of broadcast operands, and scalars only");
    Buf *a = input("a", T_F32, 32, -4, 4), *b = input("b", T_F32, 64, -4, 4);
    Buf *o = output("o", T_F32, 32 * 64, TOL_F32), *o2 = output("o2", T_I32, 1, EXACT);
    for (int r = 0; r < 32; r++)
        for (int c = 0; c < 64; c++)
            o->v[r * 64 + c] = a->v[r] * b->v[c] + 1;
    o2->v[0] = 13 * 7;
    run(AS, "outer", ARGS(P(a), P(b), P(o), P(o2), I(13)), NO_CONSTS);
}

static void effect(void)
{
    begin("inline asm: an effect kept, a pointer operand");
    Buf *count = inout("count", T_I32, 1, EXACT);
    count->v[0] = 256;
    run(AS, "effect", ARGS(P(count)), NO_CONSTS);
}

static void mm_i8(int M, int N, int K)
{
    begin("inline asm: i8 weights to f16 inside a dot loop, %dx%dx%d", M, N, K);
    Buf *a = input("a", T_F16, (size_t)M * K, -2, 2), *b = input("b", T_I8, (size_t)K * N, -127, 127);
    Buf *c = output("c", T_F32, (size_t)M * N, TOL_F32);
    matmul_ref_bounded(a, b, c, M, N, K);
    run(AS, "mm_i8", ARGS(P(a), P(b), P(c), I(M), I(N), I(K)), NO_CONSTS);
}

static void refused(void)
{
    begin("inline asm: refused where no GPU assembly runs");
    Buf *x = input("x", T_I32, 1, 0, 10), *o = scratch("o", T_I32, 1);
    Buf *y = input("y", T_F32, 1, 0, 1), *of = scratch("of", T_F32, 1);
    Launch l = {"two_results", ARGS(P(x), P(y), I(5), P(o), P(of), I(1)), NO_CONSTS};
    run_expect(AS, &l, TILE_ERROR_COMPILE, "runs only on GPU targets", NULL);
}

static void bad_ptx(void)
{
    begin("inline asm: PTX the driver rejects is a launch error, and the context goes on");
    Buf *x = scratch("x", T_I32, 32);
    Launch l = {"bad_ptx", ARGS(P(x)), NO_CONSTS};
    run_expect(AS, &l, TILE_ERROR_DEVICE, "a PTX JIT compilation failed", NULL);
    triple4(37);
}

void t_inline_asm(void)
{
    if (!S.cuda) { /* the CPU and sim backends: a compile error, then a launch that works */
        refused();
        begin("inline asm: a kernel without it still runs");
        Buf *x = input("x", T_I32, 100, -5, 5), *o = output("o", T_I32, 100, EXACT);
        for (int i = 0; i < 100; i++)
            o->v[i] = x->v[i];
        run(AS, "plain", ARGS(P(x), P(o), I(100)), NO_CONSTS);
        return;
    }
    static const int sizes[] = {1, 37, 128, 1000, 4099};
    for (int s = 0; s < 5; s++) {
        two_results(sizes[s]);
        bytes_plus_one(sizes[s]);
        halves(sizes[s]);
        triple4(sizes[s]);
    }
    outer();
    effect();
    mm_i8(77, 45, 53);
    mm_i8(128, 64, 256);
    bad_ptx();
}
