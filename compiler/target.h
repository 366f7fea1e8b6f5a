/* target.h: code-generation targets as records of data and hooks.
 * Shared lowering (compiler/lower*.c) asks the target for thread and program ids, barriers,
 * warp shuffles, shared memory, math functions and kernel entry conventions, and never tests
 * the vendor itself. Targets: "host" (target_host.c), "sm_XX[a]" (target_nvptx.c) and "sim"
 * (target_sim.c: the GPU code path as host code for the runtime's SIMT emulator). */
#ifndef TILE_TARGET_H
#define TILE_TARGET_H
#include <llvm-c/Core.h>
#include "diag.h"
#include "tir.h"

typedef enum { TARGET_HOST, TARGET_NVPTX, TARGET_SIM, TARGET_AMDGPU } TargetKind;

/* What the hooks work on: the module being built and the builder's current position. */
typedef struct TargetCtx {
    LLVMContextRef ctx;
    LLVMModuleRef mod;
    LLVMBuilderRef b;        /* positioned where the hook's code goes */
    LLVMBuilderRef alloca_b; /* positioned in the entry block (allocas) */
    LLVMValueRef fn;         /* the kernel function */
    LLVMValueRef host_args, host_grid; /* host wrapper arguments */
    LLVMValueRef thread;     /* sim: the simulated thread's handle (the wrapper's third) */
    LLVMValueRef smem;       /* shared scratch base, created by smem_base */
    int waves_per_eu;        /* AMD: the kernel's occupancy hint (0: none) */
    Diags *diags;
    SrcLoc loc;              /* location of the op being lowered, for diagnostics */
} TargetCtx;

/* Matrix-multiply-accumulate instructions a target may have (mma.sync m16n8, one warp):
 * f16/bf16 inputs k16 and i8 inputs k32 with f32/i32 accumulators, tf32 inputs k8. The
 * numbering is shared with the sim target's emulator (compiler/sim_abi.h). */
typedef enum { MMA_F16_F32 = 0, MMA_BF16_F32, MMA_TF32_F32, MMA_S8_S32 } MmaKind;

/* Target.mma: which matrix instructions `dot` can use. */
enum { TARGET_MMA_NONE = 0, TARGET_MMA_SYNC = 2 /* mma.sync m16n8, sm_80+ */,
       TARGET_MMA_MFMA = 3 /* AMD CDNA v_mfma_f32_{16x16x16,32x32x8}, wave64 */ };

typedef struct Target Target;
struct Target {
    TargetKind kind;
    const char *name;        /* "host", "sm_90a" */
    const char *triple;      /* LLVM triple; NULL: the host's */
    const char *cpu;         /* "sm_90"; NULL: the host's */
    const char *features;    /* "+ptx85,+sm_90"; NULL: the host's */
    int sm;                  /* compute capability * 10 (NVPTX), 0 on the host and sim */
    int threads_per_warp;    /* 32 / 1 (host) */
    int max_warps;           /* warps per program instance (num_warps), at most */
    int max_regs;            /* 32-bit registers per thread (0: no limit, the host) */
    int global_as, shared_as; /* LLVM address spaces of global and shared memory */
    int unroll_elements;     /* mark per-element loops for full unrolling (GPU targets) */
    int soft_bf16;           /* convert f32 -> bf16 with integer ops (no native cvt) */
    int native_f16;          /* f16 add, sub and mul as f16 instructions (the same results as
                                in f32 rounded to f16: 24 >= 2 * 11 + 2 bits) */
    int mma;                 /* matrix instructions: TARGET_MMA_* */
    int wgmma;               /* also warpgroup MMA from shared memory (sm_90a's wgmma) */
    int pad_operand_rows;    /* mma operands that no cp.async writes go through padded shared
                                buffers, not swizzled ones (smem_layout_padded): ldmatrix
                                addresses as one base and constant offsets (fewer registers
                                across attention's loops) */
    int smem_limit;          /* shared memory per program instance, bytes (0: no limit) */
    /* LLVM sync-scope names of the atomics' "cta", "gpu" and "sys" scopes (NULL or "": the
     * system's, the only one on the host) */
    const char *sync_scopes[3];
    /* atomicrmw orderings stronger than relaxed are emitted as fences around a relaxed
     * atomic (LLVM 22's NVPTX backend emits every atomicrmw as relaxed) */
    int rmw_fences;
    /* loads and stores hinted evict_first or ".cs" carry LLVM's !nontemporal, and ".cv" loads
     * are volatile (AMD GPUs: the slc/nt and glc bits); other targets take hints through
     * load_hinted / store_hinted or ignore them */
    int nontemporal_hints;
    /* LLVM inline assembly in the target's own language (inline_asm_elementwise): PTX on
     * NVIDIA, GCN on AMD; 0: none (the host and sim run no GPU assembly) */
    int inline_asm;
    long long max_frame_bytes; /* stack frame of the kernel's code, at most (0: no check);
                                  below the stack the runtime runs it on (check_frame.c) */

