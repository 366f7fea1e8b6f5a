/* tilec_scope.c: `--kernel=NAME` shows that kernel's diagnostics, not its neighbours'. The
 * front end checks a whole file before any kernel is chosen; an error in the body (or the
 * annotations) of another kernel of the file says nothing about the chosen one, though the
 * file still does not load until it is fixed (the caller says so in one line and keeps the
 * error counts). Errors in helpers, in imported files and outside every function stay: a
 * kernel may use them. */
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

/* Where the text that holds loc starts: that of the last function of the main file to start
 * at or before it (functions do not nest). 0: before every function, or in another file. */
static int holder_start(const Module *m, SrcLoc loc, SrcLoc *start)
{
    int found = 0;
    for (int i = 0; i < m->nfuncs; i++) {
        SrcLoc s = func_start(m->funcs[i]);
        if (s.file != loc.file || s.file != m->file || before(loc, s))
            continue;
        if (!found || before(*start, s))
            *start = s, found = 1;
    }
    return found;
}

/* Whether loc lies in the text of kernels other than `kernel` only (the instances of one
 * @types kernel share their text: an error there is each one's). */
static int out_of_scope(const Module *m, SrcLoc loc, const char *kernel)
{
    SrcLoc start;
    if (!holder_start(m, loc, &start))
        return 0;
    for (int i = 0; i < m->nfuncs; i++) {
        const Func *f = m->funcs[i];
        SrcLoc s = func_start(f);
        if (s.file == start.file && s.line == start.line && s.col == start.col &&
            (!f->is_kernel || strcmp(f->name, kernel) == 0))
            return 0;
    }
    return 1;
}

int tilec_scope_diags(Diags *d, const Module *m, const char *kernel)
{
    if (!kernel || !m)
        return 0;
    Diag **link = &d->first;
    int dropping = 0, dropped = 0;
    d->last = NULL;
    while (*link) {
        Diag *g = *link;
        if (g->level != DIAG_NOTE) /* a note goes with the diagnostic before it */
            dropping = out_of_scope(m, g->loc, kernel);
        if (dropping) {
            dropped += g->level == DIAG_ERROR;
            *link = g->next;
            continue;
        }
        d->last = g;
        link = &g->next;
    }
    return dropped;
}
