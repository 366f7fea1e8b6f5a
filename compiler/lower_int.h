/* lower_int.h: internals shared by the lowering files (lower*.c). A tile value is, per
 * thread, an array of R elements (R from layout.c) kept in an entry-block alloca; ops are
 * loops over the register index (fully unrolled on GPU targets, so SROA turns the arrays
 * into registers). Scalars are plain LLVM values. */
#ifndef TILE_LOWER_INT_H
#define TILE_LOWER_INT_H
#include "layout.h"
#include "lower.h"
#include "target.h"

typedef struct LoopTargets {
    TirOp *op;
    LLVMBasicBlockRef brk, cont;
    LLVMValueRef *res_slots;   /* BREAK writes the loop's results here */
    LLVMValueRef *cont_slots;  /* CONTINUE writes the carried values here */
    struct LoopTargets *outer;
} LoopTargets;

/* Where a region's terminator sends control and values. */
typedef struct RegionTargets {
    LLVMBasicBlockRef yield_bb;     /* YIELD: store into yield_slots, branch here */
    LLVMValueRef *yield_slots;
    LLVMBasicBlockRef true_bb, false_bb; /* CONDITION: store into cond_slots, branch */
    LLVMValueRef *cond_slots;
    TirOp *owner;
    struct RegionTargets *outer;
} RegionTargets;

/* The per-thread part of a layout's flat offsets, shared by layouts with the same lane and
 * warp bases (lower.c: lw_thread_flat). */
typedef struct ThreadPart {
    uint32_t basis[2 * LL_MAX_BITS];
    int n, rank, shape[TIR_MAX_RANK];
    LLVMValueRef value, coord[TIR_MAX_RANK];
    struct ThreadPart *next;
} ThreadPart;

typedef struct Lower {
    TirKernel *k;
    const Target *t;
    TargetCtx tc;
    LLVMContextRef ctx;
    LLVMModuleRef mod;
    LLVMBuilderRef b;
    Diags *d;
    LLVMValueRef *vals;        /* by value id: scalar value or tile storage pointer */
    LinearLayout **lls;        /* by value id: linear layouts, computed on first use */
    LLVMValueRef **regs;       /* by value id: a tile's registers as SSA values (GPU targets;
                                  NULL: the tile lives in the alloca vals[id]) */
    LLVMValueRef tid;
    LLVMBuilderRef prologue;   /* at the end of the kernel's first block: per-thread values */
    ThreadPart *thread_parts;
    int *uses;                 /* by value id: how many operands name it */
    struct Deferred **deferred; /* by value id: local_loads left for their dot (lower_smem.c) */
    int uses_wgmma;             /* a dot of the kernel runs as wgmma: 1, 0; -1 not known yet */
    LLVMValueRef *params;
    LLVMBasicBlockRef ret_bb;
    LoopTargets *loop;
    RegionTargets *region;
    int smem_bytes;
    LLVMValueRef prints_run;   /* i32 alloca: the prints this thread ran (lower_debug.c) */
    int straight_copies;        /* host code: product of the enclosing element loops emitted
                                   straight-line (LW_UNROLL_ALWAYS); 1 outside them */
    int failed;
} Lower;

typedef struct ElemLoop {
    LLVMBasicBlockRef pre, body, exit;
    LLVMValueRef phi;
    int n, i, unrolled;
    int max_unroll; /* an LLVM loop: how far LLVM may unroll it (0: its choice) */
    int outer_copies; /* a host loop emitted straight-line: L->straight_copies before it */
} ElemLoop;

/* `for (r = 0; r < n; r++) BODY`: with `unroll` (GPU targets), or n <= LW_UNROLL_ALWAYS, the
 * C loop runs BODY n times with r a constant, so the code is straight-line with constant
 * register indices and LLVM folds the layout arithmetic as it is built; otherwise BODY is
 * emitted once inside an LLVM loop whose counter is r. BODY must not leave the C loop early. */
/* Loops this short are always straight-line code: thousands of tiny LLVM loops (one per tile
 * op on the host) cost O3's loop passes time quadratic in their number. */
#define LW_UNROLL_ALWAYS 16
#define LW_FOR(L, lp, n, unroll, r) \
    for (LLVMValueRef r = lw_for_begin(L, lp, n, unroll, 0); r; r = lw_for_next(L, lp))
