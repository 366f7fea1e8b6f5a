/* target_nvptx.c: NVIDIA GPUs through LLVM's NVPTX backend. Kernels use the ptx_kernel
 * calling convention with "nvvm.maxntid"; ids come from the PTX special registers; math uses
 * the ex2/lg2 approximations for f32 and CUDA's libdevice (linked on demand) for f64. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <llvm-c/BitReader.h>
#include <llvm-c/Linker.h>
#include "target.h"

static LLVMTypeRef i32_t(TargetCtx *c) { return LLVMInt32TypeInContext(c->ctx); }
static LLVMValueRef i32_c(TargetCtx *c, int v) { return LLVMConstInt(i32_t(c), (unsigned)v, 1); }

/* Path of libdevice.10.bc, or NULL when not installed. */
static const char *libdevice_path(char *buf, size_t n)
{
    const char *home = getenv("CUDA_HOME");
    if (home) {
        snprintf(buf, n, "%s/nvvm/libdevice/libdevice.10.bc", home);
        if (access(buf, R_OK) == 0)
            return buf;
    }
    snprintf(buf, n, "/usr/local/cuda/nvvm/libdevice/libdevice.10.bc");
    return access(buf, R_OK) == 0 ? buf : NULL;
}

static LLVMValueRef nv_kernel_begin(TargetCtx *c, const char *symbol, LLVMTypeRef *ptypes,
                                    int nparams, LLVMValueRef *params_out)
{
    LLVMTypeRef fty = LLVMFunctionType(LLVMVoidTypeInContext(c->ctx), ptypes,
                                       (unsigned)nparams, 0);
    c->fn = LLVMAddFunction(c->mod, symbol, fty);
    target_entry_blocks(c);
    for (int i = 0; i < nparams; i++)
        params_out[i] = LLVMGetParam(c->fn, (unsigned)i);
    return c->fn;
}

static void nv_kernel_finish(TargetCtx *c, int num_threads, int smem_bytes)
{
    char buf[32];
    LLVMSetFunctionCallConv(c->fn, LLVMPTXKernelCallConv);
    snprintf(buf, sizeof buf, "%d", num_threads);
    LLVMAddAttributeAtIndex(c->fn, LLVMAttributeFunctionIndex,
                            LLVMCreateStringAttribute(c->ctx, "nvvm.maxntid", 12, buf,
                                                      (unsigned)strlen(buf)));
    unsigned kind = LLVMGetEnumAttributeKindForName("nounwind", 8);
    LLVMAddAttributeAtIndex(c->fn, LLVMAttributeFunctionIndex,
                            LLVMCreateEnumAttribute(c->ctx, kind, 0));
}

static LLVMValueRef sreg(TargetCtx *c, const char *name)
{
    return target_intrinsic(c, name, NULL, 0, NULL, 0);
}

static LLVMValueRef nv_thread_id(TargetCtx *c) { return sreg(c, "llvm.nvvm.read.ptx.sreg.tid.x"); }

static LLVMValueRef nv_program_id(TargetCtx *c, int axis)
{
    static const char *n[3] = {"llvm.nvvm.read.ptx.sreg.ctaid.x",
                               "llvm.nvvm.read.ptx.sreg.ctaid.y",
                               "llvm.nvvm.read.ptx.sreg.ctaid.z"};
    return sreg(c, n[axis < 0 || axis > 2 ? 0 : axis]);
}

static LLVMValueRef nv_num_programs(TargetCtx *c, int axis)
{
    static const char *n[3] = {"llvm.nvvm.read.ptx.sreg.nctaid.x",
                               "llvm.nvvm.read.ptx.sreg.nctaid.y",
                               "llvm.nvvm.read.ptx.sreg.nctaid.z"};
    return sreg(c, n[axis < 0 || axis > 2 ? 0 : axis]);
}

static void nv_barrier(TargetCtx *c)
{
    LLVMValueRef zero = i32_c(c, 0);
    target_intrinsic(c, "llvm.nvvm.barrier.cta.sync.aligned.all", NULL, 0, &zero, 1);
}

static LLVMValueRef nv_shuffle_xor(TargetCtx *c, LLVMValueRef v, int mask)
{
    LLVMValueRef args[4] = {i32_c(c, -1), v, i32_c(c, mask), i32_c(c, 0x1f)};
    return target_intrinsic(c, "llvm.nvvm.shfl.sync.bfly.i32", NULL, 0, args, 4);
}

