/* parser.y: pure Bison grammar of the tile language (docs/language.md). Builds the AST of
 * ast.h in the compilation's arena; tokens come from the re2c scanner (lexer.re). Syntax
 * errors are reported to Diags with the expected tokens, and `error` rules at declaration,
 * parameter, annotation and statement level let one run report several of them. */
%code top {
#include <stdlib.h>
#include <string.h>
}

%code requires {
#include "ast.h"
#include "func_index.h"
typedef struct Lexer Lexer;
typedef struct ArgList ArgList;
}

%code provides {
int tl_lex(TL_STYPE *lval, SrcLoc *lloc, Lexer *lx);
}

%code {
#include "lexer.h"
#include "python_names.h"

/* Call arguments while parsing: expressions plus keyword names (NULL = positional). */
struct ArgList {
    PtrVec exprs, names;
    int nkw;
};

#define YYLLOC_DEFAULT(Cur, Rhs, N)                                         \
    do {                                                                    \
        if (N) (Cur) = srcloc_span(YYRHSLOC(Rhs, 1), YYRHSLOC(Rhs, N));     \
        else (Cur) = YYRHSLOC(Rhs, 0);                                      \
    } while (0)

/* Bison's stack bound, named in the message that exceeding it gives (docs/language.md). */
#define YYMAXDEPTH 10000

/* Stores a freshly built node, bailing out of the parse when the arena is exhausted. */
#define MK(dst, e) do { if (!((dst) = (e))) YYNOMEM; } while (0)
#define PUSH(a, v, x) do { if (ptrvec_push((a), (v), (x))) YYNOMEM; } while (0)

static void tl_error(SrcLoc *loc, Lexer *lx, PtrVec *funcs, PtrVec *imports, const char *msg);
static Import *import_new(Lexer *lx, const char *path, SrcLoc loc);
static Expr *ex_new(Lexer *lx, ExprKind k, SrcLoc loc);
static Expr *ex_binary(Lexer *lx, OpKind op, Expr *a, Expr *b, SrcLoc loc, SrcLoc oploc);
static Expr *ex_unary(Lexer *lx, OpKind op, Expr *a, SrcLoc loc);
static Expr *ex_list(Lexer *lx, ExprKind k, PtrVec *items, SrcLoc loc);
static void tuple_first(PtrVec *v);
static Expr *ex_call(Lexer *lx, const char *name, ArgList *args, SrcLoc loc);
static Stmt *st_new(Lexer *lx, StmtKind k, SrcLoc loc);
static Stmt *st_let(Lexer *lx, PtrVec *names, Expr *value, SrcLoc loc);
static Stmt *st_assign(Lexer *lx, const char *name, SrcLoc nloc, int op, Expr *v, SrcLoc loc);
static Stmt *st_assign_many(Lexer *lx, const char *first, SrcLoc floc, PtrVec *rest, Expr *v,
                            SrcLoc loc);
static Stmt *st_for(Lexer *lx, const char *var, SrcLoc vloc, const char *fname, SrcLoc floc,
                    ArgList *args, Stmt *body, SrcLoc loc);
static Stmt *st_block(Lexer *lx, PtrVec *stmts, SrcLoc loc);
static Stmt *st_return(Lexer *lx, PtrVec *values, SrcLoc loc);
static TypeRef *type_new(Lexer *lx, const char *name, SrcLoc loc);
static Param *param_new(Lexer *lx, const char *name, SrcLoc loc, TypeRef *t, int is_const, Expr *def);
static Annotation *ann_new(Lexer *lx, const char *name, SrcLoc loc, PtrVec *args);
static AnnArg *annarg_new(Lexer *lx, const char *name, SrcLoc loc, Expr *value, const char *bucket);
static Func *func_new(Lexer *lx, int is_kernel, const char *name, SrcLoc loc, PtrVec *params,
                      PtrVec *anns, Stmt *body);
static PtrVec *vec_new(Lexer *lx);
static ArgList *args_new(Lexer *lx);
static int args_push(Lexer *lx, ArgList *l, const char *name, Expr *e);
}

%define api.pure full
%define api.prefix {tl_}
%define api.location.type {SrcLoc}
%define parse.error custom
%define parse.lac full
%locations
%expect 0
%parse-param {Lexer *lx} {PtrVec *funcs} {PtrVec *imports}
%lex-param {Lexer *lx}

%initial-action { @$ = (SrcLoc){lx->file, 1, 1, 1}; }

%union {
    int64_t i;
    double f;
    const char *s;
    Expr *e;
    Stmt *st;
    TypeRef *ty;
    PtrVec *v;
    ArgList *al;
    Param *pa;
    Annotation *an;
    AnnArg *aa;
    Func *fn;
    Import *im;
}

%token END 0 "end of file"
%token <s> IDENT "identifier"
%token <i> INT "integer literal"
%token <f> FLOAT "float literal"
%token <s> STRING "string literal"
%token KERNEL "kernel" FN "fn" CONST "const" LET "let" IF "if" ELSE "else" FOR "for"
       IN "in" WHILE "while" RETURN "return" BREAK "break" CONTINUE "continue"
       TRUE "true" FALSE "false" INF "inf" NAN "nan" NONE "None" AS "as"
       IMPORT "import"
%token PLUS "+" MINUS "-" STAR "*" SLASH "/" PERCENT "%" AMP "&" PIPE "|" CARET "^"
       TILDE "~" BANG "!" LT "<" GT ">" LE "<=" GE ">=" EQ "==" NE "!=" ANDAND "&&"
       OROR "||" SHL "<<" SHR ">>"
