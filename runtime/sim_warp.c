/* sim_warp.c: warp collectives, computed once all lanes of a warp (32, or AMD's 64) wait at
 * one. Shuffles are shfl.sync with a full mask (a lane past the warp keeps its own value);
 * AMD's MFMA follows the ISA's matrix layouts (sim_abi.h); mma.sync and ldmatrix follow the fragment
 * tables of the PTX ISA (groupID = lane / 4, threadID_in_group = lane % 4). mma: products are
 * exact (f16, bf16 and tf32 products fit a double), the k products and c are summed in double
 * and rounded once to f32; tf32 inputs keep their top 19 bits (the low 13 mantissa bits are
 * ignored, truncation, as the hardware does); s8 sums are exact and wrap to 32 bits. */
#include <math.h>
#include <string.h>
#include "sim_abi.h"
#include "sim_int.h"

/* ---- shuffles ---- */

static void shfl_xor(SimThread *l, int warp)
{
    for (int i = 0; i < warp; i++) {
        uint32_t j = (uint32_t)i ^ (uint32_t)l[i].arg; /* past the last lane: its own value */
        l[i].result = j < (uint32_t)warp ? l[j].value : l[i].value;
    }
}

static void shfl_idx(SimThread *l, int warp)
{
    for (int i = 0; i < warp; i++)
        l[i].result = l[(uint32_t)l[i].arg & (uint32_t)(warp - 1)].value;
}

/* ---- mma.sync ---- */

typedef struct MmaShape {
    int k;        /* m16 n8 kK */
    int per_word; /* elements per 32-bit register: 2 (16-bit), 1 (tf32), 4 (s8) */
} MmaShape;

static MmaShape mma_shape(int kind)
{
    switch (kind) {
    case TILE_SIM_MMA_M16N8K8_TF32_F32: return (MmaShape){8, 1};
    case TILE_SIM_MMA_M16N8K32_S8_S32: return (MmaShape){32, 4};
    default: return (MmaShape){16, 2};
    }
}

/* Row and column of element i of lane's A fragment (16 x K). */
static void a_coord(int kind, int lane, int i, int *row, int *col)
{
    int g = lane >> 2, t = lane & 3;
    switch (kind) {
    case TILE_SIM_MMA_M16N8K8_TF32_F32:
        *row = g + 8 * (i & 1), *col = t + 4 * (i >> 1);
        break;
    case TILE_SIM_MMA_M16N8K32_S8_S32:
        *row = g + 8 * ((i >> 2) & 1), *col = 4 * t + (i & 3) + 16 * (i >> 3);
        break;
    default:
        *row = g + 8 * ((i >> 1) & 1), *col = 2 * t + (i & 1) + 8 * (i >> 2);
    }
}

/* Row (k) of element i of lane's B fragment (K x 8); its column is groupID. */
static int b_row(int kind, int lane, int i)
{
    int t = lane & 3;
    switch (kind) {
    case TILE_SIM_MMA_M16N8K8_TF32_F32: return t + 4 * i;
    case TILE_SIM_MMA_M16N8K32_S8_S32: return 4 * t + (i & 3) + 16 * (i >> 2);
    default: return 2 * t + (i & 1) + 8 * (i >> 1);
    }
}

static double f16_value(uint32_t h)
{
    int e = (int)(h >> 10 & 0x1f), m = (int)(h & 0x3ff);
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
    return h & 0x8000 ? -v : v;
}

