/* sema.c: checks of the syntax tree that need no const values: names and scopes, calls to
 * builtins and helpers (arity, keyword names), parameter types, annotations, loops and
 * returns. Types and shapes are inferred later, at specialization. Each function with an
 * error, or calling one, is marked (Func.sema_failed), so that the others can be checked on. */
#include <string.h>
#include "ast.h"
#include "builtins.h"
#include "callgraph.h"
#include "func_index.h"
#include "python_names.h"

typedef enum { SYM_VAR, SYM_PARAM, SYM_PTR, SYM_CONST } SymKind;

typedef struct Sym {
    const char *name;
    SymKind kind;
    int is_float; /* a float parameter (annotations compute with integers only) */
    int loop_var; /* a for loop's variable */
    struct Sym *next;
} Sym;

typedef struct {
    Module *m;
    Diags *d;
    const Func *fn;
    int fn_pos;      /* fn's position in the module */
    Sym *scope;      /* innermost first; a block restores it on exit */
    Sym *ended;      /* variables of the function's blocks that have ended (for a hint) */
    Sym *block_base; /* the scope where the innermost block began */
    int block_depth; /* of nested blocks in the function (its body is 1) */
    int block_returns; /* the innermost block ends with a return */
    int loops;       /* depth of enclosing loops */
    int in_static;   /* the innermost enclosing loop is a static_range */
    const char *ann; /* checking this annotation's expressions (NULL: a function body) */
    int const_only;  /* ... which may only use const parameters */
    int depth;       /* of expression nesting, bounded so later stages may recurse */
    int too_deep;    /* that was reported */
    CallEdge *calls; /* helper calls, for the recursion check */
    int ncalls, calls_cap;
    int errors;
    unsigned char *bad; /* per function: an error in it (then in what it calls: sema_check) */
} Sema;

static const char *const type_names[] = {
    "bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "bf16", "f32", "f64",
    "f8e4m3", "f8e5m2",
};

static int is_type_name(const char *name) {
    for (size_t i = 0; i < sizeof type_names / sizeof type_names[0]; i++)
        if (!strcmp(type_names[i], name)) return 1;
    return 0;
}

int ast_is_type_name(const char *name) { return is_type_name(name); }

static int is_implicit(const char *name) {
    return !strcmp(name, "num_warps") || !strcmp(name, "num_stages");
}

#define ERR(S, loc, ...) ((S)->errors++, diag_error((S)->d, (loc), __VA_ARGS__))

/* A location narrowed to its first n bytes (e.g. a call's callee name). */
static SrcLoc loc_first(SrcLoc l, size_t n) {
    if (n > 0 && (size_t)l.len > n) l.len = (int)n;
    return l;
}

static const char *plural(int n) { return n == 1 ? "" : "s"; }

/* ---- scopes ---- */

static void declare(Sema *S, const char *name, SymKind kind) {
    Sym *s = arena_alloc(S->d->arena, sizeof(Sym));
    if (!s) return;
    s->name = name;
    s->kind = kind;
    s->is_float = 0;
    s->loop_var = 0;
    s->next = S->scope;
    S->scope = s;
}

static const Sym *lookup(const Sema *S, const char *name) {
    for (const Sym *s = S->scope; s; s = s->next)
        if (!strcmp(s->name, name)) return s;
    return NULL;
}

/* ---- types ---- */

static void check_type(Sema *S, const TypeRef *t) {
    if (t->ptr_depth > 1)
        ERR(S, t->loc, "pointers to pointers are not supported (keep addresses as u64 and cast one: `load(ptrs + i) as *f32`)");
    else if (!is_type_name(t->name)) {
        const char *py = python_type_spelling(t->name, strlen(t->name));
        ERR(S, t->loc, "unknown %stype '%s'%s%s%s", t->ptr_depth ? "element " : "", t->name,
            py ? " (tile spells it '" : "", py ? py : "", py ? "')" : "");
    }
}

/* ---- expressions ---- */

static void check_expr(Sema *S, const Expr *e);
static void check_expr_kind(Sema *S, const Expr *e);

static int ended_in_block(const Sema *S, const char *name);

/* " (tile spells it 'true')" where a name is Python's or Triton's, else "". */
static const char *python_hint(Sema *S, const char *name) {
    size_t n = strlen(name);
    const char *w = python_word_spelling(name, n), *t = python_type_spelling(name, n);
    const char *h = w ? arena_printf(S->d->arena, " (tile spells it '%s')", w)
                  : t ? arena_printf(S->d->arena, " (the type '%s' is '%s' here)", name, t) : "";
    return h ? h : "";
}

