/* log_var_file.c — see log_var_file.h.
 *
 * nginx's open_file_cache rules as the log module uses them: a name not in the cache is opened; only when that
 * succeeds is it added (the least recently used entry goes first when the cache is full), so a failed open
 * caches nothing. Each use counts; from min_uses uses on the descriptor stays open. A kept descriptor is trusted
 * for `valid`, then the name is checked again (a file renamed or removed meanwhile is reopened by name), so
 * writing to the old file can go on for that long. Entries unused for `inactive` are closed. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "log_var_file.h"
#include "../core/file.h"
#include "../core/clock.h"

typedef struct vf_entry {
    char *path;
    int fd;           /* -1: not kept */
    unsigned uses;
    uint64_t used_ms; /* last use */
    uint64_t checked_ms;
    dev_t dev;
    ino_t ino;
    struct vf_entry *prev, *next; /* most recently used first */
} vf_entry_t;

struct hy_logvf_cache {
    size_t max, count;
    uint64_t inactive_ms, valid_ms;
    unsigned min_uses;
    vf_entry_t *head, *tail;
};

static int open_log(const char *path)
{
    return open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
}

static void unlink_entry(hy_logvf_cache_t *c, vf_entry_t *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else
        c->head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        c->tail = e->prev;
    e->prev = e->next = NULL;
}

static void push_front(hy_logvf_cache_t *c, vf_entry_t *e)
{
    e->next = c->head;
    e->prev = NULL;
    if (c->head)
        c->head->prev = e;
    c->head = e;
    if (c->tail == NULL)
        c->tail = e;
}

static void drop(hy_logvf_cache_t *c, vf_entry_t *e)
{
    unlink_entry(c, e);
    if (e->fd >= 0)
        close(e->fd);
    free(e->path);
    free(e);
    c->count--;
}

void hy_logvf_cache_flush(hy_logvf_cache_t *c)
{
    while (c && c->head)
        drop(c, c->head);
}

static void cache_cleanup(void *arg)
{
    hy_logvf_cache_flush(arg);
}

hy_logvf_cache_t *hy_logvf_cache_create(hy_pool_t *pool, size_t max, int64_t inactive_ms, int64_t valid_ms,
                                        unsigned min_uses)
{
    hy_logvf_cache_t *c = hy_pcalloc(pool, sizeof(*c));
    c->max = max;
    c->inactive_ms = (uint64_t)inactive_ms;
    c->valid_ms = (uint64_t)valid_ms;
    c->min_uses = min_uses ? min_uses : 1;
    hy_pool_on_clear(pool, cache_cleanup, c);
    return c;
}

static void keep(vf_entry_t *e, int fd, uint64_t now)
{
    struct stat st;
    e->fd = fd;
    e->checked_ms = now;
    if (fstat(fd, &st) == 0)
        e->dev = st.st_dev, e->ino = st.st_ino;
}

/* the kept descriptor still names the file (checked once `valid` has passed) */
static bool still_valid(hy_logvf_cache_t *c, vf_entry_t *e, uint64_t now)
{
    if (now - e->checked_ms < c->valid_ms)
        return true;
    struct stat st;
    if (stat(e->path, &st) != 0 || st.st_dev != e->dev || st.st_ino != e->ino)
        return false;
    e->checked_ms = now;
    return true;
}

int hy_logvf_write(hy_logvf_cache_t *c, const char *path, const char *line, size_t len)
{
    if (c == NULL) {
        int fd = open_log(path);
        if (fd < 0)
            return errno;
        (void)hy_write_all(fd, line, len); /* as nginx: a failed write loses the text */
        close(fd);
        return 0;
    }
    uint64_t now = hy_clock_now_ms();
    while (c->tail && now - c->tail->used_ms >= c->inactive_ms)
        drop(c, c->tail);
    vf_entry_t *e = c->head;
    while (e && strcmp(e->path, path) != 0)
        e = e->next;
    if (e) {
        unlink_entry(c, e);
        push_front(c, e);
        e->uses++;
        e->used_ms = now;
        if (e->fd >= 0 && !still_valid(c, e, now)) {
            close(e->fd);
            e->fd = -1;
        }
        if (e->fd >= 0) {
            (void)hy_write_all(e->fd, line, len);
            return 0;
        }
        int fd = open_log(path);
        if (fd < 0)
            return errno;
        (void)hy_write_all(fd, line, len);
        if (e->uses >= c->min_uses)
            keep(e, fd, now);
        else
            close(fd);
        return 0;
    }
    int fd = open_log(path);
    if (fd < 0)
        return errno;
    (void)hy_write_all(fd, line, len);
    if (c->max == 0) {
        close(fd);
        return 0;
    }
    if (c->count >= c->max && c->tail)
        drop(c, c->tail);
    e = hy_calloc(sizeof(*e));
    e->path = hy_strndup(path, strlen(path));
    e->fd = -1;
    e->uses = 1;
    e->used_ms = now;
    push_front(c, e);
    c->count++;
    if (e->uses >= c->min_uses)
        keep(e, fd, now);
    else
        close(fd);
    return 0;
}
