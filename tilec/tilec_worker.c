/* tilec_worker.c: `tilec tune-worker JOB [--resume]`, hidden: the process in which
 * tuner/tune_isolate.c has a kernel tuned, so that a faulting configuration kills this
 * process and not the caller's context. Reads the job (format in tune_isolate.c), rebuilds
 * the module, buffers and arguments, tunes in this process (the engine traces and saves each
 * result as it goes), then writes "summary COMPILE_WALL COMPILE_CPU TIMING THREADS" to the
 * trace. --resume: an earlier worker died, so do not force (keep what it measured).
 * Exit 0 when tuning ran, 3 when the device context died, TUNE_WORKER_NO_SHARING when a
 * buffer the job shares cannot be mapped here, 1 otherwise (why on stderr). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "runtime_internal.h"
#include "tilec.h"
#include "tune.h"

enum { MAX_ITEMS = 512, EXIT_CONTEXT_LOST = 3 };

typedef struct Reader {
    char *p, *end;
} Reader;

/* The next line, NUL-terminated in place; NULL at the end. */
static char *next_line(Reader *r)
{
    if (r->p >= r->end)
        return NULL;
    char *line = r->p, *nl = memchr(r->p, '\n', (size_t)(r->end - r->p));
    if (!nl)
        return NULL;
    *nl = 0;
    r->p = nl + 1;
    return line;
}

/* `n` bytes and their closing newline, NUL-terminated in place; NULL when short. */
static char *next_blob(Reader *r, size_t n)
{
    if (n >= (size_t)(r->end - r->p) || r->p[n] != '\n') /* n + 1 could wrap */
        return NULL;
    char *b = r->p;
    b[n] = 0;
    r->p += n + 1;
    return b;
}

typedef struct Job {
    int backend, force, reps, samples, has_grid;
    double budget_ms;
    char *kernel, *name, *source, *import_path;
    int from_file;
    unsigned grid[3];
    tile_Const consts[MAX_ITEMS];
    int nconsts;
    char *buf[MAX_ITEMS]; /* NULL: shared, at share_offset of the allocation share[] names */
    size_t bufsize[MAX_ITEMS], share_offset[MAX_ITEMS];
    unsigned char share[MAX_ITEMS][BK_IPC_HANDLE];
    tile_DevPtr dev[MAX_ITEMS];
    int nbufs;
    tile_Arg args[MAX_ITEMS];
    int argbuf[MAX_ITEMS]; /* -1: not a pointer */
    int nargs;
} Job;

/* "shared LEN OFFSET HEX": a buffer the parent left on its device. 1 when line is one. */
static int parse_shared(Job *j, const char *line)
{
    size_t n, off;
    int len = 0;
    if (sscanf(line, "shared %zu %zu %n", &n, &off, &len) != 2 || !len || j->nbufs == MAX_ITEMS ||
        strlen(line + len) != 2 * BK_IPC_HANDLE)
        return 0;
    for (int i = 0; i < BK_IPC_HANDLE; i++) {
        unsigned v;
        if (sscanf(line + len + 2 * i, "%2x", &v) != 1)
            return 0;
        j->share[j->nbufs][i] = (unsigned char)v;
    }
    j->buf[j->nbufs] = NULL, j->share_offset[j->nbufs] = off, j->bufsize[j->nbufs++] = n;
    return 1;
}

