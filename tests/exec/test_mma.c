/* test_mma.c: the "mma" group of the execution tests (tests/exec/mma.tile): every dot type
 * (f16, bf16, i8, f32 with and without tf32) at shapes from one mma instruction up, with masked
 * edges, K loops of 0, 1, 2 and many steps, 1 to 8 warps, and operands row-major or transposed
 * in memory; then the ways an accumulator leaves its layout, and chained products. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "test_exec.h"

#define MMA "tests/exec/mma.tile"

typedef struct Shape {
    int M, N, K, BM, BN, BK, warps, stages;
} Shape;

/* stages: the software pipeline's depth (1: none); with S stages a loop of fewer than S - 1
 * steps only ever reads prologue copies */
static const Shape shapes[] = {
    {16, 8, 16, 16, 8, 16, 1, 2},      /* one instruction */
    {33, 17, 40, 16, 16, 16, 1, 4},    /* masks on every edge, three K steps */
    {20, 20, 0, 16, 16, 16, 2, 3},     /* no K step: the accumulator's zeros */
    {64, 64, 16, 64, 64, 16, 4, 3},    /* one K step */
    {64, 48, 64, 64, 32, 32, 4, 3},    /* two K steps, two column blocks, one masked */
    {130, 70, 100, 64, 32, 32, 4, 2},  /* many programs and steps, masked */
    {128, 128, 64, 128, 128, 32, 8, 1},
    {40, 72, 24, 32, 64, 16, 2, 4},
    {64, 64, 200, 64, 64, 16, 4, 3},   /* many K steps, the last one masked */
    {17, 9, 33, 16, 8, 16, 1, 5},      /* more stages than steps */
};

enum { F16, BF16, I8, TF32, F32, KINDS };
static const char *const kernel[KINDS] = {"mm_f16", "mm_bf16", "mm_i8", "mm_tf32", "mm_f32"};

static void one_case(int kind, const Shape *s, int at, int bt)
{
    static const Ty in_ty[KINDS] = {T_F16, T_BF16, T_I8, T_F32, T_F32};
    int M = s->M, N = s->N, K = s->K, BK = kind == I8 && s->BK < 32 ? 32 : s->BK;
    begin("%s %dx%dx%d blocks %dx%dx%d warps %d stages %d%s%s", kernel[kind], M, N, K, s->BM,
          s->BN, BK, s->warps, s->stages, at ? " A^T" : "", bt ? " B^T" : "");
    double lo = kind == I8 ? -20 : -1, hi = kind == I8 ? 20 : 1;
    Buf *a = input("a", in_ty[kind], (size_t)M * K + 1, lo, hi);
    Buf *b = input("b", in_ty[kind], (size_t)K * N + 1, lo, hi);
    double tol = kind == I8 ? EXACT : kind == TF32 ? 5e-3 : kind == F32 ? TOL_F32 : 1e-4;
    Buf *c = output("c", kind == I8 ? T_I32 : T_F32, (size_t)M * N, tol);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double sum = 0, abs_sum = 0;
            for (int k = 0; k < K; k++) {
                double p = a->v[at ? k * M + i : i * K + k] * b->v[bt ? j * K + k : k * N + j];
                sum += p, abs_sum += fabs(p);
            }
            c->v[i * N + j] = sum;
            /* f16, bf16 and f32 products accumulate in f32: a sum's error bound (products of
             * f32 inputs rounded too); tf32 rounds its inputs, so it keeps its tolerance */
            if (kind == F16 || kind == BF16 || kind == F32)
                sum_bound(c, (size_t)(i * N + j), abs_sum, (size_t)(2 * K));
        }
    if (kind == TF32) /* input_precision="tf32" where A or B (not both) is transposed */
        run(MMA, kernel[kind], ARGS(P(a), P(b), P(c), I(M), I(N), I(K)),
            CONSTS({"BM", s->BM}, {"BN", s->BN}, {"BK", BK}, {"AT", at}, {"BT", bt},
                   {"num_warps", s->warps}, {"num_stages", s->stages}, {"IP", at != bt}));
    else
        run(MMA, kernel[kind], ARGS(P(a), P(b), P(c), I(M), I(N), I(K)),
            CONSTS({"BM", s->BM}, {"BN", s->BN}, {"BK", BK}, {"AT", at}, {"BT", bt},
                   {"num_warps", s->warps}, {"num_stages", s->stages}));
}

