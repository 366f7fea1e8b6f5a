/* spec_builtins.c: the built-in functions of the language (docs/language.md) during
 * specialization: argument checking by name and position, shapes of results, and the
 * tile-IR ops each one becomes. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "builtins.h"
#include "spec.h"

/* Slots that name a helper function (the combine function of reduce and associative_scan). */
static int is_function_slot(const char *slot) { return strcmp(slot, "combine_fn") == 0; }

/* Slots that take a string literal (atomics' memory order and scope, messages, print's
 * prefix, load's padding_option, the cache hints, static_print's values). */
static int is_string_slot(const char *slot) {
    return strcmp(slot, "sem") == 0 || strcmp(slot, "scope") == 0 || strcmp(slot, "msg") == 0 ||
           strcmp(slot, "prefix") == 0 || strcmp(slot, "padding_option") == 0 ||
           strcmp(slot, "cache_modifier") == 0 || strcmp(slot, "eviction_policy") == 0 ||
           strcmp(slot, "input_precision") == 0 || strcmp(slot, "level") == 0 ||
           strcmp(slot, "fp_downcast_rounding") == 0 || strcmp(slot, "asm") == 0 ||
           strcmp(slot, "constraints") == 0 ||
           strncmp(slot, "shown", 5) == 0;
}

/* The members of a tuple (a, b, ...) of values: a V_TUPLE, or an error after a diagnostic. */
static Val tuple_arg(Spec *s, const Expr *e) {
    Val t = {.kind = V_TUPLE, .nitems = e->nargs};
    t.items = arena_alloc(s->arena, sizeof(Val) * (size_t)e->nargs);
    if (!t.items) return val_error();
    for (int i = 0; i < e->nargs; i++) {
        t.items[i] = spec_expr(s, e->args[i]);
        if (t.items[i].kind == V_ERROR) return val_error();
    }
    return t;
}

/* Binds positional and keyword arguments to named slots; missing optional slots stay
 * V_VOID. Returns 0 after a diagnostic. */
static int bind_args(Spec *s, const Expr *call, const char *const *slots, int nslots, int nreq, Args *a) {
    memset(a, 0, sizeof *a);
    a->call = call;
    a->n = nslots;
    for (int i = 0; i < call->nargs; i++) {
        const char *kw = call->arg_names ? call->arg_names[i] : NULL;
        int slot = i;
        if (kw) {
            for (slot = 0; slot < nslots && strcmp(slots[slot], kw) != 0; slot++) {}
            if (slot == nslots) {
                diag_error(s->diags, call->args[i]->loc, "%s() has no argument named '%s'", call->name, kw);
                return 0;
            }
        } else if (i >= nslots) {
            diag_error(s->diags, call->args[i]->loc, "too many arguments to %s(): it takes at most %d",
                       call->name, nslots);
            return 0;
        }
        if (a->e[slot]) {
            diag_error(s->diags, call->args[i]->loc, "argument '%s' of %s() given twice", slots[slot], call->name);
            return 0;
        }
        a->e[slot] = call->args[i];
        if (call->args[i]->kind == EX_STRING && is_string_slot(slots[slot])) continue; /* read by name */
        if (call->args[i]->kind == EX_NAME && is_function_slot(slots[slot])) continue; /* a helper */
        if (call->args[i]->kind == EX_TUPLE && builtin_list_slot(call->name, slots[slot])) {
            a->v[slot] = tuple_arg(s, call->args[i]); /* Triton's (M, K) for the list [M, K] */
            if (a->v[slot].kind == V_ERROR) return 0;
            a->v[slot].kind = V_LIST;
            continue;
        }
        if (call->args[i]->kind == EX_TUPLE && slot == 0 && nslots > 2 && is_function_slot(slots[2])) {
            a->v[slot] = tuple_arg(s, call->args[i]); /* reduce's, associative_scan's operand */
            if (a->v[slot].kind == V_ERROR) return 0;
            continue;
        }
        a->v[slot] = spec_expr(s, call->args[i]);
        if (a->v[slot].kind == V_ERROR) return 0;
    }
    for (int i = 0; i < nreq; i++)
        if (!a->e[i]) {
            diag_error(s->diags, call->loc, "%s() needs its argument '%s'", call->name, slots[i]);
            return 0;
        }
    return 1;
}

int spec_need_value(Spec *s, Args *a, int i) {
    if (val_is_value(&a->v[i])) return 1;
    diag_error(s->diags, a->e[i]->loc, "argument of %s() must be a value, got %s", a->call->name,
               val_type_str(s, &a->v[i]));
    return 0;
}

int spec_const_arg(Spec *s, Args *a, int i, int64_t *out) {
    Val v = a->v[i];
    if (v.kind == V_CONST && !et_is_float(v.ct)) {
        *out = v.i;
        return 1;
    }
    diag_error(s->diags, a->e[i]->loc, "argument of %s() must be a compile-time integer, got %s",
               a->call->name, val_type_str(s, &v));
    return 0;
}

