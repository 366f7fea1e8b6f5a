/* lexer.h: the reentrant re2c scanner (lang/lexer.re) behind the Bison parser
 * (lang/parser.y). All scanner state lives in a Lexer; tokens carry a SrcLoc.
 * Include after "parser.h", which declares tl_lex and the token numbers. */
#ifndef TILE_LEXER_H
#define TILE_LEXER_H
#include "ast.h"

struct Lexer {
    const SrcFile *file;
    Arena *arena;
    Diags *diags;
    const char *cur, *tok, *lim; /* scan position, start of the last token, end */
    const char *line_start;
    int line;
    SrcLoc loc, prev;     /* last token returned, and the one before it */
    const char *prev_tok; /* where the one before it starts in the text (prev.len long) */
    int last;             /* the last token's number */
    SrcLoc floordiv;      /* the last `//` comment that reads as Python's floor division */
    int bad;              /* an error was reported while scanning the last token */
    int quiet, quiet_next; /* no syntax error at this token (after an unterminated string) */
    int oom;              /* an allocation failed */
};

void lexer_init(Lexer *lx, const SrcFile *file, Arena *arena, Diags *diags);
/* The dump name of a token number (e.g. "IDENT", "PLUS_ASSIGN"). */
const char *lexer_token_kind(int tok);

#endif