/* Rounds a's n values to quarters: their products with small integers, and the f32 sums of
 * those, are exact. */
static void to_quarters(Buf *a, size_t n)
{
    for (size_t i = 0; i < n; i++)
        a->v[i] = rint(a->v[i] * 4) / 4;
}

/* Makes each of s's n values v the power of two 2^rint(v): exact scales. */
static void to_powers_of_two(Buf *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        s->v[i] = ldexp(1, (int)rint(s->v[i]));
}

/* The weight q - 8 at row k, column j of 4-bit weights stored as bytes [N, K / 2], two of a
 * column a byte (row 2i in the low nibble, 2i + 1 in the high one). */
static int packed4(const Buf *w, int j, int k, int K)
{
    int byte = (int)w->v[(size_t)j * (K / 2) + k / 2];
    return (k & 1 ? byte >> 4 : byte & 15) - 8;
}

/* mm_w8 (mma.tile): B stored as i8 or u8 (and A too with cast_a), cast to f16 for the product;
 * small integers, so every product and sum is exact in f32. */
static void weights8(int u8, int cast_a, const Shape *s, int at, int bt)
{
    int M = s->M, N = s->N, K = s->K;
    const char *name = u8 ? "mm_w8_u8" : "mm_w8";
    begin("%s%s %dx%dx%d blocks %dx%dx%d warps %d stages %d%s%s", name, cast_a ? " A cast" : "",
          M, N, K, s->BM, s->BN, s->BK, s->warps, s->stages, at ? " A^T" : "", bt ? " B^T" : "");
    Ty t8 = u8 ? T_U8 : T_I8;
    double lo = u8 ? 0 : -20, hi = 20;
    Buf *a = input("a", T_F16, (size_t)M * K + 1, -4, 4);
    Buf *a8 = input("a8", t8, (size_t)M * K + 1, lo, hi);
    Buf *b = input("b", t8, (size_t)K * N + 1, lo, hi);
    to_quarters(a, (size_t)M * K + 1);
    Buf *c = output("c", T_F32, (size_t)M * N, EXACT);
    const Buf *ax = cast_a ? a8 : a;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double sum = 0;
            for (int k = 0; k < K; k++)
                sum += ax->v[at ? k * M + i : i * K + k] * b->v[bt ? j * K + k : k * N + j];
            c->v[i * N + j] = sum;
        }
    run(MMA, name, ARGS(P(a), P(a8), P(b), P(c), I(M), I(N), I(K)),
        CONSTS({"BM", s->BM}, {"BN", s->BN}, {"BK", s->BK}, {"AT", at}, {"BT", bt},
               {"CAST_A", cast_a}, {"num_warps", s->warps}, {"num_stages", s->stages}));
}

/* The f8e4m3 byte of v, one of 0, +-0.5, +-1, +-1.5, +-2, +-3, +-4 (as a signed byte). */
static int e4m3_byte(double v)
{
    if (v == 0)
        return 0;
    int e;
    double m = frexp(fabs(v), &e) * 2; /* |v| = m 2^(e - 1), 1 <= m < 2 */
    int code = ((e - 1 + 7) << 3) | (int)((m - 1) * 8) | (v < 0 ? 0x80 : 0);
    return code > 127 ? code - 256 : code;
}

/* mm_wq (mma.tile): B dequantized before the product: i8, f8e4m3 (fp8) or packed 4-bit
 * weights times f16 scales per column (g 0), per group of g rows of K as a row each step, or
 * (tile_s) as a tile of scales; twice: the dequantized tile in two products; quarters times
 * small values times powers of two, so every sum is exact. */
