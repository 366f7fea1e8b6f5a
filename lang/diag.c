/* diag.c: the diagnostics list of diag.h and its clang-like rendering:
 * `file:line:col: error: message`, the source line, and a caret line (`^~~~`) under the span.
 * Past max_errors, errors are counted but no longer recorded (one note says so). */
#if !defined(_GNU_SOURCE) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#endif
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "diag.h"

void diags_init(Diags *d, Arena *arena) {
    memset(d, 0, sizeof *d);
    d->arena = arena;
}

static void link_diag(Diags *d, Diag *g) {
    if (d->last) d->last->next = g;
    else d->first = g;
    d->last = g;
}

/* Out of memory for a diagnostic: say so once, from memory that needs no allocation. */
static void note_lost(Diags *d) {
    if (d->lost.msg) return;
    d->lost.level = DIAG_ERROR;
    d->lost.msg = (char *)"out of memory (some diagnostics could not be recorded)";
    link_diag(d, &d->lost);
}

/* Whether the list holds this diagnostic already (the same error found again, e.g. in a body
 * that @types specializes once per element type): it is said once. */
static int already_said(const Diags *d, const Diag *g) {
    for (const Diag *h = d->first; h; h = h->next)
        if (h->level == g->level && h->loc.file == g->loc.file && h->loc.line == g->loc.line &&
            h->loc.col == g->loc.col && h->msg && !strcmp(h->msg, g->msg))
            return 1;
    return 0;
}

static void diag_add(Diags *d, DiagLevel level, SrcLoc loc, const char *fmt, va_list ap) {
    jmp_buf *jump = arena_set_failure_jump(d->arena, NULL); /* a diagnostic may not jump */
    Diag *g = arena_alloc(d->arena, sizeof(Diag));
    va_list aq;
    va_copy(aq, ap);
    int n = vsnprintf(NULL, 0, fmt, aq);
    va_end(aq);
    if (g) g->msg = n < 0 ? NULL : arena_alloc(d->arena, (size_t)n + 1);
    arena_set_failure_jump(d->arena, jump);
    if (!g || !g->msg) {
        note_lost(d);
        return;
    }
    vsnprintf(g->msg, (size_t)n + 1, fmt, ap);
    g->level = level;
    g->loc = loc;
    if (!already_said(d, g)) link_diag(d, g);
}

static int error_limit(const Diags *d) { return d->max_errors > 0 ? d->max_errors : 100; }

/* Counts an error; returns 1 when it should still be recorded. */
static int error_counted(Diags *d) {
    d->errors++;
    if (d->errors <= error_limit(d)) return 1;
    if (d->errors == error_limit(d) + 1) {
        jmp_buf *jump = arena_set_failure_jump(d->arena, NULL);
        Diag *g = arena_alloc(d->arena, sizeof(Diag));
        if (g) g->msg = arena_printf(d->arena, "too many errors, stopping after %d", error_limit(d));
        arena_set_failure_jump(d->arena, jump);
        if (!g || !g->msg) return 0;
        g->level = DIAG_NOTE;
        link_diag(d, g);
    }
    return 0;
}

void diag_error(Diags *d, SrcLoc loc, const char *fmt, ...) {
    if (!error_counted(d)) return;
    va_list ap;
    va_start(ap, fmt);
    diag_add(d, DIAG_ERROR, loc, fmt, ap);
    va_end(ap);
}

void diag_warning(Diags *d, SrcLoc loc, const char *fmt, ...) {
    d->warnings++;
    va_list ap;
    va_start(ap, fmt);
    diag_add(d, DIAG_WARNING, loc, fmt, ap);
    va_end(ap);
}

void diag_note(Diags *d, SrcLoc loc, const char *fmt, ...) {
    if (d->errors > error_limit(d)) return;
    va_list ap;
    va_start(ap, fmt);
    diag_add(d, DIAG_NOTE, loc, fmt, ap);
    va_end(ap);
}

static const char *level_name(DiagLevel l) {
    return l == DIAG_ERROR ? "error" : l == DIAG_WARNING ? "warning" : "note";
}

/* Finds line `line` (1-based) of the file; sets *len to its length without the newline. */
static const char *find_line(const SrcFile *f, int line, size_t *len) {
    const char *p = f->text, *end = f->text + f->len;
    for (int l = 1; l < line && p < end; p++)
        if (*p == '\n') l++;
    const char *q = p;
    while (q < end && *q != '\n') q++;
    if (q > p && q[-1] == '\r') q--;
    *len = (size_t)(q - p);
    return p;
}

/* The source line, then spaces (tabs kept, to line up) and `^~~~` under the span. */
static void render_caret(const SrcLoc *loc, FILE *out) {
    size_t len;
    const char *s = find_line(loc->file, loc->line, &len);
    size_t col = loc->col > 0 ? (size_t)loc->col - 1 : 0;
    fprintf(out, "%.*s\n", (int)len, s);
    for (size_t i = 0; i < col; i++) fputc(i < len && s[i] == '\t' ? '\t' : ' ', out);
    fputc('^', out);
    for (size_t i = col + 1; i < col + (size_t)(loc->len > 0 ? loc->len : 1) && i < len; i++)
        fputc('~', out);
    fputc('\n', out);
}

void diag_render(const Diag *d, FILE *out) {
    const SrcLoc *l = &d->loc;
    if (!l->file) {
        fprintf(out, "%s: %s\n", level_name(d->level), d->msg);
        return;
    }
    fprintf(out, "%s:%d:%d: %s: %s\n", l->file->name, l->line, l->col, level_name(d->level),
            d->msg);
    render_caret(l, out);
}

void diags_print(const Diags *d, FILE *out) {
    for (const Diag *g = d->first; g; g = g->next) diag_render(g, out);
}

char *diags_render_all(const Diags *d, Arena *arena) {
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    if (!f) return NULL;
    diags_print(d, f);
    fclose(f);
    jmp_buf *jump = arena_set_failure_jump(arena, NULL); /* buf must be freed: no jump */
    char *s = buf ? arena_strndup(arena, buf, size) : arena_strdup(arena, "");
    arena_set_failure_jump(arena, jump);
    free(buf);
    return s;
}

SrcLoc srcloc_span(SrcLoc a, SrcLoc b) {
    if (!a.file) return b;
    if (b.file && b.line == a.line && b.col + b.len > a.col) a.len = b.col + b.len - a.col;
    return a;
}