%token ASSIGN "=" PLUS_ASSIGN "+=" MINUS_ASSIGN "-=" STAR_ASSIGN "*=" SLASH_ASSIGN "/="
       PERCENT_ASSIGN "%=" AMP_ASSIGN "&=" PIPE_ASSIGN "|=" CARET_ASSIGN "^="
       SHL_ASSIGN "<<=" SHR_ASSIGN ">>="
%token LPAREN "(" RPAREN ")" LBRACKET "[" RBRACKET "]" LBRACE "{" RBRACE "}"
       COMMA "," SEMI ";" COLON ":" AT "@"

%left "||"
%left "&&"
%left "|"
%left "^"
%left "&"
%left "==" "!="
%left "<" "<=" ">" ">="
%left "<<" ">>"
%left "+" "-"
%left "*" "/" "%"

%type <e> expr unary cast postfix primary index_item values
%type <st> stmt block else_part if_stmt
%type <v> stmts names expr_list expr_list_opt index_list params params_opt param_list
%type <v> anns ann_args ann_args_opt
%type <al> args args_opt
%type <ty> type
%type <pa> param
%type <an> ann
%type <aa> ann_arg
%type <fn> decl
%type <im> import
%type <i> assign_op

%%

/* module := (decl | import)* */
module: %empty
      | module decl       { if ($2) PUSH(lx->arena, funcs, $2); }
      | module import     { if ($2) PUSH(lx->arena, imports, $2); }
      | module error "}"
      ;

/* import := "import" STRING ";" (resolved after parsing: lang/imports.c) */
import: "import" STRING ";"   { MK($$, import_new(lx, $2, @2)); }
      ;

/* decl := ann* ("kernel" | "fn") NAME "(" params ")" block */
decl: anns "kernel" IDENT "(" params_opt ")" block
        { MK($$, func_new(lx, 1, $3, @3, $5, $1, $7)); }
    | anns "fn" IDENT "(" params_opt ")" block
        { MK($$, func_new(lx, 0, $3, @3, $5, $1, $7)); }
    ;

anns: %empty         { MK($$, vec_new(lx)); }
    | anns ann       { $$ = $1; if ($2) PUSH(lx->arena, $$, $2); }
    ;

/* ann := "@" NAME [ "(" ann_arg, ... ")" ] */
ann: "@" IDENT                          { MK($$, ann_new(lx, $2, @2, NULL)); }
   | "@" IDENT "(" ann_args_opt ")"     { MK($$, ann_new(lx, $2, @2, $4)); }
   | "@" IDENT "(" error ")"            { $$ = NULL; }
   ;

ann_args_opt: %empty        { MK($$, vec_new(lx)); }
            | ann_args
            ;

ann_args: ann_arg                   { MK($$, vec_new(lx)); PUSH(lx->arena, $$, $1); }
        | ann_args "," ann_arg      { $$ = $1; PUSH(lx->arena, $$, $3); }
        ;

/* ann_arg := expr | NAME "=" expr | NAME ":" BUCKET */
ann_arg: expr                   { MK($$, annarg_new(lx, NULL, @1, $1, NULL)); }
       | IDENT "=" expr         { MK($$, annarg_new(lx, $1, @1, $3, NULL)); }
       | IDENT ":" IDENT        { MK($$, annarg_new(lx, $1, @1, NULL, $3)); }
       ;

params_opt: %empty          { MK($$, vec_new(lx)); }
          | param_list
          | error           { MK($$, vec_new(lx)); }
          ;

param_list: params
          | params ","
          ;

params: param               { MK($$, vec_new(lx)); PUSH(lx->arena, $$, $1); }
      | params "," param    { $$ = $1; PUSH(lx->arena, $$, $3); }
      ;

/* param := ["const"] NAME [":" type] ["=" expr] */
param: IDENT                            { MK($$, param_new(lx, $1, @1, NULL, 0, NULL)); }
     | IDENT ":" type                   { MK($$, param_new(lx, $1, @1, $3, 0, NULL)); }
     | IDENT "=" expr                   { MK($$, param_new(lx, $1, @1, NULL, 0, $3)); }
     | IDENT ":" type "=" expr          { MK($$, param_new(lx, $1, @1, $3, 0, $5)); }
     | "const" IDENT                    { MK($$, param_new(lx, $2, @2, NULL, 1, NULL)); }
     | "const" IDENT ":" type           { MK($$, param_new(lx, $2, @2, $4, 1, NULL)); }
     | "const" IDENT ":" type "=" expr  { MK($$, param_new(lx, $2, @2, $4, 1, $6)); }
     ;

/* type := NAME | "*" type */
type: IDENT         { MK($$, type_new(lx, $1, @1)); }
    | "*" type      { $$ = $2; $$->ptr_depth++; $$->loc = srcloc_span(@1, @2); }
    ;

block: "{" stmts "}"            { MK($$, st_block(lx, $2, @$)); }
     | "{" stmts error "}"      { MK($$, st_block(lx, $2, @$)); }
     ;

stmts: %empty               { MK($$, vec_new(lx)); }
     | stmts stmt           { $$ = $1; if ($2) PUSH(lx->arena, $$, $2); }
     ;

