/* spec_blockptr.c: block pointers, as Triton's tl.make_block_ptr and tl.advance, and loads and
 * stores through them. A block pointer exists only during specialization: a record of run-time
 * scalars (a base pointer; per dim a shape, a stride and an offset) and a constant block shape.
 * A load or store of one is a load or store of the pointer tile
 *     base + sum_d (offset_d + arange(0, B_d)) * stride_d
 * masked, along the dims boundary_check names, by 0 <= offset_d + i < shape_d. So every later
 * pass and backend sees pointer tiles and masks only: an offset that a loop advances is a
 * carried integer, which the induction pass turns into a function of the loop variable. */
#include <math.h>
#include <string.h>
#include "spec.h"

/* items: [0] the base, then rank shapes, rank strides, rank offsets, rank block sizes */
enum { BP_SHAPE, BP_STRIDE, BP_OFFSET, BP_BLOCK };

static Val *item(const Val *bp, int kind, int d) { return &bp->items[1 + kind * bp->i + d]; }

int spec_bp_rank(const Val *bp) { return (int)bp->i; }
int spec_bp_nparts(const Val *bp) { return 1 + 3 * (int)bp->i; }
Val spec_bp_part(const Val *bp, int i) { return bp->items[i]; }
int spec_bp_is_offset(const Val *bp, int i) { return i >= 1 + 2 * bp->i && i < 1 + 3 * bp->i; }

static ElemKind bp_elem(const Val *bp) { return bp->items[0].v->type.pointee; }

static Val bp_new(Spec *s, int rank) {
    Val r = {.kind = V_BLOCKPTR, .i = rank, .nitems = 1 + 4 * rank};
    r.items = arena_alloc(s->arena, sizeof(Val) * (size_t)r.nitems);
    return r.items ? r : val_error();
}

Val spec_bp_with_part(Spec *s, const Val *bp, int i, Val part) {
    Val r = bp_new(s, (int)bp->i);
    if (r.kind == V_ERROR) return r;
    memcpy(r.items, bp->items, sizeof(Val) * (size_t)bp->nitems);
    r.items[i] = part;
    return r;
}

int spec_bp_same_block(const Val *a, const Val *b) {
    if (a->i != b->i || bp_elem(a) != bp_elem(b)) return 0;
    for (int d = 0; d < a->i; d++)
        if (item(a, BP_BLOCK, d)->i != item(b, BP_BLOCK, d)->i) return 0;
    return 1;
}

/* ---- make_block_ptr(base, shape, strides, offsets, block_shape [, order]) ---- */

/* The entries of list argument i (one value: a list of one). */
static int list_items(Args *a, int i, const Val **items) {
    if (a->v[i].kind == V_LIST) {
        *items = a->v[i].items;
        return a->v[i].nitems;
    }
    *items = &a->v[i];
    return 1;
}

static const char *const arg_names[] = {"base", "shape", "strides", "offsets", "block_shape", "order"};

static int block_shape(Spec *s, Args *a, int *rank, int *shape) {
    const Val *it;
    int n = list_items(a, 4, &it);
    if (n < 1 || n > TIR_MAX_RANK) {
        diag_error(s->diags, a->e[4]->loc, "make_block_ptr(): block_shape has %d dims (1 to %d)", n, TIR_MAX_RANK);
        return 0;
    }
    for (int d = 0; d < n; d++) {
        if (it[d].kind != V_CONST || !et_is_int(it[d].ct)) {
            diag_error(s->diags, a->e[4]->loc, "make_block_ptr(): block_shape must be compile-time "
                       "integers (a tile's shape is fixed when the kernel compiles), got %s for dim %d",
                       val_type_str(s, &it[d]), d);
            return 0;
        }
        if (it[d].i <= 0 || (it[d].i & (it[d].i - 1)) || it[d].i > SPEC_MAX_NUMEL) {
            diag_error(s->diags, a->e[4]->loc, "make_block_ptr(): block_shape dims must be powers of two "
                       "up to %d, got %lld for dim %d", SPEC_MAX_NUMEL, (long long)it[d].i, d);
            return 0;
        }
        shape[d] = (int)it[d].i;
    }
    *rank = n;
    return spec_check_numel(s, n, shape, a->e[4]->loc);
}

