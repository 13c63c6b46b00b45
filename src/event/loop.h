/* loop.h — the event loop: epoll, batched interest changes, a timer wheel, a defer queue, deferred frees. One
 * loop per worker; nothing here is thread-safe.
 *
 * Two ways to watch an fd. Level-triggered (the default): the loop keeps epoll's interest equal to `want`.
 * Edge-triggered (`io->edge`, set by the owner before hy_io_set): the fd is registered once for reading, and for
 * writing too from the first time the owner wants to write (one EPOLL_CTL_MOD then, if it did not at the
 * registration: a socket whose writes never fill its buffer, as a fresh upstream connection that sent its request
 * before it was registered, is not reported writable for nothing). `io->ready` remembers what epoll reported, and
 * the owner takes a bit back with hy_io_drained() when a read or write finds the kernel's queue empty or full
 * (EAGAIN, or a short transfer on a stream socket). The loop calls back for `ready & want`: on an edge, when
 * hy_io_set asks for a ready event, and again in the next iteration while a callback left `ready & want` set (a
 * read budget spent, a buffer full). So interest changes cost no epoll_ctl after the first wish to write, and
 * epoll does not re-poll every reported fd on the next wait as it does for level-triggered ones. An owner that
 * never calls hy_io_drained while it wants the event is called back every iteration. Owners write without asking:
 * WRITE is wanted only after a write found the buffer full (or a connect is in progress). */
#ifndef HY_EVENT_LOOP_H
#define HY_EVENT_LOOP_H

#include <stdint.h>
#include <stdbool.h>
#include "../core/hayate.h"
#include "../core/types.h"

#define HY_EV_READ 0x1u
#define HY_EV_WRITE 0x4u

typedef void (*hy_io_cb)(hy_io_t *io, unsigned revents); /* revents: HY_EV_* plus HY_EV_ERROR */
#define HY_EV_ERROR 0x8u

struct hy_io {
    int fd;
    unsigned want;       /* HY_EV_READ|HY_EV_WRITE wanted */
    unsigned registered; /* what epoll has; 0x80 bit = added, 0x40 = edge-triggered, 0x20 = edge with EPOLLOUT */
    unsigned ready;      /* edge-triggered: HY_EV_READ|HY_EV_WRITE reported and not drained yet */
    bool edge;           /* the owner wants edge-triggered watching (may change; applied before the next wait) */
    bool dirty;          /* on the change list */
    uint8_t pending;     /* 1: on the loop's pending list, 2: on the list this iteration is calling back */
    hy_io_t *_next_dirty;
    hy_io_t *_next_pending;
    hy_io_cb cb;         /* NULL after hy_io_close: stale events are skipped */
    void *data;
};

typedef void (*hy_timer_cb)(hy_timer_t *t);
struct hy_timer {
    hy_timer_t *_next, **_pprev; /* linked in a wheel slot when active */
    uint64_t expire_at;          /* monotonic ms */
    hy_timer_cb cb;
    void *data;
};

typedef void (*hy_defer_cb)(hy_defer_t *d);
struct hy_defer {
    hy_defer_t *_next;
    bool linked;
    hy_defer_cb cb;
    void *data;
};

#define HY_WHEEL_BITS 6
#define HY_WHEEL_SLOTS (1 << HY_WHEEL_BITS)
#define HY_WHEEL_LEVELS 4

struct hy_loop {
    int epfd;
    bool stop;
    hy_io_t *dirty;                                        /* change list, applied before epoll_wait */
    hy_io_t *pending;                                      /* edge-triggered ios to call back without an event */
    hy_io_t *pending_now;                                  /* the ones this iteration calls back */
    hy_timer_t *wheel[HY_WHEEL_LEVELS][HY_WHEEL_SLOTS];
    uint64_t occupied[HY_WHEEL_LEVELS];                    /* bit s: wheel[l][s] may be non-empty (set on link,
                                                              cleared lazily when a search finds the slot empty) */
    uint64_t wheel_at;                                     /* time the wheel has run up to */
    size_t num_timers;
    hy_defer_t *defer_head, **defer_tail;
    struct hy_free_later *free_later;                      /* owned list, drained at iteration end */
    struct hy_free_later *spare;                           /* drained nodes kept for reuse (at most 256) */
    unsigned num_spare;
};

