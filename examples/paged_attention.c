/* paged_attention.c: a C program that runs stdlib/attention/paged.tile's `paged` kernel (f16
 * unified paged attention) through tile.h alone, on a batch that mixes prefill requests (one
 * with a prefix already in the KV cache) with single-token decodes, their cache blocks in a
 * shuffled order. It launches with tile_launch only: the kernel's @grid, @tune and @key pick
 * the grid and the block sizes. Checks the output against a float64 reference, prints a line.
 *   usage: paged_attention [--backend=auto|cpu|cuda] [PAGED_TILE_FILE] */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tile.h"

/* The batch: 4 sequences of (new queries, KV length including them); GQA 8 query heads over
 * 2 KV heads; head size 64; 16 tokens per cache block. */
enum { SEQS = 4, KV_HEADS = 2, GROUP = 4, Q_HEADS = KV_HEADS * GROUP, D = 64, PAGE = 16 };
static const int Q_LEN[SEQS] = {19, 1, 1, 8}, KV_LEN[SEQS] = {40, 75, 130, 8};

/* ---- f16 values: the inputs are rounded to f16, the reference uses the rounded values ---- */

static uint16_t f16_bits(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000, mag = x & 0x7fffffff;
    if (mag < 0x38800000) /* below f16's normal range: round to a multiple of 2^-24 */
        return (uint16_t)(sign | (uint32_t)lrintf(fabsf(f) * 0x1p24f));
    uint32_t r = mag - 0x38000000 + 0xfff + ((mag >> 13) & 1); /* round to nearest even */
    return (uint16_t)(sign | (r >> 13));
}

static double f16_value(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v = e ? ldexp(1024 + m, e - 25) : ldexp(m, -24);
    return h & 0x8000 ? -v : v;
}

static uint16_t *random_f16(size_t n)
{
    uint16_t *p = malloc(n * sizeof *p);
    for (size_t i = 0; p && i < n; i++)
        p[i] = f16_bits(2.0f * (float)rand() / (float)RAND_MAX - 1.0f);
    return p;
}

/* ---- the batch's layout ---- */

typedef struct Batch {
    int tokens, blocks, max_blocks, max_len; /* max_len: the longest KV length */
    int32_t qsl[SEQS + 1], lens[SEQS], *table; /* block table [SEQS, max_blocks] */
    uint16_t *q, *k, *v; /* q [tokens, Q_HEADS, D]; caches [blocks, PAGE, KV_HEADS, D] */
} Batch;

/* Queries, caches, and a block table whose physical blocks are a random permutation. */
static int batch_make(Batch *b)
{
    memset(b, 0, sizeof *b);
    for (int s = 0; s < SEQS; s++) {
        int need = (KV_LEN[s] + PAGE - 1) / PAGE;
        b->qsl[s + 1] = b->qsl[s] + Q_LEN[s], b->lens[s] = KV_LEN[s];
        b->blocks += need;
        b->max_blocks = need > b->max_blocks ? need : b->max_blocks;
        b->max_len = KV_LEN[s] > b->max_len ? KV_LEN[s] : b->max_len;
    }
    b->tokens = b->qsl[SEQS];
    int *perm = malloc(sizeof(int) * (size_t)b->blocks);
    b->table = calloc((size_t)SEQS * (size_t)b->max_blocks, sizeof(int32_t));
    size_t cache = (size_t)b->blocks * PAGE * KV_HEADS * D;
    b->q = random_f16((size_t)b->tokens * Q_HEADS * D);
    b->k = random_f16(cache), b->v = random_f16(cache);
    if (!perm || !b->table || !b->q || !b->k || !b->v)
        return free(perm), 0;
    for (int i = 0; i < b->blocks; i++)
        perm[i] = i;
    for (int i = b->blocks - 1; i > 0; i--) {
        int j = rand() % (i + 1), t = perm[i];
        perm[i] = perm[j], perm[j] = t;
    }
    for (int s = 0, next = 0; s < SEQS; s++)
        for (int i = 0; i < (KV_LEN[s] + PAGE - 1) / PAGE; i++)
            b->table[s * b->max_blocks + i] = perm[next++];
    free(perm);
    return 1;
}

