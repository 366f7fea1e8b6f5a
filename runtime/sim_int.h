/* sim_int.h: what the emulator's files share (sim.h is their outside face): the state of one
 * worker's emulator, simulated threads, shared-memory shadow entries. sim.c schedules,
 * sim_shadow.c checks shared-memory accesses, sim_warp.c computes warp collectives,
 * sim_async.c defers cp.async copies, sim_abi.c is the tile_sim_* functions. Prefixes:
 * sim_, sim_shadow_, sim_warp_, sim_async_ (and sim_fiber_, sim_fiber.h). */
#ifndef TILE_SIM_INT_H
#define TILE_SIM_INT_H
#include <stdint.h>
#include "sim.h"
#include "sim_fiber.h"

enum {
    SIM_MAX_WARP = 64, SIM_MAX_THREADS = 1024, SIM_STACK_BYTES = 1 << 20, SIM_ERR = 512,
    SIM_RECHECK_MAX = 64, /* widest store whose equal-value overlap is confirmed, not reported */
};

/* Where a simulated thread is: running (or ready to), waiting at a sync point, returned. */
typedef enum {
    SW_RUN, SW_BARRIER, SW_SHFL_XOR, SW_SHFL_IDX, SW_MMA, SW_MFMA, SW_LDMATRIX, SW_DONE
} SimWait;

/* One shared-memory byte's history in the current barrier interval ("epoch"). */
typedef struct SimShadow {
    uint32_t w_epoch, r_epoch; /* interval of the last write, of the reads */
    uint16_t w_tid, r_tid;     /* last writer; first reader of r_epoch */
    uint16_t pend;             /* 1 + thread of a cp.async not yet complete; 0: none */
    uint8_t r_many;            /* another thread than r_tid read too */
    uint8_t pad;
} SimShadow;

/* A cp.async issued and not yet complete: the source bytes are read at issue time. */
typedef struct SimCopy {
    uint32_t off, group;
    int bytes;
    uint8_t data[16];
} SimCopy;

/* A store over bytes another thread stored since the last barrier: harmless if it wrote the
 * same values, which is known once the store is done (the thread's next access or sync). */
typedef struct SimRecheck {
    int active, other;
    uint32_t off;
    int bytes;
    uint64_t mask;     /* the bytes another thread wrote */
    uint8_t before[SIM_RECHECK_MAX];
} SimRecheck;

typedef struct SimState SimState;

typedef struct SimThread {
    SimState *s;
    int id;
    SimWait wait;
    Fiber fiber;
    /* operands of the collective it waits at, and its result */
    int32_t value, arg, kind, trans, inst, result;
    const void *addr;
    const uint32_t *a, *b, *c;
    uint32_t *d;
    SimRecheck recheck;
    SimCopy *copies;
    int ncopies, copies_cap;
    uint32_t committed; /* cp.async groups committed; the open group's number */
} SimThread;

struct SimState {
    Fiber sched;                 /* the worker's own stack */
    SimThread *threads;          /* SIM_MAX_THREADS; stacks mapped on first use */
    int nthreads;
    int warp;                    /* lanes per warp: 32 or 64 */
    const SimProgram *prog;
    unsigned char *smem;         /* this program's shared memory */
    size_t smem_size, smem_cap;
    SimShadow *shadow;           /* one per byte, shadow_cap of them */
    size_t shadow_cap;
    uint32_t epoch;              /* the current barrier interval (grows across programs) */
    int failed;
    char err[SIM_ERR];
};

/* sim.c */
int sim_fail(SimState *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *sim_who(int tid, char buf[48]); /* "thread 37 (warp 1, lane 5)" */
int sim_warp_size(void);                    /* the running program's warp: 32 or 64 */
void sim_block(SimThread *t, SimWait w);    /* waits at a sync point until it completes */
_Noreturn void sim_abandon(SimThread *t);   /* after sim_fail: never resumes */

/* sim_shadow.c */
typedef enum { SH_READ, SH_WRITE, SH_ASYNC } ShadowKind; /* ASYNC: a cp.async's write */
int sim_shadow_reserve(SimState *s, size_t bytes);
void sim_shadow_free(SimState *s);
void sim_shadow_next_epoch(SimState *s);
/* Bounds: 0 and the offset of [addr, addr + bytes) in shared memory, or -1 (sim_fail). */
int sim_shadow_offset(SimState *s, const SimThread *t, const void *addr, int bytes,
                      const char *what, uint32_t *off);
/* Bounds and race checks of an access by t; records it. 0, or -1 (sim_fail). */
int sim_shadow_access(SimState *s, SimThread *t, const void *addr, int bytes, ShadowKind kind);
/* Settles t's pending same-value check (SimRecheck). 0, or -1 (sim_fail). */
int sim_shadow_recheck(SimThread *t);
void sim_shadow_pend(SimState *s, uint32_t off, int bytes, uint16_t mark);

/* sim_warp.c: completes the collective all lanes of a warp wait at. 0, or -1 (sim_fail). */
int sim_warp_complete(SimState *s, SimThread *lanes);

/* sim_async.c */
int sim_async_copy(SimThread *t, void *dst, const void *src, int bytes, int src_bytes);
void sim_async_commit(SimThread *t);
int sim_async_wait(SimThread *t, int pending);
void sim_async_reset(SimThread *t); /* drops copies left at the end of a program */

#endif