stmt: "let" names "=" values ";"    { MK($$, st_let(lx, $2, $4, @$)); }
    | IDENT assign_op expr ";"      { MK($$, st_assign(lx, $1, @1, (int)$2, $3, @$)); }
    /* a, b = helper(...): several existing variables at once */
    | IDENT "," names "=" values ";" { MK($$, st_assign_many(lx, $1, @1, $3, $5, @$)); }
    | if_stmt
    /* for NAME in range(args) block, or static_range(args) */
    | "for" IDENT "in" IDENT "(" args_opt ")" block
        { MK($$, st_for(lx, $2, @2, $4, @4, $6, $8, @$)); }
    | "while" expr block            { MK($$, st_new(lx, ST_WHILE, @$)); $$->cond = $2; $$->body = $3; }
    | "break" ";"                   { MK($$, st_new(lx, ST_BREAK, @1)); }
    | "continue" ";"                { MK($$, st_new(lx, ST_CONTINUE, @1)); }
    | "return" ";"                  { MK($$, st_return(lx, NULL, @1)); }
    | "return" expr_list ";"        { MK($$, st_return(lx, $2, @$)); }
    | expr ";"                      { MK($$, st_new(lx, ST_EXPR, @1)); $$->value = $1; }
    | block
    | error ";"                     { $$ = NULL; }
    ;

/* if_stmt := "if" expr block ["else" (block | if_stmt)] */
if_stmt: "if" expr block else_part
        { MK($$, st_new(lx, ST_IF, @$)); $$->cond = $2; $$->body = $3; $$->else_body = $4; }
       ;

else_part: %empty               { $$ = NULL; }
         | "else" block         { $$ = $2; }
         | "else" if_stmt
            { PtrVec *v; MK(v, vec_new(lx)); PUSH(lx->arena, v, $2); MK($$, st_block(lx, v, @2)); }
         ;

/* names := NAME, ...   (kept as EX_NAME nodes for their locations) */
names: IDENT
        { Expr *e; MK(e, ex_new(lx, EX_NAME, @1)); e->name = $1; MK($$, vec_new(lx)); PUSH(lx->arena, $$, e); }
     | names "," IDENT
        { Expr *e; MK(e, ex_new(lx, EX_NAME, @3)); e->name = $3; $$ = $1; PUSH(lx->arena, $$, e); }
     ;

assign_op: "="      { $$ = -1; }
         | "+="     { $$ = OP_ADD; }
         | "-="     { $$ = OP_SUB; }
         | "*="     { $$ = OP_MUL; }
         | "/="     { $$ = OP_DIV; }
         | "%="     { $$ = OP_REM; }
         | "&="     { $$ = OP_BITAND; }
         | "|="     { $$ = OP_BITOR; }
         | "^="     { $$ = OP_BITXOR; }
         | "<<="    { $$ = OP_SHL; }
         | ">>="    { $$ = OP_SHR; }
         ;

/* values := expr, ...: the right side of `let` and of `a, b = ...` (several: an EX_TUPLE) */
values: expr_list
        { $$ = $1->len == 1 ? $1->items[0] : ex_list(lx, EX_TUPLE, $1, @$); if (!$$) YYNOMEM; }
      ;

expr_list: expr                 { MK($$, vec_new(lx)); PUSH(lx->arena, $$, $1); }
         | expr_list "," expr   { $$ = $1; PUSH(lx->arena, $$, $3); }
         ;

/* expr := expr BINOP expr | unary   (precedence from the %left lines above) */
expr: expr "||" expr    { MK($$, ex_binary(lx, OP_LOGOR, $1, $3, @$, @2)); }
    | expr "&&" expr    { MK($$, ex_binary(lx, OP_LOGAND, $1, $3, @$, @2)); }
    | expr "|" expr     { MK($$, ex_binary(lx, OP_BITOR, $1, $3, @$, @2)); }
    | expr "^" expr     { MK($$, ex_binary(lx, OP_BITXOR, $1, $3, @$, @2)); }
    | expr "&" expr     { MK($$, ex_binary(lx, OP_BITAND, $1, $3, @$, @2)); }
    | expr "==" expr    { MK($$, ex_binary(lx, OP_EQ, $1, $3, @$, @2)); }
    | expr "!=" expr    { MK($$, ex_binary(lx, OP_NE, $1, $3, @$, @2)); }
    | expr "<" expr     { MK($$, ex_binary(lx, OP_LT, $1, $3, @$, @2)); }
    | expr "<=" expr    { MK($$, ex_binary(lx, OP_LE, $1, $3, @$, @2)); }
    | expr ">" expr     { MK($$, ex_binary(lx, OP_GT, $1, $3, @$, @2)); }
    | expr ">=" expr    { MK($$, ex_binary(lx, OP_GE, $1, $3, @$, @2)); }
    | expr "<<" expr    { MK($$, ex_binary(lx, OP_SHL, $1, $3, @$, @2)); }
    | expr ">>" expr    { MK($$, ex_binary(lx, OP_SHR, $1, $3, @$, @2)); }
    | expr "+" expr     { MK($$, ex_binary(lx, OP_ADD, $1, $3, @$, @2)); }
    | expr "-" expr     { MK($$, ex_binary(lx, OP_SUB, $1, $3, @$, @2)); }
    | expr "*" expr     { MK($$, ex_binary(lx, OP_MUL, $1, $3, @$, @2)); }
    | expr "/" expr     { MK($$, ex_binary(lx, OP_DIV, $1, $3, @$, @2)); }
    | expr "%" expr     { MK($$, ex_binary(lx, OP_REM, $1, $3, @$, @2)); }
    | unary
    ;

/* unary := ("-" | "!" | "~") unary | cast */
unary: "-" unary    { MK($$, ex_unary(lx, OP_NEG, $2, @$)); }
     | "!" unary    { MK($$, ex_unary(lx, OP_NOT, $2, @$)); }
     | "~" unary    { MK($$, ex_unary(lx, OP_BITNOT, $2, @$)); }
     | cast
     ;