static double cached(const Batch *b, const uint16_t *cache, int s, int j, int h, int d)
{
    size_t phys = (size_t)b->table[s * b->max_blocks + j / PAGE];
    size_t row = (phys * PAGE + (size_t)(j % PAGE)) * KV_HEADS + (size_t)h;
    return f16_value(cache[row * D + (size_t)d]);
}

/* Query i of sequence s sits at key position KV_LEN - Q_LEN + i and sees keys up to it. */
static void reference(const Batch *b, double scale, double *ref)
{
    double p[256];
    for (int s = 0; s < SEQS; s++)
        for (int i = 0; i < Q_LEN[s]; i++)
            for (int h = 0; h < Q_HEADS; h++) {
                int t = b->qsl[s] + i, pos = KV_LEN[s] - Q_LEN[s] + i;
                const uint16_t *q = b->q + ((size_t)t * Q_HEADS + (size_t)h) * D;
                double m = -INFINITY, sum = 0;
                for (int j = 0; j <= pos; j++) {
                    p[j] = 0;
                    for (int d = 0; d < D; d++)
                        p[j] += f16_value(q[d]) * cached(b, b->k, s, j, h / GROUP, d) * scale;
                    m = fmax(m, p[j]);
                }
                for (int j = 0; j <= pos; j++)
                    sum += p[j] = exp(p[j] - m);
                for (int d = 0; d < D; d++) {
                    double acc = 0;
                    for (int j = 0; j <= pos; j++)
                        acc += p[j] * cached(b, b->v, s, j, h / GROUP, d);
                    ref[((size_t)t * Q_HEADS + (size_t)h) * D + (size_t)d] = acc / sum;
                }
            }
}

/* ---- the launch ---- */

static int failed(tile_Context *ctx, tile_Status s, const char *what)
{
    fprintf(stderr, "paged_attention: %s failed (status %d): %s\n", what, (int)s,
            ctx ? tile_error(ctx) : "");
    return 1;
}

static tile_Status upload(tile_Context *ctx, const void *host, size_t bytes, tile_DevPtr *d)
{
    tile_Status s = tile_malloc(ctx, bytes, d);
    return s == TILE_OK ? tile_copy_to_device(ctx, *d, host, bytes) : s;
}

