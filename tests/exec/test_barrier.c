/* test_barrier.c: the barrier group of the execution tests (tests/exec/barrier.tile): a
 * program reading global memory that other threads of it wrote, or overwriting what they
 * read, with debug_barrier() between, at several warp counts; exact references. Without the
 * barrier the sim backend gets most of these wrong (findings22). */
#include <math.h>
#include "test_exec.h"

#define BR "tests/exec/barrier.tile"

static void raw_reverse(int b, int warps)
{
    begin("debug_barrier: store then load reversed, B=%d num_warps=%d", b, warps);
    Buf *x = input("x", T_F32, b, -1, 1), *tmp = output("tmp", T_F32, b, EXACT);
    Buf *out = output("out", T_F32, b, EXACT);
    for (int i = 0; i < b; i++)
        tmp->v[i] = x->v[i], out->v[i] = x->v[b - 1 - i];
    run(BR, "raw_reverse", ARGS(P(x), P(tmp), P(out)), CONSTS({"B", b}, {"num_warps", warps}));
}

static void war_scalar(int warps)
{
    begin("debug_barrier: a scalar loaded by every thread, then stored, num_warps=%d", warps);
    Buf *flag = inout("flag", T_I32, 1, EXACT), *out = output("out", T_I32, 512, EXACT);
    flag->init[0] = 0, flag->v[0] = 1;
    for (int i = 0; i < 512; i++)
        out->v[i] = 0;
    run(BR, "war_scalar", ARGS(P(flag), P(out)), CONSTS({"num_warps", warps}));
}

static void inplace(int warps)
{
    begin("debug_barrier: x reversed in place, B=512 num_warps=%d", warps);
    Buf *x = inout("x", T_F32, 512, EXACT);
    for (int i = 0; i < 512; i++)
        x->init[i] = i - 100.5, x->v[511 - i] = i - 100.5;
    run(BR, "inplace_reverse", ARGS(P(x)), CONSTS({"num_warps", warps}));

    begin("debug_barrier: a 32x32 tile transposed in place, num_warps=%d", warps);
    Buf *t = inout("x", T_F32, 32 * 32, EXACT);
    for (int r = 0; r < 32; r++)
        for (int c = 0; c < 32; c++)
            t->init[r * 32 + c] = r * 100 + c, t->v[c * 32 + r] = r * 100 + c;
    run(BR, "inplace_trans", ARGS(P(t)), CONSTS({"num_warps", warps}));
}

static void steps(int T, int warps)
{
    begin("debug_barrier: %d steps of read reversed, store plus 1, num_warps=%d", T, warps);
    Buf *buf = inout("buf", T_F32, 256, EXACT);
    for (int i = 0; i < 256; i++)
        buf->init[i] = i, buf->v[T % 2 ? 255 - i : i] = i + T;
    run(BR, "steps", ARGS(P(buf), I(T)), CONSTS({"num_warps", warps}));
}

static void first_writer(int n)
{
    begin("debug_barrier: the lock and first-writer flag of LayerNorm backward, %d programs", n);
    Buf *x = input("x", T_F32, (size_t)n * 256, -4, 4);
    Buf *acc = inout("acc", T_F32, 256, TOL_F32), *lock = inout("lock", T_I32, 1, EXACT);
    Buf *count = inout("count", T_I32, 1, EXACT);
    for (int j = 0; j < 256; j++) {
        double abs_sum = 0;
        acc->init[j] = 1000, acc->v[j] = 0; /* the first program ignores what acc held */
        for (int p = 0; p < n; p++)
            acc->v[j] += x->v[(size_t)p * 256 + j], abs_sum += fabs(x->v[(size_t)p * 256 + j]);
        sum_bound(acc, (size_t)j, abs_sum, (size_t)n); /* the programs' order is the lock's */
    }
    lock->v[0] = 0, count->v[0] = 1;
    run(BR, "first_writer", ARGS(P(x), P(acc), P(lock), P(count), I(n)), NO_CONSTS);
}

static void dot_loop(int K)
{
    begin("debug_barrier in a K loop of dots (not pipelined), 32x32x%d f16", K);
    Buf *a = input("a", T_F16, (size_t)32 * K, -2, 2), *b = input("b", T_F16, (size_t)K * 32, -2, 2);
    Buf *c = output("c", T_F32, 32 * 32, TOL_F32);
    matmul_ref_bounded(a, b, c, 32, 32, K);
    run(BR, "dot_loop", ARGS(P(a), P(b), P(c), I(K)), CONSTS({"num_stages", 3}));
}

void t_barrier(void)
{
    static const int warps[] = {1, 4, 8};
    for (int w = 0; w < 3; w++) {
        raw_reverse(512, warps[w]);
        raw_reverse(4096, warps[w]);
        war_scalar(warps[w]);
        inplace(warps[w]);
        steps(5, warps[w]);
    }
    steps(0, 4);
    first_writer(4);
    first_writer(9);
    dot_loop(64);
}
