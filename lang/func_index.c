/* func_index.c: a module's functions by name (see func_index.h): linear probing over a table
 * at most half full, keyed by an FNV-1a hash of the name. */
#include <stdint.h>
#include <string.h>
#include "ast.h"
#include "func_index.h"

struct FuncIndex {
    size_t mask;
    int *slots; /* position in funcs + 1; 0: empty */
};

static size_t name_hash(const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return (size_t)h;
}

FuncIndex *func_index_build(Arena *a, Func *const *funcs, int n) {
    FuncIndex *ix = arena_alloc(a, sizeof *ix);
    size_t cap = 16;
    while (cap < 2 * (size_t)n) cap *= 2;
    if (!ix || !(ix->slots = arena_alloc(a, cap * sizeof *ix->slots))) return NULL;
    ix->mask = cap - 1;
    for (int i = 0; i < n; i++) {
        size_t h = name_hash(funcs[i]->name) & ix->mask;
        while (ix->slots[h] && strcmp(funcs[ix->slots[h] - 1]->name, funcs[i]->name) != 0)
            h = (h + 1) & ix->mask;
        if (!ix->slots[h]) ix->slots[h] = i + 1; /* a redefinition keeps the first */
    }
    return ix;
}

int func_index_find(const FuncIndex *ix, Func *const *funcs, const char *name) {
    for (size_t h = name_hash(name) & ix->mask; ix->slots[h]; h = (h + 1) & ix->mask)
        if (strcmp(funcs[ix->slots[h] - 1]->name, name) == 0) return ix->slots[h] - 1;
    return -1;
}
