/* spec.h: internals of specialization, the stage that turns a kernel's AST plus its const
 * values into tile IR. It is also where types and shapes are checked: every value's shape
 * is known here. Files: specialize.c (kernels, statements, control flow, helpers),
 * spec_expr.c (operators, promotion, broadcasting), spec_builtins.c (built-in functions). */
#ifndef TILE_SPEC_H
#define TILE_SPEC_H
#include "ast.h"
#include "driver.h"
#include "tir.h"

typedef enum {
    V_ERROR,  /* an error was reported already: stay silent */
    V_VOID,   /* no value (a store, a helper without return) */
    V_CONST,  /* compile-time scalar: ct, i or f, weak for literals */
    V_TILE,   /* run-time value (scalar or tile) */
    V_TYPE,   /* a type name used as a value: ct */
    V_LIST,   /* [a, b, ...] */
    V_TUPLE,  /* several results of a helper */
    V_NONE,   /* None in an index */
    V_SLICE,  /* : in an index */
    V_BLOCKPTR, /* make_block_ptr(): items as spec_blockptr.c lays them out, i its rank */
} ValKind;

typedef struct Val {
    ValKind kind;
    TirValue *v;
    ElemKind ct;
    int weak;
    int64_t i;
    double f;
    struct Val *items;
    int nitems;
} Val;

typedef struct Binding {
    const char *name;
    Val val;
    SrcLoc set_at; /* the assignment that gave val (file NULL: its let or none) */
    struct Binding *next;
} Binding;

typedef struct Scope {
    Binding *vars;
    struct Scope *parent;
} Scope;

/* A value a loop or branch carries: a variable's, or part `part` (spec_bp_part) of the block
 * pointer it holds (-1: the whole value). */
typedef struct Slot {
    Binding *b;
    int part;
} Slot;

typedef struct LoopCtx {
    Scope *scope;          /* holds the carried variables (bound to block args) */
    Slot *slots;           /* the carried values, bound in that scope */
    int nslots;
    TirType *types;
    Val *entry;            /* per slot: the variable's value where the body starts */
} LoopCtx;

typedef struct Spec {
    Arena *arena;
    Diags *diags;
    const Module *module;
    const Func *kernel;
    TirKernel *k;
    TirBlock *block;   /* where ops are appended */
    int terminated;    /* the current block ended (return, break, continue) */
    Scope *scope;
    LoopCtx *loop;
    int inline_depth;
    int static_depth;   /* static_range bodies being unrolled around the statement */
    long inlined_stmts; /* statements specialized inside inlined helpers or unrolled loops */
    int over_budget;    /* ... passed SPEC_INLINE_BUDGET: that was reported, stop */
    Val *ret;          /* the running helper's return value slot */
    int runtime_ifs;   /* branches of run-time ifs around the statement, in the running helper */
} Spec;

/* Helpers are inlined at every call, so f1 calling f0 twice, f2 calling f1 twice, ... grows
 * exponentially: a kernel stops specializing once its inlined helpers reach this many
 * statements (docs/language.md names the limit). */
enum { SPEC_INLINE_BUDGET = 100000 };

/* specialize.c */
Binding *spec_lookup(Spec *s, const char *name);
void spec_bind(Spec *s, const char *name, Val v);

/* spec_expr.c */
Val spec_expr(Spec *s, const Expr *e);
Val val_error(void);
int64_t spec_f2i(double f);
Val val_const_int(ElemKind ct, int64_t i, int weak);
Val val_const_float(ElemKind ct, double f, int weak);
Val val_tile(TirValue *v);
int val_is_value(const Val *v); /* V_CONST or V_TILE */
int val_rank(const Val *v);
const int *val_shape(const Val *v);
ElemKind val_elem(const Val *v);
char *val_type_str(Spec *s, const Val *v);
/* Materializes a value with the given element type and shape (casting, expanding,
 * broadcasting as needed); reports and returns NULL when the shape cannot broadcast. */
TirValue *spec_materialize(Spec *s, Val v, ElemKind et, int rank, const int *shape, SrcLoc loc);
TirValue *spec_as_tile(Spec *s, Val v, SrcLoc loc); /* consts become scalars of their type */
/* v with a dim of size 1 inserted at axis; NULL after a diagnostic (rank past the limit). */
TirValue *spec_expand_dims(Spec *s, TirValue *v, int axis, SrcLoc loc);
TirValue *spec_cast(Spec *s, TirValue *v, ElemKind et, SrcLoc loc);
/* Common shape of several values under NumPy broadcasting; 0 and a diagnostic if none. */
int spec_broadcast_shape(Spec *s, const Val *vals, int n, int *rank, int *shape, SrcLoc loc);
ElemKind spec_promote(const Val *a, const Val *b);
/* Tiles hold at most this many elements (a GPU program instance keeps them in registers). */
enum { SPEC_MAX_NUMEL = 1 << 20 };
/* Helpers take at most this many parameters (sema reports more at the definition). */
enum { SPEC_MAX_HELPER_PARAMS = AST_MAX_HELPER_PARAMS };
int spec_check_numel(Spec *s, int rank, const int *shape, SrcLoc loc);
TirValue *spec_emit(Spec *s, TirOpcode code, SrcLoc loc, TirValue **ops, int nops, TirType t);
TirValue *spec_const_scalar(Spec *s, ElemKind et, int64_t i, double f, SrcLoc loc);
/* Constant a as a value of type et, as `a as et` gives it. */
Val spec_const_as(Spec *s, Val a, ElemKind et, SrcLoc loc);
/* A u64 of these bits: a constant up to INT64_MAX (u64 constants stop there), else a run-time
 * value holding them, never folded as a signed number. */
