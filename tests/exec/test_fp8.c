/* test_fp8.c: the fp8 group of the execution tests (tests/exec/fp8.tile): every code of both
 * formats decoded, and f32 values at every rounding edge encoded, bit for bit against a
 * reference written here from the formats' definitions (a value table and a nearest-value
 * search, not the compiler's bit manipulation). fp8 buffers travel as bytes (u8 buffers:
 * device pointers carry no type). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include "test_exec.h"

#define F8 "tests/exec/fp8.tile"

typedef struct Fmt {
    int ebits, mbits, bias, inf; /* inf: e5m2 has infinities (exponent all ones, mantissa 0) */
} Fmt;
static const Fmt E4M3 = {4, 3, 7, 0}, E5M2 = {5, 2, 15, 1};

/* The value of a code (NaN for the NaN codes). */
static double decode(const Fmt *f, int code)
{
    int s = code >> 7, e = (code >> f->mbits) & ((1 << f->ebits) - 1), m = code & ((1 << f->mbits) - 1);
    int emax = (1 << f->ebits) - 1;
    double v;
    if (!f->inf && e == emax && m == (1 << f->mbits) - 1)
        v = NAN;
    else if (f->inf && e == emax)
        v = m ? NAN : INFINITY;
    else if (e == 0)
        v = ldexp(m, 1 - f->bias - f->mbits);
    else
        v = ldexp(1 + ldexp(m, -f->mbits), e - f->bias);
    return s ? -v : v;
}

/* Round to nearest (ties to the even code), finite values past the largest and infinities to
 * the largest of their sign, NaN to 0x7f. */
static int encode(const Fmt *f, double x)
{
    if (isnan(x))
        return 0x7f;
    int sign = signbit(x) ? 0x80 : 0, best = 0, top = 0;
    double a = fabs(x), best_d = INFINITY;
    for (int c = 0; c < 0x80; c++)
        if (isfinite(decode(f, c)))
            top = c;
    if (a > decode(f, top))
        return sign | top;
    for (int c = 0; c <= top; c++) {
        double d = fabs(a - decode(f, c));
        if (d < best_d || (d == best_d && !(c & 1)))
            best = c, best_d = d;
    }
    return sign | best;
}

static float f16_round(double v) /* f32 -> f16 -> f32 (round to nearest even) */
{
    return (float)ty_round(T_F16, (float)v);
}

static void decode_all(const char *kernel, const Fmt *f)
{
    begin("fp8 %s: all 256 codes", kernel);
    Buf *x = input("codes", T_U8, 256, 0, 0), *o = output("f32", T_F32, 256, EXACT);
    for (int c = 0; c < 256; c++)
        x->v[c] = c, o->v[c] = decode(f, c);
    run(F8, kernel, ARGS(P(x), P(o), I(256)), NO_CONSTS);
}

/* Every code's value, the midpoints between neighbours (ties) and a float either side of
 * each, zeros, infinities, NaN, values past the largest, the smallest subnormals and f32
 * subnormals, and random floats across the exponent range. */
static size_t edge_floats(float *out, size_t cap)
{
    size_t n = 0;
    const Fmt *fs[2] = {&E4M3, &E5M2};
    for (int k = 0; k < 2; k++)
        for (int c = 0; c < 0x7f; c++) {
            double v = decode(fs[k], c), w = decode(fs[k], c + 1);
            if (!isfinite(v))
                continue;
            float mids[5] = {(float)v, (float)((v + w) / 2), 0, 0, (float)-v};
            mids[2] = nextafterf(mids[1], INFINITY), mids[3] = nextafterf(mids[1], -INFINITY);
            for (int j = 0; j < 5 && isfinite(w) && n + 2 < cap; j++)
                out[n++] = mids[j], out[n++] = -mids[j];
        }
    const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e30f, -1e30f, 448.0f, 464.0f,
                              465.0f, 480.0f, 57344.0f, 61440.0f, 61441.0f, 0x1p-149f, 0x1p-126f,
                              0x1p-10f, 0x1p-11f, 0x1.8p-11f, 0x1p-17f, 0x1.8p-17f, 0x1p-18f};
    for (size_t i = 0; i < sizeof specials / sizeof specials[0] && n < cap; i++)
        out[n++] = specials[i];
    while (n < cap) {
        double v = ldexp(rnd_unit() + 1, (int)rnd_int(-30, 20));
        out[n++] = (float)(rnd() & 1 ? -v : v);
    }
    return n;
}