static LLVMValueRef nv_shuffle_idx(TargetCtx *c, LLVMValueRef v, LLVMValueRef lane)
{
    LLVMValueRef args[4] = {i32_c(c, -1), v, lane, i32_c(c, 0x1f)};
    return target_intrinsic(c, "llvm.nvvm.shfl.sync.idx.i32", NULL, 0, args, 4);
}

static LLVMValueRef as_half2(TargetCtx *c, LLVMValueRef w)
{
    return LLVMBuildBitCast(c->b, w, LLVMVectorType(LLVMHalfTypeInContext(c->ctx), 2), "");
}

static void nv_mma_sync(TargetCtx *c, MmaKind kind, LLVMValueRef *a, LLVMValueRef *b,
                        LLVMValueRef *acc, LLVMValueRef *d)
{
    static const char *names[] = {
        [MMA_F16_F32] = "llvm.nvvm.mma.m16n8k16.row.col.f32.f32",
        [MMA_BF16_F32] = "llvm.nvvm.mma.m16n8k16.row.col.bf16",
        [MMA_TF32_F32] = "llvm.nvvm.mma.m16n8k8.row.col.tf32",
        [MMA_S8_S32] = "llvm.nvvm.mma.m16n8k32.row.col.s8",
    };
    LLVMValueRef args[10];
    for (int i = 0; i < 4; i++)
        args[i] = kind == MMA_F16_F32 ? as_half2(c, a[i]) : a[i];
    for (int i = 0; i < 2; i++)
        args[4 + i] = kind == MMA_F16_F32 ? as_half2(c, b[i]) : b[i];
    for (int i = 0; i < 4; i++)
        args[6 + i] = acc[i];
    LLVMValueRef r = target_intrinsic(c, names[kind], NULL, 0, args, 10);
    for (int i = 0; i < 4; i++)
        d[i] = LLVMBuildExtractValue(c->b, r, (unsigned)i, "");
}

static void nv_ldmatrix(TargetCtx *c, int nmat, int trans, LLVMValueRef ptr, LLVMValueRef *out)
{
    char name[64];
    snprintf(name, sizeof name, "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x%d%s.b16", nmat,
             trans ? ".trans" : "");
    LLVMTypeRef pt = LLVMTypeOf(ptr);
    LLVMValueRef r = target_intrinsic(c, name, &pt, 1, &ptr, 1);
    for (int j = 0; j < nmat; j++)
        out[j] = nmat == 1 ? r : LLVMBuildExtractValue(c->b, r, (unsigned)j, "");
}

/* 16-byte copies bypass L1 (.cg), smaller ones go through it (.ca: the only form they have). */
static void nv_async_copy(TargetCtx *c, LLVMValueRef dst, LLVMValueRef src, int bytes,
                          LLVMValueRef src_bytes)
{
    char name[64];
    snprintf(name, sizeof name, "llvm.nvvm.cp.async.%s.shared.global.%d.s", bytes == 16 ? "cg" : "ca",
             bytes);
    LLVMValueRef args[3] = {dst, src, src_bytes};
    target_intrinsic(c, name, NULL, 0, args, 3);
}

static void nv_async_commit(TargetCtx *c)
{
    target_intrinsic(c, "llvm.nvvm.cp.async.commit.group", NULL, 0, NULL, 0);
}

static void nv_async_wait(TargetCtx *c, int pending)
{
    LLVMValueRef n = i32_c(c, pending);
    target_intrinsic(c, "llvm.nvvm.cp.async.wait.group", NULL, 0, &n, 1);
}

/* Shared memory per block with the opt-in attribute, by compute capability. */
static int smem_limit(int sm)
{
    if (sm >= 90)
        return 232448;
    if (sm == 80 || sm == 87)
        return 166912;
    if (sm >= 86)
        return 101376;
    return sm == 75 ? 65536 : 98304;
}

static LLVMValueRef libdevice_call(TargetCtx *c, const char *name, LLVMValueRef x)
{
    char buf[512];
    if (!libdevice_path(buf, sizeof buf)) {
        diag_error(c->diags, c->loc,
                   "%s needs CUDA's libdevice.10.bc, not found under $CUDA_HOME/nvvm/libdevice "
                   "or /usr/local/cuda/nvvm/libdevice", name);
        return NULL;
    }
    LLVMTypeRef t = LLVMTypeOf(x);
    return target_call_named(c, name, t, &t, 1, &x);
}

