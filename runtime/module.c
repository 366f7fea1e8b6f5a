/* module.c: modules (one parsed .tile source and its imports) and their kernels. Loading
 * parses and checks the source (tc_parse_with, imports searched along the context's import
 * path); compile errors come back as TILE_ERROR_COMPILE with the rendered
 * diagnostics (file:line:col, source line, caret) as the context's error message. Modules
 * and kernels are registered as live handles (handles.c) until tile_module_free. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "imports.h"
#include "runtime_internal.h"

static tile_Status kernel_init(tile_Module *mod, const Func *f, tile_Kernel *k)
{
    k->mod = mod;
    k->func = f;
    k->params = arena_alloc(mod->arena, sizeof(KParam) * (size_t)(f->nparams + 1));
    if (!k->params)
        return TILE_ERROR_OUT_OF_MEMORY;
    for (int i = 0; i < f->nparams; i++) {
        const Param *p = &f->params[i];
        if (p->is_const)
            continue;
        KParam *kp = &k->params[k->nparams++];
        kp->name = p->name;
        kp->is_ptr = p->type && p->type->ptr_depth > 0;
        kp->elem = kp->is_ptr ? ET_PTR : p->type ? et_from_name(p->type->name) : ET_VOID;
    }
    for (int i = 0; i < f->nanns; i++) {
        const Annotation *a = &f->anns[i];
        if (a->kind != ANN_GRID)
            continue;
        if (a->nargs < 1 || a->nargs > 3)
            return rt_error(mod->ctx, TILE_ERROR_COMPILE,
                            "%s:%d:%d: error: @grid takes 1 to 3 dimensions, got %d",
                            mod->file.name, a->loc.line, a->loc.col, a->nargs);
        for (k->ngrid = 0; k->ngrid < a->nargs; k->ngrid++)
            k->grid[k->ngrid] = a->args[k->ngrid].value;
    }
    return TILE_OK;
}

static tile_Status kernels_init(tile_Module *mod)
{
    /* malloc'ed, not in the arena: freed through the handle quarantine like the module */
    mod->kernels = calloc((size_t)mod->ast->nfuncs + 1, sizeof(tile_Kernel));
    if (!mod->kernels)
        return rt_error(mod->ctx, TILE_ERROR_OUT_OF_MEMORY, "out of memory loading a module");
    for (int i = 0; i < mod->ast->nfuncs; i++) {
        const Func *f = mod->ast->funcs[i];
        if (!f->is_kernel)
            continue;
        tile_Status st = kernel_init(mod, f, &mod->kernels[mod->nkernels++]);
        if (st == TILE_ERROR_OUT_OF_MEMORY)
            return rt_error(mod->ctx, st, "out of memory loading a module");
        if (st != TILE_OK)
            return st;
    }
    return TILE_OK;
}

/* The context's import path as ImportOptions in `arena`: 0, or -1 out of memory. */
static int import_options(tile_Context *ctx, Arena *arena, int from_file, ImportOptions *o)
{
    pthread_mutex_lock(&ctx->lock);
    char *list = ctx->import_path ? arena_strdup(arena, ctx->import_path) : "";
    pthread_mutex_unlock(&ctx->lock);
    *o = (ImportOptions){ .main_from_string = !from_file, .dir_list = list };
    return list ? 0 : -1;
}

typedef struct ParseCall {
    tile_Module *mod;
    const ImportOptions *opts;
    Diags *diags;
} ParseCall;

static void parse_call(void *p)
{
    ParseCall *c = p;
    c->mod->ast = tc_parse_with(c->mod->arena, &c->mod->file, c->opts, c->diags);
}

static tile_Status parse(tile_Module *mod)
{
    Diags diags;
    ImportOptions opts;
    if (import_options(mod->ctx, mod->arena, mod->from_file, &opts))
        return rt_error(mod->ctx, TILE_ERROR_OUT_OF_MEMORY, "out of memory parsing %s", mod->file.name);
    diags_init(&diags, mod->arena);
    rt_call_on_big_stack(parse_call, &(ParseCall){ mod, &opts, &diags });
    char *text = diags_render_all(&diags, mod->arena);
    if ((!mod->ast || diags.errors) && !text) /* the diagnostics did not fit either */
        return rt_error(mod->ctx, TILE_ERROR_OUT_OF_MEMORY, "out of memory parsing %s", mod->file.name);
    if (!mod->ast || diags.errors) {
        size_t n = text ? strlen(text) : 0;
        while (n && text[n - 1] == '\n')
            text[--n] = 0;
        return rt_error(mod->ctx, TILE_ERROR_COMPILE, "%s",
                        n ? text : "the module did not compile (no diagnostics)");
    }
    if (text && *text)
        rt_log(mod->ctx, "%s", text);
    return kernels_init(mod);
}