/* cast := cast "as" type | postfix */
cast: cast "as" type    { MK($$, ex_new(lx, EX_CAST, @$)); $$->a = $1; $$->type = $3; }
    | postfix
    ;

/* postfix := NAME "(" args ")" | postfix "[" index_item, ... "]" | primary */
postfix: primary
       | IDENT "(" args_opt ")"             { MK($$, ex_call(lx, $1, $3, @$)); }
       | postfix "[" index_list "]"
            { MK($$, ex_list(lx, EX_INDEX, $3, @$)); $$->a = $1; }
       ;

index_list: index_item                  { MK($$, vec_new(lx)); PUSH(lx->arena, $$, $1); }
          | index_list "," index_item   { $$ = $1; PUSH(lx->arena, $$, $3); }
          ;

/* index_item := expr | ":"   (None is a primary) */
index_item: expr
          | ":"     { MK($$, ex_new(lx, EX_SLICE, @1)); }
          ;

args_opt: %empty    { MK($$, args_new(lx)); }
        | args
        ;

/* args := (expr | NAME "=" expr), ... */
args: expr                      { MK($$, args_new(lx)); if (args_push(lx, $$, NULL, $1)) YYNOMEM; }
    | IDENT "=" expr            { MK($$, args_new(lx)); if (args_push(lx, $$, $1, $3)) YYNOMEM; }
    | args "," expr             { $$ = $1; if (args_push(lx, $$, NULL, $3)) YYNOMEM; }
    | args "," IDENT "=" expr   { $$ = $1; if (args_push(lx, $$, $3, $5)) YYNOMEM; }
    ;

primary: INT            { MK($$, ex_new(lx, EX_INT, @1)); $$->ival = $1; }
       | FLOAT          { MK($$, ex_new(lx, EX_FLOAT, @1)); $$->fval = $1; }
       | "true"         { MK($$, ex_new(lx, EX_BOOL, @1)); $$->ival = 1; }
       | "false"        { MK($$, ex_new(lx, EX_BOOL, @1)); $$->ival = 0; }
       | "inf"          { MK($$, ex_new(lx, EX_FLOAT, @1)); $$->fval = __builtin_inf(); }
       | "nan"          { MK($$, ex_new(lx, EX_FLOAT, @1)); $$->fval = __builtin_nan(""); }
       | "None"         { MK($$, ex_new(lx, EX_NONE, @1)); }
       | IDENT          { MK($$, ex_new(lx, EX_NAME, @1)); $$->name = $1; }
       | STRING         { MK($$, ex_new(lx, EX_STRING, @1)); $$->name = $1; }
       | "(" ")"        { MK($$, ex_list(lx, EX_TUPLE, vec_new(lx), @$)); }
       | "(" expr ")"   { $$ = $2; if ($$) $$->paren = 1; }
       | "(" expr "," expr_list_opt ")"
            { PUSH(lx->arena, $4, $2); tuple_first($4);
              MK($$, ex_list(lx, EX_TUPLE, $4, @$)); }
       | "[" expr_list_opt "]"  { MK($$, ex_list(lx, EX_LIST, $2, @$)); }
       ;

expr_list_opt: %empty   { MK($$, vec_new(lx)); }
             | expr_list
             | expr_list ","
             ;

%%

/* ---- node constructors (NULL when the arena is exhausted) ---- */

static void *node(Lexer *lx, size_t size) {
    void *p = arena_alloc(lx->arena, size);
    if (!p) lx->oom = 1;
    return p;
}

static PtrVec *vec_new(Lexer *lx) { return node(lx, sizeof(PtrVec)); }

static ArgList *args_new(Lexer *lx) { return node(lx, sizeof(ArgList)); }

static int args_push(Lexer *lx, ArgList *l, const char *name, Expr *e) {
    if (name) l->nkw++;
    if (ptrvec_push(lx->arena, &l->exprs, e) || ptrvec_push(lx->arena, &l->names, (void *)name))
        return lx->oom = 1;
    return 0;
}

static Expr *ex_new(Lexer *lx, ExprKind k, SrcLoc loc) {
    Expr *e = node(lx, sizeof(Expr));
    if (e) {
        e->kind = k;
        e->loc = loc;
    }
    return e;
}

/* An operand of op that Python (and so Triton) would group differently: an unparenthesized
 * comparison under a bitwise operator (tile binds `&`, `|`, `^` looser than comparisons, as C
 * does; Python tighter) or under another comparison (Python chains `a < b < c`; tile would
 * compare a bool). NULL if neither. */
static const Expr *python_reads_otherwise(OpKind op, const Expr *a, const Expr *b) {
    int bitwise = op == OP_BITAND || op == OP_BITOR || op == OP_BITXOR;
    if (!bitwise && !ast_op_is_comparison(op))
        return NULL;
    const Expr *side[2] = { a, b };
    for (int i = 0; i < 2; i++)
        if (side[i] && side[i]->kind == EX_BINARY && !side[i]->paren && ast_op_is_comparison(side[i]->op))
            return side[i];
    return NULL;
}

static void check_grouping(Lexer *lx, OpKind op, const Expr *a, const Expr *b, SrcLoc oploc) {
    const Expr *c = python_reads_otherwise(op, a, b);
    if (!c)
        return;
    const char *o = ast_op_text(op), *co = ast_op_text(c->op);
    if (ast_op_is_comparison(op))
        diag_error(lx->diags, oploc, "comparisons do not chain: 'a %s b %s c' compares the bool "
                   "'a %s b' with c; write '(a %s b) && (b %s c)', or parenthesize the bool",
                   co, o, co, co, o);
    else if (c == b)
        diag_error(lx->diags, oploc, "parenthesize the comparison next to '%s': tile, like C, "
                   "reads 'x %s y %s z' as 'x %s (y %s z)', Python and Triton as '(x %s y) %s z'",
                   o, o, co, o, co, o, co);
    else
        diag_error(lx->diags, oploc, "parenthesize the comparison next to '%s': tile, like C, "
                   "reads 'x %s y %s z' as '(x %s y) %s z', Python and Triton as 'x %s (y %s z)'",
                   o, co, o, co, o, co, o);
}

