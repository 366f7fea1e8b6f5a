/* debug.c: what print and device_assert recorded in a launch (compiler/debug_abi.h). The
 * context keeps one debug buffer; a launch of a kernel with debug sites clears its header,
 * passes it as the kernel's last param, then waits, prints the records sorted (by program,
 * then the run of the print in it, then element) and turns the first failed assertion into
 * TILE_ERROR_ASSERT with its location. Launches with debug sites on one context take turns
 * (debug_lock); the tuner's timed runs pass the buffer and ignore what lands in it. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "debug_abi.h"
#include "runtime_internal.h"

typedef uint32_t Record[DEBUG_RECORD_WORDS];

tile_Status rt_debug_arm(tile_Context *ctx, const Spec *s, tile_DevPtr *buf)
{
    char err[BK_ERR_MAX];
    tile_Status st = TILE_OK;
    *buf = 0;
    if (!s->nsites)
        return TILE_OK;
    if (rt_capturing(ctx))
        return rt_refuse_in_capture(ctx, "a launch of a kernel with print or device_assert");
    pthread_mutex_lock(&ctx->debug_lock);
    if (!ctx->debug_buf)
        st = ctx->ops->malloc(ctx->dev, DEBUG_BUFFER_BYTES, &ctx->debug_buf, err);
    if (st == TILE_OK)
        st = ctx->ops->memset(ctx->dev, ctx->debug_buf, 0, 4 * DEBUG_HEADER_WORDS, err);
    if (st != TILE_OK) {
        pthread_mutex_unlock(&ctx->debug_lock);
        return rt_error(ctx, st, "the debug buffer of print and device_assert: %s", err);
    }
    *buf = ctx->debug_buf;
    return TILE_OK;
}

void rt_debug_release(tile_Context *ctx)
{
    char err[BK_ERR_MAX];
    if (ctx->debug_buf)
        ctx->ops->free(ctx->dev, ctx->debug_buf, err);
    ctx->debug_buf = 0;
}

/* ---- printing ---- */
/* Order: program z, y, x, run of the print, element, value. */
static int record_cmp(const void *pa, const void *pb)
{
    const uint32_t *a = pa, *b = pb;
    static const int keys[] = {5, 4, 3, 1, 2, 0};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (a[keys[i]] != b[keys[i]])
            return a[keys[i]] < b[keys[i]] ? -1 : 1;
    return 0;
}

/* The shortest decimal that reads back as the same float (f32) or double, in fixed notation
 * unless its exponent is below -5 or above 15 (as Python's repr writes floats). */
static void format_float(char *out, size_t cap, double v, int is_f32)
{
    if (!isfinite(v)) {
        snprintf(out, cap, "%s", isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
        return;
    }
    int p = 1;
    char sci[64];
    for (; p < 17; p++) {
        snprintf(sci, sizeof sci, "%.*e", p - 1, v);
        double back = strtod(sci, NULL);
        if (is_f32 ? (float)back == (float)v : back == v)
            break;
    }
    snprintf(sci, sizeof sci, "%.*e", p - 1, v);
    int e = atoi(strchr(sci, 'e') + 1);
    if (e >= -5 && e < 16)
        snprintf(out, cap, "%.*f", p - 1 - e > 0 ? p - 1 - e : 0, v);
    else
        snprintf(out, cap, "%s", sci);
}

static void format_value(char *out, size_t cap, char kind, uint64_t bits)
{
    double d;
    memcpy(&d, &bits, sizeof d);
    switch (kind) {
    case 'f': case 'd': format_float(out, cap, d, kind == 'f'); break;
    case 'i': snprintf(out, cap, "%" PRId64, (int64_t)bits); break;
    case 'b': snprintf(out, cap, "%s", bits ? "true" : "false"); break;
    case 'p': snprintf(out, cap, "0x%" PRIx64, bits); break;
    default: snprintf(out, cap, "%" PRIu64, bits); break;
    }
}

/* " (i, j)": a row-major index over the site's shape. */
static void format_index(char *out, size_t cap, const DebugSiteInfo *site, uint32_t flat)
{
    uint32_t coord[TIR_MAX_RANK];
    for (int d = site->rank - 1; d >= 0; d--) {
        coord[d] = flat % (uint32_t)site->shape[d];
        flat /= (uint32_t)site->shape[d];
    }
    size_t n = 0;
    for (int d = 0; d < site->rank && n < cap; d++)
        n += (size_t)snprintf(out + n, cap - n, "%s%u", d ? ", " : "", coord[d]);
}

static const DebugSiteInfo *site_of(const Spec *s, uint32_t word, char kind)
{
    uint32_t i = word & 0xffff;
    return i < (uint32_t)s->nsites && s->sites[i].kind == kind ? &s->sites[i] : NULL;
}

/* One line: the records [r, end) of one run of a print, one element. */
static void print_line(FILE *out, const DebugSiteInfo *site, const Record *r, size_t n)
{
    char idx[96] = "", val[64];
    format_index(idx, sizeof idx, site, r[0][2]);
    fprintf(out, "pid (%u, %u, %u)", r[0][3], r[0][4], r[0][5]);
    if (site->rank)
        fprintf(out, " idx (%s)", idx);
    fprintf(out, " %s%s", site->text, site->nvalues ? ":" : "");
    for (size_t i = 0; i < n; i++) {
        uint32_t v = r[i][0] >> 16;
        if ((int)v >= site->nvalues)
            continue;
        format_value(val, sizeof val, site->kinds[v], (uint64_t)r[i][7] << 32 | r[i][6]);
        fprintf(out, "%s %s", i ? "," : "", val);
    }
    fputc('\n', out);
}

static int same_element(const uint32_t *a, const uint32_t *b)
{
    return (a[0] & 0xffff) == (b[0] & 0xffff) && a[1] == b[1] && a[2] == b[2] &&
           a[3] == b[3] && a[4] == b[4] && a[5] == b[5];
}

static void print_records(const Spec *s, Record *rec, size_t n)
{
    qsort(rec, n, sizeof *rec, record_cmp);
    for (size_t i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && same_element(rec[i], rec[j]); j++) {}
        const DebugSiteInfo *site = site_of(s, rec[i][0], DEBUG_PRINT);
        if (site)
            print_line(stdout, site, rec + i, j - i);
    }
    fflush(stdout);
}

