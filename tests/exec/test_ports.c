/* test_ports.c: kernels Triton users write first, ported to tile (tests/exec/ports_*.tile) and
 * checked against float64 (or exact integer) references at odd sizes: LayerNorm backward
 * (atomics, and the lock + partial-sum pattern), RMSNorm with a residual add, RoPE, SwiGLU
 * (ports_norm); cross-entropy over a large vocabulary (ports_loss); matmul with a fused
 * epilogue and grouped ordering, persistent, split-K and grouped GEMM (ports_matmul);
 * transpose, int8 quantization, histograms, argmax and top-k (ports_misc). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "test_exec.h"

#define NORM "tests/exec/ports_norm.tile"
#define LOSS "tests/exec/ports_loss.tile"
#define MM "tests/exec/ports_matmul.tile"
#define MISC "tests/exec/ports_misc.tile"

/* ---- LayerNorm backward ---- */

/* x, dy, w random; mean and rstd the forward's (f32) per-row values; dx's reference */
static void ln_bwd_inputs(Buf **x, Buf **dy, Buf **w, Buf **mean, Buf **rstd, Buf **dx, int rows,
                          int cols)
{
    *x = input("x", T_F32, (size_t)rows * cols, -2, 2);
    *dy = input("dy", T_F32, (size_t)rows * cols, -1, 1);
    *w = input("w", T_F32, cols, -1, 1);
    *mean = input("mean", T_F32, rows, 0, 0);
    *rstd = input("rstd", T_F32, rows, 0, 0);
    *dx = output("dx", T_F32, (size_t)rows * cols, TOL_F32);
    for (int r = 0; r < rows; r++) {
        const double *xr = (*x)->v + (size_t)r * cols, *g = (*dy)->v + (size_t)r * cols;
        double mu = 0, var = 0, c1 = 0, c2 = 0;
        for (int j = 0; j < cols; j++)
            mu += xr[j];
        mu = ty_round(T_F32, mu / cols);
        for (int j = 0; j < cols; j++)
            var += (xr[j] - mu) * (xr[j] - mu);
        double rs = ty_round(T_F32, 1 / sqrt(var / cols + 1e-5));
        (*mean)->v[r] = mu, (*rstd)->v[r] = rs;
        for (int j = 0; j < cols; j++) {
            double xhat = (xr[j] - mu) * rs, wdy = (*w)->v[j] * g[j];
            c1 += xhat * wdy, c2 += wdy;
        }
        c1 /= cols, c2 /= cols;
        for (int j = 0; j < cols; j++) {
            double xhat = (xr[j] - mu) * rs;
            (*dx)->v[(size_t)r * cols + j] = ((*w)->v[j] * g[j] - (xhat * c1 + c2)) * rs;
        }
    }
}

/* dw = sum over rows of dy * xhat, db = sum of dy, each within the bound of a sum in any order */
static void ln_bwd_dwdb(const Buf *x, const Buf *dy, const Buf *mean, const Buf *rstd, Buf *dw,
                        Buf *db, int rows, int cols)
{
    for (int j = 0; j < cols; j++) {
        double sw = 0, aw = 0, sb = 0, ab = 0;
        for (int r = 0; r < rows; r++) {
            size_t i = (size_t)r * cols + j;
            double xhat = (x->v[i] - mean->v[r]) * rstd->v[r], t = dy->v[i] * xhat;
            sw += t, aw += fabs(t), sb += dy->v[i], ab += fabs(dy->v[i]);
        }
        dw->v[j] = sw, db->v[j] = sb;
        /* 3 roundings of each term (xhat, its product with dy, the row's sum) besides the sum's */
        sum_bound(dw, j, aw, (size_t)rows + 3);
        sum_bound(db, j, ab, (size_t)rows);
    }
}

static void ln_bwd_atomic(int rows, int cols)
{
    begin("layernorm backward, dw/db by atomic_add, %dx%d", rows, cols);
    Buf *x, *dy, *w, *mean, *rstd, *dx;
    ln_bwd_inputs(&x, &dy, &w, &mean, &rstd, &dx, rows, cols);
    Buf *dw = inout("dw", T_F32, cols, TOL_F32), *db = inout("db", T_F32, cols, TOL_F32);
    ln_bwd_dwdb(x, dy, mean, rstd, dw, db, rows, cols);
    run(NORM, "ln_bwd_atomic", ARGS(P(x), P(dy), P(w), P(mean), P(rstd), P(dx), P(dw), P(db),
                                    I(rows), I(cols)), NO_CONSTS);
}