static Expr *ex_binary(Lexer *lx, OpKind op, Expr *a, Expr *b, SrcLoc loc, SrcLoc oploc) {
    check_grouping(lx, op, a, b, oploc);
    Expr *e = ex_new(lx, EX_BINARY, loc);
    if (e) {
        e->op = op;
        e->a = a;
        e->b = b;
    }
    return e;
}

static Expr *ex_unary(Lexer *lx, OpKind op, Expr *a, SrcLoc loc) {
    Expr *e = ex_new(lx, EX_UNARY, loc);
    if (e) {
        e->op = op;
        e->a = a;
    }
    return e;
}

/* A tuple's first member was pushed last: move it to the front. */
static void tuple_first(PtrVec *v) {
    void *first = v->items[v->len - 1];
    memmove(v->items + 1, v->items, sizeof(void *) * (size_t)(v->len - 1));
    v->items[0] = first;
}

static Expr *ex_list(Lexer *lx, ExprKind k, PtrVec *items, SrcLoc loc) {
    Expr *e = ex_new(lx, k, loc);
    if (e) {
        e->args = (Expr **)items->items;
        e->nargs = items->len;
    }
    return e;
}

/* Triton's builtins that take their dims or shape as varargs (`tl.trans(x, 1, 0)`,
 * `tl.reshape(x, M, N)`): a call of one of them with three or more positional arguments takes
 * those after the first as one list, `trans(x, [1, 0])`. Helpers cannot take these names. */
static int varargs_builtin(const char *name) {
    return !strcmp(name, "trans") || !strcmp(name, "permute") || !strcmp(name, "reshape") ||
           !strcmp(name, "view") || !strcmp(name, "broadcast_to");
}

static Expr *ex_call(Lexer *lx, const char *name, ArgList *args, SrcLoc loc) {
    Expr *e = ex_new(lx, EX_CALL, loc);
    if (!e) return NULL;
    e->name = name;
    e->args = (Expr **)args->exprs.items;
    e->nargs = args->exprs.len;
    if (args->nkw) {
        e->arg_names = (const char **)args->names.items;
    } else if (e->nargs > 2 && varargs_builtin(name)) {
        Expr *l = ex_new(lx, EX_LIST, srcloc_span(e->args[1]->loc, e->args[e->nargs - 1]->loc));
        Expr **items = node(lx, sizeof(Expr *) * (size_t)(e->nargs - 1));
        if (!l || !items) return NULL;
        memcpy(items, e->args + 1, sizeof(Expr *) * (size_t)(e->nargs - 1));
        l->args = items;
        l->nargs = e->nargs - 1;
        e->args[1] = l;
        e->nargs = 2;
    }
    return e;
}

static Stmt *st_new(Lexer *lx, StmtKind k, SrcLoc loc) {
    Stmt *s = node(lx, sizeof(Stmt));
    if (s) {
        s->kind = k;
        s->loc = loc;
        s->op = -1;
    }
    return s;
}

static Stmt *st_block(Lexer *lx, PtrVec *stmts, SrcLoc loc) {
    Stmt *s = st_new(lx, ST_BLOCK, loc);
    if (s) {
        s->stmts = (Stmt **)stmts->items;
        s->nstmts = stmts->len;
    }
    return s;
}

static Stmt *st_return(Lexer *lx, PtrVec *values, SrcLoc loc) {
    Stmt *s = st_new(lx, ST_RETURN, loc);
    if (s && values) {
        s->values = (Expr **)values->items;
        s->nvalues = values->len;
    }
    return s;
}

/* let a, b = value: names holds EX_NAME nodes. */
static Stmt *st_let(Lexer *lx, PtrVec *names, Expr *value, SrcLoc loc) {
    Stmt *s = st_new(lx, ST_LET, loc);
    if (!s) return NULL;
    s->nnames = names->len;
    s->value = value;
    s->names = node(lx, sizeof(char *) * (size_t)names->len);
    s->name_locs = node(lx, sizeof(SrcLoc) * (size_t)names->len);
    if (!s->names || !s->name_locs) return NULL;
    for (int i = 0; i < names->len; i++) {
        Expr *e = names->items[i];
        s->names[i] = e->name;
        s->name_locs[i] = e->loc;
    }
    return s;
}

static Stmt *st_assign(Lexer *lx, const char *name, SrcLoc nloc, int op, Expr *v, SrcLoc loc) {
    Stmt *s = st_new(lx, ST_ASSIGN, loc);
    if (!s) return NULL;
    s->names = node(lx, sizeof(char *));
    s->name_locs = node(lx, sizeof(SrcLoc));
    if (!s->names || !s->name_locs) return NULL;
    s->names[0] = name;
    s->name_locs[0] = nloc;
    s->nnames = 1;
    s->op = op;
    s->value = v;
    return s;
}

