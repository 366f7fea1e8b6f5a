/* test_ports_more.c: more kernels Triton users write, ported to tile (tests/exec/ports_more.tile)
 * and checked against float64 (or exact integer) references at odd sizes: softmax with an
 * online normalizer, group norm, batch-norm statistics, KL divergence, JSD, GeGLU backward,
 * fused add + RMSNorm backward, embedding, scatter_add, index_select, fp8 group and block
 * quantization, a segmented sum, a selective scan, conv2d as an implicit GEMM, searchsorted,
 * top-p masking and reductions over i8 and bool. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "test_exec.h"

#define MORE "tests/exec/ports_more.tile"

static void softmax_online(int rows, int cols)
{
    begin("softmax with an online normalizer over long rows %dx%d", rows, cols);
    Buf *x = input("x", T_F32, (size_t)rows * cols, -20, 20), *y = output("y", T_F32, (size_t)rows * cols, TOL_F32);
    for (int r = 0; r < rows; r++) {
        const double *xr = x->v + (size_t)r * cols;
        double m = -INFINITY, s = 0;
        for (int j = 0; j < cols; j++)
            m = fmax(m, xr[j]);
        for (int j = 0; j < cols; j++)
            s += exp(xr[j] - m);
        for (int j = 0; j < cols; j++)
            y->v[(size_t)r * cols + j] = exp(xr[j] - m) / s;
    }
    run(MORE, "softmax_online", ARGS(P(x), P(y), I(rows), I(cols)), NO_CONSTS);
}

static void group_norm(int N, int C, int HW, int G)
{
    begin("group norm N=%d C=%d HW=%d G=%d", N, C, HW, G);
    size_t n = (size_t)N * C * HW;
    Buf *x = input("x", T_F32, n, -1, 3), *w = input("w", T_F32, C, -1, 1), *b = input("b", T_F32, C, -1, 1);
    Buf *y = output("y", T_F32, n, 1e-4), *mean = output("mean", T_F32, (size_t)N * G, 1e-4);
    Buf *rstd = output("rstd", T_F32, (size_t)N * G, 1e-4);
    int cpg = C / G;
    for (int i = 0; i < N; i++)
        for (int g = 0; g < G; g++) {
            const double *xg = x->v + ((size_t)i * C + (size_t)g * cpg) * HW;
            size_t cnt = (size_t)cpg * HW;
            double mu = 0, var = 0;
            for (size_t k = 0; k < cnt; k++)
                mu += xg[k];
            mu /= cnt;
            for (size_t k = 0; k < cnt; k++)
                var += (xg[k] - mu) * (xg[k] - mu);
            double rs = 1 / sqrt(var / cnt + 1e-5);
            mean->v[i * G + g] = mu, rstd->v[i * G + g] = rs;
            for (size_t k = 0; k < cnt; k++) {
                int ch = g * cpg + (int)(k / HW);
                y->v[((size_t)i * C + (size_t)g * cpg) * HW + k] = (xg[k] - mu) * rs * w->v[ch] + b->v[ch];
            }
        }
    run(MORE, "group_norm", ARGS(P(x), P(w), P(b), P(y), P(mean), P(rstd), I(N), I(C), I(HW), I(G),
                                 F(1e-5)), NO_CONSTS);
}

static void bn_stats(int N, int C, int HW)
{
    begin("batch-norm statistics by atomics N=%d C=%d HW=%d", N, C, HW);
    Buf *x = input("x", T_F32, (size_t)N * C * HW, -2, 2);
    Buf *s = inout("sums", T_F32, C, TOL_F32), *s2 = inout("sumsq", T_F32, C, TOL_F32);
    for (int c = 0; c < C; c++) {
        double a = 0, aa = 0, q = 0;
        for (int i = 0; i < N; i++)
            for (int h = 0; h < HW; h++) {
                double v = x->v[((size_t)i * C + c) * HW + h];
                a += v, aa += fabs(v), q += v * v;
            }
        s->v[c] = a, s2->v[c] = q;
        sum_bound(s, c, aa, (size_t)N * HW);
        sum_bound(s2, c, q, (size_t)N * HW + 1);
    }
    run(MORE, "bn_stats", ARGS(P(x), P(s), P(s2), I(N), I(C), I(HW)), NO_CONSTS);
}

static void kl_div(int log_target, int rows, int cols)
{
    begin("KL divergence%s %dx%d", log_target ? " (log target)" : "", rows, cols);
    size_t n = (size_t)rows * cols;
    Buf *in = input("inp", T_F32, n, -5, 0), *t = input("target", T_F32, n, log_target ? -5 : 0, log_target ? 0 : 1);
    Buf *loss = output("loss", T_F32, rows, 1e-4);
    if (!log_target)
        for (size_t i = 0; i < n; i += 7)
            t->v[i] = 0; /* zero targets add nothing */
    for (int r = 0; r < rows; r++) {
        double s = 0, a = 0;
        for (int j = 0; j < cols; j++) {
            size_t i = (size_t)r * cols + j;
            double v = log_target ? exp(t->v[i]) * (t->v[i] - in->v[i])
                                  : t->v[i] > 0 ? t->v[i] * (log(t->v[i]) - in->v[i]) : 0;
            s += v, a += fabs(v);
        }
        loss->v[r] = s;
        sum_bound(loss, r, a, (size_t)cols + 8);
    }
    run(MORE, "kl_div", ARGS(P(in), P(t), P(loss), I(rows), I(cols)), CONSTS({"LOG_TARGET", log_target}));
}

