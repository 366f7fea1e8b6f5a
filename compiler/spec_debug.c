/* spec_debug.c: print and device_assert (spec.h). Each call becomes a debug site of the
 * kernel (TirKernel.sites) and ops that record into the launch's debug buffer
 * (compiler/debug_abi.h); the runtime prints the records and turns a failed assertion into
 * the launch's error status. */
#include <stdio.h>
#include <string.h>
#include "spec.h"

static int add_site(Spec *s, TirDebugKind kind, SrcLoc at, const char *text, int rank,
                    const int *shape)
{
    TirKernel *k = s->k;
    TirDebugSite *grown = arena_alloc(s->arena, sizeof *grown * (size_t)(k->nsites + 1));
    if (!grown)
        return -1;
    if (k->nsites)
        memcpy(grown, k->sites, sizeof *grown * (size_t)k->nsites);
    TirDebugSite *site = &grown[k->nsites];
    memset(site, 0, sizeof *site);
    site->kind = kind, site->loc = at, site->text = text, site->rank = rank;
    memcpy(site->shape, shape, sizeof(int) * (size_t)rank);
    k->sites = grown;
    return k->nsites++;
}

/* The source text an expression spans (on one line), in the arena. */
static const char *source_span(Spec *s, SrcLoc l)
{
    if (!l.file || !l.file->text || l.line < 1)
        return "";
    const char *p = l.file->text;
    for (int line = 1; line < l.line && (p = strchr(p, '\n')); line++)
        p++;
    if (!p || (size_t)(p - l.file->text) + (size_t)l.col - 1 > l.file->len)
        return "";
    p += l.col - 1;
    size_t n = 0;
    while (n < (size_t)l.len && p[n] && p[n] != '\n')
        n++;
    char *out = arena_alloc(s->arena, n + 1);
    if (!out)
        return "";
    memcpy(out, p, n);
    out[n] = 0;
    return out;
}

static char value_kind(ElemKind et)
{
    return et == ET_PTR ? 'p' : et == ET_BOOL ? 'b' : et == ET_F64 ? 'd' : et_is_float(et) ? 'f'
         : et_is_signed(et) ? 'i' : 'u';
}

Val spec_print(Spec *s, const char *prefix, const Val *vals, const Expr *const *exprs, int n,
               SrcLoc at)
{
    int rank = 0, shape[TIR_MAX_RANK] = {0};
    for (int i = 0; i < n; i++)
        if (!val_is_value(&vals[i])) {
            diag_error(s->diags, exprs[i]->loc, "print() prints values, got %s",
                       val_type_str(s, &vals[i]));
            return val_error();
        }
    if (n && !spec_broadcast_shape(s, vals, n, &rank, shape, at))
        return val_error();
    TirValue *ops[TIR_DEBUG_MAX_VALUES];
    int site = add_site(s, DEBUG_PRINT, at, prefix, rank, shape);
    if (site < 0)
        return val_error();
    for (int i = 0; i < n; i++) {
        ElemKind et = val_elem(&vals[i]);
        if (et == ET_F16 || et == ET_BF16 || et_is_fp8(et))
            et = ET_F32;
        if (!(ops[i] = spec_materialize(s, vals[i], et, rank, shape, exprs[i]->loc)))
            return val_error();
        s->k->sites[site].kinds[i] = value_kind(et);
    }
    s->k->sites[site].nvalues = n;
    TirOp *op = tir_op_append(s->k, s->block, TIR_PRINT, at, ops, n, NULL, 0);
    if (!op)
        return val_error();
    op->attr.i = site;
    return (Val){.kind = V_VOID};
}

/* A scalar bool: every element of cond (bool, any shape) is true. */
static TirValue *all_true(Spec *s, TirValue *cond, SrcLoc at)
{
    if (cond->type.rank == 0)
        return cond;
    int n = tir_type_numel(&cond->type);
    TirValue *flat = spec_cast(s, cond, ET_I32, at);
    if (cond->type.rank > 1)
        flat = spec_reshape(s, flat, 1, &n, at);
    TirValue *least = spec_emit(s, TIR_REDUCE, at, &flat, 1, tir_type_make(ET_I32, 0, NULL));
    least->def->attr.i = RED_MIN;
    least->def->attr.i2 = 0;
    return spec_binary(s, OP_NE, val_tile(least), val_const_int(ET_I32, 0, 1), at).v;
}

/* if (!ok) { record the failure; return } */
static void fail_branch(Spec *s, TirValue *ok, TirValue *cond, int site, SrcLoc at)
{
    TirValue *bad = spec_emit(s, TIR_UNARY, at, &ok, 1, tir_type_make(ET_BOOL, 0, NULL));
    bad->def->attr.i = UN_NOT;
    TirBlock *then = tir_block_new(s->k, 0, NULL), *other = tir_block_new(s->k, 0, NULL);
    TirOp *rec = tir_op_append(s->k, then, TIR_ASSERT, at, &cond, 1, NULL, 0);
    rec->attr.i = site;
    tir_op_append(s->k, then, TIR_RETURN, at, NULL, 0, NULL, 0);
    tir_op_append(s->k, other, TIR_YIELD, at, NULL, 0, NULL, 0);
    TirOp *op = tir_op_append(s->k, s->block, TIR_IF, at, &bad, 1, NULL, 0);
    tir_op_add_regions(s->k, op, 2);
    op->regions[0] = then, op->regions[1] = other;
    then->parent = other->parent = op;
}

Val spec_device_assert(Spec *s, Val c, const Expr *ce, const char *msg, SrcLoc at)
{
    ElemKind et = val_elem(&c);
    if (!val_is_value(&c) || et == ET_PTR || et_is_float(et)) {
        diag_error(s->diags, ce->loc, "device_assert() needs a bool or integer condition, got %s",
                   val_type_str(s, &c));
        return val_error();
    }
    if (c.kind == V_CONST && c.i) /* true at compile time: nothing to check */
        return (Val){.kind = V_VOID};
    TirValue *cond = spec_as_tile(s, c, ce->loc);
    if (cond && et != ET_BOOL)
        cond = spec_binary(s, OP_NE, val_tile(cond), val_const_int(et, 0, 1), ce->loc).v;
    if (!cond)
        return val_error();
    const char *span = source_span(s, ce->loc);
    size_t len = strlen(span) + (msg ? strlen(msg) : 0) + 8;
    char *text = arena_alloc(s->arena, len);
    if (!text)
        return val_error();
    snprintf(text, len, msg && *msg ? "`%s`: %s" : "`%s`", span, msg);
    int site = add_site(s, DEBUG_ASSERT, at, text, cond->type.rank, cond->type.shape);
    if (site < 0)
        return val_error();
    fail_branch(s, all_true(s, cond, at), cond, site, at);
    return (Val){.kind = V_VOID};
}