/* shape, strides or offsets (slot i): one integer scalar per dim. */
static int scalar_list(Spec *s, Args *a, int i, int rank, Val *out) {
    const Val *it;
    int n = list_items(a, i, &it);
    if (n != rank) {
        diag_error(s->diags, a->e[i]->loc, "make_block_ptr(): %s has %d entr%s, block_shape %d dim%s "
                   "(one per dim)", arg_names[i], n, n == 1 ? "y" : "ies", rank, rank == 1 ? "" : "s");
        return 0;
    }
    for (int d = 0; d < n; d++) {
        if (!val_is_value(&it[d]) || val_rank(&it[d]) != 0 || !et_is_int(val_elem(&it[d]))) {
            diag_error(s->diags, a->e[i]->loc, "make_block_ptr(): %s[%d] must be an integer scalar, got %s",
                       arg_names[i], d, val_type_str(s, &it[d]));
            return 0;
        }
        out[d] = it[d];
    }
    return 1;
}

/* An offset as the block pointer keeps it: i64 when it is 64-bit (or u32, or a constant past
 * i32), else i32; advance() keeps that type. */
static Val offset_value(Spec *s, Val v, SrcLoc loc) {
    if (v.kind == V_CONST) return val_const_int(tc_int_fits(ET_I32, v.i) ? ET_I32 : ET_I64, v.i, 0);
    ElemKind et = val_elem(&v);
    return val_tile(spec_cast(s, v.v, et_bits(et) == 64 || et == ET_U32 ? ET_I64 : ET_I32, loc));
}

/* "(1, 0)": list argument i as written, for messages. */
static const char *list_text(Spec *s, Args *a, int i) {
    const Val *it;
    int n = list_items(a, i, &it);
    char *t = arena_strdup(s->arena, "(");
    for (int d = 0; d < n; d++)
        t = arena_printf(s->arena, "%s%s%s", t, d ? ", " : "",
                         it[d].kind == V_CONST && et_is_int(it[d].ct) ? arena_printf(s->arena, "%lld", (long long)it[d].i)
                                                                     : val_type_str(s, &it[d]));
    return arena_printf(s->arena, "%s)", t);
}

static int check_order(Spec *s, Args *a, int rank) {
    if (!a->e[5]) return 1;
    const Val *it;
    int n = list_items(a, 5, &it), seen[TIR_MAX_RANK] = {0}, ok = n == rank;
    for (int d = 0; d < n && ok; d++) {
        ok = it[d].kind == V_CONST && et_is_int(it[d].ct) && it[d].i >= 0 && it[d].i < rank && !seen[it[d].i];
        if (ok) seen[it[d].i] = 1;
    }
    if (!ok)
        diag_error(s->diags, a->e[5]->loc, "make_block_ptr(): order must list each dim from 0 to %d once "
                   "(compile-time integers, the fastest-varying dim first), got %s", rank - 1, list_text(s, a, 5));
    return ok;
}

Val spec_make_block_ptr(Spec *s, Args *a) {
    Val base = a->v[0];
    if (base.kind != V_TILE || base.v->type.rank != 0 || base.v->type.elem != ET_PTR) {
        diag_error(s->diags, a->e[0]->loc, "make_block_ptr() needs a pointer as its base (not a tile of "
                   "pointers), got %s", val_type_str(s, &base));
        return val_error();
    }
    int rank, shape[TIR_MAX_RANK];
    if (!block_shape(s, a, &rank, shape)) return val_error();
    Val r = bp_new(s, rank);
    if (r.kind == V_ERROR) return r;
    r.items[0] = base;
    for (int k = BP_SHAPE; k <= BP_OFFSET; k++)
        if (!scalar_list(s, a, 1 + k, rank, item(&r, k, 0))) return val_error();
    if (!check_order(s, a, rank)) return val_error();
    for (int d = 0; d < rank; d++) {
        *item(&r, BP_OFFSET, d) = offset_value(s, *item(&r, BP_OFFSET, d), a->e[3]->loc);
        *item(&r, BP_BLOCK, d) = val_const_int(ET_I32, shape[d], 0);
    }
    return r;
}

/* ---- advance(bp, offsets) ---- */

static int need_block_ptr(Spec *s, Args *a) {
    if (a->v[0].kind == V_BLOCKPTR) return 1;
    diag_error(s->diags, a->e[0]->loc, "%s() needs a block pointer (from make_block_ptr), got %s",
               a->call->name, val_type_str(s, &a->v[0]));
    return 0;
}

