/* test_stream.c: launches on a caller's CUDA stream and into a CUDA graph (tile_set_stream).
 * The stream and graph calls go straight to the driver (dlopen libcuda), as a program that
 * embeds tile on its framework's stream does. Checked: launches land on the stream (they run
 * when it runs, not before); a capture records them and nothing in it synchronizes (copies,
 * tile_synchronize and tile_tune are refused, a launch that would tune does not); replaying
 * the graph twice applies them twice. Without a CUDA device: skipped (77). The CPU and sim
 * backends accept only the default stream. Two contexts on one GPU, driven from two threads
 * at once, each on its own stream, keep to their own memory and results; so do two contexts on
 * two GPUs (two_devices: skipped with fewer than two). Events (tile_event_*) time work on the
 * stream, are refused inside a capture when they would wait, and on the CPU use the host clock.
 * Memory from outside (borrow): the driver's own allocation is borrowed and used by a kernel; a
 * host pointer the driver does not know, a range running past the allocation's mapping and
 * freed memory are refused before a kernel could fault on them (a fault loses the context).
 *   usage: test_stream [cuda | two_contexts | two_devices | borrow | cpu]   (no argument: all) */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "testing.h"
#include "tile.h"

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
typedef struct CUstream_st *CUstream;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphExec_st *CUgraphExec;

static struct {
    CUresult (*stream_create)(CUstream *, unsigned);
    CUresult (*stream_destroy)(CUstream);
    CUresult (*stream_sync)(CUstream);
    CUresult (*begin_capture)(CUstream, int);
    CUresult (*end_capture)(CUstream, CUgraph *);
    CUresult (*instantiate)(CUgraphExec *, CUgraph, unsigned long long);
    CUresult (*graph_launch)(CUgraphExec, CUstream);
    CUresult (*exec_destroy)(CUgraphExec);
    CUresult (*graph_destroy)(CUgraph);
    CUresult (*mem_alloc)(CUdeviceptr *, size_t);
    CUresult (*mem_free)(CUdeviceptr);
} cu;

static int load_cuda(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return -1;
    void **slots[] = {(void **)&cu.stream_create, (void **)&cu.stream_destroy,
                      (void **)&cu.stream_sync, (void **)&cu.begin_capture,
                      (void **)&cu.end_capture, (void **)&cu.instantiate,
                      (void **)&cu.graph_launch, (void **)&cu.exec_destroy,
                      (void **)&cu.graph_destroy, (void **)&cu.mem_alloc, (void **)&cu.mem_free};
    const char *names[] = {"cuStreamCreate", "cuStreamDestroy_v2", "cuStreamSynchronize",
                           "cuStreamBeginCapture_v2", "cuStreamEndCapture",
                           "cuGraphInstantiateWithFlags", "cuGraphLaunch", "cuGraphExecDestroy",
                           "cuGraphDestroy", "cuMemAlloc_v2", "cuMemFree_v2"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!(*slots[i] = dlsym(h, names[i])))
            return -1;
    return 0;
}

/* add1: x += 1 over n elements; add2: the same with a tuned block size, never launched before
 * the capture (so the capture is where it would tune). */
static const char *const SRC =
    "@grid(cdiv(n, BLOCK))\n"
    "kernel add1(x: *f32, n: i32, const BLOCK: i32 = 256) {\n"
    "    let i = program_id(0) * BLOCK + arange(0, BLOCK);\n"
    "    store(x + i, load(x + i, mask=i < n) + 1.0, mask=i < n);\n"
    "}\n"
    "@grid(cdiv(n, BLOCK))\n"
    "@tune(BLOCK = [128, 512])\n"
    "@key(n: pow2)\n"
    "kernel add2(x: *f32, n: i32, const BLOCK: i32 = 128) {\n"
    "    let i = program_id(0) * BLOCK + arange(0, BLOCK);\n"
    "    store(x + i, load(x + i, mask=i < n) + 2.0, mask=i < n);\n"
    "}\n"
    "@grid(cdiv(n, 256))\n"
    "kernel check(x: *f32, n: i32) {\n"
    "    let i = program_id(0) * 256 + arange(0, 256);\n"
    "    device_assert(load(x + i, mask=i < n) >= 0.0, \"x is non-negative\");\n"
    "}\n";