    /* Creates the kernel function `symbol` taking the runtime params (their LLVM types),
     * with an entry block for allocas and a start block where `c->b` is left; fills
     * params_out with the param values. Returns the function. */
    LLVMValueRef (*kernel_begin)(TargetCtx *c, const char *symbol, LLVMTypeRef *ptypes,
                                 int nparams, LLVMValueRef *params_out);
    /* Calling convention and launch-bound attributes once the body is complete. */
    void (*kernel_finish)(TargetCtx *c, int num_threads, int smem_bytes);
    LLVMValueRef (*thread_id)(TargetCtx *c);              /* i32, 0..num_threads-1 */
    LLVMValueRef (*program_id)(TargetCtx *c, int axis);   /* i32 */
    LLVMValueRef (*num_programs)(TargetCtx *c, int axis); /* i32 */
    void (*barrier)(TargetCtx *c);
    LLVMValueRef (*shuffle_xor)(TargetCtx *c, LLVMValueRef v_i32, int lane_mask);
    /* The i32 value of lane `src_lane` (i32, run-time) of this warp; NULL: no lanes. */
    LLVMValueRef (*shuffle_idx)(TargetCtx *c, LLVMValueRef v_i32, LLVMValueRef src_lane);
    /* Base of the shared scratch buffer (pointer in shared_as, 1024-byte aligned on GPUs). */
    LLVMValueRef (*smem_base)(TargetCtx *c);
    /* Optional (NULL: nothing): called before every shared-memory load or store of `bytes`
     * at `ptr`, so an emulating target can check bounds and races. */
    void (*smem_access)(TargetCtx *c, LLVMValueRef ptr, int bytes, int is_write);
    /* mma.sync of `kind` over one warp: fragments a[4], b[2] (i32 words), acc[4] (f32, or
     * i32 for MMA_S8_S32); writes d[4]. NULL where `mma` is 0. */
    void (*mma_sync)(TargetCtx *c, MmaKind kind, LLVMValueRef *a, LLVMValueRef *b,
                     LLVMValueRef *acc, LLVMValueRef *d);
    /* wgmma_mma: wgmma.mma_async m64n{n}k16 of `kind` (MMA_F16_F32 or MMA_BF16_F32) over this thread's
     * warpgroup (4 warps): A from registers a[4] (i32 words, mma.sync's A fragment of the
     * warp's 16 rows) or, with `a` NULL, from shared memory through the 64-bit matrix
     * descriptor desc_a + add_a (trans_a: M-major); B through desc_b + add_b (trans_b:
     * N-major); the constant parts add_* are added next to the wgmma, so only the bases stay
     * live; acc[n / 2] f32 in, d[n / 2] out (only valid after wgmma_wait).
     * wgmma_fence orders the writes of the registers vals[0..n-1] (i32 or f32, replaced by
     * values defined after the fence: what the next wgmmas read) and, with `proxy`, of shared
     * memory before the next wgmma; wgmma_wait commits the wgmmas issued and waits for them,
     * passing the nacc accumulators through so nothing reads them before, and reading the na A
     * words they used so that no register of those is reused before (ptxas before CUDA 13.3
     * may reuse a register-input wgmma's A registers while it still reads them). NULL where
     * `wgmma` is 0. */
    void (*wgmma_fence)(TargetCtx *c, int proxy, LLVMValueRef *vals, int n);
    void (*wgmma_mma)(TargetCtx *c, MmaKind kind, int n, LLVMValueRef *a, LLVMValueRef desc_a,
                      unsigned long long add_a, LLVMValueRef desc_b, unsigned long long add_b,
                      int trans_a, int trans_b, LLVMValueRef *acc, LLVMValueRef *d);
    void (*wgmma_wait)(TargetCtx *c, LLVMValueRef *acc, int nacc, LLVMValueRef *a, int na);
    /* fence.proxy.async: this thread's generic shared-memory writes (st.shared, cp.async)
     * ordered before later reads by wgmma (of any thread, after a barrier) */
    void (*wgmma_proxy_fence)(TargetCtx *c);
    /* MFMA over one wave64 (mma == TARGET_MMA_MFMA): v_mfma_f32_{inst}x{inst}x{16|8} of
     * `kind` (MMA_F16_F32 or MMA_BF16_F32): a[4], b[4] this lane's 16-bit elements (K
     * consecutive), acc[inst * inst / 64] f32; writes d[] of the same count. */
    void (*mfma)(TargetCtx *c, MmaKind kind, int inst, LLVMValueRef *a, LLVMValueRef *b,
                 LLVMValueRef *acc, LLVMValueRef *d);
    /* ldmatrix.m8n8.x{nmat}{.trans}.b16 over one warp: lane i gives the shared address of
     * row i % 8 of matrix i / 8; out[j] gets this lane's 32-bit piece of matrix j. NULL:
     * shared memory is read element by element. */
    void (*ldmatrix)(TargetCtx *c, int nmat, int trans, LLVMValueRef ptr, LLVMValueRef *out);
    /* cp.async: copies `bytes` (4, 8 or 16; dst and src aligned to it) from global src to
     * shared dst, reading only src_bytes (i32, 0 or bytes) and zero-filling the rest; commit
     * closes this thread's group of copies; wait leaves at most `pending` groups in flight.
     * NULL where the target has no asynchronous copies (loops are not pipelined). */
    void (*async_copy)(TargetCtx *c, LLVMValueRef dst, LLVMValueRef src, int bytes,
                       LLVMValueRef src_bytes);
    void (*async_commit)(TargetCtx *c);
    void (*async_wait)(TargetCtx *c, int pending);
    /* Optional: a load of LLVM type t (a scalar or vector of 1 to 16 bytes; no pointers) from
     * global memory at ptr, aligned to its size, with the cache operator and eviction policy of
     * `hints` (tir.h's TirCache, TirEvict; never volatile); NULL (hook or result): a plain load. */
    LLVMValueRef (*load_hinted)(TargetCtx *c, LLVMTypeRef t, LLVMValueRef ptr, int hints);
    /* Optional: the same for a store of x; 0: not done (a plain store follows). */
    int (*store_hinted)(TargetCtx *c, LLVMValueRef x, LLVMValueRef ptr, int hints);
    /* Optional: asks cache level `level` (1: L1, 2: L2) for the line at global ptr; must not
     * fault on any address. NULL: prefetches do nothing. */
    void (*prefetch)(TargetCtx *c, LLVMValueRef ptr, int level);
    /* Elementwise math on f32 or f64 x (UN_EXP..UN_COS, UN_ABS); NULL with a diagnostic
     * when the target cannot provide it. */
    LLVMValueRef (*math)(TargetCtx *c, TirUnOp op, LLVMValueRef x, int is_f64);
    /* Optional: C's pow, atan2, hypot, copysign or fmod (op: BIN_POW .., BIN_REM) of f32 or f64 x and y;
     * NULL: target_math2_llvm (the C library's on the host and sim targets). NULL result: an
     * error was reported. */
    LLVMValueRef (*math2)(TargetCtx *c, TirBinOp op, LLVMValueRef x, LLVMValueRef y, int is_f64);
    /* Optional: scalar f32/f64 x to a `bits`-wide integer, truncated, saturated to its range,
     * NaN -> 0, in one instruction where the target has one; NULL (or a NULL result): the
     * generic llvm.fpto[su]i.sat. */
    LLVMValueRef (*float_to_int)(TargetCtx *c, LLVMValueRef x, int is_f64, int bits, int is_signed);
    /* Optional last step on the finished module (NVPTX: links libdevice when used). 0 ok,
     * -1 error. */
    int (*module_finish)(TargetCtx *c);
};

