/* arena.h: bump allocator. One arena per compilation: tokens, AST, tile IR and strings
 * are freed together when the arena is destroyed, so nothing leaks inside long-lived
 * programs that JIT through tile_launch. Allocation failure returns NULL (never aborts). */
#ifndef TILE_ARENA_H
#define TILE_ARENA_H
#include <stddef.h>

typedef struct Arena Arena;

Arena *arena_new(void);
void arena_free(Arena *a);
/* Zeroed memory, 16-byte aligned; NULL when out of memory. */
void *arena_alloc(Arena *a, size_t size);
char *arena_strdup(Arena *a, const char *s);
char *arena_strndup(Arena *a, const char *s, size_t n);
char *arena_printf(Arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A growable array of pointers living in an arena (old storage is simply abandoned). */
typedef struct {
    void **items;
    int len, cap;
} PtrVec;
int ptrvec_push(Arena *a, PtrVec *v, void *item); /* 0 ok, -1 out of memory */

#endif
