/* const_check.c: checks of const values that need evaluation but no launch, run by tc_parse
 * after sema: every @tune candidate evaluates, fits its parameter (its declared type, or the
 * rules of num_warps and num_stages) and appears once. Also the range check that const
 * resolution applies to every value a const parameter receives. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "driver.h"

static const Param *const_param(const Func *f, const char *name) {
    for (int i = 0; i < f->nparams; i++)
        if (f->params[i].is_const && strcmp(f->params[i].name, name) == 0) return &f->params[i];
    return NULL;
}

/* The rule of num_warps or num_stages that v breaks, or NULL. */
static const char *implicit_rule(const char *name, int64_t v) {
    if (strcmp(name, "num_warps") == 0 && (v < 1 || v > 32 || (v & (v - 1))))
        return "num_warps must be a power of two from 1 to 32";
    if (strcmp(name, "num_stages") == 0 && (v < 1 || v > 8)) return "num_stages must be from 1 to 8";
    return NULL;
}

void tc_int_range_text(ElemKind et, char *buf, size_t size) {
    int bits = et_bits(et);
    if (et == ET_BOOL) snprintf(buf, size, "false or true");
    else if (bits >= 64) snprintf(buf, size, "%s to 9223372036854775807", et == ET_U64 ? "0" : "-9223372036854775808");
    else if (!et_is_signed(et)) snprintf(buf, size, "0 to %" PRIu64, (UINT64_C(1) << bits) - 1);
    else snprintf(buf, size, "%" PRId64 " to %" PRId64, -(INT64_C(1) << (bits - 1)), (INT64_C(1) << (bits - 1)) - 1);
}

int tc_const_check(const Func *f, const char *name, int64_t v, SrcLoc loc, Diags *d) {
    const char *rule = implicit_rule(name, v);
    if (rule) {
        diag_error(d, loc, "%s, got %" PRId64 " (kernel '%s')", rule, v, f->name);
        return -1;
    }
    const Param *p = const_param(f, name);
    ElemKind et = p && p->type ? et_from_name(p->type->name) : ET_VOID;
    if (et == ET_VOID || et_is_float(et) || tc_int_fits(et, v)) return 0;
    char range[64];
    tc_int_range_text(et, range, sizeof range);
    diag_error(d, loc, "const parameter '%s' is %s: %" PRId64 " is outside its range (%s)", name,
               et_name(et), v, range);
    return -1;
}

static int has_names(const Expr *e) {
    if (!e) return 0;
    if (e->kind == EX_NAME) return 1;
    for (int i = 0; i < e->nargs; i++)
        if (has_names(e->args[i])) return 1;
    return has_names(e->a) || has_names(e->b);
}

/* One `NAME = [v, ...]` of @tune. Candidates that name other consts are left to resolution. */
static int check_candidates(const Func *f, const AnnArg *g, Diags *d) {
    const Expr *list = g->value;
    int64_t *vals = arena_alloc(d->arena, sizeof(int64_t) * (size_t)(list->nargs + 1));
    int bad = 0;
    for (int i = 0; i < list->nargs && vals; i++) {
        const Expr *c = list->args[i];
        if (has_names(c)) continue;
        if (tc_eval_int(c, NULL, 0, &vals[i], d) || tc_const_check(f, g->name, vals[i], c->loc, d)) {
            bad = 1;
            continue;
        }
        for (int j = 0; j < i; j++)
            if (!has_names(list->args[j]) && vals[j] == vals[i]) {
                diag_error(d, c->loc, "duplicate @tune candidate %" PRId64 " for '%s' (candidate %d has that value)",
                           vals[i], g->name, j + 1);
                bad = 1;
                break;
            }
    }
    return bad;
}

int tc_check_tune(const Module *m, Diags *d) {
    int bad = 0;
    for (int i = 0; i < m->nfuncs; i++) {
        const Func *f = m->funcs[i];
        for (int a = 0; f->is_kernel && !f->sema_failed && a < f->nanns; a++) {
            if (f->anns[a].kind != ANN_TUNE) continue;
            for (int j = 0; j < f->anns[a].nargs; j++) {
                const AnnArg *g = &f->anns[a].args[j];
                if (g->name && g->value && g->value->kind == EX_LIST) bad |= check_candidates(f, g, d);
            }
        }
    }
    return bad ? -1 : 0;
}

/* Whether e names only const parameters (num_warps and num_stages included). */
static int only_consts(const Func *f, const Expr *e) {
    if (!e) return 1;
    if (e->kind == EX_NAME && !const_param(f, e->name) && strcmp(e->name, "num_warps") != 0 &&
        strcmp(e->name, "num_stages") != 0)
        return 0;
    for (int i = 0; i < e->nargs; i++)
        if (!only_consts(f, e->args[i])) return 0;
    return only_consts(f, e->a) && only_consts(f, e->b);
}

int tc_check_grid(const Func *f, const ConstBinding *consts, int nconsts, Diags *d) {
    for (int a = 0; a < f->nanns; a++) {
        if (f->anns[a].kind != ANN_GRID) continue;
        for (int i = 0; i < f->anns[a].nargs; i++) {
            const Expr *e = f->anns[a].args[i].value;
            int64_t v;
            if (!e || !only_consts(f, e)) continue; /* launches evaluate the rest, checked too */
            if (tc_eval_int(e, consts, nconsts, &v, d)) return -1;
            if (v < 0 || v > INT32_MAX) { /* program ids are i32 on every backend */
                diag_error(d, e->loc, "@grid dimension %d is %" PRId64 " (it must be from 0 to %" PRId32 ")",
                           i, v, INT32_MAX);
                return -1;
            }
        }
    }
    return 0;
}