/* "host", "sim", "sm_80", "sm_90a", ... ; NULL when unknown. Records are static and immutable. */
const Target *target_lookup(const char *name);
const Target *target_host(void);
const Target *target_sim(void);
const Target *target_sim_amd(void); /* "sim-amd": AMD's path (wave64, MFMA) emulated */
/* Fills `out` for sm version `sm` (e.g. 90) and arch-specific flag; returns out. */
const Target *target_nvptx_init(Target *out, const char *name, int sm, int arch_specific);
/* Fills `out` for an AMD GPU ("gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1200"); returns
 * out, or NULL for a name it does not know. */
const Target *target_amdgpu_init(Target *out, const char *name);
int target_is_amdgpu_name(const char *name);

/* Helpers shared by the target files. */
/* NVPTX's hinted loads and stores (target_nvptx_cache.c); l2_policy: evict_first and
 * evict_last also set an L2 eviction policy (createpolicy, sm_80+). */
LLVMValueRef target_nv_load_hinted(TargetCtx *c, LLVMTypeRef t, LLVMValueRef ptr, int hints,
                                   int l2_policy);
int target_nv_store_hinted(TargetCtx *c, LLVMValueRef x, LLVMValueRef ptr, int hints, int l2_policy);
void target_nv_prefetch(TargetCtx *c, LLVMValueRef ptr, int level);
/* NVPTX's wgmma hooks (target_wgmma.c). */
void target_wgmma_fence(TargetCtx *c, int proxy, LLVMValueRef *vals, int n);
void target_wgmma(TargetCtx *c, MmaKind kind, int n, LLVMValueRef *a, LLVMValueRef desc_a,
                  unsigned long long add_a, LLVMValueRef desc_b, unsigned long long add_b,
                  int trans_a, int trans_b, LLVMValueRef *acc, LLVMValueRef *d);