/* An LLVM loop over 0..n-1 that LLVM may unroll at most `count` times (n > LW_UNROLL_ALWAYS;
 * shorter ones are straight-line code). */
#define LW_FOR_UNROLL_AT_MOST(L, lp, n, count, r) \
    for (LLVMValueRef r = lw_for_begin(L, lp, n, 0, count); r; r = lw_for_next(L, lp))
/* An LLVM loop over 0..n-1 however short, which LLVM does not unroll (host code whose size
 * must not grow with n). */
#define LW_LOOP(L, lp, n, r) \
    for (LLVMValueRef r = lw_for_begin(L, lp, n, 0, -1); r; r = lw_for_next(L, lp))

/* lower.c: storage, types, loops */
LLVMTypeRef lw_type(Lower *L, ElemKind k);      /* register type (bool: i1) */
LLVMTypeRef lw_mem_type(Lower *L, ElemKind k);  /* memory type (bool: i8) */
LLVMTypeRef lw_i32(Lower *L);
LLVMValueRef lw_i32c(Lower *L, int v);
LLVMValueRef lw_alloca(Lower *L, LLVMTypeRef t, int n, const char *name);
LLVMValueRef lw_tile_storage(Lower *L, const TirValue *v); /* fresh alloca for v's registers */
/* Fresh storage bound to tile v, written with lw_set: SSA registers on GPU targets (where
 * register indices are constants), an alloca otherwise. */
void lw_tile_new(Lower *L, const TirValue *v);
/* dst's registers = src's (same layout). */
void lw_copy_value(Lower *L, const TirValue *dst, const TirValue *src);
/* v's registers stored into the alloca dst (loop slots). */
void lw_store_tile(Lower *L, const TirValue *v, LLVMValueRef dst);
/* The linear layout of v (scalars: one register); an unsupported encoding fails lowering. */
const LinearLayout *lw_ll(Lower *L, const TirValue *v);
int lw_regs(Lower *L, const TirValue *v);
/* Coordinates (per value dim) of v's register r in this thread. */
void lw_coords(Lower *L, const TirValue *v, LLVMValueRef r, LLVMValueRef *coord);
LLVMValueRef lw_thread_flat(Lower *L, const LinearLayout *ll);
/* Opens a branch taken only by the threads that own their elements of a layout (the first of
 * each group of replicas); returns the join block for lw_end_if, or NULL when every thread
 * owns its elements (nothing opened). */
LLVMBasicBlockRef lw_if_owner(Lower *L, const LinearLayout *ll);
/* The i1 "this thread owns its elements of ll", or NULL when every thread does. */
LLVMValueRef lw_owner(Lower *L, const LinearLayout *ll);
void lw_end_if(Lower *L, LLVMBasicBlockRef join);
/* The i1 "this thread writes v's elements" of an op that writes each element once: its
 * owner (for scalars thread 0), or NULL when every thread does. */
LLVMValueRef lw_writer(Lower *L, const TirValue *v);
LLVMValueRef lw_elem_ptr(Lower *L, const TirValue *v, LLVMValueRef storage, LLVMValueRef r);
LLVMValueRef lw_get(Lower *L, const TirValue *v, LLVMValueRef r); /* element r (scalar: v) */
void lw_set(Lower *L, const TirValue *v, LLVMValueRef r, LLVMValueRef x);
LLVMValueRef lw_for_begin(Lower *L, ElemLoop *lp, int n, int unroll, int max_unroll);
LLVMValueRef lw_for_next(Lower *L, ElemLoop *lp);
void lw_copy_tile(Lower *L, const TirValue *v, LLVMValueRef dst, LLVMValueRef src);
/* Every shared-memory access goes through these (the target may check it). */
LLVMValueRef lw_smem_load(Lower *L, LLVMTypeRef t, LLVMValueRef ptr);
void lw_smem_store(Lower *L, LLVMValueRef x, LLVMValueRef ptr);
LLVMBasicBlockRef lw_block(Lower *L, const char *name);
int lw_fail(Lower *L, const TirOp *op, const char *msg);
void lw_bind(Lower *L, const TirValue *v, LLVMValueRef x);
LLVMValueRef lw_val(Lower *L, const TirValue *v);
int lower_block(Lower *L, TirBlock *b);