static void encode_all(void)
{
    enum { CAP = 2048 };
    float vals[CAP];
    size_t n = edge_floats(vals, CAP);
    begin("fp8 encode: %zu f32 values at rounding edges", n);
    Buf *x = input("x", T_F32, n, 0, 0);
    Buf *e4 = output("e4m3", T_U8, n, EXACT), *e5 = output("e5m2", T_U8, n, EXACT);
    Buf *h4 = output("f16 -> e4m3", T_U8, n, EXACT);
    for (size_t i = 0; i < n; i++) {
        x->v[i] = vals[i];
        e4->v[i] = encode(&E4M3, vals[i]);
        e5->v[i] = encode(&E5M2, vals[i]);
        h4->v[i] = encode(&E4M3, isfinite(vals[i]) ? f16_round(vals[i]) : vals[i]);
    }
    run(F8, "encode", ARGS(P(x), P(e4), P(e5), P(h4), I((int)n)), NO_CONSTS);
}

/* f64 values a hair (a relative 2^-40) below, at and above the ties between neighbouring
 * codes of both formats, which f32 rounds onto the tie: to fp8 they must round once. */
static void encode_f64(void)
{
    enum { CAP = 1024 };
    double vals[CAP];
    size_t n = 0;
    const Fmt *fs[2] = {&E4M3, &E5M2};
    for (int k = 0; k < 2; k++)
        for (int c = 0; c + 1 < 0x7f && n + 6 <= CAP; c++) {
            double v = decode(fs[k], c), w = decode(fs[k], c + 1);
            if (!isfinite(v) || !isfinite(w))
                continue;
            double tie = (v + w) / 2, h = ldexp(tie, -40);
            for (int side = -1; side <= 1; side++)
                vals[n++] = tie + side * h, vals[n++] = -(tie + side * h);
        }
    begin("fp8 from f64: %zu values next to ties", n);
    Buf *x = input("x", T_F64, n, 0, 0);
    Buf *e4 = output("e4m3", T_U8, n, EXACT), *e5 = output("e5m2", T_U8, n, EXACT);
    Buf *folded = output("folded", T_U8, 2, EXACT);
    for (size_t i = 0; i < n; i++) {
        x->v[i] = vals[i];
        e4->v[i] = encode(&E4M3, vals[i]);
        e5->v[i] = encode(&E5M2, vals[i]);
    }
    folded->v[0] = encode(&E4M3, 1.125), folded->v[1] = encode(&E4M3, -1.25);
    run(F8, "encode_f64", ARGS(P(x), P(e4), P(e5), P(folded), I((int)n)), NO_CONSTS);
}

static void arith(void)
{
    enum { N = 64 };
    begin("fp8 arithmetic in f32, a scalar parameter, reductions, constants");
    Buf *a = input("a", T_U8, N, 0, 0), *b = input("b", T_U8, N, 0, 0);
    Buf *o = output("out", T_U8, N, EXACT), *o32 = output("out32", T_F32, N, EXACT);
    Buf *sums = output("sums", T_F32, 4, TOL_F32);
    double c = decode(&E4M3, encode(&E4M3, 1.3)), s = 0, mx = -INFINITY;
    for (int i = 0; i < N; i++) {
        int ca = (int)rnd_int(0, 0x7e) | (rnd() & 1 ? 0x80 : 0), cb = (int)rnd_int(0, 0x7b) | (rnd() & 1 ? 0x80 : 0);
        a->v[i] = ca, b->v[i] = cb;
        double x = decode(&E4M3, ca), y = decode(&E5M2, cb);
        o->v[i] = encode(&E4M3, (float)((float)(x * y) + c));
        o32->v[i] = (float)((float)(-x + fabs(y)) + (x > y ? x : y));
        s += x, mx = fmax(mx, y);
    }
    sums->v[0] = s, sums->v[1] = mx, sums->v[2] = decode(&E4M3, encode(&E4M3, 300));
    sums->v[3] = decode(&E5M2, encode(&E5M2, 1000));
    run(F8, "arith", ARGS(P(a), P(b), F(1.3), P(o), P(o32), P(sums)), NO_CONSTS);
}

void t_fp8(void)
{
    decode_all("decode_e4m3", &E4M3);
    decode_all("decode_e5m2", &E5M2);
    encode_all();
    encode_f64();
    arith();
}
