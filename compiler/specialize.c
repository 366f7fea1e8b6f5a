/* specialize.c: turns a kernel's AST and its const values into tile IR. Variables live in
 * scopes; branches and loops become structured regions whose carried values are the
 * variables they assign; helpers are inlined at each call; `if` on a compile-time
 * condition keeps only the branch taken. Expressions are in spec_expr.c. */
#include <string.h>
#include "spec.h"

/* ---- scopes ---- */
Binding *spec_lookup(Spec *s, const char *name) {
    for (Scope *sc = s->scope; sc; sc = sc->parent)
        for (Binding *b = sc->vars; b; b = b->next)
            if (strcmp(b->name, name) == 0) return b;
    return NULL;
}

void spec_bind(Spec *s, const char *name, Val v) {
    Binding *b = arena_alloc(s->arena, sizeof *b);
    b->name = name;
    b->val = v;
    b->set_at = (SrcLoc){0};
    b->next = s->scope->vars;
    s->scope->vars = b;
}

static void scope_push(Spec *s) {
    Scope *sc = arena_alloc(s->arena, sizeof *sc);
    sc->parent = s->scope;
    s->scope = sc;
}

static void scope_pop(Spec *s) { s->scope = s->scope->parent; }

/* ---- names assigned in a statement tree (the candidates for carried values) ---- */
static void collect_assigned(const Stmt *st, PtrVec *out, Arena *a) {
    if (!st) return;
    if (st->kind == ST_ASSIGN) {
        for (int k = 0; k < st->nnames; k++) {
            int seen = 0;
            for (int i = 0; i < out->len && !seen; i++)
                seen = strcmp(out->items[i], st->names[k]) == 0;
            if (!seen) ptrvec_push(a, out, (void *)st->names[k]);
        }
        return;
    }
    for (int i = 0; i < st->nstmts; i++) collect_assigned(st->stmts[i], out, a);
    collect_assigned(st->body, out, a);
    collect_assigned(st->else_body, out, a);
}

/* Outer bindings that the statements may assign. */
static int assigned_bindings(Spec *s, const Stmt *a, const Stmt *b, Binding ***out) {
    PtrVec names = {0};
    collect_assigned(a, &names, s->arena);
    collect_assigned(b, &names, s->arena);
    *out = arena_alloc(s->arena, sizeof(Binding *) * (size_t)(names.len + 1));
    int n = 0;
    for (int i = 0; i < names.len; i++) {
        Binding *bd = spec_lookup(s, names.items[i]);
        if (bd) (*out)[n++] = bd;
    }
    return n;
}

static void spec_stmt(Spec *s, const Stmt *st);

static void spec_stmts_scoped(Spec *s, const Stmt *block) {
    if (!block) return;
    scope_push(s);
    spec_stmt(s, block);
    scope_pop(s);
}

/* ---- values that flow out of regions ---- */
static int same_val(const Val *a, const Val *b) {
    if (a->kind != b->kind) return 0;
    if (a->kind == V_TILE) return a->v == b->v;
    if (a->kind == V_CONST) return a->ct == b->ct && a->i == b->i && a->f == b->f;
    return a->kind == V_LIST || a->kind == V_TYPE || a->kind == V_BLOCKPTR ? a->items == b->items && a->ct == b->ct : 1;
}

static int carried_type(Spec *s, const char *name, Val v, TirType *t, SrcLoc loc) {
    if (v.kind == V_TILE) {
        *t = v.v->type;
        return 1;
    }
    if (v.kind == V_CONST) {
        *t = (TirType){.elem = v.ct};
        return 1;
    }
    if (v.kind != V_ERROR)
        diag_error(s->diags, loc, "variable '%s' holds %s, which cannot change inside a loop or branch",
                   name, val_type_str(s, &v));
    return 0;
}

/* Converts a region's final value of a carried variable to the carried type. */
static TirValue *flow_value(Spec *s, const char *name, Val v, const TirType *t, SrcLoc loc) {
    if (v.kind == V_ERROR) return NULL;
    if (v.kind == V_CONST) return spec_materialize(s, v, t->elem, t->rank, t->shape, loc);
    if (v.kind != V_TILE) {
        carried_type(s, name, v, &(TirType){0}, loc);
        return NULL;
    }
    if (!tir_type_equal(&v.v->type, t)) {
        diag_error(s->diags, loc, "variable '%s' changes type from %s to %s inside a loop or branch",
                   name, tir_type_str(s->arena, t), tir_type_str(s->arena, &v.v->type));
        return NULL;
    }
    return v.v;
}

/* ---- slots: carried values, block pointers carried part by part ---- */
static Val slot_get(const Slot *sl) { return sl->part < 0 ? sl->b->val : spec_bp_part(&sl->b->val, sl->part); }

static void slot_set(Spec *s, const Slot *sl, Val v) {
    sl->b->val = sl->part < 0 ? v : spec_bp_with_part(s, &sl->b->val, sl->part, v);
}

/* Whether every assignment to `name` in st is `name = advance(name, ...)`: then a loop around
 * st changes only the offsets of the block pointer it holds. */
static int advances_only(const Stmt *st, const char *name) {
    if (!st) return 1;
    if (st->kind == ST_ASSIGN && st->nnames > 1) { /* a, b = f(...): any value */
        for (int k = 0; k < st->nnames; k++)
            if (strcmp(st->names[k], name) == 0) return 0;
        return 1;
    }
    if (st->kind == ST_ASSIGN && strcmp(st->names[0], name) == 0) {
        const Expr *v = st->value;
        return st->op < 0 && v->kind == EX_CALL && strcmp(v->name, "advance") == 0 && v->nargs > 0 &&
               v->args[0]->kind == EX_NAME && strcmp(v->args[0]->name, name) == 0;
    }
    for (int i = 0; i < st->nstmts; i++)
        if (!advances_only(st->stmts[i], name)) return 0;
    return advances_only(st->body, name) && advances_only(st->else_body, name);
}

