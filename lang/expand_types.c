/* expand_types.c: @types(T = [t0, t1, ...]) on a kernel becomes one kernel per listed element
 * type (expand_type_variants in ast.h), before sema: the first keeps the kernel's name, the
 * others are NAME_t1, ...; each has T's parameters (`*T`, `T`) written out and knows T as its
 * element type (Func.type_alias), which specialization binds for the body. */
#include <string.h>
#include "ast.h"
#include "func_index.h"

enum { TYPES_MAX = 8 };

/* The listed type names of a well-formed @types, or -1 after an error. */
static int type_list(const Func *f, const Annotation *a, const char **out, Diags *d) {
    const AnnArg *arg = a->nargs == 1 ? &a->args[0] : NULL;
    const Expr *list = arg && arg->name ? arg->value : NULL;
    if (!list || list->kind != EX_LIST || list->nargs < 1 || list->nargs > TYPES_MAX) {
        diag_error(d, a->loc, "@types takes one NAME = [TYPE, ...] with 1 to %d element types",
                   TYPES_MAX);
        return -1;
    }
    for (int i = 0; i < f->nparams; i++)
        if (!strcmp(f->params[i].name, arg->name)) {
            diag_error(d, arg->loc, "@types name '%s' is also a parameter of '%s'", arg->name,
                       f->name);
            return -1;
        }
    for (int i = 0; i < list->nargs; i++) {
        const Expr *e = list->args[i];
        if (e->kind != EX_NAME || !ast_is_type_name(e->name)) {
            diag_error(d, e->loc, "@types lists element types (f16, bf16, f32, i8, ...)");
            return -1;
        }
        for (int j = 0; j < i; j++)
            if (!strcmp(out[j], e->name)) {
                diag_error(d, e->loc, "@types lists '%s' twice", e->name);
                return -1;
            }
        out[i] = e->name;
    }
    return list->nargs;
}

/* f for one element type: parameters typed T get `type`, @types itself is dropped. */
static Func *variant(const Func *f, const char *alias, const char *type, int first, Arena *a) {
    Func *g = arena_alloc(a, sizeof *g);
    Param *ps = arena_alloc(a, sizeof *ps * (size_t)(f->nparams + 1));
    Annotation *anns = arena_alloc(a, sizeof *anns * (size_t)(f->nanns + 1));
    if (!g || !ps || !anns) return NULL;
    *g = *f;
    g->name = first ? f->name : arena_printf(a, "%s_%s", f->name, type);
    for (int i = 0; i < f->nparams; i++) {
        ps[i] = f->params[i];
        if (ps[i].type && !strcmp(ps[i].type->name, alias)) {
            TypeRef *t = arena_alloc(a, sizeof *t);
            if (!t) return NULL;
            *t = *ps[i].type;
            t->name = type;
            ps[i].type = t;
        }
    }
    g->nanns = 0;
    for (int i = 0; i < f->nanns; i++)
        if (f->anns[i].kind != ANN_TYPES) anns[g->nanns++] = f->anns[i];
    g->params = ps, g->anns = anns;
    g->type_alias = alias, g->type_alias_of = type;
    return g && g->name ? g : NULL;
}

static const Annotation *types_of(const Func *f) {
    for (int i = 0; f->is_kernel && i < f->nanns; i++)
        if (f->anns[i].kind == ANN_TYPES) return &f->anns[i];
    return NULL;
}

int expand_type_variants(Module *m, Arena *arena, Diags *diags) {
    int errors = diags->errors, extra = 0, any = 0;
    for (int i = 0; i < m->nfuncs; i++) {
        const Annotation *a = types_of(m->funcs[i]);
        const char *types[TYPES_MAX];
        int n = a ? type_list(m->funcs[i], a, types, diags) : 0;
        extra += n > 1 ? n - 1 : 0;
        any |= a != NULL;
    }
    if (diags->errors > errors || !any) return diags->errors - errors;
    Func **funcs = arena_alloc(arena, sizeof *funcs * (size_t)(m->nfuncs + extra + 1));
    int nf = 0;
    for (int i = 0; funcs && i < m->nfuncs; i++) {
        const Func *f = m->funcs[i];
        const Annotation *a = types_of(f);
        const char *types[TYPES_MAX];
        int n = a ? type_list(f, a, types, diags) : 0;
        if (!n) funcs[nf++] = m->funcs[i];
        for (int t = 0; t < n && funcs; t++)
            if (!(funcs[nf++] = variant(f, a->args[0].name, types[t], t == 0, arena))) funcs = NULL;
    }
    if (!funcs) {
        diag_error(diags, (SrcLoc){m->file, 0, 0, 0}, "out of memory expanding @types");
        return diags->errors - errors;
    }
    m->funcs = funcs, m->nfuncs = nf;
    m->by_name = func_index_build(arena, m->funcs, m->nfuncs);
    return diags->errors - errors;
}
