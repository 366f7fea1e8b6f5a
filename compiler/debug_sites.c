/* debug_sites.c: a kernel's print and device_assert sites as text and back (debug_abi.h).
 * One line per site: "K LINE COL NVALUES RANK S0 S1 S2 S3 KINDS LEN:FILE LEN:TEXT", where
 * KINDS is "-" for none; strings carry their length, so any byte may appear in them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "debug_abi.h"

static size_t encoded_size(const TirDebugSite *s)
{
    const char *file = s->loc.file ? s->loc.file->name : "";
    return 160 + strlen(file) + strlen(s->text ? s->text : "");
}

char *debug_sites_encode(Arena *a, const TirDebugSite *sites, int n)
{
    size_t cap = 1;
    for (int i = 0; i < n; i++)
        cap += encoded_size(&sites[i]);
    char *out = arena_alloc(a, cap), *p = out;
    if (!out)
        return NULL;
    *p = 0;
    for (int i = 0; i < n; i++) {
        const TirDebugSite *s = &sites[i];
        const char *file = s->loc.file ? s->loc.file->name : "", *text = s->text ? s->text : "";
        int w = snprintf(p, cap - (size_t)(p - out), "%c %d %d %d %d %d %d %d %d %s %zu:%s%zu:%s\n",
                         (char)s->kind, s->loc.line, s->loc.col, s->nvalues, s->rank,
                         s->shape[0], s->shape[1], s->shape[2], s->shape[3],
                         s->nvalues ? s->kinds : "-", strlen(file), file, strlen(text), text);
        p += w;
    }
    return out;
}

/* A length-prefixed string at *p into dst (NUL-terminated); advances both. */
static int take_string(const char **p, char **dst, const char **out)
{
    char *end;
    unsigned long long len = strtoull(*p, &end, 10);
    if (end == *p || *end != ':' || len > strlen(end + 1))
        return -1;
    memcpy(*dst, end + 1, len);
    (*dst)[len] = 0;
    *out = *dst;
    *dst += len + 1;
    *p = end + 1 + len;
    return 0;
}

static int valid(const DebugSiteInfo *s)
{
    if ((s->kind != DEBUG_ASSERT && s->kind != DEBUG_PRINT) || s->nvalues < 0 ||
        s->nvalues > TIR_DEBUG_MAX_VALUES || s->rank < 0 || s->rank > TIR_MAX_RANK)
        return 0;
    if (s->nvalues && (int)strlen(s->kinds) != s->nvalues)
        return 0;
    for (int i = 0; i < s->nvalues; i++)
        if (!strchr("fdiubp", s->kinds[i]))
            return 0;
    for (int d = 0; d < s->rank; d++)
        if (s->shape[d] < 1 || s->shape[d] > (1 << 24))
            return 0;
    return 1;
}

static int parse_site(const char **p, char **strings, DebugSiteInfo *s)
{
    char kinds[16];
    int used = 0;
    memset(s, 0, sizeof *s);
    if (sscanf(*p, "%c %d %d %d %d %d %d %d %d %15s %n", &s->kind, &s->line, &s->col,
               &s->nvalues, &s->rank, &s->shape[0], &s->shape[1], &s->shape[2], &s->shape[3],
               kinds, &used) != 10 || !used)
        return -1;
    if (strcmp(kinds, "-") && strlen(kinds) <= TIR_DEBUG_MAX_VALUES)
        strcpy(s->kinds, kinds);
    *p += used;
    if (take_string(p, strings, &s->file) || take_string(p, strings, &s->text) || **p != '\n')
        return -1;
    (*p)++;
    return valid(s) ? 0 : -1;
}

int debug_sites_decode(const char *text, DebugSiteInfo **out)
{
    int n = 0; /* at least the number of sites: each ends a line */
    *out = NULL;
    for (const char *c = text; c && *c; c++)
        n += *c == '\n';
    if (!text || !*text)
        return 0;
    size_t len = strlen(text);
    DebugSiteInfo *sites = malloc(sizeof *sites * (size_t)n + len + 1);
    if (!sites)
        return -1;
    char *strings = (char *)(sites + n);
    const char *p = text;
    int got = 0;
    while (*p && got < n && parse_site(&p, &strings, &sites[got]) == 0)
        got++;
    if (*p) {
        free(sites);
        return -1;
    }
    *out = sites;
    return n;
}
