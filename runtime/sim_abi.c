/* sim_abi.c: the tile_sim_* functions that code of the sim target calls (compiler/sim_abi.h),
 * on the emulator of runtime/sim.c. `thread` is the simulated thread (SimThread). A function
 * that finds an error records it (sim_fail) and never returns: the program is abandoned. */
#include "sim_abi.h"
#include "sim_int.h"

int32_t tile_sim_thread_id(void *thread) { return ((SimThread *)thread)->id; }

void *tile_sim_smem(void *thread) { return ((SimThread *)thread)->s->smem; }

void tile_sim_barrier(void *thread) { sim_block(thread, SW_BARRIER); }

static int32_t shuffle(SimThread *t, SimWait w, int32_t value, int32_t arg)
{
    t->value = value;
    t->arg = arg;
    sim_block(t, w);
    return t->result;
}

int32_t tile_sim_shfl_xor(void *thread, int32_t value, int32_t lane_mask)
{
    return shuffle(thread, SW_SHFL_XOR, value, lane_mask);
}

int32_t tile_sim_shfl_idx(void *thread, int32_t value, int32_t src_lane)
{
    return shuffle(thread, SW_SHFL_IDX, value, src_lane);
}

void tile_sim_smem_access(void *thread, const void *addr, int32_t bytes, int32_t is_write)
{
    SimThread *t = thread;
    if (sim_shadow_access(t->s, t, addr, bytes, is_write ? SH_WRITE : SH_READ) != 0)
        sim_abandon(t);
}

void tile_sim_mma(void *thread, int32_t kind, const uint32_t *a, const uint32_t *b,
                  const uint32_t *c, uint32_t *d)
{
    SimThread *t = thread;
    if (kind < TILE_SIM_MMA_M16N8K16_F16_F32 || kind > TILE_SIM_MMA_M16N8K32_S8_S32) {
        char who[48];
        sim_fail(t->s, "mma.sync: %s gives an unknown kind %d", sim_who(t->id, who), kind);
        sim_abandon(t);
    }
    t->kind = kind;
    t->trans = 0;
    t->inst = 0;
    t->a = a, t->b = b, t->c = c, t->d = d;
    sim_block(t, SW_MMA);
}

void tile_sim_mfma(void *thread, int32_t kind, int32_t inst, const uint32_t *a,
                   const uint32_t *b, const uint32_t *c, uint32_t *d)
{
    SimThread *t = thread;
    if ((kind != 0 && kind != 1) || (inst != 16 && inst != 32)) {
        char who[48];
        sim_fail(t->s, "mfma: %s gives an unknown kind %d or size %d", sim_who(t->id, who),
                 kind, inst);
        sim_abandon(t);
    }
    t->kind = kind;
    t->trans = 0;
    t->inst = inst;
    t->a = a, t->b = b, t->c = c, t->d = d;
    sim_block(t, SW_MFMA);
}

void tile_sim_ldmatrix(void *thread, int32_t nmat, int32_t trans, const void *row_addr,
                       uint32_t *out)
{
    SimThread *t = thread;
    if (nmat != 1 && nmat != 2 && nmat != 4) {
        char who[48];
        sim_fail(t->s, "ldmatrix: %s asks for %d matrices (1, 2 or 4)", sim_who(t->id, who),
                 nmat);
        sim_abandon(t);
    }
    t->kind = nmat;
    t->trans = trans != 0;
    t->inst = 0;
    t->addr = row_addr;
    t->d = out;
    sim_block(t, SW_LDMATRIX);
}

void tile_sim_cp_async(void *thread, void *dst, const void *src, int32_t bytes,
                       int32_t src_bytes)
{
    SimThread *t = thread;
    if (sim_async_copy(t, dst, src, bytes, src_bytes) != 0)
        sim_abandon(t);
}

void tile_sim_cp_async_commit(void *thread) { sim_async_commit(thread); }

void tile_sim_cp_async_wait(void *thread, int32_t pending)
{
    SimThread *t = thread;
    if (sim_async_wait(t, pending) != 0)
        sim_abandon(t);
}
