/* launch.c: tile_launch. Checks the arguments, resolves const values, evaluates the @grid
 * expressions over consts and integer scalar arguments, finds or compiles the
 * specialization (spec.c) and hands the packed arguments to the backend. A grid with a zero
 * dimension launches nothing; one of more than 2^63 - 1 programs in all is refused. Tuned
 * kernels get their tuned const values first from the context's chooser (RtChooser: the
 * tuner's map lookup once the launch's key is known).
 * rt_launch_plan makes the same decisions without launching (for tilec run --verbose). */
#include <stdlib.h>
#include <string.h>
#include "runtime_internal.h"

enum { MAX_CONSTS = 256, INLINE_ARGS = 32 };

static int is_const_param(const Func *f, const char *name)
{
    if (!strcmp(name, "num_warps") || !strcmp(name, "num_stages"))
        return 1;
    for (int i = 0; i < f->nparams; i++)
        if (f->params[i].is_const && !strcmp(f->params[i].name, name))
            return 1;
    return 0;
}

static tile_Status check_consts(tile_Kernel *k, const tile_Const *c, int n)
{
    for (int i = 0; i < n; i++) {
        if (!c[i].name)
            return rt_error(k->mod->ctx, TILE_ERROR_INVALID_ARGUMENT,
                            "launch of '%s': const %d has a NULL name", k->func->name, i + 1);
        if (!is_const_param(k->func, c[i].name))
            return rt_error(k->mod->ctx, TILE_ERROR_NOT_FOUND,
                            "launch of '%s': the kernel has no const parameter '%s'",
                            k->func->name, c[i].name);
        for (int j = 0; j < i; j++) /* which of two values would count is nobody's guess */
            if (!strcmp(c[j].name, c[i].name))
                return rt_error(k->mod->ctx, TILE_ERROR_INVALID_ARGUMENT,
                                "launch of '%s': const '%s' given twice", k->func->name, c[i].name);
    }
    return TILE_OK;
}

tile_Status rt_launch_check(tile_Kernel *k, const tile_Arg *args, int nargs,
                            const tile_Const *consts, int nconsts)
{
    if (nargs < 0 || (nargs && !args) || nconsts < 0 || (nconsts && !consts))
        return rt_error(k->mod->ctx, TILE_ERROR_INVALID_ARGUMENT,
                        "launch of '%s': %s is NULL or negative", k->func->name,
                        nargs < 0 || (nargs && !args) ? "args" : "consts");
    tile_Status st = rt_args_check(k, args, nargs);
    return st == TILE_OK ? check_consts(k, consts, nconsts) : st;
}

/* A launch's scratch: arena and diagnostics for the compiler's helpers. */
typedef struct Launch {
    tile_Kernel *k;
    Arena *arena;
    Diags diags;
    ConstBinding consts[MAX_CONSTS];
    int nconsts;
} Launch;

static tile_Status diag_fail(Launch *l, tile_Status st, const char *what)
{
    char *text = diags_render_all(&l->diags, l->arena);
    size_t n = text ? strlen(text) : 0;
    while (n && text[n - 1] == '\n')
        text[--n] = 0;
    return rt_error(l->k->mod->ctx, st, "launch of '%s': %s%s%s", l->k->func->name, what,
                    n ? ":\n" : "", n ? text : "");
}

static tile_Status resolve_consts(Launch *l, const tile_Const *c, int n)
{
    ConstBinding given[MAX_CONSTS];
    if (n > MAX_CONSTS)
        return rt_error(l->k->mod->ctx, TILE_ERROR_INVALID_ARGUMENT,
                        "launch of '%s': more than %d consts", l->k->func->name, MAX_CONSTS);
    for (int i = 0; i < n; i++)
        given[i] = (ConstBinding){ c[i].name, c[i].value };
    l->nconsts = tc_resolve_consts(l->k->func, given, n, l->consts, MAX_CONSTS, l->arena,
                                   &l->diags);
    if (l->nconsts < 0)
        return diag_fail(l, TILE_ERROR_INVALID_ARGUMENT, "cannot resolve const parameters");
    return TILE_OK;
}

/* Names the @grid expressions may use: const values and integer scalar arguments. */
static int grid_names(tile_Kernel *k, const ConstBinding *c, int nc, const tile_Arg *args,
                      ConstBinding *vals)
{
    int n = 0;
    for (int i = 0; i < nc && n < MAX_CONSTS; i++)
        vals[n++] = c[i];
    for (int i = 0; i < k->nparams && n < 2 * MAX_CONSTS; i++)
        if (!k->params[i].is_ptr && args[i].kind == TILE_ARG_INT)
            vals[n++] = (ConstBinding){ k->params[i].name, args[i].v.i };
    return n;
}

