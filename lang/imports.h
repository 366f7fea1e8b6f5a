/* imports.h: resolving `import "PATH";` declarations (docs/language.md, "Imports"). The
 * helpers of every imported file, and of the files those import, join the module; kernels of
 * imported files do not. Files are found relative to the importing file, then along a search
 * path (the caller's directories, $TILE_PATH, the standard library); each is read once. */
#ifndef TILE_IMPORTS_H
#define TILE_IMPORTS_H
#include "ast.h"

enum {
    IMPORT_MAX_DEPTH = 32,  /* levels of nested imports */
    IMPORT_MAX_FILES = 256, /* files in one module, its own included */
};

typedef struct ImportOptions {
    int disabled;            /* every import is an error and no file is read (fuzzing) */
    const char *const *dirs; /* searched in order before $TILE_PATH (tilec -I); may be NULL */
    int ndirs;
    const char *dir_list;    /* colon-separated directories searched after dirs (the runtime's
                                tile_set_import_path); may be NULL */
    int main_from_string;    /* the main file's text did not come from its name: its directory
                                is searched only when the name has one (tile_module_load_string) */
} ImportOptions;

/* Resolves m's imports: reads and parses the imported files into `arena`, appends their
 * helpers to m->funcs (rebuilding m->by_name) and the files to m->files. opt may be NULL
 * (defaults). Errors go to diags at the import's location; returns 0, or -1 after errors. */
int imports_resolve(Module *m, Arena *arena, const ImportOptions *opt, Diags *diags);

/* The file a module's own path names: `path` when a file of that name exists, or it is
 * absolute or starts with "./" or "../"; else the first file of that name along the search path
 * (opt's directories, $TILE_PATH, the standard library), so "attention/flash_fwd.tile" finds
 * the standard library's from any directory; else `path` (reading it reports it missing). The
 * name returned lives in `arena` (or is `path`); NULL only when out of memory. */
const char *imports_locate(Arena *arena, const char *path, const ImportOptions *opt);

#endif
