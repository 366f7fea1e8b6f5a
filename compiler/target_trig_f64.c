/* target_trig_f64.c: f64 sin, cos and tan computed by the kernel, for AMD GPUs (no device
 * library; the emulated AMD path runs the same code against libm in CI). |x| = q pi/2 + r, r a
 * double-double in [-pi/4, pi/4], then sin r or cos r (or their quotient) by quadrant. No
 * branches: both reductions run and one is selected.
 * - |x| < 2^30: Cody-Waite with pi/2 in three parts (159 bits) and FMA: k = rint(|x| 2/pi),
 *   |x| - k P1 is exact, k P2 an exact product, so r is good to about 2^-130.
 * - larger: Payne-Hanek. |x| = M 2^E (M of 53 bits); the 192 bits of 2/pi from the one of
 *   weight 2^(1-E) on (a table, 2/pi's first 1216 bits) times M, mod 2^192, hold the quadrant
 *   in their top 2 bits and r / (pi/2) in the next 126.
 * - sin r = r + r^3 S(r^2), cos r = 1 - r^2/2 + r^4 C(r^2): Taylor to r^17 and r^16, with
 *   r's low part and 1 - r^2/2's rounding error added back.
 * Coefficients: 1/k! rounded to double; the table: floor(2/pi 2^(64 j)) mod 2^64 (mpmath). */
#include "target_fp.h"

static const double SIN_S[] = {-0.16666666666666666, 0.008333333333333333,
                               -0.0001984126984126984, 2.7557319223985893e-06,
                               -2.505210838544172e-08, 1.6059043836821613e-10,
                               -7.647163731819816e-13, 2.8114572543455206e-15};
static const double COS_C[] = {0.041666666666666664, -0.001388888888888889,
                               2.48015873015873e-05, -2.755731922398589e-07,
                               2.08767569878681e-09, -1.1470745597729725e-11,
                               4.779477332387385e-14};
enum { SIN_N = 8, COS_N = 7, PI_WORDS = 20 };
/* word j >= 1: the bits of 2/pi of weights 2^(-64 j + 63) .. 2^(-64 j); word 0 is padding */
static const unsigned long long TWO_OVER_PI_BITS[PI_WORDS] = {
    0x0000000000000000ull, 0xa2f9836e4e441529ull, 0xfc2757d1f534ddc0ull, 0xdb6295993c439041ull,
    0xfe5163abdebbc561ull, 0xb7246e3a424dd2e0ull, 0x06492eea09d1921cull, 0xfe1deb1cb129a73eull,
    0xe88235f52ebb4484ull, 0xe99c7026b45f7e41ull, 0x3991d639835339f4ull, 0x9c845f8bbdf9283bull,
    0x1ff897ffde05980full, 0xef2f118b5a0a6d1full, 0x6d367ecf27cb09b7ull, 0x4f463f669e5fea2dull,
    0x7527bac7ebe5f17bull, 0x3d0739f78a5292eaull, 0x6bfb5fb11f8d5d08ull, 0x56033046fc7b6babull};
static const double PIO2_1 = 1.5707963267948966, PIO2_2 = 6.123233995736766e-17,
                    PIO2_3 = -1.4973849048591698e-33, TWO_OVER_PI = 0.6366197723675814,
                    CODY_WAITE_LIMIT = 0x1p30;
/* the window's first table bit: biased exponent - 1013; its largest: 1034 (inf, NaN) */
enum { WINDOW_BIAS = 1013, WINDOW_MAX = 1034 };

typedef struct { LLVMValueRef hi, lo, q; } Reduced; /* |x| = q pi/2 + hi + lo, q an i32 */

static LLVMValueRef k(TargetCtx *c, double v)
{
    return LLVMConstReal(LLVMDoubleTypeInContext(c->ctx), v);
}

static LLVMValueRef neg(TargetCtx *c, LLVMValueRef a) { return LLVMBuildFNeg(c->b, a, ""); }

