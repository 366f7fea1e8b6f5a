/* test_sim_ops.c: the emulator's matrix collectives and cp.async, from hand-written C
 * kernels. mma: fragments are built from whole random matrices with the PTX ISA's tables
 * (written here independently of runtime/sim_warp.c) and the whole D is compared with a
 * float64 / int64 reference. ldmatrix: x1, x2, x4, with and without .trans. cp.async: old
 * bytes before the wait, new ones after, zero-filled tails, groups completing in order. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sim_abi.h"
#include "test_sim.h"

static uint64_t rng = 12345;

static uint32_t rnd(void)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng >> 33);
}

/* ---- mma ---- */

typedef struct MmaData {
    int kind;
    uint32_t a[2][32][4], b[2][32][2], c[2][32][4], d[2][32][4];
} MmaData;

typedef struct Mats {
    double A[16][32], B[32][8], C[16][8];
    uint32_t Araw[16][32], Braw[32][8], Craw[16][8]; /* element bits */
} Mats;

/* The PTX ISA's fragment tables, g = groupID, t = threadID_in_group. */
static void a_pos(int kind, int g, int t, int i, int *row, int *col)
{
    if (kind == TILE_SIM_MMA_M16N8K8_TF32_F32) {
        *row = (i == 0 || i == 2) ? g : g + 8;
        *col = i < 2 ? t : t + 4;
    } else if (kind == TILE_SIM_MMA_M16N8K32_S8_S32) {
        *row = (i < 4 || (i >= 8 && i < 12)) ? g : g + 8;
        *col = t * 4 + (i & 3) + (i >= 8 ? 16 : 0);
    } else {
        *row = (i < 2 || (i >= 4 && i < 6)) ? g : g + 8;
        *col = t * 2 + (i & 1) + (i >= 4 ? 8 : 0);
    }
}

static int b_pos(int kind, int t, int i)
{
    if (kind == TILE_SIM_MMA_M16N8K8_TF32_F32)
        return i == 0 ? t : t + 4;
    if (kind == TILE_SIM_MMA_M16N8K32_S8_S32)
        return t * 4 + (i & 3) + (i >= 4 ? 16 : 0);
    return t * 2 + (i & 1) + (i >= 2 ? 8 : 0);
}

static uint32_t f32_bits(float f)
{
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}

static float bits_f32(uint32_t b)
{
    float f;
    memcpy(&f, &b, 4);
    return f;
}

/* f16 bits of n/16 (exact; |n| <= 64). */
static uint32_t f16_of(int n)
{
    if (n == 0)
        return 0;
    int e;
    double f = frexp(fabs(n / 16.0), &e);
    return (n < 0 ? 0x8000u : 0) | (uint32_t)(e - 1 + 15) << 10 | (uint32_t)((2 * f - 1) * 1024);
}

/* A random element of the kind's input type: its value and its bits. */
static double rand_elem(int kind, uint32_t *bits)
{
    int n = (int)(rnd() % 97) - 48;
    switch (kind) {
    case TILE_SIM_MMA_M16N8K16_F16_F32: *bits = f16_of(n); return n / 16.0;
    case TILE_SIM_MMA_M16N8K16_BF16_F32: *bits = f32_bits(n / 16.0f) >> 16; return n / 16.0;
    case TILE_SIM_MMA_M16N8K8_TF32_F32: {
        float f = (float)((double)rnd() / 2147483648.0 * 4.0 - 2.0);
        *bits = f32_bits(f); /* full f32 bits: the low 13 are ignored (truncated) */
        return bits_f32(*bits & 0xffffe000u);
    }
    default: *bits = (uint32_t)(n * 8 / 3) & 0xff; return (int8_t)*bits;
    }
}