static void dequant(const Shape *s, int g, int tile_s, int int4, int twice, int fp8)
{
    int M = s->M, N = s->N, K = int4 ? s->K + (s->K & 1) : s->K, groups = g ? (K + g - 1) / g : 1;
    begin("mm_wq%s%s%s %dx%dx%d blocks %dx%dx%d warps %d stages %d scales %s%d", int4 ? " int4" : "",
          fp8 ? " fp8" : "", twice ? " twice" : "", M, N, K, s->BM, s->BN, s->BK, s->warps, s->stages,
          tile_s ? "tile " : g ? "row " : "column ", g);
    Buf *a = input("a", T_F16, (size_t)M * K + 1, -4, 4);
    Buf *b = input("b", T_I8, (size_t)K * N + 1, -20, 20);
    Buf *q4 = input("q4", T_U8, (size_t)N * (K / 2) + 1, 0, 255);
    Buf *sc = input("s", T_F16, (size_t)groups * N + 1, -2.49, 1.49);
    to_quarters(a, (size_t)M * K + 1);
    to_powers_of_two(sc, (size_t)groups * N + 1); /* 1/4 to 2 */
    static const double f8[] = {0, 0.5, -0.5, 1, -1, 1.5, -1.5, 2, -2, 3, -3, 4, -4};
    double *w8 = fp8 ? calloc((size_t)K * N + 1, sizeof(double)) : NULL;
    for (size_t i = 0; w8 && i < (size_t)K * N + 1; i++) { /* small values f8e4m3 holds exactly */
        w8[i] = f8[(int)fabs(b->v[i]) % 13];
        b->v[i] = e4m3_byte(w8[i]);
    }
    Buf *c = output("c", T_F32, (size_t)M * N, EXACT);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double sum = 0;
            for (int k = 0; k < K; k++) {
                double w = int4 ? packed4(q4, j, k, K) : w8 ? w8[(size_t)k * N + j] : b->v[(size_t)k * N + j];
                sum += a->v[(size_t)i * K + k] * w * sc->v[(size_t)(g ? k / g : 0) * N + j];
            }
            c->v[(size_t)i * N + j] = twice ? 1.5 * sum : sum;
        }
    free(w8);
    run(MMA, "mm_wq", ARGS(P(a), P(b), P(q4), P(sc), P(c), I(M), I(N), I(K)),
        CONSTS({"BM", s->BM}, {"BN", s->BN}, {"BK", s->BK}, {"G", g}, {"TILE_S", tile_s},
               {"INT4", int4}, {"TWICE", twice}, {"FP8", fp8}, {"num_warps", s->warps},
               {"num_stages", s->stages}));
}

/* examples/quant_matmul.tile: matmul_w8 (i8 [K, N]) and matmul_w4 (bytes [N, K / 2], two
 * 4-bit weights q - 8 a byte) with f16 scales per column and group of `group` rows of K, f16
 * out; quarters times integers times powers of two: exact sums, rounded once to f16. */
static void quant_example(int w4, int M, int N, int K, int group, int bm, int bn, int bk,
                          int warps, int stages)
{
    const char *name = w4 ? "matmul_w4" : "matmul_w8";
    int groups = (K + group - 1) / group;
    begin("%s (examples/quant_matmul.tile) %dx%dx%d group %d blocks %dx%dx%d warps %d stages %d",
          name, M, N, K, group, bm, bn, bk, warps, stages);
    Buf *a = input("a", T_F16, (size_t)M * K, -4, 4);
    Buf *w = w4 ? input("w", T_U8, (size_t)N * (K / 2), 0, 255) : input("w", T_I8, (size_t)K * N, -127, 127);
    Buf *sc = input("scales", T_F16, (size_t)groups * N, -6.49, -2.51);
    to_quarters(a, (size_t)M * K);
    to_powers_of_two(sc, (size_t)groups * N); /* 1/64 to 1/8 */
    Buf *c = output("c", T_F16, (size_t)M * N, 1e-3);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double sum = 0;
            for (int k = 0; k < K; k++) {
                double q = w4 ? packed4(w, j, k, K) : w->v[(size_t)k * N + j];
                sum += a->v[(size_t)i * K + k] * q * sc->v[(size_t)(k / group) * N + j];
            }
            c->v[(size_t)i * N + j] = sum;
        }
    run("examples/quant_matmul.tile", name, ARGS(P(a), P(w), P(sc), P(c), I(M), I(N), I(K)),
        CONSTS({"GROUP", group}, {"BLOCK_M", bm}, {"BLOCK_N", bn}, {"BLOCK_K", bk},
               {"num_warps", warps}, {"num_stages", stages}));
}

