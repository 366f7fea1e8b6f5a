/* test_attn_flash.c: stdlib/attention/flash_fwd.tile against a float64 reference: GQA ratios,
 * causal alignment of seq_q < seq_k (and seq_q > seq_k), head sizes 64, 128 and 80, strided
 * layouts, negative and zero scales, sliding window, soft-capping and the log-sum-exp. */
#include <math.h>
#include <stdlib.h>
#include "test_exec.h"

typedef struct Shape {
    int b, h, hkv, sq, sk, d;
} Shape;

typedef struct Opts {
    int causal, sliding, window, lse, kind; /* kind: 1 f16, 2 bf16 */
    double scale, softcap;                  /* softcap 0: off */
    int rows_major;                         /* Q and O as [b, s, h, d], V as [b, s, hkv, d] */
    int block_m, warps;                     /* 0: the defaults */
} Opts;

/* Element strides of a [b, heads, s, d] tensor stored as [b, heads, s, d] or [b, s, heads, d]. */
typedef struct Strides {
    int64_t b, h, s;
} Strides;

static Strides strides(int heads, int s, int d, int rows_major)
{
    if (rows_major)
        return (Strides){(int64_t)s * heads * d, d, (int64_t)heads * d};
    return (Strides){(int64_t)heads * s * d, (int64_t)s * d, d};
}

/* Whether query position qp may see key kp. */
static int visible(const Opts *o, int qp, int kp)
{
    return (!o->causal || kp <= qp) && (!o->sliding || kp > qp - o->window);
}

static double logit(const Opts *o, double s)
{
    s *= o->scale;
    return o->softcap > 0 ? o->softcap * tanh(s / o->softcap) : s;
}

/* One query row: output and log-sum-exp (0 and -inf when no key is visible). */
static void ref_row(const Shape *sh, const Opts *op, const Buf *q, const Buf *k, const Buf *v,
                    const Strides *qs, const Strides *ks, const Strides *vs, int b, int h, int i,
                    double *out, double *lse, double *p)
{
    int kvh = h / (sh->h / sh->hkv), qp = i + sh->sk - sh->sq;
    double m = -INFINITY;
    for (int j = 0; j < sh->sk; j++) {
        p[j] = -INFINITY;
        if (!visible(op, qp, j))
            continue;
        double s = 0;
        for (int d = 0; d < sh->d; d++)
            s += q->v[b * qs->b + h * qs->h + i * qs->s + d] *
                 k->v[b * ks->b + kvh * ks->h + j * ks->s + d];
        p[j] = logit(op, s);
        m = fmax(m, p[j]);
    }
    double sum = 0;
    for (int j = 0; j < sh->sk; j++)
        sum += p[j] = m == -INFINITY ? 0 : exp(p[j] - m);
    for (int d = 0; d < sh->d; d++) {
        double acc = 0;
        for (int j = 0; j < sh->sk; j++)
            if (p[j] != 0)
                acc += p[j] * v->v[b * vs->b + kvh * vs->h + j * vs->s + d];
        out[d] = sum > 0 ? acc / sum : 0;
    }
    *lse = sum > 0 ? m + log(sum) : -INFINITY;
}

