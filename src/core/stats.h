/* stats.h — the server's counters, shared by every process: one anonymous MAP_SHARED segment that the master
 * maps once (before its first fork) and keeps for its whole life, so counters survive reloads. Each worker
 * process owns one slot and is the only writer of it (plain loads and stores, no atomic read-modify-write, no
 * cache line shared with another worker on the hot path); a reader (stub_status, the metrics endpoint) sums a
 * field over the slots.
 *
 * Slots: the master hands each worker it forks a slot that no live process uses (hy_stats_attach in the child)
 * and calls hy_stats_release when it has reaped it. Counters stay in the slot (the next worker on it continues
 * them); gauges (active/reading/writing/waiting) are zeroed, since a dead process holds no connection. Without
 * a segment (unit tests, "-t") hy_stats_me points at a private slot and sums read nothing shared.
 *
 * Series (the extension point for modules' own counters): hy_stats_series(key, n) reserves n counters in every
 * slot's ext[] array under a key; the same key gets the same counters in every process and in every later
 * configuration generation, so a module's counters also survive reloads. Keys are registered under a robust
 * process-shared mutex (once per process and generation, from init_worker), never on the hot path. */
#ifndef HY_CORE_STATS_H
#define HY_CORE_STATS_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include "shm.h"

#define HY_STATS_MAX_SLOTS 1024  /* the master's limit on live workers (process/master.c MAX_WORKERS) */
#define HY_STATS_EXT 1024        /* ext[] counters per slot */
#define HY_STATS_MAX_SERIES 256  /* keys */
#define HY_STATS_KEY_MAX 128     /* bytes of a key, NUL included */
#define HY_STATS_SINK 0          /* ext[0..HY_STATS_SERIES_MAX_N-1]: where counters go when the table is full */
#define HY_STATS_SERIES_MAX_N 16 /* counters per key */
#define HY_STATS_BUCKETS 11      /* finite buckets of the request duration histogram (hy_stats_bucket_le) */

/** One process's counters. Only the owning process writes (hy_stats_add); anyone reads. */
typedef struct hy_stats_slot {
    /* counters */
    uint64_t accepted, handled, requests;
    uint64_t tls_handshakes, tls_resumed, tls_failed;
    uint64_t resp_bytes, dur_count, dur_sum_ms;
    uint64_t dur_buckets[HY_STATS_BUCKETS + 1]; /* per bucket (not cumulative); the last is above every bound */
    /* gauges (of the live process on this slot; zeroed when it is gone) */
    uint64_t active, reading, writing, waiting;
    uint64_t ext[HY_STATS_EXT];
} __attribute__((aligned(64))) hy_stats_slot_t;

/** Process-wide figures written by the master (or the single process). */
typedef struct hy_stats_info {
    uint64_t generation; /* configuration generation: 1 at start, +1 per successful reload */
    uint64_t reloads;    /* successful reloads */
    uint64_t workers;    /* worker processes of the current generation */
    int64_t start_time;  /* wall-clock seconds when the segment was made */
} hy_stats_info_t;

/** This process's slot: the shared one after hy_stats_attach, a private one before. Never NULL. */
extern hy_stats_slot_t *hy_stats_me;

/** Upper bounds of the duration buckets, in milliseconds, ascending (HY_STATS_BUCKETS of them). */
extern const uint32_t hy_stats_bucket_le_ms[HY_STATS_BUCKETS];

/** Map the segment (zeroed) unless this process already has one; info starts at generation 1 with `workers`.
 * 0, or a negative errno (no segment: counting goes on in the private slot). */
int hy_stats_create(uint64_t workers);
/** True when the segment exists. */
bool hy_stats_shared(void);
/** In a process that is about to serve (a forked worker, or the single process): make slot `ix` its own and
 * zero its gauges. No-op without a segment or for ix >= HY_STATS_MAX_SLOTS. */
void hy_stats_attach(size_t ix);
/** In the master, after the process on slot `ix` was reaped: zero its gauges (counters stay). */
void hy_stats_release(size_t ix);
/** The master (or single process) after a successful reload: generation and reloads +1, the new worker count. */
void hy_stats_reloaded(uint64_t workers);
/** A copy of the process-wide figures (zeros without a segment). */
hy_stats_info_t hy_stats_info(void);

/** Sum of the slot field at byte offset `off` (offsetof(hy_stats_slot_t, x)) over every slot ever used (just the
 * private slot without a segment). */
uint64_t hy_stats_sum(size_t off);
/** Sum of ext[ix] over every slot ever used. */
uint64_t hy_stats_sum_ext(uint32_t ix);
/** Largest ext[ix] over every slot ever used (a per-worker gauge read as "any worker": e.g. a time until which
 * some worker holds a peer down). */
uint64_t hy_stats_max_ext(uint32_t ix);

/** The first of `n` (1..HY_STATS_SERIES_MAX_N) ext[] counters kept under `key` (truncated to HY_STATS_KEY_MAX-1
 * bytes): registered on first use, the same index for the same key afterwards, in every process and generation
 * (a key registered again with another n keeps its first n: use the same n). HY_STATS_SINK when the table is
 * full, n is out of range, or there is no segment (the counters then count into a sink nobody reads). Takes a
 * process-shared lock: call it at init_worker time, not per request. */
uint32_t hy_stats_series(const char *key, uint32_t n);
/** The i-th registered series (registration order): true and its key and first counter, false past the end. The
 * key points into the segment and stays valid. */
bool hy_stats_series_at(uint32_t i, const char **key, uint32_t *base);

/* inline definitions */

/** Add v to one of this process's counters or gauges (v = (uint64_t)-1 decrements a gauge). Single writer: a
 * relaxed load and store, not an atomic read-modify-write. */
static inline void hy_stats_add(uint64_t *field, uint64_t v)
{
    __atomic_store_n(field, __atomic_load_n(field, __ATOMIC_RELAXED) + v, __ATOMIC_RELAXED);
}

/** Set one of this process's gauges (single writer). */
static inline void hy_stats_set(uint64_t *field, uint64_t v)
{
    __atomic_store_n(field, v, __ATOMIC_RELAXED);
}
/** Count a finished request's duration into this process's histogram. */
static inline void hy_stats_observe_ms(uint64_t ms)
{
    size_t i = 0;
    while (i < HY_STATS_BUCKETS && ms > hy_stats_bucket_le_ms[i])
        i++;
    hy_stats_add(&hy_stats_me->dur_buckets[i], 1);
    hy_stats_add(&hy_stats_me->dur_count, 1);
    hy_stats_add(&hy_stats_me->dur_sum_ms, ms);
}

#endif
