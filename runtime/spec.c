/* spec.c: specializations. A kernel launched with given const values on a target is compiled
 * once per module (or loaded from the disk cache, diskcache.c) and kept in the module's map,
 * keyed by kernel name + const values + the arguments' divisibility flags + target.
 * Launching threads share the map (mod->lock); compiles are serialized per module
 * (mod->compile_lock) so each one happens only once. The tuner compiles many at once through
 * rt_spec_image (thread-safe, no locks) and then rt_spec_install (loads one into the map). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "debug_abi.h"
#include "runtime_internal.h"

/* "kernel\x1ftarget\x1fname=value\x1f...[\x1fdiv=qqeb]" (malloc'ed): the divisor of each
 * param as a letter, 'a' + divisor ('o': an integer that is 1) */
static char *spec_key(const tile_Kernel *k, const ConstBinding *c, int n,
                      const unsigned char *div, const char *target)
{
    size_t cap = strlen(k->func->name) + strlen(target) + (size_t)k->nparams + 16;
    for (int i = 0; i < n; i++)
        cap += strlen(c[i].name) + 24;
    char *key = malloc(cap);
    if (!key)
        return NULL;
    size_t len = (size_t)snprintf(key, cap, "%s\x1f%s", k->func->name, target);
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(key + len, cap - len, "\x1f%s=%lld", c[i].name,
                                (long long)c[i].value);
    if (div)
        len += (size_t)snprintf(key + len, cap - len, "\x1f" "div=");
    for (int i = 0; div && i < k->nparams; i++)
        key[len++] = div[i] == PARAM_DIV_ONE ? 'o' : (char)('a' + div[i]); /* 1..16: b..q */
    key[len] = 0;
    return key;
}

/* "[BLOCK=128, num_warps=4]" for messages */
static void consts_str(const ConstBinding *c, int n, char *buf, size_t cap)
{
    size_t len = (size_t)snprintf(buf, cap, "[");
    for (int i = 0; i < n && len < cap; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%s=%lld", i ? ", " : "", c[i].name,
                                (long long)c[i].value);
    if (len < cap)
        snprintf(buf + len, cap - len, "]");
}

static Spec *map_find(tile_Module *mod, const char *key, uint64_t h)
{
    Spec *s = rtmap_get(&mod->specs, h);
    while (s && strcmp(s->key, key))
        s = s->next;
    return s;
}

static Spec *lookup(tile_Module *mod, const char *key, uint64_t h)
{
    pthread_mutex_lock(&mod->lock);
    Spec *s = map_find(mod, key, h);
    pthread_mutex_unlock(&mod->lock);
    return s;
}

static void spec_free(tile_Context *ctx, Spec *s)
{
    if (s->bk_mod)
        ctx->ops->unload(ctx->dev, s->bk_mod);
    free(s->key);
    free(s->elems);
    free(s->sites);
    free(s);
}

static int insert(tile_Module *mod, Spec *s, uint64_t h)
{
    pthread_mutex_lock(&mod->lock);
    s->next = rtmap_get(&mod->specs, h);
    int bad = rtmap_put(&mod->specs, h, s);
    pthread_mutex_unlock(&mod->lock);
    return bad;
}

void rt_spec_free_all(tile_Module *mod)
{
    const RtChooser *chooser = mod->ctx->chooser;
    for (int i = 0; i < mod->nkernels && chooser; i++)
        chooser->forget(&mod->kernels[i]); /* the kernels' tuning state dies with their specs */
    for (size_t i = 0; i < mod->specs.cap; i++)
        for (Spec *s = mod->specs.vals[i], *next; s; s = next) {
            next = s->next;
            spec_free(mod->ctx, s);
        }
    rtmap_free(&mod->specs);
}

/* Loads a compiled image into a new Spec. */
static tile_Status spec_load(tile_Kernel *k, const CacheEntry *e, Spec **out, char *err)
{
    tile_Context *ctx = k->mod->ctx;
    Spec *s = calloc(1, sizeof *s);
    ElemKind *elems = malloc(sizeof *elems * (size_t)(e->nparams + 1));
    if (!s || !elems) {
        free(s);
        free(elems);
        snprintf(err, BK_ERR_MAX, "out of memory");
        return TILE_ERROR_OUT_OF_MEMORY;
    }
    memcpy(elems, e->elems, sizeof *elems * (size_t)e->nparams);
    *s = (Spec){ .num_threads = e->num_threads, .smem_bytes = e->smem_bytes,
                 .nparams = e->nparams, .elems = elems };
    s->nsites = e->debug_sites ? debug_sites_decode(e->debug_sites, &s->sites) : 0;
    if (s->nsites < 0) {
        snprintf(err, BK_ERR_MAX, "malformed debug sites in the compiled kernel");
        spec_free(ctx, s);
        return TILE_ERROR_COMPILE;
    }
    tile_Status st = ctx->ops->load(ctx->dev, e->image, e->image_size, &s->bk_mod, err);
    if (st == TILE_OK)
        st = ctx->ops->get_function(ctx->dev, s->bk_mod, e->symbol, e->smem_bytes, &s->fn, err);
    if (st != TILE_OK) {
        spec_free(ctx, s);
        return st;
    }
    *out = s;
    return TILE_OK;
}

