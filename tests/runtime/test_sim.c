/* test_sim.c: tests of the SIMT emulator (runtime/sim.c) with hand-written C "kernels" that
 * call the sim ABI (compiler/sim_abi.h) directly, no compiler involved: barriers, shuffles,
 * the race, bounds and divergence checks. mma, ldmatrix and cp.async are in test_sim_ops.c.
 * `test_sim NAME` runs one test; exit 0 pass, 1 fail. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "sim.h"
#include "sim_abi.h"
#include "test_sim.h"

int sim_test_run(SimEntry fn, void *arg, int threads, int smem, int strict, char *err)
{
    void *args[1] = { arg };
    SimProgram p = { fn, args, { 2, 0, 0, 4, 1, 1 }, threads, smem, strict };
    err[0] = 0;
    return sim_run(&p, err, SIM_TEST_ERR);
}

/* Shared-memory accesses through the checking hook, as generated code does them. */
#define LD(th, p) (tile_sim_smem_access(th, (p), (int32_t)sizeof *(p), 0), *(p))
#define ST(th, p, v) (tile_sim_smem_access(th, (p), (int32_t)sizeof *(p), 1), *(p) = (v))

/* ---- barriers ---- */

typedef struct BarrierData {
    atomic_int before;
    int seen[256], got[256];
} BarrierData;

static void k_barrier(void **args, const int32_t *grid, void *th)
{
    BarrierData *d = args[0];
    int t = tile_sim_thread_id(th), n = 256;
    int32_t *sm = tile_sim_smem(th);
    ST(th, &sm[t], t * 10 + grid[0]);
    atomic_fetch_add(&d->before, 1);
    tile_sim_barrier(th);
    d->seen[t] = atomic_load(&d->before); /* everyone got here first */
    d->got[t] = LD(th, &sm[(t + 1) % n]);
    tile_sim_barrier(th);
    ST(th, &sm[(t + 7) % n], -t); /* a new interval: no race with the reads above */
}

static int t_barrier(void)
{
    static BarrierData d;
    char err[SIM_TEST_ERR];
    atomic_store(&d.before, 0);
    CHECK_RUN(sim_test_run(k_barrier, &d, 256, 1024, 0, err) == 0, err);
    for (int t = 0; t < 256; t++) {
        CHECK(d.seen[t] == 256);
        CHECK(d.got[t] == ((t + 1) % 256) * 10 + 2);
    }
    return 0;
}

/* ---- shuffles ---- */

typedef struct ShflData {
    int32_t x[64][4];
} ShflData;

static void k_shfl(void **args, const int32_t *grid, void *th)
{
    ShflData *d = args[0];
    int t = tile_sim_thread_id(th), lane = t % 32;
    int32_t v = t * 3 + 1;
    d->x[t][0] = tile_sim_shfl_xor(th, v, 5);
    d->x[t][1] = tile_sim_shfl_xor(th, v, 32 + lane); /* past lane 31: own value */
    d->x[t][2] = tile_sim_shfl_idx(th, v, (lane * 7) % 32);
    d->x[t][3] = tile_sim_shfl_idx(th, v, lane + 64); /* lane bits only */
}

static int t_shuffle(void)
{
    static ShflData d;
    char err[SIM_TEST_ERR];
    CHECK_RUN(sim_test_run(k_shfl, &d, 64, 0, 0, err) == 0, err);
    for (int t = 0; t < 64; t++) {
        int w = t / 32 * 32, lane = t % 32;
        CHECK(d.x[t][0] == (w + (lane ^ 5)) * 3 + 1);
        CHECK(d.x[t][1] == t * 3 + 1);
        CHECK(d.x[t][2] == (w + (lane * 7) % 32) * 3 + 1);
        CHECK(d.x[t][3] == t * 3 + 1);
    }
    return 0;
}

/* ---- races ---- */

