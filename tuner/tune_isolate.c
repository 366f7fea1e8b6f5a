/* tune_isolate.c: tuning in worker processes, so that a configuration that faults (an illegal
 * address kills a CUDA context; a wild pointer kills the process on the CPU backend) costs a
 * worker, never the caller's context. The parent writes a job file, spawns
 * `tilec tune-worker JOB` (tilec/tilec_worker.c) and follows its trace on a pipe ("compiled
 * N" after each compile, "begin CONFIG", "end", at last "summary ..."). The worker saves each
 * result to the tuning cache as it goes; when it dies, the configuration it had begun is
 * recorded there as failed and a new worker goes on, skipping what the cache has. A worker
 * that hangs is killed: inside a configuration after TILE_TUNE_CONFIG_TIMEOUT, elsewhere
 * after TILE_TUNE_WORKER_TIMEOUT without a trace line. Then the parent reloads the cache
 * (tune.c). */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "tune.h"

extern char **environ;

enum { MAX_RESTARTS = 32, TRACE_FD = 3, MAX_BUFS = 256, LINE_MAX_ = 512, WHY_MAX = 1024 };
enum { HUNG_CONFIG = 1, SILENT }; /* why a worker was killed (Iso.timed_out) */

/* Only the pipe a worker's parent puts at TRACE_FD counts (spawn): the variable left in some
 * other process's environment must not send trace lines to its stdout or into whatever file
 * that number is there. */
int tune_trace_fd(void)
{
    const char *v = getenv("TILE_TUNE_TRACE_FD");
    char *end;
    long fd = v && *v ? strtol(v, &end, 10) : -1;
    struct stat st;
    if (fd != TRACE_FD || *end || fstat((int)fd, &st) != 0 || !S_ISFIFO(st.st_mode))
        return -1;
    return (int)fd;
}

int tune_isolate_wanted(tile_Context *ctx)
{
    const char *v = getenv("TILE_TUNE_ISOLATE");
    int i = tune_env_word(ctx, "TILE_TUNE_ISOLATE", v, TUNE_ENV_FLAG, "1 (isolation on)");
    if (i != -1)
        return i != 0; /* any value but 0 turns it on, as it always did */
    return ctx->ops->kind == TILE_BACKEND_CUDA;
}

/* ---- finding the worker ---- */

static int executable(const char *p) { return p && *p && access(p, X_OK) == 0; }

/* PREFIX/bin/tilec beside an installed libtile.so in PREFIX/lib (malloc'd), or NULL. */
static char *installed_tilec(void)
{
    Dl_info info;
    char *p = NULL;
    const char *slash;
    if (!dladdr((void *)installed_tilec, &info) || !info.dli_fname ||
        !(slash = strrchr(info.dli_fname, '/')))
        return NULL;
    if (asprintf(&p, "%.*s/../bin/tilec", (int)(slash - info.dli_fname), info.dli_fname) > 0 &&
        executable(p))
        return p;
    free(p);
    return NULL;
}

/* $TILE_TUNE_WORKER, else this program if it is tilec, else the tilec installed beside this
 * library, else the tilec of this build, else a tilec beside this program (malloc'd); NULL
 * when none is executable. */
static char *worker_path(void)
{
    const char *env = getenv("TILE_TUNE_WORKER");
    if (env && *env)
        return executable(env) ? strdup(env) : NULL;
    char self[PATH_MAX], *p = NULL;
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = 0;
    const char *base = strrchr(self, '/');
    if (base && !strcmp(base + 1, "tilec"))
        return strdup(self);
    if ((p = installed_tilec()))
        return p;
#ifdef TILE_WORKER_PATH
    if (executable(TILE_WORKER_PATH))
        return strdup(TILE_WORKER_PATH);
#endif
    if (base && asprintf(&p, "%.*s/tilec", (int)(base - self), self) > 0 && executable(p))
        return p;
    free(p);
    return NULL;
}

static atomic_flag warned_no_worker = ATOMIC_FLAG_INIT;

static int no_isolation(tile_Context *ctx, const char *fmt, const char *what)
{
    char msg[WHY_MAX + 128];
    snprintf(msg, sizeof msg, fmt, what);
    rt_log(ctx, "tile: tuning in this process, without fault isolation: %s", msg);
    return 0;
}