static void acc_uses(int M, int N, int K, int BM, int BN, int BK, int warps)
{
    begin("acc_uses %dx%dx%d blocks %dx%dx%d warps %d", M, N, K, BM, BN, BK, warps);
    Buf *a = input("a", T_F16, (size_t)M * K, -1, 1), *b = input("b", T_F16, (size_t)K * N, -1, 1);
    Buf *x = input("x", T_F32, (size_t)M * N, -1, 1);
    Buf *o = output("o", T_F32, (size_t)M * N, 1e-4), *ot = output("o_t", T_F32, (size_t)M * N, 1e-4);
    Buf *orow = output("o_rows", T_F32, (size_t)M, 1e-4), *ocol = output("o_cols", T_F32, (size_t)N, 1e-4);
    Buf *omix = output("o_mix", T_F32, (size_t)M * N, 1e-4);
    double *col_abs = calloc((size_t)N + 1, sizeof(double));
    for (int i = 0; i < M && col_abs; i++) {
        double mx = -INFINITY, row_abs = 0;
        for (int j = 0; j < N; j++) {
            double s = 0, sa = 0;
            for (int k = 0; k < K; k++)
                s += a->v[i * K + k] * b->v[k * N + j], sa += fabs(a->v[i * K + k] * b->v[k * N + j]);
            o->v[i * N + j] = ot->v[j * M + i] = s;
            orow->v[i] += s, ocol->v[j] += s;
            row_abs += sa, col_abs[j] += sa;
            sum_bound(o, (size_t)(i * N + j), sa, (size_t)K);
            sum_bound(ot, (size_t)(j * M + i), sa, (size_t)K);
        }
        /* sums of sums: their bound counts every product and addition */
        sum_bound(orow, (size_t)i, row_abs, (size_t)(K + N));
        /* the row maximum covers the block's padded columns, which hold zeros */
        for (int j = 0; j < BN; j++)
            mx = fmax(mx, j < N ? o->v[i * N + j] : 0.0);
        for (int j = 0; j < N; j++)
            omix->v[i * N + j] = o->v[i * N + j] - mx + x->v[i * N + j];
    }
    for (int j = 0; j < N && col_abs; j++)
        sum_bound(ocol, (size_t)j, col_abs[j], (size_t)(K + M));
    free(col_abs);
    run(MMA, "acc_uses", ARGS(P(a), P(b), P(x), P(o), P(ot), P(orow), P(ocol), P(omix), I(M), I(N), I(K)),
        CONSTS({"BM", BM}, {"BN", BN}, {"BK", BK}, {"num_warps", warps}));
}

static void chain(int M, int warps)
{
    enum { BM = 64, D = 32, BN = 32 };
    begin("chain_bf16 M=%d warps %d", M, warps);
    Buf *a = input("a", T_BF16, (size_t)M * D, -1, 1), *b = input("b", T_BF16, (size_t)D * BN, -1, 1);
    Buf *c = input("c", T_BF16, (size_t)BN * D, -1, 1);
    Buf *o = output("o", T_F32, (size_t)M * D, 1e-2);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < BN; j++) {
            double p = 0;
            for (int k = 0; k < D; k++)
                p += a->v[i * D + k] * b->v[k * BN + j];
            p = ty_round(T_BF16, (double)(float)(p * 0.125)); /* P is stored as bf16 */
            for (int d = 0; d < D; d++)
                o->v[i * D + d] += p * c->v[j * D + d];
        }
    run(MMA, "chain_bf16", ARGS(P(a), P(b), P(c), P(o), I(M)), CONSTS({"num_warps", warps}));
}

