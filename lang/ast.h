/* ast.h: the syntax tree produced by the parser (lang/parser.y). Nodes live in the
 * compilation's arena. Names are resolved later: a type name such as `f16` is an
 * EX_NAME until sema/specialization interprets it. */
#ifndef TILE_AST_H
#define TILE_AST_H
#include <stdint.h>
#include "arena.h"
#include "diag.h"

typedef struct Expr Expr;
typedef struct Stmt Stmt;

typedef enum {
    EX_INT,    /* ival */
    EX_FLOAT,  /* fval (inf and nan included) */
    EX_BOOL,   /* ival 0/1 */
    EX_NONE,   /* `None` in an index */
    EX_SLICE,  /* `:` in an index */
    EX_NAME,   /* name */
    EX_UNARY,  /* op, a */
    EX_BINARY, /* op, a, b */
    EX_CALL,   /* name (callee), args (+ arg_names, NULL entries for positional) */
    EX_INDEX,  /* a[args...] */
    EX_CAST,   /* a as type */
    EX_LIST,   /* [args...] */
    EX_STRING, /* name: the text between the quotes (only sem=/scope= of atomics take one) */
    EX_TUPLE,  /* (args...): only the operand of reduce and associative_scan takes one */
} ExprKind;

typedef enum {
    OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_REM,
    OP_SHL, OP_SHR, OP_BITAND, OP_BITOR, OP_BITXOR,
    OP_LT, OP_LE, OP_GT, OP_GE, OP_EQ, OP_NE,
    OP_LOGAND, OP_LOGOR,
    OP_NEG, OP_NOT, OP_BITNOT, /* unary */
} OpKind;

typedef struct TypeRef {
    const char *name; /* element type name, e.g. "f32" */
    int ptr_depth;    /* 1 for *f32 (only 0 and 1 are valid) */
    SrcLoc loc;
} TypeRef;

struct Expr {
    ExprKind kind;
    SrcLoc loc;
    OpKind op;
    int64_t ival;
    double fval;
    const char *name;
    Expr *a, *b;
    Expr **args;            /* call arguments, index items, list items */
    const char **arg_names; /* call: keyword argument names (NULL = positional); may be NULL */
    int nargs;
    TypeRef *type; /* EX_CAST target */
    int paren;     /* written inside parentheses (the parser's precedence checks) */
};

typedef enum {
    ST_LET,      /* names[0..nnames) = value */
    ST_ASSIGN,   /* names[0] (op)= value; op == -1 for plain `=`, the only op when nnames > 1 */
    ST_EXPR,     /* value */
    ST_IF,       /* cond, body, else_body (NULL or a block, possibly holding one ST_IF) */
    ST_FOR,      /* names[0] in range(args...) body */
    ST_WHILE,    /* cond, body */
    ST_BREAK,
    ST_CONTINUE,
    ST_RETURN,   /* values[0..nvalues) */
    ST_BLOCK,    /* stmts */
} StmtKind;

struct Stmt {
    StmtKind kind;
    SrcLoc loc;
    const char **names;
    SrcLoc *name_locs;
    int nnames;
    int op; /* ST_ASSIGN: OpKind of a compound assignment, or -1 */
    int is_static; /* ST_FOR: static_range (unrolled at compile time), not range */
    Expr *stages;  /* ST_FOR: range(..., num_stages=N), this loop's pipelining depth (or NULL) */
    Expr *value;
    Expr *cond;
    Expr **values; /* ST_RETURN values; ST_FOR range arguments (1 to 3) */
    int nvalues;
    Stmt *body, *else_body;
    Stmt **stmts; /* ST_BLOCK */
    int nstmts;
};

typedef struct Param {
    const char *name;
    SrcLoc loc;
    TypeRef *type;      /* NULL: untyped (helpers only) */
    int is_const;
    Expr *default_value; /* const params only; may be NULL */
} Param;

