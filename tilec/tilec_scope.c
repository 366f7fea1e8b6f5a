/* tilec_scope.c: `--kernel=NAME` reports that kernel's diagnostics, not its neighbours'. The
 * front end checks a whole file before any kernel is chosen; an error in the body (or the
 * annotations) of another kernel of the file says nothing about the chosen one. Errors in
 * helpers, in imported files and outside every function stay: a kernel may use them. */
#include <string.h>
#include "tilec.h"

static int before(SrcLoc a, SrcLoc b)
{
    return a.line < b.line || (a.line == b.line && a.col < b.col);
}

/* Where f's text starts: its first annotation, or its own name. */
static SrcLoc func_start(const Func *f)
{
    SrcLoc s = f->loc;
    for (int i = 0; i < f->nanns; i++)
        if (f->anns[i].loc.file == s.file && before(f->anns[i].loc, s))
            s = f->anns[i].loc;
    return s;
}

/* The function of the main file whose text holds loc: the last one to start at or before it
 * (functions do not nest). NULL: before every function, or in another file. */
static const Func *holder(const Module *m, SrcLoc loc)
{
    const Func *best = NULL;
    SrcLoc best_start = {0};
    for (int i = 0; i < m->nfuncs; i++) {
        const Func *f = m->funcs[i];
        SrcLoc s = func_start(f);
        if (s.file != loc.file || s.file != m->file || before(loc, s))
            continue;
        if (!best || before(best_start, s))
            best = f, best_start = s;
    }
    return best;
}

static int out_of_scope(const Module *m, const Diag *g, const char *kernel)
{
    const Func *f = holder(m, g->loc);
    return f && f->is_kernel && strcmp(f->name, kernel) != 0;
}

void tilec_scope_diags(Diags *d, const Module *m, const char *kernel)
{
    if (!kernel || !m)
        return;
    Diag **link = &d->first;
    int dropping = 0;
    d->last = NULL;
    while (*link) {
        Diag *g = *link;
        /* a note goes with the diagnostic before it */
        if (g->level != DIAG_NOTE)
            dropping = out_of_scope(m, g, kernel);
        if (dropping) {
            d->errors -= g->level == DIAG_ERROR;
            d->warnings -= g->level == DIAG_WARNING;
            *link = g->next;
        } else {
            d->last = g;
            link = &g->next;
        }
    }
}
