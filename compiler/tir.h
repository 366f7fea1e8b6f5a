/* tir.h: the tile IR. A kernel specialized for one set of const values: static shapes,
 * SSA values, structured control flow (regions), and a layout on every tile value saying
 * which thread owns which element. Built from the AST by compiler/specialize.c, rewritten
 * by passes (compiler/pass_*.c), lowered to LLVM IR by compiler/lower*.c. */
#ifndef TILE_TIR_H
#define TILE_TIR_H
#include <stdint.h>
#include <stdio.h>
#include "arena.h"
#include "diag.h"

enum { TIR_MAX_RANK = 4 };

/* ---- element types and tile types ---- */
typedef enum {
    ET_VOID = 0,
    ET_BOOL,
    ET_I8, ET_I16, ET_I32, ET_I64,
    ET_U8, ET_U16, ET_U32, ET_U64,
    ET_F16, ET_BF16, ET_F32, ET_F64,
    ET_F8E4M3, ET_F8E5M2, /* 8-bit floats (OCP FP8): stored, loaded, converted; arithmetic on
                             them is done in f32 */
    ET_PTR, /* pointer to global memory; see TirType.pointee */
} ElemKind;

typedef struct TirType {
    ElemKind elem;
    ElemKind pointee;         /* ET_PTR: element type pointed to */
    int rank;                 /* 0: scalar */
    int shape[TIR_MAX_RANK];  /* powers of two */
    int buffers;              /* > 0: a shared-memory buffer of that many tiles of this shape
                                 (made by TIR_LOCAL_ALLOC); 0: a value in registers */
} TirType;

int et_is_float(ElemKind k);
int et_is_fp8(ElemKind k);
int et_is_int(ElemKind k); /* signed or unsigned integer, not bool */
int et_is_signed(ElemKind k);
/* The integer of k's width with the other signedness (i32 <-> u32); other kinds as they are. */
ElemKind et_signed_of(ElemKind k);
ElemKind et_unsigned_of(ElemKind k);
int et_bits(ElemKind k);     /* ET_BOOL: 1; ET_PTR: 64 */
int et_bytes(ElemKind k);    /* storage size in memory: bool 1, ptr 8 */
const char *et_name(ElemKind k);       /* "f32", "*" for ET_PTR */
ElemKind et_from_name(const char *name); /* ET_VOID if unknown */

int tir_type_numel(const TirType *t);
int tir_type_equal(const TirType *a, const TirType *b);
/* "f32[64, 128]", "*f16[64]", "i32" into an arena string */
char *tir_type_str(Arena *a, const TirType *t);