Val spec_advance(Spec *s, Args *a) {
    if (!need_block_ptr(s, a)) return val_error();
    Val bp = a->v[0], r = spec_bp_with_part(s, &bp, 0, bp.items[0]); /* a copy, offsets replaced below */
    int rank = spec_bp_rank(&bp);
    const Val *it;
    int n = list_items(a, 1, &it);
    if (n != rank) {
        diag_error(s->diags, a->e[1]->loc, "advance(): %d offset%s for a block pointer of rank %d", n,
                   n == 1 ? "" : "s", rank);
        return val_error();
    }
    for (int d = 0; d < rank && r.kind != V_ERROR; d++) {
        Val off = *item(&bp, BP_OFFSET, d), delta = it[d];
        ElemKind et = val_elem(&off);
        if (!val_is_value(&delta) || val_rank(&delta) != 0 || !et_is_int(val_elem(&delta))) {
            diag_error(s->diags, a->e[1]->loc, "advance(): offset %d must be an integer scalar, got %s", d,
                       val_type_str(s, &delta));
            return val_error();
        }
        if (delta.kind == V_CONST && !tc_int_fits(et, delta.i)) {
            diag_error(s->diags, a->e[1]->loc, "advance(): %lld does not fit the block pointer's %s offsets",
                       (long long)delta.i, et_name(et));
            return val_error();
        }
        delta = delta.kind == V_CONST ? val_const_int(et, delta.i, 0) : val_tile(spec_cast(s, delta.v, et, a->e[1]->loc));
        Val sum = spec_binary(s, OP_ADD, off, delta, a->e[1]->loc);
        if (sum.kind == V_ERROR) return sum;
        *item(&r, BP_OFFSET, d) = sum;
    }
    return r;
}

/* ---- loads and stores ---- */

/* offset_d + arange(0, B_d), with size-1 dims around it to make it rank `rank`. */
static Val block_index(Spec *s, const Val *bp, int d, SrcLoc loc) {
    int n = (int)item(bp, BP_BLOCK, d)->i, rank = spec_bp_rank(bp);
    TirValue *ar = spec_emit(s, TIR_ARANGE, loc, NULL, 0, tir_type_make(ET_I32, 1, &n));
    ar->def->attr.i = 0;
    ar->def->attr.i2 = n;
    Val idx = spec_binary(s, OP_ADD, *item(bp, BP_OFFSET, d), val_tile(ar), loc);
    if (idx.kind == V_ERROR) return idx;
    TirValue *v = idx.v;
    for (int k = 0; k < rank && v; k++)
        if (k != d) v = spec_expand_dims(s, v, k, loc);
    return val_tile(v);
}

/* base + sum_d index_d * stride_d, a pointer tile of the block's shape; *mask (NULL: none) the
 * bounds of the dims in `checked`. */
static TirValue *block_pointers(Spec *s, const Val *bp, const int *checked, TirValue **mask, SrcLoc loc) {
    int rank = spec_bp_rank(bp), shape[TIR_MAX_RANK];
    Val p = bp->items[0], m = {.kind = V_VOID};
    for (int d = 0; d < rank; d++) {
        shape[d] = (int)item(bp, BP_BLOCK, d)->i;
        Val idx = block_index(s, bp, d, loc);
        p = spec_binary(s, OP_ADD, p, spec_binary(s, OP_MUL, idx, *item(bp, BP_STRIDE, d), loc), loc);
        if (!checked[d] || p.kind == V_ERROR) continue;
        Val off = *item(bp, BP_OFFSET, d);
        Val in = spec_binary(s, OP_LT, idx, *item(bp, BP_SHAPE, d), loc);
        if (off.kind != V_CONST || off.i < 0) /* a constant offset of 0 or more needs no lower bound */
            in = spec_binary(s, OP_LOGAND, spec_binary(s, OP_GE, idx, val_const_int(ET_I32, 0, 1), loc), in, loc);
        m = m.kind == V_VOID ? in : spec_binary(s, OP_LOGAND, m, in, loc);
    }
    if (p.kind == V_ERROR || m.kind == V_ERROR) return NULL;
    *mask = m.kind == V_VOID ? NULL : spec_materialize(s, m, ET_BOOL, rank, shape, loc);
    return m.kind == V_VOID || *mask ? p.v : NULL; /* p has the block's shape: every dim added */
}

/* boundary_check (slot i): the dims it names, each once; checked[d] set for each. */
static int boundary_dims(Spec *s, Args *a, int i, int rank, int *checked) {
    memset(checked, 0, sizeof(int) * TIR_MAX_RANK);
    if (!a->e[i]) return 1;
    const Val *it;
    int n = list_items(a, i, &it);
    for (int k = 0; k < n; k++) {
        if (it[k].kind != V_CONST || !et_is_int(it[k].ct)) {
            diag_error(s->diags, a->e[i]->loc, "%s(): boundary_check lists dims as compile-time integers, got %s",
                       a->call->name, val_type_str(s, &it[k]));
            return 0;
        }
        if (it[k].i < 0 || it[k].i >= rank) {
            diag_error(s->diags, a->e[i]->loc, "%s(): boundary_check dim %lld is out of range for a block "
                       "pointer of rank %d (dims 0 to %d)", a->call->name, (long long)it[k].i, rank, rank - 1);
            return 0;
        }
        if (checked[it[k].i]) {
            diag_error(s->diags, a->e[i]->loc, "%s(): boundary_check names dim %lld twice", a->call->name,
                       (long long)it[k].i);
            return 0;
        }
        checked[it[k].i] = 1;
    }
    return 1;
}