static void check_name(Sema *S, const Expr *e) {
    const Sym *s = lookup(S, e->name);
    if (!S->ann) {
        if (!s && !is_type_name(e->name) && ended_in_block(S, e->name))
            ERR(S, e->loc, "undefined variable '%s': the one declared inside a block (an if, a loop) "
                "ends with it; declare it before the block (let %s = ...;) and assign it inside",
                e->name, e->name);
        else if (!s && !is_type_name(e->name))
            ERR(S, e->loc, "undefined variable '%s'%s", e->name, python_hint(S, e->name));
        return;
    }
    if (!s)
        ERR(S, e->loc, "@%s refers to unknown parameter '%s'", S->ann, e->name);
    else if (s->kind == SYM_PTR)
        ERR(S, e->loc, "@%s cannot use pointer parameter '%s'", S->ann, e->name);
    else if (s->is_float)
        ERR(S, e->loc, "@%s cannot use float parameter '%s' (annotations compute with integers)",
            S->ann, e->name);
    else if (S->const_only && s->kind != SYM_CONST)
        ERR(S, e->loc, "@%s can only use const parameters, and '%s' is not const", S->ann,
            e->name);
}

/* Binds a call's arguments to slots[0..nslots) (slot names: NULL = positional only); -1 after
 * a positional argument past a keyword (then no missing arguments are reported: the binding
 * is not what the writer meant), else 0. */
static int check_binding(Sema *S, const Expr *e, const char *const *slots, int nslots) {
    int filled[AST_MAX_HELPER_PARAMS] = {0}, seen_kw = 0;
    for (int i = 0; i < e->nargs; i++) {
        const char *kw = e->arg_names ? e->arg_names[i] : NULL;
        int slot = i;
        if (!kw) {
            if (seen_kw) {
                ERR(S, e->args[i]->loc, "positional argument after keyword argument");
                return -1;
            }
        } else {
            seen_kw = 1;
            for (slot = 0; slot < nslots && !(slots[slot] && !strcmp(slots[slot], kw)); slot++) {}
            if (slot == nslots) {
                ERR(S, e->args[i]->loc, "'%s' has no parameter named '%s'%s", e->name, kw,
                    python_hint(S, kw));
                continue;
            }
        }
        if (slot >= nslots || slot >= AST_MAX_HELPER_PARAMS) continue;
        if (filled[slot])
            ERR(S, e->args[i]->loc, "argument '%s' of '%s' is given twice",
                slots[slot] ? slots[slot] : "?", e->name);
        filled[slot] = 1;
    }
    return 0;
}

/* The number of arguments of call e given by position. */
static int positional_args(const Expr *e) {
    int n = 0;
    for (int i = 0; i < e->nargs; i++) n += !(e->arg_names && e->arg_names[i]);
    return n;
}

static void check_builtin_call(Sema *S, const Expr *e, const BuiltinSig *b) {
    SrcLoc loc = loc_first(e->loc, strlen(e->name));
    int max = builtin_nslots(b);
    if (e->nargs < b->nreq || e->nargs > max) {
        if (b->nreq == max)
            ERR(S, loc, "'%s' expects %d argument%s, got %d", e->name, max, plural(max), e->nargs);
        else
            ERR(S, loc, "'%s' expects %d to %d arguments, got %d", e->name, b->nreq, max,
                e->nargs);
        return;
    }
    const char *slots[BUILTIN_MAX_SLOTS] = {0};
    for (int i = b->kwfrom; i < max; i++) slots[i] = b->slots[i];
    check_binding(S, e, slots, max);
}

static void check_helper_call(Sema *S, const Expr *e, const Func *f) {
    SrcLoc loc = loc_first(e->loc, strlen(e->name));
    if (positional_args(e) > f->nparams) { /* keywords past them: check_binding says which */
        ERR(S, loc, "'%s' expects %d argument%s, got %d", e->name, f->nparams,
            plural(f->nparams), positional_args(e));
        return;
    }
    if (f->nparams > AST_MAX_HELPER_PARAMS) return; /* reported at its definition */
    const char *slots[AST_MAX_HELPER_PARAMS] = {0};
    int n = f->nparams;
    for (int i = 0; i < n; i++) slots[i] = f->params[i].name;
    if (check_binding(S, e, slots, n) < 0)
        return;
    for (int i = 0; i < n; i++) {
        if (f->params[i].default_value) continue;
        int given = i < e->nargs && !(e->arg_names && e->arg_names[i]);
        for (int j = 0; j < e->nargs && !given; j++)
            given = e->arg_names && e->arg_names[j] && !strcmp(e->arg_names[j], slots[i]);
        if (!given) ERR(S, loc, "missing argument '%s' in call to '%s'", slots[i], e->name);
    }
}

/* The position in the module of the function named `name`, or -1. */
static int func_position(const Module *m, const char *name) {
    if (m->by_name) return func_index_find(m->by_name, m->funcs, name);
    for (int i = 0; i < m->nfuncs; i++)
        if (!strcmp(m->funcs[i]->name, name)) return i;
    return -1;
}