static void jsd(int rows, int cols, double beta)
{
    begin("generalized JSD beta=%g %dx%d", beta, rows, cols);
    size_t n = (size_t)rows * cols;
    Buf *in = input("inp", T_F32, n, -6, 0), *t = input("target", T_F32, n, -6, 0);
    Buf *loss = output("loss", T_F32, rows, 1e-4), *dx = output("dx", T_F32, n, 1e-4);
    float b = (float)beta;
    for (int r = 0; r < rows; r++) {
        double s = 0, a = 0;
        for (int j = 0; j < cols; j++) {
            size_t i = (size_t)r * cols + j;
            double q = exp(in->v[i]), p = exp(t->v[i]), lm = log(b * p + (1 - b) * q);
            double v = b * p * (t->v[i] - lm) + (1 - b) * q * (in->v[i] - lm);
            s += v, a += fabs(v);
            dx->v[i] = (1 - b) * q * (in->v[i] - lm);
            /* cancels where q ~ m; near m = 1 log(m) keeps m's own rounding (an absolute
             * error of a few ulp of 1, not of |lm|): the + 2 */
            sum_bound(dx, i, (1 - b) * q * (fabs(in->v[i]) + fabs(lm) + 2), 16);
        }
        loss->v[r] = s;
        sum_bound(loss, r, a, (size_t)cols + 64);
    }
    run(MORE, "jsd", ARGS(P(in), P(t), P(loss), P(dx), I(rows), I(cols), F(beta)), NO_CONSTS);
}

static void geglu_bwd(int rows, int cols)
{
    begin("GeGLU (tanh GELU) backward in place, bf16 %dx%d", rows, cols);
    size_t n = (size_t)rows * cols;
    Buf *dc = input("dc", T_BF16, n, -1, 1);
    Buf *a = inout("a", T_BF16, n, 1e-2), *b = inout("b", T_BF16, n, 1e-2);
    const double k = sqrt(2 / M_PI);
    for (size_t i = 0; i < n; i++) {
        double av = a->init[i] = ty_round(T_BF16, 8 * rnd_unit() - 4);
        double bv = b->init[i] = ty_round(T_BF16, 4 * rnd_unit() - 2);
        double t = tanh(k * (av + 0.044715 * av * av * av));
        double g = 0.5 * av * (1 + t);
        double dg = 0.5 * (1 + t) + 0.5 * av * (1 - t * t) * k * (1 + 3 * 0.044715 * av * av);
        a->v[i] = dc->v[i] * bv * dg;
        b->v[i] = dc->v[i] * g;
    }
    run(MORE, "geglu_bwd", ARGS(P(dc), P(a), P(b), I(rows), I(cols)), NO_CONSTS);
}

