/* test_attn_paged.c: exec group `paged`: stdlib/attention/paged.tile (unified paged attention
 * over a batch mixing prefill and decode requests, and its split-KV path) against a float64
 * reference, with block tables in shuffled order, padded strides, GQA, head sizes that need
 * padding, soft-capping and sliding windows. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "test_exec.h"

enum { MAX_SEQS = 300, MAX_SPLITS = 16 };

/* Each sequence: its new queries and its KV length (queries included); q_len 0 is a sequence
 * with nothing to compute this step. */
typedef struct Batch {
    int n;
    int q_len[MAX_SEQS], kv_len[MAX_SEQS];
} Batch;

static const Batch MIXED = {7, {37, 1, 0, 1, 50, 1, 3}, {57, 100, 13, 1, 50, 200, 70}};
static const Batch DECODES = {5, {1, 1, 0, 2, 1}, {300, 77, 5, 130, 1}};
static const Batch SMALL = {4, {9, 1, 0, 2}, {40, 33, 7, 300}};

typedef struct PagedCase {
    const Batch *b;
    int group, kv_heads, head_dim, page, block_n, bf16;
    int window;      /* > 0: SLIDING with this window */
    double softcap;  /* > 0: SOFTCAP */
    double scale;    /* times 1 / sqrt(head_dim) */
    int splits;      /* > 0: SPLIT with NUM_SPLITS = splits, then paged_combine */
    int big;         /* skipped with --quick */
    int block_q, warps; /* > 0: BLOCK_Q and num_warps instead of the defaults */
    int stages;         /* > 0: num_stages (the pipeliner's table prefetch at depths 3, 4) */
    int len_hint;       /* > 0: max_seq_len instead of the longest KV length (only a tuning key) */
} PagedCase;

/* The longest KV length of the batch (at least 1). */
static int longest_kv(const Batch *b)
{
    int longest = 1;
    for (int s = 0; s < b->n; s++)
        longest = b->kv_len[s] > longest ? b->kv_len[s] : longest;
    return longest;
}

/* The layout of one case: strides in elements, the block table and the query starts. */
typedef struct Layout {
    int tokens, q_heads, num_blocks, max_blocks;
    int sqt, sqh, sot, soh, sbt;
    long long sb;
    int ss, sh;
    int qsl[MAX_SEQS + 1];
} Layout;

static Layout layout(const PagedCase *c)
{
    Layout l = {0};
    const Batch *b = c->b;
    int D = c->head_dim;
    for (int s = 0; s < b->n; s++) {
        l.qsl[s + 1] = l.qsl[s] + b->q_len[s];
        int blocks = (b->kv_len[s] + c->page - 1) / c->page;
        l.num_blocks += blocks;
        l.max_blocks = blocks > l.max_blocks ? blocks : l.max_blocks;
    }
    l.num_blocks += 2; /* spares that no sequence owns */
    l.tokens = l.qsl[b->n];
    l.q_heads = c->kv_heads * c->group;
    l.sqh = D, l.sqt = l.q_heads * D + 8; /* Q as a view into a wider row (fused QKV) */
    l.soh = D, l.sot = l.q_heads * D;
    l.sh = D, l.ss = c->kv_heads * D, l.sb = (long long)c->page * l.ss + 24;
    l.sbt = l.max_blocks + 3;
    return l;
}

/* Block table rows: the physical blocks in a random permutation, unused entries pointing at
 * blocks of other sequences (never read for keys past a sequence's end). */
static void fill_block_table(Buf *bt, const PagedCase *c, const Layout *l)
{
    int *perm = malloc(sizeof(int) * (size_t)l->num_blocks);
    if (!perm) {
        case_fail("out of memory");
        return;
    }
    for (int i = 0; i < l->num_blocks; i++)
        perm[i] = i;
    for (int i = l->num_blocks - 1; i > 0; i--) {
        int j = (int)rnd_int(0, i), t = perm[i];
        perm[i] = perm[j], perm[j] = t;
    }
    int next = 0;
    for (int s = 0; s < c->b->n; s++) {
        int blocks = (c->b->kv_len[s] + c->page - 1) / c->page;
        for (int i = 0; i < l->sbt; i++)
            bt->v[(size_t)s * l->sbt + i] = i < blocks ? perm[next + i]
                                                       : (double)rnd_int(0, l->num_blocks - 1);
        next += blocks;
    }
    free(perm);
}