static void record_call(Sema *S, int callee, const Expr *e) {
    if (S->ncalls == S->calls_cap) {
        int cap = S->calls_cap ? 2 * S->calls_cap : 64;
        CallEdge *grown = arena_alloc(S->d->arena, sizeof *grown * (size_t)cap);
        if (!grown) return; /* out of memory: the arena's owner reports it */
        if (S->ncalls) memcpy(grown, S->calls, sizeof *grown * (size_t)S->ncalls);
        S->calls = grown;
        S->calls_cap = cap;
    }
    S->calls[S->ncalls++] = (CallEdge){S->fn_pos, callee, e};
}

/* Argument i of builtin call e names a function (the combine function of reduce and
 * associative_scan: third, or combine_fn=). */
static int names_function(const Expr *e, int i) {
    if (strcmp(e->name, "reduce") && strcmp(e->name, "associative_scan")) return 0;
    const char *kw = e->arg_names ? e->arg_names[i] : NULL;
    return e->args[i]->kind == EX_NAME && (kw ? !strcmp(kw, "combine_fn") : i == 2);
}

/* A combine function: a helper, recorded as called (the recursion check sees it). */
static void check_function_arg(Sema *S, const Expr *arg) {
    int pos = func_position(S->m, arg->name);
    if (pos < 0 || S->m->funcs[pos]->is_kernel)
        ERR(S, arg->loc, "'%s' is not a helper function (a combine function is the name of an 'fn')",
            arg->name);
    else
        record_call(S, pos, arg);
}

/* Argument i of call e is the operand of the built-in reduce or associative_scan (the first,
 * positional): the one place that takes a tuple of tiles. */
static int takes_tuple(Sema *S, const Expr *e, int i) {
    if ((strcmp(e->name, "reduce") && strcmp(e->name, "associative_scan")) || func_position(S->m, e->name) >= 0)
        return 0;
    return i == 0 && !(e->arg_names && e->arg_names[0]);
}

/* Argument i of call e is one of builtin_list_slot's lists (by keyword or by position): a
 * tuple there is that list. */
static int tuple_as_list(Sema *S, const Expr *e, int i) {
    const BuiltinSig *b = builtin_sig(e->name);
    if (!b || func_position(S->m, e->name) >= 0) return 0;
    const char *kw = e->arg_names ? e->arg_names[i] : NULL;
    if (!kw && i >= b->kwfrom && i < builtin_nslots(b)) kw = b->slots[i];
    return builtin_list_slot(e->name, kw);
}

static void check_tuple_arg(Sema *S, const Expr *e, int i) {
    const Expr *t = e->args[i];
    if (tuple_as_list(S, e, i)) {
        for (int j = 0; j < t->nargs; j++) check_expr(S, t->args[j]);
        return;
    }
    if (!takes_tuple(S, e, i)) {
        ERR(S, t->loc, "%s() takes a single value here, not a tuple (a tuple of tiles is only the "
            "first argument of reduce() and associative_scan())", e->name);
        return;
    }
    for (int j = 0; j < t->nargs; j++) check_expr(S, t->args[j]);
}

static void check_call(Sema *S, const Expr *e) {
    for (int i = 0; i < e->nargs; i++)
        if (names_function(e, i) && func_position(S->m, e->name) < 0) check_function_arg(S, e->args[i]);
        else if (e->args[i]->kind == EX_TUPLE) check_tuple_arg(S, e, i);
        else check_expr(S, e->args[i]);
    const BuiltinSig *b = builtin_sig(e->name);
    int pos = func_position(S->m, e->name);
    const Func *f = pos < 0 || (b && S->m->funcs[pos]->is_kernel) ? NULL : S->m->funcs[pos];
    SrcLoc loc = loc_first(e->loc, strlen(e->name));
    if (f && f->is_kernel)
        ERR(S, loc, "cannot call kernel '%s' (only 'fn' helpers can be called)", e->name);
    else if (f) {
        check_helper_call(S, e, f);
        record_call(S, pos, e);
    }
    else if (b)
        check_builtin_call(S, e, b);
    else if (!strcmp(e->name, "range"))
        ERR(S, loc, "'range' can only be used in a for loop");
    else if (!strcmp(e->name, "not"))
        ERR(S, loc, "unknown function 'not': tile writes Python's 'not x' as '!x'");
    else if (!strcmp(e->name, "float"))
        ERR(S, loc, "unknown function 'float': Python's float(\"inf\"), float(\"-inf\") and "
            "float(\"nan\") are the literals inf, -inf and nan; a cast is 'x as f32'");
    else
        ERR(S, loc, "unknown function '%s'", e->name);
}

enum { MAX_EXPR_DEPTH = 1000 };

static void check_expr(Sema *S, const Expr *e) {
    if (!e) return;
    if (S->depth >= MAX_EXPR_DEPTH) {
        if (!S->too_deep)
            ERR(S, e->loc, "expression is nested too deeply (more than %d levels)",
                MAX_EXPR_DEPTH);
        S->too_deep = 1;
        return;
    }
    S->depth++;
    check_expr_kind(S, e);
    S->depth--;
}

