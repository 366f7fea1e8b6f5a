/* fuzz_frontend.c: libFuzzer target for the front end. Runs lexer, parser, sema and the
 * dumps on arbitrary bytes; nothing may crash, hang or leak. Build with clang
 * -fsanitize=fuzzer,address,undefined -Ilang -I<generated dir>, link the lang .c files and the
 * generated parser.c/lexer.c; seeds are in tests/fuzz_corpus. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ast.h"
#include "imports.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = 0;
    SrcFile file = {"fuzz.tile", text, size};
    Arena *arena = arena_new();
    if (!arena) {
        free(text);
        return 0;
    }
    Diags diags;
    diags_init(&diags, arena);
    diags.max_errors = 20;
    FILE *null = fopen("/dev/null", "w");
    Module *m = parse_module(arena, &file, &diags);
    ImportOptions no_imports = {.disabled = 1}; /* a fuzzer must not read arbitrary files */
    if (m && !imports_resolve(m, arena, &no_imports, &diags) &&
        !expand_type_variants(m, arena, &diags)) {
        sema_check(m, &diags);
        if (null) ast_dump(m, null);
    }
    if (null) {
        lex_dump_tokens(&file, null);
        diags_print(&diags, null);
        fclose(null);
    }
    diags_render_all(&diags, arena);
    arena_free(arena);
    free(text);
    return 0;
}
