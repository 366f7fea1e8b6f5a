/* diskcache.c: compiled code kept on disk across processes, so a second run skips the
 * compiler (and, on CUDA, the driver's PTX JIT). Files live in $TILE_CACHE_DIR/kernels
 * (default $XDG_CACHE_HOME/tile or ~/.cache/tile; TILE_CACHE_DIR= or TILE_NO_DISK_CACHE=1
 * turn it off), named by the BLAKE3 hash of everything that decides the code. Each file is a
 * header, the image and a checksum; writers go through a temp file and rename, and a file that
 * does not check out is ignored with a warning (then recompiled and replaced: it holds only
 * derived code). Readers open without blocking and read regular files only, so a FIFO in
 * place of a file cannot hang them; a file that cannot be saved is logged (once a process). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <llvm-c/blake3.h>
#include "build_id.h"
#include "runtime_internal.h"
#include "source_read.h"

static const char MAGIC[8] = { 'T', 'I', 'L', 'E', 'K', 'C', 2, 0 };
enum { HEXLEN = 64, SUMLEN = 32, MAX_NAME = 4096, MAX_FILE = 1 << 30 };

typedef struct FileHeader {
    char magic[8];
    char key[HEXLEN]; /* the file's own name: catches renamed or misplaced files */
    uint32_t num_threads, smem_bytes, nparams, symbol_len;
    uint64_t image_size;
    uint32_t debug_len, reserved; /* the debug sites' text (debug_abi.h), 0: none */
} FileHeader;

/* A problem that would repeat for every kernel (a read-only cache) is logged once. */
static atomic_int warned;

__attribute__((format(printf, 2, 3))) static void warn_once(tile_Context *ctx, const char *fmt,
                                                             ...)
{
    char msg[1024];
    va_list ap;
    if (!ctx || atomic_exchange(&warned, 1))
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    rt_log(ctx, "%s", msg);
}

/* ---- where ---- */
/* The cache's directory into dir (PATH_MAX bytes): 0; -1 when the cache is off
 * (TILE_NO_DISK_CACHE, TILE_CACHE_DIR=, no home); -2 when the directory, with room for a
 * file's name under it, is longer than PATH_MAX; *from names the variable it came from. */
static int cache_dir(char *dir, const char **from)
{
    const char *no = getenv("TILE_NO_DISK_CACHE"), *env = getenv("TILE_CACHE_DIR");
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int n;
    if (no && *no && strcmp(no, "0"))
        return -1;
    if (env)
        n = *env ? snprintf(dir, PATH_MAX, "%s", env) : -1, *from = "TILE_CACHE_DIR";
    else if (xdg && *xdg)
        n = snprintf(dir, PATH_MAX, "%s/tile", xdg), *from = "XDG_CACHE_HOME";
    else if (home && *home)
        n = snprintf(dir, PATH_MAX, "%s/.cache/tile", home), *from = "HOME";
    else
        return -1;
    return n < 0 ? -1 : n + 16 + HEXLEN < PATH_MAX ? 0 : -2;
}

/* ---- the key ---- */
static void put(llvm_blake3_hasher *h, const void *data, size_t n)
{
    uint64_t len = n; /* length-prefixed: no two field lists hash alike */
    llvm_blake3_hasher_update(h, &len, sizeof len);
    llvm_blake3_hasher_update(h, data, n);
}

static void put_str(llvm_blake3_hasher *h, const char *s) { put(h, s, strlen(s)); }

static int by_name(const void *a, const void *b)
{
    return strcmp(((const ConstBinding *)a)->name, ((const ConstBinding *)b)->name);
}

/* The texts of every file the module is built from, the main file first: editing an imported
 * file changes the key. Paths are left out: the code depends on the texts alone, and a module
 * loaded from another directory (or by the tuning worker) should find the same entries. */
static void put_sources(llvm_blake3_hasher *h, const tile_Module *mod)
{
    put(h, mod->file.text, mod->file.len);
    for (int i = 1; i < mod->ast->nfiles; i++)
        put(h, mod->ast->files[i]->text, mod->ast->files[i]->len);
}

