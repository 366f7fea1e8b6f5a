/* bigstack.c: parsing and compiling on a stack of known size. The front end and the compiler
 * recurse over a kernel's expressions (up to the language's 1000 levels of nesting) and LLVM
 * over big kernels, while the caller's thread may have a small stack (256 KiB is common in
 * thread pools), where a deep but valid source would overflow it and kill the process. So
 * they run on a thread of their own with RT_STACK_BYTES of stack while the caller waits,
 * unless the caller's stack is that large already; when no thread can be started, on the
 * caller's stack. */
#include <pthread.h>
#include "runtime_internal.h"

typedef struct BigCall {
    void (*fn)(void *);
    void *arg;
} BigCall;

static void *trampoline(void *p)
{
    BigCall *c = p;
    c->fn(c->arg);
    return NULL;
}

/* The calling thread's stack size in bytes (0 when unknown). */
static size_t own_stack_bytes(void)
{
    pthread_attr_t attr;
    size_t bytes = 0;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        if (pthread_attr_getstacksize(&attr, &bytes) != 0)
            bytes = 0;
        pthread_attr_destroy(&attr);
    }
    return bytes;
}

void rt_call_on_big_stack(void (*fn)(void *), void *arg)
{
    BigCall c = { fn, arg };
    pthread_attr_t attr;
    pthread_t t;
    int started = 0;
    if (own_stack_bytes() >= RT_STACK_BYTES) {
        fn(arg);
        return;
    }
    if (pthread_attr_init(&attr) == 0) {
        started = pthread_attr_setstacksize(&attr, RT_STACK_BYTES) == 0 &&
                  pthread_create(&t, &attr, trampoline, &c) == 0;
        pthread_attr_destroy(&attr);
    }
    if (started)
        pthread_join(t, NULL);
    else
        fn(arg);
}
