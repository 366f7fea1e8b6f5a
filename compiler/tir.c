/* tir.c: element types, tile types, layouts and the construction of tile-IR kernels
 * (see tir.h). Printing lives in tir_print.c, structural checks in tir_verify.c. */
#include "linear_layout.h"
#include "tir.h"
#include <string.h>

static const struct {
    const char *name;
    int bits, bytes;
} elem_info[] = {
    [ET_VOID] = {"void", 0, 0}, [ET_BOOL] = {"bool", 1, 1},
    [ET_I8] = {"i8", 8, 1},     [ET_I16] = {"i16", 16, 2},
    [ET_I32] = {"i32", 32, 4},  [ET_I64] = {"i64", 64, 8},
    [ET_U8] = {"u8", 8, 1},     [ET_U16] = {"u16", 16, 2},
    [ET_U32] = {"u32", 32, 4},  [ET_U64] = {"u64", 64, 8},
    [ET_F16] = {"f16", 16, 2},  [ET_BF16] = {"bf16", 16, 2},
    [ET_F32] = {"f32", 32, 4},  [ET_F64] = {"f64", 64, 8},
    [ET_F8E4M3] = {"f8e4m3", 8, 1}, [ET_F8E5M2] = {"f8e5m2", 8, 1},
    [ET_PTR] = {"*", 64, 8},
};

int et_is_float(ElemKind k) { return k >= ET_F16 && k <= ET_F8E5M2; }
int et_is_fp8(ElemKind k) { return k == ET_F8E4M3 || k == ET_F8E5M2; }
int et_is_int(ElemKind k) { return k >= ET_I8 && k <= ET_U64; }
int et_is_signed(ElemKind k) { return k >= ET_I8 && k <= ET_I64; }

ElemKind et_signed_of(ElemKind k)
{
    static const ElemKind of[] = {ET_I8, ET_I16, ET_I32, ET_I64};
    return k >= ET_U8 && k <= ET_U64 ? of[k - ET_U8] : k;
}

ElemKind et_unsigned_of(ElemKind k)
{
    static const ElemKind of[] = {ET_U8, ET_U16, ET_U32, ET_U64};
    return et_is_signed(k) ? of[k - ET_I8] : k;
}
int et_bits(ElemKind k) { return elem_info[k].bits; }
int et_bytes(ElemKind k) { return elem_info[k].bytes; }
const char *et_name(ElemKind k) { return elem_info[k].name; }

ElemKind et_from_name(const char *name) {
    for (int k = ET_BOOL; k < ET_PTR; k++)
        if (strcmp(elem_info[k].name, name) == 0) return (ElemKind)k;
    return ET_VOID;
}

int tir_type_numel(const TirType *t) {
    int n = 1;
    for (int d = 0; d < t->rank; d++) n *= t->shape[d];
    return n;
}

int tir_type_equal(const TirType *a, const TirType *b) {
    if (a->elem != b->elem || a->rank != b->rank || a->buffers != b->buffers) return 0;
    if (a->elem == ET_PTR && a->pointee != b->pointee) return 0;
    for (int d = 0; d < a->rank; d++)
        if (a->shape[d] != b->shape[d]) return 0;
    return 1;
}

char *tir_type_str(Arena *a, const TirType *t) {
    char buf[96];
    int n = t->elem == ET_PTR ? snprintf(buf, sizeof buf, "*%s", et_name(t->pointee))
                              : snprintf(buf, sizeof buf, "%s", et_name(t->elem));
    for (int d = 0; d < t->rank && n < (int)sizeof buf - 16; d++)
        n += snprintf(buf + n, sizeof buf - (size_t)n, "%s%d", d ? ", " : "[", t->shape[d]);
    if (t->rank) n += snprintf(buf + n, sizeof buf - (size_t)n, "]");
    if (t->buffers > 0) snprintf(buf + n, sizeof buf - (size_t)n, " smem*%d", t->buffers);
    return arena_strdup(a, buf);
}

const TirLayout *tir_layout_new(Arena *a, TirLayout l) {
    TirLayout *p = arena_alloc(a, sizeof *p);
    if (p) *p = l;
    return p;
}

