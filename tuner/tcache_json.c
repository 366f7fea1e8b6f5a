/* tcache_json.c: the JSON side of the tuning cache: reading a tuning file defensively (any
 * byte sequence gives either a valid document or a warning, never a crash), its canonical
 * shape, merging two sets of keys, and atomic pretty-printed writes (sorted keys, indent 2,
 * so files diff well). */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "source_read.h"
#include "tcache_int.h"

enum { MAX_FILE = 256 << 20 };
/* errno of slurp for a FIFO, socket or device in place of a tuning file */
#define EFTYPE_NOT_REGULAR EINVAL

static const char *const META_FIELDS[6] = { "kernel", "source_hash", "compiler_version",
                                            "device", "arch", "driver" };
static const char *const STATUS_NAMES[3] = { "ok", "failed", "pruned" };

void tc_msg(char *buf, size_t n, const char *fmt, ...)
{
    if (!buf || n == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, n, fmt, ap);
    va_end(ap);
}

/* ---- reading ---- */
/* Opens without blocking (a FIFO in place of the file must not hang the reader) and reads
 * regular files only. *missing: no such file (ENOTDIR too: a file where a directory of the
 * path should be). */
static char *slurp(const char *path, size_t *size, int *missing)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    *missing = fd < 0 && (errno == ENOENT || errno == ENOTDIR);
    if (fd < 0)
        return NULL;
    char *buf = NULL;
    errno = 0;
    if (fstat(fd, &st) == 0 && !S_ISREG(st.st_mode))
        errno = S_ISDIR(st.st_mode) ? EISDIR : EFTYPE_NOT_REGULAR;
    else if (!errno && st.st_size >= MAX_FILE)
        errno = EFBIG;
    else if (!errno && (buf = malloc((size_t)st.st_size + 1))) {
        size_t got = 0;
        ssize_t r = 1;
        while (got < (size_t)st.st_size &&
               ((r = read(fd, buf + got, (size_t)st.st_size - got)) > 0 || errno == EINTR))
            got += r > 0 ? (size_t)r : 0;
        *size = got;
        if (r < 0 && got < (size_t)st.st_size) { /* a read error: not the file's contents */
            free(buf);
            buf = NULL;
        }
    }
    int err = errno ? errno : ENOMEM;
    close(fd);
    errno = err;
    return buf;
}

json_t *tj_load(const char *path, int *missing, char *msg, size_t n)
{
    size_t size = 0;
    char *buf = slurp(path, &size, missing);
    if (!buf) {
        tc_msg(msg, n, "%s: cannot read: %s", path, *missing ? "no such file"
                       : errno == EFTYPE_NOT_REGULAR ? "not a regular file" : strerror(errno));
        return NULL;
    }
    json_error_t e;
    json_t *root = json_loadb(buf, size, 0, &e);
    free(buf);
    if (!root)
        tc_msg(msg, n, "%s:%d:%d: invalid JSON: %s", path, e.line, e.column, e.text);
    return root;
}

int tj_meta_of(const json_t *root, TCacheMeta *out)
{
    const char **dst[6] = { &out->kernel, &out->source_hash, &out->compiler_version,
                            &out->device, &out->arch, &out->driver };
    json_t *fmt = json_object_get(root, "format");
    if (!json_is_object(root) || !json_is_integer(fmt) || json_integer_value(fmt) != TC_FORMAT)
        return -1;
    for (int i = 0; i < 6; i++) {
        const char *s = json_string_value(json_object_get(root, META_FIELDS[i]));
        if (!s)
            return -1;
        *dst[i] = s;
    }
    return 0;
}

static const char *str0(const char *s) { return s ? s : ""; }

int tj_meta_equal(const TCacheMeta *a, const TCacheMeta *b)
{
    return !strcmp(str0(a->kernel), str0(b->kernel)) &&
           !strcmp(str0(a->source_hash), str0(b->source_hash)) &&
           !strcmp(str0(a->compiler_version), str0(b->compiler_version)) &&
           !strcmp(str0(a->device), str0(b->device)) && !strcmp(str0(a->arch), str0(b->arch)) &&
           !strcmp(str0(a->driver), str0(b->driver));
}

/* ---- results ---- */
static int status_of(const char *s)
{
    for (int i = 0; s && i < 3; i++)
        if (!strcmp(s, STATUS_NAMES[i]))
            return i;
    return -1;
}

