/* tcache.c: the persistent tuning cache of one kernel on one device (see tcache.h): the
 * results loaded from its file, the entries this process added (which win when saving),
 * and the locked read-merge-write of tcache_save. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include "source_read.h"
#include "tcache_int.h"

struct TCache {
    pthread_mutex_t mu;  /* recursive: callbacks of tcache_each_* may call tcache_get */
    char *path, *lock;   /* NULL: kept in memory only */
    TCacheMeta meta;
    char *strings[6];    /* the meta's copies */
    json_t *all, *own;   /* "keys" objects: everything known, and what this process set */
};

static void lock(const TCache *c) { pthread_mutex_lock(&((TCache *)c)->mu); }
static void unlock(const TCache *c) { pthread_mutex_unlock(&((TCache *)c)->mu); }

/* ---- opening ---- */
static int copy_meta(TCache *c, const TCacheMeta *m)
{
    const char *in[6] = { m->kernel, m->source_hash, m->compiler_version, m->device, m->arch,
                          m->driver };
    for (int i = 0; i < 6; i++)
        if (!(c->strings[i] = strdup(in[i] ? in[i] : "")))
            return -1;
    c->meta = (TCacheMeta){ c->strings[0], c->strings[1], c->strings[2],
                            c->strings[3], c->strings[4], c->strings[5] };
    return 0;
}

/* "<x>.json" -> "<x>.lock" */
static char *lock_path(const char *path)
{
    size_t n = strlen(path);
    char *l = malloc(n + 6);
    if (l) {
        memcpy(l, path, n + 1);
        strcpy(l + (n > 5 && !strcmp(path + n - 5, ".json") ? n - 5 : n), ".lock");
    }
    return l;
}

static TCache *cache_new(const char *path, const TCacheMeta *meta)
{
    TCache *c = calloc(1, sizeof *c);
    pthread_mutexattr_t attr;
    if (!c)
        return NULL;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&c->mu, &attr);
    pthread_mutexattr_destroy(&attr);
    c->own = json_object();
    if (path) {
        c->path = strdup(path);
        c->lock = lock_path(path);
    }
    if (copy_meta(c, meta) < 0 || !c->own || (path && (!c->path || !c->lock))) {
        tcache_close(c);
        return NULL;
    }
    return c;
}

TCache *tcache_open(const char *dir, const TCacheMeta *meta, char *warning, size_t warnlen)
{
    char *tdir = tcache_dir(dir), *path = tdir ? tc_path_for(tdir, meta) : NULL;
    TCache *c = !tdir || path ? cache_new(path, meta) : NULL;
    tc_msg(warning, warnlen, "%s", "");
    if (c)
        c->all = path ? tj_read_keys(path, &c->meta, warning, warnlen, NULL) : json_object();
    if (warning && warning[0] && strlen(warning) + 1 < warnlen)
        tc_msg(warning + strlen(warning), warnlen - strlen(warning),
               " (ignored; kept when results are saved)");
    if (c && !c->all) {
        tcache_close(c);
        c = NULL;
    }
    free(tdir);
    free(path);
    return c;
}

TCache *tcache_load_file(const char *path, char *warning, size_t warnlen)
{
    int missing, dropped = 0;
    json_t *root = tj_load(path, &missing, warning, warnlen);
    TCacheMeta m;
    TCache *c = NULL;
    if (root && tj_meta_of(root, &m) < 0)
        tc_msg(warning, warnlen, "%s: not a format-%d tuning file", path, TC_FORMAT);
    else if (root && (c = cache_new(path, &m)))
        c->all = tj_clean_keys(json_object_get(root, "keys"), &dropped);
    if (root && c && dropped)
        tc_msg(warning, warnlen, "%s: %d malformed entr%s dropped", path, dropped,
               dropped == 1 ? "y" : "ies");
    else if (root && c)
        tc_msg(warning, warnlen, "%s", "");
    if (c && !c->all) {
        tcache_close(c);
        c = NULL;
    }
    json_decref(root);
    return c;
}

