/* test_intdiv.c: the "intdiv" group of the execution tests: integer division, remainder and
 * shifts at their edges (tests/exec/intdiv.tile) for every width and signedness, against the
 * rule docs/language.md states: x / 0 = 0, x % 0 = x, MIN / -1 = MIN, MIN % -1 = 0; shift
 * counts of the width or more give 0 (<<, unsigned >>) or the sign (signed >>). On the CPU
 * backend a wrong lowering raises SIGFPE and kills this program rather than failing a case. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include "test_exec.h"

#define DIV "tests/exec/intdiv.tile"

typedef struct {
    Ty t;
    int bits, sgn;
} IntTy;

static const IntTy INT_TYPES[] = {
    {T_I8, 8, 1}, {T_I16, 16, 1}, {T_I32, 32, 1}, {T_I64, 64, 1},
    {T_U8, 8, 0}, {T_U16, 16, 0}, {T_U32, 32, 0}, {T_U64, 64, 0},
};

/* The low `bits` of v, as the type's bit pattern (sign-extended for signed types). */
static uint64_t wrap(const IntTy *it, uint64_t v)
{
    if (it->bits == 64)
        return v;
    uint64_t mask = (1ull << it->bits) - 1, u = v & mask;
    return it->sgn && (u >> (it->bits - 1)) ? u | ~mask : u;
}

static double as_double(const IntTy *it, uint64_t v)
{
    return it->sgn ? (double)(int64_t)v : (double)v;
}

static uint64_t from_double(const IntTy *it, double v)
{
    return it->sgn || v < 0 ? (uint64_t)(int64_t)v : (uint64_t)v;
}

/* Values exactly representable in a double (the test's buffers hold doubles). */
static int specials(const IntTy *it, double *out)
{
    int n = 0, w = it->bits;
    double min = it->sgn ? -ldexp(1.0, w - 1) : 0;
    double max = w == 64 ? (it->sgn ? 0x1p62 : 0x1p64 - 2048) : ldexp(1.0, w - it->sgn) - 1;
    double list[] = {min, max, 0, 1, 2, 3, 7, w - 1, w, w + 1, 100};
    for (size_t i = 0; i < sizeof list / sizeof list[0]; i++)
        out[n++] = list[i];
    if (it->sgn) {
        double neg[] = {-1, -2, -7, min / 2, w == 64 ? min : min + 1};
        for (size_t i = 0; i < sizeof neg / sizeof neg[0]; i++)
            out[n++] = neg[i];
    } else {
        out[n++] = w == 64 ? 0x1p63 : (max + 1) / 2;
    }
    return n;
}

static void reference(const IntTy *it, uint64_t a, uint64_t b, uint64_t out[4])
{
    uint64_t min = 1ull << (it->bits - 1), cnt = b & (it->bits == 64 ? ~0ull : (1ull << it->bits) - 1);
    int64_t sa = (int64_t)a, sb = (int64_t)b;
    int over = cnt >= (uint64_t)it->bits;
    if (it->sgn) {
        int wraps = sa == (int64_t)wrap(it, min) && sb == -1;
        out[0] = sb == 0 ? 0 : wraps ? a : (uint64_t)(sa / sb);
        out[1] = sb == 0 ? a : wraps ? 0 : (uint64_t)(sa % sb);
        out[3] = over ? (sa < 0 ? ~0ull : 0) : (uint64_t)(sa >> cnt);
    } else {
        out[0] = b == 0 ? 0 : a / b;
        out[1] = b == 0 ? a : a % b;
        out[3] = over ? 0 : a >> cnt;
    }
    out[2] = over ? 0 : wrap(it, a << cnt);
}

