/* tilec_tune.c: `tilec tune FILE:KERNEL [NAME=VALUE ...]`: tunes a kernel for the key of the
 * given sizes through the public runtime (tile_tune), on random inputs set up as `tilec run`
 * does. Shows progress (one line updated in place on a terminal), then the ranked top
 * configurations and a summary of where the time went. Results land in the tuning cache. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tcache.h"
#include "tilec.h"

enum { MAX_ARGS = 512 };

typedef struct TuneCli {
    tile_TuneOptions opts;
    long top;
    int tty;
    int last_pct; /* plain output: the last tenth printed, per phase */
    const char *last_phase;
} TuneCli;

static long parse_count(const char *s, const char *what)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < 0 || v > INT_MAX || errno == ERANGE)
        tilec_usage_error("bad %s '%s' (expected a non-negative integer)", what, tilec_clip(s));
    return v;
}

/* Takes tune's own options out of argv; the rest goes to tilec_session_open. */
static int tune_opts_parse(TuneCli *c, int argc, char **argv, char **rest)
{
    int n = 0;
    c->top = 10;
    for (int i = 0; i < argc; i++) {
        const char *v;
        if ((v = tilec_opt_value(argc, argv, &i, "--budget"))) {
            char *end;
            c->opts.budget_s = strtod(v, &end);
            if (!*v || *end || !(c->opts.budget_s >= 0) || !isfinite(c->opts.budget_s))
                tilec_usage_error("bad --budget '%s' (expected seconds)", tilec_clip(v));
        } else if ((v = tilec_opt_value(argc, argv, &i, "--samples")))
            c->opts.samples = (int)parse_count(v, "--samples");
        else if ((v = tilec_opt_value(argc, argv, &i, "--top")))
            c->top = parse_count(v, "--top");
        else if (!strcmp(argv[i], "--force"))
            c->opts.force = 1;
        else if (n < MAX_ARGS)
            rest[n++] = argv[i];
    }
    return n;
}

static void on_progress(void *user, const tile_TuneProgress *p)
{
    TuneCli *c = user;
    char line[512];
    int len = snprintf(line, sizeof line, "%-9s [%3d/%3d] failed %d", p->phase, p->done,
                       p->total, p->failed);
    if (p->best_ms >= 0)
        len += snprintf(line + len, sizeof line - (size_t)len, "  best %.4f ms %s", p->best_ms,
                        p->best_config);
    if (p->eta_s >= 0 && p->done < p->total)
        snprintf(line + len, sizeof line - (size_t)len, "  ~%.0f s left", p->eta_s);
    if (c->tty) {
        fprintf(stderr, "\r%s\033[K%s", line, p->done == p->total ? "\n" : "");
        return;
    }
    int pct = p->total ? p->done * 10 / p->total : 10; /* plain: every tenth */
    if (c->last_phase != p->phase || pct != c->last_pct)
        fprintf(stderr, "%s\n", line);
    c->last_phase = p->phase, c->last_pct = pct;
}

static const char *status_word(const tile_TuneResult *r)
{
    static const char *const w[] = { "ok", "failed", "pruned", "skipped" };
    return r->cached && r->status == TILE_TUNE_OK ? "ok (cached)" : w[r->status];
}

static void print_table(const tile_TuneReport *rep, long top)
{
    double best = rep->best >= 0 ? rep->results[rep->best].ms : 0;
    int w = 6;
    for (int i = 0; i < rep->nresults && i < top; i++) {
        int n = (int)strlen(rep->results[i].config);
        w = n > w ? n : w;
    }
    printf("%4s  %-*s  %10s  %6s  %s\n", "rank", w, "config", "median ms", "ratio", "status");
    for (int i = 0; i < rep->nresults && i < top; i++) {
        const tile_TuneResult *r = &rep->results[i];
        char local[48] = "";
        if (r->local_bytes > 0)
            snprintf(local, sizeof local, ", %d B local memory", r->local_bytes);
        if (r->status == TILE_TUNE_OK)
            printf("%4d  %-*s  %10.4f  %6.3f  %s%s\n", i + 1, w, r->config, r->ms,
                   best > 0 ? r->ms / best : 1.0, status_word(r), local);
        else
            printf("%4d  %-*s  %10s  %6s  %s: %s\n", i + 1, w, r->config, "-", "-",
                   status_word(r), r->reason);
    }
}

static void print_summary(const tile_TuneReport *rep)
{
    int compiled = rep->total - rep->cached - rep->skipped;
    int evaluated = rep->timed + rep->failed + rep->pruned - rep->cached;
    evaluated = evaluated > 0 ? evaluated : compiled;
    printf("configs: %d total, %d timed, %d failed, %d pruned, %d cached, %d skipped\n",
           rep->total, rep->timed, rep->failed, rep->pruned, rep->cached, rep->skipped);
    printf("wall %.2f s: compile %.2f s (CPU %.2f s on %d threads), timing %.2f s\n",
           rep->wall_s, rep->compile_wall_s, rep->compile_cpu_s, rep->threads, rep->timing_s);
    if (compiled > 0)
        printf("per config: %.4f s (compile %.4f s wall, %.4f s CPU; timing %.4f s)\n",
               rep->wall_s / compiled, rep->compile_wall_s / compiled,
               rep->compile_cpu_s / compiled, rep->timing_s / (evaluated ? evaluated : 1));
    if (rep->best >= 0)
        printf("best: %s  %.4f ms  (key '%s')\n", rep->results[rep->best].config,
               rep->results[rep->best].ms, rep->key);
    else
        printf("best: none (no configuration ran)\n");
}

/* Whether there is a tuning cache to save to: none without TILE_CACHE_DIR (or with it
 * empty), XDG_CACHE_HOME and HOME; tuning then says so first (and exits 1 at the end). */
static int tuning_cache_exists(void)
{
    char *dir = tcache_dir(NULL);
    int exists = dir != NULL;
    free(dir);
    if (!exists)
        fprintf(stderr, "tilec: warning: no tuning cache (TILE_CACHE_DIR is empty, or it, "
                "XDG_CACHE_HOME and HOME are all unset or empty): the results will not be "
                "saved\n");
    return exists;
}

int tilec_cmd_tune(int argc, char **argv)
{
    TuneCli c = { .last_pct = -1 };
    char *rest[MAX_ARGS];
    int n = tune_opts_parse(&c, argc, argv, rest);
    c.tty = isatty(fileno(stderr));
    c.opts.progress = on_progress, c.opts.user = &c;
    TilecSession s;
    int rc = EXIT_ERROR;
    if (tilec_session_open(n, rest, &s) == 0) {
        c.opts.reps = (int)s.reps;
        const tile_TuneReport *rep = NULL;
        int saved = tuning_cache_exists();
        printf("tuning %s:%s on %s (%s)\n", s.file, s.kernel,
               tile_backend_name(tile_backend(s.ctx)), tile_device_name(s.ctx));
        fflush(stdout);
        tile_Status st = tile_tune(s.k, s.args, s.nargs, s.consts, s.nconsts, &c.opts, &rep);
        if (st != TILE_OK)
            tilec_error("tuning failed: %s", tile_error(s.ctx));
        if (rep && rep->nresults) {
            print_table(rep, c.top);
            print_summary(rep);
        }
        rc = st == TILE_OK && rep && rep->best >= 0 ? EXIT_OK : EXIT_ERROR;
        if (rc == EXIT_OK && (!saved || tilec_log_save_failed())) { /* it is for the cache */
            tilec_error("the results were not saved to the tuning cache (see the warnings)");
            rc = EXIT_ERROR;
        }
    }
    tilec_session_close(&s);
    return rc;
}