/* attn_loop (mma.tile): L keys in blocks of BN against BM query rows of width D. */
static void attn_loop(int BM, int BN, int D, int L, int warps)
{
    begin("attn_loop BM=%d BN=%d D=%d L=%d warps %d", BM, BN, D, L, warps);
    Buf *q = input("q", T_F16, (size_t)BM * D, -1, 1);
    Buf *k = input("k", T_F16, (size_t)(L ? L : 1) * D, -1, 1);
    Buf *v = input("v", T_F16, (size_t)(L ? L : 1) * D, -1, 1);
    Buf *o = output("o", T_F32, (size_t)BM * D, 1e-2);
    for (int i = 0; i < BM; i++)
        for (int j = 0; j < L; j++) {
            double s = 0;
            for (int d = 0; d < D; d++)
                s += q->v[i * D + d] * k->v[j * D + d];
            double x = (1 - 2 / (exp2(s * 0.125) + 1)) * 2.5;
            double p = ty_round(T_F16, (double)(float)exp2(x - 2.5)); /* P is stored as f16 */
            for (int d = 0; d < D; d++)
                o->v[i * D + d] += p * v->v[j * D + d];
        }
    run(MMA, "attn_loop", ARGS(P(q), P(k), P(v), P(o), I(L)),
        CONSTS({"BM", BM}, {"BN", BN}, {"D", D}, {"num_warps", warps}));
}

/* operand_reuse (mma.tile): o[i][j] = sum over key blocks b of (1 + w) (Q K_b^T)[i][j], w = 1
 * when flip > 0 else 0.5 (the second loop), and o_last = Q K_0^T: one Q tile read by dots in
 * two loops, a branch and after them. Masked keys (past L) add nothing. */
static void operand_reuse(int BM, int BN, int D, int L, int flip, int stages)
{
    begin("operand_reuse BM=%d BN=%d D=%d L=%d flip=%d stages %d", BM, BN, D, L, flip, stages);
    Buf *q = input("q", T_F16, (size_t)BM * D, -1, 1);
    Buf *k = input("k", T_F16, (size_t)(L > BN ? L : BN) * D, -1, 1);
    Buf *o = output("o", T_F32, (size_t)BM * BN, 1e-3);
    Buf *last = output("o_last", T_F32, (size_t)BM * BN, 1e-3);
    double w = 1 + (flip > 0 ? 1 : 0.5);
    for (int i = 0; i < BM; i++)
        for (int j = 0; j < L; j++) {
            double s = 0;
            for (int d = 0; d < D; d++)
                s += q->v[i * D + d] * k->v[j * D + d];
            o->v[i * BN + j % BN] += w * s;
            if (j < BN)
                last->v[i * BN + j] = s;
        }
    run(MMA, "operand_reuse", ARGS(P(q), P(k), P(o), P(last), I(L), I(flip)),
        CONSTS({"BM", BM}, {"BN", BN}, {"D", D}, {"num_warps", 4}, {"num_stages", stages}));
}

/* An f16 product C = A B by `kernel` (mm_dead_loads, mm_nested: see mma.tile), A and B exactly
 * their size. The results are checked here; that no dead load survives to read past them is
 * checked by the IR golden tests/ir/pipeline_dead (the emulator does not bound global reads). */
static void product_f16(const char *kernel, int M, int N, int K, int stages)
{
    begin("%s %dx%dx%d stages %d", kernel, M, N, K, stages);
    size_t na = (size_t)M * K, nb = (size_t)K * N;
    Buf *a = input("a", T_F16, na ? na : 1, -1, 1), *b = input("b", T_F16, nb ? nb : 1, -1, 1);
    Buf *c = output("c", T_F32, (size_t)M * N, 1e-4);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++)
            for (int k = 0; k < K; k++)
                c->v[i * N + j] += a->v[i * K + k] * b->v[k * N + j];
    run(MMA, kernel, ARGS(P(a), P(b), P(c), I(M), I(N), I(K)),
        CONSTS({"num_warps", 4}, {"num_stages", stages}));
}

/* mm_paged: B's rows through a shuffled page table of exactly cdiv(K, PAGE) entries; with
 * `store` the loop also writes each step's first entry into `seen` (left unpipelined). */
