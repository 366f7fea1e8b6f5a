/* test_block_ptr.c: block pointers (tests/exec/block_ptr.tile) against float64 references at
 * odd sizes: a matmul whose operands are block pointers advanced along K (f16 and f32, A
 * row-major or a transposed view, 1 to 8 warps, 1 to 4 stages), a 3-D load and store with
 * strides of any order, blocks advanced by negative offsets partly before the start and past
 * the end (padding zero and nan), a block with only its columns checked, and a block pointer
 * carried through while loops, branches and a helper, or made again inside a loop; attention
 * as Triton's tutorial writes it with block pointers. */
#include <math.h>
#include <stdlib.h>
#include "test_exec.h"

#define BP "tests/exec/block_ptr.tile"

typedef struct MmShape {
    int bm, bn, bk, warps, stages;
} MmShape;

static void mm_bp(Ty t, int M, int N, int K, int at, MmShape s)
{
    begin("block pointers: matmul %s%s %dx%dx%d (%dx%dx%d, %d warps, %d stages)", TY[t].name,
          at ? " A^T" : "", M, N, K, s.bm, s.bn, s.bk, s.warps, s.stages);
    Buf *a = input("a", t, (size_t)M * K, -1, 1), *b = input("b", t, (size_t)K * N, -1, 1);
    Buf *c = output("c", T_F32, (size_t)M * N, TOL_F32);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double sum = 0;
            for (int k = 0; k < K; k++)
                sum += a->v[at ? (size_t)k * M + i : (size_t)i * K + k] * b->v[(size_t)k * N + j];
            c->v[(size_t)i * N + j] = sum;
        }
    run(BP, t == T_F16 ? "mm_bp" : "mm_bp_f32",
        ARGS(P(a), P(b), P(c), I(M), I(N), I(K), I(at ? 1 : K), I(at ? M : 1), I(N), I(1)),
        CONSTS({"BM", s.bm}, {"BN", s.bn}, {"BK", s.bk}, {"ORDER_A", at ? 0 : 1},
               {"num_warps", s.warps}, {"num_stages", s.stages}));
}

/* x [D0, D1, D2] stored with its dims in the order perm (perm[0] the slowest) */
static void scale3(int D0, int D1, int D2, const int perm[3])
{
    begin("block pointers: 3-D load and store %dx%dx%d, dims stored in order %d%d%d", D0, D1, D2,
          perm[0], perm[1], perm[2]);
    int dims[3] = {D0, D1, D2};
    long stride[3];
    long st = 1;
    for (int k = 2; k >= 0; k--)
        stride[perm[k]] = st, st *= dims[perm[k]];
    size_t n = (size_t)D0 * D1 * D2;
    Buf *x = input("x", T_F32, n, -4, 4), *y = output("y", T_F32, n, EXACT);
    for (int i = 0; i < D0; i++)
        for (int j = 0; j < D1; j++)
            for (int k = 0; k < D2; k++)
                y->v[((size_t)i * D1 + j) * D2 + k] =
                    ty_round(T_F32, x->v[i * stride[0] + j * stride[1] + k * stride[2]] * 2 + 1);
    run(BP, "scale3",
        ARGS(P(x), P(y), I(D0), I(D1), I(D2), I((int)stride[0]), I((int)stride[1]), I((int)stride[2])),
        NO_CONSTS);
}

/* the [8, 16] block at (r0 - d0, c0 - d1) of x [R, C]: outside x, 0 or NaN */
static void shifted(int R, int C, int r0, int c0, int d0, int d1, int nan_pad)
{
    begin("block pointers: advance by (%d, %d) from (%d, %d) over %dx%d, padding %s", -d0, -d1, r0, c0,
          R, C, nan_pad ? "nan" : "zero");
    Buf *x = input("x", T_F32, (size_t)R * C, -1, 1), *o = output("out", T_F32, 8 * 16, EXACT);
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 16; j++) {
            int r = r0 - d0 + i, c = c0 - d1 + j;
            int in = r >= 0 && r < R && c >= 0 && c < C;
            o->v[i * 16 + j] = in ? x->v[(size_t)r * C + c] : nan_pad ? NAN : 0;
        }
    run(BP, "shifted", ARGS(P(x), P(o), I(R), I(C), I(r0), I(c0), I(d0), I(d1)),
        CONSTS({"NAN", nan_pad}));
}

static void rows_plus(int R, int C, int b0, int b1)
{
    begin("block pointers: rows in range, columns checked, a while loop, %dx%d in %dx%d blocks", R, C,
          b0, b1);
    Buf *x = input("x", T_F32, (size_t)R * C, -1, 1), *y = output("y", T_F32, (size_t)R * C, EXACT);
    for (int r = 0; r < R; r++)
        for (int c = 0; c < C; c++)
            y->v[(size_t)r * C + c] = ty_round(T_F32, x->v[(size_t)r * C + c] + r);
    run(BP, "rows_plus", ARGS(P(x), P(y), I(R), I(C)), CONSTS({"B0", b0}, {"B1", b1}));
}

