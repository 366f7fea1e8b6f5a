/* lexer.re: the re2c scanner of the tile language. Reentrant: all state is in a Lexer.
 * Produces the tokens of parser.y with a SrcLoc each; bad characters, bad numbers,
 * unterminated comments and bad strings are reported to Diags and skipped, so scanning
 * always ends.
 * Also implements lex_dump_tokens (tilec --emit=tokens). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "parser.h"
#include "lexer.h"
#include "python_names.h"

void lexer_init(Lexer *lx, const SrcFile *file, Arena *arena, Diags *diags) {
    memset(lx, 0, sizeof *lx);
    lx->file = file;
    lx->arena = arena;
    lx->diags = diags;
    lx->cur = lx->tok = lx->line_start = file->text;
    lx->lim = file->text + file->len;
    lx->line = 1;
}

/* The location of the token being scanned (tok..cur). */
static SrcLoc here(const Lexer *lx) {
    int len = (int)(lx->cur - lx->tok);
    return (SrcLoc){lx->file, lx->line, (int)(lx->tok - lx->line_start) + 1, len > 0 ? len : 1};
}

static void newline(Lexer *lx, const char *next) {
    lx->line++;
    lx->line_start = next;
}

/* Skips a block comment after its opening; returns 0, or -1 when the file ends first. */
static int block_comment(Lexer *lx) {
    SrcLoc start = here(lx);
    for (const char *p = lx->cur; p < lx->lim; p++) {
        if (*p == '\n') {
            newline(lx, p + 1);
        } else if (p[0] == '*' && p + 1 < lx->lim && p[1] == '/') {
            lx->cur = p + 2;
            return 0;
        }
    }
    lx->cur = lx->lim;
    lx->bad = 1;
    diag_error(lx->diags, start, "unterminated block comment");
    return -1;
}

static int is_ident_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* The identifier that ends just before p (NULL: none), its length in *n. */
static const char *word_before(const Lexer *lx, const char *p, int *n) {
    const char *b = p;
    while (b > lx->file->text && is_ident_char(b[-1])) b--;
    *n = (int)(p - b);
    return *n ? b : NULL;
}

/* What Python habits a '.' at lx->tok comes from: Triton's `x.to(T)` casts, `tl.NAME`
 * modules, methods and attributes in general; NULL for none of them. */
static const char *dot_hint(const Lexer *lx) {
    const char *p = lx->tok, *next = p + 1;
    int n;
    const char *w = word_before(lx, p, &n);
    if (w && ((n == 2 && !strncmp(w, "tl", 2)) || (n == 6 && !strncmp(w, "triton", 6)) ||
              (n == 9 && !strncmp(w, "libdevice", 9)))) {
        const char *e = next;
        while (e < lx->lim && is_ident_char(*e)) e++;
        const char *type = python_type_spelling(next, (size_t)(e - next));
        if (type) /* tl.float16 */
            return arena_printf(lx->arena, "tile has no modules: Triton's `tl.%.*s` is the type "
                                "`%s` here", (int)(e - next), next, type);
        return "tile has no modules: Triton's `tl.NAME(...)` is `NAME(...)` here";
    }
    int after_operand = p > lx->file->text && (is_ident_char(p[-1]) || p[-1] == ')' || p[-1] == ']');
    if (!after_operand || next >= lx->lim || !is_ident_char(*next) || (*next >= '0' && *next <= '9'))
        return NULL;
    if (lx->lim - next >= 3 && !strncmp(next, "to", 2) && !is_ident_char(next[2]))
        return "tile has no methods: the cast `x.to(T)` is written `x as T` (and "
               "`x.to(T, bitcast=True)` is `bitcast(x, T)`)";
    return "tile has no methods or attributes (a cast `x.to(T)` is written `x as T`)";
}

static void bad_char(Lexer *lx) {
    unsigned char c = (unsigned char)*lx->tok;
    const char *hint = c == '.' ? dot_hint(lx) : NULL;
    lx->bad = 1;
    while (lx->cur < lx->lim && ((unsigned char)*lx->cur & 0xC0) == 0x80) lx->cur++;
    if (hint)
        diag_error(lx->diags, here(lx), "invalid character '.': %s", hint);
    else if (c >= 0x20 && c < 0x7f)
        diag_error(lx->diags, here(lx), "invalid character '%c'", c);
    else
        diag_error(lx->diags, here(lx), "invalid byte 0x%02X in source", c);
}

/* A `//` comment right after an operand, on its line, whose text reads as the rest of an
 * expression (`a // b;`, no two words in a row): Python's floor division, most likely. Its
 * place is kept for the syntax error that follows (parser.y). */
