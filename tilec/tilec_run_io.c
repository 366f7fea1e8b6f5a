/* tilec_run_io.c: the data files of `tilec run`. --load NAME=FILE fills a pointer parameter's
 * buffer from a raw binary file (its length in elements is the file's size / element size)
 * or, for FILE ending in .npy, from NumPy's format (its dtype must be the parameter's element
 * type, C order; the length is the product of its shape);
 * --save NAME=FILE writes a buffer's contents after the first launch. Raw: the elements' bytes
 * in host order, as numpy's `tofile` writes them. Bad file arguments are usage errors
 * (exit 2); a failed read or write is an error of the run (exit 1). --save writes through a
 * temporary file (tilec_output.c) and may not name the kernel's source. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "tilec.h"

void tilec_file_arg_parse(const char *text, const char *opt, Arena *a, TilecFileArg *out)
{
    const char *eq = strchr(text, '=');
    if (!eq || eq == text || !eq[1])
        tilec_usage_error("bad %s '%s': expected NAME=FILE", opt, tilec_clip(text));
    out->name = tilec_need(arena_strndup(a, text, (size_t)(eq - text)));
    out->path = tilec_need(arena_strdup(a, eq + 1));
}

/* ---- .npy ---- */
static int is_npy(const char *path)
{
    size_t n = strlen(path);
    return n > 4 && strcmp(path + n - 4, ".npy") == 0;
}

/* NumPy's dtype string of an element type (little-endian hosts); NULL for bf16. */
static const char *npy_descr(ElemKind k)
{
    switch (k) {
    case ET_BOOL: return "|b1";
    case ET_I8: return "|i1";
    case ET_U8: return "|u1";
    case ET_I16: return "<i2";
    case ET_U16: return "<u2";
    case ET_I32: return "<i4";
    case ET_U32: return "<u4";
    case ET_I64: return "<i8";
    case ET_U64: return "<u8";
    case ET_F16: return "<f2";
    case ET_F32: return "<f4";
    case ET_F64: return "<f8";
    default: return NULL;
    }
}

/* The quoted value after 'key': in the header dict, into out (n bytes); 0 when found. */
static int dict_str(const char *h, const char *key, char *out, size_t n)
{
    const char *p = strstr(h, key);
    if (!p || !(p = strchr(p + strlen(key), '\'')))
        return -1;
    const char *e = strchr(++p, '\'');
    if (!e || (size_t)(e - p) >= n)
        return -1;
    memcpy(out, p, (size_t)(e - p));
    out[e - p] = 0;
    return 0;
}

/* The element count of a shape tuple "(d0, d1, ...)" (a trailing comma allowed; "()" is 1):
 * NULL, or why it is not one whose count * esz bytes fits in a size_t. */
static const char *npy_shape_count(const char *shape, size_t esz, size_t *count)
{
    size_t n = 1, bytes;
    const char *p = shape + 1;
    for (;;) {
        while (*p == ' ')
            p++;
        if (*p == ')')
            break;
        if (*p < '0' || *p > '9')
            return "a dimension is not a non-negative integer";
        char *end;
        errno = 0;
        unsigned long long d = strtoull(p, &end, 10);
        if (errno == ERANGE || __builtin_mul_overflow(n, d, &n))
            return "its element count does not fit in 64 bits";
        for (p = end; *p == ' '; p++)
            ;
        if (*p != ',' && *p != ')')
            return "expected a comma or ')' after a dimension";
        p += *p == ',';
    }
    if (__builtin_mul_overflow(n, esz, &bytes))
        return "its size in bytes does not fit in 64 bits";
    *count = n;
    return NULL;
}

/* Reads the header of .npy file fa: checks its dtype against k and its order; the data's
 * offset and element count. A usage error when it is not what the parameter takes. */