static tile_Status read_prints(tile_Context *ctx, const Spec *s, const uint32_t *head, char *err)
{
    uint32_t claimed = head[DEBUG_PRINT_COUNT];
    size_t n = claimed < DEBUG_RECORDS ? claimed : DEBUG_RECORDS;
    if (!n)
        return TILE_OK;
    Record *rec = malloc(sizeof *rec * n);
    if (!rec) {
        snprintf(err, BK_ERR_MAX, "out of memory reading %zu print records", n);
        return TILE_ERROR_OUT_OF_MEMORY;
    }
    tile_Status st = ctx->ops->copy_d2h(ctx->dev, rec, ctx->debug_buf + 4 * DEBUG_HEADER_WORDS,
                                        sizeof *rec * n, err);
    if (st == TILE_OK)
        print_records(s, rec, n);
    free(rec);
    if (st == TILE_OK && claimed > DEBUG_RECORDS)
        rt_log(ctx, "tile: print: %u values were not printed (a launch keeps the first %d)",
               claimed - DEBUG_RECORDS, DEBUG_RECORDS);
    return st;
}

static tile_Status assert_failed(tile_Context *ctx, const Spec *s, const char *name,
                                 const uint32_t *head)
{
    const DebugSiteInfo *site = site_of(s, head[DEBUG_ASSERT_SITE] - 1, DEBUG_ASSERT);
    char idx[96] = "";
    if (!site)
        return rt_error(ctx, TILE_ERROR_ASSERT, "launch of '%s': a device assertion failed", name);
    format_index(idx, sizeof idx, site, head[DEBUG_ASSERT_INDEX]);
    return rt_error(ctx, TILE_ERROR_ASSERT,
                    "launch of '%s': %s:%d:%d: device assertion failed in program (%u, %u, %u)%s%s%s: %s",
                    name, site->file, site->line, site->col, head[DEBUG_ASSERT_PID],
                    head[DEBUG_ASSERT_PID + 1], head[DEBUG_ASSERT_PID + 2],
                    site->rank ? " at element [" : "", idx, site->rank ? "]" : "", site->text);
}

tile_Status rt_debug_report(tile_Context *ctx, const Spec *s, const char *name, tile_Status st,
                            int quiet)
{
    uint32_t head[DEBUG_HEADER_WORDS];
    char err[BK_ERR_MAX];
    if (st == TILE_OK && !quiet) {
        st = ctx->ops->sync(ctx->dev, err);
        if (st == TILE_OK)
            st = ctx->ops->copy_d2h(ctx->dev, head, ctx->debug_buf, sizeof head, err);
        if (st == TILE_OK)
            st = read_prints(ctx, s, head, err);
        if (st != TILE_OK)
            rt_error(ctx, st, "launch of '%s': reading what print and device_assert recorded: %s",
                     name, err);
        else if (head[DEBUG_ASSERT_SITE])
            st = assert_failed(ctx, s, name, head);
    }
    pthread_mutex_unlock(&ctx->debug_lock);
    return st;
}