/* ---- layouts ----
 * LAYOUT_BLOCKED: a Triton-style blocked encoding of rank `rank`, independent of shape:
 * each thread owns spt[d] contiguous elements along dim d; a warp is tpw[0]*...= threads_per_warp
 * threads arranged tpw[d] along dim d; a program instance is wpc[0]*... = num_warps warps.
 * order[0] is the fastest-varying dim (lanes and registers enumerate it first).
 * Ownership of element coordinates for a value of shape S (rank == layout rank):
 *   spt'_d = min(spt[d], S_d); C_d = spt'_d * tpw[d] * wpc[d]; reps_d = max(1, S_d / C_d)
 *   n_d = spt'_d * reps_d elements per thread along d; registers r enumerate (i_order[0] fastest)
 *   coord_d(i_d) = (rep*C_d + (warp_d*tpw[d] + lane_d)*spt'_d + s) mod S_d,
 *   with rep = i_d / spt'_d, s = i_d % spt'_d, lane_d / warp_d = the lane / warp index split
 *   by `order` (lane_d = (lane / prod_{e before d in order} tpw[e]) % tpw[d]).
 *   Shapes smaller than the coverage replicate elements over threads.
 * Slices: `sliced` is a bitmask of parent dims removed (a reduction's result keeps its
 * operand's layout with the reduced dim sliced away). A value of rank k with a slice layout
 * is owned exactly as the parent layout owns the shape with size 1 inserted at each sliced
 * dim; expand_dims of a sliced dim is therefore free.
 * LAYOUT_MMA (rank 2): the accumulators of mma.sync m16n8 instructions, wpc[0] warps along
 * M and wpc[1] along N (the warp index counts along M first); each warp repeats its 16x8
 * instruction tile over the shape, N-repetitions before M-repetitions in the registers.
 * LAYOUT_MFMA (rank 2): the accumulators of AMD's wave64 MFMA instructions, `inst` x `inst`
 * each (16: v_mfma_f32_16x16x16, lane = col + 16 (row / 4), register row % 4; 32:
 * v_mfma_f32_32x32x8, lane = col + 32 ((row / 4) % 2), register 4 (row / 8) + row % 4);
 * warps and repetitions as for LAYOUT_MMA.
 * LAYOUT_DOT_OPERAND (rank 2): operand op_idx (0: A [M, K], 1: B [K, N]) of a dot whose
 * result has the parent encoding `parent` (LAYOUT_MMA or LAYOUT_MFMA; wpc and inst as
 * above). Under LAYOUT_MMA, `kwidth` elements per 32-bit register (f16/bf16 2, i8 4, tf32 1):
 * the PTX fragments of mma.sync, repeated along K before M (A) or N before K (B). Under
 * LAYOUT_MFMA, kwidth 4 consecutive K elements per lane (lane = row or col + inst (k / 4)).
 * Warps along the other dim of the result hold copies.
 * `transposed` (rank 2): the encoding evaluated at the transposed shape, dims swapped back
 * (how `trans` relabels a non-blocked layout).
 * LAYOUT_LINEAR: an explicit linear layout `ll` (for one shape), for values no encoding
 * describes (a reduction's per-warp partial results).
 * LAYOUT_SHARED: where a shared-memory buffer keeps each element: row-major over the dims
 * with order[0] innermost, in chunks of `vec` elements along it; the chunk index is XORed
 * with (row / per_phase) % max_phase, rows being the flattened outer dims (a swizzle that
 * spreads both row- and column-wise accesses over the 32 banks). With `panel` P, the
 * contiguous dim is cut into panels of P elements stored one after the other, each swizzled
 * as a buffer of its own (the layout wgmma's matrix descriptors read, compiler/smem_layout.h).
 * With `pad` (then there is no swizzle and no panel), each row of the contiguous dim is
 * followed by `pad` unused elements: rows of R 16-byte chunks start R + 1 chunks apart, so 8
 * consecutive rows of one chunk column still fall in different banks, and the offsets of one
 * thread's accesses differ by constants (see smem_layout.h).
 * LAYOUT_SCALAR: rank-0 values, uniform across the program's threads (plain LLVM values).
 * Every encoding is evaluated into a linear layout by compiler/layout.c (layout_ll), the only
 * form lowering reads. */
typedef enum {
    LAYOUT_SCALAR = 0, LAYOUT_BLOCKED, LAYOUT_MMA, LAYOUT_DOT_OPERAND, LAYOUT_LINEAR,
    LAYOUT_SHARED, LAYOUT_MFMA
} LayoutKind;

struct LinearLayout;

typedef struct TirLayout {
    LayoutKind kind;
    int rank; /* parent rank (value rank + number of sliced dims) */
    int spt[TIR_MAX_RANK], tpw[TIR_MAX_RANK], wpc[TIR_MAX_RANK], order[TIR_MAX_RANK];
    unsigned sliced; /* bitmask over parent dims */
    LayoutKind parent; /* LAYOUT_DOT_OPERAND: the dot result's encoding kind */
    int op_idx, kwidth; /* LAYOUT_DOT_OPERAND */
    int inst;           /* LAYOUT_MFMA (and dot operands under it): 16 or 32 */
    int transposed;
    int vec, per_phase, max_phase;  /* LAYOUT_SHARED (with order) */
    int panel;                      /* LAYOUT_SHARED: elements per panel of order[0] (0: none) */
    int pad;                        /* LAYOUT_SHARED: unused elements after each row (0: none) */
    const struct LinearLayout *ll;  /* LAYOUT_LINEAR */
} TirLayout;

