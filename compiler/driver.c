/* driver.c: the compile pipeline in one place. tc_parse_with parses, resolves imports and runs
 * sema (tc_parse_for_report keeps a module whose errors are sema's, for tilec check);
 * compile_stages reads top to bottom as the list of stages: resolve consts, specialize
 * (AST -> tile IR), verify, assign layouts, analyze axes, lower to LLVM IR, optimize, emit PTX
 * or a host object. Each stage can be the last one and be dumped (tilec --emit=...). tc_compile reports an arena allocation failure in any stage. */
#include <string.h>
#include <llvm-c/Core.h>
#include "analysis_axis.h"
#include "check_frame.h"
#include "check_registers.h"
#include "codegen.h"
#include "debug_abi.h"
#include "driver.h"
#include "amdgpu_link.h"
#include "lower.h"
#include "layout.h"
#include "passes.h"
#include "spec.h"
#include "target.h"

/* An arena allocation failure inside `stage` jumps back here and is reported as one error
 * (the parser needs no jump: it checks every allocation and unwinds its own stack). */
static void sema_guarded(Module *m, Diags *diags) {
    jmp_buf jump;
    jmp_buf *prev = arena_set_failure_jump(diags->arena, &jump);
    if (setjmp(jump) == 0) {
        sema_check(m, diags);
    } else {
        diag_error(diags, (SrcLoc){m->file, 0, 0, 0}, "out of memory checking %s", m->file->name);
        for (int i = 0; i < m->nfuncs; i++) m->funcs[i]->sema_failed = 1;
    }
    arena_set_failure_jump(diags->arena, prev);
}

/* Parsing, imports, @types and sema; then the @tune candidates of the kernels sema passed.
 * NULL after an error before sema; *only_sema tells whether every error came from sema. */
static Module *parse_stages(Arena *arena, const SrcFile *file, const ImportOptions *imports,
                            Diags *diags, int *only_sema) {
    Module *m = parse_module(arena, file, diags);
    *only_sema = 0;
    if (!m && !diags->errors) diag_error(diags, (SrcLoc){file, 0, 0, 0}, "out of memory parsing %s", file->name);
    if (!m || diags->errors) return NULL;
    if (imports_resolve(m, arena, imports, diags) || diags->errors) return NULL;
    if (expand_type_variants(m, arena, diags)) return NULL;
    sema_guarded(m, diags);
    int errors = diags->errors;
    tc_check_tune(m, diags);
    *only_sema = diags->errors == errors;
    return m;
}

Module *tc_parse_with(Arena *arena, const SrcFile *file, const ImportOptions *imports, Diags *diags) {
    int only_sema;
    Module *m = parse_stages(arena, file, imports, diags, &only_sema);
    return diags->errors ? NULL : m;
}

Module *tc_parse_for_report(Arena *arena, const SrcFile *file, const ImportOptions *imports,
                            Diags *diags) {
    int only_sema;
    Module *m = parse_stages(arena, file, imports, diags, &only_sema);
    return !diags->errors || only_sema ? m : NULL;
}

Module *tc_parse(Arena *arena, const SrcFile *file, Diags *diags) {
    return tc_parse_with(arena, file, NULL, diags);
}

static const Func *find_kernel(const CompileRequest *req, Diags *d) {
    const Func *f = module_find_func(req->module, req->kernel);
    if (f && f->is_kernel) return f;
    diag_error(d, (SrcLoc){req->module->file, 0, 0, 0}, "no kernel named '%s' in %s", req->kernel,
               req->module->file ? req->module->file->name : "the module");
    return NULL;
}

const char TC_DUMP_POINTS[] = "specialize layout reduce hoist smem pipeline smem-alloc barriers sink";

int tc_dump_point_known(const char *name) {
    size_t n = strchr(name, ' ') ? 0 : strlen(name);
    for (const char *p = TC_DUMP_POINTS; n && (p = strstr(p, name)); p += n)
        if ((p == TC_DUMP_POINTS || p[-1] == ' ') && (p[n] == ' ' || p[n] == 0)) return 1;
    return 0;
}

static int dump_tir(const CompileRequest *req, const TirKernel *k, const char *pass) {
    if (req && req->dump && req->dump_after_pass && strcmp(req->dump_after_pass, pass) == 0) tir_print(k, req->dump);
    return 0;
}

static int check_ir(TirKernel *k, int need_layouts, Diags *d) {
    return tir_verify(k, need_layouts, d) ? -1 : 0;
}

static void fill_result(const TirKernel *k, CompiledKernel *out, Arena *a) {
    out->symbol = k->symbol;
    out->num_warps = k->num_warps;
    out->num_stages = k->num_stages;
    out->num_threads = k->num_warps * k->threads_per_warp;
    out->smem_bytes = k->smem_bytes;
    out->debug_sites = k->nsites ? debug_sites_encode(a, k->sites, k->nsites) : NULL;
    out->nparams = k->nparams;
    out->params = arena_alloc(a, sizeof(CompiledParam) * (size_t)(k->nparams + 1));
    for (int i = 0; i < k->nparams; i++)
        out->params[i] = (CompiledParam){k->params[i].name, k->params[i].type.elem, k->params[i].type.pointee};
}

