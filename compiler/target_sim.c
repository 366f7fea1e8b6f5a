/* target_sim.c: the "sim" target: the GPU lowering path (warps of 32 lanes, shared memory,
 * barriers, shuffles, mma.sync; "sim-amd": AMD's, waves of 64 lanes and MFMA) emitted as
 * host code for the runtime's SIMT emulator (runtime/sim.c),
 * which runs every simulated thread as a coroutine. The entry is the host wrapper with a
 * third argument, `void SYMBOL(void **args, const int32_t *grid, void *thread)`; thread
 * ids, shared memory, barriers, shuffles and a check before every shared-memory access are
 * calls of compiler/sim_abi.h's tile_sim_* functions on that handle. */
#include "target.h"

static LLVMTypeRef ptr_t(TargetCtx *c) { return LLVMPointerTypeInContext(c->ctx, 0); }
static LLVMTypeRef i32_t(TargetCtx *c) { return LLVMInt32TypeInContext(c->ctx); }

/* Calls tile_sim_NAME(thread, args...) at builder b (declared nounwind on first use). */
static LLVMValueRef sim_call(TargetCtx *c, LLVMBuilderRef b, const char *name, LLVMTypeRef ret,
                             LLVMTypeRef *ptypes, LLVMValueRef *args, int n)
{
    LLVMTypeRef fty = LLVMFunctionType(ret, ptypes, (unsigned)n, 0);
    LLVMValueRef f = LLVMGetNamedFunction(c->mod, name);
    if (!f) {
        f = LLVMAddFunction(c->mod, name, fty);
        unsigned kind = LLVMGetEnumAttributeKindForName("nounwind", 8);
        LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex,
                                LLVMCreateEnumAttribute(c->ctx, kind, 0));
    }
    return LLVMBuildCall2(b, fty, f, args, (unsigned)n, "");
}

static LLVMValueRef sim_kernel_begin(TargetCtx *c, const char *symbol, LLVMTypeRef *ptypes,
                                     int nparams, LLVMValueRef *params_out)
{
    return target_host_entry(c, symbol, ptypes, nparams, params_out, 1);
}

static void sim_kernel_finish(TargetCtx *c, int num_threads, int smem_bytes)
{
    unsigned kind = LLVMGetEnumAttributeKindForName("nounwind", 8);
    LLVMAddAttributeAtIndex(c->fn, LLVMAttributeFunctionIndex,
                            LLVMCreateEnumAttribute(c->ctx, kind, 0));
}

static LLVMValueRef sim_thread_id(TargetCtx *c)
{
    LLVMTypeRef p = ptr_t(c);
    return sim_call(c, c->b, "tile_sim_thread_id", i32_t(c), &p, &c->thread, 1);
}

static LLVMValueRef sim_program_id(TargetCtx *c, int axis) { return target_host_grid(c, axis); }
static LLVMValueRef sim_num_programs(TargetCtx *c, int axis)
{
    return target_host_grid(c, 3 + axis);
}

static void sim_barrier(TargetCtx *c)
{
    LLVMTypeRef p = ptr_t(c);
    sim_call(c, c->b, "tile_sim_barrier", LLVMVoidTypeInContext(c->ctx), &p, &c->thread, 1);
}

static LLVMValueRef sim_shuffle_xor(TargetCtx *c, LLVMValueRef v, int mask)
{
    LLVMTypeRef pt[3] = {ptr_t(c), i32_t(c), i32_t(c)};
    LLVMValueRef args[3] = {c->thread, v, LLVMConstInt(i32_t(c), (unsigned)mask, 0)};
    return sim_call(c, c->b, "tile_sim_shfl_xor", i32_t(c), pt, args, 3);
}

/* The program's shared memory, asked for once in the entry block (it dominates every use). */
static LLVMValueRef sim_smem_base(TargetCtx *c)
{
    if (!c->smem) {
        LLVMTypeRef p = ptr_t(c);
        c->smem = sim_call(c, c->alloca_b, "tile_sim_smem", p, &p, &c->thread, 1);
    }
    return c->smem;
}

static void sim_smem_access(TargetCtx *c, LLVMValueRef ptr, int bytes, int is_write)
{
    LLVMTypeRef pt[4] = {ptr_t(c), ptr_t(c), i32_t(c), i32_t(c)};
    LLVMValueRef args[4] = {c->thread, ptr, LLVMConstInt(i32_t(c), (unsigned)bytes, 0),
                            LLVMConstInt(i32_t(c), (unsigned)is_write, 0)};
    sim_call(c, c->b, "tile_sim_smem_access", LLVMVoidTypeInContext(c->ctx), pt, args, 4);
}

