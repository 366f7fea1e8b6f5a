/* sim_fiber.h: the SIMT emulator's coroutines (runtime/sim.c runs one per simulated thread).
 * A fiber is a stack (mmap'ed, with a guard page below it) and a saved context; switching
 * is a hand-written register swap on x86-64 (ucontext elsewhere). Under AddressSanitizer
 * every switch is announced to it, so it follows the stacks. Prefix sim_fiber_. */
#ifndef TILE_SIM_FIBER_H
#define TILE_SIM_FIBER_H
#include <stddef.h>

typedef struct Fiber {
    void *ctx;         /* saved context: a stack pointer, or a ucontext_t */
    void *map;         /* the mapping (guard page + stack); NULL: the thread's own stack */
    size_t map_bytes;
    const void *lo;    /* the usable stack, for AddressSanitizer */
    size_t size;
    void (*fn)(void *);
    void *arg;
} Fiber;

/* Maps a stack of `bytes` (plus a guard page) for f. 0, or -1 when out of memory. */
int sim_fiber_stack_new(Fiber *f, size_t bytes);
void sim_fiber_stack_free(Fiber *f);
/* Makes the next switch to f start fn(arg) on f's stack; fn must never return (it ends
 * with sim_fiber_exit). */
int sim_fiber_prepare(Fiber *f, void (*fn)(void *), void *arg);
/* f was abandoned and will never resume: its stack is reset for a later sim_fiber_prepare. */
void sim_fiber_forget(Fiber *f);
/* Saves the running context into `from` and resumes `to`. */
void sim_fiber_switch(Fiber *from, Fiber *to);
/* First call of a fiber's fn: records the stack it was started from (`from`). */
void sim_fiber_started(Fiber *from);
/* Last switch out of a finished fiber. */
void sim_fiber_exit(Fiber *self, Fiber *to);

#endif