/* libdevice's __nv_powf, __nv_atan2f, __nv_hypotf, __nv_fmodf (__nv_pow, ... for f64);
 * copysign: LLVM's. The float % (BIN_REM) is LLVM's frem where libdevice is missing: NVPTX
 * lowers that to x - trunc(x / y) y, exact only while the quotient is below 2^24 (f32) */
static LLVMValueRef nv_math2(TargetCtx *c, TirBinOp op, LLVMValueRef x, LLVMValueRef y, int is_f64)
{
    static const char *const names[][2] = {[BIN_POW] = {"__nv_powf", "__nv_pow"},
                                           [BIN_ATAN2] = {"__nv_atan2f", "__nv_atan2"},
                                           [BIN_HYPOT] = {"__nv_hypotf", "__nv_hypot"},
                                           [BIN_REM] = {"__nv_fmodf", "__nv_fmod"}};
    char buf[512];
    int have = libdevice_path(buf, sizeof buf) != NULL;
    if ((unsigned)op >= sizeof names / sizeof names[0] || !names[op][0] ||
        (op == BIN_REM && !have)) /* %: frem, approximate (docs) */
        return target_math2_llvm(c, op, x, y, is_f64);
    const char *name = names[op][is_f64];
    if (!have) {
        diag_error(c->diags, c->loc, "%s needs CUDA's libdevice.10.bc, not found under "
                   "$CUDA_HOME/nvvm/libdevice or /usr/local/cuda/nvvm/libdevice", name);
        return NULL;
    }
    LLVMTypeRef t[2] = {LLVMTypeOf(x), LLVMTypeOf(x)};
    LLVMValueRef args[2] = {x, y};
    return target_call_named(c, name, t[0], t, 2, args);
}

/* The ops libdevice provides as __nv_NAME (f64) and __nv_NAMEf (f32); f32 exp, exp2, log,
 * log2 and rsqrt take the hardware's approximations instead (nv_math_f32). */
static const char *const LIBDEVICE_UNARY[] = {
    [UN_EXP] = "exp",     [UN_EXP2] = "exp2",   [UN_LOG] = "log",     [UN_LOG2] = "log2",
    [UN_RSQRT] = "rsqrt", [UN_SIN] = "sin",     [UN_COS] = "cos",     [UN_TANH] = "tanh",
    [UN_ERF] = "erf",     [UN_LOG1P] = "log1p", [UN_EXPM1] = "expm1", [UN_TAN] = "tan",
    [UN_ATAN] = "atan",   [UN_ASIN] = "asin",   [UN_ACOS] = "acos",   [UN_SINH] = "sinh",
    [UN_COSH] = "cosh",   [UN_LOG10] = "log10", [UN_ASINH] = "asinh", [UN_ACOSH] = "acosh",
    [UN_ATANH] = "atanh", [UN_CBRT] = "cbrt",   [UN_EXP10] = "exp10", [UN_ERFINV] = "erfinv",
};

/* op of x through libdevice where it has the function, else as target_math_llvm */
static LLVMValueRef libdevice_or_llvm(TargetCtx *c, TirUnOp op, LLVMValueRef x, int is_f64)
{
    const char *fn = (unsigned)op < sizeof LIBDEVICE_UNARY / sizeof LIBDEVICE_UNARY[0]
                         ? LIBDEVICE_UNARY[op] : NULL;
    if (!fn)
        return target_math_llvm(c, op, x, is_f64);
    char name[32];
    snprintf(name, sizeof name, "__nv_%s%s", fn, is_f64 ? "" : "f");
    return libdevice_call(c, name, x);
}

/* ex2.approx.ftz: one MUFU.EX2. Without .ftz ptxas wraps it in a compare and two multiplies
 * to produce subnormal results (four instructions per element, a fifth of a flash-attention
 * loop); with it, results below 2^-126 are zero (docs/language.md). */
static LLVMValueRef ex2(TargetCtx *c, LLVMValueRef x)
{
    LLVMTypeRef t = LLVMTypeOf(x);
    return target_intrinsic(c, "llvm.nvvm.ex2.approx.ftz", &t, 1, &x, 1);
}