/* The slots of bindings bs[0..n) that loop body `body` assigns: one per variable, and a block
 * pointer's parts: its offsets alone where the body only advances it (loop_check_block_ptrs
 * holds it to that), else every part. */
static int loop_slots(Spec *s, const Stmt *body, Binding **bs, int n, Slot **out) {
    Slot *sl = *out = arena_alloc(s->arena, sizeof(Slot) * ((size_t)n * SPEC_BP_MAX_PARTS + 1));
    int k = 0;
    for (int i = 0; i < n; i++) {
        const Val *v = &bs[i]->val;
        if (v->kind != V_BLOCKPTR) {
            sl[k++] = (Slot){bs[i], -1};
            continue;
        }
        int all = !advances_only(body, bs[i]->name);
        for (int p = 0; p < spec_bp_nparts(v); p++)
            if (all || spec_bp_is_offset(v, p)) sl[k++] = (Slot){bs[i], p};
    }
    return k;
}

/* The end of a region: its carried values. A loop body's type errors point at the assignment
 * that changed the type (the body's last one), not at the loop. */
static void emit_terminator(Spec *s, TirOpcode code, const Slot *sl, const TirType *types, int n,
                            SrcLoc loc, int at_assignment) {
    TirValue **vals = arena_alloc(s->arena, sizeof(TirValue *) * (size_t)(n + 1));
    for (int i = 0; i < n; i++) {
        SrcLoc at = at_assignment && sl[i].b->set_at.file ? sl[i].b->set_at : loc;
        if (!(vals[i] = flow_value(s, sl[i].b->name, slot_get(&sl[i]), &types[i], at))) return;
    }
    tir_op_append(s->k, s->block, code, loc, vals, n, NULL, 0);
}

/* Whether the slots sl[0..n) include part p of binding b. */
static int slot_carried(const Slot *sl, int n, const Binding *b, int p) {
    for (int i = 0; i < n; i++)
        if (sl[i].b == b && sl[i].part == p) return 1;
    return 0;
}

/* Where a loop body ends (or breaks or continues), each block pointer it carries must still be
 * one of the same block, and the parts the loop does not carry (loop_slots) unchanged. */
static int loop_check_block_ptrs(Spec *s, const LoopCtx *c, SrcLoc loc) {
    for (int i = 0; i < c->nslots; i++) {
        const Slot *sl = &c->slots[i];
        if (sl->part < 0 || (i > 0 && c->slots[i - 1].b == sl->b)) continue;
        const Val *now = &sl->b->val, *was = &c->entry[i];
        if (now->kind == V_ERROR) return 0;
        if (now->kind != V_BLOCKPTR || !spec_bp_same_block(now, was)) {
            diag_error(s->diags, loc, "variable '%s' changes from %s to %s inside this loop", sl->b->name,
                       val_type_str(s, was), val_type_str(s, now));
            return 0;
        }
        for (int p = 0; p < spec_bp_nparts(now); p++) {
            Val x = spec_bp_part(now, p), y = spec_bp_part(was, p);
            if (slot_carried(c->slots, c->nslots, sl->b, p) || same_val(&x, &y)) continue;
            diag_error(s->diags, loc, "block pointer '%s' changes inside this loop other than by '%s = "
                       "advance(%s, ...)'", sl->b->name, sl->b->name, sl->b->name);
            return 0;
        }
    }
    return 1;
}

static void loop_terminator(Spec *s, TirOpcode code, SrcLoc loc) {
    if (loop_check_block_ptrs(s, s->loop, loc))
        emit_terminator(s, code, s->loop->slots, s->loop->types, s->loop->nslots, loc, 1);
}

/* ---- if ---- */
typedef struct Branch {
    TirBlock *block;
    Val *vals;
    int terminated;
} Branch;

static void build_branch(Spec *s, const Stmt *body, Binding **bs, const Val *saved, int n, Branch *br) {
    TirBlock *outer = s->block;
    br->block = tir_block_new(s->k, 0, NULL);
    s->block = br->block;
    s->terminated = 0;
    spec_stmts_scoped(s, body);
    br->terminated = s->terminated;
    br->vals = arena_alloc(s->arena, sizeof(Val) * (size_t)(n + 1));
    for (int i = 0; i < n; i++) {
        br->vals[i] = bs[i]->val;
        bs[i]->val = saved[i];
    }
    s->block = outer;
    s->terminated = 0;
}

/* The type of an if-result: the tiles' type; constants alone promote. */
static int merge_type(Spec *s, const char *name, const Val *a, const Val *b, TirType *t, SrcLoc loc) {
    if (a->kind == V_TILE && b->kind == V_TILE && !tir_type_equal(&a->v->type, &b->v->type)) {
        diag_error(s->diags, loc, "variable '%s' is %s on one path through this if and %s on the "
                   "other (it keeps one type)", name, tir_type_str(s->arena, &a->v->type),
                   tir_type_str(s->arena, &b->v->type));
        return 0;
    }
    const Val *tile = a->kind == V_TILE ? a : b->kind == V_TILE ? b : NULL;
    if (tile) return carried_type(s, name, *tile, t, loc);
    if (a->kind != V_CONST || b->kind != V_CONST) return carried_type(s, name, a->kind != V_CONST ? *a : *b, t, loc);
    *t = (TirType){.elem = spec_promote(a, b)};
    return 1;
}

