/* loop.c — one readable loop. Iteration: apply interest changes, epoll_wait (timeout = next timer, or 0 if
 * deferred work or pending ios are queued), update the clock, call back the edge-triggered ios left ready and
 * wanted by the last iteration (pending), dispatch I/O events, run timers, run deferred callbacks (where writes are
 * coalesced, as Redis's beforeSleep), then free objects closed during the iteration. */
#include <errno.h>
#include <string.h>
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/epoll.h>
#include "loop.h"
#include "../core/clock.h"
#include "../core/mem.h"
#include "../core/buf.h"

#define REGISTERED 0x80u
#define REG_EDGE 0x40u
#define REG_OUT 0x20u /* edge-triggered and EPOLLOUT registered */
#define MAX_EVENTS 512
#define MAX_SPARE 256 /* drained free-later nodes kept for reuse */

hy_loop_t *hy_worker_loop;
size_t hy_worker_slot;

struct hy_free_later {
    struct hy_free_later *next;
    void (*fn)(void *);
    void *arg;
};

int hy_loop_init(hy_loop_t *loop)
{
    memset(loop, 0, sizeof(*loop));
    loop->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (loop->epfd < 0)
        return -errno;
    hy_clock_update();
    loop->wheel_at = hy_clock_now_ms();
    loop->defer_tail = &loop->defer_head;
    return 0;
}

void hy_loop_destroy(hy_loop_t *loop)
{
    if (loop->epfd >= 0)
        close(loop->epfd);
    loop->epfd = -1;
    while (loop->spare) {
        struct hy_free_later *f = loop->spare;
        loop->spare = f->next;
        free(f);
    }
    loop->num_spare = 0;
}

void hy_io_init(hy_io_t *io, int fd, hy_io_cb cb, void *data)
{
    memset(io, 0, sizeof(*io));
    io->fd = fd;
    io->cb = cb;
    io->data = data;
}

static void mark_dirty(hy_loop_t *loop, hy_io_t *io)
{
    if (!io->dirty) {
        io->dirty = true;
        io->_next_dirty = loop->dirty;
        loop->dirty = io;
    }
}

static void mark_pending(hy_loop_t *loop, hy_io_t *io)
{
    if (!io->pending) { /* on either list already: it is called back soon enough */
        io->pending = 1;
        io->_next_pending = loop->pending;
        loop->pending = io;
    }
}

static void unlink_from(hy_io_t **list, hy_io_t *io, size_t next_off)
{
    for (hy_io_t **p = list; *p; p = (hy_io_t **)((char *)*p + next_off))
        if (*p == io) {
            *p = *(hy_io_t **)((char *)io + next_off);
            return;
        }
}

void hy_io_set(hy_loop_t *loop, hy_io_t *io, unsigned want)
{
    io->want = want;
    if (io->edge) {
        if ((io->registered & (REGISTERED | REG_EDGE)) != (REGISTERED | REG_EDGE)) {
            if (want || (io->registered & REGISTERED))
                mark_dirty(loop, io); /* first registration, or a switch from level-triggered */
        } else if ((want & HY_EV_WRITE) && !(io->registered & REG_OUT)) {
            mark_dirty(loop, io); /* the first wish to write: EPOLLOUT joins the registration */
        } else if (want & io->ready) {
            mark_pending(loop, io);
        }
        return;
    }
    if ((io->registered & ~REGISTERED) != want)
        mark_dirty(loop, io);
}

static void io_forget(hy_loop_t *loop, hy_io_t *io, bool del)
{
    if (del && (io->registered & REGISTERED))
        epoll_ctl(loop->epfd, EPOLL_CTL_DEL, io->fd, NULL);
    io->registered = 0;
    io->want = 0;
    io->ready = 0;
    io->cb = NULL;
    if (io->dirty) {
        unlink_from(&loop->dirty, io, offsetof(hy_io_t, _next_dirty));
        io->dirty = false;
    }
    if (io->pending) {
        unlink_from(io->pending == 1 ? &loop->pending : &loop->pending_now, io, offsetof(hy_io_t, _next_pending));
        io->pending = 0;
    }
}