static void edges(const IntTy *it)
{
    double sp[16];
    int ns = specials(it, sp), n = ns * ns + 61;
    begin("edges_%s n=%d", TY[it->t].name, n);
    double hi = it->bits >= 53 ? 0x1p53 : ldexp(1.0, it->bits - it->sgn) - 1;
    Buf *x = input("x", it->t, (size_t)n, it->sgn ? -hi - 1 : 0, hi);
    Buf *y = input("y", it->t, (size_t)n, it->sgn ? -hi - 1 : 0, hi);
    for (int i = 0; i < ns * ns; i++) /* every pair of special values, then random ones */
        x->v[i] = sp[i / ns], y->v[i] = sp[i % ns];
    Buf *o[4] = {output("q", it->t, (size_t)n, EXACT), output("r", it->t, (size_t)n, EXACT),
                 output("shl", it->t, (size_t)n, EXACT), output("shr", it->t, (size_t)n, EXACT)};
    for (int i = 0; i < n; i++) {
        uint64_t r[4];
        reference(it, from_double(it, x->v[i]), from_double(it, y->v[i]), r);
        for (int k = 0; k < 4; k++)
            o[k]->v[i] = as_double(it, wrap(it, r[k]));
    }
    char kernel[32];
    snprintf(kernel, sizeof kernel, "edges_%s", TY[it->t].name);
    run(DIV, kernel, ARGS(P(x), P(y), P(o[0]), P(o[1]), P(o[2]), P(o[3]), I(n)), NO_CONSTS);
}

static void const_divisors(void)
{
    int n = 100;
    begin("const_divisors n=%d", n);
    Buf *x = input("x", T_I32, (size_t)n, -2147483648.0, 2147483647.0);
    x->v[0] = -2147483648.0, x->v[1] = 0, x->v[2] = -1;
    Buf *q0 = output("q0", T_I32, (size_t)n, EXACT), *r0 = output("r0", T_I32, (size_t)n, EXACT);
    Buf *qm = output("qm", T_I32, (size_t)n, EXACT), *rm = output("rm", T_I32, (size_t)n, EXACT);
    for (int i = 0; i < n; i++) {
        int32_t a = (int32_t)x->v[i];
        q0->v[i] = 0, r0->v[i] = a, rm->v[i] = 0;
        qm->v[i] = a == INT32_MIN ? a : -a;
    }
    run(DIV, "const_divisors", ARGS(P(x), P(q0), P(r0), P(qm), P(rm), I(n)), NO_CONSTS);
}

static void scalar_div(int64_t a, int64_t b, double q, double r)
{
    begin("scalar_div %lld / %lld", (long long)a, (long long)b);
    Buf *o = output("o", T_I64, 2, EXACT);
    o->v[0] = q, o->v[1] = r;
    run(DIV, "scalar_div", ARGS(P(o), I(a), I(b)), NO_CONSTS);
}

/* popc, clz, ffs, brev over `bits` bits of u (the C reference of bit_fns). */
static uint64_t bits_ref(int op, uint64_t u, int bits)
{
    uint64_t r = 0;
    for (int b = 0; b < bits; b++) {
        int set = (int)((u >> b) & 1);
        if (op == 0) r += (uint64_t)set;
        else if (op == 1 && set) r = (uint64_t)(bits - 1 - b);
        else if (op == 2 && set && !r) r = (uint64_t)b + 1;
        else if (op == 3 && set) r |= UINT64_C(1) << (bits - 1 - b);
    }
    return op == 1 && !u ? (uint64_t)bits : r;
}

/* A value of `bits` bits as the type's signed or unsigned number. */
static double typed(uint64_t u, int bits, int is_signed)
{
    if (bits < 64)
        u &= (UINT64_C(1) << bits) - 1;
    if (is_signed && bits < 64 && (u >> (bits - 1)))
        return (double)(int64_t)(u | ~((UINT64_C(1) << bits) - 1));
    return is_signed ? (double)(int64_t)u : (double)u;
}

