/* tcache_config.c: configuration strings, the names of tuning results in cache files:
 * "BLOCK_M=64,BLOCK_N=32,num_warps=4", the tuned parameters in the space's order. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tcache.h"

char *tcache_config_string(const char *const *names, const long long *values, int n)
{
    size_t len = 1;
    for (int i = 0; i < n; i++)
        len += strlen(names[i]) + 24; /* '=', ',' and at most 20 digits and a sign */
    char *s = malloc(len), *p = s;
    for (int i = 0; s && i < n; i++)
        p += snprintf(p, len - (size_t)(p - s), "%s%s=%lld", i ? "," : "", names[i], values[i]);
    if (s)
        *p = 0;
    return s;
}

static int is_ident(const char *s)
{
    if (!isalpha((unsigned char)*s) && *s != '_')
        return 0;
    while (isalnum((unsigned char)*s) || *s == '_')
        s++;
    return *s == 0;
}

/* "NAME=VALUE" (cut out of the copy) into names[i] / values[i]. */
static int parse_item(char *item, const char **name, long long *value)
{
    char *eq = strchr(item, '='), *end;
    if (!eq)
        return -1;
    *eq = 0;
    const char *v = eq + 1;
    errno = 0;
    *value = strtoll(v, &end, 10);
    const char *digits = *v == '-' ? v + 1 : v;
    if (!is_ident(item) || !isdigit((unsigned char)*digits) || *end || errno)
        return -1;
    *name = item;
    return 0;
}

int tcache_config_parse(const char *config, const char **names, long long *values, int max,
                        char **storage)
{
    char *copy = strdup(config), *item = copy;
    int n = 0, bad = !copy;
    while (!bad && item && *config) {
        char *comma = strchr(item, ',');
        if (comma)
            *comma = 0;
        bad = n >= max || parse_item(item, &names[n], &values[n]) < 0;
        n++;
        item = comma ? comma + 1 : NULL;
    }
    if (bad) {
        free(copy);
        copy = NULL;
    }
    *storage = copy;
    return bad ? -1 : n;
}