/* first, rest... = v: rest holds EX_NAME nodes (names). */
static Stmt *st_assign_many(Lexer *lx, const char *first, SrcLoc floc, PtrVec *rest, Expr *v,
                            SrcLoc loc) {
    Expr *e = ex_new(lx, EX_NAME, floc);
    if (!e) return NULL;
    e->name = first;
    PtrVec *names = vec_new(lx);
    if (!names || ptrvec_push(lx->arena, names, e)) return NULL;
    for (int i = 0; i < rest->len; i++)
        if (ptrvec_push(lx->arena, names, rest->items[i])) return NULL;
    Stmt *s = st_let(lx, names, v, loc);
    if (!s) return NULL;
    s->kind = ST_ASSIGN;
    s->op = -1;
    return s;
}

/* range(..., num_stages=N) as Triton's tl.range writes it: the keyword, last, is taken off
 * the range's arguments into s->stages. 0 if the keywords are anything else. */
static int range_stages(ArgList *args, Stmt *s) {
    size_t last = args->exprs.len - 1;
    const char *kw = args->nkw == 1 && !s->is_static ? args->names.items[last] : NULL;
    if (!kw || strcmp(kw, "num_stages")) return 0;
    s->stages = args->exprs.items[last];
    s->nvalues--;
    return 1;
}

/* for NAME in range(START [, END [, STEP]] [, num_stages=N]) block (or static_range: unrolled
 * at compile time): the range call is checked here. */
static Stmt *st_for(Lexer *lx, const char *var, SrcLoc vloc, const char *fname, SrcLoc floc,
                    ArgList *args, Stmt *body, SrcLoc loc) {
    Stmt *s = st_assign(lx, var, vloc, -1, NULL, loc);
    if (!s) return NULL;
    s->kind = ST_FOR;
    s->body = body;
    s->values = (Expr **)args->exprs.items;
    s->nvalues = args->exprs.len;
    s->is_static = strcmp(fname, "static_range") == 0;
    if (strcmp(fname, "range") != 0 && !s->is_static)
        diag_error(lx->diags, floc, "expected 'range' or 'static_range' after 'in', found '%s'", fname);
    else if (args->nkw && !range_stages(args, s))
        diag_error(lx->diags, floc, s->is_static ? "'%s' takes no keyword arguments" :
                   "'%s' takes one keyword argument, last: num_stages=N (the loop's pipelining depth)",
                   fname);
    else if (s->nvalues < 1 || s->nvalues > 3)
        diag_error(lx->diags, floc, "'%s' takes 1 to 3 arguments, got %d", fname, s->nvalues);
    return s;
}

static TypeRef *type_new(Lexer *lx, const char *name, SrcLoc loc) {
    TypeRef *t = node(lx, sizeof(TypeRef));
    if (t) {
        t->name = name;
        t->loc = loc;
    }
    return t;
}

static Param *param_new(Lexer *lx, const char *name, SrcLoc loc, TypeRef *t, int is_const,
                        Expr *def) {
    Param *p = node(lx, sizeof(Param));
    if (p) {
        p->name = name;
        p->loc = loc;
        p->type = t;
        p->is_const = is_const;
        p->default_value = def;
    }
    return p;
}

static AnnKind ann_kind(const char *name) {
    static const struct { const char *name; AnnKind kind; } tab[] = {
        {"grid", ANN_GRID}, {"tune", ANN_TUNE}, {"constraint", ANN_CONSTRAINT}, {"key", ANN_KEY},
        {"reset", ANN_RESET}, {"restore", ANN_RESTORE}, {"types", ANN_TYPES},
    };
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
        if (!strcmp(tab[i].name, name)) return tab[i].kind;
    return ANN_UNKNOWN;
}

static Annotation *ann_new(Lexer *lx, const char *name, SrcLoc loc, PtrVec *args) {
    Annotation *a = node(lx, sizeof(Annotation));
    if (!a) return NULL;
    a->kind = ann_kind(name);
    a->name = name;
    a->loc = loc;
    a->nargs = args ? args->len : 0;
    a->args = node(lx, sizeof(AnnArg) * (size_t)(a->nargs ? a->nargs : 1));
    if (!a->args) return NULL;
    for (int i = 0; i < a->nargs; i++) {
        AnnArg *aa = args->items[i];
        /* @key(n), @reset(p), @restore(p): a bare name is the parameter, not an expression */
        if ((a->kind == ANN_KEY || a->kind == ANN_RESET || a->kind == ANN_RESTORE) && !aa->name && aa->value && aa->value->kind == EX_NAME) {
            aa->name = aa->value->name;
            aa->value = NULL;
        }
        a->args[i] = *aa;
    }
    return a;
}

static AnnArg *annarg_new(Lexer *lx, const char *name, SrcLoc loc, Expr *value,
                          const char *bucket) {
    AnnArg *a = node(lx, sizeof(AnnArg));
    if (a) {
        a->name = name;
        a->loc = loc;
        a->value = value;
        a->bucket = bucket;
    }
    return a;
}

static Func *func_new(Lexer *lx, int is_kernel, const char *name, SrcLoc loc, PtrVec *params,
                      PtrVec *anns, Stmt *body) {
    Func *f = node(lx, sizeof(Func));
    if (!f) return NULL;
    f->is_kernel = is_kernel;
    f->name = name;
    f->loc = loc;
    f->body = body;
    f->nparams = params->len;
    f->nanns = anns->len;
    f->params = node(lx, sizeof(Param) * (size_t)(f->nparams + 1));
    f->anns = node(lx, sizeof(Annotation) * (size_t)(f->nanns + 1));
    if (!f->params || !f->anns) return NULL;
    for (int i = 0; i < f->nparams; i++) f->params[i] = *(Param *)params->items[i];
    for (int i = 0; i < f->nanns; i++) f->anns[i] = *(Annotation *)anns->items[i];
    return f;
}

