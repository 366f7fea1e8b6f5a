/* test_atomics.c: the atomics group of the execution tests (tests/exec/atomics.tile): many
 * programs updating the same memory at once, checked against exact (integers, max/min, bit
 * operations, counters) or float64 references with the error bound of a sum in any order. */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "test_exec.h"

#define AT "tests/exec/atomics.tile"

static void histogram(int n, int nbins)
{
    begin("atomic histogram n=%d bins=%d", n, nbins);
    Buf *x = input("x", T_I32, n, 0, nbins - 1);
    Buf *bins = inout("bins", T_I32, nbins, EXACT);
    for (int b = 0; b < nbins; b++)
        bins->init[b] = bins->v[b] = b; /* counts land on top of what was there */
    for (int i = 0; i < n; i++)
        bins->v[(int)x->v[i]] += 1;
    run(AT, "histogram", ARGS(P(x), P(bins), I(n)), NO_CONSTS);
}

static void tickets(int n, int warps)
{
    begin("atomic tickets programs=%d num_warps=%d", n, warps);
    Buf *counter = inout("counter", T_I32, 1, EXACT);
    Buf *seen = inout("seen", T_I32, (size_t)4 * n, EXACT);
    counter->init[0] = 0, counter->v[0] = n;
    for (int i = 0; i < 4 * n; i++)
        seen->v[i] = 1;
    run(AT, "tickets", ARGS(P(counter), P(seen), I(n)), CONSTS({"num_warps", warps}));
}

static void split_k(int M, int N, int K, int split)
{
    begin("atomic split_k %dx%dx%d SPLIT=%d", M, N, K, split);
    Buf *a = input("a", T_F32, (size_t)M * K, -1, 1), *b = input("b", T_F32, (size_t)K * N, -1, 1);
    Buf *c = inout("c", T_F32, (size_t)M * N, TOL_F32);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0.5 * (i - j), abs_sum = fabs(s);
            for (int k = 0; k < K; k++) {
                s += a->v[(size_t)i * K + k] * b->v[(size_t)k * N + j];
                abs_sum += fabs(a->v[(size_t)i * K + k] * b->v[(size_t)k * N + j]);
            }
            c->init[(size_t)i * N + j] = 0.5 * (i - j);
            c->v[(size_t)i * N + j] = s;
            sum_bound(c, (size_t)i * N + j, abs_sum, (size_t)K + 1);
        }
    run(AT, "split_k", ARGS(P(a), P(b), P(c), I(M), I(N), I(K)), CONSTS({"SPLIT", split}));
}

static void sum_squares(int n)
{
    begin("atomic sum_squares n=%d", n);
    Buf *x = input("x", T_F32, n, -1, 1);
    Buf *loss = inout("loss", T_F32, 1, TOL_F32);
    double s = 1.5;
    for (int i = 0; i < n; i++)
        s += x->v[i] * x->v[i];
    loss->init[0] = 1.5, loss->v[0] = s;
    sum_bound(loss, 0, s, (size_t)n + 1);
    run(AT, "sum_squares", ARGS(P(x), P(loss), I(n)), NO_CONSTS);
}

static void columns_i32(int rows, int w)
{
    begin("atomic max/min i32 rows=%d w=%d", rows, w);
    Buf *x = input("x", T_I32, (size_t)rows * w, -2147483647.0 - 1, 2147483647.0);
    Buf *mx = inout("max", T_I32, w, EXACT), *mn = inout("min", T_I32, w, EXACT);
    for (int j = 0; j < w; j++) {
        mx->init[j] = mx->v[j] = -5, mn->init[j] = mn->v[j] = 5;
        for (int r = 0; r < rows; r++) {
            double v = x->v[(size_t)r * w + j];
            mx->v[j] = fmax(mx->v[j], v), mn->v[j] = fmin(mn->v[j], v);
        }
    }
    run(AT, "columns_i32", ARGS(P(x), P(mx), P(mn), I(rows), I(w)), NO_CONSTS);
}

/* u64 values past 2^53 do not survive doubles: the inputs are 52-bit patterns shifted into
 * the top of the word (exact in a double), so the bit operations stay checkable. */
static void columns_u64(int rows, int w)
{
    begin("atomic max/and/or/xor u64 rows=%d w=%d", rows, w);
    Buf *x = input("x", T_U64, (size_t)rows * w, 0, 0);
    Buf *mx = inout("max", T_U64, w, EXACT), *ba = inout("and", T_U64, w, EXACT);
    Buf *bo = inout("or", T_U64, w, EXACT), *bx = inout("xor", T_U64, w, EXACT);
    for (size_t i = 0; i < (size_t)rows * w; i++)
        x->v[i] = (double)((rnd() & 0xFFFFFull) << 44);
    for (int j = 0; j < w; j++) {
        uint64_t m = 3, a = ~0ull << 40, o = 1, e = 0;
        ba->init[j] = (double)a, mx->init[j] = 3, bo->init[j] = 1;
        for (int r = 0; r < rows; r++) {
            uint64_t v = (uint64_t)x->v[(size_t)r * w + j];
            m = v > m ? v : m, a &= v, o |= v, e ^= v;
        }
        mx->v[j] = (double)m, ba->v[j] = (double)a, bo->v[j] = (double)o, bx->v[j] = (double)e;
    }
    run(AT, "columns_u64", ARGS(P(x), P(mx), P(ba), P(bo), P(bx), I(rows), I(w)), NO_CONSTS);
}

