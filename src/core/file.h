/* file.h — a refcounted open file, shared by the open-file cache and the output queues sending it. */
#ifndef HY_CORE_FILE_H
#define HY_CORE_FILE_H

#include <errno.h>
#include <stdint.h>
#include <sys/types.h>
#include <unistd.h>
#include "hayate.h"
#include "types.h"

struct hy_file {
    int fd;          /* owned; closed when the last reference goes */
    unsigned refs;
    int64_t size;
    int64_t mtime;
    int64_t mtime_nsec; /* st_mtim.tv_nsec: with ctime_ns, tells a rewrite within the same second */
    int64_t ctime_ns;   /* st_ctim in ns: any write, truncate, chmod or chown moves it */
    dev_t dev;
    ino_t ino;
    bool is_dir;
    char *data;      /* owned, optional: the whole content of a small file, kept by the open-file cache */
    void (*on_free)(hy_file_t *f); /* NULL: close + free() */
};

static inline hy_file_t *hy_file_ref(hy_file_t *f)
{
    f->refs++;
    return f;
}
/** Drop a reference; at zero, on_free (or close + free). */
void hy_file_unref(hy_file_t *f);

/** write(2) until all n bytes are out (EINTR retried); false on an error or a write of 0 (errno tells). For the
 *  temp and cache files the workers write, which are regular files: no EAGAIN. */
static inline bool hy_write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n > 0) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        c += (size_t)w;
        n -= (size_t)w;
    }
    return true;
}
/** Read exactly n bytes at off (pread, EINTR retried): false on an error or a short file. */
bool hy_file_read_at(hy_file_t *f, int64_t off, void *dst, size_t n);

#endif