static LLVMValueRef sim_shuffle_idx(TargetCtx *c, LLVMValueRef v, LLVMValueRef lane)
{
    LLVMTypeRef pt[3] = {ptr_t(c), i32_t(c), i32_t(c)};
    LLVMValueRef args[3] = {c->thread, v, lane};
    return sim_call(c, c->b, "tile_sim_shfl_idx", i32_t(c), pt, args, 3);
}

/* An entry-block array of n 32-bit words (fragments passed by address). */
static LLVMValueRef words(TargetCtx *c, int n)
{
    LLVMValueRef a = LLVMBuildAlloca(c->alloca_b, LLVMArrayType2(i32_t(c), (uint64_t)n), "frag");
    LLVMSetAlignment(a, 16);
    return a;
}

static LLVMValueRef word_at(TargetCtx *c, LLVMValueRef arr, int i)
{
    LLVMValueRef idx = LLVMConstInt(i32_t(c), (unsigned)i, 0);
    return LLVMBuildGEP2(c->b, i32_t(c), arr, &idx, 1, "");
}

static LLVMValueRef fill(TargetCtx *c, LLVMValueRef *v, int n)
{
    LLVMValueRef arr = words(c, n);
    for (int i = 0; i < n; i++)
        LLVMBuildStore(c->b, LLVMBuildBitCast(c->b, v[i], i32_t(c), ""), word_at(c, arr, i));
    return arr;
}

static void sim_mma_sync(TargetCtx *c, MmaKind kind, LLVMValueRef *a, LLVMValueRef *b,
                         LLVMValueRef *acc, LLVMValueRef *d)
{
    LLVMValueRef pa = fill(c, a, 4), pb = fill(c, b, 2), pc = fill(c, acc, 4), pd = words(c, 4);
    LLVMTypeRef pt[6] = {ptr_t(c), i32_t(c), ptr_t(c), ptr_t(c), ptr_t(c), ptr_t(c)};
    LLVMValueRef args[6] = {c->thread, LLVMConstInt(i32_t(c), (unsigned)kind, 0), pa, pb, pc, pd};
    sim_call(c, c->b, "tile_sim_mma", LLVMVoidTypeInContext(c->ctx), pt, args, 6);
    LLVMTypeRef out = LLVMTypeOf(acc[0]);
    for (int i = 0; i < 4; i++)
        d[i] = LLVMBuildBitCast(c->b, LLVMBuildLoad2(c->b, i32_t(c), word_at(c, pd, i), ""), out, "");
}

/* Four 16-bit values into two words: element i in bits 16 (i % 2) of word i / 2. */
static LLVMValueRef fill_halves(TargetCtx *c, LLVMValueRef *v)
{
    LLVMTypeRef i16 = LLVMInt16TypeInContext(c->ctx);
    LLVMValueRef w[2];
    for (int j = 0; j < 2; j++) {
        LLVMValueRef lo = LLVMBuildZExt(c->b, LLVMBuildBitCast(c->b, v[2 * j], i16, ""), i32_t(c), "");
        LLVMValueRef hi = LLVMBuildZExt(c->b, LLVMBuildBitCast(c->b, v[2 * j + 1], i16, ""), i32_t(c), "");
        w[j] = LLVMBuildOr(c->b, lo, LLVMBuildShl(c->b, hi, LLVMConstInt(i32_t(c), 16, 0), ""), "");
    }
    return fill(c, w, 2);
}

static void sim_mfma(TargetCtx *c, MmaKind kind, int inst, LLVMValueRef *a, LLVMValueRef *b,
                     LLVMValueRef *acc, LLVMValueRef *d)
{
    int nacc = inst * inst / 64;
    LLVMValueRef pa = fill_halves(c, a), pb = fill_halves(c, b), pc = fill(c, acc, nacc);
    LLVMValueRef pd = words(c, nacc);
    LLVMTypeRef pt[7] = {ptr_t(c), i32_t(c), i32_t(c), ptr_t(c), ptr_t(c), ptr_t(c), ptr_t(c)};
    LLVMValueRef args[7] = {c->thread, LLVMConstInt(i32_t(c), kind == MMA_BF16_F32, 0),
                            LLVMConstInt(i32_t(c), (unsigned)inst, 0), pa, pb, pc, pd};
    sim_call(c, c->b, "tile_sim_mfma", LLVMVoidTypeInContext(c->ctx), pt, args, 7);
    LLVMTypeRef f32 = LLVMFloatTypeInContext(c->ctx);
    for (int i = 0; i < nacc; i++)
        d[i] = LLVMBuildBitCast(c->b, LLVMBuildLoad2(c->b, i32_t(c), word_at(c, pd, i), ""), f32, "");
}