static int run(tile_Context *ctx, const char *path)
{
    Batch b;
    if (!batch_make(&b))
        return fprintf(stderr, "paged_attention: out of memory\n"), 1;
    size_t q_n = (size_t)b.tokens * Q_HEADS * D, cache_n = (size_t)b.blocks * PAGE * KV_HEADS * D;
    uint16_t *o = malloc(q_n * sizeof *o);
    double *ref = malloc(q_n * sizeof *ref), scale = 1.0 / sqrt(D);
    tile_Module *mod;
    tile_Kernel *k;
    tile_DevPtr dq, dk, dv, dout, dtable, dlens, dqsl;
    tile_Status s;
    if (!o || !ref)
        return fprintf(stderr, "paged_attention: out of memory\n"), 1;
    if ((s = tile_module_load_file(ctx, path, &mod)) != TILE_OK) /* found along the search path */
        return failed(ctx, s, "loading the kernel file");
    if ((s = tile_kernel_get(mod, "paged", &k)) != TILE_OK)
        return failed(ctx, s, "finding the kernel");
    struct { const void *host; size_t bytes; tile_DevPtr *d; } bufs[] = {
        {b.q, q_n * 2, &dq}, {b.k, cache_n * 2, &dk}, {b.v, cache_n * 2, &dv},
        {NULL, q_n * 2, &dout},
        {b.table, sizeof(int32_t) * SEQS * (size_t)b.max_blocks, &dtable},
        {b.lens, sizeof b.lens, &dlens}, {b.qsl, sizeof b.qsl, &dqsl}};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        if ((s = bufs[i].host ? upload(ctx, bufs[i].host, bufs[i].bytes, bufs[i].d)
                              : tile_malloc(ctx, bufs[i].bytes, bufs[i].d)) != TILE_OK)
            return failed(ctx, s, "copying the batch to the device");

    /* q, k_cache, v_cache, o, the split path's workspaces and counters (not used without SPLIT:
     * o stands in), block_table, seq_lens, query_start_loc, num_tokens, num_seqs, the longest
     * KV length (picks the tuned configuration), kv_heads, q strides (token,
     * head), o strides, cache strides (block, slot, head), block table row stride, scale,
     * window, softcap; consts: head size, group, page, and the path (not split) */
    tile_Arg args[] = {tile_ptr(dq), tile_ptr(dk), tile_ptr(dv), tile_ptr(dout), tile_ptr(dout),
                       tile_ptr(dout), tile_ptr(dout), tile_ptr(dtable),
                       tile_ptr(dlens), tile_ptr(dqsl), tile_i32(b.tokens), tile_i32(SEQS),
                       tile_i32(b.max_len), tile_i32(KV_HEADS), tile_i32(Q_HEADS * D), tile_i32(D),
                       tile_i32(Q_HEADS * D), tile_i32(D), tile_i64(PAGE * KV_HEADS * D),
                       tile_i32(KV_HEADS * D), tile_i32(D),
                       tile_i32(b.max_blocks), tile_f32(scale), tile_i32(0), tile_f32(0)};
    tile_Const consts[] = {{"HEAD_DIM", D}, {"GROUP", GROUP}, {"PAGE", PAGE}, {"SPLIT", 0}};
    if ((s = tile_launch(k, args, 25, consts, 4)) != TILE_OK ||
        (s = tile_synchronize(ctx)) != TILE_OK)
        return failed(ctx, s, "the launch");
    if ((s = tile_copy_to_host(ctx, o, dout, q_n * 2)) != TILE_OK)
        return failed(ctx, s, "copying back");

    reference(&b, (float)scale, ref);
    double num = 0, den = 0;
    for (size_t i = 0; i < q_n; i++) {
        double d = f16_value(o[i]) - ref[i];
        num += d * d, den += ref[i] * ref[i];
    }
    double rel = sqrt(num / den);
    int ok = rel < 3e-3;
    printf("paged attention on %s (%s): %d sequences, %d tokens (prefill and decode), %d/%d heads, "
           "%d shuffled blocks of %d: relative error %.2e: %s\n", tile_device_name(ctx),
           tile_backend_name(tile_backend(ctx)), SEQS, b.tokens, Q_HEADS, KV_HEADS, b.blocks, PAGE,
           rel, ok ? "ok" : "WRONG");
    free(o), free(ref), free(b.table), free(b.q), free(b.k), free(b.v);
    return !ok;
}

int main(int argc, char **argv)
{
    const char *path = "attention/paged.tile"; /* the standard library's, from anywhere */
    tile_Backend backend = TILE_BACKEND_AUTO;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--backend=cpu") == 0)
            backend = TILE_BACKEND_CPU;
        else if (strcmp(argv[i], "--backend=cuda") == 0)
            backend = TILE_BACKEND_CUDA;
        else if (strcmp(argv[i], "--backend=auto") == 0)
            backend = TILE_BACKEND_AUTO;
        else if (argv[i][0] == '-') {
            fprintf(stderr, "usage: paged_attention [--backend=auto|cpu|cuda] "
                            "[PAGED_TILE_FILE]\n");
            return 2;
        } else
            path = argv[i];
    }
    srand(7);
    tile_Context *ctx;
    tile_Status s = tile_context_open(backend, &ctx);
    if (s != TILE_OK)
        return failed(NULL, s, "opening a context");
    int rc = run(ctx, path);
    tile_context_close(ctx);
    return rc;
}
