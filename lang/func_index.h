/* func_index.h: a module's functions by name (an open-addressing hash table built once, in the
 * module's arena), so that resolving a call costs O(1) rather than a scan of every function:
 * a source of 100,000 helpers is checked in linear time. */
#ifndef TILE_FUNC_INDEX_H
#define TILE_FUNC_INDEX_H
#include "arena.h"

struct Func;
typedef struct FuncIndex FuncIndex;

/* NULL when out of memory (lookups then fall back to a scan). The first of several functions
 * of one name is the one found. */
FuncIndex *func_index_build(Arena *a, struct Func *const *funcs, int n);
/* The position in funcs of the function named `name`, or -1. */
int func_index_find(const FuncIndex *ix, struct Func *const *funcs, const char *name);

#endif