static void note_floor_division(Lexer *lx) {
    const char *p = lx->tok + 2, *end = lx->cur;
    int operand = lx->last == IDENT || lx->last == INT || lx->last == FLOAT ||
                  lx->last == RPAREN || lx->last == RBRACKET;
    if (!operand || lx->loc.line != lx->line) return;
    while (p < end && (*p == ' ' || *p == '\t')) p++;
    if (p == end || !(is_ident_char(*p) || *p == '(' || *p == '-')) return;
    for (int word = 0, space = 0; p < end; p++) { /* English has words in a row */
        if (is_ident_char(*p)) {
            if (word && space) return;
            while (p + 1 < end && is_ident_char(p[1])) p++;
            word = 1, space = 0;
        } else {
            space = *p == ' ' || *p == '\t';
            word = space && word;
        }
    }
    lx->floordiv = here(lx);
    lx->floordiv.len = 2;
}

/* A string literal after its opening quote (`import "PATH";`, atomics' sem=/scope=): no escapes, no
 * newline or NUL, closed on the same line. A bad one is reported and still returned. */
static int lex_string(Lexer *lx, TL_STYPE *lval) {
    const char *p = lx->cur, *why = NULL;
    while (p < lx->lim && *p != '"' && *p != '\n' && *p != '\0' && *p != '\\') p++;
    const char *end = p;
    if (p >= lx->lim || *p == '\n') why = "unterminated string literal (a string ends on its line)";
    else if (*p == '\0') why = "a string literal cannot hold a NUL byte";
    else if (*p == '\\') why = "a string literal cannot hold a backslash (there are no escapes)";
    if (why) { /* skip to the closing quote on this line, if any */
        while (p < lx->lim && *p != '"' && *p != '\n') p++;
    }
    lx->cur = p < lx->lim && *p == '"' ? p + 1 : p;
    lval->s = arena_strndup(lx->arena, lx->tok + 1, (size_t)(end - lx->tok - 1));
    if (!lval->s) {
        lx->oom = 1;
        lval->s = "";
    }
    if (why) {
        lx->bad = 1;
        lx->quiet_next = p >= lx->lim || *p == '\n'; /* its missing ';' is no news */
        diag_error(lx->diags, here(lx), "%s", why);
    }
    return STRING;
}

/* Literals are at most INT64_MAX; 2^63 alone gets a hint, since -2^63 is the i64 minimum. */
static int lex_int(Lexer *lx, TL_STYPE *lval, int base) {
    const char *p = lx->tok + (base == 16 ? 2 : 0);
    uint64_t v = 0;
    int over = 0;
    for (; p < lx->cur && !over; p++) {
        int d = *p == '_' ? -1 : *p <= '9' ? *p - '0' : (*p | 0x20) - 'a' + 10;
        if (d < 0) continue;
        over = v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base;
        v = v * (uint64_t)base + (uint64_t)d;
    }
    if (over || v > INT64_MAX) {
        char hint[128] = "";
        if (!over && v == (uint64_t)INT64_MAX + 1)
            snprintf(hint, sizeof hint, "; write the i64 minimum as -9223372036854775807 - 1, "
                     "and 2^63 as a u64 as (-9223372036854775807 - 1) as u64");
        else if (!over) /* a u64 bit pattern: the same bits as a negative i64 */
            snprintf(hint, sizeof hint, "; for these 64 bits as a u64 write (%lld) as u64",
                     (long long)(int64_t)v);
        diag_error(lx->diags, here(lx), "integer literal is too large (the limit is %lld%s)",
                   (long long)INT64_MAX, hint);
        v = 0;
    }
    lval->i = (int64_t)v;
    return INT;
}

static int lex_float(Lexer *lx, TL_STYPE *lval) {
    size_t n = (size_t)(lx->cur - lx->tok), k = 0;
    char *buf = arena_alloc(lx->arena, n + 1);
    if (!buf) {
        lx->oom = 1;
        lval->f = 0;
        return FLOAT;
    }
    for (size_t i = 0; i < n; i++)
        if (lx->tok[i] != '_') buf[k++] = lx->tok[i];
    buf[k] = 0;
    errno = 0;
    lval->f = strtod(buf, NULL);
    if (errno == ERANGE && (lval->f > 1 || lval->f < -1))
        diag_error(lx->diags, here(lx), "float literal is out of range");
    return FLOAT;
}

static int bad_number(Lexer *lx, TL_STYPE *lval, int tok) {
    diag_error(lx->diags, here(lx), "invalid number '%.*s'", (int)(lx->cur - lx->tok), lx->tok);
    if (tok == INT) lval->i = 0;
    else lval->f = 0;
    return tok;
}