void hy_io_remove(hy_loop_t *loop, hy_io_t *io)
{
    io_forget(loop, io, true);
}

void hy_io_close(hy_loop_t *loop, hy_io_t *io)
{
    io_forget(loop, io, false); /* close(2) takes the fd out of the epoll set: no EPOLL_CTL_DEL needed */
    close(io->fd);
}

static void apply_changes(hy_loop_t *loop)
{
    while (loop->dirty) {
        hy_io_t *io = loop->dirty;
        loop->dirty = io->_next_dirty;
        io->dirty = false;
        struct epoll_event ev = {.events = 0, .data.ptr = io};
        int op = (io->registered & REGISTERED) ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
        if (io->edge) {
            bool out = io->want & HY_EV_WRITE; /* REG_OUT is only ever set on an edge registration */
            if ((io->registered & (REGISTERED | REG_EDGE)) == (REGISTERED | REG_EDGE)) {
                if (!out || (io->registered & REG_OUT))
                    continue;
                /* EPOLLOUT added: MOD reports what is ready now; what `ready` knew of reading stays */
                ev.events = EPOLLIN | EPOLLRDHUP | EPOLLOUT | EPOLLET;
                epoll_ctl(loop->epfd, EPOLL_CTL_MOD, io->fd, &ev);
                io->registered |= REG_OUT;
                continue;
            }
            /* reading always, writing once wanted: ADD and MOD report what is ready now, so nothing is missed */
            ev.events = EPOLLIN | EPOLLRDHUP | EPOLLET | (out ? EPOLLOUT : 0);
            io->ready = 0;
            if (epoll_ctl(loop->epfd, op, io->fd, &ev) != 0 && op == EPOLL_CTL_MOD && errno == ENOENT)
                epoll_ctl(loop->epfd, EPOLL_CTL_ADD, io->fd, &ev);
            io->registered = REGISTERED | REG_EDGE | (out ? REG_OUT : 0);
            continue;
        }
        unsigned have = io->registered & ~(REGISTERED | REG_EDGE | REG_OUT);
        if (have == io->want && !(io->registered & REG_EDGE))
            continue;
        /* Dropping only READ is deferred: a socket usually wants it back soon (a proxied request waits on its
         * upstream, then reads the next request), which would cost two epoll_ctl per request. If readiness
         * comes while it is not wanted, the event loop disarms it then (at most one extra wake-up). */
        if (io->registered == (have | REGISTERED) && (have & ~io->want) == HY_EV_READ && (io->want & ~have) == 0)
            continue;
        if (io->want & HY_EV_READ)
            ev.events |= EPOLLIN | EPOLLRDHUP;
        if (io->want & HY_EV_WRITE)
            ev.events |= EPOLLOUT;
        if (epoll_ctl(loop->epfd, op, io->fd, &ev) != 0 && op == EPOLL_CTL_MOD && errno == ENOENT)
            epoll_ctl(loop->epfd, EPOLL_CTL_ADD, io->fd, &ev);
        io->registered = io->want | REGISTERED;
        io->ready = 0;
    }
}

/* ---- timer wheel: HY_WHEEL_LEVELS levels of 64 slots, 1 ms ticks; level l slot covers 64^l ms ---- */

/* Put t at the head of wheel[level][slot] and mark the slot occupied. */
static void link_slot(hy_loop_t *loop, int level, size_t slot, hy_timer_t *t)
{
    hy_timer_t **head = &loop->wheel[level][slot];
    t->_next = *head;
    if (*head)
        (*head)->_pprev = &t->_next;
    *head = t;
    t->_pprev = head;
    loop->occupied[level] |= (uint64_t)1 << slot;
}