static void check_expr_kind(Sema *S, const Expr *e) {
    switch (e->kind) {
    case EX_NAME: check_name(S, e); return;
    case EX_CALL: check_call(S, e); return;
    case EX_TUPLE:
        ERR(S, e->loc, "a tuple (a, b, ...) is only allowed as the first argument of reduce() and "
            "associative_scan()");
        return;
    case EX_CAST: /* a type, or a name bound to one (@types' T, a helper's type argument) */
        if (e->type->ptr_depth || !lookup(S, e->type->name)) check_type(S, e->type);
        break;
    default: break;
    }
    check_expr(S, e->a);
    check_expr(S, e->b);
    if (e->kind == EX_INDEX || e->kind == EX_LIST)
        for (int i = 0; i < e->nargs; i++) check_expr(S, e->args[i]);
}

/* ---- statements ---- */

static void check_stmt(Sema *S, const Stmt *s);

static void check_block(Sema *S, const Stmt *s) {
    Sym *saved = S->scope, *base = S->block_base;
    int returns = S->block_returns;
    S->block_base = saved;
    S->block_depth++;
    S->block_returns = s->nstmts && s->stmts[s->nstmts - 1]->kind == ST_RETURN;
    for (int i = 0; i < s->nstmts; i++) check_stmt(S, s->stmts[i]);
    S->block_depth--;
    S->block_base = base;
    S->block_returns = returns;
    for (Sym *v = S->scope; v && v != saved; v = v->next) { /* remembered for a hint */
        Sym *e = arena_alloc(S->d->arena, sizeof *e);
        if (!e) break;
        *e = *v;
        e->next = S->ended;
        S->ended = e;
    }
    S->scope = saved;
}

static int ended_in_block(const Sema *S, const char *name) {
    for (const Sym *v = S->ended; v; v = v->next)
        if (!strcmp(v->name, name)) return 1;
    return 0;
}

/* Whether call e has keyword `kw` given as anything but the literal `false`. */
static int keyword_set(const Expr *e, const char *kw) {
    for (int i = 0; e->arg_names && i < e->nargs; i++)
        if (e->arg_names[i] && !strcmp(e->arg_names[i], kw))
            return !(e->args[i]->kind == EX_BOOL && e->args[i]->ival == 0);
    return 0;
}

/* inline_asm_elementwise's results: one per type of its dtype (a list or tuple of them, or one). */
static int asm_results(const Expr *e) {
    for (int i = 0; i < e->nargs; i++) {
        const char *kw = e->arg_names ? e->arg_names[i] : NULL;
        if (kw ? strcmp(kw, "dtype") != 0 : i != 3) continue;
        const Expr *t = e->args[i];
        return t->kind == EX_LIST || t->kind == EX_TUPLE ? t->nargs : 1;
    }
    return 1;
}

/* The number of values a builtin call returns (split gives two halves, swizzle2d a row and a
 * column, randint4x, rand4x and randn4x four; max and min, with return_indices, the values and their indices; reduce and associative_scan one per member of
 * a tuple operand), or -1 where a helper's results decide it. */
static int builtin_results(const Expr *e) {
    if (!strcmp(e->name, "split") || !strcmp(e->name, "swizzle2d")) return 2;
    if ((!strcmp(e->name, "reduce") || !strcmp(e->name, "associative_scan")) && e->nargs > 0) {
        if (e->args[0]->kind == EX_TUPLE) return e->args[0]->nargs; /* one per member */
        if (e->args[0]->kind == EX_CALL) return -1; /* as many as that call's results */
    }
    if (!strcmp(e->name, "max") || !strcmp(e->name, "min")) return 1 + keyword_set(e, "return_indices");
    if (!strcmp(e->name, "inline_asm_elementwise")) return asm_results(e);
    if (!strcmp(e->name, "randint4x") || !strcmp(e->name, "rand4x") || !strcmp(e->name, "randn4x") ||
        !strcmp(e->name, "philox"))
        return 4;
    return 1;
}

/* The number of values a return gives: `return f(x)` gives all of a call's results (Python's
 * `return helper(x)` returns its tuple), -1 where that is known only at specialization (a
 * helper's, or a builtin's that depends on its operand). */
static int return_values(const Module *m, const Stmt *s) {
    const Expr *v = s->nvalues == 1 ? s->values[0] : NULL;
    if (!v || v->kind != EX_CALL) return s->nvalues;
    const Func *f = module_find_func(m, v->name);
    if (f) return f->is_kernel ? 1 : -1;
    return builtin_sig(v->name) ? builtin_results(v) : 1;
}

/* The number of values the returns in s give (loops hold none): *n is -2 before the first,
 * then its count, or -1 once two differ or one is unknown. */