static LLVMValueRef nv_math_f32(TargetCtx *c, TirUnOp op, LLVMValueRef x)
{
    LLVMTypeRef f = LLVMTypeOf(x);
    char buf[512];
    switch (op) {
    case UN_EXP:
        return ex2(c, LLVMBuildFMul(c->b, x, LLVMConstReal(f, 1.4426950408889634), ""));
    case UN_EXP2: return ex2(c, x);
    case UN_LOG:
        return LLVMBuildFMul(c->b, target_intrinsic(c, "llvm.nvvm.lg2.approx.f", NULL, 0, &x, 1),
                             LLVMConstReal(f, 0.6931471805599453), "");
    case UN_LOG2: return target_intrinsic(c, "llvm.nvvm.lg2.approx.f", NULL, 0, &x, 1);
    case UN_RSQRT: return target_intrinsic(c, "llvm.nvvm.rsqrt.approx.f", NULL, 0, &x, 1);
    case UN_SIN:
        if (!libdevice_path(buf, sizeof buf))
            return target_intrinsic(c, "llvm.nvvm.sin.approx.f", NULL, 0, &x, 1);
        break;
    case UN_COS:
        if (!libdevice_path(buf, sizeof buf))
            return target_intrinsic(c, "llvm.nvvm.cos.approx.f", NULL, 0, &x, 1);
        break;
    default: break;
    }
    return libdevice_or_llvm(c, op, x, 0);
}

static LLVMValueRef nv_math(TargetCtx *c, TirUnOp op, LLVMValueRef x, int is_f64)
{
    return is_f64 ? libdevice_or_llvm(c, op, x, 1) : nv_math_f32(c, op, x);
}

/* cvt.rzi to a 32- or 64-bit integer saturates and takes NaN to 0 by itself (PTX ISA, cvt):
 * LLVM's generic lowering of llvm.fpto[su]i.sat adds compares and selects around it. */
static LLVMValueRef nv_float_to_int(TargetCtx *c, LLVMValueRef x, int is_f64, int bits, int is_signed)
{
    static const char *const names[2][2][2] = {
        {{"llvm.nvvm.f2ui.rz", "llvm.nvvm.f2i.rz"}, {"llvm.nvvm.f2ull.rz", "llvm.nvvm.f2ll.rz"}},
        {{"llvm.nvvm.d2ui.rz", "llvm.nvvm.d2i.rz"}, {"llvm.nvvm.d2ull.rz", "llvm.nvvm.d2ll.rz"}},
    };
    if ((bits != 32 && bits != 64) || LLVMGetTypeKind(LLVMTypeOf(x)) == LLVMVectorTypeKind)
        return NULL;
    LLVMValueRef r = target_intrinsic(c, names[!!is_f64][bits == 64][!!is_signed], NULL, 0, &x, 1);
    /* NaN -> 0 explicitly: on the H100, cvt.rzi gave INT_MIN for NaN when the widths differ
     * (f32 -> s64, f64 -> s32), 0 only when they match */
    LLVMValueRef nan = LLVMBuildFCmp(c->b, LLVMRealUNO, x, x, "");
    return LLVMBuildSelect(c->b, nan, LLVMConstNull(LLVMTypeOf(r)), r, "");
}

static int uses_libdevice(LLVMModuleRef m)
{
    for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
        size_t n;
        const char *name = LLVMGetValueName2(f, &n);
        if (n > 5 && strncmp(name, "__nv_", 5) == 0 && LLVMIsDeclaration(f))
            return 1;
    }
    return 0;
}

static void internalize_libdevice(LLVMModuleRef m)
{
    for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
        size_t n;
        const char *name = LLVMGetValueName2(f, &n);
        if (n > 5 && strncmp(name, "__nv_", 5) == 0 && !LLVMIsDeclaration(f))
            LLVMSetLinkage(f, LLVMInternalLinkage);
    }
}

