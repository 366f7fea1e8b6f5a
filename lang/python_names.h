/* python_names.h: tile's spelling of Python and Triton names, for diagnostics' hints. */
#ifndef TILE_PYTHON_NAMES_H
#define TILE_PYTHON_NAMES_H

#include <stddef.h>

/* The tile type for a Triton dtype name (`float16` -> "f16", `int1` -> "bool"), or NULL. */
const char *python_type_spelling(const char *name, size_t len);
/* tile's spelling of a Python name (`True` -> "true", `keepdims` -> "keep_dims"), or NULL. */
const char *python_word_spelling(const char *name, size_t len);
/* The error for a Python keyword tile spells otherwise (and, or, not, elif, def), or NULL. */
const char *python_keyword_error(const char *name, size_t len);

#endif