/* Element d of the cached K or V row of key j of sequence s, KV head h. */
static double cached(const Buf *cache, const Buf *bt, const Layout *l, int page, int s, int j,
                     int h, int d)
{
    long long phys = (long long)bt->v[(size_t)s * l->sbt + j / page];
    return cache->v[phys * l->sb + (long long)(j % page) * l->ss + (long long)h * l->sh + d];
}

/* One query row: softmax over the keys it may see (causal at position pos, the window), in
 * double; out gets its head_dim values. */
static void ref_row(const PagedCase *c, const Layout *l, const Buf *q, const Buf *k, const Buf *v,
                    const Buf *bt, int s, int t, int h, int pos, double *p, double *out)
{
    int D = c->head_dim, kvh = h / c->group, lo = 0;
    double scale = (float)(c->scale / sqrt(D)), m = -INFINITY, sum = 0;
    if (c->window > 0 && pos - c->window + 1 > 0)
        lo = pos - c->window + 1;
    const double *qr = q->v + (size_t)t * l->sqt + (size_t)h * l->sqh;
    for (int j = lo; j <= pos; j++) {
        double x = 0;
        for (int d = 0; d < D; d++)
            x += qr[d] * cached(k, bt, l, c->page, s, j, kvh, d);
        x *= scale;
        if (c->softcap > 0)
            x = (float)c->softcap * tanh(x / (float)c->softcap);
        m = fmax(m, p[j] = x);
    }
    for (int j = lo; j <= pos; j++)
        sum += p[j] = exp(p[j] - m);
    for (int d = 0; d < D; d++) {
        double acc = 0;
        for (int j = lo; j <= pos; j++)
            acc += p[j] * cached(v, bt, l, c->page, s, j, kvh, d);
        out[d] = acc / sum;
    }
}

static void paged_ref(const PagedCase *c, const Layout *l, const Buf *q, const Buf *k,
                      const Buf *v, const Buf *bt, Buf *o)
{
    double *p = malloc(sizeof(double) * (size_t)longest_kv(c->b));
    if (!p) {
        case_fail("out of memory");
        return;
    }
    for (int s = 0; s < c->b->n; s++)
        for (int i = 0; i < c->b->q_len[s]; i++) {
            int t = l->qsl[s] + i, pos = c->b->kv_len[s] - c->b->q_len[s] + i;
            for (int h = 0; h < l->q_heads; h++)
                ref_row(c, l, q, k, v, bt, s, t, h, pos, p,
                        o->v + (size_t)t * l->sot + (size_t)h * l->soh);
        }
    free(p);
}

static void describe(const PagedCase *c)
{
    char extra[128] = "";
    int n = 0;
    if (c->window)
        n += snprintf(extra + n, sizeof extra - (size_t)n, " window=%d", c->window);
    if (c->softcap > 0)
        n += snprintf(extra + n, sizeof extra - (size_t)n, " softcap=%g", c->softcap);
    if (c->splits)
        n += snprintf(extra + n, sizeof extra - (size_t)n, " SPLIT NUM_SPLITS=%d",
                      c->splits);
    if (c->block_q)
        n += snprintf(extra + n, sizeof extra - (size_t)n, " BLOCK_Q=%d num_warps=%d",
                      c->block_q, c->warps);
    if (c->stages)
        n += snprintf(extra + n, sizeof extra - (size_t)n, " num_stages=%d", c->stages);
    begin("%s group=%d kv_heads=%d d=%d page=%d BLOCK_N=%d seqs=%d scale=%g%s",
          c->bf16 ? "paged_bf16" : "paged", c->group, c->kv_heads,
          c->head_dim, c->page, c->block_n, c->b->n, c->scale, extra);
}

/* The case's inputs (the reference in o) and its output. */
typedef struct Bufs {
    Buf *q, *k, *v, *bt, *lens, *qsl, *o;
} Bufs;

