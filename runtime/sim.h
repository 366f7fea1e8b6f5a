/* sim.h: the SIMT emulator that runs code of the "sim" target (compiler/target_sim.c) on the
 * CPU: every simulated thread of a program instance is a coroutine; barriers, warp shuffles,
 * mma.sync, ldmatrix and cp.async behave as on the GPU, and what hardware would not report
 * is an error: shared-memory races between barriers, out-of-bounds shared accesses, barriers
 * or warp collectives not reached by every thread. The functions the generated code calls
 * are compiler/sim_abi.h's. Used by runtime/backend_sim.c and tests/runtime/test_sim.c. */
#ifndef TILE_SIM_H
#define TILE_SIM_H
#include <stddef.h>
#include <stdint.h>

/* The sim target's kernel entry (sim_abi.h). */
typedef void (*SimEntry)(void **args, const int32_t *grid, void *thread);

typedef struct SimProgram {
    SimEntry fn;
    void **args;
    int32_t grid[6];  /* program id x, y, z, then the grid's size x, y, z */
    int threads;      /* a multiple of the warp, up to 1024 */
    int smem_bytes;   /* shared memory: exactly this much, accesses beyond are errors */
    int strict;       /* also report stores of equal values to the same bytes by several
                       * threads between two barriers (harmless on hardware) */
    int warp;         /* lanes per warp: 32, or 64 (AMD's waves, the sim-amd target); 0: 32 */
} SimProgram;

/* Runs one program instance on the calling thread, with the calling thread's emulator state
 * (each worker thread of a pool has its own). 0, or -1 with a one-line message in err
 * ("program (3,0,0): shared-memory race: ..."); the instance is then abandoned. */
int sim_run(const SimProgram *p, char *err, size_t errlen);

/* Frees the calling thread's emulator state (stacks, buffers); thread exit does it too. */
void sim_release(void);

#endif
