/* test_imports.c: modules with imports in the runtime. A module loaded from a file finds its
 * imports beside it; one loaded from a string through its name's directory or
 * tile_set_import_path; the disk-cache key changes when an imported file changes, so stale
 * code is never loaded; a kernel calling imported helpers runs right on the CPU backend. */
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "runtime_internal.h"
#include "tile.h"
#include "../testing.h"

static char root[64]; /* a fresh directory: the sources, and the disk cache under cache/ */

static const char *MAIN_SRC =
    "import \"lib/shift.tile\";\n"
    "@grid(cdiv(n, BLOCK))\n"
    "kernel add_shift(x: *f32, y: *f32, n: i32, const BLOCK: i32 = 64) {\n"
    "    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
    "    let m = offs < n;\n"
    "    store(y + offs, shift(load(x + offs, mask=m)), mask=m);\n"
    "}\n";

static int write_file(const char *rel, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    FILE *f = fopen(path, "w");
    CHECK(f && fputs(text, f) >= 0 && fclose(f) == 0);
    return 0;
}

/* lib/shift.tile with shift(x) = x + by, itself importing a helper from its own directory. */
static int write_lib(double by)
{
    char text[256];
    snprintf(text, sizeof text, "import \"plus.tile\";\nfn shift(x) { return plus(x, %g); }\n", by);
    return write_file("lib/shift.tile", text) ||
           write_file("lib/plus.tile", "fn plus(a, b) { return a + b; }\nkernel lib_only() {}\n");
}

static int setup(void)
{
    char dir[128];
    snprintf(root, sizeof root, "/tmp/tile-imports-XXXXXX");
    CHECK(mkdtemp(root));
    snprintf(dir, sizeof dir, "%s/lib", root);
    CHECK(mkdir(dir, 0700) == 0);
    snprintf(dir, sizeof dir, "%s/cache", root);
    setenv("TILE_CACHE_DIR", dir, 1);
    unsetenv("TILE_NO_DISK_CACHE");
    unsetenv("TILE_PATH");
    return write_file("main.tile", MAIN_SRC) || write_lib(1.5);
}

static int remove_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