enum { N = 100003 };

static int all_equal(const float *x, float want)
{
    for (int i = 0; i < N; i++)
        if (x[i] != want) {
            fprintf(stderr, "x[%d] = %g, expected %g\n", i, (double)x[i], (double)want);
            return 0;
        }
    return 1;
}

static void note_log(void *user, const char *msg)
{
    if (strstr(msg, "being captured"))
        *(int *)user = 1;
}

static int graph_on(tile_Context *ctx, CUstream s, tile_Kernel *k1, tile_Kernel *k2,
                    tile_Kernel *k3, tile_DevPtr x, float *host)
{
    tile_Arg args[2] = {tile_ptr(x), tile_int(N)};
    EXPECT(ctx, TILE_OK, tile_launch(k3, args, 2, NULL, 0));
    CHECK(cu.begin_capture(s, 0 /* global mode */) == 0);
    /* device_assert waits for its launch: refused inside a capture */
    EXPECT(ctx, TILE_ERROR_INVALID_ARGUMENT, tile_launch(k3, args, 2, NULL, 0));
    CHECK(strstr(tile_error(ctx), "print or device_assert"));
    for (int i = 0; i < 3; i++)
        EXPECT(ctx, TILE_OK, tile_launch(k1, args, 2, NULL, 0));
    EXPECT(ctx, TILE_OK, tile_launch(k2, args, 2, NULL, 0)); /* would tune: must not */
    EXPECT(ctx, TILE_ERROR_INVALID_ARGUMENT, tile_synchronize(ctx));
    CHECK(strstr(tile_error(ctx), "captured"));
    EXPECT(ctx, TILE_ERROR_INVALID_ARGUMENT, tile_copy_to_host(ctx, host, x, sizeof(float)));
    EXPECT(ctx, TILE_ERROR_INVALID_ARGUMENT, tile_tune(k2, args, 2, NULL, 0, NULL, NULL));
    CUgraph g;
    CUgraphExec e;
    CHECK(cu.end_capture(s, &g) == 0);
    CHECK(cu.instantiate(&e, g, 0) == 0);
    /* recorded, not run: nothing changed yet */
    CHECK(cu.stream_sync(s) == 0);
    EXPECT(ctx, TILE_OK, tile_copy_to_host(ctx, host, x, N * sizeof(float)));
    CHECK(all_equal(host, 1.0f));
    for (int r = 0; r < 2; r++)
        CHECK(cu.graph_launch(e, s) == 0);
    CHECK(cu.stream_sync(s) == 0);
    EXPECT(ctx, TILE_OK, tile_copy_to_host(ctx, host, x, N * sizeof(float)));
    CHECK(all_equal(host, 1.0f + 2 * (3 + 2)));
    CHECK(cu.exec_destroy(e) == 0 && cu.graph_destroy(g) == 0);
    return 0;
}

/* Events around 20 launches on stream s (x holds 11 everywhere): the elapsed time covers them
 * and is refused while s is being captured. */
static int events_on(tile_Context *ctx, CUstream s, tile_Kernel *k, tile_DevPtr x, float *host)
{
    tile_Event *e0, *e1;
    float ms = -1.0f;
    tile_Arg args[2] = {tile_ptr(x), tile_int(N)};
    EXPECT(ctx, TILE_OK, tile_event_create(ctx, &e0));
    EXPECT(ctx, TILE_OK, tile_event_create(ctx, &e1));
    EXPECT(ctx, TILE_OK, tile_event_record(e0));
    for (int r = 0; r < 20; r++)
        EXPECT(ctx, TILE_OK, tile_launch(k, args, 2, NULL, 0));
    EXPECT(ctx, TILE_OK, tile_event_record(e1));
    EXPECT(ctx, TILE_OK, tile_event_elapsed(e0, e1, &ms)); /* waits for e1 */
    CHECK(ms > 0.0f && ms < 10000.0f);
    EXPECT(ctx, TILE_OK, tile_copy_to_host(ctx, host, x, N * sizeof(float)));
    CHECK(all_equal(host, 31.0f));
    CUgraph g;
    CHECK(cu.begin_capture(s, 0) == 0);
    EXPECT(ctx, TILE_OK, tile_event_record(e0));
    EXPECT(ctx, TILE_ERROR_INVALID_ARGUMENT, tile_event_elapsed(e0, e1, &ms));
    CHECK(strstr(tile_error(ctx), "captured"));
    CHECK(cu.end_capture(s, &g) == 0 && cu.graph_destroy(g) == 0);
    tile_event_destroy(e0);
    tile_event_destroy(e1);
    EXPECT(NULL, TILE_ERROR_INVALID_ARGUMENT, tile_event_record(e0)); /* destroyed */
    return 0;
}

