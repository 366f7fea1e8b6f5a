/* test_imports.c: the imports group of the execution tests: tests/exec/imports.tile calls
 * helpers imported from its own directory (helpers.tile) and from a subdirectory
 * (imports/online.tile: an online-softmax step), checked against float64 references. */
#include <math.h>
#include "test_exec.h"

#define IMPORTS "tests/exec/imports.tile"

void t_imports(void)
{
    static const int sizes[] = {1, 37, 1000, 4097};
    for (int c = 0; c < 4; c++) {
        int n = sizes[c];
        begin("logsumexp n=%d", n);
        Buf *x = input("x", T_F32, (size_t)n, -4, 4);
        Buf *o = output("o", T_F32, 1, TOL_F32), *os = output("o_scaled", T_F32, (size_t)n, TOL_F32);
        double m = -INFINITY, l = 0;
        for (int i = 0; i < n; i++)
            m = fmax(m, x->v[i]), os->v[i] = 3 * x->v[i] - 1;
        for (int i = 0; i < n; i++)
            l += exp(x->v[i] - m);
        o->v[0] = m + log(l);
        /* a sum of n exponentials (each within 1), then its log: within n + 4 roundings */
        sum_bound(o, 0, 1 + fabs(o->v[0]), (size_t)n + 4);
        run(IMPORTS, "logsumexp", ARGS(P(x), P(o), P(os), I(n)), NO_CONSTS);
    }
}