static int parse_item(Job *j, Reader *r, char *line)
{
    char word[32], kind[16], name[256];
    size_t n;
    long long v;
    unsigned long long off;
    double f;
    int b, len = 0;
    if (sscanf(line, "%31s %zu%n", word, &n, &len) == 2 && !line[len] &&
        (!strcmp(word, "name") || !strcmp(word, "source") || !strcmp(word, "buffer") ||
         !strcmp(word, "import-path"))) {
        char *blob = next_blob(r, n);
        if (!blob || (!strcmp(word, "buffer") && j->nbufs == MAX_ITEMS))
            return -1;
        if (!strcmp(word, "buffer"))
            j->buf[j->nbufs] = blob, j->bufsize[j->nbufs++] = n;
        else
            *(word[0] == 'n' ? &j->name : word[0] == 's' ? &j->source : &j->import_path) = blob;
        return 0;
    }
    if (parse_shared(j, line))
        return 0;
    if (sscanf(line, "backend %d", &j->backend) == 1 || sscanf(line, "from-file %d", &j->from_file) == 1 ||
        sscanf(line, "options %d %d %d %la", &j->force, &j->reps, &j->samples, &j->budget_ms) == 4)
        return 0;
    if (!strncmp(line, "kernel ", 7))
        return j->kernel = line + 7, 0;
    if (sscanf(line, "grid %u %u %u", &j->grid[0], &j->grid[1], &j->grid[2]) == 3)
        return j->has_grid = 1, 0;
    if (sscanf(line, "const %255s %lld", name, &v) == 2 && j->nconsts < MAX_ITEMS) {
        char *copy = strdup(name);
        if (!copy)
            return -1;
        j->consts[j->nconsts++] = (tile_Const){ copy, v };
        return 0;
    }
    if (sscanf(line, "arg %15s", kind) != 1 || j->nargs == MAX_ITEMS)
        return -1;
    j->argbuf[j->nargs] = -1;
    if (!strcmp(kind, "int") && sscanf(line, "arg int %lld", &v) == 1)
        j->args[j->nargs++] = tile_int(v);
    else if (!strcmp(kind, "float") && sscanf(line, "arg float %la", &f) == 1)
        j->args[j->nargs++] = tile_float(f);
    else if (!strcmp(kind, "ptr") && sscanf(line, "arg ptr %d %llu", &b, &off) == 2 && b >= 0 &&
             b < j->nbufs && off < j->bufsize[b]) {
        j->argbuf[j->nargs] = b;
        j->args[j->nargs++] = tile_ptr(off); /* the buffer's device address is added later */
    } else
        return -1;
    return 0;
}

/* Parses the job in `text` (modified in place). 0, or -1. */
static int parse_job(Job *j, char *text, size_t len)
{
    Reader r = { text, text + len };
    char *line = next_line(&r);
    if (!line || strcmp(line, "tile-tune-job 1"))
        return -1;
    while ((line = next_line(&r)) && strcmp(line, "end"))
        if (parse_item(j, &r, line) < 0) {
            tilec_error("tune-worker: bad job line '%.60s'", line);
            return -1;
        }
    return line && j->kernel && j->name && j->source ? 0 : -1;
}

/* The job file: a regular file only, opened without blocking (a FIFO must not hang). */
static char *read_all(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    char *text = NULL;
    size_t n = 0;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
        (text = malloc((size_t)st.st_size + 1))) {
        while (n < (size_t)st.st_size) {
            ssize_t got = read(fd, text + n, (size_t)st.st_size - n);
            if (got < 0 && errno == EINTR)
                continue;
            if (got <= 0)
                break;
            n += (size_t)got;
        }
        if (n != (size_t)st.st_size) {
            free(text);
            text = NULL;
        }
    }
    if (fd >= 0)
        close(fd);
    *len = n;
    return text;
}

static void log_stderr(void *user, const char *msg) { fprintf(stderr, "%s\n", msg); }

/* A copy of buffer i, shared by the parent, in dev[i]; TILE_ERROR_UNSUPPORTED when it cannot
 * be mapped here. */
static tile_Status copy_shared(tile_Context *ctx, Job *j, int i)
{
    char err[BK_ERR_MAX];
    const char *off = getenv("TILE_TUNE_SHARING"); /* "0": as if it could not (for tests) */
    tile_Status st = TILE_ERROR_UNSUPPORTED;
    if (off && !strcmp(off, "0"))
        snprintf(err, sizeof err, "TILE_TUNE_SHARING=0");
    else if (!ctx->ops->ipc_copy)
        snprintf(err, sizeof err, "the %s backend cannot map another process's memory",
                 ctx->ops->name);
    else
        st = ctx->ops->ipc_copy(ctx->dev, j->share[i], j->share_offset[i], j->dev[i],
                                j->bufsize[i], err);
    if (st != TILE_OK)
        tilec_error("tune-worker: a shared buffer: %s", err);
    return st == TILE_OK ? st : TILE_ERROR_UNSUPPORTED;
}