static int from_disk(tile_Kernel *k, const char *path, Spec **out)
{
    CacheEntry e;
    char err[BK_ERR_MAX];
    if (!path[0] || rt_cache_read(k->mod->ctx, path, &e) < 0)
        return -1;
    tile_Status st = e.nparams == k->nparams ? spec_load(k, &e, out, err) : TILE_ERROR_COMPILE;
    rt_cache_entry_free(&e);
    if (st != TILE_OK) {
        rt_log(k->mod->ctx, "tile: ignoring unusable cache file %s", path);
        return -1;
    }
    rt_count_disk_hit();
    rt_log(k->mod->ctx, "tile: loaded '%s' from %s", k->func->name, path);
    return 0;
}

/* The compile's diagnostics as text without the last line break ("" for none); NULL when
 * there was no memory to render them. */
static char *diags_text(Diags *d, Arena *a)
{
    char *text = diags_render_all(d, a);
    size_t len = text ? strlen(text) : 0;
    while (len && text[len - 1] == '\n')
        text[--len] = 0;
    return text;
}

static tile_Status compile_error(tile_Kernel *k, const ConstBinding *c, int n,
                                 const char *target, Diags *d, Arena *a)
{
    char cs[512];
    consts_str(c, n, cs, sizeof cs);
    char *text = diags_text(d, a);
    if (!text) /* the diagnostics did not fit either */
        return rt_error(k->mod->ctx, TILE_ERROR_OUT_OF_MEMORY, "compile of '%s' %s for %s: out of memory",
                        k->func->name, cs, target);
    size_t len = strlen(text);
    return rt_error(k->mod->ctx, TILE_ERROR_COMPILE, "compile of '%s' %s for %s failed%s%s",
                    k->func->name, cs, target, len ? ":\n" : " (no diagnostics)", len ? text : "");
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Hash of compiled code with every occurrence of its symbol left out: specializations that
 * differ only in consts the code does not use hash alike (the tuner times them once). */
static uint64_t code_hash(const char *code, size_t size, const char *symbol)
{
    size_t slen = strlen(symbol), n = 0;
    char *copy = malloc(size + 1);
    if (!copy || !slen)
        return free(copy), 0;
    for (size_t i = 0; i < size;)
        if (i + slen <= size && memcmp(code + i, symbol, slen) == 0)
            i += slen;
        else
            copy[n++] = code[i++];
    uint64_t h = rt_hash64(copy, n);
    free(copy);
    return h ? h : 1;
}

typedef struct CompileCall {
    const CompileRequest *req;
    Arena *a;
    Diags *d;
    CompiledKernel *ck;
    int rc;
} CompileCall;

static void compile_call(void *p)
{
    CompileCall *c = p;
    c->rc = rt_compile_fn()(c->req, c->a, c->d, c->ck);
}

/* tc_compile, then the backend's finalize (PTX -> cubin) into a loadable image `e` (free
 * with rt_cache_entry_free). TILE_ERROR_COMPILE with the diagnostics in d, or another
 * status with the reason in err. */
static tile_Status build_image(tile_Kernel *k, const ConstBinding *c, int n,
                               const unsigned char *div, const char *target, Arena *a,
                               Diags *d, CacheEntry *e, char *err)
{
    tile_Context *ctx = k->mod->ctx;
    CompileRequest req = { .module = k->mod->ast, .kernel = k->func->name, .consts = c,
                           .nconsts = n, .target = target, .stop_after = STAGE_OBJECT,
                           .param_div = div };
    CompiledKernel ck = { 0 };
    memset(e, 0, sizeof *e);
    CompileCall call = { &req, a, d, &ck, -1 };
    rt_call_on_big_stack(compile_call, &call);
    if (call.rc < 0)
        return TILE_ERROR_COMPILE;
    rt_count_compile();
    e->symbol = strdup(ck.symbol);
    e->elems = malloc(sizeof *e->elems * (size_t)(ck.nparams + 1));
    e->num_threads = ck.num_threads, e->smem_bytes = ck.smem_bytes, e->nparams = ck.nparams;
    if (!e->symbol || !e->elems) {
        rt_cache_entry_free(e);
        snprintf(err, BK_ERR_MAX, "out of memory");
        return TILE_ERROR_OUT_OF_MEMORY;
    }
    for (int i = 0; i < ck.nparams; i++)
        e->elems[i] = ck.params[i].elem;
    e->code_hash = code_hash(ck.code, ck.code_size, ck.symbol);
    if (ck.debug_sites && !(e->debug_sites = strdup(ck.debug_sites))) {
        rt_cache_entry_free(e);
        snprintf(err, BK_ERR_MAX, "out of memory");
        return TILE_ERROR_OUT_OF_MEMORY;
    }
    tile_Status st = ctx->ops->finalize(ctx->dev, ck.code, ck.code_size, ck.kind, &e->image,
                                        &e->image_size, err);
    if (st != TILE_OK)
        rt_cache_entry_free(e);
    return st;
}

/* Compiles, finalizes (PTX -> cubin), loads; writes the disk cache. */
static tile_Status compile(tile_Kernel *k, const ConstBinding *c, int n,
                           const unsigned char *div, const char *target, const char *path,
                           Arena *a, Spec **out)
{
    tile_Context *ctx = k->mod->ctx;
    Diags d;
    diags_init(&d, a);
    CacheEntry e;
    char err[BK_ERR_MAX];
    double t0 = now_ms();
    tile_Status st = build_image(k, c, n, div, target, a, &d, &e, err);
    if (st == TILE_ERROR_COMPILE)
        return compile_error(k, c, n, target, &d, a);
    if (st == TILE_OK)
        st = spec_load(k, &e, out, err);
    if (st != TILE_OK) {
        rt_cache_entry_free(&e);
        return rt_error(ctx, st, "loading '%s' compiled for %s: %s", k->func->name, target, err);
    }
    double ms = now_ms() - t0;
    char *notes = d.first ? diags_text(&d, a) : NULL; /* static_print's among them */
    if (notes && *notes) /* what the compile said, then that it is done */
        rt_log(ctx, "tile: compiling '%s' for %s:\n%s", k->func->name, target, notes);
    rt_log(ctx, "tile: compiled '%s' for %s in %.1f ms", k->func->name, target, ms);
    if (path[0] && rt_cache_write(ctx, path, &e) == 0)
        rt_count_disk_write();
    rt_cache_entry_free(&e);
    return TILE_OK;
}

/* Disk cache, else compile, for one target. */
static tile_Status build(tile_Kernel *k, const ConstBinding *c, int n,
                         const unsigned char *div, const char *target, Spec **out)
{
    char path[4096] = "";
    if (rt_cache_path(k, c, n, div, target, path) < 0)
        path[0] = 0;
    if (from_disk(k, path, out) == 0)
        return TILE_OK;
    Arena *a = arena_new();
    if (!a)
        return rt_error(k->mod->ctx, TILE_ERROR_OUT_OF_MEMORY, "compile: out of memory");
    tile_Status st = compile(k, c, n, div, target, path, a, out);
    arena_free(a);
    return st;
}

/* Builds for the context's target; when code for it does not load (e.g. sm_90a on a driver
 * that rejects it) tries the backend's fallback target and keeps it for later compiles. */
static tile_Status build_any(tile_Kernel *k, const ConstBinding *c, int n,
                             const unsigned char *div, char *target, Spec **out)
{
    tile_Context *ctx = k->mod->ctx;
    tile_Status st = build(k, c, n, div, target, out);
    const char *fb = ctx->ops->fallback_target(ctx->dev);
    if (st != TILE_ERROR_DEVICE || !fb || !strcmp(fb, target))
        return st;
    rt_log(ctx, "tile: code for %s did not load (%s); trying %s", target, tile_error(ctx), fb);
    st = build(k, c, n, div, fb, out);
    if (st == TILE_OK) {
        pthread_mutex_lock(&ctx->lock);
        snprintf(ctx->target, sizeof ctx->target, "%s", fb);
        pthread_mutex_unlock(&ctx->lock);
        snprintf(target, 32, "%s", fb);
    }
    return st;
}

static void current_target(tile_Context *ctx, char target[32])
{
    pthread_mutex_lock(&ctx->lock);
    memcpy(target, ctx->target, 32);
    pthread_mutex_unlock(&ctx->lock);
}

static tile_Status compile_locked(tile_Kernel *k, const ConstBinding *c, int n,
                                  const unsigned char *div, char *target, Spec **out)
{
    tile_Module *mod = k->mod;
    tile_Status st = build_any(k, c, n, div, target, out);
    if (st != TILE_OK)
        return st;
    char *key = (*out)->key = spec_key(k, c, n, div, target);
    if (!key || insert(mod, *out, rt_hash64(key, strlen(key)))) {
        spec_free(mod->ctx, *out);
        return rt_error(mod->ctx, TILE_ERROR_OUT_OF_MEMORY, "launch: out of memory");
    }
    return TILE_OK;
}

tile_Status rt_spec_get(tile_Kernel *k, const ConstBinding *c, int n,
                        const unsigned char *div, Spec **out)
{
    tile_Module *mod = k->mod;
    char target[32];
    current_target(mod->ctx, target);
    char *key = spec_key(k, c, n, div, target);
    if (!key)
        return rt_error(mod->ctx, TILE_ERROR_OUT_OF_MEMORY, "launch: out of memory");
    uint64_t h = rt_hash64(key, strlen(key));
    tile_Status st = TILE_OK;
    if (!(*out = lookup(mod, key, h))) {
        pthread_mutex_lock(&mod->compile_lock);
        if (!(*out = lookup(mod, key, h)))
            st = compile_locked(k, c, n, div, target, out);
        pthread_mutex_unlock(&mod->compile_lock);
    }
    free(key);
    return st;
}

/* ---- for the tuner: build images in parallel, install them one by one ---- */

/* One line (at most 300 bytes) of rendered diagnostics, for a tuning result's reason. */
static char *first_lines(Diags *d, Arena *a)
{
    static char out_of_memory[] = "compile failed: out of memory";
    char *text = diags_render_all(d, a);
    if (!text)
        return out_of_memory;
    if (!*text)
        return arena_strdup(a, "compile failed (no diagnostics)");
    char *nl = strchr(text, '\n');
    if (nl)
        *nl = 0;
    if (strlen(text) > 300)
        text[300] = 0;
    return text;
}

tile_Status rt_spec_image(tile_Kernel *k, const ConstBinding *c, int n,
                          const unsigned char *div, const char *target, Arena *a,
                          CacheEntry *e, const char **reason)
{
    char path[4096] = "", err[BK_ERR_MAX];
    memset(e, 0, sizeof *e);
    if (rt_cache_path(k, c, n, div, target, path) < 0)
        path[0] = 0;
    if (path[0] && rt_cache_read(k->mod->ctx, path, e) == 0) {
        if (e->nparams == k->nparams) {
            rt_count_disk_hit();
            return TILE_OK;
        }
        rt_cache_entry_free(e);
    }
    Diags d;
    diags_init(&d, a);
    tile_Status st = build_image(k, c, n, div, target, a, &d, e, err);
    if (st != TILE_OK) {
        *reason = st == TILE_ERROR_COMPILE ? first_lines(&d, a) : arena_strdup(a, err);
        return st;
    }
    if (path[0] && rt_cache_write(k->mod->ctx, path, e) == 0)
        rt_count_disk_write();
    return TILE_OK;
}

tile_Status rt_spec_install(tile_Kernel *k, const ConstBinding *c, int n,
                            const unsigned char *div, const char *target,
                            const CacheEntry *e, Spec **out, char *err)
{
    tile_Module *mod = k->mod;
    char *key = spec_key(k, c, n, div, target);
    if (!key) {
        snprintf(err, BK_ERR_MAX, "out of memory");
        return TILE_ERROR_OUT_OF_MEMORY;
    }
    uint64_t h = rt_hash64(key, strlen(key));
    tile_Status st = TILE_OK;
    pthread_mutex_lock(&mod->compile_lock);
    if (!(*out = lookup(mod, key, h)) && (st = spec_load(k, e, out, err)) == TILE_OK) {
        (*out)->key = key;
        key = NULL;
        if (insert(mod, *out, h)) {
            spec_free(mod->ctx, *out);
            snprintf(err, BK_ERR_MAX, "out of memory");
            st = TILE_ERROR_OUT_OF_MEMORY;
        }
    }
    pthread_mutex_unlock(&mod->compile_lock);
    free(key);
    return st;
}

void rt_current_target(tile_Context *ctx, char target[32]) { current_target(ctx, target); }