int tir_layout_equal(const TirLayout *a, const TirLayout *b);
/* A copy of l in arena a, for a value's or buffer's layout; NULL when out of memory. */
const TirLayout *tir_layout_new(Arena *a, TirLayout l);
/* "#blocked<spt=[1,4] tpw=[8,4] wpc=[4,1] order=[1,0]>", "#mma<warps=[4,1]>",
 * "#dot<op=0 kwidth=2 #mma<warps=[4,1]>>" */
char *tir_layout_str(Arena *a, const TirLayout *l);

/* ---- values and operations ---- */
typedef struct TirOp TirOp;
typedef struct TirBlock TirBlock;

typedef struct TirValue {
    int id;                /* unique within the kernel; printed as %id */
    TirType type;
    const TirLayout *layout; /* set by the layout pass; NULL before it */
    TirOp *def;            /* defining op, or NULL for a block argument */
    TirBlock *block;       /* block argument: its block */
    int index;             /* result index in def, or argument index in block */
    const char *name;      /* source variable name for dumps, may be NULL */
} TirValue;

typedef enum {
    /* leaves */
    TIR_CONST,        /* attr.i (ints, bool) or attr.f (floats) -> scalar of `type` */
    TIR_PARAM,        /* attr.i = index of the kernel's runtime parameter -> scalar */
    TIR_PROGRAM_ID,   /* attr.i = axis -> i32 */
    TIR_NUM_PROGRAMS, /* attr.i = axis -> i32 */
    TIR_ARANGE,       /* attr.i = start, attr.i2 = end -> i32[end-start] */
    /* shape ops (operands and results keep the element type) */
    TIR_SPLAT,        /* scalar -> tile of result shape */
    TIR_EXPAND_DIMS,  /* attr.i = axis where a dim of size 1 is inserted */
    TIR_BROADCAST,    /* tile with some dims of size 1 -> result shape (same rank) */
    TIR_TRANS,        /* rank-2 swap of dims */
    TIR_CONVERT_LAYOUT, /* same type, different layout (inserted by the layout pass) */
    TIR_RESHAPE,      /* the same elements in row-major order, another shape */
    TIR_PERMUTE,      /* result dim d is operand dim perm[d]; attr.i = perm, 4 bits per dim */
    TIR_JOIN,         /* a, b of one shape -> [..., 2]: a at index 0 of the new last dim, b at 1 */
    TIR_SPLIT,        /* x [..., 2] -> (x[..., 0], x[..., 1]): two results */
    TIR_HINT,         /* x -> x, with a fact the axis analysis takes: attr.i = TirHint, attr.i2 =
                         log2 of the value per dim, 5 bits each */
    /* elementwise; all operands have the result's shape (the builder inserts broadcasts) */
    TIR_BINARY,       /* attr.i = TirBinOp; operands of one type */
    TIR_CMP,          /* attr.i = TirCmp; operands of one type; result bool */
    TIR_UNARY,        /* attr.i = TirUnOp */
    TIR_SELECT,       /* cond (bool), a, b */
    TIR_CAST,         /* operand -> result type's element type (any pair of kinds, not ptr);
                         attr.i = CAST_BITS: the same bits reinterpreted (equal widths) */
    TIR_FMA,          /* a*b+c, floats */
    TIR_ADDPTR,       /* ptr (ET_PTR), offset (integer, in elements) -> ptr */
    /* memory */
    TIR_LOAD,         /* ptr [, mask [, other]] (nops = 1..3; other present only with mask);
                         attr.i = the access's hints (TirCache, TirEvict below; 0: none) */
    TIR_STORE,        /* ptr, value [, mask]; no results; attr.i = hints as TIR_LOAD's */
    TIR_PREFETCH,     /* ptr [, mask]: asks the cache of level attr.i (1: L1, 2: L2) for the
                         addressed lines; no results, never faults, may do nothing */
    TIR_ATOMIC,       /* ptr, value [, cmp (ATOM_CAS only)] [, mask] -> the old values, of
                         ptr's shape; attr.i = TirAtomic, attr.i2 = TirSem | TirScope << 4.
                         Each element is updated once, by the thread that owns it */
    /* shared memory (added by passes after layouts: compiler/pass_smem*.c) */
    TIR_LOCAL_ALLOC,  /* -> a shared buffer (type.buffers > 0, LAYOUT_SHARED); attr.i = its
                         byte offset in the program's shared memory (-1 until allocated) */
    TIR_LOCAL_STORE,  /* buf, index (i32), value: writes value into buffer `index` */
    TIR_LOCAL_LOAD,   /* buf, index (i32) -> the tile of buffer `index`, in the result's layout */
    TIR_ASYNC_COPY,   /* buf, index, ptr [, mask]: starts copying global memory into buffer
                         `index` (masked-off elements become 0); no results. attr.i = 1: a
                         ring write of the pipeliner (its stage is not one this iteration
                         reads; see pass_barriers.c) */
    TIR_ASYNC_COMMIT, /* closes the group of async copies this thread started */
    TIR_ASYNC_WAIT,   /* attr.i = groups that may stay in flight; the others have landed */
    TIR_BARRIER,      /* all threads of the program; placed by compiler/pass_barriers.c, or
                         the user's debug_barrier() (attr.i = TIR_BARRIER_USER), which also
                         orders the program's global-memory accesses and which no pass removes
                         or moves */
    TIR_ASSUME,       /* cond (scalar bool): the program may take it as true; no results */
    TIR_INLINE_ASM,   /* the kernel's inline assembly attr.i (TirKernel.asms) run over the
                         elements of its operands (all of the results' shape, or all scalars):
                         one result per output type; attr.i2 = elements per run (pack) |
                         TIR_ASM_PURE. Elementwise: every result has the operands' layout */
    /* debugging: records in the launch's debug buffer (compiler/debug_abi.h) */
    TIR_PRINT,        /* values of one shape: each element's values are recorded, once, by its
                         owner (scalars: thread 0); attr.i = the kernel's debug site */
    TIR_ASSERT,       /* cond (bool, any shape): the first failing element of the launch is
                         recorded; attr.i = the site. The builder places it in the branch
                         taken when some element is false, before a return */
    /* cross-element */
    TIR_REDUCE,       /* attr.i = TirReduce, attr.i2 = axis; sum/max/min keep the element type
                         (the builder casts to f32 first for f16 sums); argmax/argmin -> i32 */
    TIR_SCAN,         /* inclusive scan along attr.i2 & 15 (reversed when attr.i2 >> 4 & 1):
                         attr.i = TirScan; same shape, the result's element type */
    TIR_FLIP,         /* x with the coordinates along attr.i2 & 15 reversed */
    TIR_SORT,         /* x sorted along attr.i2 & 15 (descending when attr.i2 >> 4 & 1); the
                         results keep the first (their size along it) elements (topk): the
                         values, and with a second result their i32 indices along the dim */
    TIR_DOT,          /* a [M,K], b [K,N], acc [M,N] -> [M,N] of acc's type; attr.i =
                         DotPrecision (DOT_TF32: f32 inputs may be rounded to tf32) */
    /* structured control flow */
    TIR_FOR,          /* attr.i: the loop's num_stages (0: the kernel's);
                         operands: lo, hi, step, inits...; regions[0] body with args
                         (iv, carried...) ending in TIR_YIELD; results = final carried values.
                         iv has lo's type (i32 or i64). */
    TIR_WHILE,        /* operands: inits...; regions[0] "before" with args (carried...) ending
                         in TIR_CONDITION(cond, carried...); regions[1] "body" with args
                         (carried...) ending in TIR_YIELD; results = carried values on exit */
    TIR_IF,           /* operands: cond (scalar bool); regions[0] then, regions[1] else,
                         each ending in TIR_YIELD of the results (or TIR_RETURN / TIR_BREAK /
                         TIR_CONTINUE when that path leaves) */
    TIR_YIELD,        /* terminator: operands are the region's results */
    TIR_CONDITION,    /* terminator of a while's before-region: cond, carried... */
    TIR_BREAK,        /* terminator: leave the innermost loop; operands = carried values */
    TIR_CONTINUE,     /* terminator: next iteration; operands = carried values */
    TIR_RETURN,       /* terminator: leave the kernel */
    TIR_OPCODE_COUNT
} TirOpcode;