static void columns_f32(int rows, int w)
{
    begin("atomic max/min/add f32 rows=%d w=%d", rows, w);
    Buf *x = input("x", T_F32, (size_t)rows * w, -100, 100);
    Buf *mx = inout("max", T_F32, w, EXACT), *mn = inout("min", T_F32, w, EXACT);
    Buf *tot = inout("total", T_F32, w, TOL_F32);
    for (int j = 0; j < w; j++) {
        mx->init[j] = mx->v[j] = -INFINITY, mn->init[j] = mn->v[j] = 0.25;
        double s = 0, abs_sum = 0;
        for (int r = 0; r < rows; r++) {
            double v = x->v[(size_t)r * w + j];
            mx->v[j] = fmax(mx->v[j], v), mn->v[j] = fmin(mn->v[j], v);
            s += v, abs_sum += fabs(v);
        }
        tot->v[j] = s;
        sum_bound(tot, j, abs_sum, (size_t)rows);
    }
    run(AT, "columns_f32", ARGS(P(x), P(mx), P(mn), P(tot), I(rows), I(w)), NO_CONSTS);
}

static void add_types(int rows, int w)
{
    begin("atomic add f16/bf16/f64 rows=%d w=%d", rows, w);
    Buf *x = input("x", T_F32, (size_t)rows * w, 0, 0);
    Buf *h = inout("f16", T_F16, w, EXACT), *bh = inout("bf16", T_BF16, w, EXACT);
    Buf *d = inout("f64", T_F64, w, EXACT);
    for (size_t i = 0; i < (size_t)rows * w; i++)
        x->v[i] = (double)rnd_int(-8, 8) / 4; /* sums of quarters: exact in every type */
    for (int j = 0; j < w; j++) {
        double s = 2;
        for (int r = 0; r < rows; r++)
            s += x->v[(size_t)r * w + j];
        h->init[j] = bh->init[j] = d->init[j] = 2;
        h->v[j] = bh->v[j] = d->v[j] = s;
    }
    run(AT, "add_types", ARGS(P(x), P(h), P(bh), P(d), I(rows), I(w)), NO_CONSTS);
}

static void locked(int n, int warps)
{
    begin("atomic lock (cas, xchg) programs=%d num_warps=%d", n, warps);
    Buf *lock = inout("lock", T_I32, 1, EXACT), *counter = inout("counter", T_I32, 1, EXACT);
    Buf *held = inout("held", T_I32, 1, EXACT);
    counter->init[0] = 7, counter->v[0] = 7 + n, held->v[0] = n;
    run(AT, "locked", ARGS(P(lock), P(counter), P(held), I(n)), CONSTS({"num_warps", warps}));
}

static void last_program(int n, int warps)
{
    int programs = (n + 63) / 64;
    begin("atomic last program n=%d programs=%d num_warps=%d", n, programs, warps);
    Buf *x = input("x", T_F32, n, -1, 1);
    Buf *partial = scratch("partial", T_F32, programs);
    Buf *count = inout("count", T_I32, 1, EXACT), *total = output("total", T_F32, 1, TOL_F32);
    double s = 0, abs_sum = 0;
    for (int i = 0; i < n; i++)
        s += x->v[i], abs_sum += fabs(x->v[i]);
    count->v[0] = programs, total->v[0] = s;
    sum_bound(total, 0, abs_sum, (size_t)n);
    run(AT, "last_program", ARGS(P(x), P(partial), P(count), P(total), I(n)),
        CONSTS({"num_warps", warps}));
}

static void cas_tile(int w)
{
    begin("atomic cas tile w=%d", w);
    Buf *slots = inout("slots", T_I64, w, EXACT), *old = output("old", T_I64, w, EXACT);
    Buf *cmp = input("cmp", T_I64, w, 0, 1), *nw = input("new", T_I64, w, -1000000, 1000000);
    for (int j = 0; j < w; j++) {
        slots->init[j] = (double)(j % 2);
        old->v[j] = slots->init[j];
        slots->v[j] = slots->init[j] == cmp->v[j] ? nw->v[j] : slots->init[j];
    }
    run(AT, "cas_tile", ARGS(P(slots), P(cmp), P(nw), P(old), I(w)), NO_CONSTS);
}

void t_atomics(void)
{
    histogram(1, 1);
    histogram(1000, 7);
    histogram(4097, 64);
    for (int w = 1; w <= 8; w *= 8) {
        tickets(1, w);
        tickets(300, w);
        locked(1, w);
        locked(200, w);
        last_program(1, w);
        last_program(5000, w);
    }
    split_k(37, 45, 100, 3);
    split_k(64, 32, 64, 1);
    split_k(5, 70, 300, 7);
    sum_squares(1);
    sum_squares(10007);
    columns_i32(1, 64);
    columns_i32(100, 37);
    columns_u64(64, 50);
    columns_f32(128, 61);
    add_types(20, 13);
    cas_tile(1);
    cas_tile(29);
}
