/* sim_fiber.c: coroutines for the SIMT emulator (sim_fiber.h). On x86-64 a switch saves the
 * callee-saved registers and the FP control words on the old stack and pops them from the new
 * one (no system call, unlike swapcontext); other systems use ucontext. AddressSanitizer is
 * told about every switch (__sanitizer_start/finish_switch_fiber) and the stack of a fiber
 * abandoned mid-run is unpoisoned, so its frames cannot raise false reports later. */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "sim_fiber.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FIBER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(FIBER_ASAN)
#define FIBER_ASAN 1
#endif
#ifdef FIBER_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

#if defined(__x86_64__) && !defined(TILE_SIM_UCONTEXT)
/* tile_fiber_swap(save, load): pushes rbp rbx r12-r15 and MXCSR/x87 control words, stores
 * rsp in *save, switches to `load` and pops the same from there. tile_fiber_boot is where a
 * fresh stack "returns" to: it calls r13(r12). */
__asm__(".text\n"
        ".globl tile_fiber_swap\n.hidden tile_fiber_swap\n.type tile_fiber_swap,@function\n"
        "tile_fiber_swap:\n"
        "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
        "  subq $8, %rsp\n  stmxcsr (%rsp)\n  fnstcw 4(%rsp)\n"
        "  movq %rsp, (%rdi)\n  movq %rsi, %rsp\n"
        "  ldmxcsr (%rsp)\n  fldcw 4(%rsp)\n  addq $8, %rsp\n"
        "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbx\n  popq %rbp\n"
        "  ret\n"
        ".size tile_fiber_swap, .-tile_fiber_swap\n"
        ".globl tile_fiber_boot\n.hidden tile_fiber_boot\n.type tile_fiber_boot,@function\n"
        "tile_fiber_boot:\n"
        "  movq %r12, %rdi\n  callq *%r13\n  ud2\n"
        ".size tile_fiber_boot, .-tile_fiber_boot\n");
void tile_fiber_swap(void **save, void *load);
void tile_fiber_boot(void);

static void swap(Fiber *from, Fiber *to) { tile_fiber_swap(&from->ctx, to->ctx); }

/* The frame tile_fiber_swap pops: control words, r15, r14, r13 = fn, r12 = arg, rbx, rbp,
 * return address = tile_fiber_boot. The stack is 16-byte aligned at boot's call. */
static int boot_frame(Fiber *f)
{
    uintptr_t top = ((uintptr_t)f->lo + f->size) & ~(uintptr_t)15;
    uint64_t *sp = (uint64_t *)(top - 128);
    memset(sp, 0, 128);
    sp[0] = 0x1f80u | (uint64_t)0x037f << 32; /* MXCSR, then the x87 control word */
    sp[3] = (uint64_t)(uintptr_t)f->fn;
    sp[4] = (uint64_t)(uintptr_t)f->arg;
    sp[7] = (uint64_t)(uintptr_t)tile_fiber_boot;
    f->ctx = sp;
    return 0;
}
#else
#include <stdlib.h>
#include <ucontext.h>

static _Thread_local Fiber *starting;

static void uc_boot(void) { starting->fn(starting->arg); }

static ucontext_t *uc_of(Fiber *f)
{
    if (!f->ctx)
        f->ctx = calloc(1, sizeof(ucontext_t));
    return f->ctx;
}

static void swap(Fiber *from, Fiber *to)
{
    starting = to;
    swapcontext(uc_of(from), to->ctx);
}

static int boot_frame(Fiber *f)
{
    if (!uc_of(f) || getcontext(f->ctx) != 0)
        return -1;
    ucontext_t *uc = f->ctx;
    uc->uc_stack.ss_sp = (void *)f->lo;
    uc->uc_stack.ss_size = f->size;
    uc->uc_link = NULL;
    makecontext(uc, uc_boot, 0);
    return 0;
}
#endif

int sim_fiber_stack_new(Fiber *f, size_t bytes)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t n = (bytes + page - 1) / page * page + page;
    void *m = mmap(NULL, n, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (m == MAP_FAILED)
        return -1;
    if (mprotect(m, page, PROT_NONE) != 0) { /* the guard page: overflows fault */
        munmap(m, n);
        return -1;
    }
    f->map = m;
    f->map_bytes = n;
    f->lo = (char *)m + page;
    f->size = n - page;
    return 0;
}

void sim_fiber_stack_free(Fiber *f)
{
    if (f->map)
        munmap(f->map, f->map_bytes);
#if !(defined(__x86_64__) && !defined(TILE_SIM_UCONTEXT))
    free(f->ctx);
#endif
    memset(f, 0, sizeof *f);
}

int sim_fiber_prepare(Fiber *f, void (*fn)(void *), void *arg)
{
    f->fn = fn;
    f->arg = arg;
    return boot_frame(f);
}

/* A fiber that returns leaves only its first frames' state, which the next one on the stack
 * (same frames) overwrites; one abandoned mid-call leaves deeper frames' redzones. */
void sim_fiber_forget(Fiber *f)
{
#ifdef FIBER_ASAN
    __asan_unpoison_memory_region(f->lo, f->size);
#else
    (void)f;
#endif
}

void sim_fiber_switch(Fiber *from, Fiber *to)
{
#ifdef FIBER_ASAN
    void *fake = NULL;
    __sanitizer_start_switch_fiber(&fake, to->lo, to->size);
    swap(from, to);
    __sanitizer_finish_switch_fiber(fake, NULL, NULL);
#else
    swap(from, to);
#endif
}

void sim_fiber_started(Fiber *from)
{
#ifdef FIBER_ASAN
    __sanitizer_finish_switch_fiber(NULL, &from->lo, &from->size);
#else
    (void)from;
#endif
}

void sim_fiber_exit(Fiber *self, Fiber *to)
{
#ifdef FIBER_ASAN
    __sanitizer_start_switch_fiber(NULL, to->lo, to->size);
#endif
    swap(self, to);
}