typedef enum {
    BIN_ADD, BIN_SUB, BIN_MUL, BIN_DIV, BIN_REM, /* int div/rem truncate; float rem = fmod */
    BIN_AND, BIN_OR, BIN_XOR, BIN_SHL, BIN_SHR,  /* bool or int; SHR arithmetic for signed */
    BIN_MIN, BIN_MAX,                            /* float min/max propagate NaN */
    BIN_POW, BIN_ATAN2, BIN_HYPOT, BIN_COPYSIGN, /* floats only: C's pow, atan2, ... */
} TirBinOp;

typedef enum { CMP_LT, CMP_LE, CMP_GT, CMP_GE, CMP_EQ, CMP_NE } TirCmp;

typedef enum {
    UN_NEG, UN_NOT /* bool or bitwise int */, UN_ABS,
    UN_EXP, UN_EXP2, UN_LOG, UN_LOG2, UN_SQRT, UN_RSQRT, UN_SIN, UN_COS, /* floats only */
    UN_FLOOR, UN_CEIL, UN_TRUNC, UN_TANH, UN_ERF,                           /* floats only */
    UN_RINT /* to nearest, ties to even */, UN_LOG1P, UN_EXPM1,              /* floats only */
    UN_TAN, UN_ATAN, UN_ASIN, UN_ACOS, UN_SINH, UN_COSH, UN_LOG10,           /* floats only */
    UN_ASINH, UN_ACOSH, UN_ATANH, UN_CBRT, UN_EXP10, UN_ERFINV,             /* floats only */
    UN_POPC, UN_CLZ, UN_FFS, UN_BREV,                                       /* integers only */
} TirUnOp;