/* Device buffers holding the job's bytes; the pointer arguments pointed into them. */
static tile_Status upload(tile_Context *ctx, Job *j)
{
    tile_Status st = TILE_OK;
    for (int i = 0; i < j->nbufs && st == TILE_OK; i++)
        if ((st = tile_malloc(ctx, j->bufsize[i], &j->dev[i])) == TILE_OK)
            st = j->buf[i] ? tile_copy_to_device(ctx, j->dev[i], j->buf[i], j->bufsize[i])
                           : copy_shared(ctx, j, i);
    for (int i = 0; i < j->nargs; i++)
        if (j->argbuf[i] >= 0)
            j->args[i].v.ptr += j->dev[j->argbuf[i]];
    return st;
}

static int tune(Job *j, int resume)
{
    tile_Context *ctx;
    tile_Module *mod;
    tile_Kernel *k;
    const tile_TuneReport *rep = NULL;
    if (tile_context_open((tile_Backend)j->backend, &ctx) != TILE_OK) {
        tilec_error("tune-worker: %s", tile_error(NULL));
        return EXIT_ERROR;
    }
    tile_set_log(ctx, log_stderr, NULL);
    tile_TuneOptions o = { .force = j->force && !resume, .reps = j->reps,
                           .samples = j->samples, .budget_s = j->budget_ms / 1e3 };
    /* imports resolve as in the parent: same directory, $TILE_PATH and import path */
    tile_Status st = tile_set_import_path(ctx, j->import_path);
    if (st == TILE_OK)
        st = rt_module_load(ctx, j->name, j->source, strlen(j->source), j->from_file != 0, &mod);
    if (st == TILE_OK)
        st = tile_kernel_get(mod, j->kernel, &k);
    if (st == TILE_OK && (st = upload(ctx, j)) == TILE_ERROR_UNSUPPORTED) {
        tile_context_close(ctx);
        return TUNE_WORKER_NO_SHARING;
    }
    if (st == TILE_OK)
        st = tune_tile_grid(k, j->has_grid ? j->grid : NULL, j->args, j->nargs, j->consts,
                            j->nconsts, &o, &rep);
    int fd = tune_trace_fd();
    if (rep && fd >= 0)
        dprintf(fd, "summary %f %f %f %d\n", rep->compile_wall_s, rep->compile_cpu_s,
                rep->timing_s, rep->threads);
    if (st != TILE_OK)
        tilec_error("tune-worker: %s", tile_error(ctx));
    if (st != TILE_ERROR_DEVICE)
        tile_context_close(ctx); /* a dead context is left to the exit */
    return st == TILE_OK ? EXIT_OK : st == TILE_ERROR_DEVICE ? EXIT_CONTEXT_LOST : EXIT_ERROR;
}

int tilec_cmd_tune_worker(int argc, char **argv)
{
    if (argc < 1 || argc > 2 || (argc == 2 && strcmp(argv[1], "--resume")))
        tilec_usage_error("usage: tilec tune-worker JOBFILE [--resume]");
    size_t len;
    char *text = read_all(argv[0], &len);
    Job *j = calloc(1, sizeof *j);
    int rc = EXIT_ERROR;
    if (!text || !j)
        tilec_error("tune-worker: cannot read %s", tilec_clip(argv[0]));
    else if (parse_job(j, text, len) < 0)
        tilec_error("tune-worker: %s is not a valid tuning job", tilec_clip(argv[0]));
    else
        rc = tune(j, argc == 2);
    for (int i = 0; j && i < j->nconsts; i++)
        free((char *)j->consts[i].name);
    free(j);
    free(text);
    return rc;
}