static void wheel_insert(hy_loop_t *loop, hy_timer_t *t)
{
    uint64_t at = t->expire_at <= loop->wheel_at ? loop->wheel_at + 1 : t->expire_at;
    uint64_t diff = at ^ loop->wheel_at;
    int level = 0;
    while (level < HY_WHEEL_LEVELS - 1 && (diff >> (HY_WHEEL_BITS * (level + 1))) != 0)
        level++;
    uint64_t max_span = (uint64_t)1 << (HY_WHEEL_BITS * HY_WHEEL_LEVELS);
    if (at - loop->wheel_at >= max_span) /* far future: park in the last level; rechecked when it fires */
        at = loop->wheel_at + max_span - 1;
    link_slot(loop, level, (size_t)(at >> (HY_WHEEL_BITS * level)) & (HY_WHEEL_SLOTS - 1), t);
}

void hy_timer_link(hy_loop_t *loop, hy_timer_t *t, uint64_t delay_ms)
{
    if (t->_pprev)
        hy_timer_unlink(loop, t);
    t->expire_at = hy_clock_now_ms() + delay_ms;
    if (t->expire_at <= loop->wheel_at)
        t->expire_at = loop->wheel_at + 1; /* the current tick has run: the next one is the earliest */
    wheel_insert(loop, t);
    loop->num_timers++;
}

void hy_timer_unlink(hy_loop_t *loop, hy_timer_t *t)
{
    if (!t->_pprev)
        return;
    *t->_pprev = t->_next;
    if (t->_next)
        t->_next->_pprev = t->_pprev;
    t->_next = NULL;
    t->_pprev = NULL;
    loop->num_timers--;
}

static void cascade(hy_loop_t *loop, int level, size_t slot)
{
    hy_timer_t *t = loop->wheel[level][slot];
    loop->wheel[level][slot] = NULL;
    loop->occupied[level] &= ~((uint64_t)1 << slot);
    while (t) {
        hy_timer_t *next = t->_next;
        if (t->expire_at <= loop->wheel_at) /* due on this very tick, whose slot has not run yet */
            link_slot(loop, 0, (size_t)loop->wheel_at & (HY_WHEEL_SLOTS - 1), t);
        else
            wheel_insert(loop, t);
        t = next;
    }
}

static void run_timers(hy_loop_t *loop, uint64_t now)
{
    if (loop->num_timers == 0) {
        loop->wheel_at = now;
        return;
    }
    while (loop->wheel_at < now) {
        uint64_t at = ++loop->wheel_at;
        for (int l = 1; l < HY_WHEEL_LEVELS; l++) {
            if ((at & (((uint64_t)1 << (HY_WHEEL_BITS * l)) - 1)) != 0)
                break;
            cascade(loop, l, (size_t)(at >> (HY_WHEEL_BITS * l)) & (HY_WHEEL_SLOTS - 1));
        }
        hy_timer_t **slot = &loop->wheel[0][at & (HY_WHEEL_SLOTS - 1)];
        while (*slot) {
            hy_timer_t *t = *slot;
            hy_timer_unlink(loop, t);
            if (t->expire_at > at) { /* parked far-future timer */
                wheel_insert(loop, t);
                loop->num_timers++;
                continue;
            }
            t->cb(t);
        }
        if (loop->num_timers == 0) {
            loop->wheel_at = now;
            return;
        }
    }
}

/* The lowest non-empty slot of level `l` among the candidate bits `cand` (a subset of loop->occupied[l]); -1 when
 * none. The bits of slots found empty are cleared on the way (unlinking a timer leaves its slot's bit set). */
static int first_live(hy_loop_t *loop, int l, uint64_t cand)
{
    while (cand) {
        int s = __builtin_ctzll(cand);
        if (loop->wheel[l][s])
            return s;
        loop->occupied[l] &= ~((uint64_t)1 << s);
        cand &= cand - 1;
    }
    return -1;
}