static void make_mats(int kind, int K, Mats *m)
{
    for (int r = 0; r < 16; r++)
        for (int k = 0; k < K; k++)
            m->A[r][k] = rand_elem(kind, &m->Araw[r][k]);
    for (int k = 0; k < K; k++)
        for (int n = 0; n < 8; n++)
            m->B[k][n] = rand_elem(kind, &m->Braw[k][n]);
    if (kind == TILE_SIM_MMA_M16N8K32_S8_S32) /* D[0][0] = C + 32 * 100 * 100 wraps */
        for (int k = 0; k < K; k++)
            m->A[0][k] = m->B[k][0] = m->Araw[0][k] = m->Braw[k][0] = 100;
    for (int r = 0; r < 16; r++)
        for (int n = 0; n < 8; n++) {
            int s8 = kind == TILE_SIM_MMA_M16N8K32_S8_S32;
            int32_t ci = (int32_t)(rnd() % 2001) - 1000;
            if (s8 && r == 0 && n == 0)
                ci = INT32_MAX - 5; /* the sum wraps */
            float cf = (float)((double)rnd() / 2147483648.0 - 0.5);
            m->C[r][n] = s8 ? (double)ci : (double)cf;
            m->Craw[r][n] = s8 ? (uint32_t)ci : f32_bits(cf);
        }
}

/* Packs lane (g, t)'s fragments: elements in order, low bits first. */
static void pack(int kind, const Mats *m, int lane, uint32_t a[4], uint32_t b[2], uint32_t c[4])
{
    int g = lane >> 2, t = lane & 3;
    int per = kind == TILE_SIM_MMA_M16N8K8_TF32_F32 ? 1
            : kind == TILE_SIM_MMA_M16N8K32_S8_S32 ? 4 : 2, w = 32 / per;
    memset(a, 0, 16), memset(b, 0, 8);
    for (int i = 0; i < 4 * per; i++) {
        int r, col;
        a_pos(kind, g, t, i, &r, &col);
        a[i / per] |= m->Araw[r][col] << (w * (i % per));
    }
    for (int i = 0; i < 2 * per; i++)
        b[i / per] |= m->Braw[b_pos(kind, t, i)][g] << (w * (i % per));
    for (int i = 0; i < 4; i++)
        c[i] = m->Craw[i < 2 ? g : g + 8][t * 2 + (i & 1)];
}

static void k_mma(void **args, const int32_t *grid, void *th)
{
    MmaData *d = args[0];
    int t = tile_sim_thread_id(th), w = t / 32, lane = t % 32;
    uint32_t a[4], b[2], c[4], out[4]; /* on the thread's stack, as in generated code */
    memcpy(a, d->a[w][lane], sizeof a);
    memcpy(b, d->b[w][lane], sizeof b);
    memcpy(c, d->c[w][lane], sizeof c);
    tile_sim_mma(th, d->kind, a, b, c, w ? c : out); /* warp 1 accumulates in place */
    memcpy(d->d[w][lane], w ? c : out, sizeof out);
}

static int check_d(int kind, int K, const Mats *m, const uint32_t d[32][4])
{
    for (int lane = 0; lane < 32; lane++)
        for (int i = 0; i < 4; i++) {
            int r = (lane >> 2) + (i < 2 ? 0 : 8), n = (lane & 3) * 2 + (i & 1);
            double s = m->C[r][n];
            for (int k = 0; k < K; k++)
                s += m->A[r][k] * m->B[k][n];
            if (kind == TILE_SIM_MMA_M16N8K32_S8_S32) {
                CHECK(d[lane][i] == (uint32_t)(int64_t)s);
            } else {
                double got = bits_f32(d[lane][i]);
                if (fabs(got - s) > 1e-6 * (fabs(s) + 1)) {
                    fprintf(stderr, "mma kind %d: D[%d][%d] = %.9g, want %.9g\n", kind, r, n,
                            got, s);
                    return 1;
                }
            }
        }
    return 0;
}

int t_mma(void)
{
    static MmaData d;
    static Mats m[2];
    static const int ks[4] = { 16, 16, 8, 32 };
    char err[SIM_TEST_ERR];
    for (int kind = 0; kind < 4; kind++)
        for (int rep = 0; rep < 3; rep++) {
            d.kind = kind;
            for (int w = 0; w < 2; w++) {
                make_mats(kind, ks[kind], &m[w]);
                for (int lane = 0; lane < 32; lane++)
                    pack(kind, &m[w], lane, d.a[w][lane], d.b[w][lane], d.c[w][lane]);
            }
            CHECK_RUN(sim_test_run(k_mma, &d, 64, 0, 0, err) == 0, err);
            for (int w = 0; w < 2; w++)
                if (check_d(kind, ks[kind], &m[w], d.d[w]))
                    return 1;
        }
    return 0;
}