static void add_rmsnorm_bwd(int rows, int cols, int per)
{
    begin("fused add + RMSNorm backward, bf16 weight, %dx%d ROWS_PER=%d", rows, cols, per);
    size_t n = (size_t)rows * cols;
    int progs = (rows + per - 1) / per;
    Buf *dy = input("dy", T_F32, n, -1, 1), *h = input("h", T_F32, n, -2, 2);
    Buf *w = input("w", T_BF16, cols, -1, 1), *rstd = input("rstd", T_F32, rows, 0, 0);
    Buf *dh = output("dh", T_F32, n, 1e-4), *dw = output("dw_part", T_F32, (size_t)progs * cols, 1e-4);
    double *adw = calloc((size_t)progs * cols, sizeof(double));
    for (int r = 0; r < rows; r++) {
        const double *hr = h->v + (size_t)r * cols, *g = dy->v + (size_t)r * cols;
        double ss = 0, d = 0;
        for (int j = 0; j < cols; j++)
            ss += hr[j] * hr[j];
        double rs = rstd->v[r] = ty_round(T_F32, 1 / sqrt(ss / cols + 1e-6));
        for (int j = 0; j < cols; j++)
            d += g[j] * w->v[j] * hr[j];
        d /= cols;
        double ad = 0; /* the magnitudes in d, for the bound of dh: it cancels when cols is small */
        for (int j = 0; j < cols; j++)
            ad += fabs(g[j] * w->v[j] * hr[j]);
        for (int j = 0; j < cols; j++) {
            size_t i = (size_t)r * cols + j;
            dh->v[i] = rs * (g[j] * w->v[j] - hr[j] * rs * rs * d);
            sum_bound(dh, i, rs * (fabs(g[j] * w->v[j]) + fabs(hr[j]) * rs * rs * ad / cols), (size_t)cols + 8);
            dw->v[(size_t)(r / per) * cols + j] += g[j] * hr[j] * rs;
            adw[(size_t)(r / per) * cols + j] += fabs(g[j] * hr[j] * rs);
        }
    }
    for (size_t i = 0; i < (size_t)progs * cols; i++)
        sum_bound(dw, i, adw[i], (size_t)per + 2);
    free(adw);
    run(MORE, "add_rmsnorm_bwd", ARGS(P(dy), P(h), P(w), P(rstd), P(dh), P(dw), I(rows), I(cols)),
        CONSTS({"ROWS_PER", per}));
}

static void embedding(int T, int V, int D)
{
    begin("embedding lookup f16, i64 ids, T=%d V=%d D=%d", T, V, D);
    Buf *ids = input("ids", T_I64, T, 0, V - 1), *wt = input("weight", T_F16, (size_t)V * D, -1, 1);
    Buf *o = output("out", T_F16, (size_t)T * D, EXACT);
    for (int t = 0; t < T; t++)
        for (int d = 0; d < D; d++)
            o->v[(size_t)t * D + d] = wt->v[(size_t)ids->v[t] * D + d];
    run(MORE, "embedding", ARGS(P(ids), P(wt), P(o), I(T), I(D)), NO_CONSTS);
}

static void scatter_add(int n, int D, int rows)
{
    begin("scatter_add with atomics n=%d D=%d into %d rows", n, D, rows);
    /* small integers: the sums are exact in any order */
    Buf *src = input("src", T_F32, (size_t)n * D, 0, 0), *ix = input("index", T_I32, n, 0, rows - 1);
    Buf *o = inout("out", T_F32, (size_t)rows * D, EXACT);
    for (size_t i = 0; i < (size_t)rows * D; i++)
        o->init[i] = o->v[i] = (double)rnd_int(-10, 10);
    for (int i = 0; i < n; i++)
        for (int d = 0; d < D; d++) {
            double v = src->v[(size_t)i * D + d] = (double)rnd_int(-100, 100);
            o->v[(size_t)ix->v[i] * D + d] += v;
        }
    run(MORE, "scatter_add", ARGS(P(src), P(ix), P(o), I(n), I(D)), NO_CONSTS);
}

