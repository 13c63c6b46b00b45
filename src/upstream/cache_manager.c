/* cache_manager.c — the cache manager (see cache.h): worker 0 walks each *_cache_path on a timer of its loop.
 * A pass visits the path's levels a bounded number of entries per tick (the walk's directories stay open between
 * ticks), removing what inactive= condemns and counting the rest; at the pass's end, above max_size= the oldest
 * entries it noted (at most CAND_MAX, the least recently used) go until the total is under it. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include "cache.h"
#include "../conf/cycle.h"
#include "../conf/zone.h"
#include "../core/clock.h"
#include "../core/log.h"

#define EXAMINE_PER_TICK 500  /* directory entries looked at per tick */
#define REMOVE_PER_TICK 100   /* files removed per tick (nginx's manager_files default) */
#define TICK_BUDGET_MS 20     /* a tick stops after this long (the worker serves requests meanwhile) */
#define SLEEP_MS 50           /* between ticks of a pass (nginx's manager_sleep default) */
#define CAND_MAX 256          /* LRU candidates noted per pass */
#define LOCK_KEEP_MS 60000    /* a ".lock" file younger than max(this, inactive) is kept */

typedef struct cand {
    int64_t mtime_ns;
    int64_t size;
    char rel[48]; /* "c/29/<md5>" */
} cand_t;

typedef struct mgr {
    const hy_ucache_path_t *cp;
    hy_timer_t timer;
    int nlevels;
    DIR *dirs[4];   /* the walk: dirs[0] the path, dirs[d] a directory of level d */
    int depth;      /* -1: no pass under way */
    char rel[48];   /* the relative path of dirs[depth] ("" at the top) */
    size_t rel_len[4];
    int64_t total;  /* disk bytes of the entries this pass counted */
    cand_t *cands;  /* a max-heap on mtime during the pass; sorted ascending while evicting */
    size_t ncand, evict_ix;
    bool evicting;
    struct mgr *next;
} mgr_t;

static mgr_t *mgrs;

static int64_t wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static uint64_t interval_ms(const mgr_t *m)
{
    int64_t i = m->cp->inactive_ms;
    return (uint64_t)(i < 1000 ? 1000 : i > 10000 ? 10000 : i);
}

static bool all_hex(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return false;
    return true;
}

static void walk_close(mgr_t *m)
{
    for (int d = 0; d <= m->depth && d < 4; d++)
        if (m->dirs[d])
            closedir(m->dirs[d]);
    memset(m->dirs, 0, sizeof(m->dirs));
    m->depth = -1;
}

static void cand_swap(cand_t *a, cand_t *b)
{
    cand_t t = *a;
    *a = *b;
    *b = t;
}

/* Keep the CAND_MAX oldest entries: a max-heap whose root is the newest of them. */
static void cand_note(mgr_t *m, int64_t mtime_ns, int64_t size, const char *rel)
{
    if (m->cands == NULL)
        return;
    size_t i;
    if (m->ncand < CAND_MAX) {
        i = m->ncand++;
        m->cands[i] = (cand_t){mtime_ns, size, ""};
        memcpy(m->cands[i].rel, rel, strlen(rel) + 1);
        while (i > 0 && m->cands[(i - 1) / 2].mtime_ns < m->cands[i].mtime_ns) {
            cand_swap(&m->cands[(i - 1) / 2], &m->cands[i]);
            i = (i - 1) / 2;
        }
        return;
    }
    if (mtime_ns >= m->cands[0].mtime_ns)
        return;
    m->cands[0] = (cand_t){mtime_ns, size, ""};
    memcpy(m->cands[0].rel, rel, strlen(rel) + 1);
    i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, big = i;
        if (l < m->ncand && m->cands[l].mtime_ns > m->cands[big].mtime_ns)
            big = l;
        if (r < m->ncand && m->cands[r].mtime_ns > m->cands[big].mtime_ns)
            big = r;
        if (big == i)
            break;
        cand_swap(&m->cands[i], &m->cands[big]);
        i = big;
    }
}

