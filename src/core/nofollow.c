/* nofollow.c — component-by-component open for disable_symlinks (see nofollow.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "nofollow.h"

/* One component `name` under the directory at: with O_NOFOLLOW (a link refused: -ELOOP whatever the flags), or
 * following a link whose owner is the owner of what it points to. */
static int open_component(int at, const char *name, int mode, int flags)
{
    struct stat st;
    if (mode == HY_SYMLINKS_NOTOWNER) {
        struct stat lst;
        int fd = openat(at, name, flags);
        if (fd < 0)
            return -errno;
        if (fstat(fd, &st) != 0 || fstatat(at, name, &lst, AT_SYMLINK_NOFOLLOW) != 0) {
            int e = errno;
            close(fd);
            return -e;
        }
        if (S_ISLNK(lst.st_mode) && lst.st_uid != st.st_uid) {
            close(fd);
            return -ELOOP;
        }
        return fd;
    }
    /* a link as a directory component fails with ENOTDIR (O_DIRECTORY), as the last one with ELOOP: nginx's
     * errors too (404 and 403) */
    int fd = openat(at, name, flags | O_NOFOLLOW);
    if (fd < 0)
        return -errno;
    if ((flags & O_PATH) && fstat(fd, &st) == 0 && S_ISLNK(st.st_mode)) { /* O_PATH|O_NOFOLLOW opens the link */
        close(fd);
        return -ELOOP;
    }
    return fd;
}

int hy_open_nofollow(const char *path, size_t len, int mode, size_t from, int flags)
{
    flags |= O_CLOEXEC;
    if (mode == HY_SYMLINKS_OFF) {
        int fd = open(path, flags);
        return fd < 0 ? -errno : fd;
    }
    char buf[PATH_MAX];
    if (len >= sizeof(buf))
        return -ENAMETOOLONG;
    memcpy(buf, path, len);
    buf[len] = '\0';
    const int dflags = O_PATH | O_DIRECTORY;
    char *p = buf, *end = buf + len;
    int at = AT_FDCWD;
    if (from > 0 && from < len) { /* the prefix as it is, links followed */
        buf[from] = '\0';
        at = open(buf, dflags | O_CLOEXEC);
        buf[from] = '/';
        if (at < 0)
            return -errno;
        p = buf + from + 1;
    } else if (*p == '/') {
        at = open("/", dflags | O_CLOEXEC);
        if (at < 0)
            return -errno;
        p++;
    }
    int fd;
    for (;;) {
        char *slash = memchr(p, '/', (size_t)(end - p));
        if (slash == NULL)
            break;
        if (slash == p) { /* "//" */
            p++;
            continue;
        }
        *slash = '\0';
        fd = open_component(at, p, mode, dflags | O_CLOEXEC);
        if (at != AT_FDCWD)
            close(at);
        if (fd < 0)
            return fd;
        at = fd;
        p = slash + 1;
    }
    if (p == end) { /* a trailing '/': the last component, already opened as a directory, reopened with flags */
        fd = openat(at, ".", flags);
        if (fd < 0)
            fd = -errno;
    } else {
        fd = open_component(at, p, mode, flags);
    }
    if (at != AT_FDCWD)
        close(at);
    return fd;
}