static Bufs paged_inputs(const PagedCase *c, const Layout *l)
{
    Ty t = c->bf16 ? T_BF16 : T_F16;
    size_t cache_n = (size_t)l->num_blocks * (size_t)l->sb;
    Bufs b = {.q = input("q", t, (size_t)l->tokens * l->sqt, -1, 1),
              .k = input("k_cache", t, cache_n, -1, 1),
              .v = input("v_cache", t, cache_n, -1, 1),
              .bt = input("block_table", T_I32, (size_t)c->b->n * l->sbt, 0, 0),
              .lens = input("seq_lens", T_I32, (size_t)c->b->n, 0, 0),
              .qsl = input("query_start_loc", T_I32, (size_t)c->b->n + 1, 0, 0),
              .o = output("o", t, (size_t)l->tokens * l->sot, c->bf16 ? 2e-2 : 3e-3)};
    fill_block_table(b.bt, c, l);
    for (int s = 0; s <= c->b->n; s++) {
        b.qsl->v[s] = l->qsl[s];
        if (s < c->b->n)
            b.lens->v[s] = c->b->kv_len[s];
    }
    paged_ref(c, l, b.q, b.k, b.v, b.bt, b.o);
    return b;
}

/* Launches paged (paged_bf16); with SPLIT its last split merges the rows, and the counters
 * (one per query block and KV head: at most tokens + sequences blocks) end at 0 again. */
static void paged_case(const PagedCase *c)
{
    describe(c);
    Layout l = layout(c);
    Bufs b = paged_inputs(c, &l);
    int D = c->head_dim;
    tile_Const cs[11] = {{"HEAD_DIM", D},           {"GROUP", c->group},
                         {"PAGE", c->page},         {"BLOCK_N", c->block_n},
                         {"SLIDING", c->window > 0}, {"SOFTCAP", c->softcap > 0},
                         {"SPLIT", c->splits > 0}};
    int ncs = 7;
    if (c->splits)
        cs[ncs++] = (tile_Const){"NUM_SPLITS", c->splits};
    if (c->block_q)
        cs[ncs++] = (tile_Const){"BLOCK_Q", c->block_q},
        cs[ncs++] = (tile_Const){"num_warps", c->warps};
    if (c->stages)
        cs[ncs++] = (tile_Const){"num_stages", c->stages};
    /* without SPLIT the workspaces and counters are not touched: o stands in for them */
    size_t rows = c->splits ? (size_t)l.tokens * l.q_heads * MAX_SPLITS : 0;
    Buf *ws_o = c->splits ? scratch("ws_o", T_F32, rows * D) : b.o;
    Buf *ws_lse = c->splits ? scratch("ws_lse", T_F32, rows) : b.o;
    Buf *counters = c->splits ? inout("counters", T_I32, (size_t)(l.tokens + c->b->n) * c->kv_heads,
                                      EXACT) : b.o;
    int max_len = c->len_hint ? c->len_hint : longest_kv(c->b);
    tile_Arg a[] = {P(b.q), P(b.k), P(b.v), P(b.o), P(ws_o), P(ws_lse), P(counters), P(b.bt),
                    P(b.lens), P(b.qsl), I(l.tokens), I(c->b->n), I(max_len), I(c->kv_heads),
                    I(l.sqt), I(l.sqh), I(l.sot), I(l.soh), I(l.sb), I(l.ss), I(l.sh), I(l.sbt),
                    F(c->scale / sqrt(D)), I(c->window), F(c->softcap)};
    run("stdlib/attention/paged.tile", c->bf16 ? "paged_bf16" : "paged", a, 25, cs, ncs);
}

/* A configuration drawn afresh every run (the seed repeats it): GQA ratio, head size, page,
 * key block, element type, masks, scale, split count, query block, warps and stages, over a
 * small batch of empty, decode and prefill requests. */
static void random_case(void)
{
    static const int groups[] = {1, 2, 3, 4, 5, 8}, dims[] = {64, 80, 128}, pow2[] = {16, 32, 64};
    static Batch b;
    b.n = (int)rnd_int(1, 12);
    for (int s = 0; s < b.n; s++) {
        int kind = (int)rnd_int(0, 3);
        b.q_len[s] = kind == 0 ? 0 : kind < 3 ? 1 : (int)rnd_int(2, 24);
        b.kv_len[s] = b.q_len[s] + (int)rnd_int(kind == 0 ? 0 : 1, 150);
    }
    PagedCase c = {&b, groups[rnd_int(0, 5)], (int)rnd_int(1, 2), dims[rnd_int(0, 2)],
                   pow2[rnd_int(0, 2)], pow2[rnd_int(0, 2)],
                   (int)rnd_int(0, 1)};
    c.window = rnd_int(0, 1) ? (int)rnd_int(1, 60) : 0;
    c.softcap = rnd_int(0, 1) ? 1.0 + 3.0 * rnd_unit() : 0;
    c.scale = rnd_int(0, 1) ? 1 : -2;
    c.splits = rnd_int(0, 1) ? (int)rnd_int(1, 20) : 0;
    int rows, width = c.head_dim > 64 ? 128 : 64;
    do { /* 16 to 128 rows of BLOCK_Q x GROUP, an accumulator of at most 64 f32 a thread */
        c.block_q = 1 << rnd_int(0, 5);
        c.warps = 1 << rnd_int(0, 2);
        for (rows = 16; rows < c.block_q * c.group; rows *= 2) {}
    } while (c.block_q * c.group < 16 || rows > 128 || rows * width > 64 * 32 * c.warps);
    c.stages = (int)rnd_int(2, 4);
    paged_case(&c);
}

