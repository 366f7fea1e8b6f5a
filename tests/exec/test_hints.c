/* test_hints.c: the hints group of the execution tests (tests/exec/hints.tile): loads and
 * stores with cache_modifier=, eviction_policy= and volatile= give what plain ones give, for
 * every element type, masked at odd sizes and vectorized at full blocks, with `other`, as
 * scalars, and in a dot loop the pipeliner may turn into async copies; prefetch() changes
 * nothing, at any address. */
#include <math.h>
#include "test_exec.h"

#define HT "tests/exec/hints.tile"

static void copy(Ty t, const char *kernel, int n)
{
    begin("hinted loads and stores copy %s, n=%d", TY[t].name, n);
    int is_int = !TY[t].is_float;
    Buf *x = input("x", t, (size_t)n, is_int ? -128 : -100, is_int ? 127 : 100);
    Buf *y = output("y", t, (size_t)n * 6, EXACT);
    for (int k = 0; k < 6; k++)
        for (int i = 0; i < n; i++)
            y->v[(size_t)k * n + i] = x->v[i];
    run(HT, kernel, ARGS(P(x), P(y), I(n)), NO_CONSTS);
}

static void other(int n)
{
    begin("hinted masked loads give other, n=%d", n);
    int blocks = (n + 127) / 128;
    Buf *x = input("x", T_F32, (size_t)n, -4, 4);
    Buf *y = output("y", T_F32, (size_t)blocks * 128, TOL_F32), *s = output("s", T_F32, 1, EXACT);
    for (int i = 0; i < blocks * 128; i++)
        y->v[i] = i < n ? 3 * x->v[i] : -6;
    s->v[0] = 2 * x->v[0];
    run(HT, "other", ARGS(P(x), P(y), P(s), I(n)), NO_CONSTS);
}

static void dot_loop(int K, int vol, int stages)
{
    begin("hinted loads in a dot loop, 32x32x%d f16, %s, num_stages=%d", K, vol ? "volatile" : ".cg",
          stages);
    Buf *a = input("a", T_F16, (size_t)32 * K, -2, 2), *b = input("b", T_F16, (size_t)K * 32, -2, 2);
    Buf *c = output("c", T_F32, 32 * 32, TOL_F32);
    matmul_ref_bounded(a, b, c, 32, 32, K);
    run(HT, "dot_loop", ARGS(P(a), P(b), P(c), I(K)), CONSTS({"VOL", vol}, {"num_stages", stages}));
}

static void prefetched(int K)
{
    begin("prefetches change nothing: a dot loop, far addresses, 32x32x%d f16", K);
    Buf *a = input("a", T_F16, (size_t)32 * K, -2, 2), *b = input("b", T_F16, (size_t)K * 32, -2, 2);
    Buf *c = output("c", T_F32, 32 * 32, TOL_F32);
    matmul_ref_bounded(a, b, c, 32, 32, K);
    run(HT, "prefetched", ARGS(P(a), P(b), P(c), I(K), I((int64_t)1 << 40)), NO_CONSTS);
}

void t_hints(void)
{
    static const struct { Ty t; const char *kernel; } types[] = {
        {T_F32, "copy"}, {T_F16, "copy_f16"}, {T_I8, "copy_i8"}, {T_F64, "copy_f64"}};
    static const int sizes[] = {1, 255, 256, 1000, 1024};
    for (int t = 0; t < 4; t++)
        for (int s = 0; s < 5; s++)
            copy(types[t].t, types[t].kernel, sizes[s]);
    other(1), other(100), other(300);
    for (int vol = 0; vol < 2; vol++) {
        dot_loop(64, vol, 3);
        dot_loop(48, vol, 2);
    }
    prefetched(16), prefetched(48), prefetched(160);
}
