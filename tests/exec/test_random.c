/* test_random.c: the random group of the execution tests (tests/exec/random.tile and
 * examples/dropout.tile) against Philox4x32 written here from its definition: randint and rand
 * bit-exact on every backend, randn within the precision of the backend's log and cos. */
#include <math.h>
#include <stdint.h>
#include "test_exec.h"

#define RND "tests/exec/random.tile"

/* Philox4x32 with `rounds` rounds of counter (c0, c1, 0, 0) under key (k0, k1): word 0 and 1. */
static void philox(uint32_t c0, uint32_t c1, uint32_t k0, uint32_t k1, int rounds, uint32_t out[2])
{
    uint32_t c[4] = {c0, c1, 0, 0};
    for (int r = 0; r < rounds; r++) {
        uint64_t p0 = (uint64_t)0xD2511F53u * c[0], p1 = (uint64_t)0xCD9E8D57u * c[2];
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c[1] ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c[3] ^ k1;
        c[1] = (uint32_t)p1, c[3] = (uint32_t)p0, c[0] = n0, c[2] = n2;
        k0 += 0x9E3779B9u, k1 += 0xBB67AE85u;
    }
    out[0] = c[0], out[1] = c[1];
}

static void draw(int64_t seed, int64_t offset, int wide, int rounds, uint32_t out[2])
{
    uint64_t s = (uint64_t)seed, o = (uint64_t)offset;
    philox((uint32_t)o, wide ? (uint32_t)(o >> 32) : 0, (uint32_t)s, (uint32_t)(s >> 32), rounds, out);
}

static double uniform(uint32_t x) { return (double)(x >> 8) * 0x1p-24; }

static double normal(const uint32_t w[2])
{
    double u1 = (double)((w[0] >> 9) * 2 + 1) * 0x1p-24, u2 = uniform(w[1]);
    return sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
}

static void random_i32(int n, int32_t seed)
{
    begin("random i32 offsets n=%d seed=%d", n, seed);
    Buf *bits = output("randint", T_U32, n, EXACT), *uni = output("rand", T_F32, n, EXACT);
    Buf *nrm = output("randn", T_F32, n, 2e-6), *bits7 = output("randint n_rounds=7", T_U32, n, EXACT);
    for (int i = 0; i < n; i++) {
        uint32_t w[2], w7[2];
        draw(seed, i, 0, 10, w);
        draw(seed, i, 0, 7, w7);
        bits->v[i] = w[0], uni->v[i] = uniform(w[0]), nrm->v[i] = normal(w), bits7->v[i] = w7[0];
    }
    run(RND, "random_i32", ARGS(P(bits), P(uni), P(nrm), P(bits7), I(n), I(seed)), NO_CONSTS);
}

static void random_i64(int n, int64_t base, int64_t seed)
{
    begin("random i64 offsets n=%d base=%lld seed=%lld", n, (long long)base, (long long)seed);
    Buf *bits = output("randint", T_U32, n, EXACT), *uni = output("rand", T_F32, n, EXACT);
    for (int i = 0; i < n; i++) {
        uint32_t w[2];
        draw(seed, base + i, 1, 10, w);
        bits->v[i] = w[0], uni->v[i] = uniform(w[0]);
    }
    run(RND, "random_i64", ARGS(P(bits), P(uni), I(n), I(base), I(seed)), NO_CONSTS);
}

static void random_scalar(int n, int32_t seed)
{
    begin("random scalar offsets programs=%d", n);
    Buf *bits = output("randint", T_U32, n, EXACT);
    for (int i = 0; i < n; i++) {
        uint32_t w[2];
        draw(seed, (int64_t)i * 7, 0, 10, w);
        bits->v[i] = w[0];
    }
    run(RND, "random_scalar", ARGS(P(bits), I(n), I(seed)), NO_CONSTS);
}

static void dropout(int n, double p, int64_t seed)
{
    begin("dropout n=%d p=%g", n, p);
    Buf *x = input("x", T_F32, n, -1, 1), *o = output("out", T_F32, n, TOL_F32);
    for (int i = 0; i < n; i++) {
        uint32_t w[2];
        draw(seed, i, 0, 10, w);
        o->v[i] = uniform(w[0]) >= (float)p ? (float)x->v[i] / (float)(1 - (float)p) : 0;
    }
    run("examples/dropout.tile", "dropout", ARGS(P(x), P(o), I(n), F(p), I(seed)), NO_CONSTS);
}

void t_random(void)
{
    random_i32(1, 0);
    random_i32(1000, 42);
    random_i32(4097, -7);
    random_i64(300, 0x1FFFFFF00ll, 0x123456789ABCDEFll);
    random_i64(65, -5, -1);
    random_scalar(50, 3);
    dropout(1, 0.5, 1);
    dropout(100003, 0.1, 1234);
}