static void index_select(int rows, int cols, int k)
{
    begin("index_select along dim 1, %dx%d, %d indices", rows, cols, k);
    Buf *x = input("x", T_F32, (size_t)rows * cols, -1, 1), *ix = input("index", T_I64, k, 0, cols - 1);
    Buf *o = output("out", T_F32, (size_t)rows * k, EXACT);
    for (int r = 0; r < rows; r++)
        for (int j = 0; j < k; j++)
            o->v[(size_t)r * k + j] = x->v[(size_t)r * cols + (size_t)ix->v[j]];
    run(MORE, "index_select", ARGS(P(x), P(ix), P(o), I(rows), I(cols), I(k)), NO_CONSTS);
}

/* ---- fp8 ---- */

static double e4m3_value(int code)
{
    int s = code >> 7, e = (code >> 3) & 15, m = code & 7;
    double v = e ? ldexp(1 + m / 8.0, e - 7) : ldexp(m / 8.0, -6);
    return s ? -v : v;
}

/* the e4m3 code nearest f (ties to the even code), saturating at 448; f finite */
static int e4m3_encode(float f)
{
    int best = 0;
    double bd = INFINITY;
    for (int c = 0; c < 256; c++) {
        if ((c & 0x7f) == 0x7f)
            continue; /* NaN */
        double d = fabs(e4m3_value(c) - (double)f);
        /* a tie between the two zeros goes to f's sign (signbit's nonzero values differ
         * between float and double: compared as truth values) */
        if (d < bd || (d == bd && (c & 1) == 0 && !signbit(e4m3_value(c)) == !signbit(f)))
            bd = d, best = c;
    }
    return best;
}

static void fp8_group_quant(int n)
{
    begin("fp8 e4m3 quantization per group of 128, bf16 in, n=%d", n);
    Buf *x = input("x", T_BF16, n, -30, 30);
    Buf *q = output("q", T_U8, n, EXACT), *s = output("s", T_F32, (n + 127) / 128, EXACT);
    if (n > 200)
        for (int i = 128; i < 256; i++)
            x->v[i] = 0; /* a group of zeros: the scale's floor */
    for (int g = 0; g * 128 < n; g++) {
        float amax = 0;
        for (int i = g * 128; i < n && i < g * 128 + 128; i++)
            amax = fmaxf(amax, fabsf((float)x->v[i]));
        float scale = fmaxf(amax, 1e-10f) / 448.0f;
        s->v[g] = scale;
        for (int i = g * 128; i < n && i < g * 128 + 128; i++) {
            float v = (float)x->v[i] / scale;
            v = v < -448 ? -448 : v > 448 ? 448 : v;
            q->v[i] = e4m3_encode(v);
        }
    }
    tile_Arg args[] = {P(x), P(q), P(s), I(n)};
    run(MORE, "fp8_group_quant", args, 4, NO_CONSTS);
}

static void fp8_block_quant(int M, int N)
{
    begin("fp8 e4m3 quantization per 128x128 block, %dx%d", M, N);
    Buf *x = input("x", T_F32, (size_t)M * N, -5, 5);
    int bm = (M + 127) / 128, bn = (N + 127) / 128;
    Buf *q = output("q", T_U8, (size_t)M * N, EXACT), *s = output("s", T_F32, (size_t)bm * bn, EXACT);
    for (int i = 0; i < bm; i++)
        for (int j = 0; j < bn; j++) {
            float amax = 0;
            for (int r = i * 128; r < M && r < i * 128 + 128; r++)
                for (int c = j * 128; c < N && c < j * 128 + 128; c++)
                    amax = fmaxf(amax, fabsf((float)x->v[(size_t)r * N + c]));
            float scale = fmaxf(amax, 1e-10f) / 448.0f;
            s->v[i * bn + j] = scale;
            for (int r = i * 128; r < M && r < i * 128 + 128; r++)
                for (int c = j * 128; c < N && c < j * 128 + 128; c++)
                    q->v[(size_t)r * N + c] = e4m3_encode((float)x->v[(size_t)r * N + c] / scale);
        }
    run(MORE, "fp8_block_quant", ARGS(P(x), P(q), P(s), I(M), I(N)), NO_CONSTS);
}