static int ident(Lexer *lx, TL_STYPE *lval) {
    lval->s = arena_strndup(lx->arena, lx->tok, (size_t)(lx->cur - lx->tok));
    if (!lval->s) {
        lx->oom = 1;
        lval->s = "";
    }
    return IDENT;
}

/* Keeps the struct's cursor in step with re2c's local one. */
#define SYNC (lx->cur = (const char *)p)
#define TOK(t) do { SYNC; return (t); } while (0)

static int scan(Lexer *lx, TL_STYPE *lval) {
    const unsigned char *p, *mar;
    for (;;) {
        lx->tok = lx->cur;
        p = (const unsigned char *)lx->cur;
        /*!re2c
        re2c:define:YYCTYPE = "unsigned char";
        re2c:define:YYCURSOR = p;
        re2c:define:YYMARKER = mar;
        re2c:yyfill:enable = 0;

        dec = [0-9][0-9_]*;
        hex = "0" [xX] [0-9a-fA-F_]+;
        exp = [eE] [+-]? dec;
        flt = (dec "." dec? | "." dec) exp? | dec exp;
        id = [A-Za-z_][A-Za-z0-9_]*;

        [\x00] {
            SYNC;
            if (lx->tok >= lx->lim) {
                lx->cur = lx->tok;
                return END;
            }
            bad_char(lx);
            continue;
        }
        [ \t\r\f\v]+        { SYNC; continue; }
        "\n"                { SYNC; newline(lx, lx->cur); continue; }
        "//" [^\n\x00]*     { SYNC; note_floor_division(lx); continue; }
        "/*"                { SYNC; if (block_comment(lx)) return END; continue; }

        "kernel"    { TOK(KERNEL); }
        "fn"        { TOK(FN); }
        "const"     { TOK(CONST); }
        "let"       { TOK(LET); }
        "if"        { TOK(IF); }
        "else"      { TOK(ELSE); }
        "for"       { TOK(FOR); }
        "in"        { TOK(IN); }
        "while"     { TOK(WHILE); }
        "return"    { TOK(RETURN); }
        "break"     { TOK(BREAK); }
        "continue"  { TOK(CONTINUE); }
        "true"      { TOK(TRUE); }
        "false"     { TOK(FALSE); }
        "inf"       { TOK(INF); }
        "nan"       { TOK(NAN); }
        "None"      { TOK(NONE); }
        "as"        { TOK(AS); }
        "import"    { TOK(IMPORT); }
        id          { SYNC; return ident(lx, lval); }

        flt         { SYNC; return lex_float(lx, lval); }
        dec         { SYNC; return lex_int(lx, lval, 10); }
        hex         { SYNC; return lex_int(lx, lval, 16); }
        flt id      { SYNC; return bad_number(lx, lval, FLOAT); }
        (dec | hex) id  { SYNC; return bad_number(lx, lval, INT); }

        "+="    { TOK(PLUS_ASSIGN); }
        "-="    { TOK(MINUS_ASSIGN); }
        "*="    { TOK(STAR_ASSIGN); }
        "/="    { TOK(SLASH_ASSIGN); }
        "%="    { TOK(PERCENT_ASSIGN); }
        "&="    { TOK(AMP_ASSIGN); }
        "|="    { TOK(PIPE_ASSIGN); }
        "^="    { TOK(CARET_ASSIGN); }
        "<<="   { TOK(SHL_ASSIGN); }
        ">>="   { TOK(SHR_ASSIGN); }
        "<<"    { TOK(SHL); }
        ">>"    { TOK(SHR); }
        "<="    { TOK(LE); }
        ">="    { TOK(GE); }
        "=="    { TOK(EQ); }
        "!="    { TOK(NE); }
        "&&"    { TOK(ANDAND); }
        "||"    { TOK(OROR); }
        "+"     { TOK(PLUS); }
        "-"     { TOK(MINUS); }
        "*"     { TOK(STAR); }
        "/"     { TOK(SLASH); }
        "%"     { TOK(PERCENT); }
        "&"     { TOK(AMP); }
        "|"     { TOK(PIPE); }
        "^"     { TOK(CARET); }
        "~"     { TOK(TILDE); }
        "!"     { TOK(BANG); }
        "<"     { TOK(LT); }
        ">"     { TOK(GT); }
        "="     { TOK(ASSIGN); }
        "("     { TOK(LPAREN); }
        ")"     { TOK(RPAREN); }
        "["     { TOK(LBRACKET); }
        "]"     { TOK(RBRACKET); }
        "{"     { TOK(LBRACE); }
        "}"     { TOK(RBRACE); }
        ","     { TOK(COMMA); }
        ";"     { TOK(SEMI); }
        ":"     { TOK(COLON); }
        "@"     { TOK(AT); }
        "\""    { SYNC; return lex_string(lx, lval); }
        *       { SYNC; bad_char(lx); continue; }
        */
    }
}