static void product_paged(int M, int N, int K, int PAGE, int BK, int stages, int store)
{
    begin("mm_paged %dx%dx%d page %d BK %d stages %d%s", M, N, K, PAGE, BK, stages,
          store ? " storing" : "");
    int pages = (K + PAGE - 1) / PAGE, steps = (K + BK - 1) / BK;
    Buf *a = input("a", T_F16, (size_t)M * K + 1, -1, 1);
    Buf *b = input("b", T_F16, (size_t)pages * PAGE * N + 1, -1, 1);
    Buf *table = input("table", T_I32, (size_t)(pages ? pages : 1), 0, 0);
    for (int i = 0; i < pages; i++)
        table->v[i] = i;
    for (int i = pages - 1; i > 0; i--) {
        int j = (int)rnd_int(0, i);
        double t = table->v[i];
        table->v[i] = table->v[j], table->v[j] = t;
    }
    Buf *seen = store ? output("seen", T_I32, (size_t)(steps ? steps : 1), EXACT)
                      : scratch("seen", T_I32, 1);
    for (int s = 0; store && s < steps; s++)
        seen->v[s] = table->v[s * BK / PAGE];
    if (store && !steps)
        seen->scratch = 1; /* nothing written */
    Buf *c = output("c", T_F32, (size_t)M * N, 1e-4);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++)
            for (int k = 0; k < K; k++) {
                int row = (int)table->v[k / PAGE] * PAGE + k % PAGE;
                c->v[i * N + j] += a->v[i * K + k] * b->v[(size_t)row * N + j];
            }
    run(MMA, "mm_paged", ARGS(P(a), P(b), P(table), P(seen), P(c), I(M), I(N), I(K)),
        CONSTS({"PAGE", PAGE}, {"BK", BK}, {"STORE", store}, {"num_warps", 4},
               {"num_stages", stages}));
}

/* A and B starting at element offsets (pointers 2, 4, 8 or 16 bytes aligned) with row
 * strides K = 36 and N = 24: the launch's divisors must give copies no wider than the
 * alignment (a misaligned vector access faults on a GPU). */
static void offset_operands(int off_a, int off_b, int stages)
{
    enum { M = 40, N = 24, K = 36 };
    begin("mm_f16 %dx%dx%d, A at element %d, B at element %d, stages %d", M, N, K, off_a, off_b,
          stages);
    Buf *a = input("a", T_F16, M * K + off_a, -1, 1), *b = input("b", T_F16, K * N + off_b, -1, 1);
    Buf *c = output("c", T_F32, M * N, 1e-4);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double sum = 0, abs_sum = 0;
            for (int k = 0; k < K; k++) {
                double p = a->v[off_a + i * K + k] * b->v[off_b + k * N + j];
                sum += p, abs_sum += fabs(p);
            }
            c->v[i * N + j] = sum;
            sum_bound(c, (size_t)(i * N + j), abs_sum, (size_t)(2 * K));
        }
    run(MMA, "mm_f16", ARGS(tile_ptr(a->d + 2 * (tile_DevPtr)off_a), tile_ptr(b->d + 2 * (tile_DevPtr)off_b),
                            P(c), I(M), I(N), I(K)),
        CONSTS({"BM", 32}, {"BN", 32}, {"BK", 16}, {"num_warps", 4}, {"num_stages", stages}));
}

/* mm_strided (Triton's tutorial form): A [M, K] row-major or column-major, B [K, N] likewise,
 * passed as strides, so each launch has some unit strides (specialized to the constant) and
 * some not; pointer tiles advanced each step. */
static void strided(int M, int N, int K, int a_cols, int b_cols, int stages)
{
    begin("mm_strided %dx%dx%d, A %s-major, B %s-major, stages %d", M, N, K,
          a_cols ? "column" : "row", b_cols ? "column" : "row", stages);
    Buf *a = input("a", T_F16, (size_t)M * K, -1, 1), *b = input("b", T_F16, (size_t)K * N, -1, 1);
    Buf *c = output("c", T_F32, (size_t)M * N, 1e-4);
    int sam = a_cols ? 1 : K, sak = a_cols ? M : 1, sbk = b_cols ? 1 : N, sbn = b_cols ? K : 1;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++)
            for (int k = 0; k < K; k++)
                c->v[i * N + j] += a->v[i * sam + k * sak] * b->v[k * sbk + j * sbn];
    run(MMA, "mm_strided", ARGS(P(a), P(b), P(c), I(M), I(N), I(K), I(sam), I(sak), I(sbk), I(sbn)),
        CONSTS({"num_warps", 4}, {"num_stages", stages}));
}