static void return_counts(const Module *m, const Stmt *s, int *n) {
    if (!s || s->kind == ST_FOR || s->kind == ST_WHILE) return;
    if (s->kind == ST_RETURN) {
        int k = return_values(m, s);
        *n = k >= 0 && (*n == -2 || *n == k) ? k : -1;
    }
    for (int i = 0; i < s->nstmts; i++) return_counts(m, s->stmts[i], n);
    return_counts(m, s->body, n);
    return_counts(m, s->else_body, n);
}

/* The number of values a helper returns: 0 without a return, -1 where its returns differ
 * or forward a call's results (then specialization decides). */
static int helper_results(const Module *m, const Func *f) {
    int n = -2;
    return_counts(m, f->body, &n);
    return n == -2 ? 0 : n;
}

/* The value of a `let` or an assignment gives as many values as it has names. */
static void check_value_count(Sema *S, const Stmt *s) {
    const Expr *v = s->value;
    int let = s->kind == ST_LET;
    if (v->kind == EX_TUPLE) { /* let a, b = x, y: one value each */
        if (s->nnames == 1) /* let t = (a, b): tile has no tuple values */
            ERR(S, v->loc, "a tuple (a, b, ...) is only allowed as the first argument of reduce() "
                "and associative_scan(), or on the right of several names (let a, b = x, y)");
        else if (v->nargs != s->nnames)
            ERR(S, v->loc, "%d values on the right, but %d name%s %s", v->nargs, s->nnames,
                s->nnames == 1 ? " is" : "s are", let ? "bound" : "assigned");
        return;
    }
    const Func *f = v->kind == EX_CALL ? module_find_func(S->m, v->name) : NULL;
    int n = s->nnames, several = !f && v->kind == EX_CALL && builtin_results(v) > 1 &&
                                 strcmp(v->name, "split") != 0; /* max, min: return_indices */
    if (n > 1 || several) {
        if (v->kind != EX_CALL)
            ERR(S, v->loc, "%s %d names needs a helper call or %d values on the right",
                let ? "'let' with" : "an assignment to", n, n);
        else if (!f && builtin_sig(v->name) && builtin_results(v) >= 0 && builtin_results(v) != n)
            ERR(S, v->loc, "'%s' returns %d value%s, but %d name%s bound", v->name,
                builtin_results(v), plural(builtin_results(v)), n, n == 1 ? " is" : "s are");
        else if (f && !f->is_kernel && helper_results(S->m, f) >= 0 && helper_results(S->m, f) != n)
            ERR(S, v->loc, "'%s' returns %d value%s, but %d names are bound", v->name,
                helper_results(S->m, f), plural(helper_results(S->m, f)), n);
    }
}

/* ... as many values as it has names, each name once. */
static void check_results(Sema *S, const Stmt *s) {
    int let = s->kind == ST_LET;
    check_value_count(S, s);
    for (int i = 0; i < s->nnames; i++)
        for (int j = 0; j < i; j++)
            if (!strcmp(s->names[i], s->names[j]))
                ERR(S, s->name_locs[i], "'%s' is %s twice in this %s", s->names[i],
                    let ? "bound" : "assigned", let ? "'let'" : "assignment");
}

/* A `let` inside a loop or branch that hides a variable of an enclosing block is a new
 * variable, gone when its block ends: where the outer one was meant (Python has no block
 * scope), its updates would be lost without a word. Loop variables may be hidden freely, and
 * so may anything in a block that ends with a return (a helper's branch). */
static void warn_hidden(Sema *S, const char *name, SrcLoc loc) {
    if (S->block_depth < 2 || S->block_returns) /* nothing outlives the block */
        return;
    for (const Sym *v = S->block_base; v; v = v->next)
        if (!strcmp(v->name, name)) {
            if (!v->loop_var)
                diag_warning(S->d, loc, "'let %s' inside this block declares a new '%s' that "
                             "hides the one of an enclosing block until the block ends; to "
                             "update that one, assign it: '%s = ...' (several: 'a, b = f(...)')",
                             name, name, name);
            return;
        }
}

/* The right side of a let or an assignment: one expression, or several (x, y). */
static void check_values(Sema *S, const Expr *v) {
    if (v->kind != EX_TUPLE)
        check_expr(S, v);
    else
        for (int i = 0; i < v->nargs; i++) check_expr(S, v->args[i]);
}

static void check_let(Sema *S, const Stmt *s) {
    check_values(S, s->value);
    check_results(S, s);
    for (int i = 0; i < s->nnames; i++) {
        warn_hidden(S, s->names[i], s->name_locs[i]);
        declare(S, s->names[i], SYM_VAR);
    }
}

static void check_assign(Sema *S, const Stmt *s) {
    check_values(S, s->value);
    if (s->nnames > 1 || s->value->kind == EX_TUPLE)
        check_results(S, s);
    for (int i = 0; i < s->nnames; i++) {
        const Sym *sym = lookup(S, s->names[i]);
        if (!sym)
            ERR(S, s->name_locs[i], "assignment to undeclared variable '%s' (declare it with "
                "'let')", s->names[i]);
        else if (sym->kind == SYM_CONST)
            ERR(S, s->name_locs[i], "cannot assign to const parameter '%s'", s->names[i]);
    }
}

