/* test_attn_decode.c: the "decode" group of the execution tests: stdlib/attention/decode.tile's
 * `decode` then `decode_combine` (f16 and bf16) against a float64 softmax over each query
 * token's visible keys. Cases cover GQA ratios 1, 4 and 8, one to three query tokens, empty,
 * single-token, odd and multi-split sequences, strided layouts, head sizes 64, 80 and 128,
 * negative and zero scales, soft-capping and sliding windows. Keys and values past each
 * sequence's length are NaN, so a read past it shows in the output. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "test_exec.h"

#define DECODE "stdlib/attention/decode.tile"

enum { MAX_BATCH = 4 };

typedef struct DecodeCase {
    int batch, kv_heads, group, qlen, head_dim;
    int lens[MAX_BATCH]; /* keys per sequence (the kernel clamps them to [0, max_len]) */
    int max_len;         /* positions the K/V cache holds per sequence */
    int splits, max_splits, block_n, warps, stages; /* stages: num_stages */
    int bf16;
    int strided;        /* q, o as [batch, QLEN, heads, D]; K, V as [batch, max_len, kv_heads, D] */
    double scale_mul;   /* scale = scale_mul / sqrt(D) */
    int window;         /* > 0: SLIDING with this window */
    double softcap;     /* > 0: SOFTCAP with this cap */
} DecodeCase;

static const DecodeCase cases[] = {
    /* batch, kv_heads, group, qlen, d, lens, max_len, splits, max_splits, block_n, warps,
     * stages, bf16, strided, scale_mul, window, softcap; four specializations (each compile
     * costs about a second on the CPU backend), several cases each */
    {4, 2, 1, 1, 64, {0, 1, 50, 17}, 56, 1, 16, 16, 4, 2, 1, 0, 1, 0, 0},   /* empty, one key */
    {1, 1, 1, 1, 64, {50}, 64, 1, 16, 16, 4, 2, 1, 0, 0, 0, 0},             /* scale 0: the mean */
    {2, 1, 1, 1, 64, {-5, 70}, 64, 1, 16, 16, 4, 2, 1, 0, 1, 0, 0},         /* lengths clamped */
    {2, 3, 1, 1, 64, {300, 129}, 320, 1, 16, 16, 4, 2, 1, 1, -2, 0, 0},     /* negative scale */
    {3, 2, 4, 1, 128, {37, 100, 1}, 128, 16, 16, 32, 4, 3, 0, 1, 1, 0, 0},  /* GQA 4, 16 splits */
    {1, 1, 4, 1, 128, {2000}, 2048, 16, 16, 32, 4, 3, 0, 0, 4, 0, 0},       /* long */
    /* QLEN 3, D 80, cap, 8 splits of which 5 fit; at 49 keys a block holds a key that only
     * the later queries see */
    {3, 2, 4, 3, 80, {77, 2, 49}, 90, 8, 5, 16, 2, 3, 0, 0, 1, 0, 5},
    {2, 2, 4, 3, 80, {700, 333}, 800, 8, 5, 16, 2, 3, 0, 1, 2, 0, 30},      /* long */
    /* GQA 8, window and cap; at 164 keys the window starts on a block's edge */
    {3, 1, 8, 2, 64, {150, 3, 164}, 170, 2, 16, 16, 8, 2, 0, 1, 2, 20, 10},
    {3, 1, 8, 2, 64, {45, 1, 64}, 64, 2, 16, 16, 8, 2, 0, 0, -1, 1, 10},    /* window of 1 */
    {2, 1, 8, 2, 64, {200, 31}, 256, 2, 16, 16, 8, 2, 0, 0, 1, 50, 50},     /* window of 50 */
};

/* Element strides (batch, head, position or token) of q/o and of K and V. */
typedef struct Layout {
    long long qb, qh, qt, kb, kh, kn;
} Layout;

static Layout layout(const DecodeCase *c)
{
    long long D = c->head_dim, H = (long long)c->kv_heads * c->group, Q = c->qlen;
    long long KH = c->kv_heads, N = c->max_len;
    if (c->strided)
        return (Layout){Q * H * D, D, H * D, N * KH * D, D, KH * D};
    return (Layout){H * Q * D, Q * D, D, KH * N * D, N * D, D};
}

static int keys_of(const DecodeCase *c, int b)
{
    return c->lens[b] < 0 ? 0 : c->lens[b] > c->max_len ? c->max_len : c->lens[b];
}

/* One query row's output: the softmax of its scaled (and capped) logits over the keys it
 * sees, times V; 0 when it sees none. */
static void ref_row(const DecodeCase *c, const Layout *L, const Buf *q, const Buf *k,
                    const Buf *v, Buf *o, int b, int h, int t, double scale)
{
    int D = c->head_dim, len = keys_of(c, b), pos = len - c->qlen + t;
    size_t qoff = (size_t)(b * L->qb + h * L->qh + t * L->qt);
    size_t kv = (size_t)(b * L->kb + (h / c->group) * L->kh);
    double *p = calloc((size_t)len + 1, sizeof(double)), m = -INFINITY, sum = 0;
    for (int j = 0; j < len; j++) {
        p[j] = -INFINITY;
        if (j > pos || (c->window > 0 && j <= pos - c->window))
            continue;
        double s = 0;
        for (int d = 0; d < D; d++)
            s += q->v[qoff + d] * k->v[kv + (size_t)(j * L->kn) + d];
        s *= scale;
        p[j] = c->softcap > 0 ? (float)c->softcap * tanh(s / (float)c->softcap) : s;
        m = fmax(m, p[j]);
    }
    for (int j = 0; j < len; j++)
        sum += p[j] = p[j] == -INFINITY ? 0 : exp(p[j] - m);
    for (int d = 0; d < D; d++) {
        double acc = 0;
        for (int j = 0; j < len; j++)
            if (p[j] != 0)
                acc += p[j] * v->v[kv + (size_t)(j * L->kn) + d];
        o->v[qoff + d] = sum > 0 ? acc / sum : 0;
    }
    free(p);
}