static void two_loops(int M, int N, int K, int K2, int s1, int s2, int stages)
{
    begin("mm_two_loops %dx%d K %d (num_stages=%d) + K %d (num_stages=%d), kernel num_stages %d",
          M, N, K, s1, K2, s2, stages);
    Buf *a = input("a", T_F16, (size_t)M * K + 1, -1, 1), *b = input("b", T_F16, (size_t)K * N + 1, -1, 1);
    Buf *a2 = input("a2", T_F16, (size_t)M * K2 + 1, -1, 1), *b2 = input("b2", T_F16, (size_t)K2 * N + 1, -1, 1);
    Buf *c = output("c", T_F32, (size_t)M * N, 1e-4);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double sum = 0;
            for (int k = 0; k < K; k++)
                sum += a->v[i * K + k] * b->v[k * N + j];
            for (int k = 0; k < K2; k++)
                sum += a2->v[i * K2 + k] * b2->v[k * N + j];
            c->v[i * N + j] = sum;
        }
    run(MMA, "mm_two_loops", ARGS(P(a), P(b), P(a2), P(b2), P(c), I(M), I(N), I(K), I(K2)),
        CONSTS({"S1", s1}, {"S2", s2}, {"num_stages", stages}));
}

/* mm_batched (mma.tile): NB products of [M, K] and [K, N] plus C, BB per program. */
static void batched(int f32, int NB, int M, int N, int K, int BB, int BM, int BN, int BK,
                    int warps, int acc)
{
    begin("mm_batched%s NB=%d %dx%dx%d blocks %dx%dx%dx%d warps %d%s", f32 ? "_f32" : "", NB, M,
          N, K, BB, BM, BN, BK, warps, acc ? " acc" : "");
    Ty ty = f32 ? T_F32 : T_F16;
    Buf *a = input("a", ty, (size_t)NB * M * K + 1, -1, 1);
    Buf *b = input("b", ty, (size_t)NB * K * N + 1, -1, 1);
    Buf *c = input("c", T_F32, (size_t)NB * M * N + 1, -1, 1);
    Buf *o = output("o", T_F32, (size_t)NB * M * N, f32 ? TOL_F32 : 1e-4);
    for (int q = 0; q < NB; q++)
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                size_t at = ((size_t)q * M + i) * N + j;
                double sum = c->v[at], abs_sum = fabs(sum);
                for (int k = 0; k < K; k++) {
                    double p = a->v[((size_t)q * M + i) * K + k] * b->v[((size_t)q * K + k) * N + j];
                    sum += p, abs_sum += fabs(p);
                }
                o->v[at] = sum;
                sum_bound(o, at, abs_sum, (size_t)(2 * K + 2));
            }
    run(MMA, f32 ? "mm_batched_f32" : "mm_batched", ARGS(P(a), P(b), P(c), P(o), I(NB), I(M), I(N), I(K)),
        CONSTS({"BB", BB}, {"BM", BM}, {"BN", BN}, {"BK", BK}, {"ACC", acc}, {"num_warps", warps}));
}