Val spec_u64_value(Spec *s, uint64_t bits, SrcLoc loc);
Val spec_binary(Spec *s, OpKind op, Val a, Val b, SrcLoc loc);
int spec_const_int(Spec *s, const Expr *e, int64_t *out); /* compile-time integer */
TirType tir_type_make(ElemKind et, int rank, const int *shape);
const char *spec_range_str(Spec *s, ElemKind et); /* "-128 to 127" */

/* spec_random.c: Philox4x32 of (seed, offset) with `rounds` rounds: the first u32 word
 * (RANDOM_INT), a uniform f32 in [0, 1) from it, or a normal f32 from the first two; with
 * `four`, all four words, uniforms or normals (Triton's randint4x, rand4x, randn4x) as a tuple
 * whose first member is the one-value form's */
typedef enum { RANDOM_INT, RANDOM_UNIFORM, RANDOM_NORMAL } SpecRandom;
Val spec_random(Spec *s, SpecRandom kind, int four, Val seed, Val offset, int rounds, SrcLoc at);
/* philox(seed, c0, c1, c2, c3): Philox4x32 of the counter (c0, c1, c2, c3) (integers taken as
 * u32, broadcast to one shape) under seed's key: its four u32 words, a tuple */
Val spec_philox(Spec *s, Val seed, const Val counter[4], int rounds, SrcLoc at);

/* spec_debug.c: print(prefix, values...) (values broadcast to one shape) and
 * device_assert(cond, msg) (msg may be NULL) */
Val spec_print(Spec *s, const char *prefix, const Val *vals, const Expr *const *exprs, int n,
               SrcLoc at);
Val spec_device_assert(Spec *s, Val cond, const Expr *cond_expr, const char *msg, SrcLoc at);

/* spec_combine.c: reduce and associative_scan with helper f as the combine function, along
 * axis of the k tiles x[0..k) of one shape (a tuple: f takes the k members of each operand and
 * gives k results; one tile when k is 1) (reduce: axis -1 reduces every element; keep_dims
 * keeps the reduced dims as size 1); reverse scans from the end, combining in index order.
 * The result: one tile, or a V_TUPLE of k. */
enum { SPEC_TUPLE_MAX = 8 };
Val spec_reduce_with(Spec *s, TirValue *const *x, int k, int axis, const Func *f, int keep, SrcLoc at);
Val spec_scan_with(Spec *s, TirValue *const *x, int k, int axis, const Func *f, int reverse, SrcLoc at);
/* spec_reduce_with with a binary operator (OP_BITXOR: xor_sum) instead of a helper */
Val spec_reduce_op(Spec *s, TirValue *x, int axis, OpKind op, int keep, SrcLoc at);
/* cumsum (OP_ADD) and cumprod (OP_MUL) from shape ops, and flip: where the in-thread TIR_SCAN
 * and TIR_FLIP, which hold the axis whole in each thread, would need more than
 * SPEC_IN_THREAD_AXIS registers per thread on a GPU-like target (spec_axis_in_thread: 0; the
 * host target, one thread per program, always holds it). */
enum { SPEC_IN_THREAD_AXIS = 64 };
int spec_axis_in_thread(const Spec *s, const TirValue *x, int axis);
Val spec_scan_op(Spec *s, TirValue *x, int axis, OpKind op, int reverse, SrcLoc at);
Val spec_flip_rows(Spec *s, TirValue *x, int axis, SrcLoc at);
/* spec_shape.c: x viewed with another shape of as many elements (TIR_RESHAPE) */
TirValue *spec_reshape(Spec *s, TirValue *x, int rank, const int *shape, SrcLoc at);
/* x with its dims reordered: result dim d is x's dim perm[d] (x itself for the identity) */
TirValue *spec_permute(Spec *s, TirValue *x, const int *perm, SrcLoc at);
/* x with `axis` last and its other dims flattened, in their order: [M, n]; and back from
 * [M, n'] to the shape of `like` with that axis n' long. */