static int key_hex(tile_Kernel *k, const ConstBinding *c, int n, const unsigned char *div,
                   const char *target, char *hex)
{
    ConstBinding *sorted = malloc(sizeof *sorted * (size_t)(n + 1));
    if (!sorted)
        return -1;
    memcpy(sorted, c, sizeof *sorted * (size_t)n);
    qsort(sorted, (size_t)n, sizeof *sorted, by_name);
    tile_Context *ctx = k->mod->ctx;
    llvm_blake3_hasher h;
    llvm_blake3_hasher_init(&h);
    put_str(&h, "tile kernel cache v2");
    put_sources(&h, k->mod);
    put_str(&h, k->func->name);
    for (int i = 0; i < n; i++) {
        put_str(&h, sorted[i].name);
        put(&h, &sorted[i].value, sizeof sorted[i].value);
    }
    put(&h, div ? (const void *)div : "", div ? (size_t)k->nparams : 0);
    put_str(&h, target);
    put_str(&h, TILE_COMPILER_VERSION);
    put_str(&h, TILE_BUILD_ID);
    put_str(&h, ctx->ops->cache_id(ctx->dev));
    free(sorted);
    uint8_t sum[HEXLEN / 2];
    llvm_blake3_hasher_finalize(&h, sum, sizeof sum);
    for (int i = 0; i < HEXLEN / 2; i++)
        snprintf(hex + 2 * i, 3, "%02x", sum[i]);
    return 0;
}

int rt_cache_path(tile_Kernel *k, const ConstBinding *c, int n, const unsigned char *div,
                  const char *target, char *path)
{
    char dir[PATH_MAX], hex[HEXLEN + 1];
    const char *from = "";
    int where = cache_dir(dir, &from);
    if (where == -2)
        warn_once(k->mod->ctx, "tile: the kernel cache's directory (from %s) is longer than "
                  "PATH_MAX (%d bytes): compiled code is not cached on disk", from, PATH_MAX);
    if (where < 0)
        return -1;
    strcat(dir, "/kernels");
    if (fs_mkdir_p(dir) < 0) {
        warn_once(k->mod->ctx, "tile: cannot create the kernel cache directory %s: %s (compiled "
                  "code is not saved)", dir, strerror(errno));
        return -1;
    }
    if (key_hex(k, c, n, div, target, hex) < 0)
        return -1;
    size_t len = strlen(dir); /* fits: checked above */
    memcpy(path, dir, len);
    path[len] = '/';
    memcpy(path + len + 1, hex, HEXLEN + 1);
    return 0;
}

/* ---- reading ---- */
static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* The whole file, or NULL (*missing: there is none). Regular files only, opened without
 * blocking. */
static uint8_t *slurp(const char *path, size_t *size, int *missing)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    *missing = fd < 0 && (errno == ENOENT || errno == ENOTDIR);
    if (fd < 0)
        return NULL;
    uint8_t *buf = NULL;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && st.st_size < MAX_FILE &&
        (buf = malloc((size_t)st.st_size))) {
        size_t got = 0;
        ssize_t r = 1;
        while (got < (size_t)st.st_size && (r = read(fd, buf + got, (size_t)st.st_size - got)) > 0)
            got += (size_t)r;
        if (got != (size_t)st.st_size) {
            free(buf);
            buf = NULL;
        }
        *size = got;
    }
    close(fd);
    return buf;
}

static int checksum_ok(const uint8_t *buf, size_t size)
{
    uint8_t sum[SUMLEN];
    llvm_blake3_hasher h;
    llvm_blake3_hasher_init(&h);
    llvm_blake3_hasher_update(&h, buf, size - SUMLEN);
    llvm_blake3_hasher_finalize(&h, sum, SUMLEN);
    return memcmp(sum, buf + size - SUMLEN, SUMLEN) == 0;
}

/* Header consistent with the file's name and size? */
static int header_ok(const FileHeader *fh, const char *path, size_t size)
{
    if (memcmp(fh->magic, MAGIC, sizeof MAGIC) || memcmp(fh->key, base_name(path), HEXLEN) ||
        fh->nparams > MAX_NAME || fh->symbol_len == 0 || fh->symbol_len > MAX_NAME ||
        fh->image_size > MAX_FILE || fh->debug_len > MAX_FILE)
        return 0;
    return sizeof *fh + fh->nparams + fh->symbol_len + fh->debug_len + fh->image_size + SUMLEN ==
           size;
}