static int time_ok(const json_t *v) { return json_is_number(v) && json_number_value(v) >= 0 &&
                                             isfinite(json_number_value(v)); }

/* A config's entry of the right shape? */
static int result_valid(const json_t *e)
{
    json_t *ms = json_object_get(e, "ms"), *cms = json_object_get(e, "compile_ms");
    json_t *reason = json_object_get(e, "reason"), *local = json_object_get(e, "local_bytes");
    int st = status_of(json_string_value(json_object_get(e, "status")));
    return json_is_object(e) && st >= 0 && (st != TRES_OK || time_ok(ms)) &&
           (!ms || time_ok(ms)) && (!cms || time_ok(cms)) && (!reason || json_is_string(reason)) &&
           (!local || (json_is_integer(local) && json_integer_value(local) >= 0 &&
                       json_integer_value(local) <= INT_MAX));
}

void tj_result_get(const json_t *e, TResult *out)
{
    const char *status = json_string_value(json_object_get(e, "status"));
    *out = (TResult){ .status = (TResStatus)status_of(status),
                      .ms = json_number_value(json_object_get(e, "ms")),
                      .compile_ms = json_number_value(json_object_get(e, "compile_ms")),
                      .reason = json_string_value(json_object_get(e, "reason")),
                      .local_bytes = -1 };
    json_t *local = json_object_get(e, "local_bytes");
    if (json_is_integer(local))
        out->local_bytes = (int)json_integer_value(local);
}

json_t *tj_result_new(const TResult *r)
{
    if ((int)r->status < 0 || r->status > TRES_PRUNED || !isfinite(r->ms) ||
        !isfinite(r->compile_ms))
        return NULL;
    json_t *e = json_object();
    int bad = !e || json_object_set_new(e, "status", json_string(STATUS_NAMES[r->status]));
    if (!bad && r->status == TRES_OK)
        bad = json_object_set_new(e, "ms", json_real(r->ms));
    if (!bad && (r->compile_ms != 0 || r->status == TRES_OK))
        bad = json_object_set_new(e, "compile_ms", json_real(r->compile_ms));
    if (!bad && r->reason)
        bad = json_object_set_new(e, "reason", json_string(r->reason));
    if (!bad && r->status == TRES_OK && r->local_bytes >= 0)
        bad = json_object_set_new(e, "local_bytes", json_integer(r->local_bytes));
    if (bad)
        json_decref(e);
    return bad ? NULL : e;
}

/* ---- canonical shape ---- */
static json_t *clean_entry(const json_t *in, int *dropped)
{
    json_t *best = json_object_get(in, "best"), *cfgs = json_object_get(in, "configs");
    json_t *out = json_object(), *oc = json_object(), *v;
    const char *name;
    if (!json_is_object(in) || (best && !json_is_string(best)) || (cfgs && !json_is_object(cfgs)))
        ++*dropped, cfgs = NULL, best = NULL;
    json_object_foreach(cfgs, name, v)
        if (!result_valid(v))
            ++*dropped;
        else if (oc)
            json_object_set_new(oc, name, json_deep_copy(v));
    if (out && oc && best)
        json_object_set_new(out, "best", json_string(json_string_value(best)));
    if (out && oc && json_object_set_new(out, "configs", oc) == 0 &&
        (best || json_object_size(oc)))
        return out;
    json_decref(out);
    return NULL;
}

json_t *tj_clean_keys(const json_t *keys, int *dropped)
{
    json_t *out = json_object(), *v;
    const char *key;
    if (keys && !json_is_object(keys))
        ++*dropped;
    json_object_foreach((json_t *)keys, key, v) {
        json_t *e = clean_entry(v, dropped);
        if (out && e)
            json_object_set_new(out, key, e);
    }
    return out;
}

/* An empty regular file holds nothing to keep: it reads as no file. */
static int empty_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0;
}