/* integers: a constant of v's type, shifts by constants, and, or, widening, narrowing */
static LLVMValueRef ik(LLVMTypeRef t, unsigned long long v) { return LLVMConstInt(t, v, 0); }

static LLVMValueRef shr(TargetCtx *c, LLVMValueRef v, unsigned n)
{
    return LLVMBuildLShr(c->b, v, ik(LLVMTypeOf(v), n), "");
}

static LLVMValueRef shl(TargetCtx *c, LLVMValueRef v, unsigned n)
{
    return LLVMBuildShl(c->b, v, ik(LLVMTypeOf(v), n), "");
}

static LLVMValueRef mask(TargetCtx *c, LLVMValueRef v, unsigned long long m)
{
    return LLVMBuildAnd(c->b, v, ik(LLVMTypeOf(v), m), "");
}

static LLVMValueRef ior(TargetCtx *c, LLVMValueRef a, LLVMValueRef b)
{
    return LLVMBuildOr(c->b, a, b, "");
}

static LLVMValueRef ext128(TargetCtx *c, LLVMValueRef v)
{
    return LLVMBuildZExt(c->b, v, LLVMInt128TypeInContext(c->ctx), "");
}

static LLVMValueRef low64(TargetCtx *c, LLVMValueRef v)
{
    return LLVMBuildTrunc(c->b, v, LLVMInt64TypeInContext(c->ctx), "");
}

/* |x| < 2^30 (elsewhere q is 0 and r garbage): three-part Cody-Waite */
static Reduced reduce_medium(TargetCtx *c, LLVMValueRef a, LLVMValueRef big)
{
    LLVMValueRef n = target_intrinsic1(c, "llvm.rint", fp_mul(c, a, k(c, TWO_OVER_PI)));
    LLVMValueRef r1 = fp_fma(c, neg(c, n), k(c, PIO2_1), a); /* exact */
    LLVMValueRef w = fp_mul(c, n, k(c, PIO2_2)), w_lo = fp_fma(c, n, k(c, PIO2_2), neg(c, w));
    DD d = fp_two_sum(c, r1, neg(c, w)); /* r1 - w exactly */
    LLVMValueRef lo = fp_fma(c, neg(c, n), k(c, PIO2_3), fp_sub(c, d.lo, w_lo));
    DD sum = fp_fast_two_sum(c, d.hi, lo);
    Reduced r = {.hi = sum.hi, .lo = sum.lo};
    n = LLVMBuildSelect(c->b, big, k(c, 0), n, ""); /* keeps the conversion defined */
    r.q = LLVMBuildFPToSI(c->b, n, LLVMInt32TypeInContext(c->ctx), "");
    return r;
}

static LLVMValueRef two_over_pi_table(TargetCtx *c)
{
    static const char name[] = "tile_two_over_pi_bits";
    LLVMValueRef g = LLVMGetNamedGlobal(c->mod, name);
    if (g)
        return g;
    LLVMTypeRef i64 = LLVMInt64TypeInContext(c->ctx);
    LLVMValueRef words[PI_WORDS];
    for (int i = 0; i < PI_WORDS; i++)
        words[i] = ik(i64, TWO_OVER_PI_BITS[i]);
    /* in the target's default address space of globals: AMD's global memory, the host's */
    g = LLVMAddGlobal(c->mod, LLVMArrayType2(i64, PI_WORDS), name);
    LLVMSetInitializer(g, LLVMConstArray2(i64, words, PI_WORDS));
    LLVMSetGlobalConstant(g, 1);
    LLVMSetLinkage(g, LLVMPrivateLinkage);
    LLVMSetUnnamedAddress(g, LLVMGlobalUnnamedAddr);
    return g;
}

