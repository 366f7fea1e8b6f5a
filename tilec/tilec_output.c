/* tilec_output.c: the output files of tilec (-o of emit, --save of run). A regular file is written through
 * a temporary file beside it and renamed into place only when everything succeeded, so a
 * failed emit leaves an existing output untouched; -o naming the input file (under any
 * path) is refused. Other kinds of file (/dev/null, a pipe) are written directly. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tilec.h"

int tilec_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (strcmp(a, b) == 0)
        return 1;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

int tilec_output_open(TilecOutput *out, const char *path, const char *input, int binary)
{
    struct stat st;
    *out = (TilecOutput){ .f = stdout, .path = path };
    if (!path)
        return 0;
    if (input && tilec_same_file(path, input))
        tilec_usage_error("-o %s names the input file", tilec_clip(path));
    int exists = stat(path, &st) == 0;
    if (exists && S_ISDIR(st.st_mode)) {
        tilec_error("cannot write '%s': it is a directory", tilec_clip(path));
        return -1;
    }
    if (exists && !S_ISREG(st.st_mode)) /* a device or a pipe: no rename over it */
        out->f = fopen(path, binary ? "wb" : "w");
    else if ((out->tmp = malloc(strlen(path) + 32))) {
        sprintf(out->tmp, "%s.tmp.%ld", path, (long)getpid());
        out->f = fopen(out->tmp, binary ? "wbx" : "wx");
        if (out->f && exists)
            fchmod(fileno(out->f), st.st_mode & 07777);
    }
    if (!out->f) {
        tilec_error("cannot write '%s': %s", tilec_clip(path), strerror(errno));
        free(out->tmp);
        out->tmp = NULL;
        return -1;
    }
    return 0;
}

int tilec_output_close(TilecOutput *out, int ok)
{
    if (out->f == stdout) {
        if (fflush(stdout) == 0 && !ferror(stdout))
            return 0;
        tilec_error("writing to standard output failed: %s", strerror(errno));
        return -1;
    }
    int bad = ferror(out->f);
    bad |= fclose(out->f) != 0;
    if (bad && ok)
        tilec_error("writing '%s' failed: %s", tilec_clip(out->path), strerror(errno));
    if (out->tmp && ok && !bad && rename(out->tmp, out->path) != 0) {
        tilec_error("cannot replace '%s': %s", tilec_clip(out->path), strerror(errno));
        bad = 1;
    }
    if (out->tmp && (!ok || bad))
        unlink(out->tmp);
    free(out->tmp);
    out->f = NULL, out->tmp = NULL;
    return bad ? -1 : 0;
}
