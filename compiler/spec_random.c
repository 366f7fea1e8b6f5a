/* spec_random.c: counter-based random numbers (rand, randn, randint): Philox4x32 (Salmon et
 * al., "Parallel random numbers: as easy as 1, 2, 3", 2011) over a seed and one counter per
 * element, built from the ops every backend has (32-bit multiplies, their high halves through
 * a 64-bit product, xor), so each element's bits are the same on every backend. */
#include "spec.h"

enum { PHILOX_W0 = 0x9E3779B9u, PHILOX_W1 = 0xBB67AE85u, PHILOX_M0 = 0xD2511F53u, PHILOX_M1 = 0xCD9E8D57u };

static Val u32c(uint32_t x) { return val_const_int(ET_U32, (int64_t)x, 0); }

/* v (a run-time value: spec_random makes its operands tiles first) cast to k */
static Val as_type(Spec *s, Val v, ElemKind k, SrcLoc at)
{
    TirValue *t = spec_cast(s, v.v, k, at);
    return t ? val_tile(t) : val_error();
}

/* The high and low 32 bits of the product of constant m and x (u32). */
static void mul_wide(Spec *s, uint32_t m, Val x, Val *hi, Val *lo, SrcLoc at)
{
    Val p = spec_binary(s, OP_MUL, as_type(s, x, ET_U64, at), val_const_int(ET_U64, m, 0), at);
    *hi = as_type(s, spec_binary(s, OP_SHR, p, val_const_int(ET_U64, 32, 0), at), ET_U32, at);
    *lo = spec_binary(s, OP_MUL, x, u32c(m), at);
}

/* Philox4x32 with `rounds` rounds: counter c[4] (u32 values), key k0, k1 (u32 scalars). */
static void philox(Spec *s, Val c[4], Val k0, Val k1, int rounds, SrcLoc at)
{
    for (int r = 0; r < rounds; r++) {
        Val hi0, lo0, hi1, lo1;
        mul_wide(s, PHILOX_M0, c[0], &hi0, &lo0, at);
        mul_wide(s, PHILOX_M1, c[2], &hi1, &lo1, at);
        c[0] = spec_binary(s, OP_BITXOR, spec_binary(s, OP_BITXOR, hi1, c[1], at), k0, at);
        c[2] = spec_binary(s, OP_BITXOR, spec_binary(s, OP_BITXOR, hi0, c[3], at), k1, at);
        c[1] = lo1;
        c[3] = lo0;
        k0 = spec_binary(s, OP_ADD, k0, u32c(PHILOX_W0), at);
        k1 = spec_binary(s, OP_ADD, k1, u32c(PHILOX_W1), at);
    }
}

/* The low and high 32-bit halves of an integer value taken as 64 bits (sign-extended). */
static void halves(Spec *s, Val x, Val *lo, Val *hi, SrcLoc at)
{
    Val w = as_type(s, x, ET_U64, at);
    *lo = as_type(s, w, ET_U32, at);
    *hi = as_type(s, spec_binary(s, OP_SHR, w, val_const_int(ET_U64, 32, 0), at), ET_U32, at);
}

/* u32 bits -> f32 in [0, 1): the top 24 bits times 2^-24 (every value exact, never 1). With
 * `open`, (0, 1): odd multiples of 2^-24 (for log's argument in randn). */
static Val uniform(Spec *s, Val bits, int open, SrcLoc at)
{
    Val top = spec_binary(s, OP_SHR, bits, u32c(open ? 9 : 8), at);
    if (open)
        top = spec_binary(s, OP_ADD, spec_binary(s, OP_MUL, top, u32c(2), at), u32c(1), at);
    return spec_binary(s, OP_MUL, as_type(s, top, ET_F32, at), val_const_float(ET_F32, 0x1p-24, 0), at);
}

static Val unary(Spec *s, TirUnOp op, Val x, SrcLoc at)
{
    TirValue *v = spec_as_tile(s, x, at);
    if (!v)
        return val_error();
    TirValue *r = spec_emit(s, TIR_UNARY, at, &v, 1, v->type);
    r->def->attr.i = op;
    return val_tile(r);
}

