/* nofollow.h — open a path refusing symbolic links in its components (nginx's disable_symlinks): the walk
 * opens one component at a time with openat(2) from the directory opened before it, so a link swapped in
 * between two checks cannot redirect the open. */
#ifndef HY_CORE_NOFOLLOW_H
#define HY_CORE_NOFOLLOW_H

#include <stddef.h>

enum { HY_SYMLINKS_OFF = 0, HY_SYMLINKS_ON, HY_SYMLINKS_NOTOWNER };

/** open(2) `path` (NUL-terminated, `len` bytes) with `flags` (O_CLOEXEC added) under `mode`: HY_SYMLINKS_OFF a
 * plain open; HY_SYMLINKS_ON no component may be a symbolic link; HY_SYMLINKS_NOTOWNER a link is followed only
 * when it and its target have the same owner. The first `from` bytes (a directory prefix of path; 0: none) are
 * opened as they are, links included. A path ending in '/' opens its last component as a directory. Returns the
 * fd, or -errno: a refused link is -ELOOP as the last component, -ENOTDIR as a directory one (as nginx: 403 and
 * 404), -ELOOP for if_not_owner's; an over-long path -ENAMETOOLONG. O_PATH in flags opens without
 * reading (a test of existence); a final link is then refused too. */
int hy_open_nofollow(const char *path, size_t len, int mode, size_t from, int flags);

#endif
