/* fp8.c: fp8.h's formats and host conversions, in integer arithmetic on the f32 bits (the
 * algorithm lower_fp8.c emits for every target). */
#include <string.h>
#include "fp8.h"

static const Fp8Format e4m3 = {3, 7, 0x43E00000u /* 448 */, 0x7e, 0};
static const Fp8Format e5m2 = {2, 15, 0x47600000u /* 57344 */, 0x7b, 1};

const Fp8Format *fp8_format(ElemKind k)
{
    return k == ET_F8E4M3 ? &e4m3 : k == ET_F8E5M2 ? &e5m2 : NULL;
}

static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

float fp8_to_f32(uint8_t c, ElemKind k)
{
    const Fp8Format *f = fp8_format(k);
    int M = f->mbits, emax = (1 << (7 - M)) - 1;
    uint32_t s = (uint32_t)(c & 0x80) << 24, e = (c & 0x7f) >> M, m = c & ((1u << M) - 1);
    if ((f->has_inf && e == (uint32_t)emax && m) || (!f->has_inf && (c & 0x7f) == 0x7f))
        return from_bits(s | 0x7fc00000u);
    if (f->has_inf && e == (uint32_t)emax)
        return from_bits(s | 0x7f800000u);
    if (e)
        return from_bits(s | (e - (uint32_t)f->bias + 127) << 23 | m << (23 - M));
    uint32_t mag; /* subnormal: m * 2^(1 - bias - M), exact in f32 */
    float v = (float)m * from_bits((uint32_t)(127 + 1 - f->bias - M) << 23);
    memcpy(&mag, &v, 4);
    return from_bits(s | mag);
}

uint8_t fp8_from_f32(float x, ElemKind k)
{
    const Fp8Format *f = fp8_format(k);
    int M = f->mbits;
    uint32_t u;
    memcpy(&u, &x, 4);
    uint8_t s = (uint8_t)((u >> 24) & 0x80);
    uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u)
        return 0x7f;
    if (a > f->max_bits)
        return s | f->max_code;
    if (a >= (uint32_t)(127 + 1 - f->bias) << 23) { /* normal: round the mantissa to M bits */
        uint32_t r = a + (1u << (22 - M)) - 1 + ((a >> (23 - M)) & 1);
        return s | (uint8_t)((r >> (23 - M)) - ((uint32_t)(127 - f->bias) << M));
    }
    uint32_t e8 = a >> 23, full = (a & 0x7fffff) | (e8 ? 0x800000u : 0);
    int sh = 150 - (f->bias - 1 + M) - (int)(e8 ? e8 : 1); /* subnormal steps of 2^(1-bias-M) */
    if (sh >= 32)
        return s;
    uint32_t m = (full + (1u << (sh - 1)) - 1 + ((full >> sh) & 1)) >> sh;
    return s | (uint8_t)m;
}