typedef enum { ANN_GRID, ANN_TUNE, ANN_CONSTRAINT, ANN_KEY, ANN_UNKNOWN, ANN_RESET, ANN_RESTORE,
               ANN_TYPES } AnnKind;

typedef struct AnnArg {
    const char *name;   /* @tune, @key, @reset, @restore: parameter name; else NULL */
    SrcLoc loc;
    Expr *value;        /* @grid / @constraint: expression; @tune: EX_LIST of candidates */
    const char *bucket; /* @key: bucketing function name (e.g. "pow2") or NULL */
} AnnArg;

typedef struct Annotation {
    AnnKind kind;
    const char *name; /* as written, without '@' */
    SrcLoc loc;
    AnnArg *args;
    int nargs;
} Annotation;

/* Limits that sema checks, each with a message naming it (docs/language.md, "Limits"). */
enum {
    AST_MAX_HELPER_PARAMS = 64, /* parameters of one helper */
    AST_MAX_KERNEL_CONSTS = 64, /* const parameters of one kernel, besides num_warps, num_stages */
    AST_MAX_KERNEL_PARAMS = 512, /* parameters of one kernel (CUDA passes at most 4 KB of them) */
};

typedef struct Func {
    const char *name;
    SrcLoc loc;
    int is_kernel;
    Param *params;
    int nparams;
    Stmt *body; /* ST_BLOCK */
    Annotation *anns;
    int nanns;
    /* A kernel made by @types(T = [...]): T (type_alias) names this instance's element type
     * (type_alias_of) in its parameters and body. NULL otherwise. */
    const char *type_alias, *type_alias_of;
    /* Set by sema: it found an error in this function or in a helper it calls (the other
     * kernels can still be specialized, to report their errors too: tilec check). */
    int sema_failed;
} Func;

/* `import "PATH";` as written; lang/imports.c resolves it. */
typedef struct Import {
    const char *path;
    SrcLoc loc; /* the string literal */
} Import;

typedef struct Module {
    const SrcFile *file;
    Func **funcs; /* the file's own, then (once imports are resolved) the imported helpers */
    int nfuncs;
    struct FuncIndex *by_name; /* funcs by name (func_index.h); NULL: scan them */
    Import *imports;           /* this file's import declarations */
    int nimports;
    const SrcFile **files; /* every file the module is built from, this one first */
    int nfiles;
} Module;

/* Parses a whole file. Returns a module (possibly partial) and reports syntax errors to
 * diags; check diags->errors. Returns NULL only when out of memory. */
Module *parse_module(Arena *arena, const SrcFile *file, Diags *diags);

/* Prints the token stream (tilec --emit=tokens): one token a line, `line:col KIND 'text'`. */
void lex_dump_tokens(const SrcFile *file, FILE *out);

/* Prints the tree (tilec --emit=ast) as an indented S-expression-like listing. */
void ast_dump(const Module *m, FILE *out);
const char *ast_op_text(OpKind op); /* "+", "<=", ...; "?" for none */
int ast_op_is_comparison(OpKind op); /* < <= > >= == != */

/* Checks what can be checked before const values are known: duplicate names, undefined
 * names and functions, builtin arity, kernel parameter types, annotations referring to
 * parameters that exist, break/continue outside loops, helper returns. Reports to diags;
 * returns the number of errors found. Sets each function's sema_failed. */
int sema_check(Module *m, Diags *diags);
const Func *module_find_func(const Module *m, const char *name);

/* Whether `name` is an element type of the language ("f16", "i32", ...). */
int ast_is_type_name(const char *name);

/* Replaces every kernel annotated @types(T = [t0, t1, ...]) by one kernel per listed type: the
 * first keeps the kernel's name, the others get NAME_tI; in each, T names that type (its
 * parameters' `*T` are substituted, its body sees T as a type). Errors at the annotation for a
 * malformed list, an unknown or repeated type, T naming a parameter, @types on a helper.
 * Returns the number of errors reported. */
int expand_type_variants(Module *m, Arena *arena, Diags *diags);

#endif