typedef enum { DOT_IEEE = 0, DOT_TF32 } DotPrecision;

/* TIR_INLINE_ASM's attr.i2: the pack in the low byte, and whether the assembly is pure (has no
 * effect but its results: it may be removed when they are unused, or run more than once). */
enum { TIR_ASM_PURE = 1 << 8 };
static inline int tir_asm_pack(int64_t attr) { return (int)(attr & 255); }

enum { TIR_BARRIER_USER = 1 }; /* TIR_BARRIER's attr.i: written as debug_barrier() */
enum { CAST_VALUE = 0, CAST_BITS = 1 }; /* TIR_CAST's attr.i: convert, or bitcast() */

typedef enum { HINT_MULTIPLE_OF, HINT_MAX_CONTIGUOUS } TirHint;

/* Hints of a load or store (Triton's cache_modifier=, eviction_policy=, volatile=), in attr.i:
 * the cache operator in bits 0-3, the eviction policy in bits 4-7, TIR_MEM_VOLATILE. */
typedef enum { CACHE_NONE, CACHE_CA, CACHE_CG, CACHE_CV, CACHE_CS, CACHE_WB, CACHE_WT } TirCache;
typedef enum { EVICT_NONE, EVICT_FIRST, EVICT_LAST, EVICT_NORMAL } TirEvict;
enum { TIR_MEM_VOLATILE = 1 << 8 };
static inline TirCache tir_mem_cache(int64_t hints) { return (TirCache)(hints & 15); }
static inline TirEvict tir_mem_evict(int64_t hints) { return (TirEvict)((hints >> 4) & 15); }
/* Whether hints ask for a cache operator or an eviction policy (volatile aside). */
static inline int tir_mem_hinted(int64_t hints) { return tir_mem_cache(hints) != CACHE_NONE || tir_mem_evict(hints) != EVICT_NONE; }
/* Their PTX spellings (".ca" ... ".wt"; "evict_first" ...; "" for none), also the IR's. */
const char *tir_mem_cache_name(TirCache c);
const char *tir_mem_evict_name(TirEvict e);
/* A volatile load: read each time it runs, never moved, repeated or prefetched. */
int tir_op_is_volatile(const TirOp *op);