static void ln_bwd_lock(int rows, int cols, int group, int warps)
{
    begin("layernorm backward, dw/db by locks + partial sums, %dx%d GROUP=%d num_warps=%d", rows,
          cols, group, warps);
    Buf *x, *dy, *w, *mean, *rstd, *dx;
    ln_bwd_inputs(&x, &dy, &w, &mean, &rstd, &dx, rows, cols);
    Buf *pdw = scratch("pdw", T_F32, (size_t)group * cols), *pdb = scratch("pdb", T_F32, (size_t)group * cols);
    Buf *locks = inout("locks", T_I32, group, EXACT), *counts = inout("counts", T_I32, group, EXACT);
    Buf *dw = output("dw", T_F32, cols, TOL_F32), *db = output("db", T_F32, cols, TOL_F32);
    for (int g = 0; g < group; g++)
        counts->v[g] = g < rows; /* locks end released (0) */
    ln_bwd_dwdb(x, dy, mean, rstd, dw, db, rows, cols);
    tile_Const cs[] = {{"GROUP", group}, {"num_warps", warps}};
    Launch l[] = {
        {"ln_bwd_lock", ARGS(P(x), P(dy), P(w), P(mean), P(rstd), P(dx), P(pdw), P(pdb), P(locks),
                             P(counts), I(rows), I(cols)), cs, 2},
        {"ln_bwd_reduce", ARGS(P(pdw), P(pdb), P(dw), P(db), I(rows), I(cols)), cs, 1},
    };
    run_seq(NORM, l, 2);
}

/* ---- RMSNorm + residual, RoPE, SwiGLU ---- */

static void rmsnorm_residual(int rows, int cols)
{
    begin("rmsnorm fused with residual add, f16 %dx%d", rows, cols);
    size_t n = (size_t)rows * cols;
    Buf *x = input("x", T_F16, n, -2, 2), *w = input("w", T_F16, cols, -1, 1);
    Buf *res = inout("residual", T_F16, n, EXACT), *y = output("y", T_F16, n, TOL_F16);
    for (size_t i = 0; i < n; i++)
        res->init[i] = ty_round(T_F16, 4 * rnd_unit() - 2);
    for (int r = 0; r < rows; r++) {
        double ss = 0;
        for (int j = 0; j < cols; j++) {
            size_t i = (size_t)r * cols + j;
            res->v[i] = ty_round(T_F16, ty_round(T_F32, x->v[i] + res->init[i]));
            ss += res->v[i] * res->v[i];
        }
        double rs = 1 / sqrt(ss / cols + (float)1e-6);
        for (int j = 0; j < cols; j++) {
            size_t i = (size_t)r * cols + j;
            y->v[i] = res->v[i] * rs * w->v[j];
            ulp_bound(y, i, 1);
        }
    }
    run(NORM, "rmsnorm_residual", ARGS(P(x), P(res), P(w), P(y), I(rows), I(cols), F(1e-6)),
        NO_CONSTS);
}

/* The angle as the kernel computes it in f32: pos * 2^(-(2i) / dim * log2(base)). */
static double rope_angle(int pos, int i, int dim, float base)
{
    float e = -(float)(2 * i) / (float)dim * log2f(base);
    return (double)(float)((float)pos * exp2f(e));
}

static void rope(int half_split, int tokens, int heads, int dim, int max_pos)
{
    begin("rope %s tokens=%d heads=%d dim=%d positions < %d", half_split ? "half-split" : "interleaved",
          tokens, heads, dim, max_pos);
    size_t n = (size_t)tokens * heads * dim;
    Buf *pos = input("pos", T_I32, tokens, 0, max_pos - 1);
    /* the reference takes the kernel's f32 angle; NVIDIA's exp2 (relative error 2^-22) can
     * move an angle of 256 radians by 6e-5 */
    Buf *x = inout("x", T_F32, n, 2e-5);
    for (size_t i = 0; i < n; i++)
        x->init[i] = ty_round(T_F32, 2 * rnd_unit() - 1);
    for (int t = 0; t < tokens; t++)
        for (int h = 0; h < heads; h++)
            for (int i = 0; i < dim / 2; i++) {
                size_t base = ((size_t)t * heads + h) * dim;
                size_t ia = base + (half_split ? (size_t)i : 2 * (size_t)i);
                size_t ib = half_split ? ia + dim / 2 : ia + 1;
                double ang = rope_angle((int)pos->v[t], i, dim, 10000.0f);
                double a = x->init[ia], b = x->init[ib];
                x->v[ia] = a * cos(ang) - b * sin(ang);
                x->v[ib] = a * sin(ang) + b * cos(ang);
            }
    run(NORM, half_split ? "rope_half" : "rope_interleaved",
        ARGS(P(x), P(pos), I(tokens), I(heads), I(dim), F(10000.0)), NO_CONSTS);
}

