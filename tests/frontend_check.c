/* frontend_check.c: runs the front end (lexer, parser, sema) on one file and prints the
 * diagnostics exactly as diag_render does, or the token/AST dump. Used by the golden tests
 * (tests/run_golden.sh) until tilec takes over. Exit: 0 clean, 1 errors, 2 usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ast.h"

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    for (size_t k; buf && (k = fread(buf + n, 1, cap - n - 1, f)) > 0;) {
        n += k;
        if (cap - n - 1 == 0) {
            char *b = realloc(buf, cap *= 2);
            if (!b) free(buf);
            buf = b;
        }
    }
    fclose(f);
    if (buf) buf[n] = 0;
    *len = n;
    return buf;
}

int main(int argc, char **argv) {
    const char *mode = "", *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--tokens") || !strcmp(argv[i], "--ast")) mode = argv[i];
        else if (argv[i][0] == '-' || path) path = NULL, i = argc;
        else path = argv[i];
    }
    if (!path) {
        fprintf(stderr, "usage: frontend_check [--tokens|--ast] FILE\n");
        return 2;
    }
    size_t len;
    char *text = read_file(path, &len);
    if (!text) {
        fprintf(stderr, "frontend_check: cannot read %s\n", path);
        return 2;
    }
    SrcFile file = {path, text, len};
    if (!strcmp(mode, "--tokens")) {
        lex_dump_tokens(&file, stdout);
        free(text);
        return 0;
    }
    Arena *arena = arena_new();
    Diags diags;
    diags_init(&diags, arena);
    Module *m = parse_module(arena, &file, &diags);
    if (m && !diags.errors && !expand_type_variants(m, arena, &diags)) sema_check(m, &diags);
    if (!strcmp(mode, "--ast") && m) ast_dump(m, stdout);
    diags_print(&diags, stdout);
    int rc = diags.errors || !m ? 1 : 0;
    arena_free(arena);
    free(text);
    return rc;
}