static void strided_sum(int n)
{
    begin("block pointers: 1-D, advanced in a branch and by a helper, n=%d", n);
    Buf *x = input("x", T_F32, n, -1, 1), *o = output("out", T_F32, 16, TOL_F32);
    for (int i = 0; i < 16; i++) {
        double s = 0;
        for (int j = i; j < n; j += 16)
            s += x->v[j];
        o->v[i] = s;
    }
    run(BP, "strided_sum", ARGS(P(x), P(o), I(n)), NO_CONSTS);
}

static void pick(int n, int stop)
{
    begin("block pointers: made again in a loop's branch, a break, n=%d stop=%d", n, stop);
    Buf *x = input("x", T_F32, n, -1, 1), *y = input("y", T_F32, n, -1, 1);
    Buf *o = inout("out", T_F32, n, EXACT);
    for (int i = 0; i < n; i++) {
        int blk = i / 16;
        o->v[i] = blk >= stop ? 0 : blk % 2 ? y->v[i] : x->v[i];
    }
    run(BP, "pick", ARGS(P(x), P(y), P(o), I(n), I(stop)), NO_CONSTS);
}

/* softmax(scale q k^T) v per (batch, head) row block, in float64 */
static void attn_bp(int bh, int seq, double scale, int bm, int bn, int warps, int stages)
{
    begin("block pointers: attention (K a transposed view) bh=%d seq=%d D=64 (%dx%d, %d warps, %d stages)",
          bh, seq, bm, bn, warps, stages);
    size_t n = (size_t)bh * seq * 64;
    Buf *q = input("q", T_F16, n, -1, 1), *k = input("k", T_F16, n, -1, 1), *v = input("v", T_F16, n, -1, 1);
    Buf *o = output("o", T_F32, n, TOL_F16);
    double *w = malloc(sizeof(double) * (size_t)seq);
    for (int h = 0; h < bh; h++)
        for (int i = 0; i < seq; i++) {
            const double *qi = q->v + ((size_t)h * seq + i) * 64;
            double mx = -INFINITY, sum = 0;
            for (int j = 0; j < seq; j++) {
                const double *kj = k->v + ((size_t)h * seq + j) * 64;
                double d = 0;
                for (int c = 0; c < 64; c++)
                    d += qi[c] * kj[c];
                w[j] = d * scale;
                mx = fmax(mx, w[j]);
            }
            for (int j = 0; j < seq; j++)
                sum += w[j] = exp(w[j] - mx);
            for (int c = 0; c < 64; c++) {
                double acc = 0;
                for (int j = 0; j < seq; j++)
                    acc += w[j] * v->v[((size_t)h * seq + j) * 64 + c];
                o->v[((size_t)h * seq + i) * 64 + c] = acc / sum;
            }
        }
    free(w);
    run(BP, "attn_bp", ARGS(P(q), P(k), P(v), P(o), I(bh), I(seq), F(scale)),
        CONSTS({"BM", bm}, {"BN", bn}, {"num_warps", warps}, {"num_stages", stages}));
}

void t_block_ptr(void)
{
    static const MmShape shapes[] = {
        {32, 32, 16, 4, 2}, {32, 32, 16, 1, 1}, {64, 32, 32, 8, 3}, {16, 64, 16, 2, 4},
    };
    mm_bp(T_F16, 100, 77, 129, 0, shapes[0]);
    mm_bp(T_F16, 100, 77, 129, 1, shapes[2]);
    mm_bp(T_F16, 33, 64, 50, 0, shapes[1]);
    mm_bp(T_F16, 1, 5, 3, 1, shapes[3]);
    mm_bp(T_F32, 70, 45, 37, 0, shapes[0]);
    mm_bp(T_F32, 37, 19, 70, 1, shapes[3]);
    mm_bp(T_F32, 64, 64, 64, 0, shapes[2]);
    scale3(5, 7, 13, (const int[]){0, 1, 2});
    scale3(3, 9, 17, (const int[]){2, 0, 1});
    scale3(2, 4, 8, (const int[]){1, 2, 0});
    shifted(20, 30, 5, 9, 3, 11, 0);  /* columns before the start */
    shifted(20, 30, 5, 9, 9, 2, 1);   /* rows before the start, nan */
    shifted(6, 10, 3, 20, 1, 2, 1);   /* columns past the end, nan */
    shifted(6, 10, 0, 0, -3, -5, 0);  /* advanced forward past both ends */
    shifted(7, 5, 100, 100, 99, 98, 1); /* back from far outside, partly inside */
    rows_plus(12, 77, 4, 32);
    rows_plus(8, 3, 8, 16);
    rows_plus(4, 64, 2, 64);
    strided_sum(100);
    strided_sum(16);
    strided_sum(1);
    pick(100, 100);
    pick(100, 3);
    pick(5, 0);
    attn_bp(2, 77, 0.125, 64, 32, 4, 2);
    attn_bp(3, 1, 0.3, 16, 16, 1, 1);
    attn_bp(1, 130, 0.125, 32, 64, 2, 3);
}
