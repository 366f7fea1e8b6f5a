/* python_names.c: tile's spelling of Python and Triton names, for diagnostics' hints. */
#include "python_names.h"

#include <string.h>

typedef struct {
    const char *python, *tile;
} Spelling;

static const char *find(const Spelling *t, size_t n, const char *name, size_t len) {
    for (size_t i = 0; i < n; i++)
        if (strlen(t[i].python) == len && !strncmp(t[i].python, name, len)) return t[i].tile;
    return NULL;
}

static const Spelling types[] = {
    {"float16", "f16"}, {"bfloat16", "bf16"}, {"float32", "f32"}, {"float64", "f64"},
    {"int1", "bool"}, {"int8", "i8"}, {"int16", "i16"}, {"int32", "i32"}, {"int64", "i64"},
    {"uint8", "u8"}, {"uint16", "u16"}, {"uint32", "u32"}, {"uint64", "u64"},
    {"float8e4nv", "f8e4m3"}, {"float8_e4m3fn", "f8e4m3"}, {"float8e5", "f8e5m2"},
    {"float8_e5m2", "f8e5m2"}, {"half", "f16"}, {"float", "f32"}, {"double", "f64"},
    {"int", "i32"}, {"long", "i64"},
};

static const Spelling words[] = {
    {"True", "true"}, {"False", "false"}, {"keepdims", "keep_dims"},
};

/* Python's keywords that tile spells otherwise: the whole message. */
static const Spelling keywords[] = {
    {"and", "tile has no 'and' operator: write '&&' (or '&' on bool tiles)"},
    {"or", "tile has no 'or' operator: write '||' (or '|' on bool tiles)"},
    {"not", "tile has no 'not' operator: write '!x'"},
    {"elif", "tile has no 'elif': write 'else if'"},
    {"def", "tile has no 'def': write 'fn' for a helper, 'kernel' for an entry point"},
};

const char *python_type_spelling(const char *name, size_t len) {
    return find(types, sizeof types / sizeof types[0], name, len);
}

const char *python_word_spelling(const char *name, size_t len) {
    return find(words, sizeof words / sizeof words[0], name, len);
}

const char *python_keyword_error(const char *name, size_t len) {
    return find(keywords, sizeof keywords / sizeof keywords[0], name, len);
}