void tcache_close(TCache *c)
{
    if (!c)
        return;
    json_decref(c->all);
    json_decref(c->own);
    for (int i = 0; i < 6; i++)
        free(c->strings[i]);
    free(c->path);
    free(c->lock);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

const char *tcache_path(const TCache *c) { return c->path; }
const TCacheMeta *tcache_meta(const TCache *c) { return &c->meta; }

/* ---- entries ---- */
static json_t *configs_of(const json_t *keys, const char *key)
{
    return json_object_get(json_object_get(keys, key), "configs");
}

int tcache_get(const TCache *c, const char *key, const char *config, TResult *out)
{
    lock(c);
    json_t *e = json_object_get(configs_of(c->all, key), config);
    if (e)
        tj_result_get(e, out);
    unlock(c);
    return e != NULL;
}

const char *tcache_best(const TCache *c, const char *key)
{
    lock(c);
    const char *s = json_string_value(json_object_get(json_object_get(c->all, key), "best"));
    unlock(c);
    return s;
}

/* Sets one entry in a keys object (config NULL: the best, `v` its name); steals v. */
static int set_entry(json_t *keys, const char *key, const char *config, json_t *v)
{
    json_t *one = json_object(), *cfgs = json_object();
    int bad = !one || !cfgs || !v || json_object_set(one, "configs", cfgs);
    if (!bad)
        bad = config ? json_object_set(cfgs, config, v) : json_object_set(one, "best", v);
    json_t *wrap = bad ? NULL : json_object();
    bad = bad || !wrap || json_object_set(wrap, key, one) || tj_merge(keys, wrap);
    json_decref(wrap);
    json_decref(one);
    json_decref(cfgs);
    json_decref(v);
    return bad ? -1 : 0;
}

int tcache_put(TCache *c, const char *key, const char *config, const TResult *r)
{
    lock(c);
    json_t *v = tj_result_new(r);
    int bad = !v || set_entry(c->own, key, config, json_incref(v)) ||
              set_entry(c->all, key, config, json_incref(v));
    json_decref(v);
    unlock(c);
    return bad ? -1 : 0;
}

int tcache_set_best(TCache *c, const char *key, const char *config)
{
    lock(c);
    int bad = set_entry(c->own, key, NULL, json_string(config)) ||
              set_entry(c->all, key, NULL, json_string(config));
    unlock(c);
    return bad ? -1 : 0;
}

int tc_merge_own(TCache *c, const json_t *keys)
{
    lock(c);
    int bad = tj_merge(c->own, keys) || tj_merge(c->all, keys);
    unlock(c);
    return bad ? -1 : 0;
}

/* ---- saving ---- */
static int lock_file(const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0644), r = -1;
    while (fd >= 0 && (r = flock(fd, LOCK_EX)) < 0 && errno == EINTR)
        ;
    if (fd < 0 || r < 0) {
        tc_msg(err, errlen, "cannot lock %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

/* A damaged tuning file is never overwritten: it is renamed to a free name
 * "<file>.damaged-<n>" beside it (which listings skip), kept for the user to inspect. 0 with
 * a note in err, or -1 (the file stays where it is) with why in err. */
static int set_aside(const char *path, const char *why, char *err, size_t errlen)
{
    size_t len = strlen(path) + 32;
    char *aside = malloc(len);
    struct stat st;
    int n = 1, bad = !aside;
    while (!bad && (snprintf(aside, len, "%s.damaged-%d", path, n), lstat(aside, &st) == 0))
        bad = ++n > 1000;
    bad = bad || rename(path, aside) != 0;
    if (bad)
        tc_msg(err, errlen, "%s; it cannot be moved aside (%s), so it is left as it is and "
               "the new results are not saved", why, aside ? strerror(errno) : "out of memory");
    else
        tc_msg(err, errlen, "%s; it was moved to %s and a new one saved", why, aside);
    free(aside);
    return bad ? -1 : 0;
}

/* Under the file lock: the file's keys merged with ours, written back. A damaged file is
 * set aside first, so that results it may hold are never lost. */
static int merge_and_write(TCache *c, char *err, size_t errlen)
{
    char why[512];
    int damaged = 0;
    json_t *disk = tj_read_keys(c->path, &c->meta, why, sizeof why, &damaged), *doc = NULL;
    if (disk && damaged && set_aside(c->path, why, err, errlen) != 0) {
        json_decref(disk);
        return -1;
    }
    int bad = !disk || tj_merge(disk, c->own) || !(doc = tj_document(&c->meta, disk));
    if (bad)
        tc_msg(err, errlen, "out of memory");
    else
        bad = tj_write_atomic(c->path, doc, err, errlen);
    if (!bad) {
        json_decref(c->all);
        c->all = json_incref(disk);
    }
    json_decref(doc);
    json_decref(disk);
    return bad ? -1 : 0;
}

int tcache_save(TCache *c, char *err, size_t errlen)
{
    tc_msg(err, errlen, "%s", "");
    if (!c->path)
        return 0;
    lock(c);
    char *dir = strdup(c->path), *slash = dir ? strrchr(dir, '/') : NULL;
    if (slash)
        *slash = 0;
    int fd = -1, bad = !dir;
    if (bad)
        tc_msg(err, errlen, "out of memory");
    else if (slash && fs_mkdir_p(dir) < 0) {
        tc_msg(err, errlen, "cannot create %s: %s", dir, strerror(errno));
        bad = 1;
    }
    bad = bad || (fd = lock_file(c->lock, err, errlen)) < 0 || merge_and_write(c, err, errlen);
    if (fd >= 0) {
        flock(fd, LOCK_UN);
        close(fd);
    }
    free(dir);
    unlock(c);
    return bad ? -1 : 0;
}

/* Drops from `own` every entry (and best) that `disk` has. */
static void disown(json_t *own, const json_t *disk)
{
    const char *key, *config;
    json_t *dv, *v;
    json_object_foreach((json_t *)disk, key, dv) {
        json_t *ov = json_object_get(own, key), *oc = json_object_get(ov, "configs");
        json_object_foreach(json_object_get(dv, "configs"), config, v)
            json_object_del(oc, config);
        if (json_object_get(dv, "best"))
            json_object_del(ov, "best");
    }
}

int tcache_reload(TCache *c, char *warning, size_t warnlen)
{
    tc_msg(warning, warnlen, "%s", "");
    if (!c->path)
        return 0;
    json_t *disk = tj_read_keys(c->path, &c->meta, warning, warnlen, NULL);
    if (warning && warning[0] && strlen(warning) + 1 < warnlen) /* as tcache_open says it */
        tc_msg(warning + strlen(warning), warnlen - strlen(warning), " (ignored)");
    lock(c);
    if (disk)
        disown(c->own, disk);
    int bad = !disk || tj_merge(disk, c->own);
    if (!bad) {
        json_decref(c->all);
        c->all = json_incref(disk);
    }
    unlock(c);
    json_decref(disk);
    return bad ? -1 : 0;
}

/* ---- iteration ---- */
static int by_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The names of an object's members, sorted (malloc'd array of borrowed strings). */
static const char **sorted_names(const json_t *obj, size_t *n)
{
    const char **names = malloc(sizeof *names * (json_object_size(obj) + 1)), *k;
    json_t *v;
    *n = 0;
    json_object_foreach((json_t *)obj, k, v)
        if (names)
            names[(*n)++] = k;
    if (names)
        qsort(names, *n, sizeof *names, by_str);
    return names;
}

int tcache_each_key(const TCache *c, int (*fn)(void *ud, const char *key), void *ud)
{
    lock(c);
    size_t n;
    const char **names = sorted_names(c->all, &n);
    int r = names ? 0 : -1;
    for (size_t i = 0; i < n && !r; i++)
        r = fn(ud, names[i]);
    free(names);
    unlock(c);
    return r;
}

int tcache_nkeys(const TCache *c)
{
    lock(c);
    int n = (int)json_object_size(c->all);
    unlock(c);
    return n;
}

int tcache_each_result(const TCache *c, const char *key,
                       int (*fn)(void *ud, const char *config, const TResult *r), void *ud)
{
    lock(c);
    json_t *cfgs = configs_of(c->all, key);
    size_t n;
    const char **names = sorted_names(cfgs, &n);
    int r = names ? 0 : -1;
    for (size_t i = 0; i < n && !r; i++) {
        TResult res;
        tj_result_get(json_object_get(cfgs, names[i]), &res);
        r = fn(ud, names[i], &res);
    }
    free(names);
    unlock(c);
    return r;
}