static void segment_sum(int nseg, int maxlen)
{
    begin("segmented sum over %d CSR segments (a while loop to each end)", nseg);
    Buf *off = input("offsets", T_I32, (size_t)nseg + 1, 0, 0);
    for (int s = 0; s < nseg; s++)
        off->v[s + 1] = off->v[s] + (double)(s % 3 == 1 ? 0 : rnd_int(1, maxlen));
    int n = (int)off->v[nseg];
    Buf *vals = input("vals", T_F32, n ? n : 1, -1, 1), *o = output("out", T_F32, nseg, TOL_F32);
    for (int s = 0; s < nseg; s++) {
        double a = 0, aa = 0;
        for (int i = (int)off->v[s]; i < (int)off->v[s + 1]; i++)
            a += vals->v[i], aa += fabs(vals->v[i]);
        o->v[s] = a;
        sum_bound(o, s, aa, (size_t)(off->v[s + 1] - off->v[s]) + 1);
    }
    run(MORE, "segment_sum", ARGS(P(vals), P(off), P(o), I(nseg)), NO_CONSTS);
}

static void selective_scan(int D, int L, int S)
{
    begin("selective scan (associative_scan over chunks) D=%d L=%d S=%d", D, L, S);
    Buf *x = input("x", T_F32, (size_t)D * L, -1, 1), *dt = input("dt", T_F32, (size_t)D * L, 0.01, 0.2);
    Buf *A = input("A", T_F32, (size_t)D * S, -2, -0.1), *B = input("Bm", T_F32, (size_t)L * S, -1, 1);
    Buf *C = input("Cm", T_F32, (size_t)L * S, -1, 1), *y = output("y", T_F32, (size_t)D * L, 1e-4);
    double *h = calloc((size_t)S, sizeof(double));
    for (int d = 0; d < D; d++) {
        memset(h, 0, sizeof(double) * S);
        for (int t = 0; t < L; t++) {
            double acc = 0, dtv = dt->v[(size_t)d * L + t];
            for (int s = 0; s < S; s++) {
                h[s] = exp(dtv * A->v[(size_t)d * S + s]) * h[s] + dtv * B->v[(size_t)t * S + s] * x->v[(size_t)d * L + t];
                acc += C->v[(size_t)t * S + s] * h[s];
            }
            y->v[(size_t)d * L + t] = acc;
        }
    }
    free(h);
    run(MORE, "selective_scan", ARGS(P(x), P(dt), P(A), P(B), P(C), P(y), I(D), I(L), I(S)), NO_CONSTS);
}

static void conv2d(int N, int H, int W, int C, int K, int R, int S, int stride, int pad)
{
    int P_ = (H + 2 * pad - R) / stride + 1, Q = (W + 2 * pad - S) / stride + 1;
    begin("conv2d as implicit GEMM f16 N=%d H=%d W=%d C=%d K=%d %dx%d stride %d pad %d", N, H, W, C,
          K, R, S, stride, pad);
    Buf *x = input("x", T_F16, (size_t)N * H * W * C, -1, 1), *w = input("w", T_F16, (size_t)K * R * S * C, -1, 1);
    Buf *y = output("y", T_F32, (size_t)N * P_ * Q * K, 1e-4);
    for (int n = 0; n < N; n++)
        for (int p = 0; p < P_; p++)
            for (int q = 0; q < Q; q++)
                for (int k = 0; k < K; k++) {
                    double a = 0, aa = 0;
                    for (int r = 0; r < R; r++)
                        for (int s = 0; s < S; s++)
                            for (int c = 0; c < C; c++) {
                                int ih = p * stride - pad + r, iw = q * stride - pad + s;
                                if (ih < 0 || ih >= H || iw < 0 || iw >= W)
                                    continue;
                                double t = x->v[(((size_t)n * H + ih) * W + iw) * C + c] *
                                           w->v[(((size_t)k * R + r) * S + s) * C + c];
                                a += t, aa += fabs(t);
                            }
                    size_t i = (((size_t)n * P_ + p) * Q + q) * K + k;
                    y->v[i] = a;
                    sum_bound(y, i, aa, (size_t)R * S * C);
                }
    run(MORE, "conv2d", ARGS(P(x), P(w), P(y), I(N), I(H), I(W), I(C), I(K), I(R), I(S), I(P_), I(Q),
                             I(stride), I(pad)), NO_CONSTS);
}