static tile_Module *module_new(tile_Context *ctx, const char *name, const char *source,
                               size_t len)
{
    tile_Module *mod = calloc(1, sizeof *mod);
    Arena *arena = arena_new();
    char *text = arena ? arena_strndup(arena, source, len) : NULL;
    char *fname = arena ? arena_strdup(arena, name) : NULL;
    if (!mod || !text || !fname) {
        free(mod);
        arena_free(arena);
        return NULL;
    }
    mod->ctx = ctx;
    mod->arena = arena;
    mod->file.name = fname;
    mod->file.text = text;
    mod->file.len = len;
    pthread_mutex_init(&mod->lock, NULL);
    /* recursive: a compile calls the log sink, which may launch this module's kernels */
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&mod->compile_lock, &attr);
    pthread_mutexattr_destroy(&attr);
    return mod;
}

/* Registers the module and its kernels as live handles: 0, or -1 when out of memory. */
static int handles_add(tile_Module *mod)
{
    int bad = rt_handle_add(mod, RT_MODULE);
    for (int i = 0; i < mod->nkernels && !bad; i++)
        bad = rt_handle_add(&mod->kernels[i], RT_KERNEL);
    return bad;
}

static void handles_remove(tile_Module *mod)
{
    rt_handle_remove(mod);
    for (int i = 0; i < mod->nkernels; i++)
        rt_handle_remove(&mod->kernels[i]);
}

static void module_destroy(tile_Module *mod)
{
    handles_remove(mod);
    rt_spec_free_all(mod);
    pthread_mutex_destroy(&mod->lock);
    pthread_mutex_destroy(&mod->compile_lock);
    arena_free(mod->arena);
    if (mod->kernels)
        rt_handle_retire(mod->kernels);
    rt_handle_retire(mod);
}

tile_Status rt_module_load(tile_Context *ctx, const char *name, const char *source, size_t len,
                           int from_file, tile_Module **out)
{
    tile_Module *mod = module_new(ctx, name, source, len);
    if (!mod)
        return rt_error(ctx, TILE_ERROR_OUT_OF_MEMORY, "out of memory loading '%s'", name);
    mod->from_file = from_file;
    tile_Status st = parse(mod);
    if (st == TILE_OK && handles_add(mod) < 0)
        st = rt_error(ctx, TILE_ERROR_OUT_OF_MEMORY, "out of memory loading '%s'", name);
    if (st != TILE_OK) {
        module_destroy(mod);
        return st;
    }
    pthread_mutex_lock(&ctx->lock);
    mod->next = ctx->modules;
    ctx->modules = mod;
    pthread_mutex_unlock(&ctx->lock);
    *out = mod;
    return TILE_OK;
}

tile_Status tile_module_load_string(tile_Context *ctx, const char *name, const char *source,
                                    tile_Module **out)
{
    RtCall call; /* its warnings go to the log sink */
    tile_Status st = rt_call_enter(ctx, RT_CONTEXT, "tile_module_load_string", &call);
    if (st != TILE_OK)
        return st;
    if (!source || !out) {
        st = rt_error(ctx, TILE_ERROR_INVALID_ARGUMENT, "tile_module_load_string: %s is NULL",
                      source ? "out" : "source");
    } else {
        *out = NULL;
        st = rt_module_load(ctx, name ? name : "<string>", source, strlen(source), 0, out);
    }
    rt_call_leave(&call);
    return st;
}

static tile_Status load_file(tile_Context *ctx, const char *path, tile_Module **out)
{
    tile_Status st;
    if (!path || !out)
        return rt_error(ctx, TILE_ERROR_INVALID_ARGUMENT, "tile_module_load_file: %s is NULL",
                        path ? "out" : "path");
    *out = NULL;
    Arena *a = arena_new();
    ImportOptions opts;
    const char *found = a && !import_options(ctx, a, 1, &opts) ? imports_locate(a, path, &opts) : NULL;
    if (!found) {
        arena_free(a);
        return rt_error(ctx, TILE_ERROR_OUT_OF_MEMORY, "out of memory loading '%s'", path);
    }
    char *text;
    size_t len;
    st = rt_read_source(ctx, found, &text, &len);
    if (st == TILE_OK) {
        st = rt_module_load(ctx, found, text, len, 1, out);
        free(text);
    }
    arena_free(a);
    return st;
}