/* The if-results of a variable that holds a block pointer after each path (a and b) : each
 * part that differs, or that differs from the value before the if (saved). */
static int merge_block_ptr(Spec *s, Binding *bd, const Val *a, const Val *b, const Val *saved, Slot *rs,
                           TirType *types, int *nres, SrcLoc loc) {
    if (!spec_bp_same_block(a, b)) {
        diag_error(s->diags, loc, "variable '%s' holds %s on one path and %s on the other", bd->name,
                   val_type_str(s, a), val_type_str(s, b));
        return 0;
    }
    int same_block = saved->kind == V_BLOCKPTR && spec_bp_same_block(a, saved);
    for (int p = 0; p < spec_bp_nparts(a); p++) {
        Val x = spec_bp_part(a, p), y = spec_bp_part(b, p), z = same_block ? spec_bp_part(saved, p) : val_error();
        if (same_val(&x, &y) && same_block && same_val(&x, &z)) continue;
        if (!merge_type(s, bd->name, &x, &y, &types[*nres], loc)) return 0;
        rs[(*nres)++] = (Slot){bd, p};
    }
    return 1;
}

/* The slots whose values differ between the paths that fall through: the if's results.
 * after[i]: bs[i]'s value once the results are set into it. */
static int if_results(Spec *s, Binding **bs, int n, const Branch *br, const Val *saved, Slot *rs,
                      TirType *types, Val *after, SrcLoc loc) {
    int nres = 0;
    for (int i = 0; i < n; i++) {
        after[i] = saved[i];
        const Val *a = br[0].terminated ? &br[1].vals[i] : &br[0].vals[i];
        const Val *b = br[1].terminated ? a : &br[1].vals[i];
        if (br[0].terminated && br[1].terminated) continue;
        if (a->kind == V_BLOCKPTR && b->kind == V_BLOCKPTR) {
            if (!merge_block_ptr(s, bs[i], a, b, &saved[i], rs, types, &nres, loc)) return -1;
            after[i] = *a;
            continue;
        }
        if (same_val(a, b) && same_val(a, &saved[i])) continue;
        if (a->kind == V_BLOCKPTR || b->kind == V_BLOCKPTR) {
            diag_error(s->diags, loc, "variable '%s' holds %s on one path and %s on the other", bs[i]->name,
                       val_type_str(s, a), val_type_str(s, b));
            return -1;
        }
        if (!merge_type(s, bs[i]->name, a, b, &types[nres], loc)) return -1;
        rs[nres++] = (Slot){bs[i], -1};
    }
    return nres;
}

static void spec_if_runtime(Spec *s, const Stmt *st, TirValue *cond) {
    Binding **bs;
    int n = assigned_bindings(s, st->body, st->else_body, &bs);
    Val *saved = arena_alloc(s->arena, sizeof(Val) * (size_t)(n + 1));
    for (int i = 0; i < n; i++) saved[i] = bs[i]->val;
    Branch br[2];
    s->runtime_ifs++;
    build_branch(s, st->body, bs, saved, n, &br[0]);
    build_branch(s, st->else_body, bs, saved, n, &br[1]);
    s->runtime_ifs--;
    size_t most = (size_t)n * SPEC_BP_MAX_PARTS + 1; /* each variable may be a block pointer */
    Slot *rs = arena_alloc(s->arena, sizeof(Slot) * most);
    TirType *types = arena_alloc(s->arena, sizeof(TirType) * most);
    Val *after = arena_alloc(s->arena, sizeof(Val) * (size_t)(n + 1));
    int nres = if_results(s, bs, n, br, saved, rs, types, after, st->loc);
    if (nres < 0) return;
    TirBlock *outer = s->block;
    for (int r = 0; r < 2; r++) {
        if (br[r].terminated) continue;
        s->block = br[r].block;
        for (int i = 0; i < n; i++) bs[i]->val = br[r].vals[i]; /* each branch yields its own values */
        emit_terminator(s, TIR_YIELD, rs, types, nres, st->loc, 0);
    }
    for (int i = 0; i < n; i++) bs[i]->val = after[i];
    s->block = outer;
    TirOp *op = tir_op_append(s->k, s->block, TIR_IF, st->loc, &cond, 1, types, nres);
    tir_op_add_regions(s->k, op, 2);
    for (int r = 0; r < 2; r++) {
        op->regions[r] = br[r].block;
        br[r].block->parent = op;
    }
    for (int j = 0; j < nres; j++) slot_set(s, &rs[j], val_tile(op->results[j]));
    s->terminated = br[0].terminated && br[1].terminated;
}

static TirValue *scalar_condition(Spec *s, const Expr *e, Val c) {
    if (c.kind == V_ERROR) return NULL;
    if (!val_is_value(&c) || val_rank(&c) != 0 || val_elem(&c) == ET_PTR) {
        diag_error(s->diags, e->loc, "condition must be a scalar bool or integer, got %s", val_type_str(s, &c));
        return NULL;
    }
    if (val_elem(&c) != ET_BOOL) c = spec_binary(s, OP_NE, c, val_const_int(ET_I32, 0, 1), e->loc);
    return spec_as_tile(s, c, e->loc);
}

static void spec_if(Spec *s, const Stmt *st) {
    Val c = spec_expr(s, st->cond);
    if (c.kind == V_CONST) { /* a compile-time condition keeps only the branch taken */
        spec_stmts_scoped(s, c.i ? st->body : st->else_body);
        return;
    }
    TirValue *cond = scalar_condition(s, st->cond, c);
    if (cond) spec_if_runtime(s, st, cond);
}

/* ---- loops ---- */
enum { LOOP_MAX_CARRIED = 64 };

