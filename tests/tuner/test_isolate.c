/* test_isolate.c: tuning in worker processes (tuner/tune_isolate.c). A kernel whose BLOCK=32
 * configuration stores through a wild pointer (64 TiB past `out`: a segfault on the host, an
 * illegal address on a GPU) is tuned with isolation on: tuning finishes, BLOCK=32 is recorded
 * as failed with the fault, another configuration wins, this process and its buffers are
 * untouched, and a launch after tuning is right. Without a usable worker: a logged fallback.
 * The *_inputs tests check that the worker gets the caller's inputs intact (shared device to
 * device on CUDA, through the job file on the CPU or when sharing fails). silent_worker: fake
 * workers that hang outside any configuration are killed after TILE_TUNE_WORKER_TIMEOUT.
 * `test_isolate NAME` runs one test (the gpu_* ones exit 77 without CUDA). TILE_TUNE_WORKER
 * names tilec (set by CTest). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tune.h"

#include "../testing.h"
#include "../tmpdir.h"

enum { N = 1000, SKIP = 77 };
static const int64_t FAR = 1ll << 44; /* elements: 64 TiB, past any mapping */

/* out[i] = 2 * x[i], except that BLOCK=32 (only) stores FAR elements away. */
static const char *WILD =
    "@grid(cdiv(n, BLOCK))\n"
    "@tune(BLOCK = [16, 32, 64])\n"
    "kernel wild(x: *f32, out: *f32, n: i32, far: i64, const BLOCK: i32 = 16) {\n"
    "    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
    "    store(out + (BLOCK / 32) % 2 * far + offs, load(x + offs, mask=offs < n) * 2.0,\n"
    "          mask=offs < n);\n"
    "}\n";

/* The same, except that BLOCK=32 spins forever (x[0] >= 0 never changes). */
static const char *HANG =
    "@grid(cdiv(n, BLOCK))\n"
    "@tune(BLOCK = [16, 32, 64])\n"
    "kernel wild(x: *f32, out: *f32, n: i32, far: i64, const BLOCK: i32 = 16) {\n"
    "    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
    "    let spins = 0;\n"
    "    if BLOCK == 32 {\n"
    "        while load(x) >= 0.0 { spins += 1; }\n"
    "    }\n"
    "    store(out + offs, load(x + offs, mask=offs < n) * 2.0 + spins as f32, mask=offs < n);\n"
    "}\n";

/* x[i] * 2, except that an element not equal to its index (an input that did not reach the
 * worker intact) sends its store FAR away: every configuration faults then. */
static const char *PROBE =
    "@grid(cdiv(n, BLOCK))\n"
    "@tune(BLOCK = [16, 32, 64])\n"
    "kernel wild(x: *f32, out: *f32, n: i32, far: i64, const BLOCK: i32 = 16) {\n"
    "    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
    "    let v = load(x + offs, mask=offs < n);\n"
    "    store(out + where(v != offs as f32, far, 0) + offs, v * 2.0, mask=offs < n);\n"
    "}\n";

typedef struct Fixture {
    tile_Context *ctx;
    tile_Kernel *k;
    tile_DevPtr x, out;
    tile_Arg args[4];
    char log[8192];
} Fixture;

static void on_log(void *user, const char *msg)
{
    Fixture *f = user;
    size_t n = strlen(f->log);
    snprintf(f->log + n, sizeof f->log - n, "%s\n", msg);
}

/* Opens `backend` (SKIP when it has no device), loads WILD, x = 0..N-1, out = -1. */
static int open_src(Fixture *f, tile_Backend backend, const char *src)
{
    tile_Module *mod;
    memset(f, 0, sizeof *f);
    if (tile_context_open(backend, &f->ctx) != TILE_OK) {
        printf("skipped: %s\n", tile_error(NULL));
        return SKIP;
    }
    tile_set_log(f->ctx, on_log, f);
    OK(f->ctx, tile_module_load_string(f->ctx, "wild.tile", src, &mod));
    OK(f->ctx, tile_kernel_get(mod, "wild", &f->k));
    float x[N], out[N];
    for (int i = 0; i < N; i++)
        x[i] = (float)i, out[i] = -1;
    OK(f->ctx, tile_malloc(f->ctx, sizeof x, &f->x));
    OK(f->ctx, tile_malloc(f->ctx, sizeof x, &f->out));
    OK(f->ctx, tile_copy_to_device(f->ctx, f->x, x, sizeof x));
    OK(f->ctx, tile_copy_to_device(f->ctx, f->out, out, sizeof out));
    f->args[0] = tile_ptr(f->x), f->args[1] = tile_ptr(f->out);
    f->args[2] = tile_i32(N), f->args[3] = tile_i64(FAR);
    return 0;
}

