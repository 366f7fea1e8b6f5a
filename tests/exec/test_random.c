/* test_random.c: the random group of the execution tests (tests/exec/random.tile and
 * examples/dropout.tile) against Philox4x32 written here from its definition: randint and rand
 * (and their 4x forms) bit-exact on every backend, randn within the precision of the backend's
 * log, cos and sin. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "test_exec.h"

#define RND "tests/exec/random.tile"

/* Philox4x32 with `rounds` rounds of counter c under key (k0, k1): c becomes its 4 words. */
static void philox_words(uint32_t c[4], uint32_t k0, uint32_t k1, int rounds)
{
    for (int r = 0; r < rounds; r++) {
        uint64_t p0 = (uint64_t)0xD2511F53u * c[0], p1 = (uint64_t)0xCD9E8D57u * c[2];
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c[1] ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c[3] ^ k1;
        c[1] = (uint32_t)p1, c[3] = (uint32_t)p0, c[0] = n0, c[2] = n2;
        k0 += 0x9E3779B9u, k1 += 0xBB67AE85u;
    }
}

/* ... of counter (c0, c1, 0, 0) */
static void philox(uint32_t c0, uint32_t c1, uint32_t k0, uint32_t k1, int rounds, uint32_t out[4])
{
    uint32_t c[4] = {c0, c1, 0, 0};
    philox_words(c, k0, k1, rounds);
    memcpy(out, c, sizeof c);
}

static void draw(int64_t seed, int64_t offset, int wide, int rounds, uint32_t out[4])
{
    uint64_t s = (uint64_t)seed, o = (uint64_t)offset;
    philox((uint32_t)o, wide ? (uint32_t)(o >> 32) : 0, (uint32_t)s, (uint32_t)(s >> 32), rounds, out);
}

static double uniform(uint32_t x) { return (double)(x >> 8) * 0x1p-24; }

/* Box-Muller of words w[0] (u1 in (0, 1)) and w[1]: the cosine's value, or the sine's */
static double normal_of(const uint32_t w[2], int sine)
{
    double u1 = (double)((w[0] >> 9) * 2 + 1) * 0x1p-24, u2 = uniform(w[1]);
    double th = 6.283185307179586 * u2;
    return sqrt(-2 * log(u1)) * (sine ? sin(th) : cos(th));
}

static double normal(const uint32_t w[2]) { return normal_of(w, 0); }

static void random_i32(int n, int32_t seed)
{
    begin("random i32 offsets n=%d seed=%d", n, seed);
    Buf *bits = output("randint", T_U32, n, EXACT), *uni = output("rand", T_F32, n, EXACT);
    Buf *nrm = output("randn", T_F32, n, 2e-6), *bits7 = output("randint n_rounds=7", T_U32, n, EXACT);
    for (int i = 0; i < n; i++) {
        uint32_t w[4], w7[4];
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
        uint32_t w[4];
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
        uint32_t w[4];
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
        uint32_t w[4];
        draw(seed, i, 0, 10, w);
        o->v[i] = uniform(w[0]) >= (float)p ? (float)x->v[i] / (float)(1 - (float)p) : 0;
    }
    run("examples/dropout.tile", "dropout", ARGS(P(x), P(o), I(n), F(p), I(seed)), NO_CONSTS);
}

static int desc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

/* The token row r samples, in float64; *margin: how far the draw is from the nearest edge of
 * a token's interval, relative to the total (a draw near an edge could go either way in f32). */
static int sample_row(const double *x, int vocab, int K, double T, int64_t seed, int r, double *margin)
{
    double *s = malloc(sizeof(double) * (size_t)vocab), total = 0, cum = 0;
    if (!s)
        exit(1);
    memcpy(s, x, sizeof(double) * (size_t)vocab);
    qsort(s, (size_t)vocab, sizeof(double), desc);
    double top = s[0], kth = s[K - 1];
    free(s);
    for (int i = 0; i < vocab; i++)
        total += x[i] >= kth ? exp((x[i] - top) / T) : 0;
    uint32_t w[4];
    draw(seed, r, 0, 10, w);
    double target = uniform(w[0]) * total;
    int pick = -1;
    *margin = 1;
    for (int i = 0; i < vocab; i++) {
        if (x[i] < kth)
            continue;
        cum += exp((x[i] - top) / T);
        *margin = fmin(*margin, fabs(cum - target) / total);
        if (pick < 0 && cum > target)
            pick = i;
    }
    return pick;
}