static int is_pow2(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

/* A shape argument: [d0, d1, ...] of compile-time powers of two (or one integer). */
static int shape_arg(Spec *s, Args *a, int i, int *rank, int *shape) {
    Val v = a->v[i];
    int n = v.kind == V_LIST ? v.nitems : 1;
    if (n > TIR_MAX_RANK) {
        diag_error(s->diags, a->e[i]->loc, "tiles have at most %d dimensions", TIR_MAX_RANK);
        return 0;
    }
    for (int d = 0; d < n; d++) {
        Val it = v.kind == V_LIST ? v.items[d] : v;
        if (it.kind != V_CONST || et_is_float(it.ct) || !is_pow2(it.i)) {
            diag_error(s->diags, a->e[i]->loc, "shape dimensions must be compile-time powers of two, got %s",
                       it.kind == V_CONST && !et_is_float(it.ct) ? arena_printf(s->arena, "%lld", (long long)it.i)
                                                                 : val_type_str(s, &it));
            return 0;
        }
        if (it.i > SPEC_MAX_NUMEL) {
            diag_error(s->diags, a->e[i]->loc, "shape dimension %lld is too large: tiles hold at most %d elements",
                       (long long)it.i, SPEC_MAX_NUMEL);
            return 0;
        }
        shape[d] = (int)it.i;
    }
    *rank = n;
    return spec_check_numel(s, n, shape, a->e[i]->loc);
}

static int axis_arg(Spec *s, Args *a, int i, int rank, int *axis) {
    int64_t ax;
    if (!spec_const_arg(s, a, i, &ax)) return 0;
    if (ax < 0) ax += rank;
    if (ax < 0 || ax >= rank) {
        diag_error(s->diags, a->e[i]->loc, "axis %lld is out of range for a tile of rank %d",
                   (long long)(ax < 0 ? ax - rank : ax), rank);
        return 0;
    }
    *axis = (int)ax;
    return 1;
}

ElemKind spec_type_arg(Spec *s, Args *a, int i, ElemKind dflt) {
    if (!a->e[i]) return dflt;
    if (a->v[i].kind == V_TYPE) return a->v[i].ct;
    diag_error(s->diags, a->e[i]->loc, "expected a type name such as f32, got %s", val_type_str(s, &a->v[i]));
    return ET_VOID;
}

TirValue *spec_as_float(Spec *s, Val v, SrcLoc loc) {
    TirValue *t = spec_as_tile(s, v, loc);
    return t && (!et_is_float(t->type.elem) || et_is_fp8(t->type.elem)) ? spec_cast(s, t, ET_F32, loc) : t;
}

/* ---- program ids, ranges, fills ---- */
static Val b_program_id(Spec *s, Args *a) {
    int64_t ax;
    if (!spec_const_arg(s, a, 0, &ax)) return val_error();
    if (ax < 0 || ax > 2) {
        diag_error(s->diags, a->e[0]->loc, "grid axis must be 0, 1 or 2, got %lld", (long long)ax);
        return val_error();
    }
    int pid = strcmp(a->call->name, "program_id") == 0;
    TirValue *r = spec_emit(s, pid ? TIR_PROGRAM_ID : TIR_NUM_PROGRAMS, a->call->loc, NULL, 0,
                            tir_type_make(ET_I32, 0, NULL));
    r->def->attr.i = ax;
    return val_tile(r);
}

static Val b_arange(Spec *s, Args *a) {
    int64_t lo, hi;
    if (!spec_const_arg(s, a, 0, &lo) || !spec_const_arg(s, a, 1, &hi)) return val_error();
    if (lo < INT32_MIN || hi > INT32_MAX || lo > INT32_MAX || hi < INT32_MIN) {
        diag_error(s->diags, a->call->loc, "arange(%lld, %lld): the bounds must be i32 values",
                   (long long)lo, (long long)hi);
        return val_error();
    }
    if (!is_pow2(hi - lo) || hi - lo > SPEC_MAX_NUMEL) {
        diag_error(s->diags, a->call->loc, "arange(%lld, %lld) must have a power-of-two length of at most %d, got %lld",
                   (long long)lo, (long long)hi, SPEC_MAX_NUMEL, (long long)(hi - lo));
        return val_error();
    }
    int n = (int)(hi - lo);
    TirValue *r = spec_emit(s, TIR_ARANGE, a->call->loc, NULL, 0, tir_type_make(ET_I32, 1, &n));
    r->def->attr.i = lo;
    r->def->attr.i2 = hi;
    return val_tile(r);
}

static Val fill(Spec *s, Args *a, int shape_slot, Val value, ElemKind et) {
    int rank, shape[TIR_MAX_RANK];
    if (et == ET_VOID || !shape_arg(s, a, shape_slot, &rank, shape)) return val_error();
    if (val_rank(&value) != 0) {
        diag_error(s->diags, a->call->loc, "fill value must be a scalar, got %s", val_type_str(s, &value));
        return val_error();
    }
    return val_tile(spec_materialize(s, value, et, rank, shape, a->call->loc));
}

static Val b_zeros(Spec *s, Args *a) {
    return fill(s, a, 0, val_const_int(ET_I32, 0, 1), spec_type_arg(s, a, 1, ET_F32));
}

static Val b_full(Spec *s, Args *a) {
    if (!spec_need_value(s, a, 1)) return val_error();
    return fill(s, a, 0, a->v[1], spec_type_arg(s, a, 2, ET_F32));
}

/* ---- memory ---- */
static int pointer_shape(Spec *s, Args *a, int *rank, int *shape) {
    Val p = a->v[0];
    if (!val_is_value(&p) || val_elem(&p) != ET_PTR) {
        diag_error(s->diags, a->e[0]->loc, "%s() needs a pointer or a tile of pointers, got %s",
                   a->call->name, val_type_str(s, &p));
        return 0;
    }
    *rank = val_rank(&p);
    for (int d = 0; d < *rank; d++) shape[d] = val_shape(&p)[d];
    return 1;
}

/* The mask in slot `slot` as bool values (an integer is tested against 0); V_ERROR after a
 * diagnostic. */
static Val mask_bool(Spec *s, Args *a, int slot) {
    Val m = a->v[slot];
    if (!spec_need_value(s, a, slot)) return val_error();
    if (!et_is_int(val_elem(&m)) && val_elem(&m) != ET_BOOL) {
        diag_error(s->diags, a->e[slot]->loc, "a mask is bool (or an integer, tested against 0), not %s",
                   val_type_str(s, &m));
        return val_error();
    }
    return val_elem(&m) == ET_BOOL ? m : spec_binary(s, OP_NE, m, val_const_int(ET_I32, 0, 1), a->e[slot]->loc);
}

static TirValue *mask_operand(Spec *s, Args *a, int slot, int rank, const int *shape) {
    Val m = mask_bool(s, a, slot);
    if (m.kind == V_ERROR) return NULL;
    Val both[2] = {a->v[0], m};
    int r, sh[TIR_MAX_RANK];
    if (!spec_broadcast_shape(s, both, 2, &r, sh, a->e[slot]->loc)) return NULL;
    if (r != rank || memcmp(sh, shape, sizeof(int) * (size_t)rank) != 0) {
        diag_error(s->diags, a->e[slot]->loc, "mask %s does not fit the pointer shape %s",
                   val_type_str(s, &m), val_type_str(s, &a->v[0]));
        return NULL;
    }
    return spec_materialize(s, m, ET_BOOL, rank, shape, a->e[slot]->loc);
}

/* boundary_check= and padding_option= (slots from `first`) belong to block pointers. */
static int no_block_args(Spec *s, Args *a, int first, int last) {
    for (int i = first; i <= last; i++)
        if (a->e[i] && val_is_value(&a->v[0])) {
            diag_error(s->diags, a->e[i]->loc, "%s() takes %s with a block pointer (make_block_ptr); "
                       "a pointer tile takes mask= instead", a->call->name,
                       i == 3 ? "boundary_check=" : "padding_option=");
            return 0;
        }
    return 1;
}

static int string_arg(Spec *s, Args *a, int i, const char *what_arg, const char *const *names, int n,
                      int dflt, int *out);

/* The hints of a load or store (TIR_LOAD's attr.i): cache_modifier= in slot `cm`,
 * eviction_policy= in the next, and for loads volatile= after it. -1 after a diagnostic. */
static int64_t mem_hints(Spec *s, Args *a, int cm, int is_load) {
    static const char *const load_names[] = {"", ".ca", ".cg", ".cv", ".cs"};
    static const TirCache load_caches[] = {CACHE_NONE, CACHE_CA, CACHE_CG, CACHE_CV, CACHE_CS};
    static const char *const store_names[] = {"", ".wb", ".cg", ".cs", ".wt"};
    static const TirCache store_caches[] = {CACHE_NONE, CACHE_WB, CACHE_CG, CACHE_CS, CACHE_WT};
    static const char *const evicts[] = {"", "evict_first", "evict_last", "evict_normal"};
    int c, e, vol = 0;
    if (!string_arg(s, a, cm, "cache_modifier", is_load ? load_names : store_names, 5, 0, &c) ||
        !string_arg(s, a, cm + 1, "eviction_policy", evicts, 4, 0, &e) ||
        (is_load && a->e[cm + 2] && !spec_bool_arg(s, a, cm + 2, "volatile", &vol)))
        return -1;
    TirCache cache = is_load ? load_caches[c] : store_caches[c];
    return (int64_t)cache | (int64_t)e << 4 | (vol ? TIR_MEM_VOLATILE : 0);
}

/* Triton's mask=None, other=None: the argument left out. */
static void none_as_absent(Args *a, int slot) {
    if (a->e[slot] && a->v[slot].kind == V_NONE) a->e[slot] = NULL;
}

static Val b_load(Spec *s, Args *a) {
    int rank, shape[TIR_MAX_RANK];
    none_as_absent(a, 1);
    none_as_absent(a, 2);
    int64_t hints = mem_hints(s, a, 5, 1);
    if (hints < 0) return val_error();
    if (a->v[0].kind == V_BLOCKPTR) {
        Val r = spec_load_block(s, a);
        if (r.kind == V_TILE && r.v->def && r.v->def->code == TIR_LOAD) r.v->def->attr.i = hints;
        return r;
    }
    if (!pointer_shape(s, a, &rank, shape) || !no_block_args(s, a, 3, 4)) return val_error();
    TirValue *ops[3] = {a->v[0].v};
    int nops = 1;
    ElemKind et = a->v[0].v->type.pointee;
    if (a->e[1] && !(ops[nops++] = mask_operand(s, a, 1, rank, shape))) return val_error();
    if (a->e[2]) {
        if (!a->e[1]) {
            diag_error(s->diags, a->e[2]->loc, "load() takes 'other' only together with 'mask'");
            return val_error();
        }
        if (!spec_need_value(s, a, 2)) return val_error();
        Val both[2] = {a->v[0], a->v[2]};
        int r, sh[TIR_MAX_RANK];
        if (!spec_broadcast_shape(s, both, 2, &r, sh, a->e[2]->loc) || r != rank) return val_error();
        if (!(ops[nops++] = spec_materialize(s, a->v[2], et, rank, shape, a->e[2]->loc))) return val_error();
    }
    TirValue *r = spec_emit(s, TIR_LOAD, a->call->loc, ops, nops, tir_type_make(et, rank, shape));
    r->def->attr.i = hints;
    return val_tile(r);
}

static Val b_store(Spec *s, Args *a) {
    int rank, shape[TIR_MAX_RANK];
    none_as_absent(a, 2);
    int64_t hints = mem_hints(s, a, 4, 0);
    if (hints < 0) return val_error();
    if (a->v[0].kind == V_BLOCKPTR) {
        Val r = spec_store_block(s, a);
        if (r.kind != V_ERROR && s->block->last && s->block->last->code == TIR_STORE) s->block->last->attr.i = hints;
        return r;
    }
    if (!pointer_shape(s, a, &rank, shape) || !no_block_args(s, a, 3, 3) || !spec_need_value(s, a, 1))
        return val_error();
    ElemKind et = a->v[0].v->type.pointee;
    Val both[2] = {a->v[0], a->v[1]};
    int r, sh[TIR_MAX_RANK];
    if (!spec_broadcast_shape(s, both, 2, &r, sh, a->e[1]->loc)) return val_error();
    if (r != rank || memcmp(sh, shape, sizeof(int) * (size_t)rank) != 0) {
        diag_error(s->diags, a->e[1]->loc, "stored value %s does not fit the pointer shape %s",
                   val_type_str(s, &a->v[1]), val_type_str(s, &a->v[0]));
        return val_error();
    }
    TirValue *ops[3] = {a->v[0].v, spec_materialize(s, a->v[1], et, rank, shape, a->e[1]->loc)};
    int nops = 2;
    if (a->e[2] && !(ops[nops++] = mask_operand(s, a, 2, rank, shape))) return val_error();
    if (!ops[1]) return val_error();
    TirOp *st = tir_op_append(s->k, s->block, TIR_STORE, a->call->loc, ops, nops, NULL, 0);
    if (st) st->attr.i = hints;
    return (Val){.kind = V_VOID};
}

/* prefetch(ptr [, mask] [, level="L2"]): a hint that the addressed lines will be read soon;
 * reads nothing into the program, never faults (any address, masked or not, is fine). */
static Val b_prefetch(Spec *s, Args *a) {
    static const char *const levels[] = {"L1", "L2"};
    int rank, shape[TIR_MAX_RANK], level;
    none_as_absent(a, 1);
    if (!pointer_shape(s, a, &rank, shape) || !string_arg(s, a, 2, "level", levels, 2, 1, &level))
        return val_error();
    TirValue *ops[2] = {a->v[0].v};
    int nops = 1;
    if (a->e[1] && !(ops[nops++] = mask_operand(s, a, 1, rank, shape))) return val_error();
    TirOp *op = tir_op_append(s->k, s->block, TIR_PREFETCH, a->call->loc, ops, nops, NULL, 0);
    if (op) op->attr.i = level + 1;
    return (Val){.kind = V_VOID};
}

/* ---- atomics ---- */
static const char *const atomic_fns[] = {"atomic_add", "atomic_max", "atomic_min", "atomic_and",
                                         "atomic_or", "atomic_xor", "atomic_xchg", "atomic_cas"};

/* The string of slot i (argument `what`) among `names` (its index in *out); `dflt` when the
 * slot is empty. */
static int string_arg(Spec *s, Args *a, int i, const char *what_arg, const char *const *names, int n,
                      int dflt, int *out) {
    *out = dflt;
    if (!a->e[i]) return 1;
    const char *what = a->e[i]->kind == EX_STRING ? a->e[i]->name : NULL;
    for (int k = 0; what && k < n; k++)
        if (strcmp(what, names[k]) == 0) return *out = k, 1;
    char list[128] = "";
    for (int k = 0; k < n; k++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s\"%s\"", k ? ", " : "", names[k]);
    diag_error(s->diags, a->e[i]->loc, "%s() takes %s= as one of %s, got %s", a->call->name,
               what_arg, list, what ? arena_printf(s->arena, "\"%s\"", what) : val_type_str(s, &a->v[i]));
    return 0;
}

/* Which element types each atomic takes: 32- and 64-bit integers everywhere, and floats
 * where the hardware (or a compare-and-swap loop) has them. */
static int atomic_elem_ok(TirAtomic op, ElemKind k) {
    int wide_int = et_is_int(k) && et_bits(k) >= 32;
    int f3264 = k == ET_F32 || k == ET_F64;
    switch (op) {
    case ATOM_ADD: return wide_int || f3264 || k == ET_F16 || k == ET_BF16;
    case ATOM_MAX: case ATOM_MIN: case ATOM_XCHG: case ATOM_CAS: return wide_int || f3264;
    default: return wide_int;
    }
}

static Val b_atomic(Spec *s, Args *a) {
    TirAtomic op = ATOM_ADD;
    while (strcmp(atomic_fns[op], a->call->name) != 0) op++;
    int cas = op == ATOM_CAS, vs = cas ? 2 : 1, ms = cas ? 5 : 2, ss = 3;
    int sem, scope;
    static const char *const sems[] = {"relaxed", "acquire", "release", "acq_rel"};
    static const char *const scopes[] = {"cta", "gpu", "sys"};
    if (!string_arg(s, a, ss, "sem", sems, 4, SEM_ACQ_REL, &sem) ||
        !string_arg(s, a, ss + 1, "scope", scopes, 3, SCOPE_GPU, &scope))
        return val_error();
    Val p = a->v[0];
    int rank, shape[TIR_MAX_RANK];
    if (!pointer_shape(s, a, &rank, shape)) return val_error();
    ElemKind et = p.v->type.pointee;
    if (!atomic_elem_ok(op, et)) {
        diag_error(s->diags, a->e[0]->loc, "%s() is not defined on %s (it takes %s)", a->call->name,
                   val_type_str(s, &p),
                   op == ATOM_ADD ? "32- and 64-bit integers, f16, bf16, f32 and f64"
                   : op >= ATOM_AND && op <= ATOM_XOR ? "32- and 64-bit integers"
                                                      : "32- and 64-bit integers, f32 and f64");
        return val_error();
    }
    if (!spec_need_value(s, a, vs) || (cas && !spec_need_value(s, a, 1))) return val_error();
    Val all[4] = {p, a->v[vs]};
    int n = 2;
    if (cas) all[n++] = a->v[1];
    if (a->e[ms]) {
        if (!spec_need_value(s, a, ms)) return val_error();
        all[n++] = a->v[ms];
    }
    if (!spec_broadcast_shape(s, all, n, &rank, shape, a->call->loc)) return val_error();
    int scalar = rank == 0, one = 1;
    if (scalar) rank = 1, shape[0] = 1; /* a one-element tile: its owner thread does it */
    TirValue *ops[4];
    int nops = 0;
    ops[nops++] = spec_materialize(s, p, ET_PTR, rank, shape, a->e[0]->loc);
    ops[nops++] = spec_materialize(s, a->v[vs], et, rank, shape, a->e[vs]->loc);
    if (cas) ops[nops++] = spec_materialize(s, a->v[1], et, rank, shape, a->e[1]->loc);
    if (a->e[ms]) {
        Val m = mask_bool(s, a, ms);
        if (m.kind == V_ERROR) return val_error();
        ops[nops++] = spec_materialize(s, m, ET_BOOL, rank, shape, a->e[ms]->loc);
    }
    for (int i = 0; i < nops; i++)
        if (!ops[i]) return val_error();
    TirValue *old = spec_emit(s, TIR_ATOMIC, a->call->loc, ops, nops, tir_type_make(et, rank, shape));
    old->def->attr.i = op;
    old->def->attr.i2 = sem | scope << 4;
    if (!scalar) return val_tile(old);
    /* the one element back as a scalar: max over one element gives it unchanged */
    TirValue *r = spec_emit(s, TIR_REDUCE, a->call->loc, &old, 1, tir_type_make(et, 0, &one));
    r->def->attr.i = RED_MAX;
    r->def->attr.i2 = 0;
    return val_tile(r);
}

/* ---- debugging ---- */
/* static_assert(cond [, "message"]): cond is known at compile time; false is an error there. */
static Val b_static_assert(Spec *s, Args *a) {
    Val c = a->v[0];
    if (a->e[0]->kind == EX_STRING || c.kind != V_CONST || et_is_float(c.ct) || val_rank(&c) != 0) {
        diag_error(s->diags, a->e[0]->loc, "static_assert() needs a condition known at compile time "
                   "(consts and literals), got %s%s", a->e[0]->kind == EX_STRING ? "a string" : c.kind == V_TILE ? "a run-time " : "",
                   a->e[0]->kind == EX_STRING ? "" : val_type_str(s, &c));
        return val_error();
    }
    if (a->e[1] && a->e[1]->kind != EX_STRING) {
        diag_error(s->diags, a->e[1]->loc, "static_assert() takes its message as a string literal");
        return val_error();
    }
    if (!c.i) {
        diag_error(s->diags, a->e[0]->loc, "static assertion failed%s%s", a->e[1] ? ": " : "",
                   a->e[1] ? a->e[1]->name : "");
        return val_error();
    }
    return (Val){.kind = V_VOID};
}

static TirValue *tile_arg(Spec *s, Args *a, int i, const char *what);

/* The helper named in slot i (a combine function of two values), or NULL after a diagnostic. */
static const Func *combine_fn(Spec *s, Args *a, int i) {
    const Func *f = a->e[i]->kind == EX_NAME ? module_find_func(s->module, a->e[i]->name) : NULL;
    if (!f || f->is_kernel || f->nparams < 2) {
        diag_error(s->diags, a->e[i]->loc, "%s() needs the name of a helper 'fn' of two values as its "
                   "combine function", a->call->name);
        return NULL;
    }
    return f;
}

/* Where member i of the tuple operand is written: (a, b, ...), or a helper's results. */
static SrcLoc member_loc(Args *a, int i) {
    return a->e[0]->kind == EX_TUPLE ? a->e[0]->args[i]->loc : a->e[0]->loc;
}

/* The members of reduce's or associative_scan's tuple operand broadcast to one shape, as
 * tiles; 0 after a diagnostic. */
static int tuple_tiles(Spec *s, Args *a, TirValue **x) {
    const Val *m = a->v[0].items;
    int n = a->v[0].nitems, rank = 0, shape[TIR_MAX_RANK];
    if (n > SPEC_TUPLE_MAX) {
        diag_error(s->diags, a->e[0]->loc, "%s() of %d tiles: at most %d", a->call->name, n, SPEC_TUPLE_MAX);
        return 0;
    }
    for (int i = 0; i < n; i++) {
        if (!val_is_value(&m[i])) {
            diag_error(s->diags, member_loc(a, i), "a member of %s()'s tuple must be a value, got %s",
                       a->call->name, val_type_str(s, &m[i]));
            return 0;
        }
        if (val_rank(&m[i]) > rank) rank = val_rank(&m[i]);
    }
    for (int d = 0; d < rank; d++) shape[d] = 1;
    for (int i = 0; i < n; i++)
        for (int d = 0, r = val_rank(&m[i]); d < r; d++) {
            int sd = val_shape(&m[i])[d], *td = &shape[rank - r + d];
            if (sd != *td && sd != 1 && *td != 1) {
                diag_error(s->diags, member_loc(a, i), "the members of %s()'s tuple must have "
                           "one shape (or broadcast to one): %s does not fit the shape of those "
                           "before it", a->call->name, val_type_str(s, &m[i]));
                return 0;
            }
            if (sd != 1) *td = sd;
        }
    if (rank == 0) {
        diag_error(s->diags, a->e[0]->loc, "%s() needs tiles in its tuple, got %s", a->call->name,
                   n ? "scalars only" : "an empty tuple");
        return 0;
    }
    for (int i = 0; i < n; i++)
        if (!(x[i] = spec_materialize(s, m[i], val_elem(&m[i]), rank, shape, member_loc(a, i))))
            return 0;
    return 1;
}

/* reduce(x, axis, combine_fn [, keep_dims=B]) and associative_scan(x, axis, combine_fn
 * [, reverse=B]): with axis None, reduce takes every element. x may be a tuple of k tiles:
 * combine_fn then takes the k members of each operand and returns k values. */
static Val b_combine(Spec *s, Args *a) {
    int scan = a->call->name[0] == 'a', axis = -1, flag = 0, k = 1;
    TirValue *x[SPEC_TUPLE_MAX];
    if (a->v[0].kind == V_TUPLE) {
        k = a->v[0].nitems;
        if (!tuple_tiles(s, a, x)) return val_error();
    } else if (!(x[0] = tile_arg(s, a, 0, a->call->name)))
        return val_error();
    const Func *f = combine_fn(s, a, 2);
    if (!f) return val_error();
    if (a->v[0].kind == V_TUPLE && (f->nparams < 2 * k || (f->nparams > 2 * k && !f->params[2 * k].default_value))) {
        diag_error(s->diags, a->e[2]->loc, "combine function '%s' must take %d parameters (%s), "
                   "it takes %d", f->name, 2 * k, k == 1 ? "one for each operand" :
                   arena_printf(s->arena, "the %d members of one operand, then the other's", k), f->nparams);
        return val_error();
    }
    if (a->e[3] && !spec_bool_arg(s, a, 3, scan ? "reverse" : "keep_dims", &flag)) return val_error();
    if ((scan || a->v[1].kind != V_NONE) && !axis_arg(s, a, 1, x[0]->type.rank, &axis)) return val_error();
    return scan ? spec_scan_with(s, x, k, axis, f, flag, a->call->loc)
                : spec_reduce_with(s, x, k, axis, f, flag, a->call->loc);
}

/* print(prefix, values...): each element's values, once per program run of the call. */
static Val b_print(Spec *s, Args *a) {
    if (a->e[0]->kind != EX_STRING) {
        diag_error(s->diags, a->e[0]->loc, "print() takes a string literal first (its prefix), "
                   "then the values to print");
        return val_error();
    }
    int n = 0;
    while (n + 1 < 6 && a->e[n + 1]) n++;
    return spec_print(s, a->e[0]->name, a->v + 1, a->e + 1, n, a->call->loc);
}

/* A float constant as static_print shows it: the shortest digits that read back as the same
 * value (of f32 when the value is one, as an f32, f16 or bf16 constant's is, else of f64), and
 * always as a float ("6.0", not "6", which would read as an integer constant). */
static void static_float_text(const Val *v, char *out, size_t cap) {
    int single = v->ct != ET_F64 && isfinite(v->f) && (double)(float)v->f == v->f;
    for (int digits = single ? 6 : 15; digits <= 17; digits++) {
        snprintf(out, cap, "%.*g", digits, v->f);
        double back = strtod(out, NULL);
        if (single ? (float)back == (float)v->f : back == v->f)
            break;
    }
    if (isfinite(v->f) && !strpbrk(out, ".e"))
        snprintf(out + strlen(out), cap - strlen(out), ".0");
}

/* One value as static_print shows it: a string literal's text, a constant's value, else its
 * type (a run-time value's, a type name's). */
static void static_text(Spec *s, const Expr *e, const Val *v, char *out, size_t cap) {
    if (e->kind == EX_STRING)
        snprintf(out, cap, "%s", e->name);
    else if (v->kind == V_CONST && val_rank(v) == 0 && v->ct == ET_BOOL)
        snprintf(out, cap, "%s", v->i ? "true" : "false");
    else if (v->kind == V_CONST && val_rank(v) == 0 && et_is_float(v->ct))
        static_float_text(v, out, cap);
    else if (v->kind == V_CONST && val_rank(v) == 0)
        snprintf(out, cap, "%lld", (long long)v->i);
    else if (v->kind == V_TYPE)
        snprintf(out, cap, "%s", et_name(v->ct));
    else if (v->kind == V_LIST && e->kind == EX_LIST && e->nargs == v->nitems) {
        size_t len = (size_t)snprintf(out, cap, "[");
        for (int i = 0; i < v->nitems && len < cap; i++) { /* a list's items, as each shows */
            if (i) len += (size_t)snprintf(out + len, cap - len, ", ");
            if (len < cap) static_text(s, e->args[i], &v->items[i], out + len, cap - len);
            len = strlen(out);
        }
        if (len < cap) snprintf(out + len, cap - len, "]");
    }
    else
        snprintf(out, cap, "%s%s", v->kind == V_TILE ? "run-time " : "", val_type_str(s, v));
}

/* static_print(v1, ..., v6): a note at the call, for this specialization, with each value as
 * static_text shows it, separated by spaces (Triton's tl.static_print). */
static Val b_static_print(Spec *s, Args *a) {
    char text[1024] = "", one[256];
    for (int i = 0; i < 6 && a->e[i]; i++) {
        static_text(s, a->e[i], &a->v[i], one, sizeof one);
        size_t len = strlen(text);
        snprintf(text + len, sizeof text - len, "%s%s", i ? " " : "", one);
    }
    diag_note(s->diags, a->call->loc, "static_print: %s", text);
    return (Val){.kind = V_VOID};
}

/* device_assert(cond, msg): the launch fails with the site when an element is false. */
static Val b_device_assert(Spec *s, Args *a) {
    if (a->e[0]->kind == EX_STRING || (a->e[1] && a->e[1]->kind != EX_STRING)) {
        diag_error(s->diags, a->e[a->e[0]->kind == EX_STRING ? 0 : 1]->loc,
                   "device_assert() takes a condition, then its message as a string literal");
        return val_error();
    }
    return spec_device_assert(s, a->v[0], a->e[0], a->e[1] ? a->e[1]->name : NULL, a->call->loc);
}

/* A compile-time bool in slot i (named `what` in the message) into *out; 0 after a diagnostic. */
int spec_bool_arg(Spec *s, Args *a, int i, const char *what, int *out) {
    if (a->v[i].kind != V_CONST || a->v[i].ct != ET_BOOL) {
        const char *run_time = a->v[i].kind == V_TILE ? "a run-time " : "";
        diag_error(s->diags, a->e[i]->loc, "%s()'s %s must be a compile-time bool, got %s%s",
                   a->call->name, what, run_time, val_type_str(s, &a->v[i]));
        return 0;
    }
    *out = (int)a->v[i].i;
    return 1;
}

/* x in the type a sum or scan of it accumulates in: f16, bf16 and fp8 in f32, bool and
 * integers narrower than 32 bits in i32 (u32 for unsigned). */
static TirValue *summable(Spec *s, TirValue *x, SrcLoc loc) {
    ElemKind et = x->type.elem;
    if (et == ET_F16 || et == ET_BF16 || et_is_fp8(et)) return spec_cast(s, x, ET_F32, loc);
    if (et == ET_BOOL || (et_is_int(et) && et_bits(et) < 32))
        return spec_cast(s, x, et_is_signed(et) || et == ET_BOOL ? ET_I32 : ET_U32, loc);
    return x;
}

/* x in the type a sum or scan of it accumulates in: the type of dtype= in slot i where given
 * (Triton's: the elements converted to it, added or multiplied in it), else summable's. NULL
 * after a diagnostic. */
static TirValue *accumulated(Spec *s, Args *a, int i, TirValue *x) {
    if (!a->e[i] || a->v[i].kind == V_NONE) return summable(s, x, a->call->loc);
    ElemKind t = spec_type_arg(s, a, i, ET_VOID);
    if (t == ET_VOID) return NULL;
    if (t == ET_BOOL || et_is_fp8(t)) {
        diag_error(s->diags, a->e[i]->loc, "%s() %s in an integer or float type, not %s",
                   a->call->name, strcmp(a->call->name, "cumprod") ? "adds" : "multiplies",
                   et_name(t));
        return NULL;
    }
    return x->type.elem == t ? x : spec_cast(s, x, t, a->e[i]->loc);
}

/* ---- scans ---- */
/* cumsum(x, axis=0, reverse=false, dtype=None), cumprod(...): inclusive scans; element types
 * as sum's (f16/bf16 give f32, integers narrower than 32 bits i32/u32), or dtype's. */
static Val b_scan(Spec *s, Args *a) {
    if (!spec_need_value(s, a, 0)) return val_error();
    if (a->v[0].kind != V_TILE || a->v[0].v->type.rank == 0) {
        diag_error(s->diags, a->e[0]->loc, "%s() scans a tile, got %s", a->call->name, val_type_str(s, &a->v[0]));
        return val_error();
    }
    TirValue *x = a->v[0].v;
    int axis = 0, reverse = 0;
    if (a->e[1] && !axis_arg(s, a, 1, x->type.rank, &axis)) return val_error();
    if (a->e[2] && !spec_bool_arg(s, a, 2, "reverse", &reverse)) return val_error();
    if (x->type.elem == ET_PTR) {
        diag_error(s->diags, a->e[0]->loc, "%s() cannot scan pointers", a->call->name);
        return val_error();
    }
    if (!(x = accumulated(s, a, 3, x))) return val_error();
    int add = strcmp(a->call->name, "cumsum") == 0;
    if (!spec_axis_in_thread(s, x, axis)) /* too many for one thread's registers */
        return spec_scan_op(s, x, axis, add ? OP_ADD : OP_MUL, reverse, a->call->loc);
    TirValue *r = spec_emit(s, TIR_SCAN, a->call->loc, &x, 1, x->type);
    r->def->attr.i = add ? SCAN_ADD : SCAN_MUL;
    r->def->attr.i2 = axis | reverse << 4;
    return val_tile(r);
}

static TirValue *tile_arg(Spec *s, Args *a, int i, const char *what);

/* flip(x [, dim]): x with its coordinates along dim (default the last) reversed. */
static Val b_flip(Spec *s, Args *a) {
    TirValue *x = tile_arg(s, a, 0, "flip");
    int axis;
    if (!x) return val_error();
    axis = x->type.rank - 1;
    if (a->e[1] && a->v[1].kind != V_NONE && !axis_arg(s, a, 1, x->type.rank, &axis)) return val_error();
    if (!spec_axis_in_thread(s, x, axis) && x->type.elem != ET_PTR)
        return spec_flip_rows(s, x, axis, a->call->loc); /* too many for one thread's registers */
    TirValue *r = spec_emit(s, TIR_FLIP, a->call->loc, &x, 1, x->type);
    r->def->attr.i2 = axis;
    return val_tile(r);
}

/* sort(x [, dim] [, descending=B]) and topk(x, k [, dim]) (the k largest, in descending
 * order), along dim (default the last) of at most MAX_SORT elements; argsort and argtopk give
 * the i32 indices along dim instead (ties in no particular order). */
enum { MAX_SORT = 4096 };
static Val b_sort(Spec *s, Args *a) {
    const char *name = a->call->name;
    int topk = strstr(name, "topk") != NULL, ds = topk ? 2 : 1, want_idx = name[0] == 'a';
    TirValue *x = tile_arg(s, a, 0, a->call->name);
    if (!x) return val_error();
    if (x->type.elem == ET_PTR || x->type.elem == ET_BOOL) {
        diag_error(s->diags, a->e[0]->loc, "%s() sorts numbers, got %s", a->call->name, val_type_str(s, &a->v[0]));
        return val_error();
    }
    int axis = x->type.rank - 1, desc = topk;
    int64_t k = 0;
    if (a->e[ds] && a->v[ds].kind != V_NONE && !axis_arg(s, a, ds, x->type.rank, &axis)) return val_error();
    if (!topk && a->e[2] && !spec_bool_arg(s, a, 2, "descending", &desc)) return val_error();
    if (x->type.shape[axis] > MAX_SORT) { /* the network's code grows as n log^2 n */
        diag_error(s->diags, a->call->loc, "%s() along a dim of %d elements: at most %d",
                   a->call->name, x->type.shape[axis], MAX_SORT);
        return val_error();
    }
    TirType t = x->type;
    if (et_is_fp8(t.elem)) x = spec_cast(s, x, ET_F32, a->call->loc), t = x->type;
    if (topk) {
        if (!spec_const_arg(s, a, 1, &k)) return val_error();
        if (!is_pow2(k) || k > x->type.shape[axis]) {
            diag_error(s->diags, a->e[1]->loc, "topk() takes k a power of two of at most %d, got %lld",
                       x->type.shape[axis], (long long)k);
            return val_error();
        }
        t.shape[axis] = (int)k;
    }
    if (!spec_axis_in_thread(s, x, axis)) /* across threads: a bitonic network of shape ops */
        return spec_sort_rows(s, x, axis, desc, want_idx, (int)k, a->call->loc);
    TirType types[2] = {t, t};
    types[1].elem = ET_I32;
    TirOp *op = tir_op_append(s->k, s->block, TIR_SORT, a->call->loc, &x, 1, types, want_idx ? 2 : 1);
    op->attr.i2 = axis | desc << 4;
    return val_tile(op->results[want_idx ? 1 : 0]);
}

/* ---- hints ---- */
/* multiple_of(x, n) / max_contiguous(x, n): x unchanged, with a fact the compiler cannot
 * prove (n: a power of two, or one per dim); vector loads and stores follow from it.
 * max_constancy(x, n) (Triton's: runs of n equal values, any element type) is checked and
 * returns x: nothing here would use the fact. */
static Val b_hint(Spec *s, Args *a) {
    if (!spec_need_value(s, a, 0)) return val_error();
    Val x = a->v[0], v = a->v[1];
    int constancy = !strcmp(a->call->name, "max_constancy");
    if (!et_is_int(val_elem(&x)) && val_elem(&x) != ET_PTR && !(constancy && val_is_value(&x))) {
        diag_error(s->diags, a->e[0]->loc, "%s() takes integers or pointers, got %s", a->call->name,
                   val_type_str(s, &x));
        return val_error();
    }
    TirValue *t = spec_as_tile(s, x, a->e[0]->loc);
    if (!t) return val_error();
    int rank = t->type.rank ? t->type.rank : 1, n = v.kind == V_LIST ? v.nitems : 1;
    int64_t packed = 0;
    for (int d = 0; d < rank; d++) {
        Val it = v.kind == V_LIST ? (d < n ? v.items[d] : val_error()) : v;
        if (it.kind != V_CONST || et_is_float(it.ct) || !is_pow2(it.i) || it.i > (1 << 30) ||
            (v.kind == V_LIST && n != rank)) {
            diag_error(s->diags, a->e[1]->loc, "%s() takes a power of two (or one per dim of %s), got %s",
                       a->call->name, val_type_str(s, &x), val_type_str(s, &v));
            return val_error();
        }
        packed |= (int64_t)__builtin_ctzll((unsigned long long)it.i) << (5 * d);
    }
    if (constancy) /* checked, then unused: no analysis takes runs of equal values */
        return val_tile(t);
    TirValue *r = spec_emit(s, TIR_HINT, a->call->loc, &t, 1, t->type);
    r->def->attr.i = strcmp(a->call->name, "multiple_of") == 0 ? HINT_MULTIPLE_OF : HINT_MAX_CONTIGUOUS;
    r->def->attr.i2 = packed;
    return val_tile(r);
}

/* assume(cond): the program may take the scalar condition as true (`assume(n % 16 == 0)` tells
 * the axis analysis that n is a multiple of 16). False at run time is undefined behaviour. */
static Val b_assume(Spec *s, Args *a) {
    if (!spec_need_value(s, a, 0)) return val_error();
    Val c = a->v[0];
    if (val_rank(&c) != 0 || val_elem(&c) != ET_BOOL) {
        diag_error(s->diags, a->e[0]->loc, "assume() takes a scalar bool condition, got %s",
                   val_type_str(s, &c));
        return val_error();
    }
    if (c.kind == V_CONST) {
        if (!c.i) {
            diag_error(s->diags, a->e[0]->loc, "assume() of a condition that is false at compile time");
            return val_error();
        }
        return (Val){.kind = V_VOID};
    }
    tir_op_append(s->k, s->block, TIR_ASSUME, a->call->loc, &c.v, 1, NULL, 0);
    return (Val){.kind = V_VOID};
}

/* debug_barrier(): every thread of the program waits for the others, and the program's
 * memory accesses before it (global memory included) are ordered before those after it.
 * attr.i = 1 marks it as the user's: no pass removes or moves it (pass_pipeline.c leaves its
 * loop alone). */
static Val b_debug_barrier(Spec *s, Args *a) {
    TirOp *op = tir_op_append(s->k, s->block, TIR_BARRIER, a->call->loc, NULL, 0, NULL, 0);
    if (op) op->attr.i = TIR_BARRIER_USER;
    return (Val){.kind = V_VOID};
}

/* ---- random numbers ---- */
/* philox(seed, c0, c1, c2, c3 [, n_rounds=R]) (Triton's tl.philox): the four words. */
static Val b_philox(Spec *s, Args *a) {
    for (int i = 0; i < 5; i++) {
        if (!spec_need_value(s, a, i)) return val_error();
        if (!et_is_int(val_elem(&a->v[i])) || (i == 0 && val_rank(&a->v[0]) != 0)) {
            diag_error(s->diags, a->e[i]->loc, i ? "philox() takes integer counters, got %s"
                                                 : "philox() takes the seed as one integer, got %s",
                       val_type_str(s, &a->v[i]));
            return val_error();
        }
    }
    int64_t rounds = 10;
    if (a->e[5] && !spec_const_arg(s, a, 5, &rounds)) return val_error();
    if (rounds < 1 || rounds > 10) {
        diag_error(s->diags, a->e[5]->loc, "philox(): n_rounds is 1 to 10, got %lld", (long long)rounds);
        return val_error();
    }
    int rank, shape[TIR_MAX_RANK];
    if (!spec_broadcast_shape(s, a->v + 1, 4, &rank, shape, a->call->loc)) return val_error();
    return spec_philox(s, a->v[0], a->v + 1, (int)rounds, a->call->loc);
}

static Val b_random(Spec *s, Args *a) {
    if (!spec_need_value(s, a, 0) || !spec_need_value(s, a, 1)) return val_error();
    Val seed = a->v[0], off = a->v[1];
    if (!et_is_int(val_elem(&seed)) || val_rank(&seed) != 0) {
        diag_error(s->diags, a->e[0]->loc, "%s() takes the seed as one integer, got %s", a->call->name,
                   val_type_str(s, &seed));
        return val_error();
    }
    if (!et_is_int(val_elem(&off))) {
        diag_error(s->diags, a->e[1]->loc, "%s() takes integer offsets, got %s", a->call->name,
                   val_type_str(s, &off));
        return val_error();
    }
    int64_t rounds = 10;
    if (a->e[2] && !spec_const_arg(s, a, 2, &rounds)) return val_error();
    if (rounds < 1 || rounds > 10) {
        diag_error(s->diags, a->e[2]->loc, "%s(): n_rounds is 1 to 10, got %lld", a->call->name,
                   (long long)rounds);
        return val_error();
    }
    const char *fn = a->call->name;
    size_t len = strlen(fn);
    int four = len > 2 && !strcmp(fn + len - 2, "4x");
    SpecRandom kind = !strncmp(fn, "randint", 7) ? RANDOM_INT
                      : !strncmp(fn, "randn", 5) ? RANDOM_NORMAL : RANDOM_UNIFORM;
    return spec_random(s, kind, four, seed, off, (int)rounds, a->call->loc);
}

/* Arguments first .. n-1 are numbers (not pointers); a diagnostic otherwise. */
int spec_numbers(Spec *s, Args *a, int n) {
    for (int i = 0; i < n; i++) {
        if (!spec_need_value(s, a, i)) return 0;
        if (val_elem(&a->v[i]) == ET_PTR) {
            diag_error(s->diags, a->e[i]->loc, "%s() needs numbers, got %s", a->call->name, val_type_str(s, &a->v[i]));
            return 0;
        }
    }
    return 1;
}

static Val b_broadcast_to(Spec *s, Args *a) {
    int rank, shape[TIR_MAX_RANK];
    if (!spec_need_value(s, a, 0) || !shape_arg(s, a, 1, &rank, shape)) return val_error();
    Val both[2] = {a->v[0], {.kind = V_TILE}};
    TirValue probe = {.type = tir_type_make(ET_I32, rank, shape)};
    both[1].v = &probe;
    int r, sh[TIR_MAX_RANK];
    if (!spec_broadcast_shape(s, both, 2, &r, sh, a->call->loc)) return val_error();
    if (r != rank || memcmp(sh, shape, sizeof(int) * (size_t)rank) != 0) {
        diag_error(s->diags, a->call->loc, "cannot broadcast %s to the requested shape", val_type_str(s, &a->v[0]));
        return val_error();
    }
    return val_tile(spec_materialize(s, a->v[0], val_elem(&a->v[0]), rank, shape, a->call->loc));
}

/* ---- reductions, dot, trans ---- */
/* x reduced along axis (that dim gone; argmax/argmin give i32) */
static TirValue *emit_reduce(Spec *s, TirValue *x, TirReduce kind, int axis, SrcLoc at) {
    TirType t = x->type;
    memmove(t.shape + axis, t.shape + axis + 1, sizeof(int) * (size_t)(t.rank - axis - 1));
    t.rank--;
    if (tir_reduce_is_arg(kind)) t.elem = ET_I32;
    TirValue *r = spec_emit(s, TIR_REDUCE, at, &x, 1, t);
    r->def->attr.i = kind;
    r->def->attr.i2 = axis;
    return r;
}

/* A reduction r of a tile of `rank` dims along axis, with that dim back as size 1. */
static TirValue *keep_axis(Spec *s, TirValue *r, int rank, int axis, SrcLoc at) {
    int ones[TIR_MAX_RANK] = {1, 1, 1, 1};
    if (rank == 1)
        return spec_materialize(s, val_tile(r), r->type.elem, 1, ones, at);
    return spec_expand_dims(s, r, axis, at);
}

/* x (rank `rank` before a whole-tile reduction flattened it) reduced along axis, with the
 * reduced dims kept as size 1 when `keep`. */
static Val reduce_kept_dims(Spec *s, TirValue *x, TirReduce kind, int axis, int rank, int whole,
                            int keep, SrcLoc at) {
    TirValue *r = emit_reduce(s, x, kind, axis, at);
    int ones[TIR_MAX_RANK] = {1, 1, 1, 1};
    if (!keep) return val_tile(r);
    if (whole) /* the reduced tile's rank, every dim 1 */
        return val_tile(spec_materialize(s, val_tile(r), r->type.elem, rank, ones, at));
    return val_tile(keep_axis(s, r, rank, axis, at));
}

/* The values and, with return_indices=true (max and min: Triton's), their i32 indices as
 * argmax/argmin give them (the first maximum), as two results. */
static Val with_indices(Spec *s, Val values, Val indices) {
    Val r = {.kind = V_TUPLE, .nitems = 2};
    r.items = arena_alloc(s->arena, sizeof(Val) * 2);
    if (!r.items || values.kind == V_ERROR || indices.kind == V_ERROR) return val_error();
    r.items[0] = values, r.items[1] = indices;
    return r;
}

/* x as a reduction's operand (a tile of numbers), else a diagnostic and 0. */
static int reduce_operand(Spec *s, Args *a, TirReduce kind) {
    /* Python's min(a, b) and max(a, b) are minimum and maximum here */
    int pairwise = kind == RED_MAX || kind == RED_MIN;
    const char *hint = !pairwise ? "" : kind == RED_MAX
        ? "; the larger of two values is maximum(a, b)" : "; the smaller of two values is minimum(a, b)";
    if (!spec_need_value(s, a, 0)) return 0;
    if (a->v[0].kind != V_TILE || a->v[0].v->type.rank == 0) {
        diag_error(s->diags, a->e[0]->loc, "%s() reduces a tile, got %s%s", a->call->name,
                   val_type_str(s, &a->v[0]), hint);
        return 0;
    }
    if (pairwise && a->e[1] && a->v[1].kind != V_NONE &&
        (a->v[1].kind != V_CONST || et_is_float(a->v[1].ct))) {
        diag_error(s->diags, a->e[1]->loc, "the axis of %s() must be a compile-time integer, got "
                   "%s%s", a->call->name, val_type_str(s, &a->v[1]), hint);
        return 0;
    }
    if (a->v[0].v->type.elem == ET_PTR) {
        diag_error(s->diags, a->e[0]->loc, "%s() cannot reduce pointers", a->call->name);
        return 0;
    }
    return 1;
}

/* The index reduction of max or min (`extreme`) with the tie-break of slot i (Triton's
 * tie_break_left, a compile-time bool, true by default: the smallest index among equal
 * extremes; false: the largest) into *out; 0 after a diagnostic. */
static int arg_kind(Spec *s, Args *a, int i, const char *slot, TirReduce extreme, TirReduce *out) {
    int left = 1, is_max = tir_reduce_is_max(extreme);
    if (a->e[i] && !spec_bool_arg(s, a, i, slot, &left)) return 0;
    *out = is_max ? (left ? RED_ARGMAX : RED_ARGMAX_LAST) : (left ? RED_ARGMIN : RED_ARGMIN_LAST);
    return 1;
}

/* sum, max, min (slot 3 return_indices, 4 its tie-break), argmax, argmin (slot 3 the
 * tie-break) along an axis or of every element */
static Val b_reduce(Spec *s, Args *a) {
    static const struct { const char *name; TirReduce kind; } kinds[] = {
        {"sum", RED_SUM}, {"max", RED_MAX}, {"min", RED_MIN}, {"argmax", RED_ARGMAX},
        {"argmin", RED_ARGMIN}};
    int k = 0;
    while (strcmp(kinds[k].name, a->call->name) != 0) k++;
    TirReduce kind = kinds[k].kind, arg = kind;
    if (!reduce_operand(s, a, kind)) return val_error();
    TirValue *x = a->v[0].v;
    int axis = 0, rank = x->type.rank, keep = 0, indices = 0;
    if (a->e[2] && !spec_bool_arg(s, a, 2, "keep_dims", &keep)) return val_error();
    if (kind == RED_MAX || kind == RED_MIN) { /* Triton's return_indices */
        if ((a->e[3] && !spec_bool_arg(s, a, 3, "return_indices", &indices)) ||
            !arg_kind(s, a, 4, "return_indices_tie_break_left", kind, &arg))
            return val_error();
    } else if (kind != RED_SUM && !arg_kind(s, a, 3, "tie_break_left", kind, &kind)) {
        return val_error();
    }
    if (a->e[1] && a->v[1].kind != V_NONE && !axis_arg(s, a, 1, rank, &axis)) return val_error();
    if (kind == RED_SUM) x = accumulated(s, a, 3, x);
    else if (et_is_fp8(x->type.elem)) /* compares in f32 */
        x = spec_cast(s, x, ET_F32, a->call->loc);
    if (!x) return val_error();
    int whole = (!a->e[1] || a->v[1].kind == V_NONE) && rank > 1;
    if (whole) { /* every element: as one flat dim (argmax/argmin give the flat index) */
        int n = tir_type_numel(&x->type);
        x = spec_reshape(s, x, 1, &n, a->call->loc);
    }
    Val r = reduce_kept_dims(s, x, kind, axis, rank, whole, keep, a->call->loc);
    if (!indices) return r;
    return with_indices(s, r, reduce_kept_dims(s, x, arg, axis, rank, whole, keep, a->call->loc));
}

static ElemKind dot_acc_type(ElemKind in) {
    if (in == ET_F16 || in == ET_BF16 || in == ET_F32) return ET_F32;
    if (et_is_int(in)) return et_bits(in) == 64 ? in : ET_I32;
    return in;
}

static int dot_operand(Spec *s, Args *a, int i) {
    if (!spec_need_value(s, a, i)) return 0;
    int rank = a->v[i].kind == V_TILE ? a->v[i].v->type.rank : 0;
    if ((rank != 2 && rank != 3) || val_elem(&a->v[i]) == ET_PTR || val_elem(&a->v[i]) == ET_BOOL) {
        diag_error(s->diags, a->e[i]->loc, "dot() operands must be rank-2 tiles of numbers (rank 3: "
                   "a batch of them), got %s", val_type_str(s, &a->v[i]));
        return 0;
    }
    if (et_is_fp8(val_elem(&a->v[i]))) {
        diag_error(s->diags, a->e[i]->loc, "dot() of %s: convert the operands first (`x as f16`)",
                   val_type_str(s, &a->v[i]));
        return 0;
    }
    return 1;
}

/* allow_tf32: a compile-time bool letting f32 products round their inputs to tf32; or
 * Triton's input_precision="tf32" (the same) / "ieee" (exact, the default here). */
static int dot_tf32_flag(Spec *s, Args *a, int *tf32) {
    const Expr *p = a->e[5];
    if (!p)
        return !a->e[3] || (spec_need_value(s, a, 3) && spec_bool_arg(s, a, 3, "allow_tf32", tf32));
    if (a->e[3]) {
        diag_error(s->diags, p->loc, "dot(): give allow_tf32 or input_precision, not both");
        return 0;
    }
    if (p->kind != EX_STRING || (strcmp(p->name, "tf32") && strcmp(p->name, "ieee"))) {
        diag_error(s->diags, p->loc, "dot(): input_precision is \"tf32\" or \"ieee\" (the "
                   "default; \"tf32x3\" is not supported)");
        return 0;
    }
    *tf32 = !strcmp(p->name, "tf32");
    return 1;
}

/* out_dtype=T (Triton's): the type the product accumulates in, instead of the default *acc_t
 * (f32, i32: dot_acc_type); with an accumulator tile it must be that tile's type. A float for
 * float operands, i32 or i64 for integers. */
static int dot_out_type(Spec *s, Args *a, ElemKind in, ElemKind *acc_t) {
    if (!a->e[4]) return 1;
    ElemKind t = spec_type_arg(s, a, 4, ET_VOID);
    if (t == ET_VOID) return 0;
    int ok = et_is_float(in) ? et_is_float(t) && !et_is_fp8(t) : t == ET_I32 || t == ET_I64;
    if (!ok) {
        diag_error(s->diags, a->e[4]->loc, "dot() of %s operands cannot accumulate in %s "
                   "(out_dtype takes %s)", et_name(in), et_name(t),
                   et_is_float(in) ? "f16, bf16, f32 or f64" : "i32 or i64");
        return 0;
    }
    Val c = a->e[2] ? a->v[2] : (Val){.kind = V_VOID};
    if (c.kind == V_TILE && c.v->type.elem != t) {
        diag_error(s->diags, a->e[4]->loc, "dot(): out_dtype=%s differs from the accumulator's "
                   "type %s (they must match, as in Triton)", et_name(t), val_type_str(s, &c));
        return 0;
    }
    *acc_t = t;
    return 1;
}

/* The accumulator of a dot whose result has `shape` (rank 2, or 3 for a batched dot) and
 * operands of type `in`: the acc argument (a constant fills a tile of acc_t), or zeros of
 * acc_t. NULL after a diagnostic. */
static TirValue *dot_acc(Spec *s, Args *a, ElemKind acc_t, int rank, const int *shape) {
    if (!a->e[2])
        return spec_materialize(s, val_const_int(ET_I32, 0, 1), acc_t, rank, shape, a->call->loc);
    if (!spec_need_value(s, a, 2)) return NULL;
    Val c = a->v[2];
    if (c.kind == V_TILE && (c.v->type.rank != rank || memcmp(c.v->type.shape, shape, sizeof(int) * (size_t)rank))) {
        TirType want = tir_type_make(acc_t, rank, shape);
        diag_error(s->diags, a->e[2]->loc, "dot() accumulator must be %s, got %s",
                   tir_type_str(s->arena, &want), val_type_str(s, &c));
        return NULL;
    }
    return spec_materialize(s, c, c.kind == V_CONST ? acc_t : val_elem(&c), rank, shape, a->e[2]->loc);
}

/* The operands' ranks agree, and rank-3 ones have equal batch dims of at most 64 (one dot
 * each). */
static int dot_batch(Spec *s, Args *a, const TirValue *x, const TirValue *y) {
    int rank = x->type.rank, b = x->type.shape[0];
    if (y->type.rank != rank) {
        diag_error(s->diags, a->call->loc, "dot() operands of ranks %d and %d: %s and %s (both 2, "
                   "or both 3 for a batch)", rank, y->type.rank, val_type_str(s, &a->v[0]),
                   val_type_str(s, &a->v[1]));
        return 0;
    }
    if (rank == 3 && b != y->type.shape[0]) {
        diag_error(s->diags, a->call->loc, "dot() batch dimensions differ: %s and %s",
                   val_type_str(s, &a->v[0]), val_type_str(s, &a->v[1]));
        return 0;
    }
    if (rank == 3 && b > 64) {
        diag_error(s->diags, a->call->loc, "dot() of a batch of %d: at most 64 (a batched dot is "
                   "one dot per batch index)", b);
        return 0;
    }
    return 1;
}

static Val b_dot(Spec *s, Args *a) {
    if (!dot_operand(s, a, 0) || !dot_operand(s, a, 1)) return val_error();
    TirValue *x = a->v[0].v, *y = a->v[1].v;
    if (!dot_batch(s, a, x, y)) return val_error();
    int rank = x->type.rank, bd = rank - 2; /* the batch dim's count: 0 or 1 */
    int m = x->type.shape[bd], kx = x->type.shape[bd + 1], ky = y->type.shape[bd], n = y->type.shape[bd + 1];
    if (kx != ky) {
        diag_error(s->diags, a->call->loc, "dot() inner dimensions differ: %s and %s",
                   val_type_str(s, &a->v[0]), val_type_str(s, &a->v[1]));
        return val_error();
    }
    if (x->type.elem != y->type.elem) { /* a silent promotion would hide an f32 dot */
        diag_error(s->diags, a->call->loc, "dot() operands have different element types: %s and %s "
                   "(convert one with `as`)", val_type_str(s, &a->v[0]), val_type_str(s, &a->v[1]));
        return val_error();
    }
    ElemKind acc_t = dot_acc_type(x->type.elem);
    int shape[3] = {x->type.shape[0], m, n}, tf32 = 0;
    const int *out = shape + (1 - bd);
    if (!spec_check_numel(s, rank, out, a->call->loc) || !dot_out_type(s, a, x->type.elem, &acc_t))
        return val_error();
    TirValue *acc = dot_acc(s, a, acc_t, rank, out);
    if (!acc || !dot_tf32_flag(s, a, &tf32)) return val_error();
    if (rank == 3)
        return spec_dot_batched(s, x, y, acc, tf32 ? DOT_TF32 : DOT_IEEE, a->call->loc);
    TirValue *ops[3] = {x, y, acc};
    TirValue *r = spec_emit(s, TIR_DOT, a->call->loc, ops, 3, acc->type);
    r->def->attr.i = tf32 ? DOT_TF32 : DOT_IEEE;
    return val_tile(r);
}

static TirValue *tile_arg(Spec *s, Args *a, int i, const char *what) {
    if (!spec_need_value(s, a, i)) return NULL;
    if (a->v[i].kind != V_TILE || a->v[i].v->type.rank == 0) {
        diag_error(s->diags, a->e[i]->loc, "%s() needs a tile, got %s", what, val_type_str(s, &a->v[i]));
        return NULL;
    }
    return a->v[i].v;
}

/* trans(x) swaps a rank-2 tile's dims; trans(x, dims) / permute(x, dims) reorder any rank:
 * result dim d is x's dim dims[d]. */
/* A dims or shape argument for messages: a compile-time integer or a list of them as
 * written ("3", "[1, 0, 2]"), anything else as its type. */
static const char *dims_str(Spec *s, const Val *v) {
    if (v->kind == V_CONST && !et_is_float(v->ct)) return arena_printf(s->arena, "%lld", (long long)v->i);
    if (v->kind != V_LIST) return val_type_str(s, v);
    const char *out = "[";
    for (int i = 0; i < v->nitems; i++) {
        const Val *it = &v->items[i];
        out = arena_printf(s->arena, "%s%s%s", out, i ? ", " : "",
                           it->kind == V_LIST ? "[...]" : dims_str(s, it));
    }
    return arena_printf(s->arena, "%s]", out);
}

static Val b_permute(Spec *s, Args *a) {
    TirValue *x = tile_arg(s, a, 0, a->call->name);
    if (!x) return val_error();
    int rank = x->type.rank, perm[TIR_MAX_RANK] = {1, 0}, seen = 0;
    if (!a->e[1]) {
        if (rank != 2) {
            diag_error(s->diags, a->e[0]->loc, "%s() of a rank-%d tile needs its dims, e.g. %s(x, [2, 0, 1])",
                       a->call->name, rank, a->call->name);
            return val_error();
        }
        return val_tile(spec_permute(s, x, perm, a->call->loc));
    }
    Val v = a->v[1];
    int n = v.kind == V_LIST ? v.nitems : -1;
    for (int d = 0; d < n && n == rank; d++) {
        Val it = v.items[d];
        int ok = it.kind == V_CONST && !et_is_float(it.ct) && it.i >= 0 && it.i < rank && !((seen >> it.i) & 1);
        if (!ok) n = -1;
        else perm[d] = (int)it.i, seen |= 1 << it.i;
    }
    if (n != rank) {
        diag_error(s->diags, a->e[1]->loc, "%s() of a rank-%d tile needs dims as a list of each of 0 "
                   "to %d once, got %s", a->call->name, rank, rank - 1, dims_str(s, &v));
        return val_error();
    }
    return val_tile(spec_permute(s, x, perm, a->call->loc));
}

/* ravel(x): x as one dim, row-major */
static Val b_ravel(Spec *s, Args *a) {
    TirValue *x = tile_arg(s, a, 0, "ravel");
    if (!x) return val_error();
    int n = tir_type_numel(&x->type);
    return val_tile(x->type.rank == 1 ? x : spec_reshape(s, x, 1, &n, a->call->loc));
}

/* zeros_like(x): zeros of x's shape and element type */
static Val b_zeros_like(Spec *s, Args *a) {
    TirValue *x = tile_arg(s, a, 0, "zeros_like");
    if (!x) return val_error();
    if (x->type.elem == ET_PTR) {
        diag_error(s->diags, a->e[0]->loc, "zeros_like() needs numbers, got %s",
                   val_type_str(s, &a->v[0]));
        return val_error();
    }
    return val_tile(spec_materialize(s, val_const_int(ET_I32, 0, 1), x->type.elem, x->type.rank,
                                     x->type.shape, a->call->loc));
}

/* A reduction of x along axis, the axis kept (size 1). */
static TirValue *reduce_kept(Spec *s, TirValue *x, TirReduce kind, int axis, SrcLoc at) {
    return keep_axis(s, emit_reduce(s, x, kind, axis, at), x->type.rank, axis, at);
}

/* softmax(x [, dim] [, keep_dims] [, ieee_rounding]), as Triton's: exp(x - max) / sum along
 * dim (default 0), in f32 for narrower floats and integers, the result in x's float type.
 * keep_dims and ieee_rounding are taken for Triton's sake: the result has x's shape, and
 * division is IEEE-rounded anyway. */
static Val b_softmax(Spec *s, Args *a) {
    TirValue *x = tile_arg(s, a, 0, "softmax");
    if (!x) return val_error();
    SrcLoc at = a->call->loc;
    int axis = 0, flag;
    if (x->type.elem == ET_PTR || x->type.elem == ET_BOOL) {
        diag_error(s->diags, a->e[0]->loc, "softmax() needs numbers, got %s", val_type_str(s, &a->v[0]));
        return val_error();
    }
    if (a->e[1] && a->v[1].kind != V_NONE && !axis_arg(s, a, 1, x->type.rank, &axis)) return val_error();
    for (int i = 2; i <= 3; i++) {
        const char *what = i == 2 ? "keep_dims" : "ieee_rounding";
        if (a->e[i] && !spec_bool_arg(s, a, i, what, &flag)) return val_error();
    }
    ElemKind out = et_is_float(x->type.elem) && !et_is_fp8(x->type.elem) ? x->type.elem : ET_F32;
    TirValue *f = x->type.elem == ET_F32 || x->type.elem == ET_F64 ? x : spec_cast(s, x, ET_F32, at);
    Val mx = val_tile(reduce_kept(s, f, RED_MAX, axis, at));
    TirValue *z = spec_as_tile(s, spec_binary(s, OP_SUB, val_tile(f), mx, at), at);
    if (!z) return val_error();
    TirValue *e = spec_emit(s, TIR_UNARY, at, &z, 1, z->type);
    e->def->attr.i = UN_EXP;
    Val sum = val_tile(reduce_kept(s, e, RED_SUM, axis, at));
    TirValue *r = spec_as_tile(s, spec_binary(s, OP_DIV, val_tile(e), sum, at), at);
    return r && r->type.elem != out ? val_tile(spec_cast(s, r, out, at)) : r ? val_tile(r) : val_error();
}

/* reshape(x, [d0, ...]): the same elements in row-major order; one dim may be -1 (the rest). */
static Val b_reshape(Spec *s, Args *a) {
    TirValue *x = tile_arg(s, a, 0, a->call->name);
    if (!x) return val_error();
    Val v = a->v[1];
    int n = v.kind == V_LIST ? v.nitems : 1, shape[TIR_MAX_RANK], infer = -1;
    int64_t numel = 1;
    if (n > TIR_MAX_RANK) {
        diag_error(s->diags, a->e[1]->loc, "tiles have at most %d dimensions", TIR_MAX_RANK);
        return val_error();
    }
    for (int d = 0; d < n; d++) {
        Val it = v.kind == V_LIST ? v.items[d] : v;
        if (it.kind == V_CONST && !et_is_float(it.ct) && it.i == -1 && infer < 0) {
            infer = d;
            continue;
        }
        if (it.kind != V_CONST || et_is_float(it.ct) || !is_pow2(it.i) || it.i > SPEC_MAX_NUMEL) {
            diag_error(s->diags, a->e[1]->loc, "%s() dims are compile-time powers of two (one may be -1), got %s",
                       a->call->name, dims_str(s, &it));
            return val_error();
        }
        shape[d] = (int)it.i, numel *= it.i;
    }
    int64_t have = tir_type_numel(&x->type);
    if (infer >= 0 && numel > 0 && have % numel == 0) shape[infer] = (int)(have / numel), numel = have;
    if (numel != have) {
        char want[96] = "[";
        for (int d = 0; d < n; d++)
            snprintf(want + strlen(want), sizeof want - strlen(want), "%s%d", d ? ", " : "",
                     d == infer ? -1 : shape[d]);
        diag_error(s->diags, a->e[1]->loc, "reshape() of %s to %s]: the element counts differ",
                   val_type_str(s, &a->v[0]), want);
        return val_error();
    }
    return val_tile(spec_reshape(s, x, n, shape, a->call->loc));
}

/* expand_dims(x, axis): a dim of size 1 inserted at axis (x[None, :] and x[:, None]). */
static Val b_expand_dims(Spec *s, Args *a) {
    if (!spec_need_value(s, a, 0)) return val_error();
    TirValue *x = spec_as_tile(s, a->v[0], a->e[0]->loc);
    int axis;
    if (!x || !axis_arg(s, a, 1, x->type.rank + 1, &axis) || !(x = spec_expand_dims(s, x, axis, a->call->loc)))
        return val_error();
    return val_tile(x);
}

/* join(a, b): [..., 2] with a at index 0 of the new last dim and b at 1 (broadcast together,
 * promoted to one type). */
static TirValue *joined(Spec *s, Args *a) {
    if (!spec_need_value(s, a, 0) || !spec_need_value(s, a, 1)) return NULL;
    Val both[2] = {a->v[0], a->v[1]};
    int rank, shape[TIR_MAX_RANK];
    if (!spec_broadcast_shape(s, both, 2, &rank, shape, a->call->loc)) return NULL;
    int scalars = rank == 0;
    if (scalars) rank = 1, shape[0] = 1; /* joined as [1, 2], then reshaped to [2] */
    if (rank >= TIR_MAX_RANK) {
        diag_error(s->diags, a->call->loc, "join() of rank-%d tiles: tiles have at most %d dimensions",
                   rank, TIR_MAX_RANK);
        return NULL;
    }
    ElemKind et = val_elem(&a->v[0]) == ET_PTR ? ET_PTR : spec_promote(&a->v[0], &a->v[1]);
    TirValue *x = spec_materialize(s, a->v[0], et, rank, shape, a->e[0]->loc);
    TirValue *y = x ? spec_materialize(s, a->v[1], et, rank, shape, a->e[1]->loc) : NULL;
    if (!y) return NULL;
    if (et == ET_PTR && x->type.pointee != y->type.pointee) {
        diag_error(s->diags, a->call->loc, "join() of pointers to different types: %s and %s",
                   val_type_str(s, &a->v[0]), val_type_str(s, &a->v[1]));
        return NULL;
    }
    int out[TIR_MAX_RANK];
    memcpy(out, shape, sizeof(int) * (size_t)rank);
    out[rank] = 2;
    if (!spec_check_numel(s, rank + 1, out, a->call->loc)) return NULL;
    TirType t = tir_type_make(et, rank + 1, out);
    t.pointee = x->type.pointee;
    TirValue *ops[2] = {x, y};
    TirValue *j = spec_emit(s, TIR_JOIN, a->call->loc, ops, 2, t);
    return scalars ? spec_reshape(s, j, 1, out + 1, a->call->loc) : j;
}

static Val b_join(Spec *s, Args *a) {
    TirValue *j = joined(s, a);
    return j ? val_tile(j) : val_error();
}

/* interleave(a, b): [..., 2n] alternating a's and b's elements along the last dim. */
static Val b_interleave(Spec *s, Args *a) {
    TirValue *j = joined(s, a);
    if (!j) return val_error();
    if (j->type.rank == 1) return val_tile(j); /* two scalars: [a, b], as join() */
    int rank = j->type.rank - 1, shape[TIR_MAX_RANK];
    memcpy(shape, j->type.shape, sizeof(int) * (size_t)rank);
    shape[rank - 1] *= 2;
    return val_tile(spec_reshape(s, j, rank, shape, a->call->loc));
}

/* cat(a, b [, can_reorder=B]) (Triton's tl.cat): a's rows, then b's, along dim 0, of two tiles
 * of one shape and element type. The order is kept whatever can_reorder says. */
static Val b_cat(Spec *s, Args *a) {
    TirValue *x = tile_arg(s, a, 0, "cat"), *y = x ? tile_arg(s, a, 1, "cat") : NULL;
    int reorder;
    if (!y || (a->e[2] && !spec_bool_arg(s, a, 2, "can_reorder", &reorder))) return val_error();
    if (!tir_type_equal(&x->type, &y->type)) {
        int shapes = x->type.rank != y->type.rank ||
                     memcmp(x->type.shape, y->type.shape, sizeof(int) * (size_t)x->type.rank);
        int pointers = x->type.elem == ET_PTR && y->type.elem == ET_PTR;
        const char *why = shapes ? "the shapes differ (it joins tiles of one shape along dim 0)"
                        : pointers ? "the pointee types differ"
                        : "the element types differ (convert one with `as`)";
        diag_error(s->diags, a->e[1]->loc, "cat() of %s and %s: %s", val_type_str(s, &a->v[0]),
                   val_type_str(s, &a->v[1]), why);
        return val_error();
    }
    int out[TIR_MAX_RANK];
    memcpy(out, x->type.shape, sizeof(int) * (size_t)x->type.rank);
    out[0] *= 2;
    if (!spec_check_numel(s, x->type.rank, out, a->call->loc)) return val_error();
    return val_tile(spec_cat(s, x, y, a->call->loc));
}

/* split(x): x [..., 2] -> x[..., 0], x[..., 1] (two values: `let a, b = split(x);`). */
static Val b_split(Spec *s, Args *a) {
    TirValue *x = tile_arg(s, a, 0, "split");
    if (!x) return val_error();
    int rank = x->type.rank;
    if (x->type.shape[rank - 1] != 2) {
        diag_error(s->diags, a->e[0]->loc, "split() needs a last dim of size 2, got %s "
                   "(reshape it first, e.g. reshape(x, [n / 2, 2]))", val_type_str(s, &a->v[0]));
        return val_error();
    }
    if (rank == 1) /* [2] -> [1, 2]: the halves are [1] tiles */
        x = spec_reshape(s, x, 2, (const int[]){1, 2}, a->call->loc), rank = 2;
    TirType t = x->type;
    t.rank = rank - 1;
    TirType types[2] = {t, t};
    TirOp *op = tir_op_append(s->k, s->block, TIR_SPLIT, a->call->loc, &x, 1, types, 2);
    Val r = {.kind = V_TUPLE, .nitems = 2};
    r.items = arena_alloc(s->arena, sizeof(Val) * 2);
    if (!op || !r.items) return val_error();
    r.items[0] = val_tile(op->results[0]);
    r.items[1] = val_tile(op->results[1]);
    return r;
}

/* ---- Triton's swizzle2d, histogram, gather, xor_sum (compiler/spec_triton.c) ---- */
/* An integer tile (or, with scalars_ok, scalar) in slot i; NULL-free check with a diagnostic. */
static int integer_arg(Spec *s, Args *a, int i, int scalars_ok) {
    if (!spec_need_value(s, a, i)) return 0;
    ElemKind k = val_elem(&a->v[i]);
    if (!et_is_int(k) || (!scalars_ok && (a->v[i].kind != V_TILE || val_rank(&a->v[i]) == 0))) {
        diag_error(s->diags, a->e[i]->loc, "%s() needs %s, got %s", a->call->name,
                   scalars_ok ? "integers" : "an integer tile", val_type_str(s, &a->v[i]));
        return 0;
    }
    return 1;
}

static Val b_swizzle2d(Spec *s, Args *a) {
    for (int i = 0; i < 5; i++)
        if (!integer_arg(s, a, i, 1)) return val_error();
    for (int i = 3; i < 5; i++) /* size_j and size_g divide */
        if (a->v[i].kind == V_CONST && a->v[i].i < 1) {
            diag_error(s->diags, a->e[i]->loc, "swizzle2d()'s %s must be positive, got %lld",
                       i == 3 ? "size_j" : "size_g", (long long)a->v[i].i);
            return val_error();
        }
    return spec_swizzle2d(s, a->v, a->call->loc);
}

static Val b_histogram(Spec *s, Args *a) {
    int64_t bins;
    if (!integer_arg(s, a, 0, 0) || !spec_const_arg(s, a, 1, &bins)) return val_error();
    if (bins < 1 || bins > (1 << 20) || (bins & (bins - 1))) {
        diag_error(s->diags, a->e[1]->loc, "histogram() needs a power of two from 1 to 1048576 as "
                   "its number of bins, got %lld", (long long)bins);
        return val_error();
    }
    TirValue *x = a->v[0].v, *mask = NULL;
    if (a->e[2] && !(mask = mask_operand(s, a, 2, x->type.rank, x->type.shape))) return val_error();
    return spec_histogram(s, x, (int)bins, mask, a->call->loc);
}

static Val b_gather(Spec *s, Args *a) {
    TirValue *src = tile_arg(s, a, 0, "gather");
    int axis;
    if (!src || !integer_arg(s, a, 1, 0)) return val_error();
    TirValue *index = a->v[1].v;
    int rank = src->type.rank;
    if (src->type.elem == ET_PTR) {
        diag_error(s->diags, a->e[0]->loc, "gather() of pointers is not supported");
        return val_error();
    }
    if (rank > TIR_MAX_RANK - 1) {
        diag_error(s->diags, a->e[0]->loc, "gather() takes tiles of at most %d dims, got %s",
                   TIR_MAX_RANK - 1, val_type_str(s, &a->v[0]));
        return val_error();
    }
    if (!axis_arg(s, a, 2, rank, &axis)) return val_error();
    int fits = index->type.rank == rank;
    for (int d = 0; fits && d < rank; d++)
        fits = d == axis || index->type.shape[d] == src->type.shape[d];
    if (!fits) {
        diag_error(s->diags, a->e[1]->loc, "gather() needs an index of src's rank whose dims other "
                   "than the axis (%d) are src's: src %s, index %s", axis, val_type_str(s, &a->v[0]),
                   val_type_str(s, &a->v[1]));
        return val_error();
    }
    int shape[TIR_MAX_RANK + 1];
    memcpy(shape, index->type.shape, sizeof(int) * (size_t)rank);
    shape[rank] = src->type.shape[axis];
    if (!spec_check_numel(s, rank + 1, shape, a->call->loc)) return val_error();
    return spec_gather(s, src, index, axis, a->call->loc);
}

static Val b_xor_sum(Spec *s, Args *a) {
    int keep = 0, axis = -1;
    if (!integer_arg(s, a, 0, 0)) return val_error();
    TirValue *x = a->v[0].v;
    if (a->e[2] && !spec_bool_arg(s, a, 2, "keep_dims", &keep)) return val_error();
    if (a->e[1] && a->v[1].kind != V_NONE && !axis_arg(s, a, 1, x->type.rank, &axis)) return val_error();
    return spec_reduce_op(s, x, axis, OP_BITXOR, keep, a->call->loc);
}

/* What each built-in function of lang/builtins.c becomes (the math ones: spec_math.c). */
static const struct {
    const char *name;
    BuiltinFn fn;
} builtins[] = {
    {"program_id", b_program_id}, {"num_programs", b_program_id}, {"arange", b_arange},
    {"zeros", b_zeros}, {"full", b_full}, {"load", b_load}, {"store", b_store}, {"prefetch", b_prefetch},
    {"make_block_ptr", spec_make_block_ptr}, {"advance", spec_advance}, {"softmax", b_softmax},
    {"zeros_like", b_zeros_like}, {"ravel", b_ravel}, {"broadcast_to", b_broadcast_to},
    {"sum", b_reduce}, {"max", b_reduce}, {"min", b_reduce}, {"argmax", b_reduce},
    {"argmin", b_reduce}, {"dot", b_dot}, {"trans", b_permute}, {"permute", b_permute},
    {"reshape", b_reshape}, {"expand_dims", b_expand_dims}, {"join", b_join},
    {"interleave", b_interleave}, {"cat", b_cat}, {"split", b_split}, {"atomic_add", b_atomic},
    {"atomic_max", b_atomic}, {"atomic_min", b_atomic}, {"atomic_and", b_atomic},
    {"atomic_or", b_atomic}, {"atomic_xor", b_atomic}, {"atomic_xchg", b_atomic},
    {"static_assert", b_static_assert}, {"print", b_print}, {"static_print", b_static_print},
    {"reduce", b_combine}, {"associative_scan", b_combine}, {"device_assert", b_device_assert},
    {"cumsum", b_scan}, {"flip", b_flip}, {"sort", b_sort}, {"topk", b_sort}, {"argsort", b_sort},
    {"argtopk", b_sort}, {"cumprod", b_scan}, {"multiple_of", b_hint}, {"max_contiguous", b_hint},
    {"max_constancy", b_hint}, {"device_print", b_print}, {"view", b_reshape},
    {"assume", b_assume}, {"rand", b_random}, {"randn", b_random}, {"randint", b_random},
    {"rand4x", b_random}, {"randn4x", b_random}, {"randint4x", b_random}, {"philox", b_philox},
    {"atomic_cas", b_atomic}, {"debug_barrier", b_debug_barrier}, {"swizzle2d", b_swizzle2d},
    {"histogram", b_histogram}, {"gather", b_gather}, {"xor_sum", b_xor_sum},
    {"inline_asm_elementwise", spec_inline_asm},
};


static BuiltinFn find_builtin(const char *name) {
    for (int i = 0; i < (int)(sizeof builtins / sizeof builtins[0]); i++)
        if (strcmp(builtins[i].name, name) == 0) return builtins[i].fn;
    return spec_math_builtin(name);
}

int spec_is_builtin(const char *name) { return builtin_sig(name) != NULL; }

Val spec_builtin(Spec *s, const Expr *call) {
    const BuiltinSig *sig = builtin_sig(call->name);
    BuiltinFn fn = find_builtin(call->name);
    if (!fn) { /* a signature without code: the two tables disagree */
        diag_error(s->diags, call->loc, "internal error: built-in %s() has no implementation",
                   call->name);
        return val_error();
    }
    Args a;
    if (!bind_args(s, call, sig->slots, builtin_nslots(sig), sig->nreq, &a)) return val_error();
    return fn(s, &a);
}
