/* target_wgmma.c: Hopper's warpgroup MMA for the NVPTX target (target.h: wgmma, wgmma_fence,
 * wgmma_wait), as inline PTX: LLVM 22 has no intrinsic for wgmma.mma_async. The accumulators
 * are tied operands, so LLVM keeps them in the same registers from the wgmma to the wait. */
#include <stdio.h>
#include <string.h>
#include "target.h"

enum { MAX_IN = 264 }; /* inputs of one asm besides the tied ones */

static void side_effect_asm(TargetCtx *c, const char *text)
{
    LLVMTypeRef fty = LLVMFunctionType(LLVMVoidTypeInContext(c->ctx), NULL, 0, 0);
    LLVMValueRef fn = LLVMGetInlineAsm(fty, text, strlen(text), "~{memory}", 9, 1, 0,
                                       LLVMInlineAsmDialectATT, 0);
    LLVMBuildCall2(c->b, fty, fn, NULL, 0, "");
}

/* Appends outputs 0..n-1 ("=f" for f32, "=r" for i32 values), then `extra`, then inputs
 * tied to the outputs. */
static void tied_constraints(char *buf, size_t size, LLVMValueRef *vals, int n, const char *extra)
{
    size_t len = 0;
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(buf + len, size - len, "%s=%c", i ? "," : "",
                                LLVMGetTypeKind(LLVMTypeOf(vals[i])) == LLVMFloatTypeKind ? 'f' : 'r');
    len += (size_t)snprintf(buf + len, size - len, "%s", extra);
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(buf + len, size - len, ",%d", i);
}

/* Calls an asm whose n outputs are tied to vals[] (f32 or i32), with `nin` other inputs first;
 * d[] gets the outputs. */
static void call_tied(TargetCtx *c, const char *text, const char *extra, LLVMValueRef *in, int nin,
                      LLVMValueRef *vals, LLVMValueRef *d, int n)
{
    char cons[8192]; /* per call: compiles run on several threads */
    LLVMTypeRef outs[256], params[256 + MAX_IN];
    LLVMValueRef args[256 + MAX_IN];
    tied_constraints(cons, sizeof cons, vals, n, extra);
    for (int i = 0; i < n; i++)
        outs[i] = LLVMTypeOf(vals[i]);
    for (int i = 0; i < nin; i++)
        params[i] = LLVMTypeOf(in[i]), args[i] = in[i];
    for (int i = 0; i < n; i++)
        params[nin + i] = outs[i], args[nin + i] = vals[i];
    LLVMTypeRef ret = n ? LLVMStructTypeInContext(c->ctx, outs, (unsigned)n, 0)
                        : LLVMVoidTypeInContext(c->ctx);
    LLVMTypeRef fty = LLVMFunctionType(ret, params, (unsigned)(nin + n), 0);
    LLVMValueRef fn = LLVMGetInlineAsm(fty, text, strlen(text), cons, strlen(cons), 1, 0,
                                       LLVMInlineAsmDialectATT, 0);
    LLVMValueRef r = LLVMBuildCall2(c->b, fty, fn, args, (unsigned)(nin + n), "");
    for (int i = 0; i < n; i++)
        d[i] = LLVMBuildExtractValue(c->b, r, (unsigned)i, "");
}

/* An asm passing vals[0..n-1] through (in pieces of at most 256), the first piece carrying
 * `text` and reading keep[0..nkeep-1] (i32): every value is defined before it and used after
 * it, and the kept ones stay live until it. */
static void pass_through(TargetCtx *c, const char *text, LLVMValueRef *vals, int n,
                         LLVMValueRef *keep, int nkeep)
{
    char extra[4 * MAX_IN + 1] = "";
    nkeep = nkeep < MAX_IN ? nkeep : MAX_IN;
    for (int i = 0; i < nkeep; i++)
        strcat(extra, ",r");
    if (n == 0 && nkeep == 0) {
        side_effect_asm(c, text);
        return;
    }
    for (int at = 0; at < n || at == 0; at += 256) {
        int m = n - at < 256 ? n - at : 256;
        call_tied(c, at ? "// wgmma operands" : text, at ? "" : extra, keep, at ? 0 : nkeep,
                  vals + at, vals + at, m);
    }
}

void target_wgmma_proxy_fence(TargetCtx *c)
{
    side_effect_asm(c, "fence.proxy.async.shared::cta;");
}

void target_wgmma_fence(TargetCtx *c, int proxy, LLVMValueRef *vals, int n)
{
    if (proxy) /* this thread's own generic writes (cp.async, st.shared) before wgmma's reads */
        target_wgmma_proxy_fence(c);
    pass_through(c, "wgmma.fence.sync.aligned;", vals, n, NULL, 0);
}

void target_wgmma(TargetCtx *c, MmaKind kind, int n, LLVMValueRef *a, LLVMValueRef desc_a,
                  unsigned long long add_a, LLVMValueRef desc_b, unsigned long long add_b,
                  int trans_a, int trans_b, LLVMValueRef *acc, LLVMValueRef *d)
{
    int h = n / 2, nin = a ? 6 : 3; /* A's words or descriptor, B's descriptor, scale-d */
    const char *t = kind == MMA_BF16_F32 ? "bf16" : "f16";
    char text[4096];
    size_t len = (size_t)snprintf(text, sizeof text,
                                  "{\n\t.reg .pred p;\n\t.reg .b64 da, db;\n\t"
                                  "add.s64 db, $%d, %llu;\n\t", h + nin - 2, add_b);
    if (!a)
        len += (size_t)snprintf(text + len, sizeof text - len, "add.s64 da, $%d, %llu;\n\t", h,
                                add_a);
    len += (size_t)snprintf(text + len, sizeof text - len,
                            "setp.ne.b32 p, $%d, 0;\n\twgmma.mma_async.sync.aligned.m64n%dk16.f32.%s.%s {",
                            h + nin - 1, n, t, t);
    for (int i = 0; i < h; i++)
        len += (size_t)snprintf(text + len, sizeof text - len, "%s$%d", i ? ", " : "", i);
    if (a)
        snprintf(text + len, sizeof text - len, "}, {$%d, $%d, $%d, $%d}, db, p, 1, 1, %d;\n}", h,
                 h + 1, h + 2, h + 3, trans_b ? 1 : 0);
    else
        snprintf(text + len, sizeof text - len, "}, da, db, p, 1, 1, %d, %d;\n}", trans_a ? 1 : 0,
                 trans_b ? 1 : 0);
    LLVMValueRef one = LLVMConstInt(LLVMInt32TypeInContext(c->ctx), 1, 0);
    LLVMValueRef rs[6] = {a ? a[0] : NULL, a ? a[1] : NULL, a ? a[2] : NULL, a ? a[3] : NULL, desc_b, one};
    LLVMValueRef ss[3] = {desc_a, desc_b, one};
    call_tied(c, text, a ? ",r,r,r,r,l,r" : ",l,l,r", a ? rs : ss, nin, acc, d, h);
}

void target_wgmma_wait(TargetCtx *c, LLVMValueRef *acc, int nacc, LLVMValueRef *a, int na)
{
    pass_through(c, "wgmma.commit_group.sync.aligned;\n\twgmma.wait_group.sync.aligned 0;", acc,
                 nacc, a, na);
}
