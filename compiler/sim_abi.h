/* sim_abi.h: the contract between the "sim" target (compiler/target_sim.c), which emits host
 * code for the GPU lowering path (warps of lanes, shared memory, barriers, shuffles, matrix
 * instructions), and the runtime's SIMT emulator (runtime/sim.c), which runs that code with
 * one coroutine per simulated thread and checks what real hardware would not report:
 * shared-memory races between barriers, out-of-bounds shared accesses, divergent barriers.
 *
 * Kernel entry on the sim target, called once per simulated thread on its own stack:
 *     void SYMBOL(void **args, const int32_t grid[6], void *thread);
 * args and grid are as on the host target (target_host.c). `thread` is the opaque handle
 * every tile_sim_* function takes. A function that detects an error records it, and the
 * emulator abandons the program instance; the launch then fails with the message. */
#ifndef TILE_SIM_ABI_H
#define TILE_SIM_ABI_H
#include <stdint.h>

/* Matrix-multiply-accumulate shapes and types (PTX mma.sync, row.col), per warp. Register
 * arrays are the PTX fragments of each lane, 32-bit words:
 *   F16_F32, BF16_F32 m16n8k16: a[4] (8 halves), b[2] (4 halves), c[4], d[4] (f32 bits)
 *   TF32_F32 m16n8k8:           a[4], b[2] (tf32 in f32 words), c[4], d[4] (f32 bits)
 *   S8_S32 m16n8k32:            a[4] (16 int8), b[2] (8 int8), c[4], d[4] (int32) */
typedef enum {
    TILE_SIM_MMA_M16N8K16_F16_F32 = 0,
    TILE_SIM_MMA_M16N8K16_BF16_F32 = 1,
    TILE_SIM_MMA_M16N8K8_TF32_F32 = 2,
    TILE_SIM_MMA_M16N8K32_S8_S32 = 3,
} TileSimMmaKind;

/* The simulated thread's index in its program, 0 .. num_threads-1 (lane = id % warp size;
 * warps of 32 lanes, or 64 for code of the "sim-amd" target). */
int32_t tile_sim_thread_id(void *thread);
/* This program instance's shared memory (16-byte aligned, as large as the kernel asked). */
void *tile_sim_smem(void *thread);
/* bar.sync: waits for every thread of the program instance; starts a new race interval. */
void tile_sim_barrier(void *thread);
/* Warp shuffles over all lanes of the thread's warp (shfl.sync with a full mask). */
int32_t tile_sim_shfl_xor(void *thread, int32_t value, int32_t lane_mask);
int32_t tile_sim_shfl_idx(void *thread, int32_t value, int32_t src_lane);
/* Called before each shared-memory access of `bytes` at `addr`: bounds and race checks. */
void tile_sim_smem_access(void *thread, const void *addr, int32_t bytes, int32_t is_write);
/* mma.sync of `kind` (TileSimMmaKind) over the warp: d = a * b + c with the fragments above. */
void tile_sim_mma(void *thread, int32_t kind, const uint32_t *a, const uint32_t *b,
                  const uint32_t *c, uint32_t *d);
/* AMD MFMA over a wave of 64 lanes (the "sim-amd" target): v_mfma_f32_{inst}x{inst}x{16|8}
 * with f16 (kind 0) or bf16 (kind 1) inputs, d = a * b + c. a, b: this lane's 4 K-consecutive
 * 16-bit elements in two words (element i in bits 16 (i % 2) of word i / 2); c, d: its
 * inst * inst / 64 f32 accumulators (as bits). Lane and element of each matrix entry as in
 * AMD's ISA: A[r][k] lane r + inst (k / 4), element k % 4; B[k][c] lane c + inst (k / 4);
 * D[r][c] lane c + 16 (r / 4), element r % 4 (16x16), or lane c + 32 ((r / 4) % 2),
 * element 4 (r / 8) + r % 4 (32x32). */
void tile_sim_mfma(void *thread, int32_t kind, int32_t inst, const uint32_t *a,
                   const uint32_t *b, const uint32_t *c, uint32_t *d);
/* ldmatrix.sync.aligned.m8n8.x{nmat}{.trans}.b16 over the warp: lane i gives the address of
 * row i % 8 of matrix i / 8 (lanes of matrices >= nmat are ignored); out[j] receives this
 * lane's 32-bit piece of matrix j (nmat = 1, 2 or 4). */
void tile_sim_ldmatrix(void *thread, int32_t nmat, int32_t trans, const void *row_addr,
                       uint32_t *out);
/* cp.async: copies `src_bytes` (0..bytes) from global `src` and zero-fills the rest of `bytes`
 * (4, 8 or 16) at shared `dst`, at some point before the wait that covers its group. */
void tile_sim_cp_async(void *thread, void *dst, const void *src, int32_t bytes,
                       int32_t src_bytes);
/* cp.async.commit_group: closes the thread's current group of copies. */
void tile_sim_cp_async_commit(void *thread);
/* cp.async.wait_group n: completes all but the `pending` most recent groups. */
void tile_sim_cp_async_wait(void *thread, int32_t pending);

#endif
