/* tcache.h: the persistent tuning cache. One human-readable JSON file per (kernel source
 * hash, kernel name, compiler version, device name, architecture, driver version) under
 * $TILE_CACHE_DIR/tuning/ (default ~/.cache/tile/tuning). For every tuning key it keeps
 * every configuration's result (so editing the candidate list re-times only new ones) and
 * the chosen best. Writes are atomic and merge with concurrent writers; a corrupt or
 * truncated file gives a warning and is treated as empty (then rewritten), never a crash. */
#ifndef TILE_TCACHE_H
#define TILE_TCACHE_H
#include <stddef.h>

typedef struct TCacheMeta {
    const char *kernel;           /* kernel name */
    const char *source_hash;      /* hex hash of the module's source text */
    const char *compiler_version; /* TILE_COMPILER_VERSION */
    const char *device;           /* e.g. "NVIDIA H200" or "host CPU (znver5, 2 threads)" */
    const char *arch;             /* "sm_90a", "host" */
    const char *driver;           /* CUDA driver version, "" on the host */
} TCacheMeta;

typedef enum { TRES_OK, TRES_FAILED, TRES_PRUNED } TResStatus;

typedef struct TResult {
    TResStatus status;
    double ms;           /* median time of one launch (TRES_OK) */
    double compile_ms;   /* time spent compiling this configuration */
    const char *reason;  /* why it failed or was pruned (may be NULL); copied by tcache */
    int local_bytes;     /* local memory per thread of its code, bytes; -1 not known */
} TResult;

typedef struct TCache TCache;

/* Opens (loads) the cache file for `meta` under `dir`/tuning (dir NULL: $TILE_CACHE_DIR,
 * else $XDG_CACHE_HOME/tile, else ~/.cache/tile; TILE_CACHE_DIR set but empty: a cache kept
 * in memory only, whose save does nothing). Never fails for a missing or corrupt file:
 * *warning (may be NULL) receives a message for a corrupt one, else "". NULL only when out
 * of memory. The meta strings are copied. Thread-safe (a mutex inside). */
TCache *tcache_open(const char *dir, const TCacheMeta *meta, char *warning, size_t warnlen);
void tcache_close(TCache *c);
const char *tcache_path(const TCache *c); /* NULL for a memory-only cache */

/* `key` is a tuning key from space_key ("n=4096;D=128;"); `config` a canonical
 * configuration string from tcache_config_string. */
/* 1 found, 0 not */
int tcache_get(const TCache *c, const char *key, const char *config, TResult *out);
/* The chosen configuration of a key (NULL if none). This string and out->reason of
 * tcache_get stay valid until the cache changes (put, set_best, save). */
const char *tcache_best(const TCache *c, const char *key);
/* 0 ok, -1 when out of memory or for a non-finite time */
int tcache_put(TCache *c, const char *key, const char *config, const TResult *r);
int tcache_set_best(TCache *c, const char *key, const char *config); /* 0 ok, -1 oom */
/* Writes the file atomically (flock on <hash>.lock beside it, re-read, merge, temp file,
 * fsync, rename), merging what other processes wrote since it was loaded: their entries
 * are kept unless this process put the same key+config, and this process's best wins for
 * the keys it set. Afterwards the cache also holds the other writers' entries. A file on disk
 * that cannot be read as this cache's (unreadable, not a regular file, corrupt, malformed
 * entries) is never overwritten: it is moved aside to "<file>.damaged-N" (its valid entries
 * kept in the new file), or, when it cannot be moved, nothing is saved. 0 ok, with err ""
 * or a note to report (a file moved aside); -1 with a message in err. */
int tcache_save(TCache *c, char *err, size_t errlen);
/* Re-reads the file (another process, e.g. a tuning worker, saved results): its entries
 * replace this process's for the same key+config (and best), which are no longer its own.
 * Nothing happens for a memory-only cache. 0 ok, -1 when out of memory. */
int tcache_reload(TCache *c, char *warning, size_t warnlen);

/* "BLOCK_M=64,BLOCK_N=32,num_warps=4" from names/values in the given order (malloc'd). */
char *tcache_config_string(const char *const *names, const long long *values, int n);
/* Parses a configuration string back; returns the count or -1 when malformed (a name that is
 * not an identifier, a value that is not a decimal integer in range, an empty item, more
 * than `max` items). "" has 0 items. Names point into a malloc'd copy returned in *storage
 * (free it; NULL on error). */
int tcache_config_parse(const char *config, const char **names, long long *values, int max,
                        char **storage);

/* ---- for `tilec cache` ---- */
/* The directory of tuning files, "<dir>/tuning" (dir NULL: the default above); malloc'd,
 * NULL when the cache is turned off (TILE_CACHE_DIR empty) or no home is known. */
char *tcache_dir(const char *dir);
/* The tuning files (*.json) under tcache_dir(dir), sorted, as a malloc'd array of malloc'd
 * paths (free with tcache_free_list); *n receives the count. NULL with *n = 0 when the
 * directory does not exist or cannot be read. */
char **tcache_list_files(const char *dir, int *n);
void tcache_free_list(char **paths, int n);
/* Loads one file without knowing its identity. NULL (message in warning) when it cannot
 * be read or is not a tuning file; entries of wrong shape are dropped with a warning. */
TCache *tcache_load_file(const char *path, char *warning, size_t warnlen);
const TCacheMeta *tcache_meta(const TCache *c);
/* Calls fn for every key, in sorted order; stops at and returns fn's first nonzero result. */
int tcache_each_key(const TCache *c, int (*fn)(void *ud, const char *key), void *ud);
int tcache_nkeys(const TCache *c);
/* Calls fn for every configuration of a key, in sorted order (same stopping rule). */
int tcache_each_result(const TCache *c, const char *key,
                       int (*fn)(void *ud, const char *config, const TResult *r), void *ud);
/* Merges every entry of the JSON file `src` (an export, or one tuning file) into the cache
 * directory, creating or updating the matching cache files: entries are unioned, and for
 * the same key+config the imported one wins. Nothing is written when `src` is invalid.
 * *nfiles (may be NULL) receives how many cache files were updated. 0 ok, -1 with a message. */
int tcache_import(const char *dir, const char *src, int *nfiles, char *err, size_t errlen);
/* Writes all cache files of the directory as one JSON document to `dst`:
 * {"format": 1, "files": [<tuning file>, ...]}; unreadable files are skipped. */
int tcache_export(const char *dir, const char *dst, int *nfiles, char *err, size_t errlen);

#endif