typedef enum { ATOM_ADD, ATOM_MAX, ATOM_MIN, ATOM_AND, ATOM_OR, ATOM_XOR, ATOM_XCHG,
               ATOM_CAS } TirAtomic;
typedef enum { SEM_RELAXED, SEM_ACQUIRE, SEM_RELEASE, SEM_ACQ_REL } TirSem;
typedef enum { SCOPE_CTA, SCOPE_GPU, SCOPE_SYS } TirScope;
/* TIR_ATOMIC: the index of its mask operand; -1: no mask. */
int tir_atomic_mask_index(const TirOp *op);

/* argmax/argmin give the smallest index among equal extremes, the _LAST kinds the largest */
typedef enum { RED_SUM, RED_MAX, RED_MIN, RED_ARGMAX, RED_ARGMIN, RED_ARGMAX_LAST,
               RED_ARGMIN_LAST } TirReduce;
static inline int tir_reduce_is_arg(TirReduce k) { return k >= RED_ARGMAX; }
static inline int tir_reduce_is_max(TirReduce k) {
    return k == RED_MAX || k == RED_ARGMAX || k == RED_ARGMAX_LAST;
}
typedef enum { SCAN_ADD, SCAN_MUL } TirScan;

struct TirBlock {
    TirOp *first, *last;
    TirValue **args;
    int nargs;
    TirOp *parent; /* op owning this region; NULL for the kernel body */
};

struct TirOp {
    TirOpcode code;
    SrcLoc loc;
    TirValue **ops;  /* operands */
    int nops;
    TirValue **results;
    int nres;
    TirBlock **regions;
    int nregions;
    struct { int64_t i, i2; double f; } attr;
    TirOp *prev, *next;
    TirBlock *block; /* containing block */
};

typedef enum { KP_POINTER, KP_SCALAR } KernelParamKind;

/* A print or device_assert of the kernel: what the runtime needs to report its records. */
typedef enum { DEBUG_ASSERT = 'A', DEBUG_PRINT = 'P' } TirDebugKind;
enum { TIR_DEBUG_MAX_VALUES = 5 };
typedef struct TirDebugSite {
    TirDebugKind kind;
    SrcLoc loc;
    const char *text;  /* the prefix of a print; the message and condition of an assert */
    int nvalues;       /* print: values per element */
    char kinds[TIR_DEBUG_MAX_VALUES + 1]; /* per value: 'f' f32 (or narrower), 'd' f64,
                                             'i' signed, 'u' unsigned, 'b' bool, 'p' pointer */
    int rank, shape[TIR_MAX_RANK]; /* of the values (assert: of the condition) */
} TirDebugSite;

typedef struct TirParam {
    const char *name;
    TirType type;          /* scalar type (ET_PTR with pointee for pointers) */
    int source_index;      /* index among the kernel's declared params (consts included) */
    int div;               /* known at launch: the largest power of two, at most 16, that divides
                              the pointer's address / the integer (0 or 1: nothing known) */
    int one;               /* known at launch: the integer is 1 (its TIR_PARAM became a const) */
} TirParam;

typedef struct TirKernel {
    Arena *arena;
    const char *name;       /* kernel name */
    const char *symbol;     /* mangled symbol for the specialization */
    TirParam *params;       /* runtime (non-const) params, in declaration order */
    int nparams;
    TirBlock *body;
    int num_warps;          /* from the const num_warps (1 on the host target) */
    int num_stages;
    int waves_per_eu;       /* AMD: the const `waves_per_eu` if the kernel has one (0: none) */
    int mfma_size;          /* AMD: the const `mfma_size`, 16 or 32 (0: the compiler picks) */
    int threads_per_warp;   /* from the target: 32 NVPTX, 1 host */
    int next_value_id;
    int smem_bytes;         /* shared memory per program instance, set by lowering */
    int smem_alloc_bytes;   /* what local_alloc buffers take (pass_smem_alloc.c); lowering's
                               scratch goes after it */
    const struct AxisInfo *axis; /* by value id (compiler/analysis_axis.h); NULL: unknown */
    TirDebugSite *sites;    /* prints and device_asserts; with any, the kernel takes one more
                               param after its own: the debug buffer */
    int nsites;
    struct TirAsm *asms;    /* inline assembly of TIR_INLINE_ASM ops, by attr.i */
    int nasms;
} TirKernel;

