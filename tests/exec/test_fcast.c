/* test_fcast.c: the "fcast" group of the execution tests: float to integer casts at their
 * edges (tests/exec/fcast.tile), from f16, bf16, f32 and f64 to every integer width and
 * signedness, against the rule docs/language.md states: truncate toward zero, saturate to the
 * integer type's range, NaN -> 0. Plain LLVM fptosi/fptoui would give poison on these. */
#include <math.h>
#include <stdio.h>
#include "test_exec.h"

#define FCAST "tests/exec/fcast.tile"

static const Ty INT_TYS[] = {T_I8, T_I16, T_I32, T_I64, T_U8, T_U16, T_U32, T_U64};
enum { NINT = sizeof INT_TYS / sizeof INT_TYS[0] };

/* The cast's result as a double (INT64_MAX and UINT64_MAX round up to 2^63, 2^64, which is
 * also what the comparison reads back from them). */
static double saturate(Ty t, double v)
{
    int bits = TY[t].size * 8;
    double lo = TY[t].is_signed ? -ldexp(1.0, bits - 1) : 0;
    double hi = ldexp(1.0, bits - TY[t].is_signed) - 1;
    if (isnan(v))
        return 0;
    return v <= lo ? lo : v >= hi + 1 ? hi : trunc(v);
}

/* NaN, infinities, small values, and each power of two that bounds an integer range with
 * neighbours on both sides (some round to the bound itself in the narrower float types). */
static int edge_values(double *out)
{
    static const double small[] = {0, -0.0, 0.5, -0.5, 0.99, -0.99, 1.5, -1.5, 1e30, -1e30, 1e300, -1e300};
    static const double near[] = {1, 1 - 0x1p-9, 1 + 0x1p-7, 1 - 0x1p-12, 1 - 0x1p-24, 1 + 0x1p-23,
                                   1 - 0x1p-53, 1 + 0x1p-52};
    int n = 0;
    out[n++] = NAN, out[n++] = INFINITY, out[n++] = -INFINITY;
    for (size_t i = 0; i < sizeof small / sizeof small[0]; i++)
        out[n++] = small[i];
    for (int e = 7; e <= 64; e = e == 8 ? 15 : e == 16 ? 31 : e == 32 ? 63 : e + 1)
        for (int sign = -1; sign <= 1; sign += 2) {
            double b = sign * ldexp(1.0, e);
            for (size_t i = 0; i < sizeof near / sizeof near[0]; i++)
                out[n++] = b * near[i];
            out[n++] = b - 1, out[n++] = b + 1, out[n++] = b - sign * 0.5;
        }
    return n;
}

static void from_float(Ty ft)
{
    double vals[256];
    int n = edge_values(vals);
    begin("fcast_%s n=%d", TY[ft].name, n);
    Buf *x = input("x", ft, (size_t)n, 0, 1);
    Buf *o[NINT];
    for (int i = 0; i < n; i++)
        x->v[i] = ty_round(ft, vals[i]);
    for (int k = 0; k < NINT; k++) {
        o[k] = output(TY[INT_TYS[k]].name, INT_TYS[k], (size_t)n, EXACT);
        for (int i = 0; i < n; i++)
            o[k]->v[i] = saturate(INT_TYS[k], x->v[i]);
    }
    char kernel[32];
    snprintf(kernel, sizeof kernel, "fcast_%s", TY[ft].name);
    run(FCAST, kernel, ARGS(P(x), P(o[0]), P(o[1]), P(o[2]), P(o[3]), P(o[4]), P(o[5]), P(o[6]),
                            P(o[7]), I(n)), NO_CONSTS);
}