static void swiglu(int rows, int cols)
{
    begin("swiglu bf16 %dx%d", rows, cols);
    Buf *gu = input("gu", T_BF16, (size_t)rows * 2 * cols, -6, 6);
    Buf *o = output("out", T_BF16, (size_t)rows * cols, 1e-2);
    for (int r = 0; r < rows; r++)
        for (int j = 0; j < cols; j++) {
            double g = gu->v[(size_t)r * 2 * cols + j], u = gu->v[(size_t)r * 2 * cols + cols + j];
            size_t i = (size_t)r * cols + j;
            o->v[i] = g / (1 + exp(-g)) * u;
            ulp_bound(o, i, 1);
        }
    run(NORM, "swiglu", ARGS(P(gu), P(o), I(rows), I(cols)), NO_CONSTS);
}

void t_ports_norm(void)
{
    ln_bwd_atomic(1, 1);
    ln_bwd_atomic(37, 300);
    ln_bwd_atomic(64, 512);
    ln_bwd_lock(37, 300, 8, 4);
    ln_bwd_lock(5, 129, 8, 1);
    ln_bwd_lock(200, 77, 16, 8);
    rmsnorm_residual(1, 1);
    rmsnorm_residual(19, 1000);
    rope(0, 37, 3, 80, 64);
    rope(1, 37, 3, 80, 64);
    rope(0, 5, 8, 128, 256);
    rope(1, 5, 8, 128, 256);
    swiglu(1, 5);
    swiglu(7, 1000);
}

/* ---- cross-entropy ---- */

enum { IGNORE = -100 };

/* logits, labels (about one in four ignored); lse and loss references */
static void xent_ref(const Buf *x, const Buf *labels, Buf *loss, Buf *lse, int rows, int vocab)
{
    for (int r = 0; r < rows; r++) {
        const double *xr = x->v + (size_t)r * vocab;
        double m = -INFINITY, s = 0;
        for (int j = 0; j < vocab; j++)
            m = fmax(m, xr[j]);
        for (int j = 0; j < vocab; j++)
            s += exp(xr[j] - m);
        double l = m + log(s);
        if (lse)
            lse->v[r] = l;
        int label = (int)labels->v[r];
        loss->v[r] = label == IGNORE ? 0 : l - xr[label];
    }
}

static Buf *xent_labels(int rows, int vocab)
{
    Buf *labels = input("labels", T_I32, rows, 0, vocab - 1);
    for (int r = 0; r < rows; r++)
        if (rnd() % 4 == 0 || r == 1)
            labels->v[r] = IGNORE;
    return labels;
}

static void cross_entropy(Ty t, int rows, int vocab)
{
    begin("cross_entropy %s rows=%d vocab=%d", TY[t].name, rows, vocab);
    Buf *x = input("logits", t, (size_t)rows * vocab, -12, 12), *labels = xent_labels(rows, vocab);
    Buf *loss = output("loss", T_F32, rows, TOL_F32), *lse = output("lse", T_F32, rows, TOL_F32);
    xent_ref(x, labels, loss, lse, rows, vocab);
    run(LOSS, t == T_F32 ? "cross_entropy" : "cross_entropy_bf16",
        ARGS(P(x), P(labels), P(loss), P(lse), I(rows), I(vocab), I(IGNORE)), NO_CONSTS);
}

static void cross_entropy_scalar(int rows, int vocab)
{
    begin("cross_entropy (scalar running max, atomic mean) rows=%d vocab=%d", rows, vocab);
    Buf *x = input("logits", T_F32, (size_t)rows * vocab, -12, 12), *labels = xent_labels(rows, vocab);
    Buf *loss = output("loss", T_F32, rows, TOL_F32), *total = inout("total", T_F32, 2, TOL_F32);
    xent_ref(x, labels, loss, NULL, rows, vocab);
    for (int r = 0; r < rows; r++)
        total->v[0] += loss->v[r], total->v[1] += labels->v[r] != IGNORE;
    run(LOSS, "cross_entropy_scalar",
        ARGS(P(x), P(labels), P(loss), P(total), I(rows), I(vocab), I(IGNORE)), NO_CONSTS);
}