static void sim_ldmatrix(TargetCtx *c, int nmat, int trans, LLVMValueRef ptr, LLVMValueRef *out)
{
    LLVMValueRef po = words(c, 4);
    LLVMTypeRef pt[5] = {ptr_t(c), i32_t(c), i32_t(c), ptr_t(c), ptr_t(c)};
    LLVMValueRef args[5] = {c->thread, LLVMConstInt(i32_t(c), (unsigned)nmat, 0),
                            LLVMConstInt(i32_t(c), (unsigned)trans, 0), ptr, po};
    sim_call(c, c->b, "tile_sim_ldmatrix", LLVMVoidTypeInContext(c->ctx), pt, args, 5);
    for (int j = 0; j < nmat; j++)
        out[j] = LLVMBuildLoad2(c->b, i32_t(c), word_at(c, po, j), "");
}

static void sim_async_copy(TargetCtx *c, LLVMValueRef dst, LLVMValueRef src, int bytes,
                           LLVMValueRef src_bytes)
{
    LLVMTypeRef pt[5] = {ptr_t(c), ptr_t(c), ptr_t(c), i32_t(c), i32_t(c)};
    LLVMValueRef args[5] = {c->thread, dst, src, LLVMConstInt(i32_t(c), (unsigned)bytes, 0), src_bytes};
    sim_call(c, c->b, "tile_sim_cp_async", LLVMVoidTypeInContext(c->ctx), pt, args, 5);
}

static void sim_async_commit(TargetCtx *c)
{
    LLVMTypeRef p = ptr_t(c);
    sim_call(c, c->b, "tile_sim_cp_async_commit", LLVMVoidTypeInContext(c->ctx), &p, &c->thread, 1);
}

static void sim_async_wait(TargetCtx *c, int pending)
{
    LLVMTypeRef pt[2] = {ptr_t(c), i32_t(c)};
    LLVMValueRef args[2] = {c->thread, LLVMConstInt(i32_t(c), (unsigned)pending, 0)};
    sim_call(c, c->b, "tile_sim_cp_async_wait", LLVMVoidTypeInContext(c->ctx), pt, args, 2);
}

static int sim_module_finish(TargetCtx *c) { return 0; }

static const Target sim_target = {
    .kind = TARGET_SIM,
    .name = "sim",
    .threads_per_warp = 32,
    .max_warps = 32,
    .max_regs = 255,
    .unroll_elements = 1,
    .soft_bf16 = 1,
    .max_frame_bytes = 768 << 10, /* each simulated thread has a 1 MiB stack (sim_int.h) */
    .kernel_begin = sim_kernel_begin,
    .kernel_finish = sim_kernel_finish,
    .thread_id = sim_thread_id,
    .program_id = sim_program_id,
    .num_programs = sim_num_programs,
    .barrier = sim_barrier,
    .mma = TARGET_MMA_SYNC,
    .smem_limit = 232448, /* as an H100's */
    .shuffle_xor = sim_shuffle_xor,
    .shuffle_idx = sim_shuffle_idx,
    .mma_sync = sim_mma_sync,
    .ldmatrix = sim_ldmatrix,
    .pad_operand_rows = 1,
    .async_copy = sim_async_copy,
    .async_commit = sim_async_commit,
    .async_wait = sim_async_wait,
    .smem_base = sim_smem_base,
    .smem_access = sim_smem_access,
    .math = target_math_llvm,
    .module_finish = sim_module_finish,
};

/* "sim-amd": the AMD lowering path (CDNA: waves of 64 lanes, MFMA, 64 KiB of LDS, no
 * asynchronous copies) on the same emulator, so the code an AMD GPU would run is executed and
 * checked in CI, where no AMD GPU is. */
static const Target sim_amd_target = {
    .kind = TARGET_SIM,
    .name = "sim-amd",
    .threads_per_warp = 64,
    .max_warps = 16,
    .max_regs = 256,
    .unroll_elements = 1,
    .soft_bf16 = 1,
    .max_frame_bytes = 768 << 10,
    .kernel_begin = sim_kernel_begin,
    .kernel_finish = sim_kernel_finish,
    .thread_id = sim_thread_id,
    .program_id = sim_program_id,
    .num_programs = sim_num_programs,
    .barrier = sim_barrier,
    .mma = TARGET_MMA_MFMA,
    .smem_limit = 65536,
    .shuffle_xor = sim_shuffle_xor,
    .shuffle_idx = sim_shuffle_idx,
    .mfma = sim_mfma,
    .smem_base = sim_smem_base,
    .smem_access = sim_smem_access,
    .math = target_math_amd, /* the AMD GPU code's: f32 tanh and erf, f64 exp, log, sin, ... */
    .math2 = target_math2_amd, /* pow, atan2, hypot as the AMD GPU code computes them */
    .module_finish = sim_module_finish,
};

const Target *target_sim(void) { return &sim_target; }
const Target *target_sim_amd(void) { return &sim_amd_target; }
