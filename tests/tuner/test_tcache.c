/* test_tcache.c: unit tests of the persistent tuning cache: round trips through a file,
 * keeping results when the candidate list changes, corrupt files, concurrent writers
 * (processes and threads), import / export, and configuration strings. Everything lives
 * in a mkdtemp directory; the user's cache is never touched. */
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tcache.h"

static int passed, failed;
static char root[64];

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (cond) passed++;                                                    \
        else {                                                                 \
            failed++;                                                          \
            printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);             \
        }                                                                      \
    } while (0)

static const TCacheMeta META = { "flash_attention", "abc123", "0.1.0", "NVIDIA H200", "sm_90a",
                                 "13000" };

/* A fresh cache directory per test. */
static const char *new_dir(const char *name)
{
    static char dir[128];
    snprintf(dir, sizeof dir, "%s/%s", root, name);
    return dir;
}

static TResult ok_ms(double ms) { return (TResult){ TRES_OK, ms, 80.0, NULL }; }

static void write_text(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(data, 1, n, f);
        fclose(f);
    }
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf = calloc(1, 1 << 20);
    if (f && buf)
        buf[fread(buf, 1, (1 << 20) - 1, f)] = 0;
    if (f)
        fclose(f);
    return buf;
}

static int get_ms(TCache *c, const char *key, const char *cfg, double *ms)
{
    TResult r;
    int found = tcache_get(c, key, cfg, &r);
    *ms = found ? r.ms : -1;
    return found && r.status == TRES_OK;
}

static void test_round_trip(void)
{
    const char *dir = new_dir("rt");
    char warn[512], err[512];
    TCache *c = tcache_open(dir, &META, warn, sizeof warn);
    CHECK(c && warn[0] == 0 && tcache_nkeys(c) == 0);
    TResult r = ok_ms(0.1234), pr = { TRES_PRUNED, 0, 0, "needs 73728 bytes of shared memory" };
    TResult fl = { TRES_FAILED, 0, 12.5, "illegal address" }, unknown = ok_ms(0.2);
    r.local_bytes = 48, unknown.local_bytes = -1;
    CHECK(tcache_put(c, "seq=1024;", "BLOCK_M=128,BLOCK_N=64", &r) == 0);
    CHECK(tcache_put(c, "seq=1024;", "BLOCK_M=64,BLOCK_N=64", &unknown) == 0);
    CHECK(tcache_put(c, "seq=1024;", "BLOCK_M=256,BLOCK_N=64", &pr) == 0);
    CHECK(tcache_put(c, "seq=2048;", "BLOCK_M=64,BLOCK_N=64", &fl) == 0);
    CHECK(tcache_set_best(c, "seq=1024;", "BLOCK_M=128,BLOCK_N=64") == 0);
    CHECK(tcache_save(c, err, sizeof err) == 0);
    char *path = strdup(tcache_path(c));
    tcache_close(c);
    c = tcache_open(dir, &META, warn, sizeof warn);
    CHECK(c && warn[0] == 0 && !strcmp(tcache_path(c), path) && tcache_nkeys(c) == 2);
    TResult got;
    CHECK(tcache_get(c, "seq=1024;", "BLOCK_M=128,BLOCK_N=64", &got) == 1 &&
          got.status == TRES_OK && fabs(got.ms - 0.1234) < 1e-9 && got.compile_ms == 80.0 &&
          got.local_bytes == 48);
    CHECK(tcache_get(c, "seq=1024;", "BLOCK_M=64,BLOCK_N=64", &got) == 1 && got.local_bytes == -1);
    CHECK(tcache_get(c, "seq=1024;", "BLOCK_M=256,BLOCK_N=64", &got) == 1 &&
          got.status == TRES_PRUNED && got.reason && strstr(got.reason, "73728") &&
          got.local_bytes == -1);
    CHECK(tcache_get(c, "seq=2048;", "BLOCK_M=64,BLOCK_N=64", &got) == 1 &&
          got.status == TRES_FAILED && got.compile_ms == 12.5);
    CHECK(tcache_get(c, "seq=4096;", "BLOCK_M=64,BLOCK_N=64", &got) == 0);
    const char *best = tcache_best(c, "seq=1024;");
    CHECK(best && !strcmp(best, "BLOCK_M=128,BLOCK_N=64"));
    CHECK(tcache_best(c, "seq=2048;") == NULL);
    CHECK(tcache_put(c, "k", "A=1", &(TResult){ TRES_OK, NAN, 0, NULL }) == -1);
    tcache_close(c);
    /* another identity: another file, nothing shared */
    TCacheMeta other = META;
    other.device = "NVIDIA H100";
    c = tcache_open(dir, &other, warn, sizeof warn);
    CHECK(c && strcmp(tcache_path(c), path) && tcache_nkeys(c) == 0);
    tcache_close(c);
    char *text = read_text(path);
    CHECK(text && strstr(text, "\"format\": 1") &&
          strstr(text, "\"kernel\": \"flash_attention\"") &&
          strstr(text, "\"ms\": 0.1234") && strstr(text, "\n  \"keys\": {"));
    free(text);
    free(path);
}