/* table word i (an i64 index) */
static LLVMValueRef table_word(TargetCtx *c, LLVMValueRef i)
{
    LLVMTypeRef i64 = LLVMInt64TypeInContext(c->ctx);
    LLVMValueRef g = two_over_pi_table(c), idx[2] = {ik(i64, 0), i};
    LLVMValueRef p = LLVMBuildInBoundsGEP2(c->b, LLVMArrayType2(i64, PI_WORDS), g, idx, 2, "");
    LLVMValueRef v = LLVMBuildLoad2(c->b, i64, p, "");
    LLVMSetAlignment(v, 8);
    return v;
}

/* window words w[0] (most significant) .. w[2]: the table's bits from bit `first` on */
static void window(TargetCtx *c, LLVMValueRef first, LLVMValueRef *w)
{
    LLVMBuilderRef b = c->b;
    LLVMValueRef q = shr(c, first, 6), sh = mask(c, first, 63);
    LLVMValueRef back = LLVMBuildSub(b, ik(LLVMTypeOf(first), 63), sh, "");
    LLVMValueRef words[4];
    for (int i = 0; i < 4; i++)
        words[i] = table_word(c, LLVMBuildAdd(b, q, ik(LLVMTypeOf(q), (unsigned)i), ""));
    for (int i = 0; i < 3; i++) { /* next >> 1 >> (63 - sh): no shift by 64 where sh = 0 */
        LLVMValueRef next = LLVMBuildLShr(b, shr(c, words[i + 1], 1), back, "");
        w[i] = ior(c, LLVMBuildShl(b, words[i], sh, ""), next);
    }
}

/* M (the 53-bit mantissa) times the window, mod 2^192: p[0] (most significant) .. p[2] */
static void window_product(TargetCtx *c, LLVMValueRef m, const LLVMValueRef *w, LLVMValueRef *p)
{
    LLVMBuilderRef b = c->b;
    LLVMValueRef low = LLVMBuildMul(b, ext128(c, m), ext128(c, w[2]), "");
    LLVMValueRef mid = LLVMBuildMul(b, ext128(c, m), ext128(c, w[1]), "");
    mid = LLVMBuildAdd(b, mid, shr(c, low, 64), "");
    p[2] = low64(c, low);
    p[1] = low64(c, mid);
    p[0] = LLVMBuildAdd(b, low64(c, shr(c, mid, 64)), LLVMBuildMul(b, m, w[0], ""), "");
}

/* the signed fraction f = F 2^-128 (F an i128, |f| <= 1/2) times pi/2, as a double-double */
static void fraction_times_pio2(TargetCtx *c, LLVMValueRef f, LLVMValueRef *hi, LLVMValueRef *lo)
{
    LLVMBuilderRef b = c->b;
    LLVMTypeRef f64 = LLVMDoubleTypeInContext(c->ctx);
    LLVMValueRef negative = LLVMBuildICmp(b, LLVMIntSLT, f, ik(LLVMTypeOf(f), 0), "");
    LLVMValueRef mag = LLVMBuildSelect(b, negative, LLVMBuildNeg(b, f, ""), f, "");
    LLVMValueRef top = low64(c, shr(c, mag, 64)), bottom = low64(c, mag);
    LLVMValueRef t = LLVMBuildUIToFP(b, shr(c, top, 11), f64, ""); /* 53 bits: exact */
    t = fp_mul(c, t, k(c, 0x1p-53));
    LLVMValueRef t_lo = fp_mul(c, LLVMBuildUIToFP(b, bottom, f64, ""), k(c, 0x1p-128));
    t_lo = fp_fma(c, LLVMBuildUIToFP(b, mask(c, top, 0x7ff), f64, ""), k(c, 0x1p-64), t_lo);
    DD tt = fp_fast_two_sum(c, t, t_lo);
    t = tt.hi, t_lo = tt.lo;
    LLVMValueRef h = fp_mul(c, t, k(c, PIO2_1)), e = fp_fma(c, t, k(c, PIO2_1), neg(c, h));
    LLVMValueRef l = fp_add(c, e, fp_fma(c, t, k(c, PIO2_2), fp_mul(c, t_lo, k(c, PIO2_1))));
    *hi = LLVMBuildSelect(b, negative, neg(c, h), h, "");
    *lo = LLVMBuildSelect(b, negative, neg(c, l), l, "");
}

