/* target_host.c: the CPU target. One thread owns whole tiles (threads_per_warp 1, one warp),
 * so ids are constants and barriers vanish. The entry point is a wrapper
 * `void SYMBOL(void **args, const int32_t *grid)`: args[i] points to runtime param i's value
 * (pointers: a 64-bit address; bool: one byte), grid = {pid x,y,z, nprog x,y,z}. */
#include <llvm-c/TargetMachine.h>
#include "target.h"

static LLVMValueRef load_param(TargetCtx *c, LLVMTypeRef t, int i)
{
    LLVMTypeRef ptr = LLVMPointerTypeInContext(c->ctx, 0);
    LLVMTypeRef i64 = LLVMInt64TypeInContext(c->ctx);
    LLVMValueRef idx = LLVMConstInt(i64, (unsigned long long)i, 0);
    LLVMValueRef slot = LLVMBuildGEP2(c->b, ptr, c->host_args, &idx, 1, "");
    LLVMValueRef p = LLVMBuildLoad2(c->b, ptr, slot, "");
    if (LLVMGetTypeKind(t) == LLVMIntegerTypeKind && LLVMGetIntTypeWidth(t) == 1) {
        LLVMValueRef byte = LLVMBuildLoad2(c->b, LLVMInt8TypeInContext(c->ctx), p, "");
        return LLVMBuildICmp(c->b, LLVMIntNE, byte, LLVMConstInt(LLVMTypeOf(byte), 0, 0), "");
    }
    LLVMValueRef v = LLVMBuildLoad2(c->b, t, p, "");
    LLVMSetAlignment(v, 1);
    return v;
}

LLVMValueRef target_host_entry(TargetCtx *c, const char *symbol, LLVMTypeRef *ptypes,
                               int nparams, LLVMValueRef *params_out, int with_thread)
{
    LLVMTypeRef ptr = LLVMPointerTypeInContext(c->ctx, 0);
    LLVMTypeRef args[3] = {ptr, ptr, ptr};
    LLVMTypeRef fty = LLVMFunctionType(LLVMVoidTypeInContext(c->ctx), args,
                                       with_thread ? 3 : 2, 0);
    c->fn = LLVMAddFunction(c->mod, symbol, fty);
    c->host_args = LLVMGetParam(c->fn, 0);
    c->host_grid = LLVMGetParam(c->fn, 1);
    c->thread = with_thread ? LLVMGetParam(c->fn, 2) : NULL;
    target_entry_blocks(c);
    for (int i = 0; i < nparams; i++)
        params_out[i] = load_param(c, ptypes[i], i);
    return c->fn;
}

static LLVMValueRef host_kernel_begin(TargetCtx *c, const char *symbol, LLVMTypeRef *ptypes,
                                      int nparams, LLVMValueRef *params_out)
{
    return target_host_entry(c, symbol, ptypes, nparams, params_out, 0);
}

static void host_kernel_finish(TargetCtx *c, int num_threads, int smem_bytes)
{
    if (c->smem) {
        LLVMTypeRef i64 = LLVMInt64TypeInContext(c->ctx);
        LLVMSetOperand(c->smem, 0, LLVMConstInt(i64, smem_bytes > 0 ? smem_bytes : 1, 0));
    }
    unsigned kind = LLVMGetEnumAttributeKindForName("nounwind", 8);
    LLVMAddAttributeAtIndex(c->fn, LLVMAttributeFunctionIndex,
                            LLVMCreateEnumAttribute(c->ctx, kind, 0));
}

static LLVMValueRef host_thread_id(TargetCtx *c)
{
    return LLVMConstInt(LLVMInt32TypeInContext(c->ctx), 0, 0);
}

LLVMValueRef target_host_grid(TargetCtx *c, int i)
{
    LLVMTypeRef i32 = LLVMInt32TypeInContext(c->ctx);
    LLVMValueRef idx = LLVMConstInt(LLVMInt64TypeInContext(c->ctx), (unsigned)i, 0);
    LLVMValueRef p = LLVMBuildGEP2(c->b, i32, c->host_grid, &idx, 1, "");
    return LLVMBuildLoad2(c->b, i32, p, i < 3 ? "pid" : "nprog");
}

static LLVMValueRef host_program_id(TargetCtx *c, int axis) { return target_host_grid(c, axis); }
static LLVMValueRef host_num_programs(TargetCtx *c, int axis)
{
    return target_host_grid(c, 3 + axis);
}
static void host_barrier(TargetCtx *c) { (void)c; }
static LLVMValueRef host_shuffle_xor(TargetCtx *c, LLVMValueRef v, int mask) { return v; }

/* An alloca whose size kernel_finish patches once lowering knows it. */
static LLVMValueRef host_smem_base(TargetCtx *c)
{
    if (!c->smem) {
        LLVMTypeRef i8 = LLVMInt8TypeInContext(c->ctx);
        LLVMValueRef n = LLVMConstInt(LLVMInt64TypeInContext(c->ctx), 1, 0);
        c->smem = LLVMBuildArrayAlloca(c->alloca_b, i8, n, "smem");
        LLVMSetAlignment(c->smem, 16);
    }
    return c->smem;
}

static int host_module_finish(TargetCtx *c) { return 0; }

static const Target host_target = {
    .kind = TARGET_HOST,
    .name = "host",
    .threads_per_warp = 1,
    .max_warps = 1,
    .soft_bf16 = 1,
    .max_frame_bytes = 48ll << 20, /* the CPU backend's workers have 64 MiB stacks (cpu_jit.c) */
    .kernel_begin = host_kernel_begin,
    .kernel_finish = host_kernel_finish,
    .thread_id = host_thread_id,
    .program_id = host_program_id,
    .num_programs = host_num_programs,
    .barrier = host_barrier,
    .shuffle_xor = host_shuffle_xor,
    .smem_base = host_smem_base,
    .math = target_math_llvm,
    .module_finish = host_module_finish,
};

const Target *target_host(void) { return &host_target; }