/* ---- ldmatrix ---- */

enum { LDM_STRIDE = 48 }; /* bytes between rows: 16-byte aligned, padded */

typedef struct LdmData {
    int nmat, trans;
    uint32_t out[64][4];
} LdmData;

static uint16_t ldm_value(int j, int r, int c) { return (uint16_t)(j * 1000 + r * 8 + c); }

/* What lane i receives of matrix j: row i/4, columns 2(i%4) and 2(i%4)+1 (of the transpose). */
static uint32_t ldm_expected(int j, int i, int trans)
{
    int r = i / 4, c = (i % 4) * 2;
    if (trans)
        return ldm_value(j, c, r) | (uint32_t)ldm_value(j, c + 1, r) << 16;
    return ldm_value(j, r, c) | (uint32_t)ldm_value(j, r, c + 1) << 16;
}

static void k_ldmatrix(void **args, const int32_t *grid, void *th)
{
    LdmData *d = args[0];
    int t = tile_sim_thread_id(th), lane = t % 32;
    char *sm = tile_sim_smem(th);
    for (int e = t; e < 4 * 8 * 8; e += 64) { /* every thread stores a few elements */
        int j = e / 64, r = e / 8 % 8, c = e % 8;
        uint16_t *p = (uint16_t *)(sm + j * 8 * LDM_STRIDE + r * LDM_STRIDE) + c;
        tile_sim_smem_access(th, p, 2, 1);
        *p = ldm_value(j, r, c);
    }
    tile_sim_barrier(th);
    int j = lane / 8, r = lane % 8;
    const void *row = j < d->nmat ? sm + j * 8 * LDM_STRIDE + r * LDM_STRIDE : NULL;
    uint32_t out[4] = { 0 };
    tile_sim_ldmatrix(th, d->nmat, d->trans, row, out);
    memcpy(d->out[t], out, sizeof out);
}

int t_ldmatrix(void)
{
    static LdmData d;
    char err[SIM_TEST_ERR];
    static const int nmats[3] = { 1, 2, 4 };
    for (int n = 0; n < 3; n++)
        for (int trans = 0; trans < 2; trans++) {
            d.nmat = nmats[n], d.trans = trans;
            memset(d.out, 0, sizeof d.out);
            CHECK_RUN(sim_test_run(k_ldmatrix, &d, 64, 4 * 8 * LDM_STRIDE, 0, err) == 0, err);
            for (int t = 0; t < 64; t++)
                for (int j = 0; j < 4; j++)
                    CHECK(d.out[t][j] == (j < d.nmat ? ldm_expected(j, t % 32, trans) : 0));
        }
    return 0;
}

/* ---- cp.async ---- */

typedef struct AsyncData {
    uint8_t src[32][16], src2[32][16];
    uint8_t before[32][16], mid_x[32][16], mid_y[32][16], after_y[32][16];
} AsyncData;

static void k_async(void **args, const int32_t *grid, void *th)
{
    AsyncData *d = args[0];
    int t = tile_sim_thread_id(th);
    uint8_t *sm = tile_sim_smem(th), *x = sm + 16 * t, *y = sm + 512 + 16 * t;
    tile_sim_smem_access(th, x, 16, 1);
    memset(x, 0xa0 + t % 16, 16);
    tile_sim_smem_access(th, y, 16, 1);
    memset(y, 0xa0 + t % 16, 16);
    tile_sim_cp_async(th, x, d->src[t], 16, t % 17); /* group 0: a tail of 16 - t%17 zeros */
    tile_sim_cp_async_commit(th);
    tile_sim_cp_async(th, y, d->src2[t], 8, 8); /* group 1: two copies */
    tile_sim_cp_async(th, y + 8, d->src2[t] + 8, 8, 8);
    tile_sim_cp_async_commit(th);
    memcpy(d->before[t], x, 16); /* no hook: what a racy load would see */
    tile_sim_cp_async_wait(th, 1);
    memcpy(d->mid_x[t], x, 16);
    memcpy(d->mid_y[t], y, 16);
    tile_sim_smem_access(th, x, 16, 0); /* allowed now */
    tile_sim_cp_async_wait(th, 0);
    tile_sim_smem_access(th, y, 16, 0);
    memcpy(d->after_y[t], y, 16);
}