static tile_Status check_grid(tile_Kernel *k, const int64_t g[3], unsigned grid[3])
{
    tile_Context *ctx = k->mod->ctx;
    unsigned long long max[3];
    ctx->ops->max_grid(ctx->dev, max);
    for (int d = 0; d < 3; d++) {
        if (g[d] < 0 || (unsigned long long)g[d] > max[d])
            return rt_error(ctx, TILE_ERROR_INVALID_ARGUMENT,
                            "launch of '%s': grid dimension %c is %lld, outside 0..%llu",
                            k->func->name, "xyz"[d], (long long)g[d], max[d]);
        grid[d] = (unsigned)g[d];
    }
    uint64_t xy, xyz;
    if (__builtin_mul_overflow((uint64_t)grid[0], (uint64_t)grid[1], &xy) ||
        __builtin_mul_overflow(xy, (uint64_t)grid[2], &xyz) || xyz > (uint64_t)INT64_MAX)
        return rt_error(ctx, TILE_ERROR_INVALID_ARGUMENT,
                        "launch of '%s': grid (%u, %u, %u) has more than 2^63 - 1 programs",
                        k->func->name, grid[0], grid[1], grid[2]);
    return TILE_OK;
}

static tile_Status eval_grid(Launch *l, const tile_Arg *args, unsigned grid[3])
{
    ConstBinding vals[2 * MAX_CONSTS];
    int nvals = grid_names(l->k, l->consts, l->nconsts, args, vals);
    int64_t g[3] = { 1, 1, 1 };
    for (int d = 0; d < l->k->ngrid; d++)
        if (tc_eval_int(l->k->grid[d], vals, nvals, &g[d], &l->diags) < 0)
            return diag_fail(l, TILE_ERROR_INVALID_ARGUMENT, "cannot evaluate @grid");
    return check_grid(l->k, g, grid);
}

tile_Status rt_grid(tile_Kernel *k, const ConstBinding *c, int n, const tile_Arg *args,
                    Arena *a, unsigned grid[3])
{
    Launch l = { .k = k, .arena = a, .nconsts = n < MAX_CONSTS ? n : MAX_CONSTS };
    diags_init(&l.diags, a);
    memcpy(l.consts, c, sizeof *c * (size_t)l.nconsts);
    return eval_grid(&l, args, grid);
}

/* What the arguments divide by, one per runtime param (CompileRequest.param_div): the
 * largest power of two, at most 16, dividing a pointer's address or an integer (0 counts as
 * divisible by 16; others 1), or PARAM_DIV_ONE for an integer that is 1 (a unit stride: the
 * compiler then takes it as the constant). Part of the specialization on GPUs, where it buys vector loads
 * and stores and asynchronous copies (a row stride of 2500 f16 elements still gives 8-byte
 * copies); the CPU backend passes none (NULL), so one specialization serves every argument
 * value there. */
static unsigned char divisor(uint64_t v)
{
    unsigned char d = 1;
    while (d < 16 && v % (d * 2u) == 0)
        d = (unsigned char)(d * 2);
    return d;
}

const unsigned char *rt_arg_divisors(tile_Kernel *k, const tile_Arg *args, Arena *a)
{
    unsigned char *f = k->mod->ctx->ops->kind == TILE_BACKEND_CPU ? NULL
                     : arena_alloc(a, (size_t)k->nparams + 1);
    for (int i = 0; f && i < k->nparams; i++) {
        const KParam *p = &k->params[i];
        f[i] = args[i].kind == TILE_ARG_PTR ? divisor(args[i].v.ptr)
             : args[i].kind == TILE_ARG_INT && et_is_int(p->elem)
                 ? (args[i].v.i == 1 ? PARAM_DIV_ONE : divisor((uint64_t)args[i].v.i))
                                                                 : 1;
    }
    return f;
}

static tile_Status run(Launch *l, const unsigned grid[3], const tile_Arg *args)
{
    tile_Kernel *k = l->k;
    tile_Context *ctx = k->mod->ctx;
    Spec *s;
    tile_Status st = rt_spec_get(k, l->consts, l->nconsts, rt_arg_divisors(k, args, l->arena), &s);
    if (st != TILE_OK)
        return st;
    uint64_t slots_buf[INLINE_ARGS];
    void *ptrs_buf[INLINE_ARGS];
    int nslots = s->nparams + 1, big = nslots > INLINE_ARGS; /* + the debug buffer */
    uint64_t *slots = big ? malloc(sizeof *slots * (size_t)nslots) : slots_buf;
    void **ptrs = big ? malloc(sizeof *ptrs * (size_t)nslots) : ptrs_buf;
    if (!slots || !ptrs)
        st = rt_error(ctx, TILE_ERROR_OUT_OF_MEMORY, "launch of '%s': out of memory", k->func->name);
    tile_DevPtr debug_buf = 0;
    if (st == TILE_OK)
        st = rt_debug_arm(ctx, s, &debug_buf);
    int armed = debug_buf != 0;
    if (st == TILE_OK)
        st = rt_args_pack(k, s, args, debug_buf, slots, ptrs);
    char err[BK_ERR_MAX];
    if (st == TILE_OK && (st = ctx->ops->launch(ctx->dev, s->fn, grid, s->num_threads,
                                                s->smem_bytes, ptrs, err)) != TILE_OK)
        rt_error(ctx, st, "launch of '%s': %s", k->func->name, err);
    if (armed)
        st = rt_debug_report(ctx, s, k->func->name, st, 0);
    if (big) {
        free(slots);
        free(ptrs);
    }
    return st;
}

