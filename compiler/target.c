/* target.c: the table of targets (target_lookup) and small helpers the target files share:
 * calling intrinsics and named functions, and math built from LLVM's generic intrinsics. */
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include "target.h"

enum { NVPTX_SLOTS = 16 };
static Target nvptx_table[NVPTX_SLOTS];
static char nvptx_names[NVPTX_SLOTS][16];
static int nvptx_count;
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

/* Parses "sm_90" / "sm_90a" into (90, 1); -1 when malformed. */
static int parse_sm(const char *name, int *sm, int *arch)
{
    if (strncmp(name, "sm_", 3) != 0)
        return -1;
    char *end;
    long v = strtol(name + 3, &end, 10);
    if (end == name + 3 || v < 50 || v > 200)
        return -1;
    *arch = (*end == 'a');
    if (*end && !(*end == 'a' && end[1] == 0))
        return -1;
    *sm = (int)v;
    return 0;
}

static const Target *nvptx_lookup(const char *name, int sm, int arch)
{
    const Target *found = NULL;
    pthread_mutex_lock(&table_lock);
    for (int i = 0; i < nvptx_count && !found; i++)
        if (strcmp(nvptx_names[i], name) == 0)
            found = &nvptx_table[i];
    if (!found && nvptx_count < NVPTX_SLOTS) {
        int i = nvptx_count++;
        snprintf(nvptx_names[i], sizeof nvptx_names[i], "%s", name);
        found = target_nvptx_init(&nvptx_table[i], nvptx_names[i], sm, arch);
    }
    pthread_mutex_unlock(&table_lock);
    return found;
}

/* The AMD records: one per known name, filled on first use. */
static const Target *amdgpu_lookup(const char *name)
{
    enum { AMD_SLOTS = 8 };
    static Target table[AMD_SLOTS];
    static int count;
    const Target *found = NULL;
    pthread_mutex_lock(&table_lock);
    for (int i = 0; i < count && !found; i++)
        if (strcmp(table[i].name, name) == 0)
            found = &table[i];
    if (!found && count < AMD_SLOTS && target_amdgpu_init(&table[count], name))
        found = &table[count++];
    pthread_mutex_unlock(&table_lock);
    return found;
}

const Target *target_lookup(const char *name)
{
    int sm, arch;
    if (!name || strcmp(name, "host") == 0)
        return target_host();
    if (strcmp(name, "sim") == 0)
        return target_sim();
    if (strcmp(name, "sim-amd") == 0)
        return target_sim_amd();
    if (parse_sm(name, &sm, &arch) == 0 && sm >= 70)
        return nvptx_lookup(name, sm, arch);
    if (target_is_amdgpu_name(name))
        return amdgpu_lookup(name);
    return NULL;
}

LLVMValueRef target_call_named(TargetCtx *c, const char *name, LLVMTypeRef ret,
                               LLVMTypeRef *ptypes, int n, LLVMValueRef *args)
{
    LLVMTypeRef fty = LLVMFunctionType(ret, ptypes, (unsigned)n, 0);
    LLVMValueRef f = LLVMGetNamedFunction(c->mod, name);
    if (!f)
        f = LLVMAddFunction(c->mod, name, fty);
    return LLVMBuildCall2(c->b, fty, f, args, (unsigned)n, "");
}

LLVMValueRef target_intrinsic(TargetCtx *c, const char *name, LLVMTypeRef *overload,
                              int noverload, LLVMValueRef *args, int nargs)
{
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    if (id == 0)
        return NULL;
    LLVMValueRef f = LLVMGetIntrinsicDeclaration(c->mod, id, overload, (size_t)noverload);
    LLVMTypeRef fty = LLVMIntrinsicGetType(c->ctx, id, overload, (size_t)noverload);
    return LLVMBuildCall2(c->b, fty, f, args, (unsigned)nargs, "");
}

LLVMValueRef target_intrinsic1(TargetCtx *c, const char *name, LLVMValueRef x)
{
    LLVMTypeRef t = LLVMTypeOf(x);
    return target_intrinsic(c, name, &t, 1, &x, 1);
}

/* llvm.NAME(x, y) overloaded on x's type */
static LLVMValueRef fp2(TargetCtx *c, const char *name, LLVMValueRef x, LLVMValueRef y)
{
    LLVMTypeRef t = LLVMTypeOf(x);
    LLVMValueRef xy[2] = {x, y};
    return target_intrinsic(c, name, &t, 1, xy, 2);
}