int t_cp_async(void)
{
    static AsyncData d;
    char err[SIM_TEST_ERR];
    for (int t = 0; t < 32; t++)
        for (int i = 0; i < 16; i++)
            d.src[t][i] = (uint8_t)(t * 16 + i + 1), d.src2[t][i] = (uint8_t)(t + i * 3 + 7);
    CHECK_RUN(sim_test_run(k_async, &d, 32, 1024, 0, err) == 0, err);
    for (int t = 0; t < 32; t++)
        for (int i = 0; i < 16; i++) {
            uint8_t old = (uint8_t)(0xa0 + t % 16);
            CHECK(d.before[t][i] == old);
            CHECK(d.mid_x[t][i] == (i < t % 17 ? d.src[t][i] : 0));
            CHECK(d.mid_y[t][i] == old); /* group 1 still pending after wait_group 1 */
            CHECK(d.after_y[t][i] == d.src2[t][i]);
        }
    return 0;
}

static void k_async_bad(void **args, const int32_t *grid, void *th)
{
    const int *data = args[0];
    int how = data[0], t = tile_sim_thread_id(th);
    uint8_t *sm = tile_sim_smem(th);
    const uint8_t *src = (const uint8_t *)(data + 16);
    if (how == 0 && t == 0) { /* reads the destination before the wait */
        tile_sim_cp_async(th, sm, src, 16, 16);
        tile_sim_cp_async_commit(th);
        tile_sim_smem_access(th, sm + 4, 4, 0);
    }
    if (how == 1) { /* the wait is missing before the barrier */
        if (t == 0) {
            tile_sim_cp_async(th, sm + 16, src, 16, 16);
            tile_sim_cp_async_commit(th);
        }
        tile_sim_barrier(th);
        if (t == 1)
            tile_sim_smem_access(th, sm + 20, 4, 0);
    }
    if (how == 2 && t == 2) /* completed, but another thread reads without a barrier */
        tile_sim_cp_async(th, sm + 32, src, 8, 8), tile_sim_cp_async_commit(th),
            tile_sim_cp_async_wait(th, 0);
    if (how == 2 && t == 3)
        tile_sim_smem_access(th, sm + 36, 4, 0);
    if (how == 3 && t == 4)
        tile_sim_cp_async(th, sm, src, 12, 12);
    if (how == 4 && t == 5)
        tile_sim_cp_async(th, sm + 8, src, 16, 16);
    if (how == 5 && t == 6)
        tile_sim_cp_async(th, sm + 64, src, 16, 16);
}

int t_cp_async_errors(void)
{
    static int how[32]; /* how[0] is the case; the source bytes follow */
    char err[SIM_TEST_ERR];
    static const char *want[6] = {
        "thread 0 (warp 0, lane 0) reads byte 4, which a cp.async of thread 0 (warp 0, lane 0) "
        "has not written yet (missing cp.async.wait_group?)",
        "thread 1 (warp 0, lane 1) reads byte 20, which a cp.async of thread 0 (warp 0, lane 0) "
        "has not written yet",
        "shared-memory race: thread 3 (warp 0, lane 3) reads byte 36 (a 4-byte access at offset "
        "36), which thread 2 (warp 0, lane 2) wrote since the last barrier",
        "cp.async: thread 4 (warp 0, lane 4) issues a copy of 12 bytes (12 from global): the size "
        "must be 4, 8 or 16",
        "the destination is not aligned to the size",
        "shared memory out of bounds: thread 6 (warp 0, lane 6) gives cp.async a destination of "
        "16 bytes at offset 64 of 64",
    };
    for (int c = 0; c < 6; c++) {
        how[0] = c;
        CHECK(sim_test_run(k_async_bad, how, 32, 64, 0, err) != 0);
        HAS(err, want[c]);
    }
    return 0;
}