static int nv_module_finish(TargetCtx *c)
{
    char path[512];
    if (!uses_libdevice(c->mod))
        return 0;
    LLVMMemoryBufferRef buf;
    LLVMModuleRef lib;
    char *err = NULL;
    if (!libdevice_path(path, sizeof path) ||
        LLVMCreateMemoryBufferWithContentsOfFile(path, &buf, &err)) {
        diag_error(c->diags, c->loc, "cannot read libdevice: %s", err ? err : "not found");
        LLVMDisposeMessage(err);
        return -1;
    }
    int bad = LLVMParseBitcodeInContext2(c->ctx, buf, &lib);
    LLVMDisposeMemoryBuffer(buf);
    if (bad) {
        diag_error(c->diags, c->loc, "cannot parse libdevice at %s", path);
        return -1;
    }
    LLVMSetTarget(lib, LLVMGetTarget(c->mod));
    LLVMSetDataLayout(lib, LLVMGetDataLayoutStr(c->mod));
    if (LLVMLinkModules2(c->mod, lib)) {
        diag_error(c->diags, c->loc, "internal error: linking libdevice failed");
        return -1;
    }
    internalize_libdevice(c->mod);
    LLVMAddModuleFlag(c->mod, LLVMModuleFlagBehaviorOverride, "nvvm-reflect-ftz", 16,
                      LLVMValueAsMetadata(i32_c(c, 0)));
    return 0;
}

static LLVMValueRef nv_load_hinted(TargetCtx *c, LLVMTypeRef t, LLVMValueRef ptr, int hints)
{
    return target_nv_load_hinted(c, t, ptr, hints, 0);
}

static LLVMValueRef nv_load_hinted_l2(TargetCtx *c, LLVMTypeRef t, LLVMValueRef ptr, int hints)
{
    return target_nv_load_hinted(c, t, ptr, hints, 1);
}

static int nv_store_hinted(TargetCtx *c, LLVMValueRef x, LLVMValueRef ptr, int hints)
{
    return target_nv_store_hinted(c, x, ptr, hints, 0);
}

static int nv_store_hinted_l2(TargetCtx *c, LLVMValueRef x, LLVMValueRef ptr, int hints)
{
    return target_nv_store_hinted(c, x, ptr, hints, 1);
}

const Target *target_nvptx_init(Target *t, const char *name, int sm, int arch_specific)
{
    static char cpus[64][16], feats[64][48];
    static int next;
    int slot = next++ % 64;
    snprintf(cpus[slot], sizeof cpus[slot], "sm_%d%s", sm, arch_specific ? "a" : "");
    snprintf(feats[slot], sizeof feats[slot], "+ptx%d", sm >= 100 ? 87 : 85);
    *t = (Target){
        .kind = TARGET_NVPTX, .name = name, .triple = "nvptx64-nvidia-cuda",
        .cpu = cpus[slot], .features = feats[slot], .sm = sm, .threads_per_warp = 32, .max_warps = 32, .max_regs = 255,
        .global_as = 1, .shared_as = 3, .unroll_elements = 1,
        .sync_scopes = {"block", "device", ""}, .rmw_fences = 1, .inline_asm = 1, .native_f16 = sm >= 53,
        .kernel_begin = nv_kernel_begin, .kernel_finish = nv_kernel_finish,
        .thread_id = nv_thread_id, .program_id = nv_program_id,
        .num_programs = nv_num_programs, .barrier = nv_barrier,
        .mma = sm >= 80 ? TARGET_MMA_SYNC : TARGET_MMA_NONE, .mma_sync = nv_mma_sync, .smem_limit = smem_limit(sm),
        .ldmatrix = sm >= 75 ? nv_ldmatrix : NULL,
        .wgmma = sm == 90 && arch_specific, .pad_operand_rows = sm >= 80 && sm < 90,
        .wgmma_fence = target_wgmma_fence,
        .wgmma_mma = target_wgmma, .wgmma_wait = target_wgmma_wait,
        .wgmma_proxy_fence = target_wgmma_proxy_fence,
        .async_copy = sm >= 80 ? nv_async_copy : NULL, .async_commit = nv_async_commit,
        .async_wait = nv_async_wait,
        .shuffle_xor = nv_shuffle_xor, .shuffle_idx = nv_shuffle_idx, .smem_base = target_extern_smem, .math = nv_math,
        .float_to_int = nv_float_to_int, .math2 = nv_math2,
        .load_hinted = sm >= 80 ? nv_load_hinted_l2 : nv_load_hinted,
        .store_hinted = sm >= 80 ? nv_store_hinted_l2 : nv_store_hinted,
        .prefetch = target_nv_prefetch,
        .module_finish = nv_module_finish,
    };
    return t;
}