static int entry_fill(CacheEntry *e, const FileHeader *fh, const uint8_t *p)
{
    *e = (CacheEntry){ .num_threads = (int)fh->num_threads, .smem_bytes = (int)fh->smem_bytes,
                       .nparams = (int)fh->nparams, .image_size = fh->image_size };
    e->elems = malloc(sizeof *e->elems * (fh->nparams + 1));
    e->symbol = malloc(fh->symbol_len + 1);
    e->image = malloc(fh->image_size + 1);
    e->debug_sites = fh->debug_len ? malloc(fh->debug_len + 1) : NULL;
    if (!e->elems || !e->symbol || !e->image || (fh->debug_len && !e->debug_sites))
        return -1;
    for (uint32_t i = 0; i < fh->nparams; i++) {
        if (p[i] > ET_PTR || p[i] == ET_VOID)
            return -1;
        e->elems[i] = (ElemKind)p[i];
    }
    p += fh->nparams;
    memcpy(e->symbol, p, fh->symbol_len);
    e->symbol[fh->symbol_len] = 0;
    p += fh->symbol_len;
    if (e->debug_sites) {
        memcpy(e->debug_sites, p, fh->debug_len);
        e->debug_sites[fh->debug_len] = 0;
        p += fh->debug_len;
    }
    memcpy(e->image, p, fh->image_size);
    ((char *)e->image)[fh->image_size] = 0; /* PTX images stay NUL-terminated */
    return strlen(e->symbol) == fh->symbol_len &&
           (!e->debug_sites || strlen(e->debug_sites) == fh->debug_len) ? 0 : -1;
}

int rt_cache_read(tile_Context *ctx, const char *path, CacheEntry *e)
{
    size_t size = 0;
    int missing = 0;
    memset(e, 0, sizeof *e);
    uint8_t *buf = slurp(path, &size, &missing);
    FileHeader fh;
    int ok = buf && size >= sizeof fh + SUMLEN && checksum_ok(buf, size);
    if (ok)
        memcpy(&fh, buf, sizeof fh);
    ok = ok && header_ok(&fh, path, size) && entry_fill(e, &fh, buf + sizeof fh) == 0;
    if (!ok)
        rt_cache_entry_free(e);
    if (!ok && !missing && ctx)
        rt_log(ctx, "tile: ignoring the damaged kernel cache file %s (recompiling)", path);
    free(buf);
    return ok ? 0 : -1;
}

void rt_cache_entry_free(CacheEntry *e)
{
    free(e->elems);
    free(e->symbol);
    free(e->image);
    free(e->debug_sites);
    memset(e, 0, sizeof *e);
}

/* ---- writing ---- */
static int write_all(int fd, const void *data, size_t n, llvm_blake3_hasher *h)
{
    if (h)
        llvm_blake3_hasher_update(h, data, n);
    return fd_write_all(fd, data, n);
}

static int write_entry(int fd, const char *path, const CacheEntry *e)
{
    FileHeader fh = { .num_threads = (uint32_t)e->num_threads,
                      .smem_bytes = (uint32_t)e->smem_bytes, .nparams = (uint32_t)e->nparams,
                      .symbol_len = (uint32_t)strlen(e->symbol), .image_size = e->image_size,
                      .debug_len = e->debug_sites ? (uint32_t)strlen(e->debug_sites) : 0 };
    memcpy(fh.magic, MAGIC, sizeof MAGIC);
    memcpy(fh.key, base_name(path), HEXLEN);
    uint8_t elems[MAX_NAME], sum[SUMLEN];
    if (e->nparams > MAX_NAME || fh.symbol_len > MAX_NAME)
        return -1;
    for (int i = 0; i < e->nparams; i++)
        elems[i] = (uint8_t)e->elems[i];
    llvm_blake3_hasher h;
    llvm_blake3_hasher_init(&h);
    if (write_all(fd, &fh, sizeof fh, &h) || write_all(fd, elems, fh.nparams, &h) ||
        write_all(fd, e->symbol, fh.symbol_len, &h) ||
        write_all(fd, e->debug_sites ? e->debug_sites : "", fh.debug_len, &h) ||
        write_all(fd, e->image, e->image_size, &h))
        return -1;
    llvm_blake3_hasher_finalize(&h, sum, SUMLEN);
    return write_all(fd, sum, SUMLEN, NULL);
}

int rt_cache_write(tile_Context *ctx, const char *path, const CacheEntry *e)
{
    static atomic_uint counter;
    char tmp[PATH_MAX + 64];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%u", path, (long)getpid(), atomic_fetch_add(&counter, 1));
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644), bad = fd < 0;
    if (fd >= 0) {
        bad = write_entry(fd, path, e);
        bad |= close(fd);
        if (!bad)
            bad = rename(tmp, path);
        if (bad)
            unlink(tmp);
    }
    if (bad)
        warn_once(ctx, "tile: cannot save compiled code to the kernel cache (%s: %s); further "
                  "failures are not reported", fd < 0 ? tmp : path, strerror(errno));
    return bad ? -1 : 0;
}