/* Editing the candidate list: old results stay, only new configs are missing. */
static void test_edit_candidates(void)
{
    const char *dir = new_dir("edit");
    char err[256];
    TCache *c = tcache_open(dir, &META, NULL, 0);
    for (int bm = 16; bm <= 64; bm *= 2) {
        char cfg[64];
        snprintf(cfg, sizeof cfg, "BLOCK_M=%d", bm);
        tcache_put(c, "n=1;", cfg, &(TResult){ TRES_OK, bm / 10.0, 80.0, NULL });
    }
    CHECK(tcache_save(c, err, sizeof err) == 0);
    tcache_close(c);
    c = tcache_open(dir, &META, NULL, 0);
    double ms;
    CHECK(get_ms(c, "n=1;", "BLOCK_M=32", &ms) && ms == 3.2);
    CHECK(!get_ms(c, "n=1;", "BLOCK_M=128", &ms));
    tcache_put(c, "n=1;", "BLOCK_M=128", &(TResult){ TRES_OK, 1.0, 80.0, NULL });
    CHECK(tcache_save(c, err, sizeof err) == 0);
    tcache_close(c);
    c = tcache_open(dir, &META, NULL, 0);
    CHECK(get_ms(c, "n=1;", "BLOCK_M=16", &ms) && get_ms(c, "n=1;", "BLOCK_M=128", &ms));
    tcache_close(c);
}

/* The file a damaged tuning file was moved to holds exactly its bytes (then removed). */
static int kept_aside(const char *path, const void *data, size_t n)
{
    char aside[600];
    snprintf(aside, sizeof aside, "%s.damaged-1", path);
    FILE *f = fopen(aside, "rb");
    static char buf[1 << 16];
    size_t got = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f)
        fclose(f);
    unlink(aside);
    return n == 0 ? f == NULL : f && got == n && memcmp(buf, data, n) == 0;
}

/* A corrupt file: a warning, an empty cache, and the next save moves it aside (never
 * overwrites it) and writes a new one. For random bytes (expect_warning 0) a warning is
 * optional: an empty file counts as no file. */
static void check_corrupt(const char *dir, const void *data, size_t n, int expect_warning)
{
    char warn[512], err[256];
    TCache *c = tcache_open(dir, &META, NULL, 0);
    char *path = strdup(tcache_path(c));
    tcache_save(c, err, sizeof err); /* creates the directory */
    tcache_close(c);
    write_text(path, data, n);
    c = tcache_open(dir, &META, warn, sizeof warn);
    CHECK(c && tcache_nkeys(c) == 0);
    expect_warning &= n > 0; /* an empty file holds nothing: it reads as no file */
    CHECK(!expect_warning || warn[0]);
    if (!c || (expect_warning && !warn[0]))
        printf("  on content %.40s\n", (const char *)data);
    tcache_put(c, "k;", "A=1", &(TResult){ TRES_OK, 2.0, 80.0, NULL });
    CHECK(tcache_save(c, err, sizeof err) == 0);
    CHECK(n == 0 || strstr(err, "moved to"));
    CHECK(kept_aside(path, data, n));
    tcache_close(c);
    c = tcache_open(dir, &META, warn, sizeof warn);
    double ms;
    CHECK(c && warn[0] == 0 && get_ms(c, "k;", "A=1", &ms) && ms == 2.0);
    tcache_close(c);
    free(path);
}