static void topk_sampling(int rows, int vocab, double T, int64_t seed)
{
    enum { K = 16 };
    begin("topk_sampling rows=%d vocab=%d K=%d temperature=%g", rows, vocab, K, T);
    Buf *x = input("logits", T_F32, (size_t)rows * vocab, -4, 4), *o = output("token", T_I32, rows, EXACT);
    for (int r = 0; r < rows; r++) {
        double margin = 0;
        for (int tries = 0; tries < 100 && margin < 1e-4; tries++) { /* no draw on an edge */
            for (int i = 0; i < vocab; i++)
                x->v[(size_t)r * vocab + i] = ty_round(T_F32, -4 + 8 * rnd_unit());
            o->v[r] = sample_row(x->v + (size_t)r * vocab, vocab, K, (float)T, seed, r, &margin);
        }
    }
    run("examples/topk_sampling.tile", "topk_sampling",
        ARGS(P(x), P(o), I(rows), I(vocab), F(T), I(seed)),
        CONSTS({"BLOCK", 32})); /* small sorting networks: quick to compile on the sim backends */
}

/* randint4x, rand4x and randn4x: the four words of each draw (randint4x also at 5 rounds) */
static void random_4x(int n, int32_t seed)
{
    begin("randint4x, rand4x, randn4x n=%d seed=%d", n, seed);
    Buf *bits = output("randint4x", T_U32, (size_t)n * 4, EXACT);
    Buf *bits5 = output("randint4x n_rounds=5", T_U32, (size_t)n * 4, EXACT);
    Buf *uni = output("rand4x", T_F32, (size_t)n * 4, EXACT);
    Buf *nrm = output("randn4x", T_F32, (size_t)n * 4, 2e-6);
    for (int i = 0; i < n; i++) {
        uint32_t w[4], w5[4];
        draw(seed, i, 0, 10, w);
        draw(seed, i, 0, 5, w5);
        for (int k = 0; k < 4; k++) {
            size_t j = (size_t)k * n + i;
            bits->v[j] = w[k], bits5->v[j] = w5[k], uni->v[j] = uniform(w[k]);
            nrm->v[j] = normal_of(w + (k & 2), k & 1);
        }
    }
    run(RND, "random_4x", ARGS(P(bits), P(bits5), P(uni), P(nrm), I(n), I(seed)), NO_CONSTS);
}

/* philox(seed, c0, c1, c2, c3) with all four counter words in use: i, 3 i, the scalar 7 and
 * -i (wrapped to u32), at 10 and at 3 rounds */
static void philox_counters(int n, int64_t seed)
{
    begin("philox of four counter words n=%d seed=%lld", n, (long long)seed);
    Buf *w = output("philox", T_U32, (size_t)n * 4, EXACT), *w3 = output("philox n_rounds=3", T_U32, (size_t)n * 4, EXACT);
    for (int i = 0; i < n; i++) {
        uint32_t c[4] = {(uint32_t)i, (uint32_t)(3 * i), 7, (uint32_t)-i}, d[4];
        memcpy(d, c, sizeof c);
        philox_words(c, (uint32_t)seed, (uint32_t)((uint64_t)seed >> 32), 10);
        philox_words(d, (uint32_t)seed, (uint32_t)((uint64_t)seed >> 32), 3);
        for (int k = 0; k < 4; k++)
            w->v[(size_t)k * n + i] = c[k], w3->v[(size_t)k * n + i] = d[k];
    }
    run(RND, "philox_counters", ARGS(P(w), P(w3), I(n), I(seed)), NO_CONSTS);
}

void t_random(void)
{
    topk_sampling(1, 16, 1.0, 3);
    topk_sampling(5, 1000, 0.7, 11);
    topk_sampling(3, 4099, 1.3, -2);
    random_i32(1, 0);
    random_i32(1000, 42);
    random_i32(4097, -7);
    random_i64(300, 0x1FFFFFF00ll, 0x123456789ABCDEFll);
    random_i64(65, -5, -1);
    random_scalar(50, 3);
    random_4x(1, 5);
    random_4x(777, -3);
    philox_counters(1, 9), philox_counters(300, 0x123456789ll);
    dropout(1, 0.5, 1);
    dropout(100003, 0.1, 1234);
}