/* ---- the job file ----
 * Read by tilec/tilec_worker.c. Text lines, with blobs as "WORD LEN\n" + LEN bytes + "\n":
 *   tile-tune-job 1
 *   backend KIND            (tile_Backend)
 *   kernel NAME
 *   options FORCE REPS SAMPLES BUDGET_MS(%a)
 *   name LEN / source LEN   (blobs: the module's name and source text)
 *   grid X Y Z              (only for an explicit grid)
 *   const NAME VALUE        (the caller's consts, each)
 *   buffer LEN              (blob: an allocation an argument points into, each once)
 *   shared LEN OFFSET HEX   (or: that allocation left on the device, LEN bytes at OFFSET of
 *                            the allocation whose sharing handle is HEX; the worker copies it
 *                            device to device: a multi-GB KV cache needs no trip through a file)
 *   arg ptr BUFFER OFFSET | arg int V | arg float V(%a)   (each runtime param, in order)
 *   end */

typedef struct Bufs {
    tile_DevPtr base[MAX_BUFS];
    size_t size[MAX_BUFS];
    int n;
} Bufs;

/* The allocation holding p: its index in b (added on first use), or -1 when the runtime did
 * not allocate p. */
static int buf_of(tile_Context *ctx, Bufs *b, tile_DevPtr p)
{
    for (int i = 0; i < b->n; i++)
        if (p >= b->base[i] && p < b->base[i] + b->size[i])
            return i;
    RtRange g;
    if (!rt_alloc_of(ctx, p, &g) || b->n == MAX_BUFS)
        return -1;
    b->base[b->n] = g.base, b->size[b->n] = g.size;
    return b->n++;
}

static void put_blob(FILE *f, const char *word, const void *data, size_t n)
{
    fprintf(f, "%s %zu\n", word, n);
    fwrite(data, 1, n, f);
    fputc('\n', f);
}

/* The buffer as a handle the worker maps, when the backend can share it; 0 if written. */
static int put_shared(tile_Context *ctx, FILE *f, tile_DevPtr base, size_t size)
{
    unsigned char h[BK_IPC_HANDLE];
    size_t offset;
    char err[BK_ERR_MAX];
    if (!ctx->ops->ipc_export || ctx->ops->ipc_export(ctx->dev, base, h, &offset, err) != TILE_OK)
        return -1;
    fprintf(f, "shared %zu %zu ", size, offset);
    for (int i = 0; i < BK_IPC_HANDLE; i++)
        fprintf(f, "%02x", h[i]);
    fputc('\n', f);
    return 0;
}

static int put_buffer(tile_Context *ctx, FILE *f, tile_DevPtr base, size_t size, char *why)
{
    char *host = malloc(size ? size : 1);
    char err[BK_ERR_MAX];
    if (!host || ctx->ops->copy_d2h(ctx->dev, host, base, size, err) != TILE_OK) {
        snprintf(why, WHY_MAX, "cannot copy an argument's buffer: %.900s",
                 host ? err : "out of memory");
        free(host);
        return -1;
    }
    put_blob(f, "buffer", host, size);
    free(host);
    return 0;
}

/* What the worker needs to resolve the module's imports as it was loaded here: whether its
 * text came from its file, and the context's import path (it runs in our directory, with our
 * $TILE_PATH). */
static void put_import_path(FILE *f, const tile_Module *mod)
{
    fprintf(f, "from-file %d\n", mod->from_file);
    pthread_mutex_lock(&mod->ctx->lock);
    if (mod->ctx->import_path)
        put_blob(f, "import-path", mod->ctx->import_path, strlen(mod->ctx->import_path));
    pthread_mutex_unlock(&mod->ctx->lock);
}

/* Writes the job, with its buffers shared where `share` and the backend can; -1 with the
 * reason in why (WHY_MAX bytes). */