static void k_no_barrier(void **args, const int32_t *grid, void *th)
{
    int32_t *sm = tile_sim_smem(th), t = tile_sim_thread_id(th);
    ST(th, &sm[t], t);
    int32_t x = LD(th, &sm[(t + 1) % 64]); /* another thread's store, no barrier between */
    ((int32_t *)args[0])[t] = x;
}

static int t_race_missing_barrier(void)
{
    static int32_t out[64];
    char err[SIM_TEST_ERR];
    CHECK(sim_test_run(k_no_barrier, out, 64, 256, 0, err) != 0);
    HAS(err, "program (2,0,0): shared-memory race");
    /* thread 0 stores sm[0], thread 63 reads it last; thread 0 read sm[1] before thread 1
     * stored it: the first report is that write after a read */
    HAS(err, "thread 1 (warp 0, lane 1) writes byte 4");
    HAS(err, "which thread 0 (warp 0, lane 0) read since the last barrier");
    return 0;
}

static void k_read_after_write(void **args, const int32_t *grid, void *th)
{
    int32_t *sm = tile_sim_smem(th), t = tile_sim_thread_id(th);
    if (t == 3)
        ST(th, &sm[10], 7);
    if (t == 40)
        (void)LD(th, &sm[10]);
}

static int t_race_read_after_write(void)
{
    char err[SIM_TEST_ERR];
    CHECK(sim_test_run(k_read_after_write, NULL, 64, 64, 0, err) != 0);
    HAS(err, "thread 40 (warp 1, lane 8) reads byte 40 (a 4-byte access at offset 40), "
             "which thread 3 (warp 0, lane 3) wrote since the last barrier");
    return 0;
}

static void k_write_write(void **args, const int32_t *grid, void *th)
{
    int32_t *sm = tile_sim_smem(th), t = tile_sim_thread_id(th), same = *(int *)args[0];
    ST(th, &sm[2], same ? 42 : t); /* every thread stores to the same word */
    tile_sim_barrier(th);
    (void)LD(th, &sm[2]);
}

static int t_race_write_write(void)
{
    char err[SIM_TEST_ERR];
    int same = 0;
    CHECK(sim_test_run(k_write_write, &same, 32, 64, 0, err) != 0);
    HAS(err, "thread 1 (warp 0, lane 1) writes byte 8");
    HAS(err, "which thread 0 (warp 0, lane 0) wrote (a different value)");
    same = 1; /* equal values: harmless on hardware, reported only in strict mode */
    CHECK_RUN(sim_test_run(k_write_write, &same, 32, 64, 0, err) == 0, err);
    CHECK(sim_test_run(k_write_write, &same, 32, 64, 1, err) != 0);
    HAS(err, "thread 1 (warp 0, lane 1) writes byte 8 (a 4-byte access at offset 8), which "
             "thread 0 (warp 0, lane 0) wrote since the last barrier");
    return 0;
}

/* ---- bounds ---- */

static void k_oob(void **args, const int32_t *grid, void *th)
{
    int32_t *sm = tile_sim_smem(th), at = *(int *)args[0];
    if (tile_sim_thread_id(th) == 33)
        ST(th, (int32_t *)((char *)sm + at), 1);
}

static int t_out_of_bounds(void)
{
    char err[SIM_TEST_ERR];
    int at = 100; /* the last word ends at byte 104 > 100 */
    CHECK(sim_test_run(k_oob, &at, 64, 100, 0, err) != 0);
    HAS(err, "shared memory out of bounds: thread 33 (warp 1, lane 1) writes 4 bytes at "
             "offset 100 of 100");
    at = -4;
    CHECK(sim_test_run(k_oob, &at, 64, 100, 0, err) != 0);
    HAS(err, "at offset -4 of 100");
    at = 96; /* the last word fits */
    CHECK_RUN(sim_test_run(k_oob, &at, 64, 100, 0, err) == 0, err);
    at = 0;
    CHECK(sim_test_run(k_oob, &at, 64, 0, 0, err) != 0); /* no shared memory at all */
    HAS(err, "offset 0 of 0");
    return 0;
}