static int t_cuda(void)
{
    tile_Context *ctx;
    if (tile_context_open(TILE_BACKEND_CUDA, &ctx) != TILE_OK || load_cuda() != 0) {
        fprintf(stderr, "skipped: no CUDA device or driver\n");
        return TEST_SKIP;
    }
    setenv("TILE_TUNE", "auto", 1);
    int said = 0;
    tile_set_log(ctx, note_log, &said);
    tile_Module *m;
    tile_Kernel *k1, *k2, *k3;
    tile_DevPtr x;
    float *host = calloc(N, sizeof(float));
    CHECK(host);
    EXPECT(ctx, TILE_OK, tile_module_load_string(ctx, "stream", SRC, &m));
    EXPECT(ctx, TILE_OK, tile_kernel_get(m, "add1", &k1));
    EXPECT(ctx, TILE_OK, tile_kernel_get(m, "add2", &k2));
    EXPECT(ctx, TILE_OK, tile_kernel_get(m, "check", &k3));
    EXPECT(ctx, TILE_OK, tile_malloc(ctx, N * sizeof(float), &x));
    EXPECT(ctx, TILE_OK, tile_copy_to_device(ctx, x, host, N * sizeof(float)));
    CUstream s;
    CHECK(cu.stream_create(&s, 1 /* non-blocking */) == 0);
    EXPECT(ctx, TILE_OK, tile_set_stream(ctx, s));
    tile_Arg args[2] = {tile_ptr(x), tile_int(N)};
    EXPECT(ctx, TILE_OK, tile_launch(k1, args, 2, NULL, 0)); /* compiles, loads, runs on s */
    CHECK(cu.stream_sync(s) == 0);
    EXPECT(ctx, TILE_OK, tile_copy_to_host(ctx, host, x, N * sizeof(float)));
    CHECK(all_equal(host, 1.0f));
    int rc = graph_on(ctx, s, k1, k2, k3, x, host);
    CHECK(rc != 0 || said); /* the launch that would have tuned said why it did not */
    CHECK(rc != 0 || events_on(ctx, s, k1, x, host) == 0);
    EXPECT(ctx, TILE_OK, tile_set_stream(ctx, NULL));
    EXPECT(ctx, TILE_OK, tile_synchronize(ctx));
    CHECK(cu.stream_destroy(s) == 0);
    free(host);
    tile_context_close(ctx);
    return rc;
}

/* One of two threads: its own context, module, buffer and stream; ROUNDS launches of add1. */
enum { ROUNDS = 50 };

typedef struct Side {
    int rc;
    float start;
    int device;
} Side;

static int side_run(Side *me)
{
    tile_Context *ctx;
    tile_Module *m;
    tile_Kernel *k;
    tile_DevPtr x;
    CUstream s;
    float *host = malloc(N * sizeof(float));
    CHECK(host);
    for (int i = 0; i < N; i++)
        host[i] = me->start;
    EXPECT(NULL, TILE_OK, tile_context_open_device(TILE_BACKEND_CUDA, me->device, &ctx));
    EXPECT(ctx, TILE_OK, tile_module_load_string(ctx, "side", SRC, &m));
    EXPECT(ctx, TILE_OK, tile_kernel_get(m, "add1", &k));
    EXPECT(ctx, TILE_OK, tile_malloc(ctx, N * sizeof(float), &x));
    EXPECT(ctx, TILE_OK, tile_copy_to_device(ctx, x, host, N * sizeof(float)));
    CHECK(cu.stream_create(&s, 1) == 0);
    EXPECT(ctx, TILE_OK, tile_set_stream(ctx, s));
    tile_Arg args[2] = {tile_ptr(x), tile_int(N)};
    for (int r = 0; r < ROUNDS; r++)
        EXPECT(ctx, TILE_OK, tile_launch(k, args, 2, NULL, 0));
    CHECK(cu.stream_sync(s) == 0);
    EXPECT(ctx, TILE_OK, tile_copy_to_host(ctx, host, x, N * sizeof(float)));
    CHECK(all_equal(host, me->start + ROUNDS));
    EXPECT(ctx, TILE_OK, tile_set_stream(ctx, NULL));
    CHECK(cu.stream_destroy(s) == 0);
    tile_context_close(ctx);
    free(host);
    return 0;
}