static void npy_header(const TilecFileArg *fa, ElemKind k, long *offset, size_t *count)
{
    FILE *f = fopen(fa->path, "rb");
    unsigned char pre[12];
    if (!f)
        tilec_usage_error("--load %s=%s: %s", tilec_clip(fa->name), tilec_clip(fa->path),
                          strerror(errno));
    size_t got = fread(pre, 1, sizeof pre, f);
    int v1 = got >= 10 && pre[6] == 1;
    size_t hlen = got < 10 ? 0 : v1 ? (size_t)(pre[8] | pre[9] << 8)
                                    : got < 12 ? 0 : (size_t)(pre[8] | pre[9] << 8 | pre[10] << 16 | (size_t)pre[11] << 24);
    char h[4096] = "", descr[16], *shape;
    size_t start = v1 ? 10 : 12;
    int ok = got >= 10 && memcmp(pre, "\x93NUMPY", 6) == 0 && hlen > 0 && hlen < sizeof h &&
             fseek(f, (long)start, SEEK_SET) == 0 && fread(h, 1, hlen, f) == hlen;
    fclose(f);
    if (!ok)
        tilec_usage_error("--load %s=%s: not a .npy file NumPy wrote (no header)",
                          tilec_clip(fa->name), tilec_clip(fa->path));
    h[hlen] = 0;
    const char *want = npy_descr(k);
    if (dict_str(h, "'descr':", descr, sizeof descr) != 0)
        tilec_usage_error("--load %s=%s: its .npy header has no 'descr' (dtype) entry NumPy would write",
                          tilec_clip(fa->name), tilec_clip(fa->path));
    if (!want ||
        (strcmp(descr, want) != 0 && !(descr[0] == '=' && strcmp(descr + 1, want + 1) == 0)))
        tilec_usage_error("--load %s=%s: its dtype is '%s', the parameter is %s (%s)",
                          tilec_clip(fa->name), tilec_clip(fa->path),
                          descr,
                          et_name(k), want ? want : "no NumPy dtype: give a raw file");
    if (strstr(h, "'fortran_order': True"))
        tilec_usage_error("--load %s=%s: Fortran order; save a C-ordered array",
                          tilec_clip(fa->name), tilec_clip(fa->path));
    if (!(shape = strstr(h, "'shape':")) || !(shape = strchr(shape, '(')))
        tilec_usage_error("--load %s=%s: no shape in its header", tilec_clip(fa->name),
                          tilec_clip(fa->path));
    const char *why = npy_shape_count(shape, (size_t)et_bytes(k), count);
    if (why) {
        char *close = strchr(shape, ')');
        tilec_usage_error("--load %s=%s: bad shape '%.*s' in its header: %s",
                          tilec_clip(fa->name), tilec_clip(fa->path),
                          close ? (int)(close - shape + 1) : 40, shape, why);
    }
    *offset = (long)(start + hlen);
}

size_t tilec_file_elems(const TilecFileArg *fa, ElemKind k)
{
    const char *elem_name = et_name(k);
    int esz = et_bytes(k);
    struct stat st;
    if (stat(fa->path, &st) != 0)
        tilec_usage_error("--load %s=%s: %s", tilec_clip(fa->name), tilec_clip(fa->path),
                          strerror(errno));
    if (!S_ISREG(st.st_mode))
        tilec_usage_error("--load %s=%s: not a regular file", tilec_clip(fa->name),
                          tilec_clip(fa->path));
    if (is_npy(fa->path)) {
        long off;
        size_t n;
        npy_header(fa, k, &off, &n);
        if (st.st_size < off || (unsigned long long)st.st_size - (unsigned long long)off <
            (unsigned long long)n * (size_t)esz) /* n * esz fits: npy_header checked */
            tilec_usage_error("--load %s=%s: the file is shorter than its shape says",
                              tilec_clip(fa->name), tilec_clip(fa->path));
        return n;
    }
    if (esz <= 0 || st.st_size % esz != 0)
        tilec_usage_error("--load %s=%s: %lld bytes is not a whole number of %s elements "
                          "(%d bytes each)", tilec_clip(fa->name), tilec_clip(fa->path),
                          (long long)st.st_size, elem_name, esz);
    return (size_t)st.st_size / (size_t)esz;
}

int tilec_file_read(const TilecFileArg *fa, ElemKind k, void *buf, size_t bytes)
{
    long off = 0;
    size_t n;
    if (is_npy(fa->path))
        npy_header(fa, k, &off, &n);
    FILE *f = fopen(fa->path, "rb");
    if (!f || fseek(f, off, SEEK_SET) != 0) {
        tilec_error("--load %s=%s: %s", tilec_clip(fa->name), tilec_clip(fa->path),
                    strerror(errno));
        if (f)
            fclose(f);
        return -1;
    }
    size_t got = bytes ? fread(buf, 1, bytes, f) : 0;
    int bad = got != bytes || ferror(f);
    fclose(f);
    if (bad)
        tilec_error("--load %s=%s: read %zu of %zu bytes", tilec_clip(fa->name),
                    tilec_clip(fa->path), got, bytes);
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
        tilec_error("--save %s=%s: wrote %zu of %zu bytes: %s", tilec_clip(fa->name),
                    tilec_clip(fa->path), put, bytes,
                    strerror(errno));
    return tilec_output_close(&out, !bad) != 0 || bad ? -1 : 0;
}