static int open_fx(Fixture *f, tile_Backend backend) { return open_src(f, backend, WILD); }

/* out[i] == factor * i + add for all i (reads through the caller's context). */
static int out_is(Fixture *f, float factor, float add)
{
    float out[N];
    if (tile_copy_to_host(f->ctx, out, f->out, sizeof out) != TILE_OK) {
        fprintf(stderr, "copy back: %s\n", tile_error(f->ctx));
        return 0;
    }
    for (int i = 0; i < N; i++)
        if (out[i] != factor * (float)i + add) {
            fprintf(stderr, "out[%d] = %g, expected %g\n", i, out[i], factor * (float)i + add);
            return 0;
        }
    return 1;
}

static const tile_TuneResult *result_of(const tile_TuneReport *rep, const char *config)
{
    for (int i = 0; i < rep->nresults; i++)
        if (!strcmp(rep->results[i].config, config))
            return &rep->results[i];
    return NULL;
}

static int tune_bad(Fixture *f, const char *kind, const char *fault_word);

/* Tunes with isolation on; checks the report, that nothing ran here, and a launch after. */
static int tune_wild(Fixture *f, const char *fault_word)
{
    return tune_bad(f, "device fault in the tuning worker", fault_word);
}

static int tune_bad(Fixture *f, const char *kind, const char *fault_word)
{
    const tile_TuneReport *rep;
    long timed = tune_timings();
    OK(f->ctx, tile_tune(f->k, f->args, 4, NULL, 0, NULL, &rep));
    CHECK(tune_timings() == timed); /* every configuration ran in a worker */
    const tile_TuneResult *bad = result_of(rep, "BLOCK=32");
    CHECK(bad && bad->status == TILE_TUNE_FAILED && !bad->cached);
    printf("BLOCK=32: %s\n", bad->reason);
    CHECK(strstr(bad->reason, kind));
    CHECK(!fault_word || strstr(bad->reason, fault_word));
    CHECK(rep->total == 3 && rep->failed == 1 && rep->timed == 2 && rep->cached == 0);
    CHECK(rep->best >= 0 && strcmp(rep->results[rep->best].config, "BLOCK=32"));
    CHECK(out_is(f, 0, -1)); /* this process's buffers were never written */
    tile_set_tuning(f->ctx, TILE_TUNING_AUTO);
    OK(f->ctx, tile_launch(f->k, f->args, 4, NULL, 0)); /* the tuned choice */
    OK(f->ctx, tile_synchronize(f->ctx));
    CHECK(tune_timings() == timed);
    CHECK(out_is(f, 2, 0));
    return 0;
}

static int test_cpu_fault(void)
{
    Fixture f;
    setenv("TILE_TUNE_ISOLATE", "1", 1);
    int rc = open_fx(&f, TILE_BACKEND_CPU);
    if (rc == 0)
        rc = tune_wild(&f, NULL); /* a signal; under ASan the worker reports it and exits 1 */
    tile_context_close(f.ctx);
    return rc;
}

/* A configuration that never ends: its worker is killed after TILE_TUNE_CONFIG_TIMEOUT. */
static int test_cpu_hang(void)
{
    Fixture f;
    setenv("TILE_TUNE_ISOLATE", "1", 1);
    setenv("TILE_TUNE_CONFIG_TIMEOUT", "2", 1);
    int rc = open_src(&f, TILE_BACKEND_CPU, HANG);
    if (rc == 0)
        rc = tune_bad(&f, "hang in the tuning worker", "timed out");
    unsetenv("TILE_TUNE_CONFIG_TIMEOUT");
    tile_context_close(f.ctx);
    return rc;
}

/* TILE_TUNE_ISOLATE and TILE_TUNE_CONFIG_TIMEOUT values that do not parse are logged once
 * each; isolation stays on ("on" is not 0) with the 20 s timeout, so the fault is contained. */