static void check_loop(Sema *S, const Stmt *s) {
    Sym *saved = S->scope;
    if (s->kind == ST_FOR) {
        for (int i = 0; i < s->nvalues; i++) check_expr(S, s->values[i]);
        if (s->stages) check_expr(S, s->stages);
        declare(S, s->names[0], SYM_VAR);
        if (S->scope && S->scope->name == s->names[0])
            S->scope->loop_var = 1;
    } else {
        check_expr(S, s->cond);
    }
    int was_static = S->in_static;
    S->in_static = s->kind == ST_FOR && s->is_static;
    S->loops++;
    check_stmt(S, s->body);
    S->loops--;
    S->in_static = was_static;
    S->scope = saved;
}

static void check_return(Sema *S, const Stmt *s) {
    for (int i = 0; i < s->nvalues; i++) check_expr(S, s->values[i]);
    if (S->fn->is_kernel && s->nvalues)
        ERR(S, s->loc, "a kernel cannot return a value");
    else if (!S->fn->is_kernel && S->loops)
        ERR(S, s->loc, "'return' in helper '%s' cannot be inside a loop", S->fn->name);
}

static void check_stmt(Sema *S, const Stmt *s) {
    if (!s) return;
    switch (s->kind) {
    case ST_LET: check_let(S, s); break;
    case ST_ASSIGN: check_assign(S, s); break;
    case ST_EXPR: check_expr(S, s->value); break;
    case ST_IF:
        check_expr(S, s->cond);
        check_stmt(S, s->body);
        check_stmt(S, s->else_body);
        break;
    case ST_FOR:
    case ST_WHILE: check_loop(S, s); break;
    case ST_BREAK:
    case ST_CONTINUE:
        if (!S->loops)
            ERR(S, s->loc, "'%s' outside of a loop", s->kind == ST_BREAK ? "break" : "continue");
        else if (S->in_static)
            ERR(S, s->loc, "'%s' in a static_range loop (its iterations are unrolled at compile time)",
                s->kind == ST_BREAK ? "break" : "continue");
        break;
    case ST_RETURN: check_return(S, s); break;
    case ST_BLOCK: check_block(S, s); break;
    }
}

/* ---- parameters ---- */

static SymKind param_kind(const Param *p) {
    return p->is_const ? SYM_CONST : p->type && p->type->ptr_depth ? SYM_PTR : SYM_PARAM;
}

static int float_scalar(const Param *p) {
    return p->type && !p->type->ptr_depth && p->type->name &&
           (p->type->name[0] == 'f' || !strcmp(p->type->name, "bf16"));
}

static void declare_param(Sema *S, const Param *p) {
    declare(S, p->name, param_kind(p));
    if (S->scope && S->scope->name == p->name)
        S->scope->is_float = float_scalar(p);
}

/* consts: the const parameters before param i, as a scope its default may use (grown here). */
static void check_param(Sema *S, const Func *f, int i, Sym **consts) {
    const Param *p = &f->params[i];
    for (int j = 0; j < i; j++)
        if (!strcmp(f->params[j].name, p->name))
            ERR(S, p->loc, "duplicate parameter '%s' in '%s'", p->name, f->name);
    if (f->is_kernel && is_implicit(p->name))
        ERR(S, p->loc, "'%s' is an implicit parameter of every kernel", p->name);
    if (p->type) check_type(S, p->type);
    else if (p->is_const) ERR(S, p->loc, "const parameter '%s' needs a type", p->name);
    else if (f->is_kernel) ERR(S, p->loc, "kernel parameter '%s' needs a type", p->name);
    if (p->is_const && p->type && p->type->ptr_depth)
        ERR(S, p->type->loc, "const parameter '%s' must have a scalar type, not a pointer",
            p->name);
    else if (p->is_const && float_scalar(p))
        ERR(S, p->type->loc, "const parameter '%s' must have an integer or bool type (const "
            "values are integers): pass a float as a run-time parameter ('%s: %s')", p->name,
            p->name, p->type->name);
    if (f->is_kernel && !p->is_const && p->default_value)
        ERR(S, p->default_value->loc, "kernel parameter '%s' cannot have a default (a launch "
            "gives every run-time parameter; const parameters may have one)", p->name);
    if (!f->is_kernel && i > 0 && f->params[i - 1].default_value && !p->default_value)
        ERR(S, p->loc, "parameter '%s' without a default follows '%s', which has one (as in "
            "Python, parameters with defaults come last)", p->name, f->params[i - 1].name);
    Sym *saved = S->scope;
    S->scope = *consts;
    if (p->default_value) /* may use the const parameters before it */
        check_expr(S, p->default_value);
    if (p->is_const)
        declare(S, p->name, SYM_CONST);
    *consts = S->scope;
    S->scope = saved;
}

/* ---- annotations ---- */

