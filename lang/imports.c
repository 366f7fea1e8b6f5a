/* imports.c: resolves a module's `import "PATH";` declarations (imports.h). A depth-first
 * walk over the imported files: each is found along the search path, read once (files are
 * compared by device and inode), parsed into the module's arena, and its helpers appended to
 * the module. Cycles, duplicate helper names and the limits are errors at the import. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "func_index.h"
#include "imports.h"
#include "source_read.h"

#ifndef TILE_STDLIB_DIR
#define TILE_STDLIB_DIR NULL
#endif

typedef struct Walk {
    Arena *arena;
    Diags *diags;
    const ImportOptions *opt;
    PtrVec dirs;  /* the search path after the importing file's directory */
    PtrVec funcs; /* the module's functions, then the imported helpers */
    PtrVec files; /* SrcFile *, the main file first */
    SrcFileId ids[IMPORT_MAX_FILES + 1]; /* of files[i]; dev 0 and ino 0: none known */
    int stack[IMPORT_MAX_DEPTH + 1];      /* indexes into files of the files being walked */
    int depth;
    int oom;
} Walk;

static int push(Walk *w, PtrVec *v, void *item) {
    if (ptrvec_push(w->arena, v, item)) w->oom = 1;
    return w->oom ? -1 : 0;
}

/* Each non-empty entry of a colon-separated list. */
static void add_path_list(Walk *w, const char *list) {
    for (const char *p = list; p && *p;) {
        const char *end = strchr(p, ':');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        char *dir = n ? arena_strndup(w->arena, p, n) : NULL;
        if (n && (!dir || push(w, &w->dirs, dir))) w->oom = 1;
        p += n + (end != NULL);
    }
}

/* The standard library: share/tile/stdlib beside the installed file this code was loaded
 * from (libtile.so in PREFIX/lib, or a program in PREFIX/bin that links it statically), else
 * the source tree's (TILE_STDLIB_DIR, for a build that is not installed). */
static const char *stdlib_dir(Arena *a) {
    Dl_info info;
    struct stat sb;
    if (dladdr((void *)stdlib_dir, &info) && info.dli_fname && strchr(info.dli_fname, '/')) {
        const char *slash = strrchr(info.dli_fname, '/');
        for (int up = 1; up <= 2; up++) { /* PREFIX/lib or PREFIX/lib/<multiarch> */
            char *dir = arena_printf(a, "%.*s/%s../share/tile/stdlib",
                                     (int)(slash - info.dli_fname), info.dli_fname,
                                     up == 2 ? "../" : "");
            if (dir && stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode)) return dir;
        }
    }
    return TILE_STDLIB_DIR;
}

static void search_path_init(Walk *w) {
    for (int i = 0; w->opt && i < w->opt->ndirs; i++) push(w, &w->dirs, (void *)w->opt->dirs[i]);
    add_path_list(w, w->opt ? w->opt->dir_list : NULL);
    add_path_list(w, getenv("TILE_PATH"));
    const char *std = stdlib_dir(w->arena);
    if (std) push(w, &w->dirs, (void *)std);
}

/* The directory part of a file name ("" when it has none: the current directory). */
static char *dir_of(Arena *a, const char *name) {
    const char *slash = strrchr(name, '/');
    return arena_strndup(a, name, slash ? (size_t)(slash - name) + 1 : 0);
}

static char *join(Arena *a, const char *dir, const char *path) {
    size_t n = strlen(dir);
    if (!n) return arena_strdup(a, path);
    return arena_printf(a, "%s%s%s", dir, dir[n - 1] == '/' ? "" : "/", path);
}

/* Whether the importing file's own directory is searched (a string module's bare name has
 * none). */
static int own_dir_searched(const Walk *w, const SrcFile *from) {
    return !(w->opt && w->opt->main_from_string && from == w->files.items[0] &&
             !strchr(from->name, '/'));
}

/* The candidate file names of `path` imported from `from`, in search order. */
static int candidates(Walk *w, const SrcFile *from, const char *path, PtrVec *out) {
    if (path[0] == '/') return push(w, out, (void *)path);
    if (own_dir_searched(w, from)) {
        char *dir = dir_of(w->arena, from->name);
        char *c = dir ? join(w->arena, dir, path) : NULL;
        if (!c || push(w, out, c)) w->oom = 1;
    }
    for (int i = 0; i < w->dirs.len && !w->oom; i++) {
        char *c = join(w->arena, w->dirs.items[i], path);
        if (!c || push(w, out, c)) w->oom = 1;
    }
    return w->oom ? -1 : 0;
}