/* The loop's slots (at most LOOP_MAX_CARRIED, else reported) and their types and first values. */
static int loop_inits(Spec *s, const Stmt *body, Binding **bs, int n, Slot **sl, TirValue **inits,
                      TirType *types, SrcLoc loc) {
    int count = loop_slots(s, body, bs, n, sl);
    if (count > LOOP_MAX_CARRIED) {
        diag_error(s->diags, loc, "too many variables carried by this loop (%d, at most %d)", count,
                   LOOP_MAX_CARRIED);
        return -1;
    }
    for (int i = 0; i < count; i++) {
        const Slot *x = &(*sl)[i];
        Val v = slot_get(x);
        if (!carried_type(s, x->b->name, v, &types[i], loc)) return -1;
        if (v.kind == V_CONST && v.weak && et_is_int(types[i].elem)) types[i].elem = ET_I32;
        if (!(inits[i] = flow_value(s, x->b->name, v, &types[i], loc))) return -1;
    }
    return count;
}

/* Binds the carried variables to a region's arguments in a fresh loop scope; the slots of
 * the inner bindings. */
static Slot *bind_region_args(Spec *s, const Slot *outer, int n, TirBlock *b, int first) {
    Slot *inner = arena_alloc(s->arena, sizeof(Slot) * (size_t)(n + 1));
    for (int i = 0; i < n; i++) {
        inner[i].part = outer[i].part;
        if (i > 0 && outer[i - 1].b == outer[i].b) inner[i].b = inner[i - 1].b; /* another part */
        else {
            spec_bind(s, outer[i].b->name, outer[i].b->val);
            inner[i].b = s->scope->vars;
        }
        b->args[first + i]->name = outer[i].b->name;
        slot_set(s, &inner[i], val_tile(b->args[first + i]));
    }
    return inner;
}

static void loop_body(Spec *s, const Stmt *body, TirBlock *blk, Slot *inner, TirType *types, int n, SrcLoc loc) {
    LoopCtx ctx = {s->scope, inner, n, types, NULL}, *saved = s->loop;
    ctx.entry = arena_alloc(s->arena, sizeof(Val) * (size_t)(n + 1));
    for (int i = 0; i < n; i++) ctx.entry[i] = inner[i].b->val;
    s->loop = &ctx;
    s->block = blk;
    s->terminated = 0;
    spec_stmts_scoped(s, body);
    if (!s->terminated) loop_terminator(s, TIR_YIELD, loc);
    s->loop = saved;
    s->terminated = 0;
}

/* The start, end and step of a for loop's range()/static_range() (start 0 and step 1 unless
 * given); 0 when one is an error (already reported). */
static int range_args(Spec *s, const Stmt *st, Val v[3]) {
    v[0] = val_const_int(ET_I32, 0, 1), v[2] = val_const_int(ET_I32, 1, 1);
    for (int i = 0; i < st->nvalues; i++) v[i + (st->nvalues == 1)] = spec_expr(s, st->values[i]);
    return v[0].kind != V_ERROR && v[1].kind != V_ERROR && v[2].kind != V_ERROR;
}

/* The loop variable's type for integer bounds v: i32, or i64 when a bound is 64-bit (literals
 * beyond i32 too) or u32 (i64 holds all of them). */
static ElemKind range_elem(const Val v[3]) {
    ElemKind et = ET_I32;
    for (int i = 0; i < 3; i++)
        if (et_bits(val_elem(&v[i])) == 64 || val_elem(&v[i]) == ET_U32) et = ET_I64;
    return et;
}

static int for_bounds(Spec *s, const Stmt *st, TirValue **bounds) {
    Val v[3];
    if (!range_args(s, st, v)) return 0;
    for (int i = 0; i < 3; i++)
        if (!val_is_value(&v[i]) || val_rank(&v[i]) != 0 || !et_is_int(val_elem(&v[i]))) {
            diag_error(s->diags, st->loc, "range() bounds must be integer scalars, got %s", val_type_str(s, &v[i]));
            return 0;
        }
    ElemKind et = range_elem(v);
    if (v[2].kind == V_CONST && v[2].i == 0) {
        diag_error(s->diags, st->loc, "range() step must not be zero");
        return 0;
    }
    for (int i = 0; i < 3; i++)
        if (!(bounds[i] = spec_materialize(s, v[i], et, 0, NULL, st->loc))) return 0;
    return 1;
}

/* range(..., num_stages=N): a compile-time 1 to 8; 0 (the kernel's) when not given. */
static int loop_stages(Spec *s, const Stmt *st, int64_t *out) {
    *out = 0;
    if (!st->stages) return 1;
    if (!spec_const_int(s, st->stages, out)) return 0;
    if (*out >= 1 && *out <= 8) return 1;
    diag_error(s->diags, st->stages->loc, "a loop's num_stages must be from 1 to 8, got %lld",
               (long long)*out);
    return 0;
}

static void spec_for(Spec *s, const Stmt *st) {
    TirValue *ops[LOOP_MAX_CARRIED + 3];
    int64_t stages;
    if (!loop_stages(s, st, &stages) || !for_bounds(s, st, ops)) return;
    Binding **bs;
    Slot *sl;
    int nb = assigned_bindings(s, st->body, NULL, &bs);
    TirType types[LOOP_MAX_CARRIED + 1];
    int n = loop_inits(s, st->body, bs, nb, &sl, ops + 3, types, st->loc);
    if (n < 0) return;
    TirType args[LOOP_MAX_CARRIED + 2] = {ops[0]->type};
    memcpy(args + 1, types, sizeof(TirType) * (size_t)n);
    TirBlock *blk = tir_block_new(s->k, n + 1, args);
    TirOp *op = tir_op_append(s->k, s->block, TIR_FOR, st->loc, ops, n + 3, types, n);
    op->attr.i = stages;
    tir_op_add_regions(s->k, op, 1);
    op->regions[0] = blk;
    blk->parent = op;
    TirBlock *outer = s->block;
    scope_push(s);
    blk->args[0]->name = st->names[0];
    spec_bind(s, st->names[0], val_tile(blk->args[0]));
    Slot *inner = bind_region_args(s, sl, n, blk, 1);
    loop_body(s, st->body, blk, inner, types, n, st->loc);
    scope_pop(s);
    s->block = outer;
    for (int i = 0; i < n; i++) slot_set(s, &sl[i], val_tile(op->results[i]));
}