static void check_ann_exprs(Sema *S, const Annotation *a, int min, int max, int const_only) {
    if (a->nargs < min || a->nargs > max) {
        if (min == max)
            ERR(S, a->loc, "@%s expects %d expression%s, got %d", a->name, min, plural(min),
                a->nargs);
        else
            ERR(S, a->loc, "@%s expects %d to %d expressions, got %d", a->name, min, max,
                a->nargs);
    }
    S->const_only = const_only;
    for (int i = 0; i < a->nargs; i++) {
        const AnnArg *g = &a->args[i];
        if (g->name || g->bucket || !g->value)
            ERR(S, g->loc, "@%s expects expressions, not 'NAME%s'", a->name,
                g->bucket ? ": BUCKET" : " = VALUE");
        else
            check_expr(S, g->value);
    }
}

static void check_tune(Sema *S, const Annotation *a) {
    if (!a->nargs) ERR(S, a->loc, "@tune expects NAME = [values, ...]");
    S->const_only = 1;
    for (int i = 0; i < a->nargs; i++) {
        const AnnArg *g = &a->args[i];
        if (!g->name || !g->value || g->value->kind != EX_LIST) {
            ERR(S, g->loc, "@tune expects NAME = [values, ...]");
            continue;
        }
        const Sym *s = lookup(S, g->name);
        SrcLoc loc = loc_first(g->loc, strlen(g->name));
        if (!s)
            ERR(S, loc, "@tune refers to unknown parameter '%s'", g->name);
        else if (s->kind != SYM_CONST)
            ERR(S, loc, "@tune target '%s' is not a const parameter", g->name);
        for (int j = 0; j < i; j++)
            if (a->args[j].name && !strcmp(a->args[j].name, g->name))
                ERR(S, loc, "parameter '%s' is tuned twice", g->name);
        if (!g->value->nargs) ERR(S, g->value->loc, "@tune list of '%s' is empty", g->name);
        check_expr(S, g->value);
    }
}

static void check_key(Sema *S, const Annotation *a) {
    if (!a->nargs) ERR(S, a->loc, "@key expects NAME or NAME: BUCKET");
    for (int i = 0; i < a->nargs; i++) {
        const AnnArg *g = &a->args[i];
        if (!g->name || g->value) {
            ERR(S, g->loc, "@key expects NAME or NAME: BUCKET");
            continue;
        }
        const Sym *s = lookup(S, g->name);
        SrcLoc loc = loc_first(g->loc, strlen(g->name));
        if (!s)
            ERR(S, loc, "@key refers to unknown parameter '%s'", g->name);
        else if (s->kind == SYM_PTR)
            ERR(S, loc, "@key cannot use pointer parameter '%s'", g->name);
        else if (s->is_float)
            ERR(S, loc, "@key cannot use float parameter '%s' (keys are integers)", g->name);
        if (g->bucket && strcmp(g->bucket, "pow2"))
            ERR(S, g->loc, "unknown @key bucket '%s' (expected pow2)", g->bucket);
    }
}

/* @reset(p, ...) / @restore(p, ...): pointer parameters whose buffers the tuner zeroes or
 * saves and copies back around each timed run. */
static void check_buffers(Sema *S, const Annotation *a) {
    if (!a->nargs) ERR(S, a->loc, "@%s expects pointer parameter names", a->name);
    for (int i = 0; i < a->nargs; i++) {
        const AnnArg *g = &a->args[i];
        if (!g->name || g->value) {
            ERR(S, g->loc, "@%s expects pointer parameter names", a->name);
            continue;
        }
        const Sym *s = lookup(S, g->name);
        SrcLoc loc = loc_first(g->loc, strlen(g->name));
        if (!s)
            ERR(S, loc, "@%s refers to unknown parameter '%s'", a->name, g->name);
        else if (s->kind != SYM_PTR)
            ERR(S, loc, "@%s needs a pointer parameter, '%s' is not one", a->name, g->name);
    }
}

static void check_ann(Sema *S, const Func *f, int i) {
    const Annotation *a = &f->anns[i];
    SrcLoc loc = a->loc;
    if (!f->is_kernel) {
        ERR(S, loc, "annotation '@%s' on helper '%s' (annotations are only for kernels)",
            a->name, f->name);
        return;
    }
    for (int j = 0; j < i; j++)
        if (a->kind != ANN_UNKNOWN && f->anns[j].kind == a->kind)
            ERR(S, loc, "duplicate @%s annotation", a->name);
    S->ann = a->name;
    switch (a->kind) {
    case ANN_GRID: check_ann_exprs(S, a, 1, 3, 0); break;
    case ANN_CONSTRAINT: check_ann_exprs(S, a, 1, 1, 0); break; /* consts, integer scalars */
    case ANN_TUNE: check_tune(S, a); break;
    case ANN_KEY: check_key(S, a); break;
    case ANN_RESET:
    case ANN_RESTORE: check_buffers(S, a); break;
    case ANN_TYPES: break; /* expanded before sema (expand_types.c) */
    case ANN_UNKNOWN:
        ERR(S, loc, "unknown annotation '@%s' (expected @grid, @tune, @constraint, @key, "
            "@reset, @restore or @types)", a->name);
        break;
    }
    S->ann = NULL;
    S->const_only = 0;
}

