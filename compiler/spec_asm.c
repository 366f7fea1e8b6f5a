/* spec_asm.c: inline_asm_elementwise(asm, constraints, args, dtype [, is_pure] [, pack])
 * (Triton's tl.inline_asm_elementwise): the arguments broadcast to one shape, the assembly run
 * over their elements `pack` at a time, one result per output type. Checked here: the types,
 * the pack, and that the constraint string names as many output and input registers as the
 * operands take (tir_asm_regs), so a mistake is a diagnostic at the call, not LLVM's. */
#include <string.h>
#include "spec.h"

/* Element types an operand or result may have: numbers (fp8 as its byte), and pointers as
 * inputs (a 64-bit address). */
static int asm_type_ok(ElemKind k, int is_input) {
    if (k == ET_PTR) return is_input;
    return k != ET_VOID && k != ET_BOOL;
}

static const char *asm_type_hint(ElemKind k) {
    return k == ET_BOOL ? " (convert a bool to i8 or i32 first)" : k == ET_PTR ? " (pointers are inputs only)" : "";
}

/* The output types of slot 3 (one type, or a list of them) into out; their number, or 0 after
 * a diagnostic. */
static int asm_dtypes(Spec *s, Args *a, ElemKind *out, int cap) {
    const Val *v = &a->v[3];
    int n = v->kind == V_LIST ? v->nitems : 1;
    if (n < 1 || n > cap) {
        diag_error(s->diags, a->e[3]->loc, "%s() returns 1 to %d values: dtype= names %d types", a->call->name,
                   cap, n);
        return 0;
    }
    for (int i = 0; i < n; i++) {
        const Val *t = v->kind == V_LIST ? &v->items[i] : v;
        if (t->kind != V_TYPE || !asm_type_ok(t->ct, 0)) {
            diag_error(s->diags, a->e[3]->loc, "%s()'s dtype= takes number types such as i32 or f16, got %s%s",
                       a->call->name, t->kind == V_TYPE ? et_name(t->ct) : val_type_str(s, t),
                       t->kind == V_TYPE ? asm_type_hint(t->ct) : "");
            return 0;
        }
        out[i] = t->ct;
    }
    return n;
}

/* The registers the constraint string names: outputs ("=r", "=&r"), inputs ("r", "l", a tied
 * "0"), clobbers ("~{memory}") aside. 0 after a diagnostic (an empty entry, or "+", which LLVM
 * inline assembly does not take). */
static int count_constraints(Spec *s, Args *a, const char *c, int *outs, int *ins) {
    *outs = *ins = 0;
    if (!*c) return 1;
    for (const char *p = c;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == 0 || *p == '+') {
            diag_error(s->diags, a->e[1]->loc, "%s()'s constraints \"%s\": %s", a->call->name, c,
                       len == 0 ? "an empty entry between commas"
                                : "\"+\" (read and written) is not an LLVM constraint: give the output \"=r\" "
                                  "and tie an input to it with its number, \"0\"");
            return 0;
        }
        if (*p == '=') ++*outs;
        else if (*p != '~') ++*ins;
        if (!end) return 1;
        p = end + 1;
    }
}

/* The arguments of slot 2 (a list, or one value) into vals; their number, or -1. */
static int asm_args(Spec *s, Args *a, Val *vals, int cap) {
    const Val *v = &a->v[2];
    int n = v->kind == V_LIST ? v->nitems : 1;
    if (n > cap) {
        diag_error(s->diags, a->e[2]->loc, "%s() takes at most %d arguments in args=, got %d", a->call->name, cap, n);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        vals[i] = v->kind == V_LIST ? v->items[i] : *v;
        ElemKind k = val_elem(&vals[i]);
        if (!val_is_value(&vals[i]) || !asm_type_ok(k, 1)) {
            diag_error(s->diags, a->e[2]->loc, "%s()'s args= takes numbers and pointers, scalars or tiles; "
                       "argument %d is %s%s", a->call->name, i, val_type_str(s, &vals[i]),
                       val_is_value(&vals[i]) ? asm_type_hint(k) : "");
            return -1;
        }
    }
    return n;
}