/* Removes root and everything under it. */
static void cleanup(void)
{
    nftw(root, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* The disk-cache file name of add_shift (BLOCK=64, host) in mod. */
static int key_of(tile_Module *mod, char *path)
{
    tile_Kernel *k;
    OK(mod->ctx, tile_kernel_get(mod, "add_shift", &k));
    ConstBinding c = { "BLOCK", 64 };
    CHECK(rt_cache_path(k, &c, 1, NULL, "host", path) == 0);
    return 0;
}

/* Runs add_shift on n random values and compares with x + by in double precision. */
static int run_checked(tile_Context *ctx, tile_Module *mod, double by)
{
    enum { N = 1000 };
    static float x[N], y[N];
    tile_Kernel *k;
    tile_DevPtr dx, dy;
    for (int i = 0; i < N; i++)
        x[i] = (float)(rand() / (double)RAND_MAX * 4 - 2), y[i] = NAN;
    OK(ctx, tile_kernel_get(mod, "add_shift", &k));
    OK(ctx, tile_malloc(ctx, sizeof x, &dx));
    OK(ctx, tile_malloc(ctx, sizeof y, &dy));
    OK(ctx, tile_copy_to_device(ctx, dx, x, sizeof x));
    OK(ctx, tile_copy_to_device(ctx, dy, y, sizeof y));
    tile_Arg args[] = { tile_ptr(dx), tile_ptr(dy), tile_int(N) };
    OK(ctx, tile_launch(k, args, 3, NULL, 0));
    OK(ctx, tile_copy_to_host(ctx, y, dy, sizeof y));
    for (int i = 0; i < N; i++)
        CHECK(fabs(y[i] - ((double)x[i] + by)) <= 1e-6 * (1 + fabs((double)x[i] + by)));
    tile_free(ctx, dx);
    tile_free(ctx, dy);
    return 0;
}

static int test_file_and_cache_key(void)
{
    char main_path[128], key1[PATH_MAX], key2[PATH_MAX], key3[PATH_MAX];
    tile_Context *ctx;
    tile_Module *m1, *m2, *m3;
    if (setup())
        return 1;
    snprintf(main_path, sizeof main_path, "%s/main.tile", root);
    OK(NULL, tile_context_open(TILE_BACKEND_CPU, &ctx));
    OK(ctx, tile_module_load_file(ctx, main_path, &m1));
    CHECK(m1->ast->nfiles == 3 && tile_kernel_get(m1, "lib_only", &(tile_Kernel *){0}) != TILE_OK);
    if (key_of(m1, key1) || run_checked(ctx, m1, 1.5))
        return 1;
    if (write_lib(-0.25)) /* same main file, another imported helper */
        return 1;
    OK(ctx, tile_module_load_file(ctx, main_path, &m2));
    if (key_of(m2, key2) || run_checked(ctx, m2, -0.25))
        return 1;
    CHECK(strcmp(key1, key2) != 0);
    OK(ctx, tile_module_load_string(ctx, main_path, MAIN_SRC, &m3)); /* the same files */
    if (key_of(m3, key3))
        return 1;
    CHECK(strcmp(key2, key3) == 0);
    tile_context_close(ctx);
    cleanup();
    return 0;
}

static int test_string_modules(void)
{
    char lib[128];
    tile_Context *ctx;
    tile_Module *m;
    if (setup())
        return 1;
    OK(NULL, tile_context_open(TILE_BACKEND_CPU, &ctx));
    /* a bare name has no directory: the import is looked for along the search path only */
    EXPECT(ctx, TILE_ERROR_COMPILE, tile_module_load_string(ctx, "main.tile", MAIN_SRC, &m));
    CHECK(strstr(tile_error(ctx), "main.tile:1:8: error: cannot find 'lib/shift.tile'"));
    OK(ctx, tile_set_import_path(ctx, root));
    OK(ctx, tile_module_load_string(ctx, "main.tile", MAIN_SRC, &m));
    if (run_checked(ctx, m, 1.5))
        return 1;
    OK(ctx, tile_set_import_path(ctx, NULL));
    snprintf(lib, sizeof lib, "%s/lib", root); /* $TILE_PATH, after the file's directory */
    setenv("TILE_PATH", lib, 1);
    OK(ctx, tile_module_load_string(ctx, "m.tile", "import \"shift.tile\"; kernel k() {}", &m));
    unsetenv("TILE_PATH");
    tile_context_close(ctx);
    cleanup();
    return 0;
}

/* A relative module path that names no file from the working directory is found along the
 * search path: "attention/flash_fwd.tile" is the standard library's from anywhere, its own
 * imports resolving beside it; "./" paths and missing files are not searched. */
static int test_module_search(void)
{
    tile_Context *ctx;
    tile_Module *m;
    tile_Kernel *k;
    char cwd[PATH_MAX];
    if (setup())
        return 1;
    CHECK(getcwd(cwd, sizeof cwd) && chdir(root) == 0);
    OK(NULL, tile_context_open(TILE_BACKEND_CPU, &ctx));
    OK(ctx, tile_module_load_file(ctx, "attention/flash_fwd.tile", &m));
    OK(ctx, tile_kernel_get(m, "flash_fwd_bf16", &k));
    EXPECT(ctx, TILE_ERROR_NOT_FOUND, tile_module_load_file(ctx, "./attention/flash_fwd.tile", &m));
    EXPECT(ctx, TILE_ERROR_NOT_FOUND, tile_module_load_file(ctx, "attention/nothing.tile", &m));
    if (write_lib(2.0) || write_file("main.tile", MAIN_SRC))
        return 1;
    OK(ctx, tile_set_import_path(ctx, root)); /* a search directory of the caller's */
    CHECK(chdir("/") == 0);
    OK(ctx, tile_module_load_file(ctx, "main.tile", &m));
    if (run_checked(ctx, m, 2.0))
        return 1;
    CHECK(chdir(cwd) == 0);
    tile_context_close(ctx);
    cleanup();
    return 0;
}

static const NamedTest tests[] = {
    { "module_search", test_module_search },
    { "file_and_cache_key", test_file_and_cache_key },
    { "string_modules", test_string_modules },
};

int main(int argc, char **argv)
{
    return run_named_tests("test_imports", tests, (int)(sizeof tests / sizeof tests[0]), argc, argv);
}