int tir_layout_equal(const TirLayout *a, const TirLayout *b) {
    if (a == b) return 1;
    if (!a || !b || a->kind != b->kind) return 0;
    if (a->kind == LAYOUT_SCALAR) return 1;
    if (a->rank != b->rank || a->sliced != b->sliced || a->transposed != b->transposed) return 0;
    if (a->kind == LAYOUT_LINEAR) return a->ll && b->ll && ll_equal(a->ll, b->ll);
    if (a->kind == LAYOUT_SHARED)
        return a->vec == b->vec && a->per_phase == b->per_phase && a->max_phase == b->max_phase &&
               a->panel == b->panel && a->pad == b->pad &&
               !memcmp(a->order, b->order, sizeof(int) * (size_t)a->rank);
    if (a->kind == LAYOUT_DOT_OPERAND &&
        (a->parent != b->parent || a->op_idx != b->op_idx || a->kwidth != b->kwidth))
        return 0;
    if (a->inst != b->inst)
        return 0;
    int blocked = a->kind == LAYOUT_BLOCKED || (a->kind == LAYOUT_DOT_OPERAND && a->parent == LAYOUT_BLOCKED);
    for (int d = 0; d < a->rank; d++)
        if (a->wpc[d] != b->wpc[d] || (blocked && (a->spt[d] != b->spt[d] || a->tpw[d] != b->tpw[d] ||
                                                   a->order[d] != b->order[d])))
            return 0;
    return 1;
}

static int print_list(char *buf, size_t size, const char *label, const int *v, int n) {
    int len = snprintf(buf, size, "%s=[", label);
    for (int i = 0; i < n; i++) len += snprintf(buf + len, size - (size_t)len, "%s%d", i ? "," : "", v[i]);
    return len + snprintf(buf + len, size - (size_t)len, "]");
}

/* The encoding's own parameters; `open` leaves its '>' off. */
static int print_base(char *buf, size_t size, const TirLayout *l, LayoutKind kind, int open) {
    int n;
    if (kind == LAYOUT_MMA) {
        n = snprintf(buf, size, "#mma<");
        n += print_list(buf + n, size - (size_t)n, "warps", l->wpc, 2);
    } else if (kind == LAYOUT_MFMA) {
        n = snprintf(buf, size, "#mfma<%dx%d ", l->inst, l->inst);
        n += print_list(buf + n, size - (size_t)n, "warps", l->wpc, 2);
    } else if (kind == LAYOUT_SHARED) {
        n = snprintf(buf, size, "#shared<vec=%d phase=%dx%d ", l->vec, l->per_phase, l->max_phase);
        if (l->panel)
            n += snprintf(buf + n, size - (size_t)n, "panel=%d ", l->panel);
        if (l->pad)
            n += snprintf(buf + n, size - (size_t)n, "pad=%d ", l->pad);
        n += print_list(buf + n, size - (size_t)n, "order", l->order, l->rank);
    } else if (kind == LAYOUT_LINEAR) {
        char tmp[2048];
        n = snprintf(buf, size, "#linear<%s", l->ll ? ll_str(l->ll, tmp, sizeof tmp) : "?");
    } else {
        n = snprintf(buf, size, "#blocked<");
        n += print_list(buf + n, size - (size_t)n, "spt", l->spt, l->rank);
        n += print_list(buf + n, size - (size_t)n, " tpw", l->tpw, l->rank);
        n += print_list(buf + n, size - (size_t)n, " wpc", l->wpc, l->rank);
        n += print_list(buf + n, size - (size_t)n, " order", l->order, l->rank);
    }
    return open ? n : n + snprintf(buf + n, size - (size_t)n, ">");
}

char *tir_layout_str(Arena *a, const TirLayout *l) {
    if (!l) return arena_strdup(a, "#none");
    if (l->kind == LAYOUT_SCALAR) return arena_strdup(a, "#scalar");
    char buf[2400];
    int n = 0;
    if (l->kind == LAYOUT_DOT_OPERAND) {
        n = snprintf(buf, sizeof buf, "#dot<op=%d kwidth=%d parent=", l->op_idx, l->kwidth);
        n += print_base(buf + n, sizeof buf - (size_t)n, l, l->parent, 0);
    } else {
        n = print_base(buf, sizeof buf, l, l->kind, 1);
    }
    if (l->transposed) n += snprintf(buf + n, sizeof buf - (size_t)n, " transposed");
    if (l->sliced) {
        n += snprintf(buf + n, sizeof buf - (size_t)n, " sliced=[");
        for (int d = 0, first = 1; d < l->rank; d++)
            if (l->sliced & (1u << d)) {
                n += snprintf(buf + n, sizeof buf - (size_t)n, "%s%d", first ? "" : ",", d);
                first = 0;
            }
        n += snprintf(buf + n, sizeof buf - (size_t)n, "]");
    }
    snprintf(buf + n, sizeof buf - (size_t)n, ">");
    return arena_strdup(a, buf);
}

