/* spec_triton.c: built-ins Triton has that are compositions of other ops here, so they run on
 * every backend without IR ops of their own: swizzle2d (the grouped program order of a
 * matmul), histogram (one-hot comparisons summed, or for many bins a product of two one-hot
 * matrices, on the tensor cores where there are some), gather (one-hot along the gathered axis) and xor_sum (a tree
 * of xors, spec_combine.c). Arguments are checked by spec_builtins.c. */
#include <string.h>
#include "spec.h"

static Val bin(Spec *s, OpKind op, Val a, Val b, SrcLoc at) { return spec_binary(s, op, a, b, at); }

static Val cint(int64_t v) { return val_const_int(ET_I32, v, 1); }

/* where(c, a, b) of broadcast values; a constant c picks one. */
static Val select3(Spec *s, Val c, Val a, Val b, SrcLoc at)
{
    if (c.kind == V_ERROR || a.kind == V_ERROR || b.kind == V_ERROR)
        return val_error();
    if (c.kind == V_CONST)
        return c.i ? a : b;
    ElemKind et = spec_promote(&a, &b);
    Val all[3] = {c, a, b};
    int rank, shape[TIR_MAX_RANK];
    if (!spec_broadcast_shape(s, all, 3, &rank, shape, at))
        return val_error();
    TirValue *ops[3] = {spec_materialize(s, c, ET_BOOL, rank, shape, at),
                        spec_materialize(s, a, et, rank, shape, at),
                        spec_materialize(s, b, et, rank, shape, at)};
    if (!ops[0] || !ops[1] || !ops[2])
        return val_error();
    return val_tile(spec_emit(s, TIR_SELECT, at, ops, 3, tir_type_make(et, rank, shape)));
}

static Val pair(Spec *s, Val a, Val b)
{
    Val r = {.kind = V_TUPLE, .nitems = 2};
    r.items = arena_alloc(s->arena, sizeof(Val) * 2);
    if (!r.items || a.kind == V_ERROR || b.kind == V_ERROR)
        return val_error();
    r.items[0] = a, r.items[1] = b;
    return r;
}

/* Triton's tl.swizzle2d, step by step (integer / and % truncate, as Triton's do on tensors):
 * the row-major index ij of (i, j) falls in group ij / (size_g * size_j) of size_g rows (the
 * last group may have fewer); within it the index runs down the group's rows first. */
Val spec_swizzle2d(Spec *s, const Val *v, SrcLoc at)
{
    Val i = v[0], j = v[1], size_i = v[2], size_j = v[3], size_g = v[4];
    Val ij = bin(s, OP_ADD, bin(s, OP_MUL, i, size_j, at), j, at);
    Val size_gj = bin(s, OP_MUL, size_g, size_j, at);
    Val off_i = bin(s, OP_MUL, bin(s, OP_DIV, ij, size_gj, at), size_g, at);
    Val rows = bin(s, OP_SUB, size_i, off_i, at);
    Val g = select3(s, bin(s, OP_LT, rows, size_g, at), rows, size_g, at);
    ij = bin(s, OP_REM, ij, size_gj, at);
    Val new_i = bin(s, OP_ADD, off_i, bin(s, OP_REM, ij, g, at), at);
    return pair(s, new_i, bin(s, OP_DIV, ij, g, at));
}

/* arange(0, n) as a tile of `rank` dims, n long along dim d and 1 along the others. */
static TirValue *arange_along(Spec *s, int n, int rank, int d, SrcLoc at)
{
    TirValue *r = spec_emit(s, TIR_ARANGE, at, NULL, 0, tir_type_make(ET_I32, 1, &n));
    r->def->attr.i = 0, r->def->attr.i2 = n;
    int shape[TIR_MAX_RANK + 1];
    for (int k = 0; k < rank; k++)
        shape[k] = k == d ? n : 1;
    return spec_reshape(s, r, rank, shape, at);
}

static TirValue *reduce_along(Spec *s, TirValue *x, TirReduce kind, int axis, SrcLoc at)
{
    TirType t = x->type;
    memmove(t.shape + axis, t.shape + axis + 1, sizeof(int) * (size_t)(t.rank - axis - 1));
    t.rank--;
    TirValue *r = spec_emit(s, TIR_REDUCE, at, &x, 1, t);
    r->def->attr.i = kind;
    r->def->attr.i2 = axis;
    return r;
}