/* for i in static_range(...): the body once per value of i, in order, i a compile-time
 * constant each time (the bounds must be constants; at most STATIC_RANGE_MAX iterations). */
enum { STATIC_RANGE_MAX = 1024 };

typedef struct StaticRange {
    int64_t lo, step;
    uint64_t count;
    ElemKind et; /* i's type (range_elem) */
} StaticRange;

/* The range's constant bounds and its number of iterations; 0 (reported) when they are not
 * constants, the step is 0 or the count is over STATIC_RANGE_MAX. */
static int static_bounds(Spec *s, const Stmt *st, StaticRange *r) {
    Val v[3];
    if (!range_args(s, st, v)) return 0;
    for (int i = 0; i < 3; i++)
        if (v[i].kind != V_CONST || !et_is_int(v[i].ct)) {
            diag_error(s->diags, st->loc, "static_range() bounds must be compile-time integer constants, got %s",
                       val_type_str(s, &v[i]));
            return 0;
        }
    r->et = range_elem(v);
    int64_t lo = v[0].i, hi = v[1].i, step = v[2].i;
    if (step == 0) {
        diag_error(s->diags, st->loc, "static_range() step must not be zero");
        return 0;
    }
    /* counted in unsigned arithmetic: bounds anywhere in i64 do not overflow it */
    uint64_t span = step > 0 ? (hi > lo ? (uint64_t)hi - (uint64_t)lo : 0) : (lo > hi ? (uint64_t)lo - (uint64_t)hi : 0);
    uint64_t mag = step > 0 ? (uint64_t)step : 0 - (uint64_t)step;
    r->lo = lo, r->step = step, r->count = span / mag + (span % mag != 0);
    if (r->count > STATIC_RANGE_MAX) {
        diag_error(s->diags, st->loc, "static_range() of %llu iterations (at most %d are unrolled)",
                   (unsigned long long)r->count, STATIC_RANGE_MAX);
        return 0;
    }
    return 1;
}

static void spec_static_for(Spec *s, const Stmt *st) {
    StaticRange r;
    if (!static_bounds(s, st, &r)) return;
    s->static_depth++;
    for (uint64_t k = 0; k < r.count && !s->terminated && !s->over_budget; k++) {
        if (s->inlined_stmts > SPEC_INLINE_BUDGET) { /* nested unrolls multiply */
            diag_error(s->diags, st->loc, "unrolling this static_range takes kernel '%s' past %d "
                       "inlined and unrolled statements", s->kernel->name, SPEC_INLINE_BUDGET);
            s->over_budget = 1;
            break;
        }
        scope_push(s);
        spec_bind(s, st->names[0], val_const_int(r.et, (int64_t)((uint64_t)r.lo + k * (uint64_t)r.step), 0));
        spec_stmt(s, st->body);
        scope_pop(s);
    }
    s->static_depth--;
}

static void spec_while(Spec *s, const Stmt *st) {
    Binding **bs;
    Slot *sl;
    int nb = assigned_bindings(s, st->body, NULL, &bs);
    TirValue *inits[LOOP_MAX_CARRIED + 1];
    TirType types[LOOP_MAX_CARRIED + 1];
    int n = loop_inits(s, st->body, bs, nb, &sl, inits, types, st->loc);
    if (n < 0) return;
    TirBlock *before = tir_block_new(s->k, n, types), *body = tir_block_new(s->k, n, types);
    TirOp *op = tir_op_append(s->k, s->block, TIR_WHILE, st->loc, inits, n, types, n);
    tir_op_add_regions(s->k, op, 2);
    op->regions[0] = before;
    op->regions[1] = body;
    before->parent = body->parent = op;
    TirBlock *outer = s->block;
    scope_push(s);
    bind_region_args(s, sl, n, before, 0);
    s->block = before;
    TirValue *cond = scalar_condition(s, st->cond, spec_expr(s, st->cond));
    if (cond) {
        TirValue *cops[LOOP_MAX_CARRIED + 2] = {cond};
        if (n) memcpy(cops + 1, before->args, sizeof(TirValue *) * (size_t)n);
        tir_op_append(s->k, before, TIR_CONDITION, st->cond->loc, cops, n + 1, NULL, 0);
    }
    scope_pop(s);
    scope_push(s);
    Slot *inner = bind_region_args(s, sl, n, body, 0);
    loop_body(s, st->body, body, inner, types, n, st->loc);
    scope_pop(s);
    s->block = outer;
    for (int i = 0; i < n; i++) slot_set(s, &sl[i], val_tile(op->results[i]));
}

static void spec_jump(Spec *s, const Stmt *st) {
    if (!s->loop) {
        diag_error(s->diags, st->loc, "'%s' outside a loop", st->kind == ST_BREAK ? "break" : "continue");
        return;
    }
    loop_terminator(s, st->kind == ST_BREAK ? TIR_BREAK : TIR_CONTINUE, st->loc);
    s->terminated = 1;
}