void target_wgmma_wait(TargetCtx *c, LLVMValueRef *acc, int nacc, LLVMValueRef *a, int na);
void target_wgmma_proxy_fence(TargetCtx *c);
/* The blocks every kernel function c->fn starts with: "entry" (where c->alloca_b puts
 * allocas) branching to "start", where c->b is left. */
void target_entry_blocks(TargetCtx *c);
LLVMValueRef target_intrinsic(TargetCtx *c, const char *name, LLVMTypeRef *overload,
                              int noverload, LLVMValueRef *args, int nargs);
LLVMValueRef target_call_named(TargetCtx *c, const char *name, LLVMTypeRef ret,
                               LLVMTypeRef *ptypes, int n, LLVMValueRef *args);
/* The host entry wrapper `void SYMBOL(void **args, const int32_t *grid[, void *thread])`
 * (target_host.c), shared with the sim target: creates it as kernel_begin does, loads the
 * params from args and sets c->host_args, c->host_grid (and c->thread). */
LLVMValueRef target_host_entry(TargetCtx *c, const char *symbol, LLVMTypeRef *ptypes,
                               int nparams, LLVMValueRef *params_out, int with_thread);
LLVMValueRef target_host_grid(TargetCtx *c, int i); /* grid[i]: pid x,y,z, nprog x,y,z */
/* The GPU targets' shared scratch: an external, 1024-byte aligned array `tile_smem` in address
 * space 3 whose size the launch gives (dynamic shared memory / LDS), made once per module. */