/* Elements of one one-hot comparison tile, at most (32 registers per thread at 4 warps). */
enum { HIST_ONE_HOT = 4096 };

/* x [n] -> its even and odd elements, [n / 2] each */
static void halves(Spec *s, TirValue *x, int n, TirValue **even, TirValue **odd, SrcLoc at)
{
    TirValue *p = spec_reshape(s, x, 2, (const int[]){n / 2, 2}, at);
    TirType t = tir_type_make(x->type.elem, 1, (const int[]){n / 2});
    TirType types[2] = {t, t};
    TirOp *op = tir_op_append(s->k, s->block, TIR_SPLIT, at, &p, 1, types, 2);
    *even = op->results[0], *odd = op->results[1];
}

/* [rows, cols] bool -> f16 0/1 */
static TirValue *one_hot(Spec *s, TirValue *v, int rows, int cols, int d, int n, SrcLoc at)
{
    int shape[2] = {d ? n : 1, d ? 1 : n};
    TirValue *x = spec_reshape(s, v, 2, shape, at);
    Val hit = bin(s, OP_EQ, val_tile(x), val_tile(arange_along(s, d ? cols : rows, 2, d, at)), at);
    return spec_materialize(s, hit, ET_F16, 2, (const int[]){rows, cols}, at);
}

/* acc [H, L] f32 plus the counts of bins b = hi * L + lo among x [n] (i32; -1 for values not
 * counted): one-hot f16 matrices [H, n] @ [n, L] (exact: counts stay below 2^24), in chunks
 * of elements that keep each within HIST_ONE_HOT: while too large, x's even and odd elements
 * are counted apart (the order of the elements does not matter to a count). */
static TirValue *count_dot(Spec *s, TirValue *x, int n, int h, int l, TirValue *acc, SrcLoc at)
{
    if ((int64_t)n * (h > l ? h : l) > HIST_ONE_HOT && n > 16) {
        TirValue *even, *odd;
        halves(s, x, n, &even, &odd, at);
        acc = count_dot(s, even, n / 2, h, l, acc, at);
        return acc ? count_dot(s, odd, n / 2, h, l, acc, at) : NULL;
    }
    int lo_bits = 0;
    while ((1 << lo_bits) < l)
        lo_bits++;
    /* -1 >> lo_bits is -1, matching no row; its low bits match a column, which the row's 0s
     * cancel */
    Val hi = bin(s, OP_SHR, val_tile(x), cint(lo_bits), at);
    Val lo = bin(s, OP_BITAND, val_tile(x), cint(l - 1), at);
    if (hi.kind != V_TILE || lo.kind != V_TILE)
        return NULL;
    TirValue *ops[3] = {one_hot(s, hi.v, h, n, 0, n, at), one_hot(s, lo.v, n, l, 1, n, at), acc};
    if (!ops[0] || !ops[1])
        return NULL;
    TirValue *c = spec_emit(s, TIR_DOT, at, ops, 3, tir_type_make(ET_F32, 2, (const int[]){h, l}));
    c->def->attr.i = DOT_IEEE;
    return c;
}

/* counts [B] i32 of x [n] as above: one-hot comparisons with every bin summed over the
 * elements where that tile is small, else count_dot. */
static TirValue *count(Spec *s, TirValue *x, int n, int bins, SrcLoc at)
{
    if ((int64_t)n * bins <= HIST_ONE_HOT) {
        TirValue *col = spec_reshape(s, x, 2, (const int[]){n, 1}, at);
        Val hit = bin(s, OP_EQ, val_tile(col), val_tile(arange_along(s, bins, 2, 1, at)), at);
        TirValue *ones = spec_materialize(s, hit, ET_I32, 2, (const int[]){n, bins}, at);
        return ones ? reduce_along(s, ones, RED_SUM, 0, at) : NULL;
    }
    int b = 0;
    while ((1 << b) < bins)
        b++;
    int l = 1 << ((b + 1) / 2), h = bins / l;
    TirValue *acc = spec_materialize(s, val_const_float(ET_F32, 0, 0), ET_F32, 2, (const int[]){h, l}, at);
    acc = acc ? count_dot(s, x, n, h, l, acc, at) : NULL;
    return acc ? spec_reshape(s, spec_cast(s, acc, ET_I32, at), 1, &bins, at) : NULL;
}