int hy_loop_next_timeout(hy_loop_t *loop)
{
    if (loop->num_timers == 0)
        return -1;
    uint64_t at = loop->wheel_at;
    for (int l = 0; l < HY_WHEEL_LEVELS; l++) {
        unsigned shift = (unsigned)(HY_WHEEL_BITS * l);
        unsigned cur = (unsigned)(at >> shift) & (HY_WHEEL_SLOTS - 1);
        /* the slots after the current one, to the level's end; from its start again only on the last level (the
         * next level holds what comes after a lower level's end) or when the current slot is the last one */
        uint64_t occ = loop->occupied[l];
        uint64_t after = cur == HY_WHEEL_SLOTS - 1 ? 0 : occ & (~(uint64_t)0 << (cur + 1));
        uint64_t wrap = l + 1 == HY_WHEEL_LEVELS || cur == HY_WHEEL_SLOTS - 1
                            ? occ & (cur == HY_WHEEL_SLOTS - 1 ? ~(uint64_t)0 : ((uint64_t)2 << cur) - 1)
                            : 0;
        int s = first_live(loop, l, after);
        unsigned dist = 0;
        if (s >= 0)
            dist = (unsigned)s - cur;
        else if ((s = first_live(loop, l, wrap)) >= 0)
            dist = (unsigned)s + HY_WHEEL_SLOTS - cur;
        if (s >= 0) {
            uint64_t slot_start = ((at >> shift) + dist) << shift;
            uint64_t now = hy_clock_now_ms();
            return slot_start <= now ? 0 : (int)HY_MIN(slot_start - now, (uint64_t)INT32_MAX);
        }
    }
    return 1000;
}

void hy_defer(hy_loop_t *loop, hy_defer_t *d)
{
    if (d->linked)
        return;
    d->linked = true;
    d->_next = NULL;
    *loop->defer_tail = d;
    loop->defer_tail = &d->_next;
}

void hy_loop_free_later(hy_loop_t *loop, void (*fn)(void *), void *arg)
{
    struct hy_free_later *f = loop->spare; /* a connection per request frees a few objects per request */
    if (f) {
        loop->spare = f->next;
        loop->num_spare--;
    } else {
        f = hy_alloc(sizeof(*f));
    }
    f->fn = fn;
    f->arg = arg;
    f->next = loop->free_later;
    loop->free_later = f;
}

static void run_defer(hy_loop_t *loop)
{
    /* callbacks may defer again; those run in the next round of this same drain, bounded to avoid starvation */
    for (int round = 0; round < 16 && loop->defer_head; round++) {
        hy_defer_t *d = loop->defer_head;
        loop->defer_head = NULL;
        loop->defer_tail = &loop->defer_head;
        while (d) {
            hy_defer_t *next = d->_next;
            d->linked = false;
            d->cb(d);
            d = next;
        }
    }
}

/* Memory back to the system after a burst of closes (issue 17): once 1 MiB of arenas and buffer blocks was
 * freed, the loop waits one more second (the burst may go on), then frees the recycled buffer blocks and the
 * cached request arenas and trims the heap, so RSS follows the live connection count rather than the peak. The
 * heap is per process, as is this. */
#define TRIM_AFTER_BYTES ((size_t)1 << 20)
#define TRIM_DELAY_MS 1000
static uint64_t trim_at_ms; /* 0: no trim pending */

static void maybe_trim(uint64_t now)
{
    if (trim_at_ms == 0) {
        if (hy_mem_released_bytes() >= TRIM_AFTER_BYTES)
            trim_at_ms = now + TRIM_DELAY_MS;
    } else if (now >= trim_at_ms) {
        trim_at_ms = 0;
        hy_buf_trim();
        hy_pool_cache_trim();
        hy_mem_trim();
    }
}

/* Edge-triggered: call back for what is ready and wanted; if the callback left some of it (a read budget spent),
 * the io is called again in the next iteration, as a level-triggered one would be woken. */
