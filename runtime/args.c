/* args.c: launch arguments. Checks their count and kinds against a kernel's runtime params
 * (before anything is compiled), pointers against the context's allocated and borrowed
 * memory (a kernel given anything else would read or write memory it does not own), and
 * converts them to the parameter types of a compiled specialization: integers range-checked,
 * floats rounded to f16/bf16/f32/f64 (a finite value that would round to infinity is out of
 * range; fp8 saturates, as the language's conversions do). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "fp8.h"
#include "runtime_internal.h"

static const char *kind_name(tile_ArgKind kind)
{
    return kind == TILE_ARG_PTR ? "a pointer" : kind == TILE_ARG_INT ? "an integer" : "a float";
}

static tile_Status arg_error(tile_Kernel *k, int i, const char *fmt, const char *a,
                             const char *b)
{
    char what[256];
    snprintf(what, sizeof what, fmt, a, b);
    return rt_error(k->mod->ctx, TILE_ERROR_INVALID_ARGUMENT,
                    "launch of '%s': argument %d ('%s') %s", k->func->name, i + 1,
                    k->params[i].name, what);
}

/* What kind of tile_Arg a parameter wants, as words. */
static const char *wanted(const KParam *p)
{
    return p->is_ptr ? "a pointer" : et_is_float(p->elem) ? "a number" : "an integer";
}

static int int_range(ElemKind t, int64_t v)
{
    switch (t) {
    case ET_BOOL: return v == 0 || v == 1;
    case ET_I8: return v >= INT8_MIN && v <= INT8_MAX;
    case ET_I16: return v >= INT16_MIN && v <= INT16_MAX;
    case ET_I32: return v >= INT32_MIN && v <= INT32_MAX;
    case ET_U8: return v >= 0 && v <= UINT8_MAX;
    case ET_U16: return v >= 0 && v <= UINT16_MAX;
    case ET_U32: return v >= 0 && v <= (int64_t)UINT32_MAX;
    default: return 1; /* i64; u64 takes the 64 bits as they are (tile_u64: from 2^63 up) */
    }
}

static tile_Status range_check(tile_Kernel *k, int i, ElemKind t, int64_t v)
{
    if (int_range(t, v))
        return TILE_OK;
    char text[32];
    snprintf(text, sizeof text, "%lld", (long long)v);
    return arg_error(k, i, "is %s, out of range for %s", text, et_name(t));
}

/* A finite number whose rounding to t is infinite does not fit t (inf and nan pass as they
 * are; f64 holds every double; fp8 saturates). */
static int float_range(ElemKind t, double v)
{
    if (!isfinite(v))
        return 1;
    switch (t) {
    case ET_F16: return (rt_f16_bits(v) & 0x7fff) != 0x7c00;
    case ET_BF16: return (rt_bf16_bits(v) & 0x7fff) != 0x7f80;
    case ET_F32: return isfinite((float)v);
    default: return 1;
    }
}

static tile_Status float_check(tile_Kernel *k, int i, ElemKind t, const tile_Arg *a)
{
    double v = a->kind == TILE_ARG_INT ? (double)a->v.i : a->v.f;
    if (float_range(t, v))
        return TILE_OK;
    char text[40];
    snprintf(text, sizeof text, "%.17g", v);
    return arg_error(k, i, "is %s, out of range for %s", text, et_name(t));
}

/* A pointer argument must point into a tile_malloc allocation or a borrowed range of the
 * kernel's context (an offset into one is fine). */
static tile_Status pointer_check(tile_Kernel *k, int i, tile_DevPtr p)
{
    RtRange g;
    char text[40];
    snprintf(text, sizeof text, "0x%llx", (unsigned long long)p);
    if (!p)
        return arg_error(k, i, "is a null pointer%s%s", "", "");
    if (!rt_alloc_of(k->mod->ctx, p, &g))
        return arg_error(k, i, "is %s, which was not allocated by tile_malloc%s",
                         text, " nor borrowed (tile_borrow) on this context");
    return TILE_OK;
}

tile_Status rt_args_check(tile_Kernel *k, const tile_Arg *args, int nargs)
{
    if (nargs != k->nparams)
        return rt_error(k->mod->ctx, TILE_ERROR_INVALID_ARGUMENT,
                        "launch of '%s': expected %d argument%s, got %d", k->func->name,
                        k->nparams, k->nparams == 1 ? "" : "s", nargs);
    for (int i = 0; i < nargs; i++) {
        const KParam *p = &k->params[i];
        tile_ArgKind a = args[i].kind;
        if (a != TILE_ARG_PTR && a != TILE_ARG_INT && a != TILE_ARG_FLOAT)
            return arg_error(k, i, "has an invalid kind%s%s", "", "");
        int ok = p->is_ptr ? a == TILE_ARG_PTR
               : p->elem == ET_VOID ? a != TILE_ARG_PTR /* type decided by the compiler */
               : et_is_float(p->elem) ? a != TILE_ARG_PTR
                                      : a == TILE_ARG_INT;
        if (!ok)
            return arg_error(k, i, "expects %s, got %s", wanted(p), kind_name(a));
        if (p->is_ptr) {
            tile_Status st = pointer_check(k, i, args[i].v.ptr);
            if (st != TILE_OK)
                return st;
        }
        tile_Status st = TILE_OK;
        if (et_is_int(p->elem) || p->elem == ET_BOOL)
            st = range_check(k, i, p->elem, args[i].v.i);
        else if (et_is_float(p->elem))
            st = float_check(k, i, p->elem, &args[i]);
        if (st != TILE_OK)
            return st;
    }
    return TILE_OK;
}

