/* tilec_cache.c: `tilec cache list|show|clear|export|import`, the command line of the
 * persistent tuning cache (tuner/tcache.h): what is cached for which kernel and device, the
 * ranking of a key's configurations, and moving results between machines. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tcache.h"
#include "tilec.h"

typedef struct CacheOpts {
    const char *dir;  /* --dir (NULL: the default) */
    const char *arg;  /* the operand: FILE, KERNEL, OUT or IN */
    int yes, all, top;
} CacheOpts;

typedef enum { ARG_NONE, ARG_OPTIONAL, ARG_NEEDED } ArgUse;

static void cache_opts(int argc, char **argv, const char *sub, ArgUse use, CacheOpts *o)
{
    *o = (CacheOpts){ .top = 10 };
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v;
        if ((v = tilec_opt_value(argc, argv, &i, "--dir")))
            o->dir = v;
        else if ((v = tilec_opt_value(argc, argv, &i, "--top"))) {
            char *end;
            errno = 0;
            long top = strtol(v, &end, 10);
            if (!*v || *end || top <= 0 || top > INT_MAX || errno == ERANGE)
                tilec_usage_error("--top needs a positive count, not '%s'", tilec_clip(v));
            o->top = (int)top;
        }
        else if (!strcmp(a, "--yes"))
            o->yes = 1;
        else if (!strcmp(a, "--all"))
            o->all = 1;
        else if (a[0] == '-' && a[1])
            tilec_usage_error("unknown option '%s' of 'cache %s'", tilec_clip(a), sub);
        else if (o->arg || use == ARG_NONE)
            tilec_usage_error("unexpected argument '%s' of 'cache %s'", tilec_clip(a), sub);
        else
            o->arg = a;
    }
    if (use == ARG_NEEDED && !o->arg)
        tilec_usage_error("'cache %s' needs a file or kernel name", sub);
}

/* The tuning directory, or NULL after an error message. */
static char *tuning_dir(const CacheOpts *o)
{
    char *dir = tcache_dir(o->dir);
    if (!dir)
        tilec_error("the tuning cache is turned off (TILE_CACHE_DIR is empty) or HOME is unset");
    return dir;
}

/* ---- list ---- */
static int cache_list(const CacheOpts *o)
{
    char *dir = tuning_dir(o), warn[512];
    int n = 0;
    char **paths = dir ? tcache_list_files(o->dir, &n) : NULL;
    if (dir && n == 0)
        printf("no tuning files in %s\n", dir);
    else if (dir)
        printf("%-24s %-28s %-8s %5s  %s\n", "KERNEL", "DEVICE", "ARCH", "KEYS", "FILE");
    for (int i = 0; i < n; i++) {
        TCache *c = tcache_load_file(paths[i], warn, sizeof warn);
        const TCacheMeta *m = c ? tcache_meta(c) : NULL;
        if (warn[0])
            fprintf(stderr, "tilec: warning: the tuning file %s\n", warn);
        if (c)
            printf("%-24s %-28s %-8s %5d  %s\n", m->kernel, m->device, m->arch, tcache_nkeys(c),
                   paths[i]);
        else
            printf("%-24s %-28s %-8s %5s  %s  (%s)\n", "?", "?", "?", "?", paths[i], warn);
        tcache_close(c);
    }
    tcache_free_list(paths, n);
    int rc = dir ? EXIT_OK : EXIT_ERROR;
    free(dir);
    return rc;
}

/* ---- show ---- */
typedef struct Row {
    const char *config;
    TResult r;
} Row;

typedef struct Rows {
    Row *rows;
    int n, cap;
} Rows;

static int add_row(void *ud, const char *config, const TResult *r)
{
    Rows *rs = ud;
    if (rs->n == rs->cap) {
        Row *grown = realloc(rs->rows, sizeof *grown * (size_t)(rs->cap = 2 * rs->cap + 16));
        if (!grown)
            return -1;
        rs->rows = grown;
    }
    rs->rows[rs->n++] = (Row){ config, *r };
    return 0;
}

/* Timed first, fastest first, ties by name; then failed, then pruned. */
static int by_rank(const void *pa, const void *pb)
{
    const Row *a = pa, *b = pb;
    if (a->r.status != b->r.status)
        return (int)a->r.status - (int)b->r.status;
    if (a->r.status == TRES_OK && a->r.ms != b->r.ms)
        return a->r.ms < b->r.ms ? -1 : 1;
    return strcmp(a->config, b->config);
}