const char *imports_locate(Arena *arena, const char *path, const ImportOptions *opt) {
    struct stat sb;
    if (!path[0] || path[0] == '/' || strncmp(path, "./", 2) == 0 || strncmp(path, "../", 3) == 0 ||
        stat(path, &sb) == 0)
        return path;
    Walk w = {.arena = arena, .opt = opt};
    search_path_init(&w);
    for (int i = 0; i < w.dirs.len && !w.oom; i++) {
        char *c = join(arena, w.dirs.items[i], path);
        if (!c) return NULL;
        if (stat(c, &sb) == 0) return c;
    }
    return w.oom ? NULL : path;
}

/* "a/b.tile, c/b.tile": where a file was looked for, for the not-found message. */
static char *looked_in(Walk *w, const PtrVec *c) {
    char *s = arena_strdup(w->arena, "");
    for (int i = 0; s && i < c->len; i++)
        s = arena_printf(w->arena, "%s%s%s", s, i ? ", " : "", (const char *)c->items[i]);
    return s;
}

/* Finds the file an import names: its name (in the arena) and id, or NULL after an error. */
static const char *find_file(Walk *w, const SrcFile *from, const Import *im, SrcFileId *id) {
    PtrVec c = {0};
    if (!im->path[0]) {
        diag_error(w->diags, im->loc, "an import needs a file name");
        return NULL;
    }
    if (candidates(w, from, im->path, &c)) return NULL;
    for (int i = 0; i < c.len; i++) {
        struct stat sb;
        if (stat(c.items[i], &sb) == 0) {
            *id = (SrcFileId){sb.st_dev, sb.st_ino};
            return c.items[i];
        }
    }
    char *where = looked_in(w, &c);
    if (!where) w->oom = 1;
    else if (im->path[0] == '/') diag_error(w->diags, im->loc, "cannot find '%s'", im->path);
    else diag_error(w->diags, im->loc, "cannot find '%s' (looked for %s)", im->path, where);
    return NULL;
}

static int same_id(SrcFileId a, SrcFileId b) {
    return (a.dev || a.ino) && a.dev == b.dev && a.ino == b.ino;
}

/* The index in files of the file with this id, or -1. */
static int file_index(const Walk *w, SrcFileId id) {
    for (int i = 0; i < w->files.len; i++)
        if (same_id(w->ids[i], id)) return i;
    return -1;
}

/* Which position on the walk's stack holds files[idx], or -1 (not being walked). */
static int stack_pos(const Walk *w, int idx) {
    for (int i = 0; i <= w->depth; i++)
        if (w->stack[i] == idx) return i;
    return -1;
}

static const char *file_name(const Walk *w, int idx) {
    return ((const SrcFile *)w->files.items[idx])->name;
}

/* "import cycle: a.tile imports b.tile, which imports a.tile". */
static void report_cycle(Walk *w, const Import *im, int from_pos) {
    char *s = arena_printf(w->arena, "%s imports", file_name(w, w->stack[from_pos]));
    for (int i = from_pos + 1; s && i <= w->depth; i++)
        s = arena_printf(w->arena, "%s %s, which imports", s, file_name(w, w->stack[i]));
    if (!s) {
        w->oom = 1;
        return;
    }
    diag_error(w->diags, im->loc, "import cycle: %s %s", s, file_name(w, w->stack[from_pos]));
}

/* Reads and parses a newly found file into the arena; its module, or NULL after an error. */
static Module *load_file(Walk *w, const Import *im, const char *name) {
    char err[1200], *text;
    size_t len;
    if (src_read_file(name, &text, &len, NULL, err, sizeof err)) {
        diag_error(w->diags, im->loc, "%s", err);
        return NULL;
    }
    SrcFile *f = arena_alloc(w->arena, sizeof *f);
    char *copy = f ? arena_strndup(w->arena, text, len) : NULL;
    free(text);
    if (!copy) {
        w->oom = 1;
        return NULL;
    }
    *f = (SrcFile){name, copy, len};
    Module *m = parse_module(w->arena, f, w->diags);
    if (!m) w->oom = 1;
    return m;
}

