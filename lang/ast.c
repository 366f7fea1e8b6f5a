/* ast.c: the deterministic, indented dump of the syntax tree (tilec --emit=ast, golden
 * tests) and module lookups. Statements print one a line; expressions as S-expressions,
 * e.g. `(+ x (call load p mask=m))`. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ast.h"
#include "func_index.h"

const Func *module_find_func(const Module *m, const char *name) {
    if (m && m->by_name) {
        int i = func_index_find(m->by_name, m->funcs, name);
        return i < 0 ? NULL : m->funcs[i];
    }
    for (int i = 0; m && i < m->nfuncs; i++)
        if (!strcmp(m->funcs[i]->name, name)) return m->funcs[i];
    return NULL;
}

int ast_op_is_comparison(OpKind op) { return op >= OP_LT && op <= OP_NE; }

const char *ast_op_text(OpKind op) {
    static const char *tab[] = {
        [OP_ADD] = "+", [OP_SUB] = "-", [OP_MUL] = "*", [OP_DIV] = "/", [OP_REM] = "%",
        [OP_SHL] = "<<", [OP_SHR] = ">>", [OP_BITAND] = "&", [OP_BITOR] = "|",
        [OP_BITXOR] = "^", [OP_LT] = "<", [OP_LE] = "<=", [OP_GT] = ">", [OP_GE] = ">=",
        [OP_EQ] = "==", [OP_NE] = "!=", [OP_LOGAND] = "&&", [OP_LOGOR] = "||",
        [OP_NEG] = "-", [OP_NOT] = "!", [OP_BITNOT] = "~",
    };
    return (unsigned)op < sizeof tab / sizeof tab[0] && tab[op] ? tab[op] : "?";
}

/* Shortest text that reads back as the same double; always looks like a float. */
static void dump_float(double v, FILE *out) {
    if (isnan(v)) {
        fputs("nan", out);
        return;
    }
    if (isinf(v)) {
        fputs(v < 0 ? "-inf" : "inf", out);
        return;
    }
    char buf[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) break;
    }
    fputs(buf, out);
    if (!strpbrk(buf, ".e")) fputs(".0", out);
}

static void dump_type(const TypeRef *t, FILE *out) {
    if (!t) {
        fputs("?", out);
        return;
    }
    for (int i = 0; i < t->ptr_depth; i++) fputc('*', out);
    fputs(t->name, out);
}

static void dump_expr(const Expr *e, FILE *out);

static void dump_args(const Expr *e, FILE *out) {
    for (int i = 0; i < e->nargs; i++) {
        if (i > 0 || e->kind != EX_LIST) fputc(' ', out);
        if (e->arg_names && e->arg_names[i]) fprintf(out, "%s=", e->arg_names[i]);
        dump_expr(e->args[i], out);
    }
}

static void dump_expr(const Expr *e, FILE *out) {
    if (!e) {
        fputs("<null>", out);
        return;
    }
    switch (e->kind) {
    case EX_INT: fprintf(out, "%lld", (long long)e->ival); break;
    case EX_FLOAT: dump_float(e->fval, out); break;
    case EX_BOOL: fputs(e->ival ? "true" : "false", out); break;
    case EX_NONE: fputs("None", out); break;
    case EX_SLICE: fputs(":", out); break;
    case EX_NAME: fputs(e->name, out); break;
    case EX_STRING: fprintf(out, "\"%s\"", e->name); break;
    case EX_UNARY:
        fprintf(out, "(%s ", ast_op_text(e->op));
        dump_expr(e->a, out);
        fputc(')', out);
        break;
    case EX_BINARY:
        fprintf(out, "(%s ", ast_op_text(e->op));
        dump_expr(e->a, out);
        fputc(' ', out);
        dump_expr(e->b, out);
        fputc(')', out);
        break;
    case EX_CALL:
        fprintf(out, "(call %s", e->name);
        dump_args(e, out);
        fputc(')', out);
        break;
    case EX_INDEX:
        fputs("(index ", out);
        dump_expr(e->a, out);
        dump_args(e, out);
        fputc(')', out);
        break;
    case EX_CAST:
        fputs("(as ", out);
        dump_expr(e->a, out);
        fputc(' ', out);
        dump_type(e->type, out);
        fputc(')', out);
        break;
    case EX_LIST:
        fputc('[', out);
        dump_args(e, out);
        fputc(']', out);
        break;
    case EX_TUPLE:
        fputs("(tuple", out);
        dump_args(e, out);
        fputc(')', out);
        break;
    }
}