/* histogram(x, bins [, mask]): x an integer tile, mask NULL or bool of x's shape. Values
 * outside 0..bins-1 and masked-off elements are not counted. */
Val spec_histogram(Spec *s, TirValue *x, int bins, TirValue *mask, SrcLoc at)
{
    int n = tir_type_numel(&x->type);
    ElemKind k = x->type.elem;
    /* in a type that holds every value of x and bins itself (u32 and u64 in i64: a u64 past
     * 2^63 turns negative, out of range as it should be) */
    ElemKind wide = et_bits(k) < 32 || (et_bits(k) == 32 && et_is_signed(k)) ? ET_I32 : ET_I64;
    TirValue *flat = spec_reshape(s, spec_cast(s, x, wide, at), 1, &n, at);
    Val v = val_tile(flat);
    Val valid = bin(s, OP_LOGAND, bin(s, OP_GE, v, cint(0), at),
                    bin(s, OP_LT, v, val_const_int(wide, bins, 1), at), at);
    if (mask)
        valid = bin(s, OP_LOGAND, valid, val_tile(spec_reshape(s, mask, 1, &n, at)), at);
    Val counted = select3(s, valid, val_tile(spec_cast(s, flat, ET_I32, at)), cint(-1), at);
    if (counted.kind != V_TILE)
        return val_error();
    TirValue *r = count(s, counted.v, n, bins, at);
    return r ? val_tile(r) : val_error();
}

/* The unsigned integer type of k's width (bool: u8), so a one-hot max picks bits exactly. */
static ElemKind bits_type(ElemKind k)
{
    switch (et_bits(k)) {
    case 1: case 8: return ET_U8;
    case 16: return ET_U16;
    case 32: return ET_U32;
    default: return ET_U64;
    }
}

static TirValue *as_bits(Spec *s, TirValue *x, ElemKind to, SrcLoc at)
{
    if (x->type.elem == ET_BOOL || x->type.elem == to)
        return spec_cast(s, x, to, at);
    TirType t = x->type;
    t.elem = to;
    TirValue *r = spec_emit(s, TIR_CAST, at, &x, 1, t);
    r->def->attr.i = CAST_BITS;
    return r;
}

/* gather(src, index, axis): out[..., i, ...] = src[..., index[..., i, ...], ...] along axis,
 * out of index's shape. A tile of rank + 1 dims holds, for each output element and each k
 * along the axis, src's element k where the index is k, else 0 (in src's bits as unsigned);
 * the maximum over k is the one picked (0 for an index out of range). */
Val spec_gather(Spec *s, TirValue *src, TirValue *index, int axis, SrcLoc at)
{
    int rank = src->type.rank, kn = src->type.shape[axis];
    ElemKind et = src->type.elem, ut = bits_type(et);
    int ishape[TIR_MAX_RANK + 1], sshape[TIR_MAX_RANK + 1];
    for (int d = 0, e = 0; d <= rank; d++) { /* index: 1 after the axis; src: 1 before its axis */
        ishape[d] = d == axis + 1 ? 1 : index->type.shape[e];
        sshape[d] = d == axis ? 1 : src->type.shape[d < axis ? d : d - 1];
        e += d != axis + 1;
    }
    TirValue *ix = spec_reshape(s, index, rank + 1, ishape, at);
    TirValue *sx = spec_reshape(s, as_bits(s, src, ut, at), rank + 1, sshape, at);
    Val hit = bin(s, OP_EQ, val_tile(ix), val_tile(arange_along(s, kn, rank + 1, axis + 1, at)), at);
    Val picked = select3(s, hit, val_tile(sx), val_const_int(ut, 0, 1), at);
    if (picked.kind != V_TILE)
        return val_error();
    TirValue *r = reduce_along(s, picked.v, RED_MAX, axis + 1, at);
    if (et == ET_BOOL)
        return bin(s, OP_NE, val_tile(r), val_const_int(ut, 0, 1), at);
    return val_tile(et == ut ? r : as_bits(s, r, et, at));
}