/* A kernel's inline assembly (inline_asm_elementwise): its text and LLVM constraint string,
 * for the target's assembler; $0... name the outputs' registers, then the inputs'. */
typedef struct TirAsm {
    const char *text, *constraints;
    SrcLoc loc;
} TirAsm;
/* Adds one to k->asms; its index, or -1 when out of memory. */
int tir_kernel_add_asm(TirKernel *k, const char *text, const char *constraints, SrcLoc loc);
/* The registers one run of inline assembly takes for `pack` elements of kind k: one each of 32
 * bits or more; narrower ones packed, 32 bits a register (a run of fewer: one narrower one). */
int tir_asm_regs(ElemKind k, int pack);

/* ---- building ---- */
TirKernel *tir_kernel_new(Arena *a, const char *name);
TirBlock *tir_block_new(TirKernel *k, int nargs, const TirType *arg_types);
/* Creates an op at the end of `b` with `nres` results of the given types. */
TirOp *tir_op_append(TirKernel *k, TirBlock *b, TirOpcode code, SrcLoc loc,
                     TirValue **ops, int nops, const TirType *res_types, int nres);
/* Inserts a fresh op before `before` (in before's block). */
TirOp *tir_op_insert_before(TirKernel *k, TirOp *before, TirOpcode code, SrcLoc loc,
                            TirValue **ops, int nops, const TirType *res_types, int nres);
/* tir_op_insert_before, or tir_op_append to `b` when `before` is NULL. */
TirOp *tir_op_insert_at(TirKernel *k, TirBlock *b, TirOp *before, TirOpcode code, SrcLoc loc,
                        TirValue **ops, int nops, const TirType *res_types, int nres);
void tir_op_add_regions(TirKernel *k, TirOp *op, int nregions);
void tir_op_remove(TirOp *op);
/* Unlinks op and links it again just before `before` (in before's block). */
void tir_op_move_before(TirOp *op, TirOp *before);
/* Adds a value carried by a TIR_FOR: `init` enters it, a new body argument (returned) holds
 * it in each iteration, the body's yield passes it on unchanged (point that operand, the
 * yield's last, at the next value), and the loop gets one more result. */
TirValue *tir_for_add_carried(TirKernel *k, TirOp *loop, TirValue *init);
/* Removes carried value i of a TIR_FOR (its init, body argument, yield operand and result);
 * the caller makes sure nothing uses the argument or the result any more. */
void tir_for_remove_carried(TirOp *loop, int i);
/* Whether v is computed inside block b or a region nested in it (block arguments included). */
int tir_defined_in(const TirValue *v, const TirBlock *b);
/* Whether op writes global memory (a store or an atomic). */
int tir_op_writes_memory(const TirOp *op);
/* Whether b (or a region nested in it) stores to global memory. */
int tir_block_stores(const TirBlock *b);
/* Replaces every use of `from` inside `b` (recursively through regions) by `to`. */
void tir_replace_uses(TirBlock *b, TirValue *from, TirValue *to);
/* Adds to uses[id] the number of operands naming value id in b and its regions. */
void tir_count_uses(const TirBlock *b, int *uses);

/* ---- walking and printing ---- */
const char *tir_opcode_name(TirOpcode c);
/* Dumps the kernel (tilec --emit=tir): one op per line, regions indented, types and, when
 * set, layouts. Deterministic, for golden tests. */
void tir_print(const TirKernel *k, FILE *out);
/* Structural checks (terminators, operand shapes/types, layouts set when `need_layouts`);
 * reports to diags with the op's location; returns the number of problems. */
int tir_verify(const TirKernel *k, int need_layouts, Diags *diags);

#endif