/* the window's first bit for a's exponent, clamped to the table */
static LLVMValueRef window_start(TargetCtx *c, LLVMValueRef bits)
{
    LLVMBuilderRef b = c->b;
    LLVMTypeRef i64 = LLVMTypeOf(bits);
    LLVMValueRef first = LLVMBuildSub(b, shr(c, bits, 52), ik(i64, WINDOW_BIAS), "");
    LLVMValueRef below = LLVMBuildICmp(b, LLVMIntSLT, first, ik(i64, 0), "");
    first = LLVMBuildSelect(b, below, ik(i64, 0), first, "");
    LLVMValueRef above = LLVMBuildICmp(b, LLVMIntSGT, first, ik(i64, WINDOW_MAX), "");
    return LLVMBuildSelect(b, above, ik(i64, WINDOW_MAX), first, "");
}

/* |x| >= 2^30: Payne-Hanek (any a: the table index is clamped) */
static Reduced reduce_large(TargetCtx *c, LLVMValueRef a)
{
    LLVMBuilderRef b = c->b;
    LLVMValueRef bits = LLVMBuildBitCast(b, a, LLVMInt64TypeInContext(c->ctx), "");
    LLVMValueRef m = ior(c, mask(c, bits, (1ull << 52) - 1), ik(LLVMTypeOf(bits), 1ull << 52));
    LLVMValueRef w[3], p[3];
    window(c, window_start(c, bits), w);
    window_product(c, m, w, p);
    /* bits 191..190: the quadrant; 189..62 as a fraction, >= 1/2 taken as one quadrant more */
    LLVMValueRef g = ior(c, shl(c, p[0], 2), shr(c, p[1], 62));
    LLVMValueRef l = ior(c, shl(c, p[1], 2), shr(c, p[2], 62));
    LLVMValueRef f = ior(c, shl(c, ext128(c, g), 64), ext128(c, l));
    LLVMValueRef q = LLVMBuildAdd(b, shr(c, p[0], 62), shr(c, g, 63), "");
    Reduced r = {.q = LLVMBuildTrunc(b, q, LLVMInt32TypeInContext(c->ctx), "")};
    fraction_times_pio2(c, f, &r.hi, &r.lo);
    return r;
}

/* sin of hi + lo, |hi| <= pi/4 */
static LLVMValueRef sin_poly(TargetCtx *c, LLVMValueRef hi, LLVMValueRef lo)
{
    LLVMValueRef z = fp_mul(c, hi, hi);
    LLVMValueRef lo_cos = fp_fma(c, fp_mul(c, k(c, -0.5), z), lo, lo); /* lo cos hi */
    return fp_add(c, hi, fp_fma(c, fp_mul(c, hi, z), fp_poly(c, SIN_S, SIN_N, z), lo_cos));
}

/* cos of hi + lo, |hi| <= pi/4 */
static LLVMValueRef cos_poly(TargetCtx *c, LLVMValueRef hi, LLVMValueRef lo)
{
    LLVMValueRef z = fp_mul(c, hi, hi), z_lo = fp_fma(c, hi, hi, neg(c, z));
    LLVMValueRef half = fp_mul(c, k(c, 0.5), z), w = fp_sub(c, k(c, 1), half);
    LLVMValueRef w_err = fp_sub(c, fp_sub(c, fp_sub(c, k(c, 1), w), half), fp_mul(c, k(c, 0.5), z_lo));
    LLVMValueRef tail = fp_fma(c, fp_mul(c, z, z), fp_poly(c, COS_C, COS_N, z), neg(c, fp_mul(c, hi, lo)));
    return fp_add(c, w, fp_add(c, w_err, tail));
}