void t_mma(void)
{
    /* batched (rank-3) dots: batches of 1 to 8 per program, a partial last batch, masked
     * edges, K loops of 0, 1 and several steps, the product as dot's acc or added after */
    batched(0, 5, 16, 8, 16, 2, 16, 8, 16, 1, 1);
    batched(0, 3, 13, 20, 40, 4, 16, 32, 16, 2, 0);
    batched(0, 1, 33, 17, 50, 1, 64, 32, 32, 4, 1);
    batched(0, 9, 20, 24, 0, 8, 32, 32, 16, 4, 1);
    batched(1, 6, 17, 9, 24, 2, 32, 16, 16, 2, 0);
    batched(1, 4, 16, 16, 16, 4, 16, 16, 16, 1, 1);
    offset_operands(1, 2, 3);
    offset_operands(2, 4, 2);
    offset_operands(4, 1, 3);
    offset_operands(8, 8, 3);
    int n = (int)(sizeof shapes / sizeof shapes[0]);
    for (int kind = 0; kind < KINDS; kind++)
        for (int i = 0; i < n; i++)
            for (int t = 0; t < 4; t++) {
                if (S.quick && (t != (i & 3) || shapes[i].M > 64))
                    continue; /* --quick: one transpose pattern per shape, small shapes */
                one_case(kind, &shapes[i], t & 1, t >> 1);
            }
    for (int i = 0; i < n; i++) /* each shape once, the patterns and types in turn */
        if (!(S.quick && shapes[i].M > 64))
            weights8(i & 1, (i >> 1) % 3 == 0, &shapes[i], (i >> 2) & 1, (i >> 1) & 1);
    for (int i = 0; i < n; i++) /* each shape two ways: 8-bit (integer or fp8) and 4-bit weights */
        if (!(S.quick && shapes[i].M > 64)) {
            int g = 2 * shapes[i].BK; /* a row of scales per step, a new group every other step */
            dequant(&shapes[i], i % 3 ? g : 0, 0, i & 1, i % 4 == 1, !(i & 1));
            dequant(&shapes[i], i % 2 ? 3 + i : g, i % 2, !(i & 1), i % 4 == 3, i % 4 == 3);
        }
    /* the example's kernels: odd sizes, K not a multiple of the group, 1 to 4 groups */
    quant_example(0, 33, 70, 200, 64, 16, 64, 32, 4, 3);
    quant_example(1, 33, 70, 200, 64, 16, 64, 32, 4, 3);
    quant_example(0, 64, 128, 256, 128, 64, 64, 64, 4, 4);
    quant_example(1, 70, 40, 130, 32, 64, 64, 32, 8, 2);
    quant_example(1, 16, 128, 512, 128, 16, 128, 64, 4, 4);
    two_loops(40, 33, 200, 0, 3, 1, 1);  /* a pipelined loop in a kernel of num_stages 1 */
    two_loops(32, 32, 16, 48, 4, 2, 1);
    two_loops(50, 64, 32, 200, 1, 3, 3); /* the first loop left alone in a kernel of 3 */
    two_loops(17, 9, 0, 16, 2, 8, 2);
    strided(100, 72, 80, 0, 0, 3);
    strided(64, 64, 48, 1, 0, 2);
    strided(33, 40, 16, 0, 1, 3);
    strided(40, 24, 40, 1, 1, 4);
    strided(32, 32, 1, 0, 0, 2);
    acc_uses(16, 8, 16, 16, 8, 16, 1);
    acc_uses(29, 30, 13, 32, 32, 16, 4);
    acc_uses(64, 64, 32, 64, 64, 32, 8);
    acc_uses(40, 16, 16, 64, 16, 16, 2);
    chain(64, 4);
    chain(50, 2);
    /* two products per iteration over rewritten K and V blocks (wgmma on Hopper) */
    attn_loop(64, 64, 64, 200, 4);
    attn_loop(128, 64, 64, 130, 8);
    attn_loop(64, 32, 128, 100, 4);
    attn_loop(128, 128, 64, 64, 4);
    attn_loop(64, 64, 64, 0, 4);
    /* one operand read by dots in two loops, a branch and after them; small and large tiles
     * (the large one read from its buffer at each dot); 0, 1 and many key blocks */
    operand_reuse(64, 32, 64, 100, 1, 2);
    operand_reuse(64, 32, 64, 45, -1, 3);
    operand_reuse(128, 32, 128, 70, 1, 3);
    operand_reuse(128, 32, 128, 33, -1, 2);
    operand_reuse(64, 32, 64, 0, 1, 2);
    operand_reuse(128, 32, 128, 20, -1, 2);
    /* dead unmasked loads under a const switch */
    product_f16("mm_dead_loads", 33, 17, 40, 3);
    product_f16("mm_dead_loads", 70, 40, 72, 2);
    /* a pipelined loop inside another; K steps 0, 1 and many, stages 2 to 4 */
    product_f16("mm_nested", 40, 100, 72, 3);
    product_f16("mm_nested", 33, 70, 16, 4);
    product_f16("mm_nested", 64, 64, 0, 2);
    product_f16("mm_nested", 20, 90, 150, 2);
    /* addresses through a page table: pages smaller than, equal to and larger than the step;
     * 0, 1, 2 and many steps; a loop that stores stays unpipelined */
    product_paged(40, 33, 100, 16, 32, 3, 0);
    product_paged(64, 32, 64, 32, 32, 2, 0);
    product_paged(33, 40, 45, 64, 16, 4, 0);
    product_paged(16, 16, 0, 16, 32, 3, 0);
    product_paged(20, 24, 20, 8, 32, 2, 0);
    product_paged(50, 30, 130, 16, 32, 3, 1);
}