LLVMValueRef target_extern_smem(TargetCtx *c);
/* Generic math built from LLVM intrinsics (llvm.exp.f32, ...); used by the host. */
/* name(x), an intrinsic overloaded on x's type (llvm.fabs, llvm.exp2, ...) */
LLVMValueRef target_intrinsic1(TargetCtx *c, const char *name, LLVMValueRef x);
LLVMValueRef target_math_llvm(TargetCtx *c, TirUnOp op, LLVMValueRef x, int is_f64);
/* pow as llvm.pow, copysign as llvm.copysign, a float remainder (BIN_REM) as frem (C's fmod),
 * atan2 and hypot as calls of the C library's */
LLVMValueRef target_math2_llvm(TargetCtx *c, TirBinOp op, LLVMValueRef x, LLVMValueRef y, int is_f64);
/* target_math_f32.c: f32 tanh, erf and pow from exp2, log2 and polynomials (about 2 ulp; pow
 * as C's, its error growing with |y log2 |x||), for targets with no device math library. */
LLVMValueRef target_tanh_f32(TargetCtx *c, LLVMValueRef x);
LLVMValueRef target_erf_f32(TargetCtx *c, LLVMValueRef x);
LLVMValueRef target_pow_f32(TargetCtx *c, LLVMValueRef x, LLVMValueRef y);
/* f32 log1p and expm1 from frexp, ldexp and polynomials (no hardware log or exp: exact near
 * 0, about 1 ulp elsewhere) */
LLVMValueRef target_log1p_f32(TargetCtx *c, LLVMValueRef x);
LLVMValueRef target_expm1_f32(TargetCtx *c, LLVMValueRef x);
/* target_math_f64.c, target_trig_f64.c: f64 exp, exp2, log, log2, log10, log1p, expm1, sin,
 * cos, tan, atan, asin, acos, sinh, cosh, tanh and erf (target_math_f64; other ops as target_math_llvm) and pow as C's, from FMA, ldexp,
 * frexp, integer ops and polynomials (within about 1 to 3 ulp), for targets with no device
 * math library. */
LLVMValueRef target_math_f64(TargetCtx *c, TirUnOp op, LLVMValueRef x);
LLVMValueRef target_sincos_f64(TargetCtx *c, LLVMValueRef x, int is_cos);
LLVMValueRef target_pow_f64(TargetCtx *c, LLVMValueRef x, LLVMValueRef y);
LLVMValueRef target_tan_f64(TargetCtx *c, LLVMValueRef x);
/* erfinv (f64, or f32 through f64) for every target without a library one */
LLVMValueRef target_erfinv(TargetCtx *c, LLVMValueRef x, int is_f64);
/* pow, atan2 and hypot as C's (copysign: LLVM's) */
LLVMValueRef target_math2_f64(TargetCtx *c, TirBinOp op, LLVMValueRef x, LLVMValueRef y);
/* target_math_llvm, but f32 tanh, erf, log1p and expm1 from target_math_f32.c and the f64
 * functions from target_math_f64.c (AMD GPUs and their emulation) */
LLVMValueRef target_math_amd(TargetCtx *c, TirUnOp op, LLVMValueRef x, int is_f64);
/* pow, atan2, hypot and copysign the same way (the Target's math2 hook on AMD) */
LLVMValueRef target_math2_amd(TargetCtx *c, TirBinOp op, LLVMValueRef x, LLVMValueRef y, int is_f64);

#endif