/* ---- divergence ---- */

static void k_diverge(void **args, const int32_t *grid, void *th)
{
    int t = tile_sim_thread_id(th), how = *(int *)args[0];
    if (how == 0 && t == 37)
        return; /* returns while the others wait at the barrier */
    if (how == 1 && t == 5) {
        tile_sim_shfl_xor(th, t, 1); /* lane 5 shuffles, its warp waits at the barrier */
        return;
    }
    if (how == 2 && t < 32) {
        uint32_t r[4] = { 0 }, out[4];
        tile_sim_mma(th, t == 9 ? TILE_SIM_MMA_M16N8K8_TF32_F32 : TILE_SIM_MMA_M16N8K16_F16_F32,
                     r, r, r, out);
    }
    tile_sim_barrier(th);
}

static int t_divergent(void)
{
    char err[SIM_TEST_ERR];
    int how = 0;
    CHECK(sim_test_run(k_diverge, &how, 64, 0, 0, err) != 0);
    HAS(err, "divergent barrier/shuffle: thread 0 (warp 0, lane 0) waits at a barrier while "
             "thread 37 (warp 1, lane 5) has returned");
    how = 1;
    CHECK(sim_test_run(k_diverge, &how, 64, 0, 0, err) != 0);
    HAS(err, "divergent barrier/shuffle: thread 5 (warp 0, lane 5) waits at shfl.xor while "
             "thread 0 (warp 0, lane 0) waits at a barrier");
    how = 2;
    CHECK(sim_test_run(k_diverge, &how, 64, 0, 0, err) != 0);
    HAS(err, "wait at mma.sync of different shapes");
    return 0;
}

/* ---- errors leave the emulator usable; programs in parallel ---- */

static int t_after_errors(void)
{
    char err[SIM_TEST_ERR];
    int at = 200;
    CHECK(sim_test_run(k_oob, &at, 1024, 100, 0, err) != 0);
    CHECK(sim_test_run(k_oob, &at, 33, 100, 0, err) != 0);
    HAS(err, "threads must be a multiple of the warp");
    CHECK(sim_test_run(NULL, NULL, 32, 0, 0, err) != 0);
    return t_barrier();
}

static void *parallel_worker(void *arg)
{
    static ShflData d[4];
    char err[SIM_TEST_ERR];
    int i = (int)(intptr_t)arg, bad = 0;
    for (int rep = 0; rep < 50 && !bad; rep++)
        bad = sim_test_run(k_shfl, &d[i], 64, 0, 0, err) != 0 || d[i].x[3][0] != 6 * 3 + 1;
    return (void *)(intptr_t)bad;
}

static int t_parallel(void)
{
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        CHECK(pthread_create(&th[i], NULL, parallel_worker, (void *)(intptr_t)i) == 0);
    int bad = 0;
    for (int i = 0; i < 4; i++) {
        void *r;
        pthread_join(th[i], &r);
        bad |= r != NULL;
    }
    CHECK(!bad);
    return 0;
}

static const NamedTest TESTS[] = {
    { "barrier", t_barrier },
    { "shuffle", t_shuffle },
    { "race_missing_barrier", t_race_missing_barrier },
    { "race_read_after_write", t_race_read_after_write },
    { "race_write_write", t_race_write_write },
    { "out_of_bounds", t_out_of_bounds },
    { "divergent", t_divergent },
    { "after_errors", t_after_errors },
    { "parallel", t_parallel },
    { "mma", t_mma },
    { "ldmatrix", t_ldmatrix },
    { "cp_async", t_cp_async },
    { "cp_async_errors", t_cp_async_errors },
};

int main(int argc, char **argv)
{
    int rc = run_named_tests("test_sim", TESTS, (int)(sizeof TESTS / sizeof TESTS[0]), argc,
                             argv);
    sim_release();
    return rc;
}