/* Everything a launch decides before it runs: the arguments checked, the consts resolved
 * (tuned ones chosen), the grid evaluated. */
static tile_Status plan(Launch *l, const unsigned *explicit_grid, const tile_Arg *args,
                        int nargs, const tile_Const *consts, int nconsts, unsigned grid[3])
{
    tile_Kernel *k = l->k;
    tile_Status st = rt_launch_check(k, args, nargs, consts, nconsts);
    if (st == TILE_OK)
        st = resolve_consts(l, consts, nconsts);
    const RtChooser *chooser = k->mod->ctx->chooser;
    if (st == TILE_OK && chooser)
        st = chooser->choose(k, args, consts, nconsts, l->consts, l->nconsts, explicit_grid,
                             l->arena);
    if (st == TILE_OK && explicit_grid) {
        int64_t g[3] = { explicit_grid[0], explicit_grid[1], explicit_grid[2] };
        st = check_grid(k, g, grid);
    } else if (st == TILE_OK) {
        st = eval_grid(l, args, grid);
    }
    return st;
}

static tile_Status launch(tile_Kernel *k, const unsigned *explicit_grid, const tile_Arg *args,
                          int nargs, const tile_Const *consts, int nconsts)
{
    Launch l = { .k = k, .arena = arena_new() };
    if (!l.arena)
        return rt_error(k->mod->ctx, TILE_ERROR_OUT_OF_MEMORY, "launch of '%s': out of memory",
                        k->func->name);
    diags_init(&l.diags, l.arena);
    unsigned grid[3];
    tile_Status st = plan(&l, explicit_grid, args, nargs, consts, nconsts, grid);
    if (st == TILE_OK && grid[0] && grid[1] && grid[2])
        st = run(&l, grid, args);
    arena_free(l.arena);
    return st;
}

static tile_Status launch_plan(tile_Kernel *k, const tile_Arg *args, int nargs,
                               const tile_Const *consts, int nconsts, Arena *a, RtLaunchPlan *out)
{
    tile_Status st;
    if (!a || !out)
        return rt_error(k->mod->ctx, TILE_ERROR_INVALID_ARGUMENT,
                        "rt_launch_plan: arena or out is NULL");
    Launch *l = arena_alloc(a, sizeof *l);
    if (!l)
        return rt_error(k->mod->ctx, TILE_ERROR_OUT_OF_MEMORY, "launch of '%s': out of memory",
                        k->func->name);
    *l = (Launch){ .k = k, .arena = a };
    diags_init(&l->diags, a);
    memset(out, 0, sizeof *out);
    st = plan(l, NULL, args, nargs, consts, nconsts, out->grid);
    if (st == TILE_OK)
        st = rt_spec_get(k, l->consts, l->nconsts, rt_arg_divisors(k, args, a), &out->spec);
    out->consts = l->consts, out->nconsts = st == TILE_OK ? l->nconsts : 0;
    return st;
}

/* Each of these holds k's module and context while it runs (rt_call_enter): the log sink and
 * the tuning's progress callback, which a launch may call, cannot free them under it. */
tile_Status rt_launch_plan(tile_Kernel *k, const tile_Arg *args, int nargs,
                           const tile_Const *consts, int nconsts, Arena *a, RtLaunchPlan *out)
{
    RtCall call;
    tile_Status st = rt_call_enter(k, RT_KERNEL, "rt_launch_plan", &call);
    if (st != TILE_OK)
        return st;
    st = launch_plan(k, args, nargs, consts, nconsts, a, out);
    rt_call_leave(&call);
    return st;
}

tile_Status tile_launch(tile_Kernel *k, const tile_Arg *args, int nargs,
                        const tile_Const *consts, int nconsts)
{
    RtCall call;
    tile_Status st = rt_call_enter(k, RT_KERNEL, "tile_launch", &call);
    if (st != TILE_OK)
        return st;
    st = launch(k, NULL, args, nargs, consts, nconsts);
    rt_env_warnings_log(k->mod->ctx); /* a variable read at launch (TILE_SIM_STRICT) */
    rt_call_leave(&call);
    return st;
}

tile_Status tile_launch_grid(tile_Kernel *k, const unsigned grid[3], const tile_Arg *args,
                             int nargs, const tile_Const *consts, int nconsts)
{
    RtCall call;
    tile_Status st = rt_call_enter(k, RT_KERNEL, "tile_launch_grid", &call);
    if (st != TILE_OK)
        return st;
    st = grid ? launch(k, grid, args, nargs, consts, nconsts)
              : rt_error(k->mod->ctx, TILE_ERROR_INVALID_ARGUMENT, "tile_launch_grid: grid is NULL");
    rt_env_warnings_log(k->mod->ctx);
    rt_call_leave(&call);
    return st;
}