static void cross_entropy_fwd_bwd(int rows, int vocab)
{
    begin("cross_entropy forward + backward in place rows=%d vocab=%d", rows, vocab);
    size_t n = (size_t)rows * vocab;
    Buf *labels = xent_labels(rows, vocab);
    Buf *x = inout("logits (gradient)", T_F32, n, TOL_F32), *loss = output("loss", T_F32, rows, TOL_F32);
    Buf tmp = {.v = x->init};
    for (size_t i = 0; i < n; i++)
        x->init[i] = ty_round(T_F32, 24 * rnd_unit() - 12);
    xent_ref(&tmp, labels, loss, NULL, rows, vocab);
    int valid = 0;
    for (int r = 0; r < rows; r++)
        valid += labels->v[r] != IGNORE;
    double scale = ty_round(T_F32, 1.0 / (valid ? valid : 1));
    for (int r = 0; r < rows; r++) {
        const double *xr = x->init + (size_t)r * vocab;
        double m = -INFINITY, s = 0;
        for (int j = 0; j < vocab; j++)
            m = fmax(m, xr[j]);
        for (int j = 0; j < vocab; j++)
            s += exp(xr[j] - m);
        for (int j = 0; j < vocab; j++) {
            size_t i = (size_t)r * vocab + j;
            double g = (exp(xr[j] - m) / s - (j == (int)labels->v[r])) * scale;
            x->v[i] = labels->v[r] == IGNORE ? 0 : g;
            /* exp(x - lse) with lse (about 12) rounded to f32 is off by about 12 * 2^-24 of
             * itself; the label's element also cancels against 1: 32 f32 epsilons of |g|, and
             * of 1e-3 * scale for the label's */
            sum_bound(x, i, fabs(g) + 1e-3 * scale, 32);
        }
    }
    run(LOSS, "cross_entropy_fwd_bwd",
        ARGS(P(x), P(labels), P(loss), I(rows), I(vocab), I(IGNORE), F(scale)), NO_CONSTS);
}

void t_ports_loss(void)
{
    cross_entropy(T_F32, 5, 32000);
    cross_entropy(T_BF16, 3, 32000);
    cross_entropy(T_F32, 3, 1000);
    cross_entropy(T_F32, 2, 1);
    cross_entropy(T_BF16, 4, 50257);
    cross_entropy_scalar(5, 32000);
    cross_entropy_scalar(3, 777);
    cross_entropy_fwd_bwd(4, 32000);
    cross_entropy_fwd_bwd(3, 999);
}

/* ---- matmul variants ---- */

/* c[i, j] = sum_k a[i, k] b[k, j] at element offsets into a, b, c; row-major, no padding */
static void matmul_ref(const double *a, const double *b, double *c, int M, int N, int K)
{
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int k = 0; k < K; k++)
                s += a[(size_t)i * K + k] * b[(size_t)k * N + j];
            c[(size_t)i * N + j] = s;
        }
}

static double act_ref(int act, double x)
{
    switch (act) {
    case 1: return x >= 0 ? x : 0.01 * x;
    case 2: return 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
    case 3: return 0.5 * x * (1 + erf(x / sqrt(2)));
    default: return x;
    }
}

static void matmul_epilogue(int M, int N, int K, int act, int group_m)
{
    static const char *const names[] = {"none", "leaky_relu", "gelu(tanh)", "gelu(erf)"};
    begin("matmul f16 + bias + %s, grouped order GROUP_M=%d, %dx%dx%d", names[act], group_m, M, N, K);
    Buf *a = input("a", T_F16, (size_t)M * K, -1, 1), *b = input("b", T_F16, (size_t)K * N, -1, 1);
    Buf *bias = input("bias", T_F32, N, -2, 2), *c = output("c", T_F16, (size_t)M * N, TOL_F16);
    matmul_ref(a->v, b->v, c->v, M, N, K);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++)
            c->v[(size_t)i * N + j] = act_ref(act, c->v[(size_t)i * N + j] + bias->v[j]);
    run(MM, "matmul_epilogue", ARGS(P(a), P(b), P(bias), P(c), I(M), I(N), I(K)),
        CONSTS({"ACT", act}, {"GROUP_M", group_m}));
}

static void matmul_persistent(int M, int N, int K, int programs)
{
    begin("persistent matmul f32 %dx%dx%d programs=%d", M, N, K, programs);
    Buf *a = input("a", T_F32, (size_t)M * K, -1, 1), *b = input("b", T_F32, (size_t)K * N, -1, 1);
    Buf *c = output("c", T_F32, (size_t)M * N, TOL_F32);
    matmul_ref(a->v, b->v, c->v, M, N, K);
    run(MM, "matmul_persistent", ARGS(P(a), P(b), P(c), I(M), I(N), I(K), I(programs)), NO_CONSTS);
}

static void matmul_splitk(int M, int N, int K, int split)
{
    begin("split-K matmul f16 -> f32 atomic_add %dx%dx%d split=%d", M, N, K, split);
    Buf *a = input("a", T_F16, (size_t)M * K, -1, 1), *b = input("b", T_F16, (size_t)K * N, -1, 1);
    Buf *c = inout("c", T_F32, (size_t)M * N, TOL_F32);
    matmul_ref(a->v, b->v, c->v, M, N, K);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double abs_sum = 0;
            for (int k = 0; k < K; k++)
                abs_sum += fabs(a->v[(size_t)i * K + k] * b->v[(size_t)k * N + j]);
            sum_bound(c, (size_t)i * N + j, abs_sum, (size_t)K);
        }
    run(MM, "matmul_splitk", ARGS(P(a), P(b), P(c), I(M), I(N), I(K), I(split)), NO_CONSTS);
}

