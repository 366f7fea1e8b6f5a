/* driver.h: the compile pipeline, one stage after another (compiler/driver.c lists them):
 * source -> tokens -> AST -> sema -> specialized tile IR -> passes -> LLVM IR -> PTX / host
 * object. Used by tilec (which can stop after any stage and dump it) and by the runtime. */
#ifndef TILE_DRIVER_H
#define TILE_DRIVER_H
#include <stdint.h>
#include <stdio.h>
#include "arena.h"
#include "ast.h"
#include "diag.h"
#include "imports.h"
#include "tir.h"

#define TILE_COMPILER_VERSION "0.1.0"

typedef enum {
    STAGE_TOKENS, /* token stream */
    STAGE_AST,    /* syntax tree after sema */
    STAGE_TIR,    /* tile IR after all passes (layouts assigned) */
    STAGE_LLVM,   /* optimized LLVM IR */
    STAGE_ASM,    /* PTX text (NVPTX), AMDGPU assembly or host assembly */
    STAGE_OBJECT, /* loadable code: PTX text (NVPTX), an AMDGPU code object (linked by
                     ld.lld) or a relocatable ELF object (host) */
} Stage;

typedef struct ConstBinding {
    const char *name;
    int64_t value; /* bools are 0/1 */
} ConstBinding;

typedef struct CompileRequest {
    const Module *module;      /* parsed and sema-checked (tc_parse) */
    const char *kernel;        /* kernel name */
    const ConstBinding *consts; /* const params (and num_warps / num_stages) by name */
    int nconsts;
    const char *target;        /* "host", "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", ... */
    Stage stop_after;          /* last stage to run */
    FILE *dump;                /* if set, the stop_after stage is printed here */
    const char *dump_after_pass; /* if set, TIR is printed to `dump` after the pass of that name */
    /* One divisor per runtime param in declaration order (NULL: nothing known): the largest
     * power of two, at most 16, dividing the pointer's address or the integer (1: none), or
     * PARAM_DIV_ONE for an integer that is 1 (its uses become the constant, as Triton
     * specializes a unit stride). Part of the specialization. */
    const unsigned char *param_div;
} CompileRequest;

enum { PARAM_DIV_ONE = 0x80 }; /* CompileRequest.param_div: the integer argument is 1 */

typedef struct CompiledParam {
    const char *name;
    ElemKind elem;     /* ET_PTR for pointers, else the scalar type */
    ElemKind pointee;  /* for pointers */
} CompiledParam;

/* What kind of code a compile produced: what a runtime backend must be able to load. */
typedef enum {
    CODE_HOST_OBJECT = 0, /* a relocatable ELF object for the host (CPU and sim backends) */
    CODE_PTX,             /* PTX text, NUL-terminated (CUDA) */
    CODE_AMDGPU_ELF,      /* an AMDGPU code object (HIP's module loader takes it) */
} CodeKind;

/* "a host object", "PTX", "an AMDGPU code object": for messages. */
const char *tc_code_kind_name(CodeKind kind);

typedef struct CompiledKernel {
    const char *symbol;   /* entry point in `code` */
    const void *code;     /* STAGE_OBJECT: PTX text (NUL-terminated) or host ELF object */
    size_t code_size;     /* bytes (PTX: without the NUL) */
    CodeKind kind;
    int num_threads;      /* threads per program instance (1 on the host) */
    int smem_bytes;       /* dynamic shared memory per program instance */
    int num_warps, num_stages;
    CompiledParam *params; /* runtime params in declaration order (consts excluded) */
    int nparams;
    /* The kernel's print and device_assert sites (compiler/debug_abi.h), NULL when none;
     * with any, the code takes one param after `params`: the debug buffer. */
    const char *debug_sites;
} CompiledKernel;

/* Parses a source file, resolves its imports (lang/imports.h; imports NULL: the defaults)
 * and sema-checks the result. Returns the module, or NULL if there were errors (all reported
 * to diags). The file must outlive the arena's use; imported files live in the arena. */
Module *tc_parse_with(Arena *arena, const SrcFile *file, const ImportOptions *imports, Diags *diags);
/* tc_parse_with with the default import options. */
Module *tc_parse(Arena *arena, const SrcFile *file, Diags *diags);
/* tc_parse_with, but a module whose only errors are sema's comes back too (NULL after a
 * syntax, import or @types error): its kernels whose Func.sema_failed is 0 (no error in them
 * nor in a helper they call) can still be compiled, so that one kernel's unknown name does not
 * hide the type and shape errors of the others (tilec check and emit). Never to be run. */
Module *tc_parse_for_report(Arena *arena, const SrcFile *file, const ImportOptions *imports,
                            Diags *diags);

/* Runs the pipeline for one kernel and one set of const values up to req->stop_after.
 * Const params not bound take their default, else their first @tune candidate.
 * Returns 0 on success, -1 with diagnostics on failure. `out` may be NULL below
 * STAGE_OBJECT. Everything allocated lives in `arena`. */
