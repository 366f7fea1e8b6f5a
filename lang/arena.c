/* arena.c: bump allocator in chunks (see arena.h), with the failure jump of a stage and the
 * allocation-failure injection the out-of-memory test drives. */
#include "arena.h"
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

typedef struct Chunk {
    struct Chunk *next;
    size_t used, size;
    _Alignas(16) unsigned char data[];
} Chunk;

struct Arena {
    Chunk *head;
    jmp_buf *on_failure;
};

static _Atomic long fail_countdown = -1; /* arena_fail_after; -1: off */

enum { CHUNK_MIN = 64 * 1024 };

Arena *arena_new(void) { return calloc(1, sizeof(Arena)); }

void arena_free(Arena *a) {
    if (!a) return;
    for (Chunk *c = a->head, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    free(a);
}

static Chunk *chunk_new(size_t size) {
    Chunk *c = malloc(sizeof(Chunk) + size);
    if (!c) return NULL;
    c->next = NULL;
    c->used = 0;
    c->size = size;
    return c;
}

void arena_fail_after(long n) { atomic_store(&fail_countdown, n); }

jmp_buf *arena_set_failure_jump(Arena *a, jmp_buf *to) {
    if (!a) return NULL;
    jmp_buf *prev = a->on_failure;
    a->on_failure = to;
    return prev;
}

/* Whether the injected failure is due (once due, every later allocation fails too). */
static int injected_failure(void) {
    long n = atomic_load(&fail_countdown);
    while (n > 0 && !atomic_compare_exchange_weak(&fail_countdown, &n, n - 1)) {}
    return n == 0;
}

static void *failed(Arena *a) {
    if (a->on_failure) longjmp(*a->on_failure, 1);
    return NULL;
}

void *arena_alloc(Arena *a, size_t size) {
    if (size > SIZE_MAX - 15 || injected_failure()) return failed(a);
    size = (size + 15) & ~(size_t)15;
    if (!a->head || a->head->size - a->head->used < size) {
        Chunk *c = size > SIZE_MAX - sizeof(Chunk) ? NULL : chunk_new(size > CHUNK_MIN ? size : CHUNK_MIN);
        if (!c) return failed(a);
        c->next = a->head;
        a->head = c;
    }
    void *p = a->head->data + a->head->used;
    a->head->used += size;
    memset(p, 0, size);
    return p;
}

char *arena_strndup(Arena *a, const char *s, size_t n) {
    char *p = arena_alloc(a, n + 1);
    if (p) memcpy(p, s, n);
    return p;
}

char *arena_strdup(Arena *a, const char *s) { return arena_strndup(a, s, strlen(s)); }

char *arena_printf(Arena *a, const char *fmt, ...) {
    va_list ap, aq;
    va_start(ap, fmt);
    va_copy(aq, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *p = n < 0 ? NULL : arena_alloc(a, (size_t)n + 1);
    if (p) vsnprintf(p, (size_t)n + 1, fmt, aq);
    va_end(aq);
    return p;
}

int ptrvec_push(Arena *a, PtrVec *v, void *item) {
    if (v->len == v->cap) {
        int cap = v->cap ? v->cap * 2 : 8;
        void **items = arena_alloc(a, sizeof(void *) * (size_t)cap);
        if (!items) return -1;
        if (v->len) memcpy(items, v->items, sizeof(void *) * (size_t)v->len);
        v->items = items;
        v->cap = cap;
    }
    v->items[v->len++] = item;
    return 0;
}