static void grouped_gemm(int groups, const int (*mnk)[3], int programs)
{
    size_t na = 0, nb = 0, nc = 0;
    for (int g = 0; g < groups; g++)
        na += (size_t)mnk[g][0] * mnk[g][2], nb += (size_t)mnk[g][2] * mnk[g][1],
        nc += (size_t)mnk[g][0] * mnk[g][1];
    begin("grouped gemm f16, %d problems (%dx%dx%d, ...), programs=%d", groups, mnk[0][0],
          mnk[0][1], mnk[0][2], programs);
    Buf *a = input("a", T_F16, na, -1, 1), *b = input("b", T_F16, nb, -1, 1);
    Buf *sizes = input("sizes", T_I32, 3 * (size_t)groups, 0, 0);
    Buf *ao = input("a_off", T_I64, groups, 0, 0), *bo = input("b_off", T_I64, groups, 0, 0);
    Buf *co = input("c_off", T_I64, groups, 0, 0), *c = output("c", T_F16, nc, TOL_F16);
    size_t oa = 0, ob = 0, oc = 0;
    for (int g = 0; g < groups; g++) {
        int m = mnk[g][0], n = mnk[g][1], k = mnk[g][2];
        sizes->v[3 * g] = m, sizes->v[3 * g + 1] = n, sizes->v[3 * g + 2] = k;
        ao->v[g] = (double)oa, bo->v[g] = (double)ob, co->v[g] = (double)oc;
        matmul_ref(a->v + oa, b->v + ob, c->v + oc, m, n, k);
        oa += (size_t)m * k, ob += (size_t)k * n, oc += (size_t)m * n;
    }
    run(MM, "grouped_gemm",
        ARGS(P(a), P(b), P(c), P(sizes), P(ao), P(bo), P(co), I(groups), I(programs)), NO_CONSTS);
}

/* The same through arrays of addresses (Triton's tutorial): each problem in buffers of its
 * own, with leading dimensions larger than the sizes (padding columns never read or written) */
static void grouped_gemm_ptrs(int groups, const int (*mnk)[3], int programs)
{
    begin("grouped gemm f16 through address arrays, %d problems (%dx%dx%d, ...), programs=%d",
          groups, mnk[0][0], mnk[0][1], mnk[0][2], programs);
    Buf *ap = input("a_ptrs", T_U64, groups, 0, 0), *bp = input("b_ptrs", T_U64, groups, 0, 0);
    Buf *cp = input("c_ptrs", T_I64, groups, 0, 0), *sizes = input("sizes", T_I32, 3 * (size_t)groups, 0, 0);
    Buf *lds = input("lds", T_I32, 3 * (size_t)groups, 0, 0);
    for (int g = 0; g < groups; g++) {
        int m = mnk[g][0], n = mnk[g][1], k = mnk[g][2], lda = k + g % 2, ldb = n + 3 * (g % 2), ldc = n + g;
        Buf *a = input("a_g", T_F16, (size_t)m * lda, -1, 1), *b = input("b_g", T_F16, (size_t)k * ldb, -1, 1);
        Buf *c = inout("c_g", T_F16, (size_t)m * ldc, TOL_F16);
        for (size_t i = 0; i < (size_t)m * ldc; i++)
            c->init[i] = c->v[i] = -7; /* the padding columns keep it */
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++) {
                double s = 0;
                for (int q = 0; q < k; q++)
                    s += a->v[(size_t)i * lda + q] * b->v[(size_t)q * ldb + j];
                c->v[(size_t)i * ldc + j] = s;
            }
        ap->v[g] = (double)a->d, bp->v[g] = (double)b->d, cp->v[g] = (double)c->d;
        sizes->v[3 * g] = m, sizes->v[3 * g + 1] = n, sizes->v[3 * g + 2] = k;
        lds->v[3 * g] = lda, lds->v[3 * g + 1] = ldb, lds->v[3 * g + 2] = ldc;
    }
    run(MM, "grouped_gemm_ptrs", ARGS(P(ap), P(bp), P(cp), P(sizes), P(lds), I(groups), I(programs)),
        NO_CONSTS);
}

/* vLLM's fused MoE: num_tokens tokens each routed to topk of E experts; the pairs sorted by
 * expert into blocks of BM (moe_align_block_size), padded with num_valid */