LLVMValueRef target_math_llvm(TargetCtx *c, TirUnOp op, LLVMValueRef x, int is_f64)
{
    static const char *names[] = {
        [UN_ABS] = "llvm.fabs", [UN_EXP] = "llvm.exp", [UN_EXP2] = "llvm.exp2",
        [UN_LOG] = "llvm.log", [UN_LOG2] = "llvm.log2", [UN_SQRT] = "llvm.sqrt",
        [UN_SIN] = "llvm.sin", [UN_COS] = "llvm.cos", [UN_FLOOR] = "llvm.floor",
        [UN_CEIL] = "llvm.ceil", [UN_TRUNC] = "llvm.trunc", [UN_TANH] = "llvm.tanh",
        [UN_RINT] = "llvm.rint",
    };
    static const char *libm[][2] = {[UN_ERF] = {"erff", "erf"}, [UN_LOG1P] = {"log1pf", "log1p"},
                                    [UN_EXPM1] = {"expm1f", "expm1"}, [UN_TAN] = {"tanf", "tan"},
                                    [UN_ATAN] = {"atanf", "atan"}, [UN_ASIN] = {"asinf", "asin"},
                                    [UN_ACOS] = {"acosf", "acos"}, [UN_SINH] = {"sinhf", "sinh"},
                                    [UN_COSH] = {"coshf", "cosh"},
                                    [UN_LOG10] = {"log10f", "log10"},
                                    [UN_ASINH] = {"asinhf", "asinh"}, [UN_ACOSH] = {"acoshf", "acosh"},
                                    [UN_ATANH] = {"atanhf", "atanh"}, [UN_CBRT] = {"cbrtf", "cbrt"},
                                    [UN_EXP10] = {"exp10f", "exp10"}};
    if (op == UN_ERFINV) /* none in the C library: target_math_f64.c's */
        return target_erfinv(c, x, is_f64);
    if ((unsigned)op < sizeof libm / sizeof libm[0] && libm[op][0]) {
        /* no LLVM intrinsic: the C library's (host and sim code) */
        LLVMTypeRef t = LLVMTypeOf(x);
        return target_call_named(c, libm[op][is_f64], t, &t, 1, &x);
    }
    if (op == UN_RSQRT) {
        LLVMValueRef s = target_intrinsic1(c, "llvm.sqrt", x);
        return LLVMBuildFDiv(c->b, LLVMConstReal(LLVMTypeOf(x), 1.0), s, "");
    }
    if ((unsigned)op >= sizeof names / sizeof names[0] || !names[op]) {
        diag_error(c->diags, c->loc, "internal error: no math function for op %d", (int)op);
        return NULL;
    }
    return target_intrinsic1(c, names[op], x);
}

LLVMValueRef target_math2_llvm(TargetCtx *c, TirBinOp op, LLVMValueRef x, LLVMValueRef y, int is_f64)
{
    LLVMValueRef xy[2] = {x, y};
    LLVMTypeRef t[2] = {LLVMTypeOf(x), LLVMTypeOf(x)};
    switch (op) {
    case BIN_POW: return fp2(c, "llvm.pow", x, y);
    case BIN_REM: return LLVMBuildFRem(c->b, x, y, ""); /* C's fmod (exact on every target) */
    case BIN_COPYSIGN: return fp2(c, "llvm.copysign", x, y);
    case BIN_ATAN2: return target_call_named(c, is_f64 ? "atan2" : "atan2f", t[0], t, 2, xy);
    case BIN_HYPOT: return target_call_named(c, is_f64 ? "hypot" : "hypotf", t[0], t, 2, xy);
    default:
        diag_error(c->diags, c->loc, "internal error: no math function for op %d", (int)op);
        return NULL;
    }
}

LLVMValueRef target_extern_smem(TargetCtx *c)
{
    if (!c->smem) {
        LLVMTypeRef arr = LLVMArrayType2(LLVMInt8TypeInContext(c->ctx), 0);
        c->smem = LLVMAddGlobalInAddressSpace(c->mod, arr, "tile_smem", 3);
        LLVMSetLinkage(c->smem, LLVMExternalLinkage);
        LLVMSetAlignment(c->smem, 1024); /* wgmma's swizzled operands (pass_smem_alloc.c) */
    }
    return c->smem;
}

void target_entry_blocks(TargetCtx *c)
{
    LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(c->ctx, c->fn, "entry");
    LLVMBasicBlockRef start = LLVMAppendBasicBlockInContext(c->ctx, c->fn, "start");
    LLVMPositionBuilderAtEnd(c->b, entry);
    LLVMValueRef br = LLVMBuildBr(c->b, start);
    LLVMPositionBuilderBefore(c->alloca_b, br);
    LLVMPositionBuilderAtEnd(c->b, start);
}
