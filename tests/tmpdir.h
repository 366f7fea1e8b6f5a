/* tmpdir.h: temporary directories for the C tests. test_tmpdir makes $TMPDIR/PREFIX-XXXXXX
 * (under /tmp without TMPDIR) and removes it, with everything in it, when the process that
 * made it exits through main's return or exit(): a test that fails or skips cleans up as one
 * that passes does (a crash or a kill cannot). Needs _GNU_SOURCE (mkdtemp, nftw). */
#ifndef TILE_TEST_TMPDIR_H
#define TILE_TEST_TMPDIR_H
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { TMPDIR_MAX = 8, TMPDIR_PATH = 256 };
static char tmpdir_made[TMPDIR_MAX][TMPDIR_PATH];
static int tmpdir_count;
static pid_t tmpdir_owner;

static int tmpdir_remove_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

static void tmpdir_remove_all(void)
{
    if (getpid() != tmpdir_owner) /* a forked child that exits leaves them to its parent */
        return;
    for (int i = 0; i < tmpdir_count; i++)
        if (nftw(tmpdir_made[i], tmpdir_remove_one, 16, FTW_DEPTH | FTW_PHYS) != 0)
            fprintf(stderr, "note: could not remove %s\n", tmpdir_made[i]);
    tmpdir_count = 0;
}

/* Makes the directory into buf (cap bytes); 0, or -1 with a message on stderr. */
static inline int test_tmpdir(char *buf, size_t cap, const char *prefix)
{
    const char *base = getenv("TMPDIR");
    if (!base || !*base)
        base = "/tmp";
    if (cap > TMPDIR_PATH)
        cap = TMPDIR_PATH;
    int n = snprintf(buf, cap, "%s/%s-XXXXXX", base, prefix);
    if (tmpdir_count == TMPDIR_MAX || n < 0 || (size_t)n >= cap) {
        fprintf(stderr, "test_tmpdir: no room for %s/%s-XXXXXX\n", base, prefix);
        return -1;
    }
    if (!mkdtemp(buf)) {
        perror(buf);
        return -1;
    }
    if (!tmpdir_owner) {
        tmpdir_owner = getpid();
        atexit(tmpdir_remove_all);
    }
    snprintf(tmpdir_made[tmpdir_count++], TMPDIR_PATH, "%s", buf);
    return 0;
}

#endif