json_t *tj_read_keys(const char *path, const TCacheMeta *meta, char *warn, size_t n,
                     int *damaged)
{
    int missing = 0, dropped = 0, bad = 0;
    char msg[512];
    tc_msg(warn, n, "%s", "");
    json_t *root = tj_load(path, &missing, msg, sizeof msg), *keys = NULL;
    TCacheMeta got;
    if (!root && !missing && !empty_file(path))
        bad = 1, tc_msg(warn, n, "the tuning file %s", msg);
    else if (root && tj_meta_of(root, &got) < 0)
        bad = 1, tc_msg(warn, n, "the tuning file %s is not a format-%d tuning file", path,
                        TC_FORMAT);
    else if (root && !tj_meta_equal(&got, meta))
        bad = 1, tc_msg(warn, n, "the tuning file %s belongs to another kernel or device (%s "
                        "on %s)", path, got.kernel, got.device);
    else if (root)
        keys = tj_clean_keys(json_object_get(root, "keys"), &dropped);
    if (dropped)
        bad = 1, tc_msg(warn, n, "the tuning file %s has %d malformed entr%s", path, dropped,
                        dropped == 1 ? "y" : "ies"); /* the caller says what becomes of them */
    if (damaged)
        *damaged = bad;
    json_decref(root);
    return keys ? keys : json_object();
}

/* ---- merging ---- */
static json_t *key_entry(json_t *keys, const char *key)
{
    json_t *e = json_object_get(keys, key);
    if (e)
        return e;
    e = json_pack("{s:o}", "configs", json_object());
    return e && json_object_set_new(keys, key, e) == 0 ? e : NULL;
}

int tj_merge(json_t *into, const json_t *from)
{
    const char *key, *cfg;
    json_t *fe, *v;
    json_object_foreach((json_t *)from, key, fe) {
        json_t *ie = key_entry(into, key), *ic = json_object_get(ie, "configs");
        json_t *best = json_object_get(fe, "best");
        if (!ic || (best && json_object_set_new(ie, "best", json_deep_copy(best))))
            return -1;
        json_object_foreach(json_object_get(fe, "configs"), cfg, v)
            if (json_object_set_new(ic, cfg, json_deep_copy(v)))
                return -1;
    }
    return 0;
}

json_t *tj_document(const TCacheMeta *meta, json_t *keys)
{
    return json_pack("{s:i, s:s, s:s, s:s, s:s, s:s, s:s, s:O}", "format", TC_FORMAT,
                     "kernel", str0(meta->kernel), "source_hash", str0(meta->source_hash),
                     "compiler_version", str0(meta->compiler_version), "device",
                     str0(meta->device), "arch", str0(meta->arch), "driver", str0(meta->driver),
                     "keys", keys);
}

/* ---- writing ---- */
static void sync_dir(const char *path)
{
    char dir[4096];
    const char *slash = strrchr(path, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    int fd = open(dir[0] ? dir : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

/* A device or a FIFO named as the destination (an export to /dev/stdout or a pipe) is written
 * in place: renaming a temporary file over it would replace the device node. Opened without
 * blocking, so a FIFO without a reader is an error rather than a hang. */
static int write_in_place(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY), bad = fd < 0;
    if (fd >= 0) {
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
        bad = fd_write_all(fd, text, strlen(text)) || fd_write_all(fd, "\n", 1);
        bad |= close(fd) != 0;
    }
    return bad ? -1 : 0;
}

static int is_special(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode) ||
                                     S_ISSOCK(st.st_mode));
}

int tj_write_atomic(const char *path, const json_t *root, char *err, size_t n)
{
    static atomic_uint counter;
    char *text = json_dumps(root, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(10));
    char tmp[4200];
    int fd = -1, bad = !text;
    if (!bad && !strcmp(path, "-"))
        bad = fd_write_all(STDOUT_FILENO, text, strlen(text)) || fd_write_all(STDOUT_FILENO, "\n", 1);
    else if (!bad && is_special(path))
        bad = write_in_place(path, text);
    else if (!bad) {
        snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%u", path, (long)getpid(),
                 atomic_fetch_add(&counter, 1));
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        bad = fd < 0 || fd_write_all(fd, text, strlen(text)) || fd_write_all(fd, "\n", 1) ||
              fsync(fd);
        bad |= fd >= 0 && close(fd);
        bad = bad || rename(tmp, path);
        if (bad && fd >= 0)
            unlink(tmp);
        if (!bad)
            sync_dir(path);
    }
    if (bad)
        tc_msg(err, n, "cannot write %s: %s", path, text ? strerror(errno) : "out of memory");
    free(text);
    return bad ? -1 : 0;
}