TirKernel *tir_kernel_new(Arena *a, const char *name) {
    TirKernel *k = arena_alloc(a, sizeof *k);
    if (!k) return NULL;
    k->arena = a;
    k->name = name;
    k->body = tir_block_new(k, 0, NULL);
    k->num_warps = 4;
    k->num_stages = 2;
    k->threads_per_warp = 32;
    return k;
}

int tir_kernel_add_asm(TirKernel *k, const char *text, const char *constraints, SrcLoc loc) {
    TirAsm *grown = arena_alloc(k->arena, sizeof *grown * (size_t)(k->nasms + 1));
    if (!grown) return -1;
    for (int i = 0; i < k->nasms; i++) grown[i] = k->asms[i];
    grown[k->nasms] = (TirAsm){text, constraints, loc};
    k->asms = grown;
    return k->nasms++;
}

int tir_asm_regs(ElemKind k, int pack) {
    int bits = et_bits(k);
    if (bits >= 32) return pack;
    return pack * bits <= 32 ? 1 : pack * bits / 32;
}

static TirValue *value_new(TirKernel *k, const TirType *t) {
    TirValue *v = arena_alloc(k->arena, sizeof *v);
    v->id = k->next_value_id++;
    v->type = *t;
    return v;
}

TirBlock *tir_block_new(TirKernel *k, int nargs, const TirType *arg_types) {
    TirBlock *b = arena_alloc(k->arena, sizeof *b);
    b->nargs = nargs;
    b->args = nargs ? arena_alloc(k->arena, sizeof(TirValue *) * (size_t)nargs) : NULL;
    for (int i = 0; i < nargs; i++) {
        b->args[i] = value_new(k, &arg_types[i]);
        b->args[i]->block = b;
        b->args[i]->index = i;
    }
    return b;
}

static TirOp *op_new(TirKernel *k, TirOpcode code, SrcLoc loc, TirValue **ops, int nops,
                     const TirType *res_types, int nres) {
    TirOp *op = arena_alloc(k->arena, sizeof *op);
    op->code = code;
    op->loc = loc;
    op->nops = nops;
    op->ops = arena_alloc(k->arena, sizeof(TirValue *) * (size_t)(nops + 1));
    for (int i = 0; i < nops; i++) op->ops[i] = ops[i];
    op->nres = nres;
    op->results = arena_alloc(k->arena, sizeof(TirValue *) * (size_t)(nres + 1));
    for (int i = 0; i < nres; i++) {
        op->results[i] = value_new(k, &res_types[i]);
        op->results[i]->def = op;
        op->results[i]->index = i;
    }
    return op;
}

TirOp *tir_op_append(TirKernel *k, TirBlock *b, TirOpcode code, SrcLoc loc, TirValue **ops,
                     int nops, const TirType *res_types, int nres) {
    TirOp *op = op_new(k, code, loc, ops, nops, res_types, nres);
    op->block = b;
    op->prev = b->last;
    if (b->last) b->last->next = op;
    else b->first = op;
    b->last = op;
    return op;
}

static void link_before(TirOp *op, TirOp *before) {
    TirBlock *b = before->block;
    op->block = b;
    op->next = before;
    op->prev = before->prev;
    if (before->prev) before->prev->next = op;
    else b->first = op;
    before->prev = op;
}

TirOp *tir_op_insert_before(TirKernel *k, TirOp *before, TirOpcode code, SrcLoc loc,
                            TirValue **ops, int nops, const TirType *res_types, int nres) {
    TirOp *op = op_new(k, code, loc, ops, nops, res_types, nres);
    link_before(op, before);
    return op;
}

void tir_op_move_before(TirOp *op, TirOp *before) {
    tir_op_remove(op);
    link_before(op, before);
}

void tir_op_add_regions(TirKernel *k, TirOp *op, int nregions) {
    op->nregions = nregions;
    op->regions = arena_alloc(k->arena, sizeof(TirBlock *) * (size_t)nregions);
}

/* Copies `n` pointers into a fresh array with room for one more, set to `last`. */
static TirValue **append_value(TirKernel *k, TirValue **v, int n, TirValue *last) {
    TirValue **a = arena_alloc(k->arena, sizeof(TirValue *) * (size_t)(n + 2));
    for (int i = 0; i < n; i++) a[i] = v[i];
    a[n] = last;
    return a;
}