/* |x| = q pi/2 + hi + lo by the reduction its size needs */
static Reduced reduce(TargetCtx *c, LLVMValueRef a)
{
    LLVMBuilderRef b = c->b;
    LLVMValueRef big = LLVMBuildFCmp(b, LLVMRealUGE, a, k(c, CODY_WAITE_LIMIT), ""); /* NaN too */
    Reduced m = reduce_medium(c, a, big), l = reduce_large(c, a);
    return (Reduced){LLVMBuildSelect(b, big, l.hi, m.hi, ""), LLVMBuildSelect(b, big, l.lo, m.lo, ""),
                     LLVMBuildSelect(b, big, l.q, m.q, "")};
}

/* v with the sign of x flipped in (odd functions of x computed on |x|; -0 included) */
static LLVMValueRef odd_sign(TargetCtx *c, LLVMValueRef x, LLVMValueRef v)
{
    LLVMTypeRef i64 = LLVMInt64TypeInContext(c->ctx);
    LLVMValueRef sign = mask(c, LLVMBuildBitCast(c->b, x, i64, ""), 1ull << 63);
    v = LLVMBuildXor(c->b, LLVMBuildBitCast(c->b, v, i64, ""), sign, "");
    return LLVMBuildBitCast(c->b, v, LLVMTypeOf(x), "");
}

/* NaN for infinite or NaN x, else v */
static LLVMValueRef finite_or_nan(TargetCtx *c, LLVMValueRef a, LLVMValueRef v)
{
    LLVMValueRef finite = LLVMBuildFCmp(c->b, LLVMRealOLT, a, k(c, __builtin_inf()), "");
    return LLVMBuildSelect(c->b, finite, v, k(c, __builtin_nan("")), "");
}

/* tan x = sin r / cos r in even quadrants, -cos r / sin r in odd ones (about 1.5 ulp: each
 * within about half an ulp, then the division) */
LLVMValueRef target_tan_f64(TargetCtx *c, LLVMValueRef x)
{
    LLVMBuilderRef b = c->b;
    LLVMValueRef a = target_intrinsic1(c, "llvm.fabs", x);
    Reduced r = reduce(c, a);
    LLVMValueRef s = sin_poly(c, r.hi, r.lo), co = cos_poly(c, r.hi, r.lo);
    LLVMValueRef odd = LLVMBuildTrunc(b, r.q, LLVMInt1TypeInContext(c->ctx), "");
    LLVMValueRef v = LLVMBuildSelect(b, odd, LLVMBuildFDiv(b, neg(c, co), s, ""),
                                     LLVMBuildFDiv(b, s, co, ""), "");
    return finite_or_nan(c, a, odd_sign(c, x, v));
}

LLVMValueRef target_sincos_f64(TargetCtx *c, LLVMValueRef x, int is_cos)
{
    LLVMBuilderRef b = c->b;
    LLVMTypeRef i32 = LLVMInt32TypeInContext(c->ctx);
    LLVMValueRef a = target_intrinsic1(c, "llvm.fabs", x);
    Reduced r = reduce(c, a);
    LLVMValueRef hi = r.hi, lo = r.lo, q = r.q;
    if (is_cos) /* cos x = sin(x + pi/2) */
        q = LLVMBuildAdd(b, q, ik(i32, 1), "");
    LLVMValueRef odd = LLVMBuildTrunc(b, q, LLVMInt1TypeInContext(c->ctx), "");
    LLVMValueRef v = LLVMBuildSelect(b, odd, cos_poly(c, hi, lo), sin_poly(c, hi, lo), "");
    LLVMValueRef flip = LLVMBuildICmp(b, LLVMIntNE, mask(c, q, 2), ik(i32, 0), "");
    v = LLVMBuildSelect(b, flip, neg(c, v), v, "");
    if (!is_cos) /* sin(-x) = -sin x, -0 included */
        v = odd_sign(c, x, v);
    return finite_or_nan(c, a, v);
}
