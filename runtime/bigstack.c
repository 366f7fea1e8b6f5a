/* bigstack.c: parsing and compiling on a stack of known size. The front end and the compiler
 * recurse over a kernel's expressions (up to the language's 1000 levels of nesting) and LLVM
 * over big kernels, while the caller's thread may have a small stack (256 KiB is common in
 * thread pools), where a deep but valid source would overflow it and kill the process. So
 * they run on a thread of their own with RT_STACK_BYTES of stack while the caller waits;
 * when no thread can be started, on the caller's stack. */
#include <pthread.h>
#include "runtime_internal.h"

enum { RT_STACK_BYTES = 32 << 20 }; /* as the tuner's compile threads */

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

void rt_call_on_big_stack(void (*fn)(void *), void *arg)
{
    BigCall c = { fn, arg };
    pthread_attr_t attr;
    pthread_t t;
    int started = 0;
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