static Import *import_new(Lexer *lx, const char *path, SrcLoc loc) {
    Import *im = arena_alloc(lx->arena, sizeof *im);
    if (!im) return NULL;
    im->path = path;
    im->loc = loc;
    return im;
}

/* ---- syntax error messages ---- */

static void tl_error(SrcLoc *loc, Lexer *lx, PtrVec *funcs, PtrVec *imports, const char *msg) {
    (void)funcs;
    (void)imports;
    if (!strcmp(msg, "memory exhausted") && !lx->oom) /* Bison's stack, not the arena */
        msg = "expressions or blocks are nested too deeply for the parser (its stack holds "
              "10000 entries)";
    diag_error(lx->diags, *loc, "%s", msg);
}

/* How a token reads in a message: 'for', identifier 'x', end of file. */
static const char *sym_text(yysymbol_kind_t k) {
    switch (k) {
    case YYSYMBOL_YYEOF: return "end of file";
    case YYSYMBOL_IDENT: return "identifier";
    case YYSYMBOL_INT: return "integer literal";
    case YYSYMBOL_FLOAT: return "float literal";
    case YYSYMBOL_STRING: return "string literal";
    case YYSYMBOL_YYUNDEF: return "invalid token";
    default: break;
    }
    const char *s = yysymbol_name(k);
    return s;
}

static int sym_is_class(yysymbol_kind_t k) {
    return k == YYSYMBOL_YYEOF || k == YYSYMBOL_IDENT || k == YYSYMBOL_INT ||
           k == YYSYMBOL_FLOAT || k == YYSYMBOL_STRING || k == YYSYMBOL_YYUNDEF;
}

/* Appends one token's description ('for' quoted, classes bare) to buf. */
static void sym_append(char *buf, size_t size, yysymbol_kind_t k) {
    const char *s = sym_text(k);
    size_t n = strlen(buf);
    if (sym_is_class(k)) {
        snprintf(buf + n, size - n, "%s", s);
    } else {
        size_t len = strlen(s);
        if (len >= 2 && s[0] == '"') snprintf(buf + n, size - n, "'%.*s'", (int)len - 2, s + 1);
        else snprintf(buf + n, size - n, "'%s'", s);
    }
}

static int is_expr_start(yysymbol_kind_t k) {
    switch (k) {
    case YYSYMBOL_IDENT: case YYSYMBOL_INT: case YYSYMBOL_FLOAT: case YYSYMBOL_STRING: case YYSYMBOL_TRUE:
    case YYSYMBOL_FALSE: case YYSYMBOL_INF: case YYSYMBOL_NAN: case YYSYMBOL_NONE:
    case YYSYMBOL_LPAREN: case YYSYMBOL_LBRACKET: case YYSYMBOL_MINUS: case YYSYMBOL_BANG:
    case YYSYMBOL_TILDE:
        return 1;
    default:
        return 0;
    }
}

static int is_stmt_start(yysymbol_kind_t k) {
    switch (k) {
    case YYSYMBOL_LET: case YYSYMBOL_IF: case YYSYMBOL_FOR: case YYSYMBOL_WHILE:
    case YYSYMBOL_RETURN: case YYSYMBOL_BREAK: case YYSYMBOL_CONTINUE: case YYSYMBOL_LBRACE:
        return 1;
    default:
        return is_expr_start(k);
    }
}

/* Tokens that can only continue a complete expression (binary operators, postfix, `as`). */
static int is_expr_continuation(yysymbol_kind_t k) {
    return (k >= YYSYMBOL_PLUS && k <= YYSYMBOL_SHR_ASSIGN && k != YYSYMBOL_TILDE &&
            k != YYSYMBOL_BANG) ||
           k == YYSYMBOL_AS || k == YYSYMBOL_LBRACKET || k == YYSYMBOL_LPAREN;
}

static int has_sym(const yysymbol_kind_t *v, int n, yysymbol_kind_t k) {
    for (int i = 0; i < n; i++)
        if (v[i] == k) return 1;
    return 0;
}

/* Shortens the expected set to what a reader wants: "statement", "expression", and no
 * operators after a complete expression. Returns the count; *after_expr notes the latter. */
static int expected_simplify(yysymbol_kind_t *v, int n, const char **group, int *after_expr) {
    int stmt = has_sym(v, n, YYSYMBOL_LET), expr = has_sym(v, n, YYSYMBOL_INT);
    *after_expr = has_sym(v, n, YYSYMBOL_PLUS) && !expr;
    *group = stmt ? "statement" : expr ? "expression" : NULL;
    /* where a statement may end, ',' only continues a list of values (`a, b = x, y`, `return
     * a, b`): "expected ';'" is the likelier news */
    int semi = has_sym(v, n, YYSYMBOL_SEMI), m = 0;
    for (int i = 0; i < n; i++) {
        if (*after_expr && semi && v[i] == YYSYMBOL_COMMA) continue;
        if (stmt && is_stmt_start(v[i])) continue;
        if (expr && is_expr_start(v[i])) continue;
        if (*after_expr && is_expr_continuation(v[i])) continue;
        v[m++] = v[i];
    }
    return m;
}

static void expected_text(char *buf, size_t size, const yysymbol_kind_t *v, int n,
                          const char *group) {
    int total = n + (group != NULL), k = 0;
    buf[0] = 0;
    if (group) {
        snprintf(buf, size, "%s", group);
        k = 1;
    }
    for (int i = 0; i < n; i++, k++) {
        size_t len = strlen(buf);
        if (k > 0) snprintf(buf + len, size - len, k == total - 1 ? " or " : ", ");
        sym_append(buf, size, v[i]);
    }
}