static int test_env_warnings(void)
{
    Fixture f;
    setenv("TILE_TUNE_ISOLATE", "on", 1);
    setenv("TILE_TUNE_CONFIG_TIMEOUT", "-1", 1);
    int rc = open_fx(&f, TILE_BACKEND_CPU);
    if (rc == 0)
        rc = tune_wild(&f, NULL);
    printf("log: %s", f.log);
    unsetenv("TILE_TUNE_CONFIG_TIMEOUT");
    tile_context_close(f.ctx);
    CHECK(rc == 0);
    CHECK(strstr(f.log, "tile: TILE_TUNE_ISOLATE='on' ignored: expected one of 0, 1; using 1 "
                        "(isolation on)\n"));
    CHECK(strstr(f.log, "tile: TILE_TUNE_CONFIG_TIMEOUT='-1' ignored: expected a number of "
                        "seconds > 0; using 20\n"));
    const char *once = strstr(f.log, "TILE_TUNE_CONFIG_TIMEOUT='-1'");
    CHECK(!strstr(once + 1, "TILE_TUNE_CONFIG_TIMEOUT='-1'"));
    return 0;
}

/* No usable worker: a logged warning, then tuning in this process (a kernel that works). */
static int test_fallback(void)
{
    Fixture f;
    const tile_TuneReport *rep;
    setenv("TILE_TUNE_ISOLATE", "1", 1);
    setenv("TILE_TUNE_WORKER", "/nonexistent/tilec", 1);
    if (open_fx(&f, TILE_BACKEND_CPU))
        return 1;
    const tile_Const safe = { "BLOCK", 16 }; /* narrowed: only BLOCK=16 is tuned */
    long timed = tune_timings();
    OK(f.ctx, tile_tune(f.k, f.args, 4, &safe, 1, NULL, &rep));
    printf("log: %s", f.log);
    CHECK(strstr(f.log, "without fault isolation"));
    CHECK(strstr(f.log, "TILE_TUNE_WORKER='/nonexistent/tilec' is not executable"));
    CHECK(tune_timings() == timed + 1 && rep->best >= 0);
    tile_context_close(f.ctx);
    return 0;
}

/* On a GPU: an illegal address in the worker; the caller's context still allocates,
 * launches and copies. */
static int test_gpu_fault(void)
{
    Fixture f;
    setenv("TILE_TUNE_ISOLATE", "1", 1);
    int rc = open_fx(&f, TILE_BACKEND_CUDA);
    if (rc == 0)
        rc = tune_wild(&f, NULL); /* exit status 3 (context lost), or a signal */
    tile_DevPtr more;
    if (rc == 0 && tile_malloc(f.ctx, 1 << 20, &more) != TILE_OK)
        rc = 1;
    if (f.ctx)
        tile_context_close(f.ctx);
    return rc;
}

/* The worker gets the caller's inputs intact, x at an offset into its allocation: shared
 * device to device where the backend can (CUDA), written into the job file otherwise, or
 * (copied_too) after a worker that could not map them. */
static int inputs_arrive(tile_Backend backend, int copied_too)
{
    Fixture f;
    const tile_TuneReport *rep;
    setenv("TILE_TUNE_ISOLATE", "1", 1);
    if (copied_too)
        setenv("TILE_TUNE_SHARING", "0", 1);
    int rc = open_src(&f, backend, PROBE);
    if (rc)
        return rc;
    enum { PAD = 4 };
    float x[N + PAD];
    tile_DevPtr xs;
    for (int i = 0; i < N + PAD; i++)
        x[i] = (float)(i - PAD) - 0.5f * (i < PAD); /* wrong values before x */
    OK(f.ctx, tile_malloc(f.ctx, sizeof x, &xs));
    OK(f.ctx, tile_copy_to_device(f.ctx, xs, x, sizeof x));
    f.args[0] = tile_ptr(xs + PAD * sizeof(float));
    long timed = tune_timings();
    OK(f.ctx, tile_tune(f.k, f.args, 4, NULL, 0, NULL, &rep));
    printf("log: %s", f.log);
    CHECK(tune_timings() == timed); /* every configuration ran in a worker */
    CHECK(!strstr(f.log, "without fault isolation"));
    CHECK(rep->total == 3 && rep->timed == 3 && rep->failed == 0);
    CHECK(out_is(&f, 0, -1)); /* this process's buffers were never written */
    unsetenv("TILE_TUNE_SHARING");
    tile_context_close(f.ctx);
    return 0;
}

