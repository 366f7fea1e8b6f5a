/* tilec_run_io.c: the data files of `tilec run`. --load NAME=FILE fills a pointer parameter's
 * buffer from a raw binary file (its length in elements is the file's size / element size);
 * --save NAME=FILE writes a buffer's contents after the first launch. Raw: the elements' bytes
 * in host order, as numpy's `tofile` writes them. Bad file arguments are usage errors
 * (exit 2); a failed read or write is an error of the run (exit 1). --save writes through a
 * temporary file (tilec_output.c) and may not name the kernel's source. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "tilec.h"

void tilec_file_arg_parse(const char *text, const char *opt, Arena *a, TilecFileArg *out)
{
    const char *eq = strchr(text, '=');
    if (!eq || eq == text || !eq[1])
        tilec_usage_error("bad %s '%s': expected NAME=FILE", opt, text);
    out->name = tilec_need(arena_strndup(a, text, (size_t)(eq - text)));
    out->path = tilec_need(arena_strdup(a, eq + 1));
}

size_t tilec_file_elems(const TilecFileArg *fa, const char *elem_name, int esz)
{
    struct stat st;
    if (stat(fa->path, &st) != 0)
        tilec_usage_error("--load %s=%s: %s", fa->name, fa->path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        tilec_usage_error("--load %s=%s: not a regular file", fa->name, fa->path);
    if (esz <= 0 || st.st_size % esz != 0)
        tilec_usage_error("--load %s=%s: %lld bytes is not a whole number of %s elements "
                          "(%d bytes each)", fa->name, fa->path, (long long)st.st_size,
                          elem_name, esz);
    return (size_t)st.st_size / (size_t)esz;
}

int tilec_file_read(const TilecFileArg *fa, void *buf, size_t bytes)
{
    FILE *f = fopen(fa->path, "rb");
    if (!f) {
        tilec_error("--load %s=%s: %s", fa->name, fa->path, strerror(errno));
        return -1;
    }
    size_t got = bytes ? fread(buf, 1, bytes, f) : 0;
    int bad = got != bytes || ferror(f);
    fclose(f);
    if (bad)
        tilec_error("--load %s=%s: read %zu of %zu bytes", fa->name, fa->path, got, bytes);
    return bad ? -1 : 0;
}

int tilec_file_write(const TilecFileArg *fa, const void *buf, size_t bytes)
{
    TilecOutput out; /* through a temporary file: a failed write leaves an old file as it was */
    if (tilec_output_open(&out, fa->path, NULL, 1) != 0)
        return -1;
    size_t put = bytes ? fwrite(buf, 1, bytes, out.f) : 0;
    int bad = put != bytes;
    if (bad)
        tilec_error("--save %s=%s: wrote %zu of %zu bytes: %s", fa->name, fa->path, put, bytes,
                    strerror(errno));
    return tilec_output_close(&out, !bad) != 0 || bad ? -1 : 0;
}