static int write_job(const TuneRequest *req, int samples, double budget_ms, int share,
                     const char *path, char *why)
{
    tile_Kernel *k = req->k;
    tile_Context *ctx = k->mod->ctx;
    Bufs b = { .n = 0 };
    int idx[512];
    for (int i = 0; i < k->nparams && i < 512; i++)
        if (req->args[i].kind == TILE_ARG_PTR && (idx[i] = buf_of(ctx, &b, req->args[i].v.ptr)) < 0) {
            snprintf(why, WHY_MAX, "argument %d ('%s') was not allocated by tile_malloc", i + 1,
                     k->params[i].name);
            return -1;
        }
    FILE *f = fopen(path, "wb");
    if (!f) {
        snprintf(why, WHY_MAX, "cannot write %.900s: %s", path, strerror(errno));
        return -1;
    }
    fprintf(f, "tile-tune-job 1\nbackend %d\nkernel %s\noptions %d %d %d %a\n",
            (int)ctx->ops->kind, k->func->name, req->force, req->reps, samples, budget_ms);
    put_blob(f, "name", k->mod->file.name, strlen(k->mod->file.name));
    put_blob(f, "source", k->mod->file.text, k->mod->file.len);
    put_import_path(f, k->mod);
    if (req->grid)
        fprintf(f, "grid %u %u %u\n", req->grid[0], req->grid[1], req->grid[2]);
    for (int i = 0; i < req->ngiven; i++)
        fprintf(f, "const %s %lld\n", req->given[i].name, (long long)req->given[i].value);
    int bad = 0;
    for (int i = 0; i < b.n && !bad; i++)
        if (!share || put_shared(ctx, f, b.base[i], b.size[i]) < 0)
            bad = put_buffer(ctx, f, b.base[i], b.size[i], why);
    for (int i = 0; i < k->nparams && !bad; i++) {
        const tile_Arg *a = &req->args[i];
        if (a->kind == TILE_ARG_PTR)
            fprintf(f, "arg ptr %d %llu\n", idx[i], (unsigned long long)(a->v.ptr - b.base[idx[i]]));
        else if (a->kind == TILE_ARG_INT)
            fprintf(f, "arg int %lld\n", (long long)a->v.i);
        else
            fprintf(f, "arg float %a\n", a->v.f);
    }
    fputs("end\n", f);
    if ((ferror(f) | fclose(f)) && !bad) {
        snprintf(why, WHY_MAX, "cannot write %.900s", path);
        bad = 1;
    }
    return bad ? -1 : 0;
}

/* ---- one worker ---- */

typedef struct Iso {
    const TuneRequest *req;
    tile_Context *ctx;
    char *exe, dir[PATH_MAX - 16], job[PATH_MAX], errf[PATH_MAX], cachedir[PATH_MAX];
    char **env;
    int ntodo, done, faults;
    int cap;              /* of out->evaluated */
    char *pending;        /* the configuration begun and not ended */
    int again;            /* pending is a finalist timed again (not counted twice) */
    double pending_since; /* tune_now_ms() at its begin */
    double heard;         /* tune_now_ms() at the worker's start or last trace line */
    int timed_out;        /* the last worker was killed: HUNG_CONFIG or SILENT */
    tile_TuneReport *rep;
    Arena *a;
    TuneIsolation *out;
} Iso;

/* The environment of a worker: ours, with isolation off, the trace on TRACE_FD and our
 * tuning cache's directory. */
static char **child_env(const char *cachedir)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = calloc(n + 4, sizeof *env);
    if (!env)
        return NULL;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "TILE_TUNE_ISOLATE=", 18) &&
            strncmp(environ[i], "TILE_TUNE_TRACE_FD=", 19) &&
            strncmp(environ[i], "TILE_CACHE_DIR=", 15))
            env[m++] = environ[i];
    env[m++] = "TILE_TUNE_ISOLATE=0";
    env[m++] = "TILE_TUNE_TRACE_FD=3";
    if (asprintf(&env[m], "TILE_CACHE_DIR=%s", cachedir) < 0) {
        free(env);
        return NULL;
    }
    return env;
}

static void env_free(char **env)
{
    if (!env)
        return;
    size_t n = 0;
    while (env[n + 1])
        n++;
    free(env[n]); /* the TILE_CACHE_DIR entry, the only one allocated */
    free(env);
}

/* Starts a worker; its trace's read end in *rfd. The pid, or -1. */
static pid_t spawn(Iso *s, int resume, int *rfd)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return -1;
    if (p[1] == TRACE_FD) { /* dup2 onto itself would keep close-on-exec */
        int w = fcntl(p[1], F_DUPFD_CLOEXEC, 10);
        close(p[1]);
        p[1] = w;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, s->errf, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&fa, 2, 1);
    posix_spawn_file_actions_adddup2(&fa, p[1], TRACE_FD);
    char *argv[] = { s->exe, "tune-worker", s->job, resume ? "--resume" : NULL, NULL };
    pid_t pid;
    int rc = p[1] < 0 ? -1 : posix_spawn(&pid, s->exe, &fa, NULL, argv, s->env);
    posix_spawn_file_actions_destroy(&fa);
    close(p[1]);
    if (rc != 0) {
        close(p[0]);
        return -1;
    }
    *rfd = p[0];
    return pid;
}