/* Appends the helpers of an imported module; a name some other file defines already is an
 * error at this definition, with a note at the first (duplicates within one file are left to
 * sema, which reports them as it does without imports). */
static void add_helpers(Walk *w, const Module *m) {
    FuncIndex *ix = func_index_build(w->arena, (Func *const *)w->funcs.items, w->funcs.len);
    int known = w->funcs.len;
    for (int i = 0; i < m->nfuncs && !w->oom; i++) {
        const Func *f = m->funcs[i];
        if (f->is_kernel) continue;
        int at = ix ? func_index_find(ix, (Func *const *)w->funcs.items, f->name) : -1;
        const Func *first = at >= 0 && at < known ? w->funcs.items[at] : NULL;
        if (!ix) w->oom = 1;
        else if (first && first->loc.file != f->loc.file) {
            diag_error(w->diags, f->loc, "'%s' is defined in two files: %s and %s", f->name,
                       first->loc.file->name, f->loc.file->name);
            diag_note(w->diags, first->loc, "'%s' is first defined here", f->name);
        } else {
            push(w, &w->funcs, (void *)f);
        }
    }
}

static int walk(Walk *w, const Module *m);

/* One import of the file on top of the stack. */
static void import_one(Walk *w, const SrcFile *from, const Import *im) {
    SrcFileId id;
    const char *name = find_file(w, from, im, &id);
    if (!name) return;
    int idx = file_index(w, id);
    if (idx >= 0) { /* read already: a cycle when still being walked, else nothing to do */
        int pos = stack_pos(w, idx);
        if (pos >= 0) report_cycle(w, im, pos);
        return;
    }
    if (w->depth + 1 > IMPORT_MAX_DEPTH) {
        diag_error(w->diags, im->loc, "imports are nested more than %d levels deep", IMPORT_MAX_DEPTH);
        return;
    }
    if (w->files.len >= IMPORT_MAX_FILES) {
        diag_error(w->diags, im->loc, "a module may be built from at most %d files", IMPORT_MAX_FILES);
        return;
    }
    Module *sub = load_file(w, im, name);
    if (!sub || push(w, &w->files, (void *)sub->file)) return;
    w->ids[w->files.len - 1] = id;
    add_helpers(w, sub);
    w->stack[++w->depth] = w->files.len - 1;
    walk(w, sub);
    w->depth--;
}

static int walk(Walk *w, const Module *m) {
    for (int i = 0; i < m->nimports && !w->oom; i++) import_one(w, m->file, &m->imports[i]);
    return w->oom ? -1 : 0;
}

/* The main file's id, when its name is a file on disk (so that importing it back is a cycle). */
static SrcFileId main_id(const SrcFile *f) {
    struct stat sb;
    if (stat(f->name, &sb) == 0 && S_ISREG(sb.st_mode)) return (SrcFileId){sb.st_dev, sb.st_ino};
    return (SrcFileId){0, 0};
}

static int report_disabled(const Module *m, Diags *diags) {
    for (int i = 0; i < m->nimports; i++) diag_error(diags, m->imports[i].loc, "imports are not available here");
    return -1;
}

int imports_resolve(Module *m, Arena *arena, const ImportOptions *opt, Diags *diags) {
    if (!m->nimports) return 0;
    if (opt && opt->disabled) return report_disabled(m, diags);
    Walk w = {.arena = arena, .diags = diags, .opt = opt};
    int errors = diags->errors;
    search_path_init(&w);
    for (int i = 0; i < m->nfuncs && !w.oom; i++) push(&w, &w.funcs, m->funcs[i]);
    if (!w.oom && !push(&w, &w.files, (void *)m->file)) w.ids[0] = main_id(m->file);
    if (!w.oom) walk(&w, m);
    if (w.oom) {
        diag_error(diags, (SrcLoc){m->file, 0, 0, 0}, "out of memory reading the imports of %s", m->file->name);
        return -1;
    }
    m->funcs = (Func **)w.funcs.items;
    m->nfuncs = w.funcs.len;
    m->by_name = func_index_build(arena, m->funcs, m->nfuncs);
    m->files = (const SrcFile **)w.files.items;
    m->nfiles = w.files.len;
    return diags->errors > errors ? -1 : 0;
}
