/* fp8.h: the 8-bit float formats (OCP FP8: e4m3 and e5m2), their parameters and the host's
 * conversions (constant folding); lowering emits the same integer algorithms (lower_fp8.c).
 * f32 -> fp8 rounds to nearest even and saturates: finite values past the largest and
 * infinities become the largest finite value of their sign (NVIDIA's cvt .satfinite), NaN
 * becomes the canonical NaN 0x7f. */
#ifndef TILE_FP8_H
#define TILE_FP8_H
#include <stdint.h>
#include "tir.h"

typedef struct Fp8Format {
    int mbits, bias;
    uint32_t max_bits;  /* f32 bits of the largest finite value */
    uint8_t max_code;   /* its code */
    int has_inf;        /* e5m2: exponent all ones with mantissa 0 is infinity */
} Fp8Format;

const Fp8Format *fp8_format(ElemKind k); /* NULL unless k is an fp8 kind */
float fp8_to_f32(uint8_t code, ElemKind k);
uint8_t fp8_from_f32(float x, ElemKind k);

#endif