static void bit_fns(void)
{
    static const struct { const char *kernel; Ty t; int bits, is_signed; } ts[] = {
        {"bit_fns", T_I32, 32, 1}, {"bit_fns_u32", T_U32, 32, 0}, {"bit_fns_i8", T_I8, 8, 1},
        {"bit_fns_u8", T_U8, 8, 0}, {"bit_fns_i16", T_I16, 16, 1}, {"bit_fns_u16", T_U16, 16, 0},
        {"bit_fns64", T_U64, 64, 0}, {"bit_fns64_i64", T_I64, 64, 1},
    };
    for (size_t c = 0; c < sizeof ts / sizeof ts[0]; c++) {
        int bits = ts[c].bits, sg = ts[c].is_signed, n = 61, wide = bits == 64;
        begin("%s (popc, clz, ffs, brev)", ts[c].kernel);
        double lo = wide ? (sg ? -0x1p52 : 0) : sg ? -ldexp(1, bits - 1) : 0;
        double hi = wide ? 0x1p52 : sg ? ldexp(1, bits - 1) - 1 : ldexp(1, bits) - 1;
        Buf *x = input("x", ts[c].t, 64, lo, hi);
        x->v[0] = 0, x->v[1] = 1, x->v[2] = sg ? -1 : 8, x->v[3] = sg ? lo : hi;
        Buf *o = inout("o", ts[c].t, 261, EXACT);
        for (int i = 0; i < 261; i++)
            o->init[i] = o->v[i] = 7;
        for (int i = 0; i < n; i++) {
            uint64_t u = (uint64_t)(int64_t)x->v[i];
            if (!sg && x->v[i] >= 0x1p63)
                u = (uint64_t)x->v[i];
            uint64_t r = bits_ref(3, u, bits);
            o->v[i] = typed(bits_ref(0, u, bits), bits, sg);
            o->v[64 + i] = typed(bits_ref(1, u, bits), bits, sg);
            o->v[128 + i] = typed(bits_ref(2, u, bits), bits, sg);
            o->v[192 + i] = wide ? (sg ? (double)((int64_t)r >> 11) : (double)(r >> 11))
                                 : typed(r, bits, sg);
        }
        o->v[256] = bits, o->v[257] = bits - 1, o->v[258] = 0, o->v[259] = 4;
        uint64_t top = UINT64_C(1) << (bits - 1);
        o->v[260] = wide ? (sg ? (double)((int64_t)top >> 11) : (double)(top >> 11))
                         : typed(top, bits, sg);
        run(DIV, ts[c].kernel, ARGS(P(x), P(o), I(n)), NO_CONSTS);
    }
}

/* x >> s with a signed x and an unsigned s: arithmetic (Triton's `>>` follows the left
 * operand's signedness), in the unsigned promoted type; counts past the width give the sign */
static void shr_mixed(void)
{
    int n = 200;
    begin("shr_mixed: signed >> unsigned is arithmetic, n=%d", n);
    Buf *x = input("x", T_I32, (size_t)n, -2147483648.0, 2147483647.0);
    Buf *s = input("s", T_U32, (size_t)n, 0, 40);
    x->v[0] = -16, s->v[0] = 2, x->v[1] = -1, s->v[1] = 31, x->v[2] = INT32_MIN, s->v[2] = 4294967295.0;
    Buf *o32 = output("o32", T_U32, (size_t)n, EXACT), *o8 = output("o8", T_U32, (size_t)n, EXACT);
    Buf *ou = output("ou", T_I64, (size_t)n, EXACT), *oc = output("oc", T_U32, 2, EXACT);
    for (int i = 0; i < n; i++) {
        int32_t a = (int32_t)x->v[i];
        uint32_t b = (uint32_t)s->v[i];
        int sh = b > 31 ? 31 : (int)b; /* past the width: the sign */
        o32->v[i] = (uint32_t)(a >> sh), o8->v[i] = (uint32_t)((int32_t)(int8_t)a >> sh);
        ou->v[i] = b > 63 ? 0 : (double)((uint64_t)(uint32_t)a >> b);
    }
    oc->v[0] = (uint32_t)(-16 >> 2), oc->v[1] = (uint32_t)(-16 >> 3);
    run(DIV, "shr_mixed", ARGS(P(x), P(s), P(o32), P(o8), P(ou), P(oc), I(n)), NO_CONSTS);
}

void t_intdiv(void)
{
    bit_fns();
    for (size_t i = 0; i < sizeof INT_TYPES / sizeof INT_TYPES[0]; i++)
        edges(&INT_TYPES[i]);
    const_divisors();
    shr_mixed();
    scalar_div(INT64_MIN, -1, -0x1p63, 0);
    scalar_div(42, 0, 0, 42);
    scalar_div(-7, 2, -3, -1);
}