static void progress(Iso *s)
{
    if (!s->req->progress)
        return;
    tile_TuneProgress p = { "time", s->done, s->ntodo > s->done ? s->ntodo : s->done, s->faults,
                            -1, NULL, -1 };
    s->req->progress(s->req->user, &p);
}

/* Notes a configuration the worker began (grows in the arena: old arrays stay till its end).
 * Out of memory, it is left out: the result is then reported as from the cache. */
static void record_evaluated(Iso *s, TuneIsolation *o, const char *config)
{
    if (o->nevaluated == s->cap) {
        const char **more = arena_alloc(s->a, sizeof *more * (size_t)(2 * s->cap + 16));
        if (!more)
            return;
        if (o->nevaluated)
            memcpy(more, o->evaluated, sizeof *more * (size_t)o->nevaluated);
        o->evaluated = more;
        s->cap = 2 * s->cap + 16;
    }
    const char *copy = arena_strdup(s->a, config);
    if (copy)
        o->evaluated[o->nevaluated++] = copy;
}

static void trace_line(Iso *s, char *line)
{
    double cw, cc, tm;
    int threads;
    s->heard = tune_now_ms(); /* any line, "compiled N" too: the worker is alive */
    line[strcspn(line, "\n")] = 0;
    if (!strncmp(line, "begin ", 6)) {
        free(s->pending);
        s->pending = strdup(line + 6);
        s->pending_since = tune_now_ms();
        TuneIsolation *o = s->out;
        record_evaluated(s, o, line + 6);
        s->again = 0;
    } else if (!strncmp(line, "again ", 6)) {
        free(s->pending);
        s->pending = strdup(line + 6);
        s->pending_since = tune_now_ms();
        s->again = 1;
    } else if (!strcmp(line, "end")) {
        free(s->pending);
        s->pending = NULL;
        if (!s->again) {
            s->done++;
            progress(s);
        }
    } else if (sscanf(line, "summary %lf %lf %lf %d", &cw, &cc, &tm, &threads) == 4) {
        s->rep->compile_wall_s += cw, s->rep->compile_cpu_s += cc, s->rep->timing_s += tm;
        s->rep->threads = threads > s->rep->threads ? threads : s->rep->threads;
    }
}

/* The last non-empty line the worker wrote to stderr ("" if none). */
static void last_error_line(const char *path, char *out, size_t cap)
{
    FILE *f = fopen(path, "r");
    char line[LINE_MAX_];
    out[0] = 0;
    while (f && fgets(line, sizeof line, f))
        if (line[strspn(line, " \t\n")]) {
            line[strcspn(line, "\n")] = 0;
            snprintf(out, cap, "%s", line);
        }
    if (f)
        fclose(f);
}

/* Seconds a configuration may run on the device before its worker is killed. */
static double config_timeout_ms(tile_Context *ctx)
{
    return tune_env_seconds(ctx, "TILE_TUNE_CONFIG_TIMEOUT", 0, 20, NULL) * 1e3;
}

/* Seconds a worker may go without a trace line outside a configuration (starting, compiling:
 * it writes a line after each compile, finishing, exiting) before it is killed. */
static double silence_timeout_ms(tile_Context *ctx)
{
    return tune_env_seconds(ctx, "TILE_TUNE_WORKER_TIMEOUT", 0, 600, NULL) * 1e3;
}

/* Feeds complete lines of `buf` to trace_line; keeps a partial last line. */
static size_t take_lines(Iso *s, char *buf, size_t len)
{
    size_t start = 0;
    for (size_t i = 0; i < len; i++)
        if (buf[i] == '\n') {
            buf[i] = 0;
            trace_line(s, buf + start);
            start = i + 1;
        }
    memmove(buf, buf + start, len - start);
    return len - start;
}

/* Whether the worker hangs: a configuration running past its timeout, or silence past the
 * worker timeout outside one. */
static int hanging(Iso *s, double config_ms, double silence_ms)
{
    double now = tune_now_ms();
    if (s->pending)
        return now - s->pending_since > config_ms ? HUNG_CONFIG : 0;
    return now - s->heard > silence_ms ? SILENT : 0;
}