int tl_lex(TL_STYPE *lval, SrcLoc *lloc, Lexer *lx) {
    lx->bad = 0;
    lx->quiet = lx->quiet_next;
    lx->quiet_next = 0;
    const char *before = lx->tok;
    int t = scan(lx, lval);
    lx->last = t;
    lx->prev = lx->loc;
    lx->prev_tok = before;
    if (t == END && lx->prev.file) {
        /* end of file: point just past the last token, where something is missing */
        lx->loc = lx->prev;
        lx->loc.col += lx->loc.len;
        lx->loc.len = 1;
    } else {
        lx->loc = here(lx);
    }
    *lloc = lx->loc;
    return t;
}

const char *lexer_token_kind(int tok) {
    static const struct { int tok; const char *name; } tab[] = {
        {END, "EOF"}, {IDENT, "IDENT"}, {INT, "INT"}, {FLOAT, "FLOAT"},
        {KERNEL, "KERNEL"}, {FN, "FN"}, {CONST, "CONST"}, {LET, "LET"}, {IF, "IF"},
        {ELSE, "ELSE"}, {FOR, "FOR"}, {IN, "IN"}, {WHILE, "WHILE"}, {RETURN, "RETURN"},
        {BREAK, "BREAK"}, {CONTINUE, "CONTINUE"}, {TRUE, "TRUE"}, {FALSE, "FALSE"},
        {INF, "INF"}, {NAN, "NAN"}, {NONE, "NONE"}, {AS, "AS"},
        {IMPORT, "IMPORT"}, {STRING, "STRING"},
        {PLUS, "PLUS"}, {MINUS, "MINUS"}, {STAR, "STAR"}, {SLASH, "SLASH"},
        {PERCENT, "PERCENT"}, {AMP, "AMP"}, {PIPE, "PIPE"}, {CARET, "CARET"},
        {TILDE, "TILDE"}, {BANG, "BANG"}, {LT, "LT"}, {GT, "GT"}, {LE, "LE"}, {GE, "GE"},
        {EQ, "EQ"}, {NE, "NE"}, {ANDAND, "ANDAND"}, {OROR, "OROR"}, {SHL, "SHL"},
        {SHR, "SHR"}, {ASSIGN, "ASSIGN"}, {PLUS_ASSIGN, "PLUS_ASSIGN"},
        {MINUS_ASSIGN, "MINUS_ASSIGN"}, {STAR_ASSIGN, "STAR_ASSIGN"},
        {SLASH_ASSIGN, "SLASH_ASSIGN"}, {PERCENT_ASSIGN, "PERCENT_ASSIGN"},
        {AMP_ASSIGN, "AMP_ASSIGN"}, {PIPE_ASSIGN, "PIPE_ASSIGN"},
        {CARET_ASSIGN, "CARET_ASSIGN"}, {SHL_ASSIGN, "SHL_ASSIGN"},
        {SHR_ASSIGN, "SHR_ASSIGN"}, {LPAREN, "LPAREN"}, {RPAREN, "RPAREN"},
        {LBRACKET, "LBRACKET"}, {RBRACKET, "RBRACKET"}, {LBRACE, "LBRACE"},
        {RBRACE, "RBRACE"}, {COMMA, "COMMA"}, {SEMI, "SEMI"}, {COLON, "COLON"}, {AT, "AT"},
    };
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
        if (tab[i].tok == tok) return tab[i].name;
    return "UNKNOWN";
}

void lex_dump_tokens(const SrcFile *file, FILE *out) {
    Arena *arena = arena_new();
    if (!arena) return;
    Diags diags;
    Lexer lx;
    diags_init(&diags, arena);
    lexer_init(&lx, file, arena, &diags);
    for (;;) {
        TL_STYPE v;
        SrcLoc loc;
        int t = tl_lex(&v, &loc, &lx);
        int n = t == END ? 0 : (int)(lx.cur - lx.tok);
        fprintf(out, "%d:%d %s '%.*s'\n", loc.line, loc.col, lexer_token_kind(t), n, lx.tok);
        if (t == END || lx.oom) break;
    }
    arena_free(arena);
}