static void flash_case(Shape sh, Opts op)
{
    static const Ty tys[] = {T_F32, T_F16, T_BF16};
    static const double tols[] = {2e-5, 3e-3, 2e-2};
    Ty t = tys[op.kind];
    begin("%s b=%d h=%d/%d sq=%d sk=%d d=%d%s%s causal=%d window=%d softcap=%g scale=%g%s%s",
          op.kind == 2 ? "flash_fwd_bf16" : "flash_fwd", sh.b, sh.h, sh.hkv, sh.sq, sh.sk, sh.d,
          op.rows_major ? " [b,s,h,d]" : "", op.lse ? " lse" : "", op.causal,
          op.sliding ? op.window : -1, op.softcap, op.scale, op.block_m ? " BLOCK_M=" : "",
          op.block_m ? (op.warps == 8 ? "32 warps=8" : "16 warps=4") : "");
    Strides qs = strides(sh.h, sh.sq, sh.d, op.rows_major), ks = strides(sh.hkv, sh.sk, sh.d, 0);
    Strides vs = strides(sh.hkv, sh.sk, sh.d, op.rows_major);
    size_t nq = (size_t)sh.b * sh.h * sh.sq * sh.d, nk = (size_t)sh.b * sh.hkv * sh.sk * sh.d;
    Buf *q = input("q", t, nq, -1, 1), *k = input("k", t, nk, -1, 1), *v = input("v", t, nk, -1, 1);
    Buf *o = output("o", t, nq, tols[op.kind]);
    Buf *lse = op.lse ? output("lse", T_F32, (size_t)sh.b * sh.h * sh.sq, 1e-4) : NULL;
    double *p = malloc(sizeof(double) * (size_t)(sh.sk + 1)), row_lse;
    for (int b = 0; b < sh.b; b++)
        for (int h = 0; h < sh.h; h++)
            for (int i = 0; i < sh.sq; i++) {
                double out[256];
                ref_row(&sh, &op, q, k, v, &qs, &ks, &vs, b, h, i, out, &row_lse, p);
                for (int d = 0; d < sh.d; d++)
                    o->v[b * qs.b + h * qs.h + i * qs.s + d] = out[d];
                if (lse)
                    lse->v[((size_t)b * sh.h + h) * sh.sq + i] = row_lse;
            }
    free(p);
    run("stdlib/attention/flash_fwd.tile", op.kind == 2 ? "flash_fwd_bf16" : "flash_fwd",
        ARGS(P(q), P(k), P(v), P(o), lse ? P(lse) : P(q), I(sh.b), I(sh.h), I(sh.hkv), I(sh.sq),
             I(sh.sk), I(qs.b), I(qs.h), I(qs.s), I(ks.b), I(ks.h), I(ks.s), I(vs.b), I(vs.h),
             I(vs.s), I(qs.b), I(qs.h), I(qs.s), F(op.scale), I(op.window), F(op.softcap)),
        (tile_Const[]){{"HEAD_DIM", sh.d}, {"CAUSAL", op.causal}, {"SLIDING", op.sliding},
                       {"SOFTCAP", op.softcap > 0}, {"LSE", op.lse}, {"BLOCK_M", op.block_m},
                       {"num_warps", op.warps}},
        op.block_m ? 7 : 5);
}

void t_flash_fwd(void)
{
    /* b, h, hkv, sq, sk, d */
    static const Shape shapes[] = {{1, 2, 2, 77, 77, 64},  {2, 4, 1, 50, 130, 64},
                                   {1, 8, 2, 130, 130, 64}, {1, 4, 4, 33, 200, 128},
                                   {1, 2, 1, 90, 90, 80},   {1, 1, 1, 1, 1, 64},
                                   {1, 2, 2, 100, 40, 64},  {2, 8, 1, 17, 300, 64}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        Shape sh = shapes[i];
        if (S.quick && (size_t)sh.sq * sh.sk * sh.h > 40000)
            continue;
        double scale = 1 / sqrt(sh.d);
        flash_case(sh, (Opts){.causal = 0, .kind = 1, .scale = scale});
        flash_case(sh, (Opts){.causal = 1, .kind = 1 + (int)(i & 1), .scale = scale,
                              .lse = 1, .rows_major = (int)(i & 1)});
    }
    Shape sh = {1, 4, 2, 150, 150, 64};
    double scale = 1 / sqrt(64.0);
    flash_case(sh, (Opts){.causal = 1, .sliding = 1, .window = 37, .kind = 1, .scale = scale, .lse = 1});
    flash_case(sh, (Opts){.causal = 0, .sliding = 1, .window = 64, .kind = 2, .scale = scale});
    flash_case(sh, (Opts){.causal = 1, .sliding = 1, .window = 0, .kind = 1, .scale = scale, .lse = 1});
    flash_case(sh, (Opts){.causal = 1, .kind = 1, .scale = 4 * scale, .softcap = 2.5, .lse = 1});
    flash_case(sh, (Opts){.causal = 1, .sliding = 1, .window = 20, .kind = 2, .scale = -2 * scale,
                          .softcap = 5, .rows_major = 1});
    flash_case(sh, (Opts){.kind = 1, .scale = 0, .lse = 1});
    flash_case((Shape){1, 2, 1, 70, 70, 96}, (Opts){.causal = 1, .kind = 2, .scale = scale,
                                                    .softcap = 3, .rows_major = 1});
    /* fewer than 16 rows per warp: the warps split the columns of both products */
    flash_case((Shape){1, 2, 1, 45, 90, 64}, (Opts){.causal = 1, .kind = 1, .scale = scale,
                                                    .lse = 1, .block_m = 16, .warps = 4});
    flash_case((Shape){1, 1, 1, 70, 70, 128}, (Opts){.kind = 2, .scale = scale, .block_m = 32,
                                                     .warps = 8, .sliding = 1, .window = 30});
}