enum { ASM_MAX_ARGS = 32, ASM_MAX_RESULTS = 8 };

/* is_pure (slot 4, default false) and pack (slot 5, default 1): 0 after a diagnostic. */
static int asm_flags(Spec *s, Args *a, int *pure, int *pack) {
    *pure = 0, *pack = 1;
    if (a->e[4] && !spec_bool_arg(s, a, 4, "is_pure", pure))
        return 0;
    if (a->e[5]) {
        int64_t p;
        if (!spec_const_arg(s, a, 5, &p)) return 0;
        if (p < 1 || p > 16 || (p & (p - 1))) {
            diag_error(s->diags, a->e[5]->loc, "%s()'s pack must be 1, 2, 4, 8 or 16, got %lld", a->call->name,
                       (long long)p);
            return 0;
        }
        *pack = (int)p;
    }
    return 1;
}

/* The constraint string must name each output and input register once. */
static int check_registers(Spec *s, Args *a, const char *constraints, const ElemKind *outs, int nout,
                           const Val *args, int nargs, int pack) {
    int want_out = 0, want_in = 0, got_out, got_in;
    for (int i = 0; i < nout; i++) want_out += tir_asm_regs(outs[i], pack);
    for (int i = 0; i < nargs; i++) want_in += tir_asm_regs(val_elem(&args[i]), pack);
    if (!count_constraints(s, a, constraints, &got_out, &got_in)) return 0;
    if (got_out == want_out && got_in == want_in) return 1;
    diag_error(s->diags, a->e[1]->loc, "%s()'s constraints \"%s\" name %d output and %d input registers; "
               "with pack=%d the outputs take %d and the arguments %d (an element under 32 bits shares a "
               "32-bit register with the next ones of its run)", a->call->name, constraints, got_out, got_in,
               pack, want_out, want_in);
    return 0;
}

static const char *string_slot(Spec *s, Args *a, int i, const char *what) {
    if (a->e[i]->kind == EX_STRING) return a->e[i]->name;
    diag_error(s->diags, a->e[i]->loc, "%s()'s %s must be a string literal, got %s", a->call->name, what,
               val_type_str(s, &a->v[i]));
    return NULL;
}

Val spec_inline_asm(Spec *s, Args *a) {
    ElemKind outs[ASM_MAX_RESULTS];
    Val args[ASM_MAX_ARGS];
    int pure, pack, rank = 0, shape[TIR_MAX_RANK] = {0};
    const char *text = string_slot(s, a, 0, "asm"), *constraints = text ? string_slot(s, a, 1, "constraints") : NULL;
    if (!constraints) return val_error();
    int nout = asm_dtypes(s, a, outs, ASM_MAX_RESULTS), nargs = nout ? asm_args(s, a, args, ASM_MAX_ARGS) : -1;
    if (nargs < 0 || !asm_flags(s, a, &pure, &pack) ||
        !check_registers(s, a, constraints, outs, nout, args, nargs, pack) ||
        (nargs && !spec_broadcast_shape(s, args, nargs, &rank, shape, a->call->loc)))
        return val_error();
    TirValue *ops[ASM_MAX_ARGS];
    for (int i = 0; i < nargs; i++)
        if (!(ops[i] = spec_materialize(s, args[i], val_elem(&args[i]), rank, shape, a->call->loc)))
            return val_error();
    TirType types[ASM_MAX_RESULTS];
    for (int i = 0; i < nout; i++) types[i] = tir_type_make(outs[i], rank, shape);
    int index = tir_kernel_add_asm(s->k, text, constraints, a->call->loc);
    TirOp *op = index < 0 ? NULL : tir_op_append(s->k, s->block, TIR_INLINE_ASM, a->call->loc, ops, nargs, types, nout);
    Val r = {.kind = V_TUPLE, .nitems = nout};
    r.items = arena_alloc(s->arena, sizeof(Val) * (size_t)nout);
    if (!op || !r.items) return val_error();
    op->attr.i = index;
    op->attr.i2 = pack | (pure ? TIR_ASM_PURE : 0);
    for (int i = 0; i < nout; i++) r.items[i] = val_tile(op->results[i]);
    return nout == 1 ? r.items[0] : r;
}