static int cand_cmp(const void *a, const void *b)
{
    int64_t x = ((const cand_t *)a)->mtime_ns, y = ((const cand_t *)b)->mtime_ns;
    return x < y ? -1 : x > y;
}

static void remove_at(mgr_t *m, int dfd, const char *name)
{
    if (unlinkat(dfd, name, 0) != 0 && errno != ENOENT)
        hy_log(HY_LOG_CRIT, "unlink() \"%.*s/%s%s\" failed (%d: %s)", (int)m->cp->dir.len, m->cp->dir.ptr, m->rel,
               name, errno, strerror(errno));
}

/* A file of a leaf directory: 1 removed, 0 kept or not ours. */
static int leaf_file(mgr_t *m, int dfd, const char *name, int64_t now_ns)
{
    size_t n = strlen(name);
    if (n < 32 || !all_hex(name, 32))
        return 0;
    struct stat st;
    if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
        return 0;
    int64_t mt = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    int64_t age_ms = (now_ns - mt) / 1000000, inactive = m->cp->inactive_ms;
    if (n == 32) { /* an entry */
        if (age_ms > inactive) {
            remove_at(m, dfd, name);
            return 1;
        }
        int64_t size = (int64_t)st.st_blocks * 512;
        m->total += size;
        if (m->cp->max_size >= 0 && m->rel_len[m->depth] + n < sizeof(m->rel)) {
            char rel[48];
            memcpy(rel, m->rel, m->rel_len[m->depth]);
            memcpy(rel + m->rel_len[m->depth], name, n + 1);
            cand_note(m, mt, size, rel);
        }
        return 0;
    }
    if (strcmp(name + 32, ".lock") == 0) { /* a lock nobody released (its holder died) */
        if (age_ms > (inactive > LOCK_KEEP_MS ? inactive : LOCK_KEEP_MS)) {
            remove_at(m, dfd, name);
            return 1;
        }
        return 0;
    }
    if (name[32] == '.') { /* "<md5>.<pid>.<n>": being written, unless its writer is gone */
        char *e;
        long pid = strtol(name + 33, &e, 10);
        if (pid > 0 && *e == '.' && age_ms > 1000 && kill((pid_t)pid, 0) != 0 && errno == ESRCH) {
            remove_at(m, dfd, name);
            return 1;
        }
    }
    return 0;
}

