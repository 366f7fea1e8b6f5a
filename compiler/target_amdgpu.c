/* target_amdgpu.c: AMD GPUs through LLVM's AMDGPU backend (amdgcn-amd-amdhsa). Kernels use
 * the amdgpu_kernel calling convention with a flat work-group size; ids come from the
 * workgroup and workitem intrinsics, the grid's size from the implicit kernel arguments (code
 * object v5: hidden_block_count_x/y/z at bytes 0, 4, 8), cross-lane values from ds_bpermute,
 * shared memory is LDS (address space 3). Wave64 on CDNA (gfx9), wave32 on RDNA (gfx10+).
 * CDNA targets (wave64) run f16 and bf16 dots on MFMA; no asynchronous copies yet. */
#include <stdio.h>
#include <string.h>
#include "target.h"

static LLVMTypeRef i32_t(TargetCtx *c) { return LLVMInt32TypeInContext(c->ctx); }
static LLVMValueRef i32_c(TargetCtx *c, int v) { return LLVMConstInt(i32_t(c), (unsigned)v, 1); }

static void string_attr(TargetCtx *c, const char *key, const char *value)
{
    LLVMAddAttributeAtIndex(c->fn, LLVMAttributeFunctionIndex,
                            LLVMCreateStringAttribute(c->ctx, key, (unsigned)strlen(key), value,
                                                      (unsigned)strlen(value)));
}

static LLVMValueRef amd_kernel_begin(TargetCtx *c, const char *symbol, LLVMTypeRef *ptypes,
                                     int nparams, LLVMValueRef *params_out)
{
    LLVMTypeRef fty = LLVMFunctionType(LLVMVoidTypeInContext(c->ctx), ptypes,
                                       (unsigned)nparams, 0);
    c->fn = LLVMAddFunction(c->mod, symbol, fty);
    LLVMSetFunctionCallConv(c->fn, LLVMAMDGPUKERNELCallConv);
    target_entry_blocks(c);
    for (int i = 0; i < nparams; i++)
        params_out[i] = LLVMGetParam(c->fn, (unsigned)i);
    return c->fn;
}

static void amd_kernel_finish(TargetCtx *c, int num_threads, int smem_bytes)
{
    (void)smem_bytes;
    char buf[32];
    snprintf(buf, sizeof buf, "1,%d", num_threads);
    string_attr(c, "amdgpu-flat-work-group-size", buf);
    if (c->waves_per_eu > 0) { /* at least this many waves per SIMD: registers are capped to fit */
        snprintf(buf, sizeof buf, "%d", c->waves_per_eu);
        string_attr(c, "amdgpu-waves-per-eu", buf);
    }
    string_attr(c, "uniform-work-group-size", "true");
    unsigned kind = LLVMGetEnumAttributeKindForName("nounwind", 8);
    LLVMAddAttributeAtIndex(c->fn, LLVMAttributeFunctionIndex,
                            LLVMCreateEnumAttribute(c->ctx, kind, 0));
}

static LLVMValueRef amd_thread_id(TargetCtx *c)
{
    return target_intrinsic(c, "llvm.amdgcn.workitem.id.x", NULL, 0, NULL, 0);
}

static LLVMValueRef amd_program_id(TargetCtx *c, int axis)
{
    static const char *n[3] = {"llvm.amdgcn.workgroup.id.x", "llvm.amdgcn.workgroup.id.y",
                               "llvm.amdgcn.workgroup.id.z"};
    return target_intrinsic(c, n[axis < 0 || axis > 2 ? 0 : axis], NULL, 0, NULL, 0);
}

/* hidden_block_count_{x,y,z}: the grid in work-groups, the first implicit arguments. */
static LLVMValueRef amd_num_programs(TargetCtx *c, int axis)
{
    LLVMValueRef base = target_intrinsic(c, "llvm.amdgcn.implicitarg.ptr", NULL, 0, NULL, 0);
    LLVMValueRef off = i32_c(c, 4 * (axis < 0 || axis > 2 ? 0 : axis));
    LLVMValueRef p = LLVMBuildGEP2(c->b, LLVMInt8TypeInContext(c->ctx), base, &off, 1, "");
    LLVMValueRef v = LLVMBuildLoad2(c->b, i32_t(c), p, "");
    LLVMSetAlignment(v, 4);
    return v;
}

/* Everything this work-group wrote to LDS is visible to all of it after the barrier. */
static void amd_barrier(TargetCtx *c)
{
    unsigned wg = LLVMGetSyncScopeID(c->ctx, "workgroup", 9);
    LLVMBuildFenceSyncScope(c->b, LLVMAtomicOrderingRelease, wg, "");
    target_intrinsic(c, "llvm.amdgcn.s.barrier", NULL, 0, NULL, 0);
    LLVMBuildFenceSyncScope(c->b, LLVMAtomicOrderingAcquire, wg, "");
}

/* This lane's index in its wave: the count of lanes below it (mbcnt over all-ones). */
static LLVMValueRef lane_id(TargetCtx *c, int wave64)
{
    LLVMValueRef args[2] = {i32_c(c, -1), i32_c(c, 0)};
    LLVMValueRef lo = target_intrinsic(c, "llvm.amdgcn.mbcnt.lo", NULL, 0, args, 2);
    if (!wave64)
        return lo;
    args[1] = lo;
    return target_intrinsic(c, "llvm.amdgcn.mbcnt.hi", NULL, 0, args, 2);
}

static LLVMValueRef bpermute(TargetCtx *c, LLVMValueRef v, LLVMValueRef src_lane)
{
    LLVMValueRef args[2] = {LLVMBuildShl(c->b, src_lane, i32_c(c, 2), ""), v};
    return target_intrinsic(c, "llvm.amdgcn.ds.bpermute", NULL, 0, args, 2);
}

