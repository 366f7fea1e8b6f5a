/* hook_kernel.c: a stand-in for tc_compile in the runtime tests, so the runtime (launch,
 * specialization cache, disk cache, CPU backend) is tested apart from the compiler. It builds
 * `scale` with the LLVM C API: out[j] = s * j + expf(0) for j in the program's BLOCK, j < n,
 * with BLOCK taken from the request's const values, and emits a host object. For the "sim"
 * target the entry takes the simulated thread too, every one of 64 threads computes the
 * same stores and then waits at a barrier; BLOCK = 7 makes thread 37 skip the barrier
 * (divergent) and BLOCK = 9 stores past the kernel's 64 bytes of shared memory. */
#include <string.h>
#include <llvm-c/Core.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include "hook_kernel.h"

/* *(T *)args[i] */
static LLVMValueRef arg_load(LLVMBuilderRef b, LLVMValueRef args, int i, LLVMTypeRef t)
{
    LLVMContextRef c = LLVMGetTypeContext(t);
    LLVMTypeRef ptr = LLVMPointerTypeInContext(c, 0);
    LLVMValueRef idx = LLVMConstInt(LLVMInt64TypeInContext(c), (unsigned long long)i, 0);
    LLVMValueRef slot = LLVMBuildGEP2(b, ptr, args, &idx, 1, "");
    return LLVMBuildLoad2(b, t, LLVMBuildLoad2(b, ptr, slot, ""), "");
}

static LLVMValueRef sim_call(LLVMModuleRef m, LLVMBuilderRef b, const char *name,
                             LLVMTypeRef ret, LLVMValueRef *args, int n)
{
    LLVMTypeRef ps[4];
    for (int i = 0; i < n; i++)
        ps[i] = LLVMTypeOf(args[i]);
    LLVMTypeRef ft = LLVMFunctionType(ret, ps, (unsigned)n, 0);
    LLVMValueRef f = LLVMGetNamedFunction(m, name);
    f = f ? f : LLVMAddFunction(m, name, ft);
    return LLVMBuildCall2(b, ft, f, args, (unsigned)n, "");
}

/* The sim entry's end: the barrier (all but thread 37 when block is 7), or a store past the
 * end of shared memory (block 9). */
static void sim_tail(LLVMModuleRef m, LLVMBuilderRef b, LLVMValueRef thread, int block)
{
    LLVMContextRef c = LLVMGetModuleContext(m);
    LLVMTypeRef i32 = LLVMInt32TypeInContext(c), ptr = LLVMPointerTypeInContext(c, 0);
    LLVMTypeRef v = LLVMVoidTypeInContext(c);
    if (block == 9) {
        LLVMValueRef sm = sim_call(m, b, "tile_sim_smem", ptr, &thread, 1);
        LLVMValueRef at = LLVMBuildGEP2(b, LLVMInt8TypeInContext(c), sm,
                                        (LLVMValueRef[]){ LLVMConstInt(i32, 64, 0) }, 1, "");
        sim_call(m, b, "tile_sim_smem_access", v, (LLVMValueRef[]){ thread, at,
                 LLVMConstInt(i32, 4, 0), LLVMConstInt(i32, 1, 0) }, 4);
    }
    LLVMValueRef tid = sim_call(m, b, "tile_sim_thread_id", i32, &thread, 1);
    LLVMValueRef skip = LLVMBuildICmp(b, LLVMIntEQ, tid, LLVMConstInt(i32, 37, 0), "");
    LLVMValueRef f = LLVMGetBasicBlockParent(LLVMGetInsertBlock(b));
    LLVMBasicBlockRef bar = LLVMAppendBasicBlockInContext(c, f, "bar"),
                      ret = LLVMAppendBasicBlockInContext(c, f, "ret");
    LLVMBuildCondBr(b, block == 7 ? skip : LLVMConstInt(LLVMInt1TypeInContext(c), 0, 0), ret,
                    bar);
    LLVMPositionBuilderAtEnd(b, bar);
    sim_call(m, b, "tile_sim_barrier", v, &thread, 1);
    LLVMBuildBr(b, ret);
    LLVMPositionBuilderAtEnd(b, ret);
}

