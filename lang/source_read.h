/* source_read.h: reading a .tile source file from disk, shared by the runtime
 * (tile_module_load_file), tilec and imports (lang/imports.c); and the complete write and
 * the directory creation the caches use (runtime/diskcache.c, tuner/tcache*.c). Only regular files are read,
 * opened without blocking (a FIFO or a device never hangs or streams forever), and no more
 * than SRC_MAX_BYTES of them; anything else is an error with a message. */
#ifndef TILE_SOURCE_READ_H
#define TILE_SOURCE_READ_H
#include <stddef.h>
#include <sys/types.h>

enum { SRC_MAX_BYTES = 64 << 20 };

typedef enum {
    SRC_READ_OK = 0,
    SRC_READ_NOT_FOUND = -1, /* no such file (or a path component is not a directory) */
    SRC_READ_IO = -2,        /* not a regular file, too large, or unreadable */
    SRC_READ_NO_MEMORY = -3,
} SrcReadStatus;

/* Which file was read: two paths naming the same file give the same id. */
typedef struct SrcFileId {
    dev_t dev;
    ino_t ino;
} SrcFileId;

/* Reads path into *text (malloc'ed, NUL-terminated; *len excludes the NUL). On failure
 * returns the status and writes "cannot open 'PATH': why" or similar into err (errsize
 * bytes). id may be NULL. */
SrcReadStatus src_read_file(const char *path, char **text, size_t *len, SrcFileId *id,
                            char *err, size_t errsize);

/* Writes all n bytes to fd, again after an interrupted or short write (the caches' files):
 * 0, or -1 with errno set. */
int fd_write_all(int fd, const void *data, size_t n);

/* mkdir -p that accepts existing directories and only directories (ENOTDIR otherwise): the
 * caches' directories. 0, or -1 with errno set. */
int fs_mkdir_p(const char *path);

#endif