/* ---- simple statements ---- */
/* The right side of a let or an assignment: x, y gives a tuple of their values. */
static Val spec_values(Spec *s, const Expr *e) {
    if (e->kind != EX_TUPLE) return spec_expr(s, e);
    Val t = {.kind = V_TUPLE, .nitems = e->nargs};
    t.items = arena_alloc(s->arena, sizeof(Val) * (size_t)(e->nargs + 1));
    for (int i = 0; i < e->nargs; i++) {
        t.items[i] = spec_expr(s, e->args[i]);
        if (t.items[i].kind == V_VOID || t.items[i].kind == V_TUPLE) {
            diag_error(s->diags, e->args[i]->loc, "expression gives %s, expected one value",
                       t.items[i].kind == V_VOID ? "no value" : "several values");
            return val_error();
        }
    }
    return t;
}

/* Several names and a value that does not give as many: a helper's results are counted
 * here where they come from another call (`return f(x)`). */
static void count_mismatch(Spec *s, const Stmt *st, const Val *v) {
    const char *verb = st->kind == ST_LET ? "bound" : "assigned";
    if (st->value->kind == EX_CALL && v->kind == V_TUPLE)
        diag_error(s->diags, st->value->loc, "'%s' returns %d values, but %d names are %s",
                   st->value->name, v->nitems, st->nnames, verb);
    else
        diag_error(s->diags, st->value->loc, "expected %d values on the right, got %s", st->nnames,
                   v->kind == V_TUPLE ? arena_printf(s->arena, "%d", v->nitems) : val_type_str(s, v));
}

static void spec_let(Spec *s, const Stmt *st) {
    Val v = spec_values(s, st->value);
    if (st->nnames == 1) {
        if (v.kind == V_VOID || v.kind == V_TUPLE)
            diag_error(s->diags, st->value->loc, "expression gives %s, expected one value",
                       v.kind == V_VOID ? "no value" : "several values");
        spec_bind(s, st->names[0], v.kind == V_VOID || v.kind == V_TUPLE ? val_error() : v);
        return;
    }
    if (v.kind != V_ERROR && (v.kind != V_TUPLE || v.nitems != st->nnames))
        count_mismatch(s, st, &v);
    for (int i = 0; i < st->nnames; i++)
        spec_bind(s, st->names[i], v.kind == V_TUPLE && v.nitems == st->nnames ? v.items[i] : val_error());
}

/* a, b = f(...): each variable takes its value of the tuple (sema checked the count). */
static void spec_assign_many(Spec *s, const Stmt *st) {
    Val v = spec_values(s, st->value);
    if (v.kind != V_ERROR && (v.kind != V_TUPLE || v.nitems != st->nnames))
        count_mismatch(s, st, &v);
    for (int i = 0; i < st->nnames; i++) {
        Binding *b = spec_lookup(s, st->names[i]);
        if (!b) {
            diag_error(s->diags, st->name_locs[i], "assignment to undeclared variable '%s' "
                       "(declare it with let)", st->names[i]);
            continue;
        }
        b->val = v.kind == V_TUPLE && v.nitems == st->nnames ? v.items[i] : val_error();
        b->set_at = st->loc;
    }
}

static void spec_assign(Spec *s, const Stmt *st) {
    if (st->nnames > 1 || st->value->kind == EX_TUPLE) {
        spec_assign_many(s, st);
        return;
    }
    Binding *b = spec_lookup(s, st->names[0]);
    if (!b) {
        diag_error(s->diags, st->name_locs ? st->name_locs[0] : st->loc,
                   "assignment to undeclared variable '%s' (declare it with let)", st->names[0]);
        return;
    }
    Val v = spec_expr(s, st->value);
    if (st->op >= 0) v = spec_binary(s, (OpKind)st->op, b->val, v, st->loc);
    if (v.kind == V_VOID || v.kind == V_TUPLE) {
        diag_error(s->diags, st->value->loc, "expression gives %s, expected one value",
                   v.kind == V_VOID ? "no value" : "several values");
        v = val_error();
    }
    b->val = v;
    b->set_at = st->loc;
}

static void spec_return(Spec *s, const Stmt *st) {
    if (!s->ret) { /* kernel: leave */
        tir_op_append(s->k, s->block, TIR_RETURN, st->loc, NULL, 0, NULL, 0);
        s->terminated = 1;
        return;
    }
    if (s->runtime_ifs) { /* a helper returns one value: no branch known only at run time */
        diag_error(s->diags, st->loc, "a helper can return inside an if only where its condition "
                   "is a compile-time constant; for a run-time one, compute both values and "
                   "return where(condition, a, b)");
        *s->ret = val_error();
        s->terminated = 1;
        return;
    }
    if (st->nvalues == 1) {
        *s->ret = spec_expr(s, st->values[0]);
    } else {
        Val t = {.kind = st->nvalues ? V_TUPLE : V_VOID, .nitems = st->nvalues};
        t.items = arena_alloc(s->arena, sizeof(Val) * (size_t)(st->nvalues + 1));
        for (int i = 0; i < st->nvalues; i++) t.items[i] = spec_expr(s, st->values[i]);
        *s->ret = t;
    }
    s->terminated = 1; /* the helper's statements after it are not reached */
}

static void spec_stmt(Spec *s, const Stmt *st) {
    if (s->terminated || s->over_budget) return; /* unreachable after return/break/continue */
    if (s->inline_depth > 0 || s->static_depth > 0) s->inlined_stmts++;
    switch (st->kind) {
    case ST_LET: spec_let(s, st); break;
    case ST_ASSIGN: spec_assign(s, st); break;
    case ST_EXPR: spec_expr(s, st->value); break;
    case ST_IF: spec_if(s, st); break;
    case ST_FOR: st->is_static ? spec_static_for(s, st) : spec_for(s, st); break;
    case ST_WHILE: spec_while(s, st); break;
    case ST_BREAK: case ST_CONTINUE: spec_jump(s, st); break;
    case ST_RETURN: spec_return(s, st); break;
    case ST_BLOCK:
        scope_push(s);
        for (int i = 0; i < st->nstmts && !s->terminated; i++) spec_stmt(s, st->stmts[i]);
        scope_pop(s);
        break;
    }
}