static void fused_moe(int num_tokens, int topk, int E, int N, int K, int bm, int mul_weight, int warps)
{
    int nv = num_tokens * topk, cap = nv + E * (bm - 1) + bm;
    begin("fused MoE f16 (vLLM's): %d tokens, top-%d of %d experts, N=%d K=%d, BM=%d%s, %d warps",
          num_tokens, topk, E, N, K, bm, mul_weight ? ", routing weights" : "", warps);
    Buf *a = input("a", T_F16, (size_t)num_tokens * K, -1, 1), *b = input("b", T_F16, (size_t)E * N * K, -1, 1);
    Buf *w = input("w", T_F32, nv, 0, 1), *ids = input("ids", T_I32, cap, 0, 0);
    Buf *ex = input("experts", T_I32, cap / bm + 1, 0, 0), *c = output("c", T_F16, (size_t)nv * N, TOL_F16);
    int *expert_of = malloc(sizeof(int) * (size_t)(nv ? nv : 1));
    for (int t = 0; t < num_tokens; t++) /* topk distinct experts per token */
        for (int j = 0; j < topk; j++) {
            int e, dup;
            do {
                e = (int)rnd_int(0, E - 1), dup = 0;
                for (int q = 0; q < j; q++)
                    dup |= expert_of[t * topk + q] == e;
            } while (dup);
            expert_of[t * topk + j] = e;
        }
    int blocks = 0, n = 0;
    for (int e = 0; e < E; e++) {
        int start = n;
        for (int p = 0; p < nv; p++)
            if (expert_of[p] == e)
                ids->v[n++] = p;
        if (n == start)
            continue; /* an expert no token chose has no block */
        while (n % bm)
            ids->v[n++] = nv;
        for (int q = start / bm; q < n / bm; q++)
            ex->v[q] = e, blocks++;
    }
    for (int q = n; q < cap; q++)
        ids->v[q] = nv;
    for (int p = 0; p < nv; p++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            const double *ar = a->v + (size_t)(p / topk) * K, *br = b->v + ((size_t)expert_of[p] * N + j) * K;
            for (int q = 0; q < K; q++)
                s += ar[q] * br[q];
            c->v[(size_t)p * N + j] = mul_weight ? (double)(float)((float)s * (float)w->v[p]) : s;
        }
    free(expert_of);
    run(MM, "fused_moe", ARGS(P(a), P(b), P(c), P(w), P(ids), P(ex), I(blocks), I(num_tokens), I(topk), I(N), I(K)),
        CONSTS({"MUL_WEIGHT", mul_weight}, {"BM", bm}, {"num_warps", warps}));
}

/* x's address as an integer, moved and cast back; x's floats read as u32 bits */
static void address_casts(int n)
{
    begin("addresses as i64/u64 and back, f32 read as u32 through a pointer cast, n=%d", n);
    Buf *x = input("x", T_F32, n > 2 ? (size_t)n : 2, -100, 100);
    Buf *addrs = output("addrs", T_I64, 4, EXACT), *bits = output("bits", T_U32, (size_t)n, EXACT);
    addrs->v[0] = (double)x->d, addrs->v[1] = (double)(x->d + 4), addrs->v[2] = (double)(x->d + 3);
    addrs->v[3] = trunc(x->v[1]);
    for (int i = 0; i < n; i++) {
        float f = (float)x->v[i];
        uint32_t u;
        memcpy(&u, &f, 4);
        bits->v[i] = u;
    }
    run(MM, "address_casts", ARGS(P(x), P(addrs), P(bits), I(n)), NO_CONSTS);
}

/* The tutorial's strided form: a [M, K] row-major or stored transposed ([K, M]), b [K, N] or
 * stored transposed ([N, K], a linear layer's weight), c [M, N] or [N, M] */
static void matmul_strided(int M, int N, int K, int at, int bt, int ct)
{
    begin("matmul (strides%s%s%s, pointers advanced, rows wrapped with %%) f16 %dx%dx%d",
          at ? ", A^T" : "", bt ? ", B^T" : "", ct ? ", C^T" : "", M, N, K);
    Buf *a = input("a", T_F16, (size_t)M * K, -1, 1), *b = input("b", T_F16, (size_t)K * N, -1, 1);
    Buf *c = output("c", T_F32, (size_t)M * N, TOL_F32);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int k = 0; k < K; k++)
                s += a->v[at ? (size_t)k * M + i : (size_t)i * K + k] *
                     b->v[bt ? (size_t)j * K + k : (size_t)k * N + j];
            c->v[ct ? (size_t)j * M + i : (size_t)i * N + j] = s;
        }
    run(MM, "matmul_strided",
        ARGS(P(a), P(b), P(c), I(M), I(N), I(K), I(at ? 1 : K), I(at ? M : 1), I(bt ? 1 : N),
             I(bt ? K : 1), I(ct ? 1 : N), I(ct ? M : 1)), NO_CONSTS);
}

