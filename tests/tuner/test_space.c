/* test_space.c: unit tests of tuning spaces: enumeration order, constraints that see
 * launch values, bucketing, keys, and diagnostics for bad annotations. */
#include <stdio.h>
#include <string.h>
#include "driver.h"
#include "space.h"

static int passed, failed;

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (cond) passed++;                                                    \
        else {                                                                 \
            failed++;                                                          \
            printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);             \
        }                                                                      \
    } while (0)

static const Func *parse(Arena *a, Diags *d, const char *src) {
    SrcFile *f = arena_alloc(a, sizeof *f);
    *f = (SrcFile){"test.tile", arena_strdup(a, src), strlen(src)};
    Module *m = tc_parse(a, f, d);
    return m ? m->funcs[0] : NULL;
}

static void test_product_and_constraint(void) {
    Arena *a = arena_new();
    Diags d;
    diags_init(&d, a);
    const Func *f = parse(a, &d,
        "@tune(BM = [16, 32, 64], BN = [32, 64], num_warps = [4, 8])\n"
        "@constraint(BM * BN <= 2048)\n"
        "kernel k(x: *f32, n: i32, const BM: i32, const BN: i32) { }\n");
    CHECK(f != NULL);
    TuneSpace s;
    CHECK(f && space_build(f, a, &d, &s) == 0);
    CHECK(space_size(&s) == 12);
    TuneConfig *cfg;
    int pruned = -1;
    int n = space_enumerate(&s, NULL, 0, a, &d, &cfg, &pruned);
    /* BM*BN <= 2048: (16,32) (16,64) (32,32) (32,64) (64,32) -> 5 x 2 warps */
    CHECK(n == 10);
    CHECK(pruned == 2);
    CHECK(n > 0 && cfg[0].values[0].value == 16 && cfg[0].values[1].value == 32 && cfg[0].values[2].value == 4);
    CHECK(n > 1 && cfg[1].values[2].value == 8); /* last parameter varies fastest */
    arena_free(a);
}

static void test_constraint_sees_given_consts(void) {
    Arena *a = arena_new();
    Diags d;
    diags_init(&d, a);
    const Func *f = parse(a, &d,
        "@tune(B = [64, 128, 256])\n@constraint(B <= 2 * D)\n"
        "kernel k(x: *f32, n: i32, const B: i32, const D: i32) { }\n");
    TuneSpace s;
    CHECK(f && space_build(f, a, &d, &s) == 0);
    ConstBinding fixed[] = {{"D", 64}};
    TuneConfig *cfg;
    CHECK(space_enumerate(&s, fixed, 1, a, &d, &cfg, NULL) == 2);
    arena_free(a);
}

static void test_bucket_and_key(void) {
    CHECK(space_bucket("pow2", 1000) == 1024);
    CHECK(space_bucket("pow2", 1024) == 1024);
    CHECK(space_bucket("pow2", 1) == 1);
    CHECK(space_bucket("pow2", 0) == 0);
    CHECK(space_bucket(NULL, 1000) == 1000);
    Arena *a = arena_new();
    Diags d;
    diags_init(&d, a);
    const Func *f = parse(a, &d,
        "@key(n: pow2, D)\nkernel k(x: *f32, n: i32, const D: i32 = 64) { }\n");
    ConstBinding vals[] = {{"n", 3000}, {"D", 128}};
    char *key = f ? space_key(f, vals, 2, a, &d) : NULL;
    CHECK(key && strcmp(key, "n=4096;D=128;") == 0);
    arena_free(a);
}

static void test_bad_annotations(void) {
    Arena *a = arena_new();
    Diags d;
    diags_init(&d, a);
    const Func *f = parse(a, &d, "@tune(B = [64, 64])\nkernel k(x: *f32, const B: i32) { }\n");
    TuneSpace s;
    CHECK((!f || space_build(f, a, &d, &s) == -1) && d.errors == 1); /* tc_parse rejects it */
    diags_init(&d, a);
    f = parse(a, &d, "@tune(B = [64, n])\nkernel k(x: *f32, n: i32, const B: i32) { }\n");
    CHECK((!f || space_build(f, a, &d, &s) == -1) && d.errors >= 1); /* sema or the space rejects it */
    arena_free(a);
}

/* A @tune list of 1..n. */
static const char *candidates(Arena *a, int n) {
    char *s = arena_strdup(a, "[1");
    for (int i = 2; i <= n; i++) s = arena_printf(a, "%s, %d", s, i);
    return arena_printf(a, "%s]", s);
}

/* Spaces past the limits are refused with a diagnostic naming their size; a constraint
 * that brings a large product under SPACE_MAX_CONFIGS is fine. */
static void test_size_limits(void) {
    Arena *a = arena_new();
    Diags d;
    diags_init(&d, a);
    const char *l16 = candidates(a, 16), *l17 = candidates(a, 17);
    const char *kernel = "kernel k(x: *f32, const A: i32, const B: i32, const C: i32, const D: i32) { }\n";
    struct { const char *tune, *cons; int want; const char *msg; } cases[] = {
        {arena_printf(a, "@tune(A = %s, B = %s, C = %s, D = [1, 2])\n", l16, l16, l16), "",
         -1, "has 8192 configurations after its constraints (at most 4096"},
        {arena_printf(a, "@tune(A = %s, B = %s, C = %s, D = [1, 2])\n", l16, l16, l16),
         "@constraint(D == 1)\n", 4096, NULL},
        {arena_printf(a, "@tune(A = %s, B = %s, C = %s, D = %s)\n", l17, l17, l17, l17), "",
         -1, "has 83521 combinations of candidates (at most 65536)"},
    };
    for (int c = 0; c < 3; c++) {
        diags_init(&d, a);
        const Func *f = parse(a, &d, arena_printf(a, "%s%s%s", cases[c].tune, cases[c].cons, kernel));
        TuneSpace s;
        TuneConfig *cfg;
        CHECK(f && space_build(f, a, &d, &s) == 0);
        int n = f ? space_enumerate(&s, NULL, 0, a, &d, &cfg, NULL) : -2;
        CHECK(n == cases[c].want);
        CHECK(!cases[c].msg || (d.first && strstr(d.first->msg, cases[c].msg)));
        CHECK(!cases[c].msg || (d.first && d.first->loc.line == 1));
    }
    arena_free(a);
}

int main(void) {
    test_product_and_constraint();
    test_constraint_sees_given_consts();
    test_bucket_and_key();
    test_size_limits();
    test_bad_annotations();
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