/* ---- helpers (inlined) ---- */
static int helper_arg(Spec *s, const Param *p, Val v, SrcLoc loc, Val *out) {
    *out = v;
    if (v.kind == V_ERROR) return 0;
    if (p->is_const && v.kind != V_CONST) {
        diag_error(s->diags, loc, "argument '%s' must be a compile-time constant, got %s", p->name,
                   val_type_str(s, &v));
        return 0;
    }
    if (!p->type) return 1;
    ElemKind et = et_from_name(p->type->name);
    if (!val_is_value(&v) || (p->type->ptr_depth && (val_elem(&v) != ET_PTR || v.v->type.pointee != et)) ||
        (!p->type->ptr_depth && val_elem(&v) == ET_PTR)) {
        diag_error(s->diags, loc, "argument '%s' expects %s%s, got %s", p->name,
                   p->type->ptr_depth ? "*" : "", p->type->name, val_type_str(s, &v));
        return 0;
    }
    if (p->type->ptr_depth) return 1;
    if (v.kind == V_CONST && et_is_int(et) && !et_is_float(v.ct) && !tc_int_fits(et, v.i)) {
        diag_error(s->diags, loc, "argument '%s' expects %s, and %lld is outside its range (%s)", p->name,
                   p->type->name, (long long)v.i, spec_range_str(s, et));
        return 0;
    }
    if (v.kind == V_CONST && et == ET_BOOL) { /* true/false, or a bool const expression */
        if (v.ct != ET_BOOL) {
            diag_error(s->diags, loc, "argument '%s' expects bool, got %s (write true or false, or "
                       "compare)", p->name, val_type_str(s, &v));
            return 0;
        }
        *out = val_const_int(ET_BOOL, v.i != 0, 0);
        return 1;
    }
    if (v.kind == V_CONST) /* as a run-time argument converts: 2.5 for an i32 is 2 */
        *out = spec_const_as(s, v, et, loc);
    else *out = val_tile(spec_cast(s, v.v, et, loc));
    return out->kind != V_ERROR;
}

/* Parameter p's default where its call leaves it out, computed where the parameters before it
 * are bound (a default may use the const ones), not in the caller's scope. */
static int default_arg(Spec *s, const Func *f, int p, Val *vals, SrcLoc loc) {
    Scope *saved = s->scope;
    s->scope = NULL;
    scope_push(s);
    for (int q = 0; q < p; q++) spec_bind(s, f->params[q].name, vals[q]);
    Val v = spec_expr(s, f->params[p].default_value);
    s->scope = saved;
    return helper_arg(s, &f->params[p], v, loc, &vals[p]);
}

static int helper_args(Spec *s, const Func *f, const Expr *call, Val *vals) {
    int given[SPEC_MAX_HELPER_PARAMS] = {0};
    for (int i = 0; i < call->nargs; i++) {
        const char *kw = call->arg_names ? call->arg_names[i] : NULL;
        int p = i;
        if (kw)
            for (p = 0; p < f->nparams && strcmp(f->params[p].name, kw) != 0; p++) {}
        if (p >= f->nparams || given[p]) {
            diag_error(s->diags, call->args[i]->loc, kw ? "%s() has no parameter '%s' or it is given twice"
                                                        : "too many arguments to %s()", f->name, kw);
            return 0;
        }
        given[p] = 1;
        if (!helper_arg(s, &f->params[p], spec_expr(s, call->args[i]), call->args[i]->loc, &vals[p])) return 0;
    }
    for (int p = 0; p < f->nparams; p++)
        if (!given[p]) {
            if (f->params[p].default_value) {
                if (!default_arg(s, f, p, vals, call->loc)) return 0;
            } else {
                diag_error(s->diags, call->loc, "%s() needs its argument '%s'", f->name, f->params[p].name);
                return 0;
            }
        }
    return 1;
}

static Val inline_body(Spec *s, const Func *f, const Val *vals);

/* Refuses to inline once the kernel's inlined statements are over budget (reported once). */
static int inline_over_budget(Spec *s, const Func *f, SrcLoc loc) {
    if (s->inlined_stmts <= SPEC_INLINE_BUDGET || s->over_budget) return s->over_budget;
    diag_error(s->diags, loc, "inlining '%s' here takes kernel '%s' past %d inlined statements "
               "(helpers calling helpers several times grow exponentially)", f->name, s->kernel->name,
               SPEC_INLINE_BUDGET);
    s->over_budget = 1;
    return 1;
}

Val spec_call_helper(Spec *s, const Func *f, const Expr *call) {
    if (inline_over_budget(s, f, call->loc)) return val_error();
    if (f->nparams > SPEC_MAX_HELPER_PARAMS) { /* sema reports it at the definition */
        diag_error(s->diags, call->loc, "helper '%s' has %d parameters (at most %d)", f->name, f->nparams,
                   SPEC_MAX_HELPER_PARAMS);
        return val_error();
    }
    if (s->inline_depth >= 32) {
        diag_error(s->diags, call->loc, "helper '%s' is recursive or nested too deeply (inlining stops at 32 levels)", f->name);
        return val_error();
    }
    Val vals[SPEC_MAX_HELPER_PARAMS + 1];
    if (!helper_args(s, f, call, vals)) return val_error();
    return inline_body(s, f, vals);
}