static LLVMValueRef amd_shuffle_xor64(TargetCtx *c, LLVMValueRef v, int mask)
{
    return bpermute(c, v, LLVMBuildXor(c->b, lane_id(c, 1), i32_c(c, mask), ""));
}

static LLVMValueRef amd_shuffle_xor32(TargetCtx *c, LLVMValueRef v, int mask)
{
    return bpermute(c, v, LLVMBuildXor(c->b, lane_id(c, 0), i32_c(c, mask), ""));
}

static LLVMValueRef amd_shuffle_idx(TargetCtx *c, LLVMValueRef v, LLVMValueRef lane)
{
    return bpermute(c, v, lane);
}

/* v_mfma_f32_{16x16x16,32x32x8}{f16,bf16_1k}: A and B as 4-vectors of half (i16 for bf16),
 * the accumulator as a vector of f32; no broadcast controls (cbsz, abid, blgp 0). */
static void amd_mfma(TargetCtx *c, MmaKind kind, int inst, LLVMValueRef *a, LLVMValueRef *b,
                     LLVMValueRef *acc, LLVMValueRef *d)
{
    int bf16 = kind == MMA_BF16_F32, nacc = inst * inst / 64;
    char name[64];
    snprintf(name, sizeof name, "llvm.amdgcn.mfma.f32.%s%s", inst == 16 ? "16x16x16" : "32x32x8",
             bf16 ? "bf16.1k" : "f16");
    LLVMTypeRef et = bf16 ? LLVMInt16TypeInContext(c->ctx) : LLVMHalfTypeInContext(c->ctx);
    LLVMTypeRef f32 = LLVMFloatTypeInContext(c->ctx);
    LLVMValueRef va = LLVMGetUndef(LLVMVectorType(et, 4)), vb = va;
    LLVMValueRef vc = LLVMGetUndef(LLVMVectorType(f32, (unsigned)nacc));
    for (int i = 0; i < 4; i++) {
        LLVMValueRef x = bf16 ? LLVMBuildBitCast(c->b, a[i], et, "") : a[i];
        LLVMValueRef y = bf16 ? LLVMBuildBitCast(c->b, b[i], et, "") : b[i];
        va = LLVMBuildInsertElement(c->b, va, x, i32_c(c, i), "");
        vb = LLVMBuildInsertElement(c->b, vb, y, i32_c(c, i), "");
    }
    for (int i = 0; i < nacc; i++)
        vc = LLVMBuildInsertElement(c->b, vc, acc[i], i32_c(c, i), "");
    LLVMValueRef args[6] = {va, vb, vc, i32_c(c, 0), i32_c(c, 0), i32_c(c, 0)};
    LLVMValueRef r = target_intrinsic(c, name, NULL, 0, args, 6);
    for (int i = 0; i < nacc; i++)
        d[i] = LLVMBuildExtractElement(c->b, r, i32_c(c, i), "");
}

typedef struct AmdArch {
    const char *name;
    int wave64, lds_bytes;
} AmdArch;

static const AmdArch arches[] = {
    {"gfx90a", 1, 64 * 1024},  /* MI200 */
    {"gfx942", 1, 64 * 1024},  /* MI300 */
    {"gfx950", 1, 160 * 1024}, /* MI350 */
    {"gfx1100", 0, 64 * 1024}, /* RDNA3 (wave32) */
    {"gfx1200", 0, 64 * 1024}, /* RDNA4 (wave32) */
};

const Target *target_amdgpu_init(Target *t, const char *name)
{
    const AmdArch *a = NULL;
    for (size_t i = 0; i < sizeof arches / sizeof arches[0]; i++)
        if (strcmp(arches[i].name, name) == 0)
            a = &arches[i];
    if (!a)
        return NULL;
    int lanes = a->wave64 ? 64 : 32;
    *t = (Target){
        .kind = TARGET_AMDGPU, .name = a->name, .triple = "amdgcn-amd-amdhsa", .cpu = a->name,
        .features = a->wave64 ? "+wavefrontsize64" : "+wavefrontsize32",
        .threads_per_warp = lanes, .max_warps = 1024 / lanes, .max_regs = 256,
        .global_as = 1, .shared_as = 3, .unroll_elements = 1, .smem_limit = a->lds_bytes,
        .nontemporal_hints = 1, .inline_asm = 1,
        .sync_scopes = {"workgroup", "agent", ""},
        .kernel_begin = amd_kernel_begin, .kernel_finish = amd_kernel_finish,
        .thread_id = amd_thread_id, .program_id = amd_program_id,
        .num_programs = amd_num_programs, .barrier = amd_barrier,
        .shuffle_xor = a->wave64 ? amd_shuffle_xor64 : amd_shuffle_xor32,
        .shuffle_idx = amd_shuffle_idx, .smem_base = target_extern_smem,
        /* f32 tanh and erf and f64 exp, log, sin, ... computed by the kernel (no device
         * library is linked); the rest are instructions or short expansions of the backend */
        .math = target_math_amd,
        .mma = a->wave64 ? TARGET_MMA_MFMA : TARGET_MMA_NONE, .mfma = amd_mfma, .math2 = target_math2_amd,
    };
    return t;
}

/* Whether `name` names an AMD GPU target this compiler knows. */
int target_is_amdgpu_name(const char *name)
{
    for (size_t i = 0; i < sizeof arches / sizeof arches[0]; i++)
        if (strcmp(arches[i].name, name) == 0)
            return 1;
    return 0;
}
