/* target_nvptx_cache.c: loads and stores with cache hints on NVIDIA GPUs (Triton's
 * cache_modifier= and eviction_policy=), as inline PTX: LLVM's NVPTX backend has no way to
 * ask for ld.global.cg and the like. The access is done as 16-, 32- or 64-bit words (two
 * 64-bit words for 16 bytes) and the words are bitcast to the type wanted. */
#include <stdio.h>
#include <string.h>
#include "target.h"

/* The bits of a scalar or vector type without pointers; 0 for anything else. */
static int type_bits(LLVMTypeRef t)
{
    switch (LLVMGetTypeKind(t)) {
    case LLVMIntegerTypeKind: return (int)LLVMGetIntTypeWidth(t);
    case LLVMHalfTypeKind: case LLVMBFloatTypeKind: return 16;
    case LLVMFloatTypeKind: return 32;
    case LLVMDoubleTypeKind: return 64;
    case LLVMVectorTypeKind: return (int)LLVMGetVectorSize(t) * type_bits(LLVMGetElementType(t));
    default: return 0;
    }
}

/* The qualifiers of the access and, when an L2 eviction policy goes with it, the
 * createpolicy that makes it (*policy). A cache operator and an L1 eviction priority do not
 * combine in PTX: with both, the operator stays and the policy goes to L2 only. */
static void qualifiers(int hints, int l2_policy, char *q, size_t n, const char **policy)
{
    TirCache cache = tir_mem_cache(hints);
    TirEvict ev = tir_mem_evict(hints);
    *policy = NULL;
    if (l2_policy && (ev == EVICT_FIRST || ev == EVICT_LAST))
        *policy = tir_mem_evict_name(ev);
    if (cache != CACHE_NONE)
        snprintf(q, n, "%s%s", tir_mem_cache_name(cache), *policy ? ".L2::cache_hint" : "");
    else if (ev != EVICT_NONE)
        snprintf(q, n, ".L1::%s%s", tir_mem_evict_name(ev), *policy ? ".L2::cache_hint" : "");
    else
        q[0] = 0;
}

/* "{ .reg .b64 p; createpolicy...; BODY, p; }" or "BODY;" */
static void wrap(char *out, size_t n, const char *policy, const char *body)
{
    if (policy)
        snprintf(out, n, "{ .reg .b64 p; createpolicy.fractional.L2::%s.b64 p, 1.0; %s, p; }",
                 policy, body);
    else
        snprintf(out, n, "%s;", body);
}

static LLVMValueRef asm_call(TargetCtx *c, LLVMTypeRef ret, LLVMTypeRef *params, int np,
                             LLVMValueRef *args, const char *text, const char *cons, int effects)
{
    LLVMTypeRef fty = LLVMFunctionType(ret, params, (unsigned)np, 0);
    LLVMValueRef fn = LLVMGetInlineAsm(fty, text, strlen(text), cons, strlen(cons), effects, 0,
                                       LLVMInlineAsmDialectATT, 0);
    return LLVMBuildCall2(c->b, fty, fn, args, (unsigned)np, "");
}