static double f32_value(uint32_t bits)
{
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

/* Element i of a fragment of registers `w` as a double. */
static double element(int kind, const uint32_t *w, int i)
{
    MmaShape sh = mma_shape(kind);
    int word = i / sh.per_word, part = i % sh.per_word;
    uint32_t x = w[word];
    switch (kind) {
    case TILE_SIM_MMA_M16N8K16_F16_F32: return f16_value(x >> (16 * part) & 0xffff);
    case TILE_SIM_MMA_M16N8K16_BF16_F32: return f32_value((x >> (16 * part) & 0xffff) << 16);
    case TILE_SIM_MMA_M16N8K8_TF32_F32: return f32_value(x & 0xffffe000u);
    default: return (int8_t)(x >> (8 * part) & 0xff);
    }
}

/* D = A * B + C over the warp: gathers every lane's fragments, then scatters D (which may
 * alias C). */
static void mma(SimThread *l, int kind)
{
    MmaShape sh = mma_shape(kind);
    double A[16][32], B[32][8], C[16][8];
    for (int lane = 0; lane < 32; lane++) {
        for (int i = 0; i < 4 * sh.per_word; i++) {
            int r, c;
            a_coord(kind, lane, i, &r, &c);
            A[r][c] = element(kind, l[lane].a, i);
        }
        for (int i = 0; i < 2 * sh.per_word; i++)
            B[b_row(kind, lane, i)][lane >> 2] = element(kind, l[lane].b, i);
        for (int i = 0; i < 4; i++) {
            uint32_t c = l[lane].c[i];
            C[(lane >> 2) + 8 * (i >> 1)][2 * (lane & 3) + (i & 1)] =
                kind == TILE_SIM_MMA_M16N8K32_S8_S32 ? (double)(int32_t)c : f32_value(c);
        }
    }
    for (int lane = 0; lane < 32; lane++)
        for (int i = 0; i < 4; i++) {
            int r = (lane >> 2) + 8 * (i >> 1), n = 2 * (lane & 3) + (i & 1);
            double s = C[r][n];
            for (int k = 0; k < sh.k; k++)
                s += A[r][k] * B[k][n];
            float f = (float)s;
            uint32_t bits;
            memcpy(&bits, &f, 4);
            l[lane].d[i] = kind == TILE_SIM_MMA_M16N8K32_S8_S32 ? (uint32_t)(int64_t)s : bits;
        }
}

/* ---- AMD MFMA (wave64) ---- */

static double half_value(int bf16, uint32_t x)
{
    return bf16 ? f32_value(x << 16) : f16_value(x);
}

/* Element i (0..3) of a lane's 4 16-bit operand elements. */
static uint32_t elem16(const uint32_t *w, int i) { return w[i / 2] >> (16 * (i % 2)) & 0xffff; }

/* Row of accumulator element i of `lane` (its column is lane % inst). */
static int mfma_row(int inst, int lane, int i)
{
    return inst == 16 ? 4 * (lane / 16) + i : 8 * (i / 4) + 4 * ((lane / 32) % 2) + i % 4;
}

/* D = A * B + C over the wave, in double, rounded once to f32. */
static void mfma(SimThread *l, int bf16, int inst)
{
    int K = inst == 16 ? 16 : 8, nacc = inst * inst / 64;
    double A[32][16], B[16][32], C[32][32];
    for (int lane = 0; lane < 64; lane++) {
        for (int i = 0; i < 4; i++) {
            int k = 4 * (lane / inst) + i;
            A[lane % inst][k] = half_value(bf16, elem16(l[lane].a, i));
            B[k][lane % inst] = half_value(bf16, elem16(l[lane].b, i));
        }
        for (int i = 0; i < nacc; i++)
            C[mfma_row(inst, lane, i)][lane % inst] = f32_value(l[lane].c[i]);
    }
    for (int lane = 0; lane < 64; lane++)
        for (int i = 0; i < nacc; i++) {
            int r = mfma_row(inst, lane, i), c = lane % inst;
            double s = C[r][c];
            for (int k = 0; k < K; k++)
                s += A[r][k] * B[k][c];
            float f = (float)s;
            memcpy(&l[lane].d[i], &f, 4);
        }
}

/* ---- ldmatrix ---- */

/* Reads row r of matrix j from the address lane 8j + r gives (16 bytes, 16-byte aligned). */
static int ldm_row(SimState *s, SimThread *lane, uint16_t row[8])
{
    uint32_t off;
    if (sim_shadow_offset(s, lane, lane->addr, 16, "gives ldmatrix a row of", &off) != 0)
        return -1;
    if (off % 16) {
        char who[48];
        return sim_fail(s, "ldmatrix: %s gives a row address at offset %u, not 16-byte aligned",
                        sim_who(lane->id, who), off);
    }
    if (sim_shadow_access(s, lane, lane->addr, 16, SH_READ) != 0)
        return -1;
    memcpy(row, s->smem + off, 16);
    return 0;
}

static int ldmatrix(SimState *s, SimThread *l)
{
    int nmat = l[0].kind, trans = l[0].trans;
    uint16_t m[4][8][8];
    for (int j = 0; j < nmat; j++)
        for (int r = 0; r < 8; r++)
            if (ldm_row(s, &l[8 * j + r], m[j][r]) != 0)
                return -1;
    for (int i = 0; i < 32; i++)
        for (int j = 0; j < nmat; j++) {
            int r = i >> 2, c = 2 * (i & 3);
            uint32_t lo = trans ? m[j][c][r] : m[j][r][c];
            uint32_t hi = trans ? m[j][c + 1][r] : m[j][r][c + 1];
            l[i].d[j] = lo | hi << 16;
        }
    return 0;
}

/* ---- dispatch ---- */

/* Lanes of one collective must agree on its shape. */
static int agree(SimState *s, SimThread *l)
{
    for (int i = 1; i < s->warp; i++)
        if (l[i].kind != l[0].kind || l[i].trans != l[0].trans || l[i].inst != l[0].inst) {
            char a[48], b[48];
            return sim_fail(s, "divergent barrier/shuffle: %s and %s wait at %s of different "
                            "shapes (%d%s, %d%s)", sim_who(l[0].id, a), sim_who(l[i].id, b),
                            l[0].wait == SW_MMA    ? "mma.sync"
                            : l[0].wait == SW_MFMA ? "mfma"
                                                   : "ldmatrix", l[0].kind,
                            l[0].trans ? " trans" : "", l[i].kind, l[i].trans ? " trans" : "");
        }
    return 0;
}

int sim_warp_complete(SimState *s, SimThread *lanes)
{
    switch (lanes[0].wait) {
    case SW_SHFL_XOR: shfl_xor(lanes, s->warp); return 0;
    case SW_SHFL_IDX: shfl_idx(lanes, s->warp); return 0;
    case SW_MFMA:
        if (s->warp != 64)
            return sim_fail(s, "mfma in a warp of %d lanes (AMD's waves have 64)", s->warp);
        if (agree(s, lanes) != 0)
            return -1;
        mfma(lanes, lanes[0].kind, lanes[0].inst);
        return 0;
    case SW_MMA:
        if (s->warp != 32)
            return sim_fail(s, "mma.sync in a warp of %d lanes (32 on NVIDIA)", s->warp);
        if (agree(s, lanes) != 0)
            return -1;
        mma(lanes, lanes[0].kind);
        return 0;
    case SW_LDMATRIX:
        if (s->warp != 32)
            return sim_fail(s, "ldmatrix in a warp of %d lanes (32 on NVIDIA)", s->warp);
        return agree(s, lanes) != 0 ? -1 : ldmatrix(s, lanes);
    default: return sim_fail(s, "internal error: no collective to complete");
    }
}