/* Uses of the integer params known to be 1 become that constant (loads with a unit stride
 * argument are then contiguous, as with a literal 1). */
static void params_to_ones(const TirKernel *k, TirBlock *b) {
    for (TirOp *op = b->first; op; op = op->next) {
        if (op->code == TIR_PARAM && k->params[op->attr.i].one) {
            op->code = TIR_CONST;
            op->attr.i = 1;
        }
        for (int r = 0; r < op->nregions; r++) params_to_ones(k, op->regions[r]);
    }
}

/* The launch's divisibility facts (req->param_div) become part of the specialization:
 * recorded on the params and, when any is above 1, in the symbol (a suffix of one character
 * per runtime param, log2 of its divisor or 'o' for an integer that is 1, so specializations
 * that differ only there do not collide). */
static void apply_divisors(const CompileRequest *req, TirKernel *k, Arena *a) {
    char *bits = req->param_div ? arena_alloc(a, (size_t)k->nparams + 1) : NULL;
    if (!bits) return;
    int any = 0, ones = 0;
    for (int i = 0; i < k->nparams; i++) {
        int d = req->param_div[i], lg = 0;
        if (d == PARAM_DIV_ONE && et_is_int(k->params[i].type.elem)) {
            k->params[i].div = 1, k->params[i].one = 1;
            bits[i] = 'o', any = ones = 1;
            continue;
        }
        if (d == PARAM_DIV_ONE) d = 1;
        while (lg < 4 && d >> (lg + 1)) lg++; /* largest power of two <= d, capped at 16 */
        k->params[i].div = 1 << lg;
        bits[i] = (char)('0' + lg);
        any |= lg;
    }
    bits[k->nparams] = 0;
    if (any) k->symbol = arena_printf(a, "%s_d%s", k->symbol, bits);
    if (ones) params_to_ones(k, k->body);
}

/* Errors LLVM reports through its context (a constraint of inline assembly no register class
 * takes, assembly the AMDGPU assembler rejects): kept here, reported after LLVM returns.
 * Without a handler LLVM would print them and exit the process. */
typedef struct LlvmErrors {
    int count;
    char first[512];
} LlvmErrors;

static void on_llvm_diagnostic(LLVMDiagnosticInfoRef info, void *user) {
    LlvmErrors *e = user;
    if (LLVMGetDiagInfoSeverity(info) != LLVMDSError) return;
    if (e->count++ == 0) {
        char *msg = LLVMGetDiagInfoDescription(info);
        snprintf(e->first, sizeof e->first, "%s", msg ? msg : "?");
        LLVMDisposeMessage(msg);
    }
}

/* LLVM's errors as one diagnostic: at the kernel's first inline assembly when it has any (the
 * one source of them a program controls), else an internal error. */
static int report_llvm_errors(const LlvmErrors *e, const TirKernel *k, Diags *d) {
    if (!e->count) return 0;
    if (k->nasms)
        diag_error(d, k->asms[0].loc, "inline_asm_elementwise(): LLVM rejects the assembly%s: %s",
                   k->nasms > 1 ? " (of this or another call in the kernel)" : "", e->first);
    else
        diag_error(d, (SrcLoc){0}, "internal compiler error: LLVM: %s", e->first);
    return -1;
}

/* LLVM IR -> optimized IR -> PTX or object. */
static int run_backend(const CompileRequest *req, TirKernel *k, const Target *t, Arena *arena,
                       Diags *d, CompiledKernel *out) {
    jmp_buf *jump = arena_set_failure_jump(arena, NULL); /* no jump across LLVM's objects */
    LLVMContextRef ctx = LLVMContextCreate();
    LlvmErrors errors = {0};
    LLVMContextSetDiagnosticHandler(ctx, on_llvm_diagnostic, &errors);
    LLVMModuleRef mod = lower_kernel(k, t, ctx, d);
    int rc = mod ? codegen_optimize(mod, t, d) : -1;
    if (rc == 0) rc = check_frame(mod, k, t, d);
    CgOutput what = req->stop_after == STAGE_LLVM ? CG_LLVM_IR
                    : req->stop_after == STAGE_ASM || t->kind == TARGET_NVPTX ? CG_ASM : CG_OBJECT;
    char *code = NULL;
    size_t size = 0;
    if (rc == 0) rc = codegen_emit(mod, t, what, arena, &code, &size, d);
    if (report_llvm_errors(&errors, k, d)) rc = -1;
    if (rc == 0 && what == CG_OBJECT && t->kind == TARGET_AMDGPU)
        rc = amdgpu_link(code, size, arena, &code, &size, d);
    if (rc == 0 && req->dump && req->stop_after <= STAGE_ASM) fwrite(code, 1, size, req->dump);
    if (mod) LLVMDisposeModule(mod);
    LLVMContextDispose(ctx);
    arena_set_failure_jump(arena, jump);
    if (rc == 0 && out) { /* allocates: after the jump is back, so a failure is reported */
        fill_result(k, out, arena);
        out->code = code;
        out->code_size = size;
        out->kind = t->kind == TARGET_NVPTX    ? CODE_PTX
                    : t->kind == TARGET_AMDGPU ? CODE_AMDGPU_ELF
                                               : CODE_HOST_OBJECT;
    }
    return rc;
}

