/* arena.h: bump allocator. One arena per compilation: tokens, AST, tile IR and strings
 * are freed together when the arena is destroyed, so nothing leaks inside long-lived
 * programs that JIT through tile_launch. Allocation failure returns NULL (never aborts). */
#ifndef TILE_ARENA_H
#define TILE_ARENA_H
#include <setjmp.h>
#include <stddef.h>

typedef struct Arena Arena;

Arena *arena_new(void);
void arena_free(Arena *a);
/* Zeroed memory, 16-byte aligned; NULL when out of memory, or, while a failure jump is set, a
 * longjmp there (so a stage that allocates in hundreds of places, such as specialization,
 * needs no NULL check at each: its entry point reports "out of memory" once). */
void *arena_alloc(Arena *a, size_t size);
/* Sets where a failed allocation of `a` jumps (NULL: return NULL); returns the previous one,
 * for the caller to restore. Only plain C frames may lie between the two (no LLVM calls). */
jmp_buf *arena_set_failure_jump(Arena *a, jmp_buf *to);
/* Tests: every arena allocation after the next n fails (process-wide; n < 0: never). */
void arena_fail_after(long n);
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
