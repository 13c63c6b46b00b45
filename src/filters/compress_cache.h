/* compress_cache.h — the per-worker cache of compressed static files (hayate's own; nginx has none).
 *
 * An entry is the whole compressed body of one version of a file for one codec and level, keyed by the
 * file's identity (device, inode) and version (size, mtime and ctime in ns): a rewritten file has a new
 * version, and the stale entry is dropped on the next lookup. Entries are refcounted so the output queue can
 * send them without a copy while the LRU evicts; memory is bounded by `max_bytes` (payload + overhead).
 * A worker is single-threaded: no locking. */
#ifndef HY_HTTP_COMPRESS_CACHE_H
#define HY_HTTP_COMPRESS_CACHE_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

typedef struct hy_ccache hy_ccache_t;

typedef struct hy_ccache_key {
    uint64_t dev, ino;        /* identity */
    int64_t size, mtime_ns, ctime_ns; /* version */
    int codec, level;
} hy_ccache_key_t;

typedef struct hy_ccache_entry {
    const char *data;         /* the compressed bytes (owned by the entry) */
    size_t len;
    /* private: */
    struct hy_ccache_entry *hnext, *prev, *next;
    hy_ccache_t *cache;       /* NULL once evicted or the cache is gone */
    hy_ccache_key_t key;
    uint32_t hash;
    unsigned refs;            /* the cache's own reference + one per user */
} hy_ccache_entry_t;

typedef struct hy_ccache_stats {
    uint64_t hits, misses, stale, evictions, inserts;
    size_t bytes, entries;
} hy_ccache_stats_t;

/** A cache bounded to max_bytes (payload + per-entry overhead). */
hy_ccache_t *hy_ccache_create(size_t max_bytes);
/** Drop every entry (those still referenced live until released) and the cache. */
void hy_ccache_destroy(hy_ccache_t *c);
/** Change the bound (a reload); evicts least recently used entries until it holds. */
void hy_ccache_set_max(hy_ccache_t *c, size_t max_bytes);
/** Entry for key, most recently used now, with a new reference (release it), or NULL. An entry for the same
 * file, codec and level but another version is stale: it is dropped and NULL returned. */
hy_ccache_entry_t *hy_ccache_get(hy_ccache_t *c, const hy_ccache_key_t *key);
/** Insert data (malloc'd, ownership passes to the cache on success) for key, replacing any entry for the same
 * file/codec/level; evicts LRU entries to make room. Returns the entry with a reference for the caller, or
 * NULL (data not taken) when it cannot fit in max_bytes. */
hy_ccache_entry_t *hy_ccache_put(hy_ccache_t *c, const hy_ccache_key_t *key, char *data, size_t len);
/** Drop a reference (signature fits hy_outq_push_mem's release). */
void hy_ccache_release(void *entry);
/** Counters and current size. */
hy_ccache_stats_t hy_ccache_stats(const hy_ccache_t *c);

#endif