static void searchsorted(int right, int n, int nb)
{
    begin("searchsorted (%s) of %d values in %d boundaries", right ? "right" : "left", n, nb);
    Buf *b = input("bounds", T_F32, nb, 0, 0), *v = input("v", T_F32, n, 0, 0);
    Buf *o = output("out", T_I64, n, EXACT);
    for (int i = 0; i < nb; i++)
        b->v[i] = i / 2; /* repeats, so left and right differ */
    for (int i = 0; i < n; i++) {
        v->v[i] = (double)rnd_int(-4, nb + 2) * 0.5;
        int k = 0;
        while (k < nb && (right ? b->v[k] <= v->v[i] : b->v[k] < v->v[i]))
            k++;
        o->v[i] = k;
    }
    run(MORE, "searchsorted", ARGS(P(b), P(v), P(o), I(n), I(nb)), CONSTS({"RIGHT", right}));
}

static void top_p(int rows, int cols, double p)
{
    begin("top-p masking p=%g %dx%d", p, rows, cols);
    /* distinct powers of two scaled: exact sums, distinct values */
    Buf *pr = input("probs", T_F32, (size_t)rows * cols, 0, 0), *o = output("out", T_F32, (size_t)rows * cols, TOL_F32);
    for (int r = 0; r < rows; r++) {
        double *v = pr->v + (size_t)r * cols, tot = 0;
        for (int j = 0; j < cols; j++)
            tot += v[j] = (double)(rnd_int(1, 1 << 20) * 8 + j % 8) ;
        for (int j = 0; j < cols; j++)
            v[j] = (float)(v[j] / tot);
        double kept = 0;
        for (int j = 0; j < cols; j++) {
            double before = 0;
            for (int i = 0; i < cols; i++)
                if (v[i] > v[j])
                    before += v[i];
            o->v[(size_t)r * cols + j] = before < p ? v[j] : 0;
            kept += o->v[(size_t)r * cols + j];
        }
        for (int j = 0; j < cols; j++)
            o->v[(size_t)r * cols + j] /= kept;
    }
    run(MORE, "top_p", ARGS(P(pr), P(o), I(rows), I(cols), F(p)), NO_CONSTS);
}

static void int8_stats(int rows, int cols)
{
    begin("i8 and bool reductions per row %dx%d", rows, cols);
    Buf *x = input("x", T_I8, (size_t)rows * cols, -128, 127);
    Buf *nnz = output("nnz", T_I32, rows, EXACT), *any = output("anyneg", T_BOOL, rows, EXACT);
    Buf *all = output("allneg", T_BOOL, rows, EXACT), *mx = output("mx", T_I8, rows, EXACT);
    Buf *tot = output("total", T_I32, rows, EXACT);
    for (int r = 0; r < rows; r++) {
        double *v = x->v + (size_t)r * cols;
        if (r == 1)
            for (int j = 0; j < cols; j++)
                v[j] = -1 - (double)rnd_int(0, 127); /* all negative */
        if (r == 2)
            for (int j = 0; j < cols; j++)
                v[j] = j % 2 ? 0 : 127; /* none negative, half zero */
        int c = 0, an = 0, al = 1, m = -128, t = 0;
        for (int j = 0; j < cols; j++) {
            c += v[j] != 0, an |= v[j] < 0, al &= v[j] < 0, m = v[j] > m ? (int)v[j] : m, t += (int)v[j];
        }
        nnz->v[r] = c, any->v[r] = an, all->v[r] = al, mx->v[r] = m, tot->v[r] = t;
    }
    run(MORE, "int8_stats", ARGS(P(x), P(nnz), P(any), P(all), P(mx), P(tot), I(rows), I(cols)), NO_CONSTS);
}