TirValue *spec_to_rows(Spec *s, TirValue *x, int axis, SrcLoc at);
TirValue *spec_from_rows(Spec *s, TirValue *r, const TirType *like, int axis, SrcLoc at);
/* a's rows, then b's, along dim 0 (tiles of one type): [2 * n0, ...] */
TirValue *spec_cat(Spec *s, TirValue *a, TirValue *b, SrcLoc at);
/* spec_triton.c: Triton's swizzle2d (v: i, j, size_i, size_j, size_g, integers; two results),
 * histogram (x an integer tile, bins a power of two, mask NULL or bool of x's shape), gather
 * (index of src's rank, its dims other than axis src's; src of at most 3 dims) */
Val spec_swizzle2d(Spec *s, const Val *v, SrcLoc at);
Val spec_histogram(Spec *s, TirValue *x, int bins, TirValue *mask, SrcLoc at);
/* spec_dot_batched.c: dot of [B, M, K] and [B, K, N] tiles plus acc [B, M, N]: one rank-2 dot
 * (TIR_DOT, attr.i = precision) per batch index. */
Val spec_dot_batched(Spec *s, TirValue *x, TirValue *y, TirValue *acc, int64_t precision, SrcLoc at);
Val spec_gather(Spec *s, TirValue *src, TirValue *index, int axis, SrcLoc at);
/* spec_sort.c: sort (desc: descending; want_idx: the i32 positions instead), keeping the
 * first kk (0: all) along `axis`, as a bitonic network of shape ops across threads. */
Val spec_sort_rows(Spec *s, TirValue *x, int axis, int desc, int want_idx, int kk, SrcLoc at);

/* spec_builtins.c: a builtin call's arguments, bound to its named slots (V_VOID: not given) */
typedef struct Args {
    const Expr *call;
    Val v[8];
    const Expr *e[8];
    int n; /* number of filled slots */
} Args;
int spec_is_builtin(const char *name);
Val spec_builtin(Spec *s, const Expr *call);
typedef Val (*BuiltinFn)(Spec *s, Args *a);
/* spec_asm.c: inline_asm_elementwise */
Val spec_inline_asm(Spec *s, Args *a);
/* Argument checks the built-ins share (0 or ET_VOID after a diagnostic): slot i holds a value;
 * an integer constant; a type name (dflt when not given); slots 0 .. n-1 numbers, not
 * pointers. spec_as_float: v as a float tile or scalar. */
int spec_need_value(Spec *s, Args *a, int i);
int spec_const_arg(Spec *s, Args *a, int i, int64_t *out);
ElemKind spec_type_arg(Spec *s, Args *a, int i, ElemKind dflt);
/* Slot i as a compile-time bool (argument `what`) into *out; 0 after a diagnostic. */
int spec_bool_arg(Spec *s, Args *a, int i, const char *what, int *out);
int spec_numbers(Spec *s, Args *a, int n);
TirValue *spec_as_float(Spec *s, Val v, SrcLoc loc);
/* spec_math.c: the math built-ins' code, or NULL for another name. */
BuiltinFn spec_math_builtin(const char *name);

/* spec_blockptr.c: block pointers (Triton's make_block_ptr), lowered here to scalars: a base
 * pointer and, per dim, a shape, a stride, an offset (i32 or i64) and a block size. A load or
 * store of one is a load or store of a pointer tile with a mask, so later passes see nothing
 * new. */
Val spec_make_block_ptr(Spec *s, Args *a);
Val spec_advance(Spec *s, Args *a);
/* load(bp, boundary_check=, padding_option=) and store(bp, value, boundary_check=): slots
 * ptr, mask, other, boundary_check, padding_option (load) or ptr, value, mask,
 * boundary_check (store). */
Val spec_load_block(Spec *s, Args *a);
Val spec_store_block(Spec *s, Args *a);
int spec_bp_rank(const Val *bp);
TirType spec_bp_type(const Val *bp); /* its block: element type and block shape */
/* The components of a block pointer that may change (its base, shapes, strides and
 * offsets), as spec_bp_part numbers them: 1 + 3 * rank of them. */
int spec_bp_nparts(const Val *bp);
enum { SPEC_BP_MAX_PARTS = 1 + 3 * TIR_MAX_RANK }; /* spec_bp_nparts at the largest rank */
Val spec_bp_part(const Val *bp, int i);
/* bp with part i replaced (a new value: block pointers are never changed in place). */
Val spec_bp_with_part(Spec *s, const Val *bp, int i, Val part);
/* Whether part i is an offset (what advance() changes: a loop carries those). */
int spec_bp_is_offset(const Val *bp, int i);
/* Whether two block pointers have the same element type and block shape. */
int spec_bp_same_block(const Val *a, const Val *b);

/* specialize.c: helper calls */
Val spec_call_helper(Spec *s, const Func *f, const Expr *call);
/* Inlines helper f on values (a combine function called by the compiler): args as its first
 * parameters, the rest their defaults. */
Val spec_apply_helper(Spec *s, const Func *f, const Val *args, int nargs, SrcLoc loc);

/* The entry point: builds the kernel for the given const values (all resolved). */
TirKernel *spec_kernel(Arena *a, const Module *m, const Func *f, const ConstBinding *consts,
                       int nconsts, int threads_per_warp, Diags *diags);

#endif