static int test_cpu_inputs(void) { return inputs_arrive(TILE_BACKEND_CPU, 0); }
static int test_gpu_inputs(void) { return inputs_arrive(TILE_BACKEND_CUDA, 0); }
static int test_gpu_inputs_copied(void) { return inputs_arrive(TILE_BACKEND_CUDA, 1); }

/* A fake worker (a shell script in the cache directory) in TILE_TUNE_WORKER, with
 * TILE_TUNE_WORKER_TIMEOUT=1; tunes with force (every configuration to do). */
static int tune_with_worker(Fixture *f, const char *name, const char *script,
                            const tile_TuneReport **rep)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", getenv("TILE_CACHE_DIR"), name);
    FILE *w = fopen(path, "w");
    CHECK(w && fprintf(w, "#!/bin/sh\n%s\n", script) > 0 && fclose(w) == 0);
    CHECK(chmod(path, 0700) == 0);
    setenv("TILE_TUNE_ISOLATE", "1", 1);
    setenv("TILE_TUNE_WORKER", path, 1);
    setenv("TILE_TUNE_WORKER_TIMEOUT", "1", 1);
    f->log[0] = 0;
    tile_TuneOptions o = { .force = 1, .reps = 1 };
    tile_Status st = tile_tune(f->k, f->args, 4, NULL, 0, &o, rep);
    unsetenv("TILE_TUNE_WORKER_TIMEOUT");
    printf("%s: log: %s", name, f->log);
    OK(f->ctx, st);
    return 0;
}

/* A worker that hangs outside any configuration (silent from its start, or after closing its
 * trace) is killed after TILE_TUNE_WORKER_TIMEOUT and the tuning runs here instead; one
 * that writes a trace line more often than that ("compiled N", as a worker does after each
 * compile) is not killed, however long it takes. */
static int test_silent_worker(void)
{
    Fixture f;
    const tile_TuneReport *rep;
    const char *workers[][2] = { { "mute", "exec sleep 600" },
                                 { "closed", "exec 3>&-; exec sleep 600" } };
    char *tilec = getenv("TILE_TUNE_WORKER") ? strdup(getenv("TILE_TUNE_WORKER")) : NULL;
    if (open_src(&f, TILE_BACKEND_CPU, PROBE)) /* every configuration runs fine here */
        return 1;
    for (int i = 0; i < 2; i++) {
        long timed = tune_timings();
        double t0 = tune_now_ms();
        if (tune_with_worker(&f, workers[i][0], workers[i][1], &rep))
            return 1;
        CHECK(strstr(f.log, "without fault isolation: the tuning worker failed: killed after 1 "
                            "s without a trace line outside a configuration "
                            "(TILE_TUNE_WORKER_TIMEOUT)"));
        CHECK(tune_timings() == timed + 3 && rep->timed == 3); /* tuned here */
        CHECK(tune_now_ms() - t0 < 30e3);
    }
    long timed = tune_timings();
    double t0 = tune_now_ms();
    if (tune_with_worker(&f, "chatty", "for i in 1 2 3 4 5 6 7; do echo \"compiled $i\" >&3; "
                                       "sleep 0.3; done", &rep))
        return 1;
    CHECK(tune_now_ms() - t0 > 2000); /* outlived the timeout, talking */
    CHECK(!strstr(f.log, "killed after") && !strstr(f.log, "without fault isolation"));
    CHECK(tune_timings() == timed && rep->cached == 3); /* nothing timed, here or there */
    if (tilec)
        setenv("TILE_TUNE_WORKER", tilec, 1);
    free(tilec);
    tile_context_close(f.ctx);
    return 0;
}

static const NamedTest tests[] = {
    { "cpu_inputs", test_cpu_inputs },
    { "gpu_inputs", test_gpu_inputs },
    { "gpu_inputs_copied", test_gpu_inputs_copied },
    { "cpu_fault", test_cpu_fault },
    { "cpu_hang", test_cpu_hang },
    { "fallback", test_fallback },
    { "env_warnings", test_env_warnings },
    { "gpu_fault", test_gpu_fault },
    { "silent_worker", test_silent_worker },
};

int main(int argc, char **argv)
{
    char root[TMPDIR_PATH];
    if (test_tmpdir(root, sizeof root, "tile-isolate-test")) /* removed at exit */
        return 1;
    setenv("TILE_CACHE_DIR", root, 1);
    return run_named_tests("test_isolate", tests, (int)(sizeof tests / sizeof tests[0]), argc, argv);
}