LLVMValueRef target_nv_load_hinted(TargetCtx *c, LLVMTypeRef t, LLVMValueRef ptr, int hints,
                                   int l2_policy)
{
    int bits = type_bits(t);
    if (bits != 8 && bits != 16 && bits != 32 && bits != 64 && bits != 128)
        return NULL;
    char q[64], body[160], text[320];
    const char *policy;
    qualifiers(hints, l2_policy, q, sizeof q, &policy);
    LLVMTypeRef i64 = LLVMInt64TypeInContext(c->ctx);
    LLVMTypeRef pt = LLVMTypeOf(ptr);
    if (bits == 128) {
        snprintf(body, sizeof body, "ld.global%s.v2.b64 {$0, $1}, [$2]", q);
        wrap(text, sizeof text, policy, body);
        LLVMTypeRef two[2] = {i64, i64};
        LLVMValueRef r = asm_call(c, LLVMStructTypeInContext(c->ctx, two, 2, 0), &pt, 1, &ptr,
                                  text, "=l,=l,l", 0);
        LLVMTypeRef vt = LLVMVectorType(i64, 2);
        LLVMValueRef v = LLVMGetUndef(vt);
        for (unsigned j = 0; j < 2; j++)
            v = LLVMBuildInsertElement(c->b, v, LLVMBuildExtractValue(c->b, r, j, ""),
                                       LLVMConstInt(LLVMInt32TypeInContext(c->ctx), j, 0), "");
        return LLVMBuildBitCast(c->b, v, t, "");
    }
    int rbits = bits < 16 ? 16 : bits;
    snprintf(body, sizeof body, "ld.global%s.b%d $0, [$1]", q, bits);
    wrap(text, sizeof text, policy, body);
    const char *cons = rbits == 16 ? "=h,l" : rbits == 32 ? "=r,l" : "=l,l";
    LLVMValueRef r = asm_call(c, LLVMIntTypeInContext(c->ctx, (unsigned)rbits), &pt, 1, &ptr, text,
                              cons, 0);
    if (bits == 8)
        r = LLVMBuildTrunc(c->b, r, LLVMInt8TypeInContext(c->ctx), "");
    return LLVMBuildBitCast(c->b, r, t, "");
}

int target_nv_store_hinted(TargetCtx *c, LLVMValueRef x, LLVMValueRef ptr, int hints, int l2_policy)
{
    LLVMTypeRef t = LLVMTypeOf(x);
    int bits = type_bits(t);
    if (bits != 8 && bits != 16 && bits != 32 && bits != 64 && bits != 128)
        return 0;
    char q[64], body[160], text[320];
    const char *policy;
    qualifiers(hints, l2_policy, q, sizeof q, &policy);
    LLVMTypeRef i64 = LLVMInt64TypeInContext(c->ctx);
    LLVMTypeRef params[3] = {LLVMTypeOf(ptr), i64, i64};
    LLVMValueRef args[3] = {ptr, NULL, NULL};
    if (bits == 128) {
        LLVMValueRef v = LLVMBuildBitCast(c->b, x, LLVMVectorType(i64, 2), "");
        for (unsigned j = 0; j < 2; j++)
            args[1 + j] = LLVMBuildExtractElement(c->b, v,
                                                  LLVMConstInt(LLVMInt32TypeInContext(c->ctx), j, 0), "");
        snprintf(body, sizeof body, "st.global%s.v2.b64 [$0], {$1, $2}", q);
        wrap(text, sizeof text, policy, body);
        asm_call(c, LLVMVoidTypeInContext(c->ctx), params, 3, args, text, "l,l,l,~{memory}", 1);
        return 1;
    }
    int rbits = bits < 16 ? 16 : bits;
    LLVMValueRef w = LLVMBuildBitCast(c->b, x, LLVMIntTypeInContext(c->ctx, (unsigned)bits), "");
    if (bits == 8)
        w = LLVMBuildZExt(c->b, w, LLVMInt16TypeInContext(c->ctx), "");
    params[1] = LLVMTypeOf(w), args[1] = w;
    snprintf(body, sizeof body, "st.global%s.b%d [$0], $1", q, bits);
    wrap(text, sizeof text, policy, body);
    const char *cons = rbits == 16 ? "l,h,~{memory}" : rbits == 32 ? "l,r,~{memory}" : "l,l,~{memory}";
    asm_call(c, LLVMVoidTypeInContext(c->ctx), params, 2, args, text, cons, 1);
    return 1;
}

/* prefetch.global.L1 / .L2: a hint that does not fault on any address. */
void target_nv_prefetch(TargetCtx *c, LLVMValueRef ptr, int level)
{
    LLVMTypeRef pt = LLVMTypeOf(ptr);
    asm_call(c, LLVMVoidTypeInContext(c->ctx), &pt, 1, &ptr,
             level == 1 ? "prefetch.global.L1 [$0];" : "prefetch.global.L2 [$0];", "l", 1);
}