static void print_rows(const Rows *rs, const char *best, const CacheOpts *o)
{
    double fastest = rs->n && rs->rows[0].r.status == TRES_OK ? rs->rows[0].r.ms : 0;
    int shown = 0;
    for (int i = 0; i < rs->n; i++) {
        const Row *w = &rs->rows[i];
        int chosen = best && !strcmp(best, w->config);
        if (w->r.status == TRES_OK && (shown < o->top || chosen || o->all))
            printf("    %4d %c %10.4f ms %7.2fx %9.1f ms  %s\n", i + 1, chosen ? '*' : ' ',
                   w->r.ms, fastest > 0 ? w->r.ms / fastest : 1.0, w->r.compile_ms, w->config);
        else if (w->r.status != TRES_OK && o->all)
            printf("         %-6s %s: %s\n", w->r.status == TRES_FAILED ? "failed" : "pruned",
                   w->config, w->r.reason ? w->r.reason : "(no reason given)");
        shown += w->r.status == TRES_OK;
    }
}

static int show_key(void *ud, const char *key)
{
    const void *const *args = ud;
    const TCache *c = args[0];
    const CacheOpts *o = args[1];
    Rows rs = { 0 };
    int counts[3] = { 0 };
    if (tcache_each_result(c, key, add_row, &rs) != 0)
        fprintf(stderr, "tilec: warning: key %s: out of memory listing its results\n", key);
    if (rs.n > 0) /* no rows: rs.rows is NULL, which qsort must not see */
        qsort(rs.rows, (size_t)rs.n, sizeof *rs.rows, by_rank);
    for (int i = 0; i < rs.n; i++)
        if ((unsigned)rs.rows[i].r.status < 3)
            counts[rs.rows[i].r.status]++;
    const char *best = tcache_best(c, key);
    printf("  key %s\n    best %s; %d timed, %d failed, %d pruned\n", key,
           best ? best : "(none chosen)", counts[TRES_OK], counts[TRES_FAILED],
           counts[TRES_PRUNED]);
    if (counts[TRES_OK])
        printf("    rank       time    ratio   compile    configuration (* best)\n");
    print_rows(&rs, best, o);
    free(rs.rows);
    return 0;
}

static int show_file(const char *path, const CacheOpts *o)
{
    char warn[512];
    TCache *c = tcache_load_file(path, warn, sizeof warn);
    if (!c) {
        tilec_error("%s", warn);
        return -1;
    }
    if (warn[0])
        fprintf(stderr, "tilec: warning: the tuning file %s\n", warn);
    const TCacheMeta *m = tcache_meta(c);
    printf("%s\n  kernel %s, device %s (%s, driver %s), compiler %s, source %s\n", path,
           m->kernel, m->device, m->arch, *m->driver ? m->driver : "none", m->compiler_version,
           m->source_hash);
    const void *args[2] = { c, o };
    tcache_each_key(c, show_key, (void *)args);
    tcache_close(c);
    return 0;
}

/* Files of the directory whose kernel is `kernel` (all when NULL): paths[i] kept or freed. */
static int select_files(char **paths, int n, const char *kernel)
{
    int kept = 0;
    for (int i = 0; i < n; i++) {
        TCache *c = kernel ? tcache_load_file(paths[i], NULL, 0) : NULL;
        if (!kernel || (c && !strcmp(tcache_meta(c)->kernel, kernel)))
            paths[kept++] = paths[i];
        else
            free(paths[i]);
        tcache_close(c);
    }
    return kept;
}

/* What a file that is not a regular one is, as words. */
static const char *file_kind(mode_t m)
{
    return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO" : S_ISSOCK(m) ? "a socket"
         : S_ISCHR(m) || S_ISBLK(m) ? "a device" : "not a regular file";
}

