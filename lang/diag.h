/* diag.h: diagnostics for every stage. Messages read `file:line:col: error: what`, followed by
 * the source line and a caret under the span. Errors accumulate (the stage goes on where it
 * can); the library never prints or exits on its own: callers render the list where they like. */
#ifndef TILE_DIAG_H
#define TILE_DIAG_H
#include <stdio.h>
#include "arena.h"

typedef struct SrcFile {
    const char *name; /* as given by the user, e.g. "examples/add.tile" */
    const char *text; /* whole source, NUL-terminated */
    size_t len;
} SrcFile;

typedef struct SrcLoc {
    const SrcFile *file; /* NULL: no location (e.g. a command-line error) */
    int line, col;       /* 1-based; col counts bytes */
    int len;             /* length of the span to underline, >= 1 */
} SrcLoc;

typedef enum { DIAG_ERROR, DIAG_WARNING, DIAG_NOTE } DiagLevel;

typedef struct Diag {
    DiagLevel level;
    SrcLoc loc;
    char *msg;
    struct Diag *next;
} Diag;

typedef struct Diags {
    Arena *arena;
    Diag *first, *last;
    int errors, warnings;
    int max_errors; /* stop recording after this many errors (0: 100) */
    Diag lost;      /* recorded in place of diagnostics the arena had no memory for */
} Diags;

void diags_init(Diags *d, Arena *arena);
void diag_error(Diags *d, SrcLoc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void diag_warning(Diags *d, SrcLoc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void diag_note(Diags *d, SrcLoc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Renders one diagnostic with its source line and caret (no colour). */
void diag_render(const Diag *d, FILE *out);
/* Renders all diagnostics into one arena string ("" when none; NULL out of memory, never a
 * jump to the arena's failure handler). */
char *diags_render_all(const Diags *d, Arena *arena);
void diags_print(const Diags *d, FILE *out);

/* Locations spanning from a to b (inclusive). */
SrcLoc srcloc_span(SrcLoc a, SrcLoc b);

#endif