static void test_corrupt(void)
{
    const char *dir = new_dir("corrupt");
    static const char *const bad[] = {
        "", "{", "{\"format\": 1, \"kernel\": \"flash_att", "[1, 2, 3]", "null", "42",
        "{\"format\": 2, \"kernel\": \"flash_attention\"}",
        "{\"format\": \"1\"}",
        "{\"format\": 1, \"kernel\": \"other\", \"source_hash\": \"abc123\", \"compiler_version\": "
        "\"0.1.0\", \"device\": \"NVIDIA H200\", \"arch\": \"sm_90a\", \"driver\": \"13000\", "
        "\"keys\": {\"k;\": {\"configs\": {\"A=9\": {\"status\": \"ok\", \"ms\": 1}}}}}",
        "{\"format\": 1, \"kernel\": \"flash_attention\", \"source_hash\": \"abc123\", "
        "\"compiler_version\": \"0.1.0\", \"device\": \"NVIDIA H200\", \"arch\": \"sm_90a\", "
        "\"driver\": \"13000\", \"keys\": {\"k;\": {\"best\": 7, \"configs\": {\"A=9\": "
        "{\"status\": \"ok\", \"ms\": \"fast\"}, \"A=8\": {\"status\": \"weird\"}, \"A=7\": []}}}}",
        "{\"format\": 1, \"kernel\": \"flash_attention\", \"source_hash\": \"abc123\", "
        "\"compiler_version\": \"0.1.0\", \"device\": \"NVIDIA H200\", \"arch\": \"sm_90a\", "
        "\"driver\": \"13000\", \"keys\": [1]}",
        "\x00\x01\x02garbage\xff\xfe",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        check_corrupt(dir, bad[i], i + 1 == sizeof bad / sizeof bad[0] ? 12 : strlen(bad[i]), 1);
    /* random bytes, and a valid file cut at every length */
    srand(7);
    for (int t = 0; t < 50; t++) {
        char buf[256];
        for (size_t i = 0; i < sizeof buf; i++)
            buf[i] = (char)(t % 2 ? rand() : "{}[]\":,0123456789.-e truefalsnul\\"[rand() % 33]);
        check_corrupt(dir, buf, (size_t)(rand() % 256), 0);
    }
    TCache *c = tcache_open(dir, &META, NULL, 0);
    char *text = read_text(tcache_path(c));
    size_t len = strlen(text);
    for (size_t cut = 0; cut + 2 < len; cut += 7)
        check_corrupt(dir, text, cut, 1);
    tcache_close(c);
    free(text);
}

/* The warning for malformed entries says once what becomes of them, in the right number:
 * it read "has 1 malformed entries (ignored) (ignored; kept when results are saved)". */
static void check_malformed(const char *dir, const char *configs, const char *want)
{
    char warn[512], err[256], text[1024];
    TCache *c = tcache_open(dir, &META, NULL, 0);
    char *path = strdup(tcache_path(c));
    tcache_save(c, err, sizeof err); /* creates the directory */
    tcache_close(c);
    snprintf(text, sizeof text, "{\"format\": 1, \"kernel\": \"flash_attention\", \"source_hash\": "
             "\"abc123\", \"compiler_version\": \"0.1.0\", \"device\": \"NVIDIA H200\", "
             "\"arch\": \"sm_90a\", \"driver\": \"13000\", \"keys\": {\"k;\": {\"configs\": "
             "{\"A=1\": {\"status\": \"ok\", \"ms\": 1}%s}}}}", configs);
    write_text(path, text, strlen(text));
    c = tcache_open(dir, &META, warn, sizeof warn);
    CHECK(c && tcache_nkeys(c) == 1);
    CHECK(strstr(warn, want) && strlen(strstr(warn, want)) == strlen(want));
    if (!strstr(warn, want))
        printf("  got '%s'\n", warn);
    tcache_close(c);
    unlink(path);
    free(path);
}

static void test_malformed_wording(void)
{
    const char *dir = new_dir("malformed");
    check_malformed(dir, ", \"A=2\": {\"status\": \"weird\"}",
                    " has 1 malformed entry (ignored; kept when results are saved)");
    check_malformed(dir, ", \"A=2\": {\"status\": \"weird\"}, \"A=3\": []",
                    " has 2 malformed entries (ignored; kept when results are saved)");
}

/* ---- concurrency ---- */
enum { WRITERS = 4, ROUNDS = 5, PER_ROUND = 6 };

static void writer(const char *dir, int w)
{
    char err[256], cfg[64];
    for (int r = 0; r < ROUNDS; r++) {
        TCache *c = tcache_open(dir, &META, NULL, 0);
        for (int i = 0; i < PER_ROUND; i++) {
            snprintf(cfg, sizeof cfg, "W=%d,R=%d,I=%d", w, r, i);
            double ms = w + r * 0.01 + i * 0.0001;
            tcache_put(c, "shared;", cfg, &(TResult){ TRES_OK, ms, 80.0, NULL });
        }
        if (tcache_save(c, err, sizeof err) != 0)
            printf("  writer %d: %s\n", w, err);
        tcache_close(c);
    }
}

static int count_results(void *ud, const char *config, const TResult *r)
{
    ++*(int *)ud;
    return 0;
}

static void test_processes(void)
{
    const char *dir = new_dir("procs");
    pid_t pids[WRITERS];
    for (int w = 0; w < WRITERS; w++)
        if ((pids[w] = fork()) == 0) {
            writer(dir, w);
            _exit(0);
        }
    int all_ok = 1;
    for (int w = 0; w < WRITERS; w++) {
        int st = 1;
        waitpid(pids[w], &st, 0);
        all_ok &= WIFEXITED(st) && WEXITSTATUS(st) == 0;
    }
    CHECK(all_ok);
    char warn[512];
    TCache *c = tcache_open(dir, &META, warn, sizeof warn);
    int n = 0;
    tcache_each_result(c, "shared;", count_results, &n);
    CHECK(warn[0] == 0 && n == WRITERS * ROUNDS * PER_ROUND);
    tcache_close(c);
}

typedef struct ThreadArg {
    TCache *shared;
    const char *dir;
    int id;
} ThreadArg;

static void *thread_main(void *p)
{
    ThreadArg *a = p;
    char err[256], cfg[64];
    for (int i = 0; i < 20; i++) {
        snprintf(cfg, sizeof cfg, "T=%d,I=%d", a->id, i);
        TCache *own = i % 2 ? tcache_open(a->dir, &META, NULL, 0) : NULL;
        TResult r = { TRES_OK, i + 1.0, 80.0, NULL };
        tcache_put(own ? own : a->shared, "threads;", cfg, &r);
        tcache_save(own ? own : a->shared, err, sizeof err);
        tcache_close(own);
    }
    return NULL;
}

static void test_threads(void)
{
    ThreadArg args[4];
    pthread_t th[4];
    const char *dir = new_dir("threads");
    TCache *shared = tcache_open(dir, &META, NULL, 0);
    for (int i = 0; i < 4; i++) {
        args[i] = (ThreadArg){ shared, dir, i };
        pthread_create(&th[i], NULL, thread_main, &args[i]);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    tcache_close(shared);
    TCache *c = tcache_open(dir, &META, NULL, 0);
    int n = 0;
    tcache_each_result(c, "threads;", count_results, &n);
    CHECK(n == 80);
    tcache_close(c);
}

/* ---- import / export ---- */
static void test_import_export(void)
{
    char src_dir[128], dst_dir[128], out[160], err[512];
    snprintf(src_dir, sizeof src_dir, "%s", new_dir("export_src"));
    snprintf(dst_dir, sizeof dst_dir, "%s", new_dir("export_dst"));
    snprintf(out, sizeof out, "%s/all.json", root);
    TCacheMeta other = META;
    other.kernel = "matmul";
    TCache *a = tcache_open(src_dir, &META, NULL, 0), *b = tcache_open(src_dir, &other, NULL, 0);
    tcache_put(a, "k;", "A=1", &(TResult){ TRES_OK, 1.0, 80.0, NULL });
    tcache_put(a, "k;", "A=2", &(TResult){ TRES_OK, 2.0, 80.0, NULL });
    tcache_set_best(a, "k;", "A=1");
    tcache_put(b, "m;", "B=1", &(TResult){ TRES_OK, 5.0, 80.0, NULL });
    CHECK(tcache_save(a, err, sizeof err) == 0 && tcache_save(b, err, sizeof err) == 0);
    tcache_close(a);
    tcache_close(b);
    /* the destination already knows A=2 (slower there), A=3 and another best */
    TCache *d = tcache_open(dst_dir, &META, NULL, 0);
    tcache_put(d, "k;", "A=2", &(TResult){ TRES_OK, 9.0, 80.0, NULL });
    tcache_put(d, "k;", "A=3", &(TResult){ TRES_OK, 3.0, 80.0, NULL });
    tcache_put(d, "j;", "A=3", &(TResult){ TRES_OK, 3.0, 80.0, NULL });
    tcache_set_best(d, "k;", "A=3");
    CHECK(tcache_save(d, err, sizeof err) == 0);
    tcache_close(d);
    int n = -1;
    CHECK(tcache_export(src_dir, out, &n, err, sizeof err) == 0 && n == 2);
    CHECK(tcache_import(dst_dir, out, &n, err, sizeof err) == 0 && n == 2);
    d = tcache_open(dst_dir, &META, NULL, 0);
    double ms;
    CHECK(get_ms(d, "k;", "A=1", &ms) && ms == 1.0);
    CHECK(get_ms(d, "k;", "A=2", &ms) && ms == 2.0); /* imported wins */
    CHECK(get_ms(d, "k;", "A=3", &ms) && ms == 3.0); /* existing kept */
    CHECK(get_ms(d, "j;", "A=3", &ms));
    CHECK(tcache_best(d, "k;") && !strcmp(tcache_best(d, "k;"), "A=1"));
    tcache_close(d);
    d = tcache_open(dst_dir, &other, NULL, 0);
    CHECK(get_ms(d, "m;", "B=1", &ms) && ms == 5.0);
    tcache_close(d);
    /* a single tuning file imports too; an invalid one writes nothing */
    int files = 0;
    char **paths = tcache_list_files(src_dir, &files);
    CHECK(files == 2 && tcache_import(new_dir("single"), paths[0], &n, err, sizeof err) == 0 &&
          n == 1);
    tcache_free_list(paths, files);
    write_text(out, "{\"format\": 1, \"files\": [{\"format\": 1}]}", 40);
    CHECK(tcache_import(new_dir("bad_import"), out, &n, err, sizeof err) == -1 && n == 0 && err[0]);
    paths = tcache_list_files(new_dir("bad_import"), &files);
    CHECK(files == 0);
    tcache_free_list(paths, files);
    CHECK(tcache_import(dst_dir, "/nonexistent/x.json", NULL, err, sizeof err) == -1);
}

/* ---- configuration strings ---- */
static void test_config_strings(void)
{
    const char *names[] = { "BLOCK_M", "BLOCK_N", "num_warps" }, *got[4];
    long long vals[] = { 128, -64, 8 }, back[4];
    char *s = tcache_config_string(names, vals, 3), *store = NULL;
    CHECK(s && !strcmp(s, "BLOCK_M=128,BLOCK_N=-64,num_warps=8"));
    CHECK(tcache_config_parse(s, got, back, 4, &store) == 3 && !strcmp(got[2], "num_warps") &&
          back[0] == 128 && back[1] == -64 && back[2] == 8);
    free(store);
    CHECK(tcache_config_parse(s, got, back, 2, &store) == -1 && store == NULL);
    free(s);
    s = tcache_config_string(names, vals, 0);
    CHECK(s && !strcmp(s, "") && tcache_config_parse(s, got, back, 4, &store) == 0);
    free(store);
    free(s);
    static const char *const bad[] = { "A=", "=1", "A=1,", ",A=1", "A=1,,B=2", "A=x", "A 1",
                                       "1A=2", "A=1 ", "A= 1", "A=+1", "A=0x10",
                                       "A=99999999999999999999", "A-B=1", "A=1=2", "A" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int n = tcache_config_parse(bad[i], got, back, 4, &store);
        CHECK(n == -1 && store == NULL);
        if (n != -1)
            printf("  accepted '%s'\n", bad[i]);
        free(store);
    }
}

static void test_dir(void)
{
    char *d = tcache_dir("/x/y");
    CHECK(d && !strcmp(d, "/x/y/tuning"));
    free(d);
    setenv("TILE_CACHE_DIR", "", 1);
    CHECK(tcache_dir(NULL) == NULL);
    TCache *c = tcache_open(NULL, &META, NULL, 0); /* memory only */
    char err[64];
    CHECK(c && tcache_path(c) == NULL && tcache_save(c, err, sizeof err) == 0);
    tcache_close(c);
    setenv("TILE_CACHE_DIR", root, 1);
    d = tcache_dir(NULL);
    CHECK(d && !strncmp(d, root, strlen(root)));
    free(d);
}

int main(void)
{
    snprintf(root, sizeof root, "%s", "/tmp/tile-tcache-XXXXXX");
    if (!mkdtemp(root)) {
        perror("mkdtemp");
        return 1;
    }
    setenv("TILE_CACHE_DIR", root, 1); /* nothing may reach the user's cache */
    test_round_trip();
    test_edit_candidates();
    test_corrupt();
    test_malformed_wording();
    test_processes();
    test_threads();
    test_import_export();
    test_config_strings();
    test_dir();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (failed == 0 && system(cmd) != 0)
        printf("note: could not remove %s\n", root);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