static void dispatch_edge(hy_loop_t *loop, hy_io_t *io, unsigned extra)
{
    unsigned rev = (io->ready & io->want) | extra;
    if (rev == 0)
        return;
    io->cb(io, rev);
    if (io->cb != NULL && (io->ready & io->want) && (io->registered & REG_EDGE) && io->edge)
        mark_pending(loop, io);
}

int hy_loop_run_once(hy_loop_t *loop, int max_wait_ms)
{
    struct epoll_event events[MAX_EVENTS];
    apply_changes(loop);
    int timeout = loop->defer_head || loop->pending ? 0 : hy_loop_next_timeout(loop);
    if (trim_at_ms != 0) {
        uint64_t now = hy_clock_now_ms();
        int until_trim = trim_at_ms > now ? (int)(trim_at_ms - now) : 0;
        if (timeout < 0 || timeout > until_trim)
            timeout = until_trim;
    }
    if (max_wait_ms >= 0 && (timeout < 0 || timeout > max_wait_ms))
        timeout = max_wait_ms;
    int n = epoll_wait(loop->epfd, events, MAX_EVENTS, timeout);
    int err = n < 0 ? errno : 0;
    hy_clock_update();
    loop->pending_now = loop->pending; /* those marked until now; the events below may mark more, for next time */
    loop->pending = NULL;
    for (hy_io_t *io = loop->pending_now; io; io = io->_next_pending)
        io->pending = 2;
    /* first what was known ready before this wait, as level-triggering would list it first: an upstream
     * connection whose backend's FIN came with the response is seen closed before a new request may pick it */
    while (loop->pending_now) { /* io_forget unlinks a closed io from this list */
        hy_io_t *io = loop->pending_now;
        loop->pending_now = io->_next_pending;
        io->pending = 0;
        dispatch_edge(loop, io, 0);
    }
    for (int i = 0; i < n; i++) {
        hy_io_t *io = events[i].data.ptr;
        if (io->cb == NULL)
            continue;
        unsigned rev = 0;
        uint32_t e = events[i].events;
        if (e & (EPOLLIN | EPOLLRDHUP | EPOLLHUP))
            rev |= HY_EV_READ;
        if (e & EPOLLOUT)
            rev |= HY_EV_WRITE;
        if (io->registered & REG_EDGE) { /* after a hang-up or an error, reads and writes return at once */
            io->ready |= rev | ((e & (EPOLLERR | EPOLLHUP)) ? HY_EV_READ | HY_EV_WRITE : 0) |
                         ((e & (EPOLLRDHUP | EPOLLERR | EPOLLHUP)) ? HY_EV_PEER_DONE : 0);
            dispatch_edge(loop, io, (e & EPOLLERR) ? HY_EV_ERROR : 0);
            continue;
        }
        if (e & EPOLLERR)
            rev |= HY_EV_ERROR | (io->want & (HY_EV_READ | HY_EV_WRITE));
        if ((rev & HY_EV_READ) && !(io->want & HY_EV_READ)) { /* a lazily kept READ registration: drop it now */
            struct epoll_event ev = {.events = (io->want & HY_EV_WRITE) ? EPOLLOUT : 0, .data.ptr = io};
            epoll_ctl(loop->epfd, EPOLL_CTL_MOD, io->fd, &ev);
            io->registered = io->want | REGISTERED;
        }
        rev &= io->want | HY_EV_ERROR;
        if (rev)
            io->cb(io, rev);
    }
    run_timers(loop, hy_clock_now_ms());
    run_defer(loop);
    while (loop->free_later) {
        struct hy_free_later *f = loop->free_later;
        loop->free_later = f->next;
        f->fn(f->arg);
        if (loop->num_spare < MAX_SPARE) {
            f->next = loop->spare;
            loop->spare = f;
            loop->num_spare++;
        } else {
            free(f);
        }
    }
    maybe_trim(hy_clock_now_ms());
    return err && err != EINTR ? -err : 0;
}