/* int8 operands, i32 accumulation (exact), scaled per row and column in f32 */
static void matmul_int8(int M, int N, int K)
{
    begin("matmul int8 (W8A8, scales per row and column) %dx%dx%d", M, N, K);
    Buf *a = input("a", T_I8, (size_t)M * K, -128, 127), *b = input("b", T_I8, (size_t)K * N, -128, 127);
    Buf *sa = input("a_scale", T_F32, M, 0.001, 0.1), *sb = input("b_scale", T_F32, N, 0.001, 0.1);
    Buf *c = output("c", T_F32, (size_t)M * N, EXACT);
    matmul_ref(a->v, b->v, c->v, M, N, K);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double *v = &c->v[(size_t)i * N + j];
            *v = (float)((float)((float)*v * (float)sa->v[i]) * (float)sb->v[j]);
        }
    run(MM, "matmul_int8", ARGS(P(a), P(b), P(sa), P(sb), P(c), I(M), I(N), I(K)), NO_CONSTS);
}

void t_ports_matmul(void)
{
    /* each (ACT, GROUP_M) is a compile of its own: about 0.5 s on the CPU backend */
    matmul_epilogue(300, 77, 129, 1, 4);
    matmul_epilogue(1, 5, 3, 2, 4);
    matmul_epilogue(64, 96, 64, 3, 4);
    matmul_persistent(100, 77, 129, 5);
    matmul_persistent(33, 200, 40, 3);
    matmul_persistent(64, 64, 32, 64);
    matmul_splitk(100, 77, 129, 4);
    matmul_splitk(37, 45, 300, 7);
    matmul_splitk(5, 3, 17, 3);
    static const int g4[][3] = {{100, 77, 129}, {33, 64, 16}, {1, 5, 7}, {64, 200, 40}};
    grouped_gemm(4, g4, 6);
    grouped_gemm(4, g4, 1);
    static const int g1[][3] = {{70, 40, 50}};
    grouped_gemm(1, g1, 64);
    grouped_gemm_ptrs(4, g4, 6);
    grouped_gemm_ptrs(1, g1, 3);
    address_casts(37);
    fused_moe(37, 2, 4, 96, 80, 16, 1, 4);
    fused_moe(5, 1, 8, 33, 40, 32, 0, 2);
    fused_moe(64, 4, 6, 64, 128, 64, 1, 8);
    address_casts(64);
    matmul_strided(100, 77, 129, 0, 0, 0);
    matmul_strided(100, 77, 129, 0, 1, 0);
    matmul_strided(33, 64, 50, 1, 1, 1);
    matmul_strided(1, 5, 3, 0, 1, 0);
    matmul_int8(100, 77, 129);
    matmul_int8(3, 1, 200);
}

/* ---- transpose, int8 quantization, histograms, argmax, top-k ---- */

static void transpose(Ty t, int M, int N)
{
    begin("transpose %s %dx%d", TY[t].name, M, N);
    Buf *x = input("x", t, (size_t)M * N, -100, 100), *o = output("out", t, (size_t)M * N, EXACT);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++)
            o->v[(size_t)j * M + i] = x->v[(size_t)i * N + j];
    run(MISC, t == T_F32 ? "transpose" : t == T_F16 ? "transpose_f16" : "transpose_i8",
        ARGS(P(x), P(o), I(M), I(N)), NO_CONSTS);
}

/* quant_int8 then dequant_int8; q and scale exact (the kernel's f32 arithmetic, round to
 * nearest even), y exact as q * scale in f32 */
static void quant_int8(int rows, int cols)
{
    begin("int8 quantization (absmax per row) and dequantization %dx%d", rows, cols);
    size_t n = (size_t)rows * cols;
    Buf *x = input("x", T_F32, n, -3, 3);
    Buf *q = output("q", T_I8, n, EXACT), *scale = output("scale", T_F32, rows, EXACT);
    Buf *y = output("y", T_F32, n, EXACT);
    for (int r = 0; r < rows; r++) {
        double *xr = x->v + (size_t)r * cols;
        if (r == 1) /* a row of zeros */
            for (int j = 0; j < cols; j++)
                xr[j] = 0;
        if (r == 2 && cols > 3) /* exact halves: ties round to even */
            xr[0] = 127, xr[1] = 2.5, xr[2] = -0.5, xr[3] = 3.5;
        float amax = 0;
        for (int j = 0; j < cols; j++)
            amax = fmaxf(amax, fabsf((float)xr[j]));
        float inv = amax == 0 ? 1.0f : 127.0f / amax;
        scale->v[r] = amax == 0 ? 1.0f : amax / 127.0f;
        for (int j = 0; j < cols; j++) {
            float v = nearbyintf((float)xr[j] * inv);
            v = v < -127 ? -127 : v > 127 ? 127 : v;
            q->v[(size_t)r * cols + j] = v;
            y->v[(size_t)r * cols + j] = (float)(v * (float)scale->v[r]);
        }
    }
    Launch l[] = {
        {"quant_int8", ARGS(P(x), P(q), P(scale), I(rows), I(cols)), NO_CONSTS},
        {"dequant_int8", ARGS(P(q), P(scale), P(y), I(rows), I(cols)), NO_CONSTS},
    };
    run_seq(MISC, l, 2);
}