/* mask= and other= (slots first..last) are refused with a block pointer; None (their default,
 * which Triton's positional calls pass) is no mask. */
static int no_mask(Spec *s, Args *a, int first, int last) {
    for (int i = first; i <= last; i++)
        if (a->e[i] && a->e[i]->kind != EX_NONE) {
            diag_error(s->diags, a->e[i]->loc, "%s() of a block pointer takes no mask= or other=: its bounds "
                       "are make_block_ptr's shape, checked along the dims boundary_check= names, and "
                       "padding_option= gives the value outside them (Triton refuses them too)", a->call->name);
            return 0;
        }
    return 1;
}

/* padding_option (slot 4): "zero" (the default) or "nan" (float elements only). */
static int padding(Spec *s, Args *a, ElemKind et, Val *pad) {
    *pad = val_const_int(ET_I32, 0, 1);
    if (!a->e[4]) return 1;
    const char *what = a->e[4]->kind == EX_STRING ? a->e[4]->name : NULL;
    if (what && strcmp(what, "zero") == 0) return 1;
    if (!what || strcmp(what, "nan") != 0) {
        diag_error(s->diags, a->e[4]->loc, "load() takes padding_option= as \"zero\" or \"nan\", got %s",
                   what ? arena_printf(s->arena, "\"%s\"", what) : val_type_str(s, &a->v[4]));
        return 0;
    }
    if (!et_is_float(et)) {
        diag_error(s->diags, a->e[4]->loc, "load(): padding_option=\"nan\" needs float elements, and the "
                   "block pointer's are %s", et_name(et));
        return 0;
    }
    *pad = val_const_float(ET_F32, NAN, 1);
    return 1;
}

TirType spec_bp_type(const Val *bp) {
    int shape[TIR_MAX_RANK], rank = spec_bp_rank(bp);
    for (int d = 0; d < rank; d++) shape[d] = (int)item(bp, BP_BLOCK, d)->i;
    return tir_type_make(bp_elem(bp), rank, shape);
}

Val spec_load_block(Spec *s, Args *a) {
    const Val *bp = &a->v[0];
    TirType t = spec_bp_type(bp);
    int checked[TIR_MAX_RANK];
    Val pad;
    if (!no_mask(s, a, 1, 2) || !boundary_dims(s, a, 3, t.rank, checked) || !padding(s, a, t.elem, &pad))
        return val_error();
    TirValue *ops[3] = {NULL, NULL, NULL};
    if (!(ops[0] = block_pointers(s, bp, checked, &ops[1], a->call->loc))) return val_error();
    if (ops[1] && !(ops[2] = spec_materialize(s, pad, t.elem, t.rank, t.shape, a->call->loc))) return val_error();
    return val_tile(spec_emit(s, TIR_LOAD, a->call->loc, ops, ops[1] ? 3 : 1, t));
}

Val spec_store_block(Spec *s, Args *a) {
    const Val *bp = &a->v[0];
    TirType t = spec_bp_type(bp);
    int checked[TIR_MAX_RANK];
    if (!val_is_value(&a->v[1])) {
        diag_error(s->diags, a->e[1]->loc, "store() needs a value to store, got %s", val_type_str(s, &a->v[1]));
        return val_error();
    }
    if (!no_mask(s, a, 2, 2) || !boundary_dims(s, a, 3, t.rank, checked)) return val_error();
    int r = val_rank(&a->v[1]);
    const int *sh = val_shape(&a->v[1]);
    for (int d = 0; d < r; d++) /* the value broadcasts to the block's shape */
        if (r > t.rank || (sh[d] != 1 && sh[d] != t.shape[t.rank - r + d])) {
            diag_error(s->diags, a->e[1]->loc, "stored value %s does not fit the block pointer's block %s",
                       val_type_str(s, &a->v[1]), tir_type_str(s->arena, &t));
            return val_error();
        }
    TirValue *ops[3] = {NULL, spec_materialize(s, a->v[1], t.elem, t.rank, t.shape, a->e[1]->loc), NULL};
    if (!ops[1] || !(ops[0] = block_pointers(s, bp, checked, &ops[2], a->call->loc))) return val_error();
    tir_op_append(s->k, s->block, TIR_STORE, a->call->loc, ops, ops[2] ? 3 : 2, NULL, 0);
    return (Val){.kind = V_VOID};
}