/* lower_asm.c: inline_asm_elementwise on the targets that take inline assembly */
int lower_inline_asm(Lower *L, TirOp *op);

/* lower_control.c */
int lower_control(Lower *L, TirOp *op);

/* lower_epoch.c: after the kernel's last top-level loop with dots (NVIDIA), the epilogue's
 * values are computed from a thread index read afresh */
int lw_epoch_wanted(const Lower *L, const TirOp *loop);
void lw_new_epoch(Lower *L);

/* lower_elementwise.c */
int lower_elementwise(Lower *L, TirOp *op);
LLVMValueRef lw_cast(Lower *L, LLVMValueRef x, ElemKind from, ElemKind to);
LLVMValueRef lw_to_f32(Lower *L, LLVMValueRef x, ElemKind k);

/* lower_fp8.c: fp8 bits (i8) <-> f32 */
LLVMValueRef lw_fp8_to_f32(Lower *L, LLVMValueRef x, ElemKind k);
LLVMValueRef lw_f32_to_fp8(Lower *L, LLVMValueRef x, ElemKind k);

/* lower_memory.c */
int lower_memory(Lower *L, TirOp *op);

/* lower_atomic.c */
int lower_atomic(Lower *L, TirOp *op);

/* lower_debug.c: print and device_assert records (compiler/debug_abi.h) */
int lower_debug(Lower *L, TirOp *op);

/* lower_shape.c: splat, expand_dims, broadcast, trans, convert_layout */
int lower_shape(Lower *L, TirOp *op);

/* lower_reduce.c */
int lower_reduce(Lower *L, TirOp *op);
LLVMValueRef lw_shuffle_xor(Lower *L, LLVMValueRef x, int mask);
LLVMValueRef lw_shuffle_idx(Lower *L, LLVMValueRef x, LLVMValueRef lane);

/* lower_scan.c */
int lower_scan(Lower *L, TirOp *op);
int lower_flip(Lower *L, TirOp *op);
int lower_sort(Lower *L, TirOp *op);

/* lower_dot.c */
int lower_dot(Lower *L, TirOp *op);
/* lower_smem.c: local_alloc, local_store, local_load, async copies, barriers */
int lower_smem(Lower *L, TirOp *op);
/* A local_load of mma operand fragments whose ldmatrix instructions are emitted by the dot
 * that uses it, K step by K step (fewer live registers, loads beside the mma they feed). */
int lw_fetch_fragments(Lower *L, const TirValue *v, int first_reg, int nregs);
/* lower_mma.c */
int lower_dot_mma(Lower *L, TirOp *op);
/* A matrix instruction's fragment in a dot's linear layout. */
typedef struct Frag {
    const LinearLayout *ll;
    int inst_bits; /* low register bits inside one instruction's fragment */
    uint32_t base; /* register of the fragment's first element for the tile being built */
} Frag;
/* Points f->base at the register whose element sits at tile origin (row, col); -1 when no
 * register of this thread's first tile does with zero instruction bits. */
int lw_frag_at(Frag *f, int row, int col);
/* Registers base + w * kw .. + kw - 1 of v packed into one i32 (kw 16-bit or 8-bit values). */
LLVMValueRef lw_pack_word(Lower *L, TirValue *v, uint32_t base, int w, int kw);
/* How far along dim d the warps' instruction tiles reach before a repetition register. */
int lw_tile_span(const LinearLayout *ll, int inst_bits, int d);
/* lower_wgmma.c: whether the dot runs as Hopper's wgmma (B read from its shared buffer), and
 * its lowering */
int lw_wgmma_dot(Lower *L, const TirOp *dot);
/* Whether that wgmma also reads A from its shared buffer (else from registers). */
int lw_wgmma_reads_a(Lower *L, const TirOp *dot);
/* Whether any dot of the kernel runs as wgmma (then generic shared-memory writes are fenced
 * for the async proxy before each barrier). */
int lw_kernel_uses_wgmma(Lower *L);
int lower_dot_wgmma(Lower *L, TirOp *op);
/* The buffer and base address a local_load left to its wgmma dot reads (lower_smem.c). */
int lw_deferred_buffer(Lower *L, const TirValue *v, TirValue **buf, LLVMValueRef *base);

#endif