/* Go on with the pass: true when it ended. */
static bool walk(mgr_t *m)
{
    int64_t now_ns = wall_ns();
    uint64_t start = mono_ms();
    int examined = 0, removed = 0;
    if (m->depth < 0) {
        char *dir = hy_strndup(m->cp->dir.ptr, m->cp->dir.len);
        m->dirs[0] = opendir(dir);
        free(dir);
        if (m->dirs[0] == NULL)
            return true; /* nothing stored yet */
        m->depth = 0;
        m->rel[0] = '\0';
        m->rel_len[0] = 0;
        m->total = 0;
        m->ncand = 0;
    }
    while (m->depth >= 0) {
        if (examined >= EXAMINE_PER_TICK || removed >= REMOVE_PER_TICK || mono_ms() - start >= TICK_BUDGET_MS)
            return false;
        DIR *d = m->dirs[m->depth];
        errno = 0;
        struct dirent *de = readdir(d);
        if (de == NULL) {
            closedir(d);
            m->dirs[m->depth] = NULL;
            m->depth--;
            continue;
        }
        examined++;
        const char *name = de->d_name;
        if (m->depth < m->nlevels) { /* a level's directory: its name has that level's hex digits */
            size_t want = (size_t)m->cp->levels[m->depth], n = strlen(name);
            if (n != want || !all_hex(name, n) || (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN))
                continue;
            int fd = openat(dirfd(d), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            DIR *sub = fd >= 0 ? fdopendir(fd) : NULL;
            if (sub == NULL) {
                if (fd >= 0)
                    close(fd);
                continue;
            }
            size_t at = m->rel_len[m->depth];
            memcpy(m->rel + at, name, n);
            m->rel[at + n] = '/';
            m->rel[at + n + 1] = '\0';
            m->depth++;
            m->dirs[m->depth] = sub;
            m->rel_len[m->depth] = at + n + 1;
            continue;
        }
        m->rel[m->rel_len[m->depth]] = '\0';
        removed += leaf_file(m, dirfd(d), name, now_ns);
    }
    return true;
}

/* Remove the oldest noted entries until the total is under max_size: true when done (or nothing left to try). */
static bool evict(mgr_t *m)
{
    size_t dl = m->cp->dir.len;
    int removed = 0;
    while (m->evict_ix < m->ncand && m->total > m->cp->max_size) {
        if (removed >= REMOVE_PER_TICK)
            return false;
        cand_t *c = &m->cands[m->evict_ix++];
        char path[4096];
        if (dl + 1 + strlen(c->rel) + 1 > sizeof(path))
            continue;
        memcpy(path, m->cp->dir.ptr, dl);
        path[dl] = '/';
        strcpy(path + dl + 1, c->rel);
        struct stat st;
        if (stat(path, &st) != 0)
            continue;
        if ((int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec != c->mtime_ns)
            continue; /* used since the pass saw it (or replaced) */
        if (unlink(path) == 0) {
            m->total -= c->size;
            removed++;
        }
    }
    return true;
}

static void on_tick(hy_timer_t *t)
{
    mgr_t *m = t->data;
    hy_clock_update();
    if (m->evicting) {
        if (!evict(m)) {
            hy_timer_link(hy_worker_loop, &m->timer, SLEEP_MS);
            return;
        }
        m->evicting = false;
        /* still above: the pass noted too few; another pass at once */
        hy_timer_link(hy_worker_loop, &m->timer, m->total > m->cp->max_size && m->evict_ix >= CAND_MAX
                                                     ? SLEEP_MS
                                                     : interval_ms(m));
        return;
    }
    if (!walk(m)) {
        hy_timer_link(hy_worker_loop, &m->timer, SLEEP_MS);
        return;
    }
    if (m->cp->max_size >= 0 && m->total > m->cp->max_size && m->ncand > 0) {
        qsort(m->cands, m->ncand, sizeof(cand_t), cand_cmp);
        m->evict_ix = 0;
        m->evicting = true;
        hy_timer_link(hy_worker_loop, &m->timer, 0);
        return;
    }
    hy_timer_link(hy_worker_loop, &m->timer, interval_ms(m));
}

static void flush_worker(hy_cycle_t *cycle, bool reopen)
{
    (void)cycle;
    if (reopen)
        return;
    while (mgrs) {
        mgr_t *m = mgrs;
        mgrs = m->next;
        if (hy_worker_loop)
            hy_timer_unlink(hy_worker_loop, &m->timer);
        walk_close(m);
        free(m->cands);
        free(m);
    }
}

static int init_worker(hy_cycle_t *cycle)
{
    flush_worker(cycle, false);
    if (hy_worker_slot != 0 || cycle->zones == NULL || hy_worker_loop == NULL)
        return 0;
    hy_zone_t **zs = cycle->zones->elts;
    for (size_t i = 0; i < cycle->zones->nelts; i++) {
        const hy_ucache_path_t *cp = hy_ucache__zone_path(zs[i]);
        if (cp == NULL)
            continue;
        mgr_t *m = hy_calloc(sizeof(*m));
        m->cp = cp;
        m->depth = -1;
        while (m->nlevels < 3 && cp->levels[m->nlevels])
            m->nlevels++;
        if (cp->max_size >= 0)
            m->cands = hy_calloc(CAND_MAX * sizeof(cand_t));
        m->timer.cb = on_tick;
        m->timer.data = m;
        m->next = mgrs;
        mgrs = m;
        hy_timer_link(hy_worker_loop, &m->timer, interval_ms(m));
    }
    return 0;
}

hy_module_t hy_http_upstream_cache_manager_module = {
    .name = "http_upstream_cache_manager",
    .init_worker = init_worker,
    .flush_worker = flush_worker,
};