/** The worker's loop (set by the process layer), for modules that need timers (e.g. log flush). */
extern hy_loop_t *hy_worker_loop;
/** The worker's index in its generation (0 .. worker_processes-1; 0 in the single process), set by the process
 * layer: a task one worker does for all (the cache manager) runs where it is 0. */
extern size_t hy_worker_slot;

/** Initialise (epoll_create1). 0 or -errno. */
int hy_loop_init(hy_loop_t *loop);
void hy_loop_destroy(hy_loop_t *loop);
/** One iteration; waits at most max_wait_ms (-1 = until an event or timer). 0 or -errno. */
int hy_loop_run_once(hy_loop_t *loop, int max_wait_ms);
/** Milliseconds until the start of the earliest wheel slot holding a timer (a lower bound of the nearest expiry:
 * the loop wakes at most early, never late); 0 when it is due, -1 with no timer. A few instructions whatever the
 * number of timers: each level keeps a bitmap of the slots that may be occupied. */
int hy_loop_next_timeout(hy_loop_t *loop);

void hy_io_init(hy_io_t *io, int fd, hy_io_cb cb, void *data);
/** Set the wanted events; applied in a batch before the next epoll_wait. Edge-triggered: no epoll change once
 * registered, but for the first wish to write when the registration had none (EPOLLOUT is added then); an event
 * wanted and already ready is called back in the next iteration. */
void hy_io_set(hy_loop_t *loop, hy_io_t *io, unsigned want);
/* in hy_io.ready: the peer's end was seen (EPOLLRDHUP, EPOLLHUP, EPOLLERR); no edge will come for it again */
#define HY_EV_PEER_DONE 0x10u

/** Edge-triggered ios: the kernel has no more of `ev` for now (HY_EV_READ: the receive queue is empty;
 * HY_EV_WRITE: the send buffer is full). The next edge sets it again. Once the peer's end was seen, READ stays
 * ready: a short read then leaves the end of the stream to read, and nothing would announce it again. No effect
 * on level-triggered ios. */
static inline void hy_io_drained(hy_io_t *io, unsigned ev)
{
    if (io->ready & HY_EV_PEER_DONE)
        ev &= ~HY_EV_READ;
    io->ready &= ~ev;
}
/** Forget the watcher (the caller closes the fd). Pending events of this iteration are dropped. */
void hy_io_remove(hy_loop_t *loop, hy_io_t *io);
/** Forget the watcher and close its fd (one syscall: the close removes it from epoll). The fd must not have
 * been duplicated. */
void hy_io_close(hy_loop_t *loop, hy_io_t *io);

/** Arm (or re-arm) a timer delay_ms from now. cb runs from the loop, once. */
void hy_timer_link(hy_loop_t *loop, hy_timer_t *t, uint64_t delay_ms);
void hy_timer_unlink(hy_loop_t *loop, hy_timer_t *t);
static inline bool hy_timer_is_linked(const hy_timer_t *t)
{
    return t->_pprev != NULL;
}

/** Queue cb to run after this iteration's I/O, before sleeping (once, even if deferred twice). */
void hy_defer(hy_loop_t *loop, hy_defer_t *d);
/** Run fn(arg) at the end of this iteration (objects whose watchers may still have queued events). The list's
 * nodes are kept for reuse once run (up to 256, freed by hy_loop_destroy): no malloc per call in steady state. */
void hy_loop_free_later(hy_loop_t *loop, void (*fn)(void *), void *arg);

#endif