void t_attn_paged(void)
{
    /* Each case covers several features, so that few kernels are compiled: GQA ratios 1, 3,
     * 4, 8; PAGE 16, 32, 64 with BLOCK_N below and above it; head sizes 64, 128, 80; f16
     * and bf16; negative scales, soft-capping, windows; the split path with 3, 4 and 20
     * splits (20 runs MAX_SPLITS = 16), 6 with 32 rows of 128. */
    static const PagedCase cases[] = {
        /* batch, group, kv_heads, head_dim, page, BLOCK_N, bf16, window, softcap, scale,
         * splits, big, BLOCK_Q, num_warps, num_stages */
        {&MIXED, 1, 2, 64, 16, 32, 0, 0, 0, 1, 0, 0},
        {&MIXED, 4, 2, 128, 32, 16, 1, 0, 0, -1, 0, 1, 8, 8},
        {&MIXED, 8, 1, 80, 64, 16, 0, 37, 2.0, 4, 0, 1},
        {&DECODES, 8, 1, 64, 16, 16, 0, 0, 0, 1, 4, 0, 1, 2, 4},
        {&MIXED, 4, 2, 64, 32, 16, 1, 23, 3.0, -2, 3, 0},
        {&SMALL, 3, 2, 64, 16, 32, 0, 5, 0, 1, 20, 0, 0, 0, 3},
        /* 32 rows of 128 and 6 splits in the split path */
        {&DECODES, 4, 2, 128, 16, 32, 0, 0, 0, 1, 6, 0, 8, 4, 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (!(S.quick && cases[i].big))
            paged_case(&cases[i]);
    /* a batch of new shape every run, on the first case's kernel: empty, decode and prefill
     * requests with cached prefixes of random lengths; max_seq_len far below them (it only
     * picks the tuned configuration) */
    Batch random = {MAX_SEQS, {0}, {0}};
    for (int s = 0; s < MAX_SEQS; s++) {
        int kind = (int)rnd_int(0, 2);
        random.q_len[s] = kind == 0 ? 0 : kind == 1 ? 1 : (int)rnd_int(2, 40);
        random.kv_len[s] = random.q_len[s] + (int)rnd_int(kind == 2 ? 0 : 1, 90);
    }
    PagedCase c = cases[0];
    c.b = &random;
    c.len_hint = 1;
    paged_case(&c);
    /* 300 sequences (more than one read of 128 at a time, many steps of a search), mostly
     * decodes, on the paths with and without SPLIT */
    static Batch many;
    many.n = MAX_SEQS;
    for (int s = 0; s < MAX_SEQS; s++) {
        int kind = (int)rnd_int(0, 9);
        many.q_len[s] = kind == 0 ? 0 : kind < 8 ? 1 : (int)rnd_int(2, 6);
        many.kv_len[s] = many.q_len[s] + (int)rnd_int(kind == 0 ? 0 : 1, 60);
    }
    c.b = &many;
    c.len_hint = 0;
    paged_case(&c);
    c = cases[3];
    c.b = &many;
    paged_case(&c);
    /* 77 decodes, one query each: every program's first guess of its sequence is right (the
     * batches above also take the search) */
    static Batch decodes;
    decodes.n = 77;
    for (int s = 0; s < decodes.n; s++)
        decodes.q_len[s] = 1, decodes.kv_len[s] = 1 + (int)rnd_int(0, 80);
    c = cases[0];
    c.b = &decodes;
    paged_case(&c);
    c = cases[3];
    c.b = &decodes;
    paged_case(&c);
    random_case();
}