/* Constant casts, folded by the compiler, give what run-time casts give. */
static void consts(void)
{
    begin("fcast_consts");
    Buf *o8 = output("o8", T_I8, 3, EXACT), *ou8 = output("ou8", T_U8, 2, EXACT);
    Buf *o16 = output("o16", T_I16, 1, EXACT), *o32 = output("o32", T_I32, 3, EXACT);
    Buf *ou32 = output("ou32", T_U32, 1, EXACT), *o64 = output("o64", T_I64, 2, EXACT);
    Buf *ou64 = output("ou64", T_U64, 2, EXACT);
    o8->v[0] = 127, o8->v[1] = -128, o8->v[2] = 127;
    ou8->v[0] = 0, ou8->v[1] = 255;
    o16->v[0] = -32768;
    o32->v[0] = 2147483647, o32->v[1] = o32->v[2] = -2147483648.0;
    ou32->v[0] = 4294967295.0;
    o64->v[0] = 0x1p63, o64->v[1] = -0x1p63;
    ou64->v[0] = trunc(9.2233720368547e18), ou64->v[1] = 0;
    run(FCAST, "fcast_consts", ARGS(P(o8), P(ou8), P(o16), P(o32), P(ou32), P(o64), P(ou64)), NO_CONSTS);
}

/* Constant narrowing float casts and arithmetic on them, folded by the compiler, round to
 * their type as at run time (a bf16 quotient is an f32, as in Triton). */
static void const_floats(void)
{
    begin("fcast_const_floats");
    Buf *o = output("o", T_F32, 8, EXACT);
    double h1 = ty_round(T_F16, 0.1), h2 = ty_round(T_F16, 0.2);
    o->v[0] = h1, o->v[1] = ty_round(T_F16, 300.7), o->v[2] = INFINITY;
    o->v[3] = 1.0f / 3.0f, o->v[4] = (float)0.1, o->v[5] = ty_round(T_BF16, 0.1);
    o->v[6] = ty_round(T_F16, h1 + h2);
    o->v[7] = ty_round(T_BF16, ty_round(T_BF16, 0.3) * ty_round(T_BF16, 0.3));
    run(FCAST, "fcast_const_floats", ARGS(P(o)), NO_CONSTS);
}

/* A 16-bit float of every kind: zeros, subnormals, normals of every exponent, the largest
 * finite values, infinities and NaN, either sign. */
static double half_value(Ty t)
{
    int r = (int)rnd_int(0, 99), emin = t == T_F16 ? -24 : -133, emax = t == T_F16 ? 15 : 127;
    double sign = rnd_int(0, 1) ? -1 : 1;
    if (r < 3)
        return r == 0 ? sign * 0.0 : r == 1 ? sign * INFINITY : NAN;
    if (r < 8)
        return sign * ty_round(t, t == T_F16 ? 65504 : 3.3895313892515355e38);
    return sign * ty_round(t, ldexp(1 + rnd_unit(), (int)rnd_int(emin, emax)));
}

/* half_arith: the sums, differences and products of two such values in f64 (exact for
 * 16-bit operands), rounded once to the type. */
static void half_arith(Ty t, int n)
{
    begin("half_arith %s n=%d: +, -, * rounded once (subnormals, overflow, inf, NaN)", TY[t].name, n);
    Buf *a = input("a", t, (size_t)n, 0, 1), *b = input("b", t, (size_t)n, 0, 1);
    for (int i = 0; i < n; i++) {
        a->v[i] = half_value(t);
        b->v[i] = i % 7 ? half_value(t) : ty_round(t, a->v[i] * (i % 2 ? -1 : 0.5));
    }
    Buf *add = output("o_add", t, (size_t)n, EXACT), *sub = output("o_sub", t, (size_t)n, EXACT);
    Buf *mul = output("o_mul", t, (size_t)n, EXACT);
    for (int i = 0; i < n; i++) {
        add->v[i] = ty_round(t, a->v[i] + b->v[i]);
        sub->v[i] = ty_round(t, a->v[i] - b->v[i]);
        mul->v[i] = ty_round(t, a->v[i] * b->v[i]);
    }
    run(FCAST, t == T_F16 ? "half_arith" : "half_arith_bf16",
        ARGS(P(a), P(b), P(add), P(sub), P(mul), I(n)), NO_CONSTS);
}

void t_fcast(void)
{
    half_arith(T_F16, 4099);
    half_arith(T_BF16, 1000);
    static const Ty floats[] = {T_F16, T_BF16, T_F32, T_F64};
    for (size_t i = 0; i < sizeof floats / sizeof floats[0]; i++)
        from_float(floats[i]);
    consts();
    const_floats();
}
