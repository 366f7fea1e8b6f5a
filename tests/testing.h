/* testing.h: what the C test programs share. CHECK / EXPECT / OK report file:line and make
 * the test function return 1; CHECKF adds a printf-style message and returns -1 (the
 * lowering tests count those). run_named_tests runs a table of named tests: `prog NAME`
 * runs one; a test returning 77 is skipped; exit 0, 1 on a failure, 2 for an unknown name,
 * 77 when every test that ran was skipped (CTest's skip code). */
#ifndef TILE_TESTING_H
#define TILE_TESTING_H
#include <stdio.h>
#include <string.h>

enum { TEST_SKIP = 77 };

#define CHECK(cond) \
    do { \
        if (!(cond)) { \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            return 1; \
        } \
    } while (0)

/* A call that must return `want`; prints the context's message when it does not. */
#define EXPECT(ctx, want, call) \
    do { \
        tile_Status st_ = (call); \
        if (st_ != (want)) { \
            fprintf(stderr, "%s:%d: %s returned %d, expected %d: %s\n", __FILE__, __LINE__, \
                    #call, (int)st_, (int)(want), tile_error(ctx)); \
            return 1; \
        } \
    } while (0)
#define OK(ctx, call) EXPECT(ctx, TILE_OK, call)

#define CHECKF(cond, ...) \
    do { \
        if (!(cond)) { \
            printf("FAIL %s:%d: ", __FILE__, __LINE__); \
            printf(__VA_ARGS__); \
            printf("\n"); \
            return -1; \
        } \
    } while (0)

typedef struct NamedTest {
    const char *name;
    int (*fn)(void);
} NamedTest;

static inline int run_named_tests(const char *prog, const NamedTest *t, int n, int argc,
                                  char **argv)
{
    int ran = 0, failed = 0, skipped = 0;
    for (int i = 0; i < n; i++) {
        if (argc > 1 && strcmp(argv[1], t[i].name))
            continue;
        int rc = t[i].fn();
        printf("%s: %s\n", t[i].name, rc == 0 ? "ok" : rc == TEST_SKIP ? "skipped" : "FAILED");
        ran++;
        failed += rc != 0 && rc != TEST_SKIP;
        skipped += rc == TEST_SKIP;
    }
    if (!ran) {
        fprintf(stderr, "%s: no test named '%s'\n", prog, argc > 1 ? argv[1] : "");
        return 2;
    }
    printf("%d passed, %d failed, %d skipped\n", ran - failed - skipped, failed, skipped);
    return failed ? 1 : skipped == ran ? TEST_SKIP : 0;
}

#endif