/* ---- small floats: round to nearest even from the double's bits ---- */
static uint16_t small_float_bits(double x, int ebits, int mbits)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    uint16_t sign = (uint16_t)((b >> 63) << (ebits + mbits));
    int exp = (int)((b >> 52) & 0x7ff), bias = (1 << (ebits - 1)) - 1;
    uint64_t mant = b & ((1ULL << 52) - 1);
    uint32_t inf = (uint32_t)((1 << ebits) - 1) << mbits;
    if (exp == 0x7ff) /* inf, nan (quiet) */
        return (uint16_t)(sign | inf | (mant ? 1u << (mbits - 1) : 0));
    if (exp == 0) /* double subnormals are far below the smallest small float */
        return sign;
    int e = exp - 1023 + bias, shift = 52 - mbits;
    uint64_t m = mant | 1ULL << 52;
    if (e <= 0) { /* subnormal result */
        shift += 1 - e;
        e = 0;
    }
    if (shift > 62)
        return sign;
    uint64_t q = m >> shift, rem = m & ((1ULL << shift) - 1), half = 1ULL << (shift - 1);
    if (rem > half || (rem == half && (q & 1)))
        q++;
    /* normal: the implicit bit of q adds one to the exponent field; a carry out of the
     * mantissa moves on into the exponent, as it should */
    uint64_t r = e ? ((uint64_t)(e - 1) << mbits) + q : q;
    return (uint16_t)(sign | (r >= inf ? inf : r));
}

uint16_t rt_f16_bits(double x) { return small_float_bits(x, 5, 10); }
uint16_t rt_bf16_bits(double x) { return small_float_bits(x, 8, 7); }

/* ---- packing ---- */
static void store(uint64_t *slot, const void *v, size_t n)
{
    *slot = 0;
    memcpy(slot, v, n); /* little-endian: the value sits at the slot's address */
}

static void pack_int(ElemKind t, int64_t v, uint64_t *slot)
{
    int8_t i8 = (int8_t)v;
    int16_t i16 = (int16_t)v;
    int32_t i32 = (int32_t)v;
    switch (et_bytes(t)) {
    case 1: store(slot, &i8, 1); break;
    case 2: store(slot, &i16, 2); break;
    case 4: store(slot, &i32, 4); break;
    default: store(slot, &v, 8); break;
    }
}

static void pack_float(ElemKind t, double v, uint64_t *slot)
{
    float f = (float)v;
    uint16_t h = t == ET_F16 ? rt_f16_bits(v) : rt_bf16_bits(v);
    uint8_t q = et_is_fp8(t) ? fp8_from_f32(f, t) : 0;
    switch (t) {
    case ET_F16: case ET_BF16: store(slot, &h, 2); break;
    case ET_F32: store(slot, &f, 4); break;
    case ET_F8E4M3: case ET_F8E5M2: store(slot, &q, 1); break;
    default: store(slot, &v, 8); break;
    }
}

static tile_Status pack_one(tile_Kernel *k, int i, ElemKind t, const tile_Arg *a, uint64_t *slot)
{
    if (t == ET_PTR) {
        if (a->kind != TILE_ARG_PTR)
            return arg_error(k, i, "expects a pointer, got %s%s", kind_name(a->kind), "");
        store(slot, &a->v.ptr, 8);
    } else if (et_is_float(t)) {
        if (a->kind == TILE_ARG_PTR)
            return arg_error(k, i, "expects a number, got %s%s", kind_name(a->kind), "");
        tile_Status st = float_check(k, i, t, a);
        if (st != TILE_OK)
            return st;
        pack_float(t, a->kind == TILE_ARG_INT ? (double)a->v.i : a->v.f, slot);
    } else {
        if (a->kind != TILE_ARG_INT)
            return arg_error(k, i, "expects an integer, got %s%s", kind_name(a->kind), "");
        tile_Status st = range_check(k, i, t, a->v.i);
        if (st != TILE_OK)
            return st;
        pack_int(t, a->v.i, slot);
    }
    return TILE_OK;
}

tile_Status rt_args_pack(tile_Kernel *k, const Spec *s, const tile_Arg *args,
                         tile_DevPtr debug_buf, uint64_t *slots, void **ptrs)
{
    if (s->nparams != k->nparams)
        return rt_error(k->mod->ctx, TILE_ERROR_COMPILE,
                        "launch of '%s': the compiled kernel has %d runtime params, the source %d",
                        k->func->name, s->nparams, k->nparams);
    for (int i = 0; i < s->nparams; i++) {
        tile_Status st = pack_one(k, i, s->elems[i], &args[i], &slots[i]);
        if (st != TILE_OK)
            return st;
        ptrs[i] = &slots[i];
    }
    if (s->nsites) {
        store(&slots[s->nparams], &debug_buf, 8);
        ptrs[s->nparams] = &slots[s->nparams];
    }
    return TILE_OK;
}
