/* nofollow_test.c — hy_open_nofollow: links refused as the last component (-ELOOP) and as a directory on the way
 * (-ENOTDIR), followed with off, with if_not_owner only when owners match, and a from= prefix left unchecked. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "../harness.h"
#include "core/nofollow.h"

static char dir[64];

static int op(const char *rel, int mode, size_t from, int flags)
{
    char p[256];
    snprintf(p, sizeof(p), "%s%s", dir, rel);
    int fd = hy_open_nofollow(p, strlen(p), mode, from, flags);
    if (fd >= 0)
        close(fd);
    return fd >= 0 ? 0 : fd;
}

static void setup(void)
{
    strcpy(dir, "/tmp/hy-nofollow-XXXXXX");
    if (mkdtemp(dir) == NULL)
        abort();
    char p[256];
    snprintf(p, sizeof(p), "%s/sub", dir);
    mkdir(p, 0755);
    snprintf(p, sizeof(p), "%s/sub/f", dir);
    close(open(p, O_CREAT | O_WRONLY, 0644));
    snprintf(p, sizeof(p), "%s/link", dir);
    if (symlink("sub/f", p) != 0)
        abort();
    snprintf(p, sizeof(p), "%s/dlink", dir);
    if (symlink("sub", p) != 0)
        abort();
}

static void test_modes(void)
{
    is_int(op("/sub/f", HY_SYMLINKS_ON, 0, O_RDONLY), 0);
    is_int(op("/link", HY_SYMLINKS_OFF, 0, O_RDONLY), 0);
    is_int(op("/link", HY_SYMLINKS_ON, 0, O_RDONLY), -ELOOP);
    is_int(op("/link", HY_SYMLINKS_ON, 0, O_PATH), -ELOOP); /* O_PATH|O_NOFOLLOW would open the link itself */
    is_int(op("/dlink/f", HY_SYMLINKS_ON, 0, O_RDONLY), -ENOTDIR);
    is_int(op("/dlink/f", HY_SYMLINKS_OFF, 0, O_RDONLY), 0);
    is_int(op("/link", HY_SYMLINKS_NOTOWNER, 0, O_RDONLY), 0); /* same owner */
    is_int(op("/dlink/f", HY_SYMLINKS_NOTOWNER, 0, O_RDONLY), 0);
    is_int(op("/nope", HY_SYMLINKS_ON, 0, O_RDONLY), -ENOENT);
    is_int(op("//sub/./f", HY_SYMLINKS_ON, 0, O_RDONLY), 0);
    is_int(op("/sub/", HY_SYMLINKS_ON, 0, O_RDONLY), 0);           /* a trailing '/': the directory */
    is_int(op("/sub/f/", HY_SYMLINKS_ON, 0, O_RDONLY), -ENOTDIR);  /* a file with a trailing '/' */
}

static void test_from(void)
{
    size_t base = strlen(dir);
    is_int(op("/dlink/f", HY_SYMLINKS_ON, base + 6, O_RDONLY), 0); /* "<dir>/dlink" opened as it is */
    is_int(op("/dlink/f", HY_SYMLINKS_ON, base, O_RDONLY), -ENOTDIR);
}

static void test_owner(void)
{
    if (geteuid() != 0)
        return; /* needs chown */
    char p[256], l[256];
    snprintf(p, sizeof(p), "%s/sub/other", dir);
    close(open(p, O_CREAT | O_WRONLY, 0644));
    if (chown(p, 65534, 65534) != 0)
        return;
    snprintf(l, sizeof(l), "%s/olink", dir);
    if (symlink(p, l) != 0)
        abort();
    is_int(op("/olink", HY_SYMLINKS_NOTOWNER, 0, O_RDONLY), -ELOOP);
    is_int(op("/olink", HY_SYMLINKS_OFF, 0, O_RDONLY), 0);
}

int main(void)
{
    setup();
    subtest("modes", test_modes);
    subtest("from", test_from);
    subtest("owner", test_owner);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0)
        return 1;
    return done_testing();
}
