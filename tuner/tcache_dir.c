/* tcache_dir.c: where tuning files live and whole-directory operations: the default
 * directory, a file's name (BLAKE3 of its identity), listing, and the export / import
 * behind `tilec cache`. */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <llvm-c/blake3.h>
#include "tcache_int.h"

enum { HASH_BYTES = 16 };

/* ---- where ---- */
char *tcache_dir(const char *dir)
{
    const char *env = getenv("TILE_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME"), *base = dir, *tail = "/tuning";
    if (!base && env)
        base = *env ? env : NULL;
    else if (!base && xdg && *xdg)
        base = xdg, tail = "/tile/tuning";
    else if (!base && home && *home)
        base = home, tail = "/.cache/tile/tuning";
    if (!base || !*base)
        return NULL;
    size_t n = strlen(base) + strlen(tail) + 1;
    char *out = malloc(n);
    if (out)
        snprintf(out, n, "%s%s", base, tail);
    return out;
}

static void put_str(llvm_blake3_hasher *h, const char *s)
{
    uint64_t len = s ? strlen(s) : 0; /* length-prefixed: no two field lists hash alike */
    llvm_blake3_hasher_update(h, &len, sizeof len);
    llvm_blake3_hasher_update(h, s ? s : "", len);
}

char *tc_path_for(const char *tuningdir, const TCacheMeta *m)
{
    llvm_blake3_hasher h;
    uint8_t sum[HASH_BYTES];
    llvm_blake3_hasher_init(&h);
    put_str(&h, "tile tuning cache v1");
    const char *fields[6] = { m->kernel, m->source_hash, m->compiler_version, m->device,
                              m->arch, m->driver };
    for (int i = 0; i < 6; i++)
        put_str(&h, fields[i]);
    llvm_blake3_hasher_finalize(&h, sum, sizeof sum);
    size_t n = strlen(tuningdir) + 2 * HASH_BYTES + 8;
    char *path = malloc(n);
    if (!path)
        return NULL;
    int len = snprintf(path, n, "%s/", tuningdir);
    for (int i = 0; i < HASH_BYTES; i++)
        len += snprintf(path + len, n - (size_t)len, "%02x", sum[i]);
    snprintf(path + len, n - (size_t)len, ".json");
    return path;
}

/* ---- listing ---- */
static int by_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int is_tuning_name(const char *name)
{
    size_t n = strlen(name);
    return name[0] != '.' && n > 5 && !strcmp(name + n - 5, ".json");
}

char **tcache_list_files(const char *dir, int *n)
{
    char *tdir = tcache_dir(dir), **out = NULL;
    DIR *d = tdir ? opendir(tdir) : NULL;
    struct dirent *de;
    int cap = 0;
    *n = 0;
    while (d && (de = readdir(d)))
        if (is_tuning_name(de->d_name)) {
            char **grown = *n < cap ? out : realloc(out, sizeof *out * (size_t)(cap = 2 * cap + 8));
            size_t len = strlen(tdir) + strlen(de->d_name) + 2;
            char *p = grown ? malloc(len) : NULL;
            if (!p)
                break;
            out = grown;
            snprintf(p, len, "%s/%s", tdir, de->d_name);
            out[(*n)++] = p;
        }
    if (d)
        closedir(d);
    free(tdir);
    if (out)
        qsort(out, (size_t)*n, sizeof *out, by_str);
    return out;
}

void tcache_free_list(char **paths, int n)
{
    for (int i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
}

/* ---- export ---- */
/* The canonical document of one file, NULL when it is not a readable tuning file. */
static json_t *file_document(const char *path)
{
    int missing, dropped = 0;
    json_t *root = tj_load(path, &missing, NULL, 0), *doc = NULL;
    TCacheMeta m;
    if (root && tj_meta_of(root, &m) == 0) {
        json_t *keys = tj_clean_keys(json_object_get(root, "keys"), &dropped);
        doc = keys ? tj_document(&m, keys) : NULL;
        json_decref(keys);
    }
    json_decref(root);
    return doc;
}

int tcache_export(const char *dir, const char *dst, int *nfiles, char *err, size_t errlen)
{
    int n = 0, count = 0;
    char **paths = tcache_list_files(dir, &n);
    json_t *files = json_array(), *root = json_pack("{s:i, s:O}", "format", TC_FORMAT,
                                                   "files", files);
    int bad = !root;
    for (int i = 0; i < n && !bad; i++) {
        json_t *doc = file_document(paths[i]);
        count += doc != NULL;
        bad = doc && json_array_append_new(files, doc);
    }
    if (bad)
        tc_msg(err, errlen, "out of memory");
    else
        bad = tj_write_atomic(dst, root, err, errlen);
    if (nfiles)
        *nfiles = count;
    json_decref(files);
    json_decref(root);
    tcache_free_list(paths, n);
    return bad ? -1 : 0;
}

/* ---- import ---- */
/* The tuning documents of an import file (an export's "files", or one tuning file),
 * every one checked, as a new array. NULL with a message. */
static json_t *import_documents(const char *src, char *err, size_t errlen)
{
    int missing;
    json_t *root = tj_load(src, &missing, err, errlen), *files = json_object_get(root, "files");
    json_t *docs = json_is_array(files) ? json_incref(files) : root ? json_pack("[O]", root) : NULL;
    size_t i;
    json_t *doc;
    TCacheMeta m;
    json_array_foreach(docs, i, doc) {
        int dropped = 0;
        json_t *keys = tj_meta_of(doc, &m) == 0
                           ? tj_clean_keys(json_object_get(doc, "keys"), &dropped) : NULL;
        json_decref(keys);
        if (!keys || dropped) {
            tc_msg(err, errlen, "%s: document %zu is not a valid tuning file (%s)", src, i,
                   keys ? "malformed entries" : "format or identity fields missing");
            json_decref(docs);
            docs = NULL;
            break;
        }
    }
    json_decref(root);
    return docs;
}

int tcache_import(const char *dir, const char *src, int *nfiles, char *err, size_t errlen)
{
    char *tdir = tcache_dir(dir);
    json_t *docs = tdir ? import_documents(src, err, errlen) : NULL, *doc;
    size_t i;
    int bad = !docs, count = 0;
    TCacheMeta m;
    if (!tdir)
        tc_msg(err, errlen, "the tuning cache is turned off (TILE_CACHE_DIR is empty)");
    free(tdir);
    json_array_foreach(docs, i, doc) {
        tj_meta_of(doc, &m); /* checked by import_documents */
        TCache *c = tcache_open(dir, &m, NULL, 0);
        bad = !c || tc_merge_own(c, json_object_get(doc, "keys")) ||
              tcache_save(c, err, errlen);
        if (!c)
            tc_msg(err, errlen, "out of memory");
        tcache_close(c);
        if (bad)
            break;
        count++;
    }
    if (nfiles)
        *nfiles = count;
    json_decref(docs);
    return bad ? -1 : 0;
}