/* ---- functions ---- */

/* The fixed limits on parameters, reported at the function's name; 1 if one is exceeded. */
static int check_param_limits(Sema *S, const Func *f) {
    int nconst = 0, over = 0;
    for (int i = 0; i < f->nparams; i++) nconst += f->params[i].is_const;
    if (!f->is_kernel && f->nparams > AST_MAX_HELPER_PARAMS) {
        ERR(S, f->loc, "helper '%s' has %d parameters (at most %d)", f->name,
            f->nparams, AST_MAX_HELPER_PARAMS);
        over = 1;
    }
    if (f->is_kernel && f->nparams > AST_MAX_KERNEL_PARAMS) {
        ERR(S, f->loc, "kernel '%s' has %d parameters (at most %d)", f->name, f->nparams,
            AST_MAX_KERNEL_PARAMS);
        over = 1;
    }
    if (f->is_kernel && nconst > AST_MAX_KERNEL_CONSTS) {
        ERR(S, f->loc, "kernel '%s' has %d const parameters (at most %d)", f->name,
            nconst, AST_MAX_KERNEL_CONSTS);
        over = 1;
    }
    return over;
}

static void check_func(Sema *S, const Func *f) {
    S->fn = f;
    int over = check_param_limits(S, f); /* then the parameters' own checks are left out */
    S->scope = NULL;
    S->ended = NULL;
    S->loops = 0;
    S->in_static = 0;
    S->block_base = NULL;
    S->block_depth = 0;
    /* a kernel is never called, so it may share a builtin's name (a kernel called softmax) */
    if (!f->is_kernel && (builtin_sig(f->name) || !strcmp(f->name, "range") ||
                           !strcmp(f->name, "static_range")))
        ERR(S, f->loc, "'%s' is a builtin function and cannot be redefined", f->name);
    Sym *consts = NULL;
    for (int i = 0; i < f->nparams; i++) {
        if (!over)
            check_param(S, f, i, &consts);
        declare_param(S, &f->params[i]);
    }
    if (f->is_kernel) {
        declare(S, "num_warps", SYM_CONST);
        declare(S, "num_stages", SYM_CONST);
    }
    if (f->type_alias) declare(S, f->type_alias, SYM_CONST);
    for (int i = 0; i < f->nanns; i++) check_ann(S, f, i);
    if (f->body) check_stmt(S, f->body);
}

/* Helpers are inlined, so a call cycle would never end: report the calls closing one. */
static void check_recursion(Sema *S) {
    unsigned char *cyclic = arena_alloc(S->d->arena, (size_t)S->ncalls + 1);
    if (!cyclic || callgraph_cyclic(S->d->arena, S->m->nfuncs, S->calls, S->ncalls, cyclic))
        return; /* out of memory: the arena's owner reports it */
    for (int i = 0; i < S->ncalls; i++) {
        const Expr *e = S->calls[i].site;
        if (!cyclic[i]) continue;
        ERR(S, loc_first(e->loc, strlen(e->name)),
            "recursive call to '%s' (helpers are inlined and cannot recurse)", e->name);
        if (S->bad) S->bad[S->calls[i].caller] = 1;
    }
}

/* Func.sema_failed for each function with an error, or calling one that has (directly or not),
 * so that the kernels free of them can still be specialized and their errors reported. */
static void mark_failed(Sema *S) {
    if (!S->bad || callgraph_taint(S->d->arena, S->m->nfuncs, S->calls, S->ncalls, S->bad))
        for (int i = 0; i < S->m->nfuncs; i++) S->m->funcs[i]->sema_failed = 1; /* out of memory */
    else
        for (int i = 0; i < S->m->nfuncs; i++) S->m->funcs[i]->sema_failed = S->bad[i];
}

int sema_check(Module *m, Diags *diags) {
    Sema S = {.m = m, .d = diags};
    S.bad = arena_alloc(diags->arena, (size_t)m->nfuncs + 1);
    for (int i = 0; i < m->nfuncs; i++) {
        const Func *f = m->funcs[i];
        int first = func_position(m, f->name), errors = S.errors; /* the first of that name */
        if (first >= 0 && first < i) {
            ERR(&S, f->loc, "redefinition of '%s'", f->name);
            diag_note(diags, m->funcs[first]->loc, "previous definition of '%s' is here", f->name);
            if (S.bad) S.bad[first] = 1; /* calls by the name: which one? */
        }
        S.fn_pos = i;
        check_func(&S, f);
        if (S.bad && S.errors > errors) S.bad[i] = 1;
    }
    check_recursion(&S);
    mark_failed(&S);
    return S.errors;
}