/* Reads the trace until the worker closes it; kills the worker when it hangs (a hang must
 * not hang the caller). */
static void follow_trace(Iso *s, int rfd, pid_t pid)
{
    char buf[2 * LINE_MAX_];
    size_t len = 0;
    double config_ms = config_timeout_ms(s->ctx), silence_ms = silence_timeout_ms(s->ctx);
    for (;;) {
        struct pollfd pf = { rfd, POLLIN, 0 };
        int r = poll(&pf, 1, 250);
        if (r < 0 && errno == EINTR)
            continue;
        if ((s->timed_out = hanging(s, config_ms, silence_ms))) {
            kill(pid, SIGKILL);
            return;
        }
        if (r <= 0)
            continue;
        ssize_t n = read(rfd, buf + len, sizeof buf - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
        len = take_lines(s, buf, len + (size_t)n);
        if (len >= sizeof buf - 1) /* an overlong line: drop it */
            len = 0;
    }
}

/* The worker's exit status; one that closed its trace without exiting is killed after the
 * worker timeout. */
static int reap(Iso *s, pid_t pid)
{
    int status = 0;
    double t0 = tune_now_ms(), silence_ms = silence_timeout_ms(s->ctx);
    for (;;) {
        pid_t r = waitpid(pid, &status, s->timed_out ? 0 : WNOHANG);
        if (r == pid || (r < 0 && errno != EINTR))
            return status;
        if (r == 0 && tune_now_ms() - t0 > silence_ms) {
            kill(pid, SIGKILL);
            s->timed_out = SILENT;
        } else if (r == 0) {
            nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
        }
    }
}

/* Runs one worker to its end; its exit status (waitpid's), or -1 when it did not start. */
static int run_worker(Iso *s, int resume)
{
    int rfd;
    s->timed_out = 0;
    s->heard = tune_now_ms();
    pid_t pid = spawn(s, resume, &rfd);
    if (pid < 0)
        return -1;
    follow_trace(s, rfd, pid);
    close(rfd);
    return reap(s, pid);
}

static void describe_exit(int status, const char *errline, char *out, size_t cap)
{
    int n = WIFSIGNALED(status)
                ? snprintf(out, cap, "signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)))
                : snprintf(out, cap, "exit status %d", WEXITSTATUS(status));
    if (*errline && n > 0 && (size_t)n < cap)
        snprintf(out + n, cap - (size_t)n, ": %s", errline);
}

/* Records the configuration a dead worker was running as failed, in the cache file. */
static void record_fault(Iso *s, const char *what)
{
    TCache *tc = s->req->kt->tc;
    char reason[2 * LINE_MAX_], err[512];
    snprintf(reason, sizeof reason, "%s in the tuning worker: %s",
             s->timed_out ? "hang" : "device fault", what);
    TResult r = { TRES_FAILED, 0, 0, reason };
    tcache_reload(tc, NULL, 0); /* the worker's results replace ours before we save */
    tcache_put(tc, s->req->key, s->pending, &r);
    if (tcache_save(tc, err, sizeof err) != 0)
        rt_log(s->ctx, "tile: cannot save the tuning cache: %s", err);
    else if (err[0]) /* a damaged file was moved aside */
        rt_log(s->ctx, "tile: %s", err);
    rt_log(s->ctx, "tile: tuning '%s': configuration %s: %s", s->req->k->func->name,
           s->pending, reason);
    free(s->pending);
    s->pending = NULL;
    s->faults++;
    s->done++;
    progress(s);
}

/* Workers until one finishes (or MAX_RESTARTS died). 1 done, 0 when the first worker
 * failed before any configuration (tune in this process then), -1 when it could not map the
 * job's shared buffers (write them into the job then). */
static int run_workers(Iso *s, double budget_ms)
{
    char errline[LINE_MAX_], what[LINE_MAX_ + 64];
    for (int run = 0; run <= MAX_RESTARTS; run++) {
        int status = run_worker(s, run > 0);
        if (status == -1)
            return run ? 1 : no_isolation(s->ctx, "cannot start the tuning worker %s", s->exe);
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
            s->out->left_reason = budget_ms > 0 ? "past the time budget" : NULL;
            return 1;
        }
        if (!run && !s->pending && WIFEXITED(status) &&
            WEXITSTATUS(status) == TUNE_WORKER_NO_SHARING)
            return -1;
        last_error_line(s->errf, errline, sizeof errline);
        if (s->timed_out == HUNG_CONFIG)
            snprintf(what, sizeof what, "timed out after %.0f s on the device",
                     config_timeout_ms(s->ctx) / 1e3);
        else if (s->timed_out == SILENT)
            snprintf(what, sizeof what, "killed after %g s without a trace line outside a "
                     "configuration (TILE_TUNE_WORKER_TIMEOUT)", silence_timeout_ms(s->ctx) / 1e3);
        else
            describe_exit(status, errline, what, sizeof what);
        if (!s->pending) { /* not a configuration's fault */
            if (!s->out->nevaluated)
                return no_isolation(s->ctx, "the tuning worker failed: %s", what);
            s->out->left_reason = arena_printf(s->a, "not timed: the tuning worker failed: %s",
                                               what);
            return 1;
        }
        record_fault(s, what);
    }
    s->out->left_reason = arena_printf(s->a, "not timed: the tuning worker faulted %d times",
                                       s->faults);
    return 1;
}

/* "<dir>/tuning/<file>.json" -> "<dir>" */
static int cache_dir_of(const char *path, char *out)
{
    snprintf(out, PATH_MAX, "%s", path);
    for (int i = 0; i < 2; i++) {
        char *slash = strrchr(out, '/');
        if (!slash)
            return -1;
        *slash = 0;
    }
    if (!*out)
        strcpy(out, "/");
    return 0;
}

static int make_tmp(Iso *s)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(s->dir, sizeof s->dir, "%s/tile-tune-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(s->dir))
        return -1;
    snprintf(s->job, sizeof s->job, "%s/job", s->dir);
    snprintf(s->errf, sizeof s->errf, "%s/stderr", s->dir);
    return 0;
}

static void iso_fini(Iso *s)
{
    if (s->dir[0]) {
        unlink(s->job);
        unlink(s->errf);
        rmdir(s->dir);
    }
    free(s->pending);
    free(s->exe);
    env_free(s->env);
}

/* Writes the job (its buffers shared with the worker, or written into it when the worker
 * cannot map them) and runs workers on it: run_workers's 1 or 0. */
static int run_job(Iso *s, int samples, double budget_ms, char *why)
{
    int done = -1;
    for (int share = 1; share >= 0 && done < 0; share--)
        if (write_job(s->req, samples, budget_ms, share, s->job, why) < 0)
            return no_isolation(s->ctx, "%s", why);
        else
            done = run_workers(s, budget_ms);
    return done < 0 ? no_isolation(s->ctx, "%s", "the tuning worker cannot map shared buffers")
                    : done;
}

int tune_isolate(const TuneRequest *req, int samples, double budget_ms, int ntodo,
                 tile_TuneReport *rep, Arena *a, TuneIsolation *out)
{
    Iso s = { .req = req, .ctx = req->k->mod->ctx, .ntodo = ntodo, .rep = rep, .a = a,
              .out = out };
    TCache *tc = req->kt->tc;
    char why[WHY_MAX];
    int done = 0;
    const char *wenv = getenv("TILE_TUNE_WORKER");
    if (!(s.exe = worker_path())) {
        if (!atomic_flag_test_and_set(&warned_no_worker))
            no_isolation(s.ctx, wenv && *wenv ? "TILE_TUNE_WORKER='%s' is not executable"
                                              : "no tilec to run as the tuning worker%s "
                                                "(set TILE_TUNE_WORKER)", wenv && *wenv ? wenv : "");
        return 0;
    }
    if (!tc || !tcache_path(tc) || cache_dir_of(tcache_path(tc), s.cachedir) < 0)
        done = no_isolation(s.ctx, "%s", "the tuning cache is off (TILE_CACHE_DIR is empty)");
    else if (tcache_save(tc, why, sizeof why) != 0) /* workers report through the cache */
        done = no_isolation(s.ctx, "%s", why);
    else if (make_tmp(&s) < 0)
        done = no_isolation(s.ctx, "cannot create a temporary directory: %s", strerror(errno));
    else if (!(s.env = child_env(s.cachedir)))
        done = no_isolation(s.ctx, "%s", "out of memory");
    else
        done = run_job(&s, samples, budget_ms, why);
    if (done && tcache_reload(tc, why, sizeof why) < 0)
        rt_log(s.ctx, "tile: cannot reload the tuning cache: out of memory");
    iso_fini(&s);
    return done;
}