/* Box-Muller of u1 in (0, 1) and u2 in [0, 1): sqrt(-2 log u1) times cos(2 pi u2) and
 * sin(2 pi u2) (*second, where not NULL). */
static Val normal(Spec *s, Val u1, Val u2, Val *second, SrcLoc at)
{
    Val r = unary(s, UN_SQRT, spec_binary(s, OP_MUL, val_const_float(ET_F32, -2.0, 0),
                                          unary(s, UN_LOG, u1, at), at), at);
    Val th = spec_binary(s, OP_MUL, val_const_float(ET_F32, 6.283185307179586, 0), u2, at);
    if (second)
        *second = spec_binary(s, OP_MUL, r, unary(s, UN_SIN, th, at), at);
    return spec_binary(s, OP_MUL, r, unary(s, UN_COS, th, at), at);
}

/* The four words of c as kind's values, as a tuple. */
static Val four_values(Spec *s, SpecRandom kind, Val c[4], SrcLoc at)
{
    Val t = {.kind = V_TUPLE, .nitems = 4};
    t.items = arena_alloc(s->arena, sizeof(Val) * 4);
    if (!t.items)
        return val_error();
    for (int i = 0; i < 4; i++)
        t.items[i] = kind == RANDOM_INT ? c[i] : uniform(s, c[i], 0, at);
    if (kind == RANDOM_NORMAL) {
        t.items[0] = normal(s, uniform(s, c[0], 1, at), t.items[1], &t.items[1], at);
        t.items[2] = normal(s, uniform(s, c[2], 1, at), t.items[3], &t.items[3], at);
    }
    for (int i = 0; i < 4; i++)
        if (t.items[i].kind == V_ERROR)
            return val_error();
    return t;
}

/* Philox4x32 with `rounds` rounds under seed's key of the counter words c (u32), broadcast to
 * their common shape first: c becomes the four words. 0 after an error. */
static int keyed_philox(Spec *s, Val seed, Val c[4], int rounds, SrcLoc at)
{
    Val k0, k1, zero = u32c(0);
    TirValue *sv = spec_as_tile(s, seed, at);
    if (!sv)
        return 0;
    halves(s, val_tile(sv), &k0, &k1, at);
    for (int i = 0; i < 4; i++) /* their common shape */
        zero = spec_binary(s, OP_ADD, zero, spec_binary(s, OP_MUL, c[i], u32c(0), at), at);
    for (int i = 0; i < 4; i++)
        c[i] = spec_binary(s, OP_ADD, c[i], zero, at);
    philox(s, c, k0, k1, rounds, at);
    return 1;
}

Val spec_philox(Spec *s, Val seed, const Val counter[4], int rounds, SrcLoc at)
{
    Val c[4];
    for (int i = 0; i < 4; i++) { /* run-time u32 words, wrapped */
        TirValue *v = spec_as_tile(s, counter[i], at);
        if (!v)
            return val_error();
        c[i] = as_type(s, val_tile(v), ET_U32, at);
    }
    return keyed_philox(s, seed, c, rounds, at) ? four_values(s, RANDOM_INT, c, at) : val_error();
}

Val spec_random(Spec *s, SpecRandom kind, int four, Val seed, Val offset, int rounds, SrcLoc at)
{
    Val c[4];
    /* run-time values from here on: no constant folding (whose overflow checks would refuse
     * the wrapping arithmetic Philox is made of) */
    TirValue *ov = spec_as_tile(s, offset, at);
    if (!ov)
        return val_error();
    offset = val_tile(ov);
    if (et_bits(val_elem(&offset)) == 64)
        halves(s, offset, &c[0], &c[1], at);
    else
        c[0] = as_type(s, offset, ET_U32, at), c[1] = u32c(0);
    c[2] = c[3] = u32c(0);
    if (!keyed_philox(s, seed, c, rounds, at))
        return val_error();
    if (four)
        return four_values(s, kind, c, at);
    if (kind == RANDOM_INT)
        return c[0];
    if (kind == RANDOM_UNIFORM)
        return uniform(s, c[0], 0, at);
    return normal(s, uniform(s, c[0], 1, at), uniform(s, c[1], 0, at), NULL, at);
}