static void indent(int depth, FILE *out) {
    for (int i = 0; i < depth; i++) fputs("  ", out);
}

static void dump_exprs(Expr *const *v, int n, const char *sep, FILE *out) {
    for (int i = 0; i < n; i++) {
        fputs(i ? sep : "", out);
        dump_expr(v[i], out);
    }
}

static void dump_stmt(const Stmt *s, int depth, FILE *out);

static void dump_body(const Stmt *s, int depth, FILE *out) {
    if (s) dump_stmt(s, depth, out);
}

static void dump_let(const Stmt *s, FILE *out) {
    fputs("let ", out);
    for (int i = 0; i < s->nnames; i++) fprintf(out, "%s%s", i ? ", " : "", s->names[i]);
    fputs(" = ", out);
    dump_expr(s->value, out);
}

static void dump_stmt(const Stmt *s, int depth, FILE *out) {
    indent(depth, out);
    switch (s->kind) {
    case ST_LET: dump_let(s, out); break;
    case ST_ASSIGN:
        fputs("assign ", out);
        for (int i = 0; i < s->nnames; i++) fprintf(out, "%s%s", i ? ", " : "", s->names[i]);
        fprintf(out, " %s%s ", s->op < 0 ? "" : ast_op_text(s->op), "=");
        dump_expr(s->value, out);
        break;
    case ST_EXPR: fputs("expr ", out); dump_expr(s->value, out); break;
    case ST_IF:
        fputs("if ", out);
        dump_expr(s->cond, out);
        fputc('\n', out);
        dump_body(s->body, depth + 1, out);
        if (s->else_body) {
            indent(depth, out);
            fputs("else\n", out);
            dump_body(s->else_body, depth + 1, out);
        }
        return;
    case ST_FOR:
        fprintf(out, "for %s in %s(", s->names[0], s->is_static ? "static_range" : "range");
        dump_exprs(s->values, s->nvalues, ", ", out);
        fputs(")\n", out);
        dump_body(s->body, depth + 1, out);
        return;
    case ST_WHILE:
        fputs("while ", out);
        dump_expr(s->cond, out);
        fputc('\n', out);
        dump_body(s->body, depth + 1, out);
        return;
    case ST_BREAK: fputs("break", out); break;
    case ST_CONTINUE: fputs("continue", out); break;
    case ST_RETURN:
        fputs(s->nvalues ? "return " : "return", out);
        dump_exprs(s->values, s->nvalues, ", ", out);
        break;
    case ST_BLOCK:
        fputs("block\n", out);
        for (int i = 0; i < s->nstmts; i++) dump_stmt(s->stmts[i], depth + 1, out);
        return;
    }
    fputc('\n', out);
}

static void dump_ann(const Annotation *a, FILE *out) {
    fprintf(out, "  @%s", a->name);
    for (int i = 0; i < a->nargs; i++) {
        const AnnArg *g = &a->args[i];
        fputs(i ? ", " : " ", out);
        if (g->name) fprintf(out, "%s%s", g->name, g->value ? "=" : "");
        if (g->value) dump_expr(g->value, out);
        if (g->bucket) fprintf(out, ":%s", g->bucket);
    }
    fputc('\n', out);
}

static void dump_param(const Param *p, FILE *out) {
    fprintf(out, "  param %s%s", p->is_const ? "const " : "", p->name);
    if (p->type) {
        fputs(": ", out);
        dump_type(p->type, out);
    }
    if (p->default_value) {
        fputs(" = ", out);
        dump_expr(p->default_value, out);
    }
    fputc('\n', out);
}

void ast_dump(const Module *m, FILE *out) {
    for (int i = 0; m && i < m->nimports; i++) fprintf(out, "import \"%s\"\n", m->imports[i].path);
    for (int i = 0; m && i < m->nfuncs; i++) {
        const Func *f = m->funcs[i];
        fprintf(out, "%s %s", f->is_kernel ? "kernel" : "fn", f->name);
        if (f->loc.file && f->loc.file != m->file) fprintf(out, " (from %s)", f->loc.file->name);
        if (f->type_alias) fprintf(out, " (@types %s = %s)", f->type_alias, f->type_alias_of);
        fputc('\n', out);
        for (int j = 0; j < f->nanns; j++) dump_ann(&f->anns[j], out);
        for (int j = 0; j < f->nparams; j++) dump_param(&f->params[j], out);
        if (f->body) dump_stmt(f->body, 1, out);
    }
}