/* Just past the previous token: where a missing ';' belongs. */
static SrcLoc after_prev(Lexer *lx) {
    SrcLoc l = lx->prev;
    if (!l.file) return lx->loc;
    l.col += l.len;
    l.len = 1;
    return l;
}

/* Whether the syntax error at the current token follows a `//` that reads as Python's floor
 * division (lexer.re): right after the token before it, on that token's line. */
static int after_floor_division(const Lexer *lx) {
    const SrcLoc *f = &lx->floordiv, *p = &lx->prev;
    return f->file && p->file && f->line == p->line && f->col >= p->col + p->len &&
           lx->loc.line > f->line;
}

/* Python expressions tile does not have, at the token where they fail to parse: `x ** y` (at
 * the second '*') and `a if c else b` (at 'if' after an expression). 1 if reported. */
static int python_operator_error(Lexer *lx, yysymbol_kind_t tok, SrcLoc loc, int after_expr) {
    if (tok == YYSYMBOL_STAR && lx->tok > lx->file->text && lx->tok[-1] == '*' &&
        lx->prev.line == loc.line && lx->prev.col == loc.col - 1) {
        loc.col--, loc.len = 2;
        diag_error(lx->diags, loc, "tile has no '**' operator: write pow(x, y), or x * x for a "
                   "square");
        return 1;
    }
    if (tok == YYSYMBOL_AT && after_expr) {
        diag_error(lx->diags, loc, "tile has no '@' operator: write dot(a, b) for a matrix "
                   "product");
        return 1;
    }
    if (tok == YYSYMBOL_IF && after_expr) {
        diag_error(lx->diags, loc, "tile has no conditional expression ('a if c else b'): write "
                   "where(c, a, b), or an if statement");
        return 1;
    }
    return 0;
}

/* Python words tile spells otherwise, at the token where they fail to parse: `a and b`, `a or
 * b` (at the word), `not x` (at what follows 'not'), `elif`, `def`. 1 if reported. */
static int python_word_error(Lexer *lx, yysymbol_kind_t tok, SrcLoc loc, int after_expr) {
    const char *m = after_expr && lx->prev_tok && is_expr_start(tok) /* read as a name */
                    ? python_keyword_error(lx->prev_tok, (size_t)lx->prev.len) : NULL;
    if (m) {
        diag_error(lx->diags, lx->prev, "%s", m);
        return 1;
    }
    m = tok == YYSYMBOL_IDENT ? python_keyword_error(lx->tok, (size_t)lx->loc.len) : NULL;
    if (m)
        diag_error(lx->diags, loc, "%s", m);
    return m != NULL;
}

static int yyreport_syntax_error(const yypcontext_t *ctx, Lexer *lx, PtrVec *funcs,
                                 PtrVec *imports) {
    (void)funcs;
    (void)imports;
    if (lx->bad || lx->quiet) return 0; /* the scanner already reported this token */
    if (after_floor_division(lx)) {
        diag_error(lx->diags, lx->floordiv, "tile has no '//' operator ('//' starts a comment): "
                   "integer '/' already truncates toward zero; for floats use floor(a / b)");
        return 0;
    }
    yysymbol_kind_t exp[YYNTOKENS];
    int n = yypcontext_expected_tokens(ctx, exp, YYNTOKENS);
    if (n < 0) return n;
    const char *group;
    int after_expr;
    n = expected_simplify(exp, n, &group, &after_expr);
    yysymbol_kind_t tok = yypcontext_token(ctx);
    SrcLoc loc = *yypcontext_location(ctx);
    if (python_operator_error(lx, tok, loc, after_expr) ||
        python_word_error(lx, tok, loc, after_expr))
        return 0;
    if (!group && n == 1 && exp[0] == YYSYMBOL_SEMI) {
        diag_error(lx->diags, after_prev(lx), "expected ';'%s", after_expr ? " after expression" : "");
        return 0;
    }
    char found[160] = "", want[512];
    sym_append(found, sizeof found, tok);
    if (tok == YYSYMBOL_IDENT || tok == YYSYMBOL_INT || tok == YYSYMBOL_FLOAT || tok == YYSYMBOL_STRING) {
        size_t len = strlen(found);
        snprintf(found + len, sizeof found - len, " '%.*s'", lx->loc.len > 40 ? 40 : lx->loc.len,
                 lx->tok);
    }
    if (n == 0 && !group) {
        diag_error(lx->diags, loc, "unexpected %s", found);
        return 0;
    }
    expected_text(want, sizeof want, exp, n, group);
    diag_error(lx->diags, loc, "unexpected %s, expected %s", found, want);
    return 0;
}

Module *parse_module(Arena *arena, const SrcFile *file, Diags *diags) {
    Lexer lx;
    PtrVec funcs = {0}, imports = {0};
    lexer_init(&lx, file, arena, diags);
    Module *m = arena_alloc(arena, sizeof(Module));
    const SrcFile **files = arena_alloc(arena, sizeof *files);
    if (!m || !files) return NULL;
    tl_parse(&lx, &funcs, &imports);
    if (lx.oom) return NULL;
    m->file = file;
    m->funcs = (Func **)funcs.items;
    m->nfuncs = funcs.len;
    m->imports = arena_alloc(arena, sizeof(Import) * (size_t)(imports.len + 1));
    if (!m->imports) return NULL;
    for (int i = 0; i < imports.len; i++) m->imports[i] = *(Import *)imports.items[i];
    m->nimports = imports.len;
    files[0] = file;
    m->files = files;
    m->nfiles = 1;
    m->by_name = func_index_build(arena, m->funcs, m->nfuncs);
    return m;
}