/* Keys and values at positions past each sequence's length become NaN. */
static void poison_tail(const DecodeCase *c, const Layout *L, Buf *kv)
{
    for (int b = 0; b < c->batch; b++)
        for (int h = 0; h < c->kv_heads; h++)
            for (int j = keys_of(c, b); j < c->max_len; j++)
                for (int d = 0; d < c->head_dim; d++)
                    kv->v[b * L->kb + h * L->kh + j * L->kn + d] = NAN;
}

/* fused: `decode_fused` in one launch (its counters start at zero and must end there), else
 * `decode` then `decode_combine`. */
static void one_case(const DecodeCase *c, int fused)
{
    int H = c->kv_heads * c->group, D = c->head_dim, BD = 1;
    while (BD < D)
        BD *= 2;
    Ty t = c->bf16 ? T_BF16 : T_F16;
    double scale = c->scale_mul / sqrt(D);
    char lens_str[64] = "";
    for (int b = 0, at = 0; b < c->batch; b++)
        at += snprintf(lens_str + at, sizeof lens_str - (size_t)at, b ? ",%d" : "%d", c->lens[b]);
    begin("decode%s%s kv_heads=%d group=%d qlen=%d d=%d lens=%s splits=%d/%d block_n=%d%s "
          "scale=%g window=%d softcap=%g", fused ? "_fused" : "", c->bf16 ? "_bf16" : "", c->kv_heads, c->group,
          c->qlen, D, lens_str, c->splits, c->max_splits, c->block_n,
          c->strided ? " strided" : "", scale, c->window, c->softcap);
    Layout L = layout(c);
    size_t rows = (size_t)c->batch * H * c->qlen, nq = rows * D;
    size_t nkv = (size_t)c->batch * c->kv_heads * c->max_len * D;
    Buf *q = input("q", t, nq, -1, 1), *k = input("k", t, nkv, -1, 1);
    Buf *v = input("v", t, nkv, -1, 1);
    Buf *lens = input("seq_lens", T_I32, (size_t)c->batch, 0, 0);
    Buf *po = scratch("partial_o", T_F32, rows * c->max_splits * BD);
    Buf *plse = scratch("partial_lse", T_F32, rows * c->max_splits);
    Buf *o = output("o", t, nq, c->bf16 ? 2e-2 : 3e-3);
    for (int b = 0; b < c->batch; b++)
        lens->v[b] = c->lens[b];
    poison_tail(c, &L, k);
    poison_tail(c, &L, v);
    for (int b = 0; b < c->batch; b++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < c->qlen; i++)
                ref_row(c, &L, q, k, v, o, b, h, i, (float)scale);
    tile_Arg dargs[] = {P(q), P(k), P(v), P(lens), P(po), P(plse), I(c->batch), I(c->kv_heads),
                        I(c->max_len), F(scale), I(c->window), F(c->softcap), I(L.qb), I(L.qh),
                        I(L.qt), I(L.kb), I(L.kh), I(L.kn)};
    tile_Const dconsts[] = {{"HEAD_DIM", D}, {"GROUP", c->group}, {"QLEN", c->qlen},
                            {"BLOCK_N", c->block_n}, {"NUM_SPLITS", c->splits},
                            {"MAX_SPLITS", c->max_splits}, {"SLIDING", c->window > 0},
                            {"SOFTCAP", c->softcap > 0}, {"num_warps", c->warps},
                            {"num_stages", c->stages}};
    tile_Arg cargs[] = {P(po), P(plse), P(o), I(c->batch), I(H), I(L.qb), I(L.qh), I(L.qt)};
    tile_Const cconsts[] = {{"HEAD_DIM", D}, {"QLEN", c->qlen}, {"MAX_SPLITS", c->max_splits},
                            {"num_warps", 4}};
    Launch pair[] = {{c->bf16 ? "decode_bf16" : "decode", dargs, 18, dconsts, 10},
                     {c->bf16 ? "decode_combine_bf16" : "decode_combine", cargs, 8, cconsts, 4}};
    if (!fused) {
        run_seq(DECODE, pair, 2);
        return;
    }
    Buf *counters = inout("counters", T_I32, (size_t)c->batch * c->kv_heads, EXACT);
    tile_Arg fargs[] = {P(q), P(k), P(v), P(lens), P(po), P(plse), P(counters), P(o),
                        I(c->batch), I(c->kv_heads), I(c->max_len), F(scale), I(c->window),
                        F(c->softcap), I(L.qb), I(L.qh), I(L.qt), I(L.kb), I(L.kh), I(L.kn),
                        I(L.qb), I(L.qh), I(L.qt)};
    run(DECODE, c->bf16 ? "decode_fused_bf16" : "decode_fused", fargs, 23, dconsts, 10);
}

void t_attn_decode(void)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (!S.quick || cases[i].lens[0] < 500)
            for (int fused = 0; fused < 2; fused++)
                one_case(&cases[i], fused);
}
