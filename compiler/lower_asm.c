/* lower_asm.c: inline_asm_elementwise (TIR_INLINE_ASM) as LLVM inline assembly. Each thread
 * runs the assembly once per `pack` of its elements (registers r = g * pack + j of the results'
 * layout, which every operand shares); the last run of a thread whose element count is not a
 * multiple of pack gets zeros for the missing ones and drops their results. Operands: each
 * output's registers, then each argument's (tir_asm_regs): elements of 32 bits or more one a
 * register; narrower ones packed, element j of a run at bit (j % (32 / bits)) * bits of its
 * register (one element alone: its own type, e.g. half for the "h" constraint). */
#include <string.h>
#include "lower_int.h"

enum { ASM_MAX_REGS = 256 };

/* Elements of a run of `pack` in each register (tir_asm_regs registers share them). */
static int per_reg(ElemKind k, int pack) { return pack / tir_asm_regs(k, pack); }

/* The LLVM type of a register of a run of `pack` elements of kind k: the element's own, or an
 * integer holding several. */
static LLVMTypeRef reg_type(Lower *L, ElemKind k, int pack)
{
    int per = per_reg(k, pack);
    return per == 1 ? lw_type(L, k) : LLVMIntTypeInContext(L->ctx, (unsigned)(per * et_bits(k)));
}

/* x (of kind k) as an integer of its width, and back. */
static LLVMValueRef to_bits(Lower *L, LLVMValueRef x, ElemKind k)
{
    return et_is_float(k) && !et_is_fp8(k)
               ? LLVMBuildBitCast(L->b, x, LLVMIntTypeInContext(L->ctx, (unsigned)et_bits(k)), "") : x;
}

static LLVMValueRef from_bits(Lower *L, LLVMValueRef x, ElemKind k)
{
    return et_is_float(k) && !et_is_fp8(k) ? LLVMBuildBitCast(L->b, x, lw_type(L, k), "") : x;
}

/* Element r of v (zero past the thread's n registers). */
static LLVMValueRef element(Lower *L, const TirValue *v, int r, int n)
{
    if (r >= n)
        return LLVMConstNull(lw_type(L, v->type.elem));
    return v->type.rank ? lw_get(L, v, lw_i32c(L, r)) : lw_val(L, v);
}

/* The registers of argument v for run g into regs; how many. */
static int pack_operand(Lower *L, const TirValue *v, int g, int pack, int n, LLVMValueRef *regs)
{
    ElemKind k = v->type.elem;
    int per = per_reg(k, pack), nregs = tir_asm_regs(k, pack), bits = et_bits(k);
    for (int i = 0; i < nregs; i++) {
        if (per == 1) {
            regs[i] = element(L, v, g * pack + i, n);
            continue;
        }
        LLVMTypeRef rt = reg_type(L, k, pack);
        LLVMValueRef acc = LLVMConstNull(rt);
        for (int j = 0; j < per; j++) {
            LLVMValueRef e = LLVMBuildZExt(L->b, to_bits(L, element(L, v, g * pack + i * per + j, n), k), rt, "");
            acc = LLVMBuildOr(L->b, acc, LLVMBuildShl(L->b, e, LLVMConstInt(rt, (unsigned)(j * bits), 0), ""), "");
        }
        regs[i] = acc;
    }
    return nregs;
}

/* Result v's elements of run g from its registers. */
static void unpack_result(Lower *L, const TirValue *v, int g, int pack, int n, LLVMValueRef *regs)
{
    ElemKind k = v->type.elem;
    int per = per_reg(k, pack), nregs = tir_asm_regs(k, pack), bits = et_bits(k);
    for (int i = 0; i < nregs; i++)
        for (int j = 0; j < per; j++) {
            int r = g * pack + i * per + j;
            if (r >= n)
                continue;
            LLVMValueRef x = regs[i];
            if (per > 1) {
                LLVMValueRef sh = LLVMConstInt(LLVMTypeOf(x), (unsigned)(j * bits), 0);
                x = LLVMBuildTrunc(L->b, LLVMBuildLShr(L->b, x, sh, ""),
                                   LLVMIntTypeInContext(L->ctx, (unsigned)bits), "");
                x = from_bits(L, x, k);
            }
            if (v->type.rank)
                lw_set(L, v, lw_i32c(L, r), x);
            else
                lw_bind(L, v, x);
        }
}

/* One run of the assembly: its outputs' registers into out. */
static int run_asm(Lower *L, TirOp *op, int g, int pack, int n, LLVMValueRef *out)
{
    const TirAsm *a = &L->k->asms[op->attr.i];
    LLVMValueRef in[ASM_MAX_REGS];
    LLVMTypeRef in_t[ASM_MAX_REGS], out_t[ASM_MAX_REGS];
    int nin = 0, nout = 0;
    for (int i = 0; i < op->nops; i++) {
        if (nin + tir_asm_regs(op->ops[i]->type.elem, pack) > ASM_MAX_REGS)
            return lw_fail(L, op, "inline_asm_elementwise(): more than 256 input registers in one run");
        nin += pack_operand(L, op->ops[i], g, pack, n, in + nin);
    }
    for (int i = 0; i < nin; i++)
        in_t[i] = LLVMTypeOf(in[i]);
    for (int i = 0; i < op->nres; i++) {
        ElemKind k = op->results[i]->type.elem;
        for (int r = 0; r < tir_asm_regs(k, pack); r++) {
            if (nout == ASM_MAX_REGS)
                return lw_fail(L, op, "inline_asm_elementwise(): more than 256 output registers in one run");
            out_t[nout++] = reg_type(L, k, pack);
        }
    }
    LLVMTypeRef ret = nout == 1 ? out_t[0] : LLVMStructTypeInContext(L->ctx, out_t, (unsigned)nout, 0);
    LLVMTypeRef fn_t = LLVMFunctionType(ret, in_t, (unsigned)nin, 0);
    int pure = (op->attr.i2 & TIR_ASM_PURE) != 0;
    LLVMValueRef fn = LLVMGetInlineAsm(fn_t, (char *)a->text, strlen(a->text), (char *)a->constraints,
                                       strlen(a->constraints), !pure, 0, LLVMInlineAsmDialectATT, 0);
    LLVMValueRef call = LLVMBuildCall2(L->b, fn_t, fn, in, (unsigned)nin, "");
    for (int i = 0; i < nout; i++)
        out[i] = nout == 1 ? call : LLVMBuildExtractValue(L->b, call, (unsigned)i, "");
    return nout;
}

int lower_inline_asm(Lower *L, TirOp *op)
{
    if (!L->t->inline_asm) {
        char msg[256];
        snprintf(msg, sizeof msg, "inline_asm_elementwise() runs only on GPU targets (PTX on NVIDIA, GCN on "
                 "AMD); this kernel compiles for '%s', which runs no such assembly", L->t->name);
        return lw_fail(L, op, msg);
    }
    int pack = tir_asm_pack(op->attr.i2);
    TirValue *res0 = op->results[0];
    int n = res0->type.rank ? lw_regs(L, res0) : 1;
    for (int i = 0; i < op->nres; i++)
        if (op->results[i]->type.rank)
            lw_tile_new(L, op->results[i]);
    for (int g = 0; g * pack < n; g++) {
        LLVMValueRef out[ASM_MAX_REGS];
        if (run_asm(L, op, g, pack, n, out) < 0)
            return -1;
        for (int i = 0, at = 0; i < op->nres; i++) {
            unpack_result(L, op->results[i], g, pack, n, out + at);
            at += tir_asm_regs(op->results[i]->type.elem, pack);
        }
    }
    return 0;
}
