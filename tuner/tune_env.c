/* tune_env.c: the tuner's environment variables (TILE_TUNE, TILE_TUNE_THREADS, ...) read
 * strictly (tune.h). Unset or empty: the default. A value that does not parse gives the
 * default too, and is not dropped in silence: the context's log sink hears, once per process
 * for each variable (again when its value changes), "tile: TILE_TUNE_BUDGET='abc' ignored:
 * expected a number of seconds >= 0; using 0 (no budget)". */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tune.h"

enum { MAX_WARNED = 32 };

const char *const TUNE_ENV_FLAG[] = { "0", "1", NULL };

/* The variables warned about, with a hash of the value each was warned about. */
static pthread_mutex_t warned_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    const char *name;
    uint64_t value;
} warned[MAX_WARNED];

/* 1 when this process has not yet warned about `value` for `name` (and now has). */
static int first_warning(const char *name, const char *value)
{
    uint64_t h = rt_hash64(value, strlen(value));
    int i = 0, first = 1;
    pthread_mutex_lock(&warned_lock);
    while (i < MAX_WARNED && warned[i].name && strcmp(warned[i].name, name))
        i++;
    if (i < MAX_WARNED) {
        first = !warned[i].name || warned[i].value != h;
        warned[i].name = name;
        warned[i].value = h;
    }
    pthread_mutex_unlock(&warned_lock);
    return first;
}

/* Without a log sink the warning waits for a context that has one. */
static void warn(tile_Context *ctx, const char *name, const char *value, const char *expected,
                 const char *used)
{
    if (!ctx || !ctx->log || !first_warning(name, value))
        return;
    rt_log(ctx, "tile: %s='%.80s' ignored: expected %s; using %s", name, value, expected, used);
}

long tune_env_int(tile_Context *ctx, const char *name, long lo, long hi, long dflt,
                  const char *used)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return dflt;
    char expected[96], num[32];
    long v;
    if (rt_parse_long(s, lo, hi, &v))
        return v;
    snprintf(expected, sizeof expected, "an integer from %ld to %ld", lo, hi);
    snprintf(num, sizeof num, "%ld", dflt);
    warn(ctx, name, s, expected, used ? used : num);
    return dflt;
}

double tune_env_seconds(tile_Context *ctx, const char *name, int zero_ok, double dflt,
                        const char *used)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return dflt;
    char *end, num[32];
    errno = 0;
    double v = strtod(s, &end);
    if (rt_number_ends(s, end) && !errno && isfinite(v) && (zero_ok ? v >= 0 : v > 0))
        return v;
    snprintf(num, sizeof num, "%g", dflt);
    warn(ctx, name, s, zero_ok ? "a number of seconds >= 0" : "a number of seconds > 0",
         used ? used : num);
    return dflt;
}

int tune_env_word(tile_Context *ctx, const char *name, const char *value,
                  const char *const *words, const char *used)
{
    if (!value || !*value)
        return -1;
    char expected[128] = "one of";
    for (int i = 0; words[i]; i++) {
        if (!strcmp(value, words[i]))
            return i;
        size_t n = strlen(expected);
        snprintf(expected + n, sizeof expected - n, "%s %s", i ? "," : "", words[i]);
    }
    warn(ctx, name, value, expected, used);
    return -2;
}
