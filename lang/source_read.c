/* source_read.c: reads a source file for the runtime, tilec and imports (source_read.h):
 * regular files only, opened non-blocking, at most SRC_MAX_BYTES, read in full even when
 * a read returns early. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "source_read.h"

static const char *kind_of(mode_t m) {
    return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO"
           : S_ISCHR(m) || S_ISBLK(m) ? "a device" : "a socket";
}

/* Opens path when it is a regular file of at most the limit: the descriptor, or -1 with a
 * status and message. */
static int open_regular(const char *path, size_t *size, SrcFileId *id, SrcReadStatus *st,
                        char *err, size_t errsize) {
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) < 0) {
        *st = errno == ENOENT || errno == ENOTDIR ? SRC_READ_NOT_FOUND : SRC_READ_IO;
        snprintf(err, errsize, "cannot open '%s': %s", path, strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    *st = SRC_READ_IO;
    if (!S_ISREG(sb.st_mode)) {
        snprintf(err, errsize, "cannot read '%s': not a regular file (%s)", path, kind_of(sb.st_mode));
    } else if ((unsigned long long)sb.st_size > SRC_MAX_BYTES) {
        snprintf(err, errsize, "cannot read '%s': %lld bytes is more than the %d MiB a source may have",
                 path, (long long)sb.st_size, SRC_MAX_BYTES >> 20);
    } else {
        *size = (size_t)sb.st_size;
        if (id) *id = (SrcFileId){sb.st_dev, sb.st_ino};
        return fd;
    }
    close(fd);
    return -1;
}

/* Reads up to cap bytes: the size fstat gave plus one, so a file that grew since shows. */
static ssize_t read_all(int fd, char *buf, size_t cap) {
    size_t n = 0;
    while (n < cap) {
        ssize_t got = read(fd, buf + n, cap - n);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) return -1;
        if (got == 0) break;
        n += (size_t)got;
    }
    return (ssize_t)n;
}

SrcReadStatus src_read_file(const char *path, char **text, size_t *len, SrcFileId *id,
                            char *err, size_t errsize) {
    SrcReadStatus st = SRC_READ_OK;
    size_t size = 0;
    int fd = open_regular(path, &size, id, &st, err, errsize);
    if (fd < 0) return st;
    size_t cap = size + 1;
    char *buf = malloc(cap + 1);
    ssize_t n = buf ? read_all(fd, buf, cap) : -1;
    int e = errno;
    close(fd);
    if (!buf) {
        snprintf(err, errsize, "out of memory reading '%s'", path);
        return SRC_READ_NO_MEMORY;
    }
    if (n < 0 || (size_t)n == cap) {
        free(buf);
        snprintf(err, errsize, "cannot read '%s': %s", path, n < 0 ? strerror(e) : "it grew while being read");
        return SRC_READ_IO;
    }
    buf[n] = 0;
    *text = buf;
    *len = (size_t)n;
    return SRC_READ_OK;
}

int fd_write_all(int fd, const void *data, size_t n) {
    const char *p = data;
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return -1;
        if (w == 0) {
            errno = EIO;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* mkdir that accepts an existing directory, and only a directory (ENOTDIR otherwise). */
static int mkdir_one(const char *path)
{
    struct stat st;
    if (mkdir(path, 0755) == 0)
        return 0;
    if (errno != EEXIST)
        return -1;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return 0;
    errno = ENOTDIR;
    return -1;
}

int fs_mkdir_p(const char *path)
{
    char *p = strdup(path);
    int bad = !p;
    for (char *s = p ? p + 1 : NULL; s && *s && !bad; s++)
        if (*s == '/') {
            *s = 0;
            bad = mkdir_one(p) < 0;
            *s = '/';
        }
    bad = bad || mkdir_one(p) < 0;
    free(p);
    return bad ? -1 : 0;
}