/* The target's own limit on warps (the language allows powers of two up to 32); reported at
 * the kernel's name, as the language's own num_warps errors are. */
static int check_launch_shape(const Func *f, const TirKernel *k, const Target *t, Diags *d) {
    if (k->num_warps <= t->max_warps) return 0;
    diag_error(d, f->loc, "num_warps=%d: %s runs at most %d warps (%d threads) per program",
               k->num_warps, t->name, t->max_warps, t->max_warps * t->threads_per_warp);
    return -1;
}

/* The passes on specialized tile IR, in order; `req` (may be NULL) asks for dumps. */
int tc_passes(TirKernel *k, const Target *t, const CompileRequest *req, Diags *diags) {
    /* Carried pointers advanced in loops as indices (their loads then vectorize and pipeline);
     * dead code first: an unused load must not become an asynchronous copy or pick layouts. */
    if (pass_induction(k, t, diags) || pass_remove_dead(k, t, diags)) return -1;
    if (pass_assign_layouts(k, t, diags) || check_ir(k, 1, diags) || dump_tir(req, k, "layout")) return -1;
    if (check_registers(k, t, diags)) return -1;
    if (pass_split_reductions(k, t, diags) || check_ir(k, 1, diags) || dump_tir(req, k, "reduce")) return -1;
    if (pass_rematerialize(k, t, diags) || pass_hoist_conversions(k, t, diags) || check_ir(k, 1, diags) ||
        dump_tir(req, k, "hoist")) return -1;
    if (pass_smem_conversions(k, t, diags) || check_ir(k, 1, diags) || dump_tir(req, k, "smem")) return -1;
    if (pass_pipeline(k, t, diags) || pass_remove_dead(k, t, diags) || check_ir(k, 1, diags) ||
        dump_tir(req, k, "pipeline")) return -1;
    if (pass_smem_alloc(k, t, diags) || dump_tir(req, k, "smem-alloc")) return -1;
    if (pass_barriers(k, t, diags) || check_ir(k, 1, diags) || dump_tir(req, k, "barriers")) return -1;
    if (pass_sink_past_dots(k, t, diags) || check_ir(k, 1, diags) || dump_tir(req, k, "sink")) return -1;
    return 0;
}

static int compile_stages(const CompileRequest *req, Arena *arena, Diags *diags, CompiledKernel *out) {
    const Func *f = find_kernel(req, diags);
    const Target *t = target_lookup(req->target ? req->target : TC_TARGET_HOST);
    if (!f) return -1;
    if (!t) {
        diag_error(diags, (SrcLoc){0}, "unknown target '%s' (%s)", req->target, TC_TARGETS_EXPECTED);
        return -1;
    }
    ConstBinding consts[AST_MAX_KERNEL_CONSTS + 2];
    int nconsts = tc_resolve_consts(f, req->consts, req->nconsts, consts, AST_MAX_KERNEL_CONSTS + 2, arena, diags);
    if (nconsts < 0 || tc_check_grid(f, consts, nconsts, diags)) return -1;

    TirKernel *k = spec_kernel(arena, req->module, f, consts, nconsts, t->threads_per_warp, diags);
    if (!k) return -1;
    apply_divisors(req, k, arena);
    if (t->kind == TARGET_HOST) k->num_warps = 1; /* one thread owns whole tiles */
    if (check_launch_shape(f, k, t, diags)) return -1;
    if (check_ir(k, 0, diags) || dump_tir(req, k, "specialize")) return -1;

    if (tc_passes(k, t, req, diags)) return -1;
    k->axis = axis_analyze(k); /* contiguity and alignment, for vector loads and stores */
    if (req->stop_after == STAGE_TIR) {
        if (req->dump && !req->dump_after_pass) tir_print(k, req->dump);
        if (out) fill_result(k, out, arena);
        return 0;
    }
    return run_backend(req, k, t, arena, diags, out);
}

/* The stages up to LLVM allocate in hundreds of places: an arena allocation failure in any of
 * them jumps back here and is reported once, rather than checked at each. */
int tc_compile(const CompileRequest *req, Arena *arena, Diags *diags, CompiledKernel *out) {
    jmp_buf jump;
    jmp_buf *prev = arena_set_failure_jump(arena, &jump);
    volatile int rc = -1;
    if (setjmp(jump) == 0) rc = compile_stages(req, arena, diags, out);
    else diag_error(diags, (SrcLoc){req->module->file, 0, 0, 0}, "out of memory compiling kernel '%s'", req->kernel);
    arena_set_failure_jump(arena, prev);
    return rc;
}

const char *tc_code_kind_name(CodeKind kind) {
    return kind == CODE_PTX ? "PTX" : kind == CODE_AMDGPU_ELF ? "an AMDGPU code object" : "a host object";
}