TirValue *tir_for_add_carried(TirKernel *k, TirOp *loop, TirValue *init) {
    TirBlock *body = loop->regions[0];
    TirOp *yield = body->last;
    TirValue *arg = value_new(k, &init->type), *res = value_new(k, &init->type);
    arg->layout = res->layout = init->layout;
    arg->block = body, arg->index = body->nargs;
    res->def = loop, res->index = loop->nres;
    loop->ops = append_value(k, loop->ops, loop->nops++, init);
    body->args = append_value(k, body->args, body->nargs++, arg);
    yield->ops = append_value(k, yield->ops, yield->nops++, arg);
    loop->results = append_value(k, loop->results, loop->nres++, res);
    return arg;
}

/* Removes entry i of a values array of n (shifting the rest down); returns n - 1. */
static int drop_value(TirValue **v, int n, int i) {
    for (int j = i; j + 1 < n; j++) v[j] = v[j + 1];
    return n - 1;
}

void tir_for_remove_carried(TirOp *loop, int i) {
    TirBlock *body = loop->regions[0];
    TirOp *yield = body->last;
    loop->nops = drop_value(loop->ops, loop->nops, 3 + i);
    body->nargs = drop_value(body->args, body->nargs, 1 + i);
    yield->nops = drop_value(yield->ops, yield->nops, i);
    loop->nres = drop_value(loop->results, loop->nres, i);
    for (int j = 1 + i; j < body->nargs; j++) body->args[j]->index = j;
    for (int j = i; j < loop->nres; j++) loop->results[j]->index = j;
}

void tir_count_uses(const TirBlock *b, int *uses) {
    for (const TirOp *op = b ? b->first : NULL; op; op = op->next) {
        for (int i = 0; i < op->nops; i++) uses[op->ops[i]->id]++;
        for (int r = 0; r < op->nregions; r++) tir_count_uses(op->regions[r], uses);
    }
}

void tir_op_remove(TirOp *op) {
    TirBlock *b = op->block;
    if (op->prev) op->prev->next = op->next;
    else b->first = op->next;
    if (op->next) op->next->prev = op->prev;
    else b->last = op->prev;
    op->prev = op->next = NULL;
    op->block = NULL;
}

int tir_defined_in(const TirValue *v, const TirBlock *b) {
    const TirBlock *at = v->def ? v->def->block : v->block;
    while (at) {
        if (at == b) return 1;
        at = at->parent ? at->parent->block : NULL;
    }
    return 0;
}

TirOp *tir_op_insert_at(TirKernel *k, TirBlock *b, TirOp *before, TirOpcode code, SrcLoc loc,
                        TirValue **ops, int nops, const TirType *res_types, int nres) {
    return before ? tir_op_insert_before(k, before, code, loc, ops, nops, res_types, nres)
                  : tir_op_append(k, b, code, loc, ops, nops, res_types, nres);
}

const char *tir_mem_cache_name(TirCache c) {
    static const char *const names[] = {"", ".ca", ".cg", ".cv", ".cs", ".wb", ".wt"};
    return (unsigned)c < sizeof names / sizeof *names ? names[c] : "";
}

const char *tir_mem_evict_name(TirEvict e) {
    static const char *const names[] = {"", "evict_first", "evict_last", "evict_normal"};
    return (unsigned)e < sizeof names / sizeof *names ? names[e] : "";
}

int tir_op_is_volatile(const TirOp *op) {
    return op->code == TIR_LOAD && (op->attr.i & TIR_MEM_VOLATILE);
}

int tir_op_writes_memory(const TirOp *op) { return op->code == TIR_STORE || op->code == TIR_ATOMIC; }

int tir_atomic_mask_index(const TirOp *op) {
    int m = op->attr.i == ATOM_CAS ? 3 : 2; /* cas has its cmp before the mask */
    return op->nops > m ? m : -1;
}

int tir_block_stores(const TirBlock *b) {
    for (const TirOp *op = b ? b->first : NULL; op; op = op->next) {
        if (tir_op_writes_memory(op)) return 1;
        for (int r = 0; r < op->nregions; r++)
            if (tir_block_stores(op->regions[r])) return 1;
    }
    return 0;
}

void tir_replace_uses(TirBlock *b, TirValue *from, TirValue *to) {
    for (TirOp *op = b->first; op; op = op->next) {
        for (int i = 0; i < op->nops; i++)
            if (op->ops[i] == from) op->ops[i] = to;
        for (int r = 0; r < op->nregions; r++)
            if (op->regions[r]) tir_replace_uses(op->regions[r], from, to);
    }
}
