/* backend.h: the one interface every device backend implements (cpu, cuda, hip, sim).
 * A backend is a record of function pointers chosen from a table (rt_backend_ops); the rest
 * of the runtime never tests which vendor it talks to. Failures return a tile_Status and write
 * a one-line message into `err` (BK_ERR_MAX bytes). */
#ifndef TILE_BACKEND_H
#define TILE_BACKEND_H
#include <stddef.h>
#include "driver.h" /* CodeKind */
#include "tile.h"

enum { BK_ERR_MAX = 1024, BK_IPC_HANDLE = 64 };

/* What a device allows one block (0: no limit known). */
typedef struct BkLimits {
    int smem_optin;      /* dynamic shared memory per block, with opt-in */
    int regs_per_block;  /* 32-bit registers per block */
    int threads_per_block;
    long long l2_bytes;
} BkLimits;

/* What the loaded code of one kernel needs (cuFuncGetAttribute). */
typedef struct BkFuncAttrs {
    int num_regs;          /* registers per thread */
    int static_smem;       /* static shared memory, bytes */
    int local_bytes;       /* local memory per thread (register spills, stack), bytes */
    int max_threads;       /* most threads per block it can launch with */
} BkFuncAttrs;

typedef struct BackendOps {
    tile_Backend kind;
    const char *name; /* "cpu", "cuda", "hip", "sim" */
    /* Opens device number `device` (0-based; the CPU and sim backends have device 0 only):
     * TILE_ERROR_NO_DEVICE with a message naming how many there are otherwise. */
    tile_Status (*open)(void **dev, int device, char *err);
    void (*close)(void *dev);
    const char *(*device_name)(void *dev);
    const char *(*arch)(void *dev);        /* "host", "sm_90a", ... */
    const char *(*target)(void *dev);      /* tc_compile target for the first try */
    const char *(*fallback_target)(void *dev); /* tried when the first fails to load, or NULL */
    const char *(*cache_id)(void *dev);    /* driver/arch identity mixed into disk cache keys */
    void (*max_grid)(void *dev, unsigned long long out[3]);

    tile_Status (*malloc)(void *dev, size_t bytes, tile_DevPtr *out, char *err);
    tile_Status (*free)(void *dev, tile_DevPtr p, char *err);
    tile_Status (*copy_h2d)(void *dev, tile_DevPtr dst, const void *src, size_t n, char *err);
    tile_Status (*copy_d2h)(void *dev, void *dst, tile_DevPtr src, size_t n, char *err);
    tile_Status (*memset)(void *dev, tile_DevPtr dst, int byte, size_t n, char *err);
    tile_Status (*sync)(void *dev, char *err);

    /* Turns tc_compile's output (PTX text or a host object: `kind`) into the loadable image the
     * disk cache keeps (a cubin for CUDA, the object itself on the host); a kind the backend
     * cannot load is TILE_ERROR_UNSUPPORTED. *out is malloc'ed. */
    tile_Status (*finalize)(void *dev, const void *code, size_t size, CodeKind kind,
                            void **out, size_t *out_size, char *err);
    tile_Status (*load)(void *dev, const void *image, size_t size, void **mod, char *err);
    void (*unload)(void *dev, void *mod);
    tile_Status (*get_function)(void *dev, void *mod, const char *symbol, int smem_bytes,
                                void **fn, char *err);
    /* args[i] points at runtime param i's value. grid[] >= 1 and within max_grid. */
    tile_Status (*launch)(void *dev, void *fn, const unsigned grid[3], int threads,
                          int smem_bytes, void **args, char *err);

    /* ---- for the tuner (tuner/tune_time.c); NULL where a backend has none ---- */
    void (*limits)(void *dev, BkLimits *out);
    tile_Status (*func_attrs)(void *dev, void *fn, BkFuncAttrs *out, char *err);
    /* Launches as `launch` does, waits for it and sets *ms to its own duration (device
     * events on GPUs, a monotonic clock on the CPU). */
    tile_Status (*timed_launch)(void *dev, void *fn, const unsigned grid[3], int threads,
                                int smem_bytes, void **args, double *ms, char *err);
    /* Evicts the device's L2 cache (writes a buffer twice its size); NULL: nothing to flush. */
    tile_Status (*flush_l2)(void *dev, char *err);
    /* 1 once a sticky fault (illegal address, ...) made the device context unusable. */
    int (*context_lost)(void *dev);
    const char *(*driver_version)(void *dev); /* "12080"; "" on the CPU */

    /* ---- a caller's stream; NULL where a backend has none (only the default exists) ---- */
    /* Later launches go on `stream` (a CUstream; NULL: the default stream). */
    tile_Status (*set_stream)(void *dev, void *stream, char *err);
    /* 1 while the launch stream is being captured into a graph: nothing may synchronize. */
    int (*capturing)(void *dev);

    /* ---- events on the launch stream (tile_event_*); NULL where launches are synchronous
     * (the host clock stands in) ---- */
    tile_Status (*event_create)(void *dev, void **ev, char *err);
    void (*event_destroy)(void *dev, void *ev);
    tile_Status (*event_record)(void *dev, void *ev, char *err);
    /* Waits for `end`, then *ms = the time from start to end. */
    tile_Status (*event_elapsed)(void *dev, void *start, void *end, float *ms, char *err);

    /* ---- buffers handed to a tuning worker process (tuner/tune_isolate.c) without a copy
     * through the host; NULL where device memory cannot be shared between processes ---- */
    /* The handle (BK_IPC_HANDLE bytes) of the allocation holding p, and p's offset in it. */
    tile_Status (*ipc_export)(void *dev, tile_DevPtr p, unsigned char *handle, size_t *offset,
                              char *err);
    /* Copies n bytes at `offset` of another process's exported allocation to dst, and waits. */
    tile_Status (*ipc_copy)(void *dev, const unsigned char *handle, size_t offset,
                            tile_DevPtr dst, size_t n, char *err);

    /* Whether [p, p + n) may be borrowed (tile_borrow): memory a kernel of this device can
     * reach. NULL where the caller's word is taken (the CPU and sim backends, HIP). */
    tile_Status (*check_borrow)(void *dev, tile_DevPtr p, size_t n, char *err);
} BackendOps;

extern const BackendOps rt_backend_cpu;
extern const BackendOps rt_backend_cuda;
extern const BackendOps rt_backend_hip;
extern const BackendOps rt_backend_sim;

/* finalize for backends whose loadable image is the compiler's output itself (the CPU and sim
 * backends' host objects, HIP's code objects): a malloc'ed copy when kind is `want`, else
 * TILE_ERROR_UNSUPPORTED naming what `who` loads. */
tile_Status bk_copy_image(const char *who, CodeKind want, const void *code, size_t size,
                          CodeKind kind, void **out, size_t *out_size, char *err);

/* The ops for a backend kind (AUTO excluded); NULL if unknown. */
const BackendOps *rt_backend_ops(tile_Backend kind);

#endif