/* helpers returning another helper's results: an activation and its derivative, the moments */
static void act_moments(int act, int rows, int cols)
{
    begin("activation %s and its derivative through forwarded helper results, row moments %dx%d",
          act ? "silu" : "gelu_tanh", rows, cols);
    size_t n = (size_t)rows * cols;
    Buf *x = input("x", T_F32, n, -4, 4), *y = output("y", T_F32, n, 1e-5), *dy = output("dy", T_F32, n, 1e-5);
    Buf *st = output("stats", T_F32, (size_t)rows * 2, 1e-4);
    const double k = sqrt(2 / M_PI);
    for (int r = 0; r < rows; r++) {
        double mu = 0, var = 0;
        for (int j = 0; j < cols; j++) {
            size_t i = (size_t)r * cols + j;
            double a = x->v[i];
            if (act) {
                double sg = 1 / (1 + exp(-a));
                y->v[i] = a * sg, dy->v[i] = sg * (1 + a * (1 - sg));
            } else {
                double t = tanh(k * (a + 0.044715 * a * a * a));
                y->v[i] = 0.5 * a * (1 + t);
                dy->v[i] = 0.5 * (1 + t) + 0.5 * a * (1 - t * t) * k * (1 + 3 * 0.044715 * a * a);
            }
            mu += y->v[i];
        }
        mu /= cols;
        for (int j = 0; j < cols; j++)
            var += (y->v[(size_t)r * cols + j] - mu) * (y->v[(size_t)r * cols + j] - mu);
        st->v[2 * r] = mu, st->v[2 * r + 1] = var / cols;
    }
    run(MORE, "act_moments", ARGS(P(x), P(y), P(dy), P(st), I(rows), I(cols)), CONSTS({"ACT", act}));
}

/* reshape, permute, trans and broadcast_to with their dims as Triton's varargs */
static void split_heads(int T)
{
    enum { H = 4, D = 8 };
    begin("split heads by reshape/permute/trans with varargs dims, T=%d", T);
    Buf *x = input("x", T_F32, (size_t)T * H * D, -1, 1);
    Buf *o = output("out", T_F32, (size_t)T * H * D, EXACT), *xt = output("xt", T_F32, (size_t)T * H * D, EXACT);
    for (int t = 0; t < T; t++)
        for (int c = 0; c < H * D; c++) {
            o->v[((size_t)(c / D) * T + t) * D + c % D] = x->v[(size_t)t * H * D + c];
            xt->v[(size_t)c * T + t] = x->v[(size_t)t * H * D + c];
        }
    run(MORE, "split_heads", ARGS(P(x), P(o), P(xt), I(T)), NO_CONSTS);
}

void t_ports_more(void)
{
    softmax_online(5, 1000);
    softmax_online(2, 1);
    softmax_online(3, 256);
    group_norm(3, 6, 77, 3);
    group_norm(2, 32, 9, 8);
    bn_stats(5, 3, 150);
    bn_stats(9, 4, 1);
    kl_div(0, 5, 700);
    kl_div(1, 3, 33);
    jsd(5, 700, 0.3);
    jsd(2, 3, 0.5);
    geglu_bwd(3, 1000);
    geglu_bwd(1, 1);
    add_rmsnorm_bwd(9, 300, 4);
    add_rmsnorm_bwd(1, 1, 4);
    add_rmsnorm_bwd(8, 512, 2);
    embedding(37, 50, 100);
    embedding(1, 3, 1);
    scatter_add(77, 45, 10);
    scatter_add(3, 1, 1);
    index_select(5, 50, 300);
    index_select(1, 1, 1);
    fp8_group_quant(1000);
    fp8_group_quant(5);
    fp8_block_quant(200, 130);
    fp8_block_quant(1, 3);
    segment_sum(20, 300);
    segment_sum(2, 1);
    selective_scan(3, 77, 13);
    selective_scan(2, 1, 1);
    selective_scan(1, 64, 16);
    conv2d(2, 9, 7, 5, 6, 3, 3, 2, 1);
    conv2d(1, 5, 5, 3, 17, 1, 1, 1, 0);
    conv2d(1, 12, 12, 16, 32, 3, 3, 1, 1);
    searchsorted(0, 300, 40);
    searchsorted(1, 300, 40);
    searchsorted(0, 5, 1);
    top_p(3, 700, 0.5);
    top_p(2, 1024, 0.9);
    top_p(1, 3, 0.2);
    int8_stats(4, 200);
    int8_stats(3, 1);
    int8_stats(3, 256);
    act_moments(0, 5, 200);
    act_moments(1, 3, 256);
    act_moments(1, 2, 1);
    split_heads(37);
    split_heads(1);
}