static void build_body(LLVMModuleRef m, LLVMValueRef f, int block)
{
    LLVMContextRef c = LLVMGetModuleContext(m);
    LLVMTypeRef i32 = LLVMInt32TypeInContext(c), f32 = LLVMFloatTypeInContext(c);
    LLVMTypeRef ptr = LLVMPointerTypeInContext(c, 0);
    LLVMTypeRef expf_t = LLVMFunctionType(f32, &f32, 1, 0);
    LLVMValueRef expf_fn = LLVMAddFunction(m, "expf", expf_t);
    LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(c, f, "entry"),
                      loop = LLVMAppendBasicBlockInContext(c, f, "loop"),
                      body = LLVMAppendBasicBlockInContext(c, f, "body"),
                      done = LLVMAppendBasicBlockInContext(c, f, "done");
    LLVMBuilderRef b = LLVMCreateBuilderInContext(c);
    LLVMPositionBuilderAtEnd(b, entry);
    LLVMValueRef args = LLVMGetParam(f, 0), grid = LLVMGetParam(f, 1);
    LLVMValueRef out = arg_load(b, args, 0, ptr), n = arg_load(b, args, 1, i32),
                 s = arg_load(b, args, 2, f32);
    LLVMValueRef pid = LLVMBuildLoad2(b, i32, grid, "pid");
    LLVMValueRef start = LLVMBuildMul(b, pid, LLVMConstInt(i32, (unsigned)block, 0), "");
    LLVMValueRef end = LLVMBuildAdd(b, start, LLVMConstInt(i32, (unsigned)block, 0), "");
    LLVMBuildBr(b, loop);
    LLVMPositionBuilderAtEnd(b, loop);
    LLVMValueRef j = LLVMBuildPhi(b, i32, "j");
    LLVMValueRef in = LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntSLT, j, end, ""),
                                   LLVMBuildICmp(b, LLVMIntSLT, j, n, ""), "");
    LLVMBuildCondBr(b, in, body, done);
    LLVMPositionBuilderAtEnd(b, body);
    LLVMValueRef zero = LLVMConstReal(f32, 0.0);
    LLVMValueRef one = LLVMBuildCall2(b, expf_t, expf_fn, &zero, 1, "");
    LLVMValueRef v = LLVMBuildFAdd(b, LLVMBuildFMul(b, s, LLVMBuildSIToFP(b, j, f32, ""), ""),
                                   one, "");
    LLVMValueRef jx = LLVMBuildSExt(b, j, LLVMInt64TypeInContext(c), "");
    LLVMBuildStore(b, v, LLVMBuildGEP2(b, f32, out, &jx, 1, ""));
    LLVMValueRef next = LLVMBuildAdd(b, j, LLVMConstInt(i32, 1, 0), "");
    LLVMBuildBr(b, loop);
    LLVMValueRef inc_v[] = { start, next };
    LLVMBasicBlockRef inc_b[] = { entry, body };
    LLVMAddIncoming(j, inc_v, inc_b, 2);
    LLVMPositionBuilderAtEnd(b, done);
    if (LLVMCountParams(f) == 3)
        sim_tail(m, b, LLVMGetParam(f, 2), block);
    LLVMBuildRetVoid(b);
    LLVMDisposeBuilder(b);
}

static int emit(LLVMModuleRef m, Arena *arena, CompiledKernel *out)
{
    char *triple = LLVMGetDefaultTargetTriple(), *err = NULL;
    LLVMTargetRef target;
    LLVMMemoryBufferRef buf = NULL;
    int bad = LLVMGetTargetFromTriple(triple, &target, &err);
    if (!bad) {
        LLVMTargetMachineRef tm = LLVMCreateTargetMachine(target, triple, "", "",
            LLVMCodeGenLevelDefault, LLVMRelocPIC, LLVMCodeModelDefault);
        LLVMSetTarget(m, triple);
        bad = LLVMTargetMachineEmitToMemoryBuffer(tm, m, LLVMObjectFile, &err, &buf);
        LLVMDisposeTargetMachine(tm);
    }
    LLVMDisposeMessage(triple);
    if (bad) {
        LLVMDisposeMessage(err);
        return -1;
    }
    size_t n = LLVMGetBufferSize(buf);
    void *code = arena_alloc(arena, n);
    memcpy(code, LLVMGetBufferStart(buf), n);
    LLVMDisposeMemoryBuffer(buf);
    out->code = code;
    out->code_size = n;
    return 0;
}

int hook_compile(const CompileRequest *req, Arena *arena, Diags *diags, CompiledKernel *out)
{
    static CompiledParam params[3] = { { "out", ET_PTR, ET_F32 }, { "n", ET_I32, ET_VOID },
                                       { "s", ET_F32, ET_VOID } };
    int block = 1;
    for (int i = 0; i < req->nconsts; i++)
        if (!strcmp(req->consts[i].name, "BLOCK"))
            block = (int)req->consts[i].value;
    if (block == 13) { /* the tests' way to ask for a compile error */
        diag_error(diags, (SrcLoc){ 0 }, "BLOCK = 13 is unlucky");
        return -1;
    }
    LLVMInitializeNativeTarget();
    LLVMInitializeNativeAsmPrinter();
    LLVMContextRef c = LLVMContextCreate();
    LLVMModuleRef m = LLVMModuleCreateWithNameInContext("hook", c);
    int sim = req->target && !strcmp(req->target, "sim");
    LLVMTypeRef ptr = LLVMPointerTypeInContext(c, 0), ps[] = { ptr, ptr, ptr };
    LLVMValueRef f = LLVMAddFunction(m, "scale", LLVMFunctionType(LLVMVoidTypeInContext(c), ps,
                                                                   sim ? 3 : 2, 0));
    build_body(m, f, block);
    int rc = emit(m, arena, out);
    LLVMDisposeModule(m);
    LLVMContextDispose(c);
    if (rc < 0)
        return -1;
    out->symbol = "scale";
    out->kind = CODE_HOST_OBJECT;
    out->num_threads = sim ? 64 : 1;
    out->smem_bytes = sim ? 64 : 0;
    out->params = params;
    out->nparams = 3;
    return 0;
}
