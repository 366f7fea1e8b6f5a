/* source_file.c: reading a module's source file for tile_module_load_file. Only regular files
 * are read, opened without blocking (a FIFO or a device never hangs or streams forever), and
 * no more than RT_MAX_SOURCE_BYTES of them: anything else is a clear error status. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "runtime_internal.h"

static tile_Status open_error(tile_Context *ctx, const char *path)
{
    return rt_error(ctx, errno == ENOENT ? TILE_ERROR_NOT_FOUND : TILE_ERROR_IO,
                    "cannot open '%s': %s", path, strerror(errno));
}

/* Opens path for reading when it is a regular file of at most the limit; -1 and an error. */
static int open_regular(tile_Context *ctx, const char *path, size_t *size, tile_Status *st)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) < 0) {
        *st = open_error(ctx, path);
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (!S_ISREG(sb.st_mode))
        *st = rt_error(ctx, TILE_ERROR_IO, "cannot read '%s': not a regular file (%s)", path,
                       S_ISDIR(sb.st_mode) ? "a directory" : S_ISFIFO(sb.st_mode) ? "a FIFO"
                       : S_ISCHR(sb.st_mode) || S_ISBLK(sb.st_mode) ? "a device" : "a socket");
    else if ((unsigned long long)sb.st_size > RT_MAX_SOURCE_BYTES)
        *st = rt_error(ctx, TILE_ERROR_IO,
                       "cannot read '%s': %lld bytes is more than the %d MiB a source may have",
                       path, (long long)sb.st_size, RT_MAX_SOURCE_BYTES >> 20);
    else {
        *size = (size_t)sb.st_size;
        return fd;
    }
    close(fd);
    return -1;
}

/* Reads up to cap bytes: the size fstat gave plus one, so a file that grew since shows. */
static ssize_t read_all(int fd, char *buf, size_t cap)
{
    size_t n = 0;
    while (n < cap) {
        ssize_t got = read(fd, buf + n, cap - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return -1;
        if (got == 0)
            break;
        n += (size_t)got;
    }
    return (ssize_t)n;
}

tile_Status rt_read_source(tile_Context *ctx, const char *path, char **text, size_t *len)
{
    tile_Status st = TILE_OK;
    size_t size = 0;
    int fd = open_regular(ctx, path, &size, &st);
    if (fd < 0)
        return st;
    size_t cap = size + 1;
    char *buf = malloc(cap);
    ssize_t n = buf ? read_all(fd, buf, cap) : -1;
    int err = errno;
    close(fd);
    if (!buf)
        return rt_error(ctx, TILE_ERROR_OUT_OF_MEMORY, "out of memory reading '%s'", path);
    if (n < 0 || (size_t)n == cap) {
        free(buf);
        return rt_error(ctx, TILE_ERROR_IO, "cannot read '%s': %s", path,
                        n < 0 ? strerror(err) : "it grew while being read");
    }
    *text = buf;
    *len = (size_t)n;
    return TILE_OK;
}
