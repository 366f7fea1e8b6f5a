/* test_debug.c: the debug group of the execution tests (tests/exec/debug.tile): print writes
 * each element once, sorted by program, run and element, in every value type; a failed
 * device_assert stops the launch with TILE_ERROR_ASSERT naming its file:line:col, program and
 * element, and the context stays usable; an assertion that holds changes nothing. */
#include <stdio.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "test_exec.h"

#define DBG "tests/exec/debug.tile"

/* Appends printf output to a growing string. */
typedef struct Text {
    char *s;
    size_t len, cap;
} Text;

__attribute__((format(printf, 2, 3))) static void add(Text *t, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int n = vsnprintf(t->s ? t->s + t->len : NULL, t->s ? t->cap - t->len : 0, fmt, ap);
        va_end(ap);
        if (t->s && t->len + (size_t)n < t->cap) {
            t->len += (size_t)n;
            return;
        }
        t->cap = (t->cap + (size_t)n + 1) * 2;
        if (!(t->s = realloc(t->s, t->cap)))
            exit(1);
    }
}

static void print_tile(int rows, int warps)
{
    enum { ROWS = 4, COLS = 8, PROGRAMS = 6 };
    begin("print tile [%d, %d] rows=%d warps=%d in a 2x3 grid", ROWS, COLS, rows, warps);
    Buf *x = input("x", T_F32, PROGRAMS * ROWS * COLS, -10, 10);
    Text want = {0};
    for (size_t i = 0; i < x->n; i++)
        x->v[i] = (double)rnd_int(-40, 40) / 4; /* short decimals: 2.25, -7 */
    for (int py = 0; py < 3; py++)
        for (int px = 0; px < 2; px++)
            for (int r = 0; r < ROWS; r++)
                for (int c = 0; c < COLS; c++) {
                    int pid = px + 2 * py;
                    double v = r < rows ? x->v[(pid * ROWS + r) * COLS + c] : -1;
                    add(&want, "pid (%d, %d, 0) idx (%d, %d) v: %g, %d, %s\n", px, py, r, c, v,
                        r * COLS + c, v > 0 ? "true" : "false");
                }
    Launch l = {"print_tile", ARGS(P(x), I(rows)), CONSTS({"num_warps", warps})};
    run_expect(DBG, &l, TILE_OK, NULL, want.s);
    free(want.s);
}

static void print_scalars(int n)
{
    begin("print scalars, a loop of %d, i64 f16 f64 u32", n);
    int64_t big = (int64_t)1 << 40;
    Text want = {0};
    add(&want, "%s", "");
    for (int p = 0; p < 2; p++) {
        for (int i = 0; i < n; i++)
            add(&want, "pid (%d, 0, 0) i: %d, %lld\n", p, i, (long long)(big + i));
        add(&want, "pid (%d, 0, 0) pid: %d, 1.5, 0.1, 4294967295\n", p, p);
        add(&want, "pid (%d, 0, 0) done\n", p);
    }
    Launch l = {"print_scalars", ARGS(I(n), I(big), F(1.5), F(0.1)), NO_CONSTS};
    run_expect(DBG, &l, TILE_OK, NULL, want.s);
    free(want.s);
}

static void assert_ok(int n)
{
    begin("device_assert holds n=%d", n);
    Buf *x = input("x", T_F32, n, 0, 1), *y = output("y", T_F32, n, TOL_F32);
    for (int i = 0; i < n; i++)
        y->v[i] = 2 * x->v[i];
    Launch l = {"assert_ok", ARGS(P(x), P(y), I(n)), NO_CONSTS};
    run_expect(DBG, &l, TILE_OK, NULL, "");
}

static void assert_one(int n, int bad, int warps)
{
    begin("device_assert fails at element %d of %d, warps=%d", bad, n, warps);
    Buf *y = scratch("y", T_I32, n);
    char msg[256];
    snprintf(msg, sizeof msg, "debug.tile:39:5: device assertion failed in program (%d, 0, 0) at "
             "element [%d]: `offs != bad`: hit the bad index", bad / 32, bad % 32);
    (void)y;
    Launch l = {"assert_one", ARGS(P(y), I(n), I(bad)), CONSTS({"num_warps", warps})};
    run_expect(DBG, &l, TILE_ERROR_ASSERT, msg, "");
}

static void assert_scalar(int n)
{
    begin("device_assert of a scalar, n=%d", n);
    Buf *y = n > 0 ? output("y", T_I32, 1, EXACT) : scratch("y", T_I32, 1);
    y->v[0] = n;
    Launch l = {"assert_scalar", ARGS(P(y), I(n)), NO_CONSTS};
    run_expect(DBG, &l, n > 0 ? TILE_OK : TILE_ERROR_ASSERT,
               n > 0 ? NULL : "debug.tile:45:5: device assertion failed in program (0, 0, 0): `n > 0`",
               "");
}

static void assert_loop(int n, int limit)
{
    int fails = n > limit;
    begin("device_assert in a helper in a loop, n=%d limit=%d", n, limit);
    Buf *y = fails ? inout("y", T_I32, n, EXACT) : output("y", T_I32, n, EXACT);
    for (int i = 0; i < n; i++)
        y->v[i] = i < limit ? i : 0; /* a failure stops the program before its store */
    Launch l = {"assert_loop", ARGS(P(y), I(n), I(limit)), NO_CONSTS};
    run_expect(DBG, &l, fails ? TILE_ERROR_ASSERT : TILE_OK,
               fails ? "debug.tile:51:5: device assertion failed in program (0, 0, 0): `i < limit`: "
                       "loop index past the limit" : NULL, "");
}

void t_debug(void)
{
    print_tile(3, 1);
    print_tile(4, 4);
    print_scalars(3);
    print_scalars(0);
    assert_one(100, 70, 1);
    assert_ok(1000);
    assert_one(64, 5, 4);
    assert_scalar(0);
    assert_scalar(5);
    assert_loop(10, 4);
    assert_loop(3, 4);
}
