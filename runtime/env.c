/* env.c: the runtime's numeric environment variables (TILE_CPU_THREADS) read strictly. Unset
 * or empty: the default. A value that does not parse, or lies outside its range, gives the
 * default too and is not dropped in silence: contexts are opened before they have a log sink,
 * so the warning waits and is logged once per process (for each variable and value) to the
 * first log sink tile_set_log installs: "tile: TILE_CPU_THREADS='abc' ignored: expected an
 * integer from 1 to 1024; using 8 (one per core)". */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runtime_internal.h"

enum { MAX_WARNINGS = 8, WARNING_MAX = 256 };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    char text[WARNING_MAX];
    int logged;
} warnings[MAX_WARNINGS];
static int nwarnings;

/* Records a warning unless the same one was recorded before. */
static void warning_add(const char *text)
{
    pthread_mutex_lock(&lock);
    int seen = 0;
    for (int i = 0; i < nwarnings && !seen; i++)
        seen = !strcmp(warnings[i].text, text);
    if (!seen && nwarnings < MAX_WARNINGS)
        snprintf(warnings[nwarnings++].text, WARNING_MAX, "%s", text);
    pthread_mutex_unlock(&lock);
}

void rt_env_warnings_log(tile_Context *ctx)
{
    char texts[MAX_WARNINGS][WARNING_MAX];
    int n = 0;
    if (!ctx->log)
        return;
    pthread_mutex_lock(&lock); /* copied out: the sink is called without the lock */
    for (int i = 0; i < nwarnings; i++)
        if (!warnings[i].logged) {
            warnings[i].logged = 1;
            memcpy(texts[n++], warnings[i].text, WARNING_MAX);
        }
    pthread_mutex_unlock(&lock);
    for (int i = 0; i < n; i++)
        rt_log(ctx, "%s", texts[i]);
}

int rt_number_ends(const char *s, const char *end)
{
    if (end == s)
        return 0;
    while (isspace((unsigned char)*end))
        end++;
    return !*end;
}

int rt_parse_long(const char *s, long lo, long hi, long *v)
{
    char *end;
    errno = 0;
    *v = strtol(s, &end, 10);
    return rt_number_ends(s, end) && !errno && *v >= lo && *v <= hi;
}

long rt_env_long(const char *name, long lo, long hi, long dflt, const char *why)
{
    const char *s = getenv(name);
    long v;
    if (!s || !*s)
        return dflt;
    if (rt_parse_long(s, lo, hi, &v))
        return v;
    char text[WARNING_MAX];
    snprintf(text, sizeof text, "tile: %s='%.80s' ignored: expected an integer from %ld to %ld; "
             "using %ld%s%s%s", name, s, lo, hi, dflt, why ? " (" : "", why ? why : "",
             why ? ")" : "");
    warning_add(text);
    return dflt;
}
