/* tilec_run_device.c: what `tilec run` asks of the runtime beneath tile.h. --verbose: the
 * specialization a launch runs (its consts, given or tuned, and grid) and the driver's facts
 * about its loaded code (registers, local memory, shared memory, thread limit; n/a where a
 * backend has no driver to ask). --cold: timing as the tuner times (tuner/tune_time.c), each
 * launch alone with device events on cold inputs, as triton.testing.do_bench does. */
#include <stdio.h>
#include <string.h>
#include "tilec.h"
#include "tune.h"

static int is_given(const char *name, const tile_Const *given, int ngiven)
{
    for (int i = 0; i < ngiven; i++)
        if (!strcmp(given[i].name, name))
            return 1;
    return 0;
}

static int is_tuned(const Func *f, const char *name)
{
    for (int i = 0; i < f->nanns; i++)
        for (int j = 0; f->anns[i].kind == ANN_TUNE && j < f->anns[i].nargs; j++)
            if (f->anns[i].args[j].name && !strcmp(f->anns[i].args[j].name, name))
                return 1;
    return 0;
}

static void print_consts(const Func *f, const RtLaunchPlan *p, const tile_Const *given,
                         int ngiven)
{
    printf("  consts:");
    for (int i = 0; i < p->nconsts; i++) {
        const char *name = p->consts[i].name;
        const char *from = is_given(name, given, ngiven) ? "given"
                           : is_tuned(f, name)           ? "@tune"
                                                         : "default";
        printf("%s %s=%lld (%s)", i ? "," : "", name, (long long)p->consts[i].value, from);
    }
    printf("\n");
}

/* One "  LABEL: VALUE UNIT" line, or n/a with the reason. */
static void print_fact(const char *label, int known, int value, const char *unit,
                       const char *why)
{
    if (known)
        printf("  %s: %d%s\n", label, value, unit);
    else
        printf("  %s: n/a (%s)\n", label, why);
}

static void print_code_facts(tile_Context *ctx, const Spec *s)
{
    BkFuncAttrs fa = { 0 };
    char err[BK_ERR_MAX] = "", why[BK_ERR_MAX + 64];
    int known = ctx->ops->func_attrs && ctx->ops->func_attrs(ctx->dev, s->fn, &fa, err) == TILE_OK;
    if (!ctx->ops->func_attrs)
        snprintf(why, sizeof why, "the %s backend has no driver to ask", ctx->ops->name);
    else
        snprintf(why, sizeof why, "the driver said: %s", err);
    print_fact("registers per thread", known, fa.num_regs, "", why);
    print_fact("local memory per thread (spills, stack)", known, fa.local_bytes, " bytes", why);
    print_fact("static shared memory", known, fa.static_smem, " bytes", why);
    print_fact("dynamic shared memory", 1, s->smem_bytes, " bytes", why);
    print_fact("max threads per block", known, fa.max_threads, "", why);
}

int tilec_print_launch_facts(tile_Kernel *k, const tile_Arg *args, int nargs,
                             const tile_Const *given, int ngiven)
{
    tile_Context *ctx = k->mod->ctx;
    Arena *a = arena_new();
    RtLaunchPlan p;
    tile_Status st = a ? rt_launch_plan(k, args, nargs, given, ngiven, a, &p)
                       : TILE_ERROR_OUT_OF_MEMORY;
    if (st != TILE_OK) {
        tilec_error("--verbose: %s", a ? tile_error(ctx) : "out of memory");
        arena_free(a);
        return -1;
    }
    printf("  specialization of %s on %s (%s):\n", k->func->name, ctx->ops->name, ctx->target);
    print_consts(k->func, &p, given, ngiven);
    printf("  grid: %u x %u x %u programs, %d thread%s each\n", p.grid[0], p.grid[1], p.grid[2],
           p.spec->num_threads, p.spec->num_threads == 1 ? "" : "s");
    print_code_facts(ctx, p.spec);
    arena_free(a);
    return 0;
}

static const char *cold_how(const TuneBench *b, tile_Context *ctx)
{
    static char buf[96];
    if (b->nsets > 1)
        snprintf(buf, sizeof buf, "inputs rotated through %d copies", b->nsets);
    else
        snprintf(buf, sizeof buf, "%s", ctx->ops->flush_l2 ? "L2 flushed before each launch"
                                                           : "no cache flush on this backend");
    return buf;
}

static int time_planned(tile_Kernel *k, const tile_Arg *args, RtLaunchPlan *p, long reps,
                        double bytes, Arena *a)
{
    tile_Context *ctx = k->mod->ctx;
    TuneBench b;
    char reason[BK_ERR_MAX];
    double ms = 0;
    int fatal = 0, rc = -1;
    if (tune_bench_init(&b, k, args, a) != TILE_OK) {
        tilec_error("--cold: %s", tile_error(ctx));
    } else {
        b.reps = reps < 1 ? 1 : reps > 1000 ? 1000 : (int)reps;
        b.config_budget_ms = 1e300;
        TResStatus r = tune_time_config(&b, p->spec, p->grid, TUNE_FULL, 0, &ms, reason,
                                        sizeof reason, &fatal);
        if (r != TRES_OK)
            tilec_error("--cold: %s", reason);
        else
            rc = 0;
    }
    if (rc == 0)
        printf("  cold launches (at most %ld, about 100 ms in all), each timed alone, %s: "
               "median %.4f ms -> %.2f GB/s effective\n", reps, cold_how(&b, ctx), ms,
               ms > 0 ? bytes / (ms * 1e6) : 0.0);
    tune_bench_fini(&b);
    return rc;
}

int tilec_time_cold(tile_Kernel *k, const tile_Arg *args, int nargs, const tile_Const *given,
                    int ngiven, long reps, double buffer_bytes)
{
    Arena *a = arena_new();
    RtLaunchPlan p;
    int rc = -1;
    if (!a) {
        tilec_error("out of memory");
        return -1;
    }
    if (rt_launch_plan(k, args, nargs, given, ngiven, a, &p) != TILE_OK)
        tilec_error("--cold: %s", tile_error(k->mod->ctx));
    else if (!p.grid[0] || !p.grid[1] || !p.grid[2])
        printf("  cold launches: the grid is empty, nothing to time\n"), rc = 0;
    else
        rc = time_planned(k, args, &p, reps, buffer_bytes, a);
    arena_free(a);
    return rc;
}