static void *side_main(void *arg)
{
    Side *me = arg;
    me->rc = side_run(me);
    return NULL;
}

static int both_sides(int d0, int d1);

static int t_two_contexts(void)
{
    tile_Context *probe;
    if (tile_context_open(TILE_BACKEND_CUDA, &probe) != TILE_OK || load_cuda() != 0) {
        fprintf(stderr, "skipped: no CUDA device or driver\n");
        return TEST_SKIP;
    }
    tile_context_close(probe);
    return both_sides(0, 0);
}

/* Two threads at once, one context each on devices d0 and d1. */
static int both_sides(int d0, int d1)
{
    Side sides[2] = {{1, 0.0f, d0}, {1, 1000.0f, d1}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        CHECK(pthread_create(&th[i], NULL, side_main, &sides[i]) == 0);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    CHECK(sides[0].rc == 0 && sides[1].rc == 0);
    return 0;
}

static int t_two_devices(void)
{
    tile_Context *second;
    if (load_cuda() != 0 ||
        tile_context_open_device(TILE_BACKEND_CUDA, 1, &second) != TILE_OK) {
        fprintf(stderr, "skipped: fewer than two CUDA devices (%s)\n", tile_error(NULL));
        return TEST_SKIP;
    }
    printf("devices 0 and 1: %s\n", tile_device_name(second));
    tile_context_close(second);
    return both_sides(0, 1);
}

static int t_borrow(void)
{
    tile_Context *ctx;
    if (tile_context_open(TILE_BACKEND_CUDA, &ctx) != TILE_OK || load_cuda() != 0) {
        fprintf(stderr, "skipped: no CUDA device or driver\n");
        return TEST_SKIP;
    }
    tile_Module *m;
    tile_Kernel *k;
    CUdeviceptr p;
    size_t bytes = N * sizeof(float);
    float *host = malloc(bytes);
    CHECK(host && cu.mem_alloc(&p, bytes) == 0);
    EXPECT(ctx, TILE_OK, tile_module_load_string(ctx, "borrow", SRC, &m));
    EXPECT(ctx, TILE_OK, tile_kernel_get(m, "add1", &k));
    EXPECT(ctx, TILE_OK, tile_borrow(ctx, p, bytes));
    EXPECT(ctx, TILE_OK, tile_memset(ctx, p, 0, bytes));
    tile_Arg args[2] = {tile_ptr(p), tile_int(N)};
    EXPECT(ctx, TILE_OK, tile_launch(k, args, 2, NULL, 0));
    EXPECT(ctx, TILE_OK, tile_copy_to_host(ctx, host, p, bytes));
    CHECK(all_equal(host, 1.0f));
    EXPECT(ctx, TILE_OK, tile_unborrow(ctx, p));
    EXPECT(ctx, TILE_ERROR_INVALID_ARGUMENT, tile_borrow(ctx, (tile_DevPtr)(uintptr_t)host, bytes));
    CHECK(strstr(tile_error(ctx), "not memory the CUDA driver knows"));
    EXPECT(ctx, TILE_ERROR_INVALID_ARGUMENT, tile_borrow(ctx, p, (size_t)1 << 40));
    CHECK(strstr(tile_error(ctx), "the range's last byte"));
    CHECK(cu.mem_free(p) == 0);
    EXPECT(ctx, TILE_ERROR_INVALID_ARGUMENT, tile_borrow(ctx, p, bytes));
    CHECK(strstr(tile_error(ctx), "not memory the CUDA driver knows"));
    EXPECT(ctx, TILE_OK, tile_synchronize(ctx)); /* the context is still good */
    free(host);
    tile_context_close(ctx);
    return 0;
}

/* Events on the CPU backend: the host clock around a launch; every misuse an error status. */
static int cpu_events(tile_Context *ctx)
{
    tile_Context *other;
    tile_Module *m;
    tile_Kernel *k;
    tile_DevPtr x;
    tile_Event *e0, *e1, *e2;
    float ms = -1.0f;
    EXPECT(ctx, TILE_OK, tile_module_load_string(ctx, "ev", SRC, &m));
    EXPECT(ctx, TILE_OK, tile_kernel_get(m, "add1", &k));
    EXPECT(ctx, TILE_OK, tile_malloc(ctx, N * sizeof(float), &x));
    EXPECT(ctx, TILE_OK, tile_memset(ctx, x, 0, N * sizeof(float)));
    EXPECT(NULL, TILE_OK, tile_context_open(TILE_BACKEND_CPU, &other));
    EXPECT(ctx, TILE_OK, tile_event_create(ctx, &e0));
    EXPECT(ctx, TILE_OK, tile_event_create(ctx, &e1));
    EXPECT(other, TILE_OK, tile_event_create(other, &e2));
    EXPECT(ctx, TILE_ERROR_INVALID_ARGUMENT, tile_event_elapsed(e0, e1, &ms));
    CHECK(strstr(tile_error(ctx), "never recorded"));
    EXPECT(ctx, TILE_OK, tile_event_record(e0));
    tile_Arg args[2] = {tile_ptr(x), tile_int(N)};
    EXPECT(ctx, TILE_OK, tile_launch(k, args, 2, NULL, 0));
    EXPECT(ctx, TILE_OK, tile_event_record(e1));
    EXPECT(ctx, TILE_OK, tile_event_elapsed(e0, e1, &ms));
    CHECK(ms > 0.0f && ms < 60000.0f);
    EXPECT(ctx, TILE_ERROR_INVALID_ARGUMENT, tile_event_elapsed(e0, e1, NULL));
    EXPECT(other, TILE_OK, tile_event_record(e2));
    EXPECT(ctx, TILE_ERROR_INVALID_ARGUMENT, tile_event_elapsed(e0, e2, &ms));
    CHECK(strstr(tile_error(ctx), "different contexts"));
    EXPECT(NULL, TILE_ERROR_INVALID_ARGUMENT, tile_event_create(NULL, &e2));
    EXPECT(ctx, TILE_ERROR_INVALID_ARGUMENT, tile_event_create(ctx, NULL));
    EXPECT(NULL, TILE_ERROR_INVALID_ARGUMENT, tile_event_record(NULL));
    tile_context_close(other); /* e2 outlives its context: an error, then only freed */
    EXPECT(NULL, TILE_ERROR_INVALID_ARGUMENT, tile_event_record(e2));
    CHECK(strstr(tile_error(NULL), "context was closed"));
    tile_event_destroy(e2);
    tile_event_destroy(e1);
    EXPECT(NULL, TILE_ERROR_INVALID_ARGUMENT, tile_event_elapsed(e0, e1, &ms));
    CHECK(strstr(tile_error(NULL), "not a live tile_Event"));
    tile_event_destroy(e1); /* twice: nothing */
    tile_event_destroy(NULL);
    tile_event_destroy(e0);
    return 0;
}

static int t_cpu(void)
{
    tile_Context *ctx;
    EXPECT(NULL, TILE_OK, tile_context_open(TILE_BACKEND_CPU, &ctx));
    EXPECT(ctx, TILE_OK, tile_set_stream(ctx, NULL));
    EXPECT(ctx, TILE_ERROR_UNSUPPORTED, tile_set_stream(ctx, (void *)0x10));
    CHECK(strstr(tile_error(ctx), "only the default stream"));
    EXPECT(NULL, TILE_ERROR_INVALID_ARGUMENT, tile_set_stream(NULL, NULL));
    CHECK(cpu_events(ctx) == 0);
    tile_context_close(ctx);
    return 0;
}

int main(int argc, char **argv)
{
    static const NamedTest tests[] = {{"cuda", t_cuda}, {"two_contexts", t_two_contexts},
                                      {"two_devices", t_two_devices}, {"borrow", t_borrow},
                                      {"cpu", t_cpu}};
    return run_named_tests("test_stream", tests, (int)(sizeof tests / sizeof tests[0]), argc, argv);
}