static int cache_show(const CacheOpts *o)
{
    struct stat st;
    int found = stat(o->arg, &st) == 0;
    if (found && S_ISREG(st.st_mode))
        return show_file(o->arg, o) == 0 ? EXIT_OK : EXIT_ERROR;
    if (found && strchr(o->arg, '/')) { /* a path (a kernel's name has no '/') */
        tilec_error("'%s' is %s, not a tuning file", tilec_clip(o->arg), file_kind(st.st_mode));
        return EXIT_ERROR;
    }
    char *dir = tuning_dir(o);
    int n = 0, bad = !dir;
    char **paths = dir ? tcache_list_files(o->dir, &n) : NULL;
    n = select_files(paths, n, o->arg);
    if (dir && n == 0) {
        tilec_error("no file '%s' and no tuning file of a kernel '%s' in %s", tilec_clip(o->arg),
                    tilec_clip(o->arg), dir);
        bad = 1;
    }
    for (int i = 0; i < n; i++)
        bad |= show_file(paths[i], o) != 0;
    tcache_free_list(paths, n);
    free(dir);
    return bad ? EXIT_ERROR : EXIT_OK;
}

/* ---- clear ---- */
static int cache_clear(const CacheOpts *o)
{
    char *dir = tuning_dir(o);
    int n = 0, bad = !dir;
    char **paths = dir ? tcache_list_files(o->dir, &n) : NULL;
    n = select_files(paths, n, o->arg);
    if (dir && n == 0)
        printf("nothing to remove in %s\n", dir);
    else if (dir && !o->yes) {
        printf("would remove %d tuning file%s from %s:\n", n, n == 1 ? "" : "s", dir);
        for (int i = 0; i < n; i++)
            printf("  %s\n", paths[i]);
        printf("run again with --yes to remove them\n");
        bad = 1;
    }
    for (int i = 0; o->yes && i < n; i++)
        if (unlink(paths[i]) < 0 && errno != ENOENT) {
            tilec_error("cannot remove %s: %s", tilec_clip(paths[i]), strerror(errno));
            bad = 1;
        }
    if (dir && n && o->yes)
        printf("removed %d tuning file%s from %s\n", n, n == 1 ? "" : "s", dir);
    tcache_free_list(paths, n);
    free(dir);
    return bad ? EXIT_ERROR : EXIT_OK;
}

/* ---- export, import ---- */
static int cache_export(const CacheOpts *o)
{
    char *dir = tuning_dir(o), err[512];
    int n = 0, bad = !dir || tcache_export(o->dir, o->arg, &n, err, sizeof err) < 0;
    if (dir && bad)
        tilec_error("%s", err);
    else if (dir)
        fprintf(strcmp(o->arg, "-") ? stdout : stderr, "exported %d tuning file%s from %s\n",
                n, n == 1 ? "" : "s", dir);
    free(dir);
    return bad ? EXIT_ERROR : EXIT_OK;
}

static int cache_import(const CacheOpts *o)
{
    char *dir = tuning_dir(o), err[512];
    int n = 0, rc = EXIT_ERROR;
    if (dir && tcache_import(o->dir, o->arg, &n, err, sizeof err) < 0)
        tilec_error("%s%s", err, n ? " (some files were merged before the error)" : "");
    else if (dir) {
        printf("merged %d tuning file%s into %s\n", n, n == 1 ? "" : "s", dir);
        rc = EXIT_OK;
    }
    free(dir);
    return rc;
}

static const struct {
    const char *name;
    ArgUse arg;
    int (*fn)(const CacheOpts *o);
} SUBCOMMANDS[] = {
    { "list", ARG_NONE, cache_list },       { "show", ARG_NEEDED, cache_show },
    { "clear", ARG_OPTIONAL, cache_clear }, { "export", ARG_NEEDED, cache_export },
    { "import", ARG_NEEDED, cache_import },
};

int tilec_cmd_cache(int argc, char **argv)
{
    if (argc < 1)
        tilec_usage_error("'cache' needs a subcommand (list, show, clear, export or import)");
    for (size_t i = 0; i < sizeof SUBCOMMANDS / sizeof SUBCOMMANDS[0]; i++)
        if (!strcmp(argv[0], SUBCOMMANDS[i].name)) {
            CacheOpts o;
            cache_opts(argc - 1, argv + 1, argv[0], SUBCOMMANDS[i].arg, &o);
            return SUBCOMMANDS[i].fn(&o);
        }
    tilec_usage_error("unknown subcommand 'cache %s' (expected list, show, clear, export or "
                      "import)", tilec_clip(argv[0]));
}