int tc_compile(const CompileRequest *req, Arena *arena, Diags *diags, CompiledKernel *out);
/* The passes after specialization (layouts, shared memory, pipelining, barriers) on a tile IR
 * kernel for target t, as tc_compile runs them; req may be NULL (no dumps). 0 or -1. */
struct Target;
int tc_passes(TirKernel *k, const struct Target *t, const CompileRequest *req, Diags *diags);
/* The names dump_after_pass accepts, space-separated ("specialize layout ..."), and whether
 * `name` is one of them: a misspelt name would otherwise print nothing and succeed. */
extern const char TC_DUMP_POINTS[];
int tc_dump_point_known(const char *name);

/* Resolves the value of every const parameter of `f` (and num_warps / num_stages) from the
 * bindings, defaults and first @tune candidates, in declaration order, each checked by
 * tc_const_check. Fills out[] (at most max entries) and returns the count; or
 * TC_CONSTS_MISSING with an error when a const has no value at all (the caller may treat
 * that kernel as not checkable yet), or TC_CONSTS_ERROR with errors for anything else (a
 * given name that is no const of f, a value out of range, a default that fails). */
enum { TC_CONSTS_ERROR = -1, TC_CONSTS_MISSING = -2 };
int tc_resolve_consts(const Func *f, const ConstBinding *given, int ngiven,
                      ConstBinding *out, int max, Arena *arena, Diags *diags);

/* Evaluates an integer/boolean expression over named integer values (const params, scalar
 * arguments): literals, names, arithmetic, comparisons, logic, cdiv, min/max of two values.
 * Returns 0 and sets *out; -1 with a diagnostic on an unknown name, division by zero or an
 * unsupported construct. */
int tc_eval_int(const Expr *e, const ConstBinding *vals, int nvals, int64_t *out, Diags *diags);

/* Integer arithmetic, comparison and logic of two compile-time values in 64 bits, checked
 * (division truncates). 0, or one of TC_INT_* (*out is then unspecified). */
enum { TC_INT_DIV_ZERO = -1, TC_INT_OVERFLOW = -2, TC_INT_SHIFT = -3, TC_INT_NOT_BINARY = -4 };
int tc_int_binary(OpKind op, int64_t a, int64_t b, int64_t *out);
/* The error of a failed tc_int_binary (or a result that does not fit et) at loc. */
void tc_int_report(Diags *d, SrcLoc loc, int code, OpKind op, int64_t a, int64_t b, ElemKind et);
/* Whether v lies in the range of the integer or bool type et (other types: always). */
int tc_int_fits(ElemKind et, int64_t v);
/* v reduced to et's width, as an explicit cast does (two's complement). */
int64_t tc_int_wrap(ElemKind et, int64_t v);
/* `f as et` for an integer type et, as generated code does it: truncated toward zero,
 * saturated to et's range, NaN -> 0 (u64 values come back as their bit pattern). */
int64_t tc_float_to_int(ElemKind et, double f);
/* "-128 to 127": the range tc_int_fits accepts, for messages. */
void tc_int_range_text(ElemKind et, char *buf, size_t size);

/* Whether `name` is a const parameter of f (num_warps and num_stages included). */
int tc_is_const_name(const Func *f, const char *name);

/* Checks a value for const parameter `name` of f (num_warps and num_stages included): it
 * fits the declared type and follows the parameter's rule. 0, or -1 with an error at loc. */
int tc_const_check(const Func *f, const char *name, int64_t v, SrcLoc loc, Diags *diags);
/* Checks every @tune candidate of every kernel of m that sema passed and that needs no other
 * const: it evaluates, passes tc_const_check and is not a duplicate. 0, or -1 with errors.
 * Part of tc_parse. */
int tc_check_tune(const Module *m, Diags *diags);
/* Evaluates the @grid expressions of f that use const parameters only, with their values:
 * overflow and dimensions outside 0..UINT32_MAX are errors here rather than at launch. */
int tc_check_grid(const Func *f, const ConstBinding *consts, int nconsts, Diags *diags);

/* Const values given by name for several kernels at once (tilec -D): each applies to the
 * kernels that have a const parameter of that name (num_warps, num_stages: all of them).
 * tc_check_defines reports each name that none of the kernels has (0, or -1 with errors);
 * tc_defines_for copies to out[] (room for ndefs) those that apply to f, returning the count. */
int tc_check_defines(const Func *const *kernels, int nkernels, const ConstBinding *defs, int ndefs,
                     Diags *diags);
int tc_defines_for(const Func *f, const ConstBinding *defs, int ndefs, ConstBinding *out);

/* What a target name may be, for messages about an unknown one. */
#define TC_TARGETS_EXPECTED                                                                       \
    "expected host, sim, sm_70 or later such as sm_80 and sm_90a, or gfx90a, gfx942, gfx950, "  \
    "gfx1100, gfx1200"

/* Default target string for the host ("host"). */
#define TC_TARGET_HOST "host"

#endif