tile_Status tile_module_load_file(tile_Context *ctx, const char *path, tile_Module **out)
{
    RtCall call; /* its warnings go to the log sink */
    tile_Status st = rt_call_enter(ctx, RT_CONTEXT, "tile_module_load_file", &call);
    if (st != TILE_OK)
        return st;
    st = load_file(ctx, path, out);
    rt_call_leave(&call);
    return st;
}

tile_Status tile_set_import_path(tile_Context *ctx, const char *dirs)
{
    tile_Status st = rt_handle_check(ctx, RT_CONTEXT, "tile_set_import_path");
    if (st != TILE_OK)
        return st;
    char *copy = dirs && *dirs ? strdup(dirs) : NULL;
    if (dirs && *dirs && !copy)
        return rt_error(ctx, TILE_ERROR_OUT_OF_MEMORY, "out of memory setting the import path");
    pthread_mutex_lock(&ctx->lock);
    free(ctx->import_path);
    ctx->import_path = copy;
    pthread_mutex_unlock(&ctx->lock);
    return TILE_OK;
}

/* Freeing NULL, a module freed already, or one a call in progress holds (from a callback of
 * that call) does nothing (tile_error(NULL) says which). */
void tile_module_free(tile_Module *mod)
{
    if (rt_handle_release(mod, RT_MODULE, "tile_module_free") == TILE_OK)
        rt_module_destroy(mod);
}

void rt_module_destroy(tile_Module *mod)
{
    tile_Context *ctx = mod->ctx;
    char err[BK_ERR_MAX];
    ctx->ops->sync(ctx->dev, err); /* no launch of its code may still be running */
    pthread_mutex_lock(&ctx->lock);
    for (tile_Module **p = &ctx->modules; *p; p = &(*p)->next)
        if (*p == mod) {
            *p = mod->next;
            break;
        }
    pthread_mutex_unlock(&ctx->lock);
    module_destroy(mod);
}

tile_Status tile_kernel_get(tile_Module *mod, const char *name, tile_Kernel **out)
{
    tile_Status st = rt_handle_check(mod, RT_MODULE, "tile_kernel_get");
    if (st != TILE_OK)
        return st;
    if (!name || !out)
        return rt_error(mod->ctx, TILE_ERROR_INVALID_ARGUMENT, "tile_kernel_get: %s is NULL",
                        name ? "out" : "name");
    *out = NULL;
    for (int i = 0; i < mod->nkernels; i++)
        if (!strcmp(mod->kernels[i].func->name, name)) {
            *out = &mod->kernels[i];
            return TILE_OK;
        }
    const Func *f = module_find_func(mod->ast, name);
    return rt_error(mod->ctx, TILE_ERROR_NOT_FOUND, "module '%s' has no kernel '%s'%s",
                    mod->file.name, name, f ? " (it is a helper function, not a kernel)" : "");
}

int tile_module_num_kernels(tile_Module *mod)
{
    return rt_handle_check(mod, RT_MODULE, "tile_module_num_kernels") == TILE_OK ? mod->nkernels
                                                                                 : -1;
}

const char *tile_module_kernel_name(tile_Module *mod, int i)
{
    if (rt_handle_check(mod, RT_MODULE, "tile_module_kernel_name") != TILE_OK)
        return NULL;
    return i >= 0 && i < mod->nkernels ? mod->kernels[i].func->name : NULL;
}

int tile_kernel_num_params(tile_Kernel *k)
{
    return rt_handle_check(k, RT_KERNEL, "tile_kernel_num_params") == TILE_OK ? k->func->nparams
                                                                              : -1;
}

tile_Status tile_kernel_param(tile_Kernel *k, int i, tile_Param *out)
{
    tile_Status st = rt_handle_check(k, RT_KERNEL, "tile_kernel_param");
    if (st != TILE_OK)
        return st;
    if (!out || i < 0 || i >= k->func->nparams)
        return rt_error(k->mod->ctx, TILE_ERROR_INVALID_ARGUMENT,
                        "tile_kernel_param: %s (kernel '%s' has %d parameters)",
                        out ? "no such parameter" : "out is NULL", k->func->name,
                        k->func->nparams);
    const Param *p = &k->func->params[i];
    *out = (tile_Param){ p->name, p->type && p->type->ptr_depth > 0, p->is_const,
                         p->type ? p->type->name : "" };
    return TILE_OK;
}
