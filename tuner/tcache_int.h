/* tcache_int.h: what the tuning cache's files share (internal to tuner/tcache*.c): the
 * JSON shape of one tuning file (tcache_json.c), where files live (tcache_dir.c), and the
 * in-memory cache's merge hook (tcache.c). Every "keys" object here is in canonical shape:
 * {key: {"best": str?, "configs": {config: {"status", "ms"?, "compile_ms"?, "reason"?}}}}. */
#ifndef TILE_TCACHE_INT_H
#define TILE_TCACHE_INT_H
#include <jansson.h>
#include "tcache.h"

enum { TC_FORMAT = 1 };

/* snprintf into a message buffer that may be NULL. */
void tc_msg(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- tcache_json.c ---- */
/* Parses a whole file; NULL with a message (*missing = 1 when it does not exist). */
json_t *tj_load(const char *path, int *missing, char *msg, size_t n);
/* The identity of a tuning document (format 1 and six strings, borrowed). 0 ok, -1. */
int tj_meta_of(const json_t *root, TCacheMeta *out);
int tj_meta_equal(const TCacheMeta *a, const TCacheMeta *b);
/* A canonical copy of a "keys" value; entries of wrong shape are dropped and counted. */
json_t *tj_clean_keys(const json_t *keys, int *dropped);
/* The keys of the file at `path` if it belongs to `meta`; an empty object for a missing
 * (or empty) file. For a damaged one (unreadable, not a regular file, invalid JSON, another
 * identity, malformed entries) the keys it still has, a warning, and *damaged = 1 (damaged
 * may be NULL). NULL only when out of memory. */
json_t *tj_read_keys(const char *path, const TCacheMeta *meta, char *warn, size_t n,
                     int *damaged);
/* Copies every entry of `from` into `into`; same key+config and `best`: from wins. */
int tj_merge(json_t *into, const json_t *from);
/* A new document {"format", meta..., "keys"} (keys borrowed: a reference is taken). */
json_t *tj_document(const TCacheMeta *meta, json_t *keys);
/* Writes a document through a temp file, fsync and rename ("-": standard output; a device
 * or a FIFO is written in place). */
int tj_write_atomic(const char *path, const json_t *root, char *err, size_t n);
json_t *tj_result_new(const TResult *r);
void tj_result_get(const json_t *entry, TResult *out);

/* ---- tcache_dir.c ---- */
/* "<tuningdir>/<hash of meta>.json" (malloc'd). */
char *tc_path_for(const char *tuningdir, const TCacheMeta *meta);

/* ---- tcache.c ---- */
/* Merges `keys` into the cache as this process's own entries (import). */
int tc_merge_own(TCache *c, const json_t *keys);

#endif