Val spec_apply_helper(Spec *s, const Func *f, const Val *args, int nargs, SrcLoc loc) {
    if (inline_over_budget(s, f, loc)) return val_error();
    if (s->inline_depth >= 32) {
        diag_error(s->diags, loc, "helper '%s' is recursive or nested too deeply (inlining stops at 32 levels)", f->name);
        return val_error();
    }
    Val vals[SPEC_MAX_HELPER_PARAMS + 1];
    for (int p = 0; p < f->nparams && p < SPEC_MAX_HELPER_PARAMS; p++) {
        if (p < nargs) {
            if (!helper_arg(s, &f->params[p], args[p], loc, &vals[p])) return val_error();
        } else if (f->params[p].default_value) {
            if (!default_arg(s, f, p, vals, loc)) return val_error();
        } else {
            diag_error(s->diags, loc, "%s() needs its argument '%s'", f->name, f->params[p].name);
            return val_error();
        }
    }
    if (nargs > f->nparams) {
        diag_error(s->diags, loc, "%s() takes %d parameters, called with %d", f->name, f->nparams, nargs);
        return val_error();
    }
    return inline_body(s, f, vals);
}

static Val inline_body(Spec *s, const Func *f, const Val *vals) {
    Scope *saved_scope = s->scope;
    LoopCtx *saved_loop = s->loop;
    Val *saved_ret = s->ret, ret = {.kind = V_VOID};
    int saved_ifs = s->runtime_ifs;
    s->runtime_ifs = 0;
    s->scope = NULL;
    scope_push(s);
    for (int p = 0; p < f->nparams; p++) spec_bind(s, f->params[p].name, vals[p]);
    s->ret = &ret;
    s->loop = NULL;
    s->inline_depth++;
    spec_stmt(s, f->body);
    s->inline_depth--;
    s->scope = saved_scope;
    s->loop = saved_loop;
    s->ret = saved_ret;
    s->runtime_ifs = saved_ifs;
    s->terminated = 0; /* by its return: the caller goes on (a call runs only when reached) */
    return ret;
}

/* ---- kernels ---- */
static const char *symbol_name(Spec *s, const Func *f, const ConstBinding *c, int n) {
    char *sym = arena_strdup(s->arena, f->name);
    for (int i = 0; i < n; i++)
        sym = arena_printf(s->arena, "%s_%s%llu", sym, c[i].value < 0 ? "m" : "",
                           c[i].value < 0 ? 0 - (unsigned long long)c[i].value : (unsigned long long)c[i].value);
    return sym;
}

static int64_t const_value(const ConstBinding *c, int n, const char *name, int64_t dflt) {
    for (int i = 0; i < n; i++)
        if (strcmp(c[i].name, name) == 0) return c[i].value;
    return dflt;
}

static int bind_kernel_params(Spec *s, const Func *f, const ConstBinding *c, int nc) {
    s->k->params = arena_alloc(s->arena, sizeof(TirParam) * (size_t)(f->nparams + 1));
    if (f->type_alias) /* @types: T is this instance's element type */
        spec_bind(s, f->type_alias, (Val){.kind = V_TYPE, .ct = et_from_name(f->type_alias_of)});
    for (int i = 0; i < f->nparams; i++) {
        const Param *p = &f->params[i];
        ElemKind et = p->type ? et_from_name(p->type->name) : ET_VOID;
        if (et == ET_VOID) {
            diag_error(s->diags, p->loc, "kernel parameter '%s' needs a known type", p->name);
            return 0;
        }
        if (p->is_const) {
            int64_t v = const_value(c, nc, p->name, 0);
            spec_bind(s, p->name, et_is_float(et) ? val_const_float(et, (double)v, 0) : val_const_int(et, v, 0));
            continue;
        }
        TirType t = {.elem = p->type->ptr_depth ? ET_PTR : et, .pointee = p->type->ptr_depth ? et : ET_VOID};
        TirParam *tp = &s->k->params[s->k->nparams];
        *tp = (TirParam){p->name, t, i};
        TirValue *v = spec_emit(s, TIR_PARAM, p->loc, NULL, 0, t);
        v->def->attr.i = s->k->nparams++;
        v->name = p->name;
        spec_bind(s, p->name, val_tile(v));
    }
    return 1;
}

TirKernel *spec_kernel(Arena *a, const Module *m, const Func *f, const ConstBinding *consts,
                       int nconsts, int threads_per_warp, Diags *diags) {
    int errors = diags->errors;
    Spec s = {.arena = a, .diags = diags, .module = m, .kernel = f};
    s.k = tir_kernel_new(a, f->name);
    s.k->threads_per_warp = threads_per_warp;
    s.k->num_warps = (int)const_value(consts, nconsts, "num_warps", 4);
    s.k->num_stages = (int)const_value(consts, nconsts, "num_stages", 2);
    /* AMD's tuning knobs, read where a kernel declares them (other targets ignore them) */
    s.k->waves_per_eu = (int)const_value(consts, nconsts, "waves_per_eu", 0);
    s.k->mfma_size = (int)const_value(consts, nconsts, "mfma_size", 0);
    s.k->symbol = symbol_name(&s, f, consts, nconsts);
    s.block = s.k->body;
    scope_push(&s);
    spec_bind(&s, "num_warps", val_const_int(ET_I32, s.k->num_warps, 0));
    spec_bind(&s, "num_stages", val_const_int(ET_I32, s.k->num_stages, 0));
    if (bind_kernel_params(&s, f, consts, nconsts)) spec_stmt(&s, f->body);
    return diags->errors > errors ? NULL : s.k;
}
