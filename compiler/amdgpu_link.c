/* amdgpu_link.c: an AMDGPU relocatable object becomes a loadable code object (what HIP's
 * module loader takes) through LLVM's linker, `ld.lld -shared`, run as a child process on
 * files in a private temporary directory. The linker is found at run time: $TILE_LLD, then
 * ld.lld-22 and ld.lld on the PATH, then LLVM 22's own bin directory. */
#include "amdgpu_link.h"
#include "source_read.h"
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* The linker's path (static storage or the environment's), or NULL. */
static const char *find_lld(char *buf, size_t n)
{
    const char *env = getenv("TILE_LLD");
    if (env && *env)
        return access(env, X_OK) == 0 ? env : NULL;
    static const char *const names[] = {"ld.lld-22", "ld.lld"};
    const char *path = getenv("PATH");
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        for (const char *p = path; p && *p;) {
            const char *colon = strchr(p, ':');
            size_t len = colon ? (size_t)(colon - p) : strlen(p);
            snprintf(buf, n, "%.*s/%s", (int)len, p, names[i]);
            if (len && access(buf, X_OK) == 0)
                return buf;
            p = colon ? colon + 1 : NULL;
        }
    snprintf(buf, n, "/usr/lib/llvm-22/bin/ld.lld");
    return access(buf, X_OK) == 0 ? buf : NULL;
}

static int write_file(const char *path, const void *data, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    if (fd_write_all(fd, data, n) != 0) {
        close(fd);
        return -1;
    }
    return close(fd);
}

/* The whole file into the arena; NULL on failure. */
static char *read_file(const char *path, Arena *a, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (size > 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = arena_alloc(a, (size_t)size)) &&
        fread(buf, 1, (size_t)size, f) == (size_t)size)
        *n = (size_t)size;
    else
        buf = NULL;
    fclose(f);
    return buf;
}

/* Runs lld on in -> out, its messages into log; the exit status, or -1. */
static int run_lld(const char *lld, const char *in, const char *out, const char *log)
{
    char *argv[] = {(char *)lld, "-shared", "--no-undefined", "-o", (char *)out, (char *)in, NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid;
    int rc = posix_spawn(&pid, lld, &fa, NULL, argv, environ), status = 0;
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return -1;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void report_log(const char *log, Diags *d)
{
    char msg[512] = "";
    FILE *f = fopen(log, "r");
    size_t n = f ? fread(msg, 1, sizeof msg - 1, f) : 0;
    if (f)
        fclose(f);
    msg[n] = 0;
    if (n && msg[n - 1] == '\n')
        msg[n - 1] = 0;
    diag_error(d, (SrcLoc){0}, "linking the AMDGPU code object failed: %s", n ? msg : "ld.lld failed");
}

int amdgpu_link(const void *obj, size_t size, Arena *a, char **out, size_t *out_size, Diags *d)
{
    char lld_buf[4096], dir[] = "/tmp/tile-lld-XXXXXX", in[64], so[64], log[64];
    const char *lld = find_lld(lld_buf, sizeof lld_buf);
    if (!lld) {
        diag_error(d, (SrcLoc){0}, "an AMDGPU code object needs LLVM's linker ld.lld, not found "
                                   "(install lld-22, or set TILE_LLD to its path)");
        return -1;
    }
    if (!mkdtemp(dir)) {
        diag_error(d, (SrcLoc){0}, "cannot make a temporary directory: %s", strerror(errno));
        return -1;
    }
    snprintf(in, sizeof in, "%s/k.o", dir);
    snprintf(so, sizeof so, "%s/k.hsaco", dir);
    snprintf(log, sizeof log, "%s/lld.log", dir);
    int rc = -1;
    if (write_file(in, obj, size) != 0)
        diag_error(d, (SrcLoc){0}, "cannot write %s: %s", in, strerror(errno));
    else if (run_lld(lld, in, so, log) != 0)
        report_log(log, d);
    else if (!(*out = read_file(so, a, out_size)))
        diag_error(d, (SrcLoc){0}, "cannot read the linked code object %s", so);
    else
        rc = 0;
    unlink(in), unlink(so), unlink(log), rmdir(dir);
    return rc;
}