static void histogram(int local, int n, int nbins)
{
    begin("histogram of f32 in [-2, 2), %s, n=%d bins=%d", local ? "per-program then atomics" : "atomics",
          n, nbins);
    float lo = -2, hi = 2;
    Buf *x = input("x", T_F32, n, -2.5, 2.5); /* some outside [lo, hi) */
    Buf *bins = inout("bins", T_I32, nbins, EXACT);
    if (n > 3)
        x->v[0] = lo, x->v[1] = hi, x->v[2] = nextafterf(hi, 0);
    for (int b = 0; b < nbins; b++)
        bins->init[b] = bins->v[b] = 3 * b;
    float per = (float)nbins / (hi - lo);
    for (int i = 0; i < n; i++) {
        float v = (float)x->v[i];
        int b = (int)((v - lo) * per);
        if (v >= lo && v < hi && b < nbins)
            bins->v[b] += 1;
    }
    run(MISC, local ? "histogram_local" : "histogram_atomic",
        ARGS(P(x), P(bins), I(n), I(nbins), F(lo), F(hi)), NO_CONSTS);
}

/* small integers as floats, so rows have ties: the first index of the maximum wins */
static void argmax_rows(int chunked, int rows, int cols)
{
    begin("argmax over rows%s %dx%d", chunked ? " in chunks" : "", rows, cols);
    Buf *x = input("x", T_F32, (size_t)rows * cols, 0, 0);
    Buf *idx = output("idx", T_I32, rows, EXACT), *best = chunked ? output("best", T_F32, rows, EXACT) : NULL;
    for (int r = 0; r < rows; r++) {
        int at = 0;
        double *xr = x->v + (size_t)r * cols;
        for (int j = 0; j < cols; j++) {
            xr[j] = (double)rnd_int(-50, 50);
            if (xr[j] > xr[at])
                at = j;
        }
        idx->v[r] = at;
        if (best)
            best->v[r] = xr[at];
    }
    if (chunked)
        run(MISC, "argmax_chunked", ARGS(P(x), P(idx), P(best), I(rows), I(cols)), NO_CONSTS);
    else
        run(MISC, "argmax_rows", ARGS(P(x), P(idx), I(rows), I(cols)), NO_CONSTS);
}

static int cmp_desc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* distinct values (a shuffled ramp), so the indices are unique */
static void topk_rows(int rows, int cols)
{
    enum { K = 8 };
    begin("top-%d over rows %dx%d", K, rows, cols);
    Buf *x = input("x", T_F32, (size_t)rows * cols, 0, 0);
    Buf *vals = output("vals", T_F32, (size_t)rows * K, EXACT), *idx = output("idx", T_I32, (size_t)rows * K, EXACT);
    double *sorted = malloc(sizeof(double) * (size_t)cols);
    for (int r = 0; r < rows; r++) {
        double *xr = x->v + (size_t)r * cols;
        for (int j = 0; j < cols; j++)
            xr[j] = (j - cols / 2) * 0.25;
        for (int j = cols - 1; j > 0; j--) {
            int k = (int)rnd_int(0, j);
            double t = xr[j];
            xr[j] = xr[k], xr[k] = t;
        }
        memcpy(sorted, xr, sizeof(double) * (size_t)cols);
        qsort(sorted, (size_t)cols, sizeof(double), cmp_desc);
        for (int k = 0; k < K; k++) {
            vals->v[(size_t)r * K + k] = k < cols ? sorted[k] : -INFINITY;
            for (int j = 0; j < cols; j++)
                if (k < cols && xr[j] == sorted[k])
                    idx->v[(size_t)r * K + k] = j;
        }
    }
    free(sorted);
    run(MISC, "topk_rows", ARGS(P(x), P(vals), P(idx), I(rows), I(cols)), NO_CONSTS);
}

void t_ports_misc(void)
{
    transpose(T_F32, 300, 77);
    transpose(T_F16, 1, 45);
    transpose(T_I8, 65, 33);
    quant_int8(7, 1000);
    quant_int8(3, 1);
    histogram(0, 10007, 37);
    histogram(1, 10007, 37);
    histogram(1, 5, 64);
    argmax_rows(0, 9, 1000);
    argmax_rows(0, 3, 1);
    argmax_rows(1, 5, 32000);
    argmax_rows(1, 2, 700);
    topk_rows(6, 100);
    topk_rows(2, 128);
}
