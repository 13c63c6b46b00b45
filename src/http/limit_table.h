/* limit_table.h — the table limit_req and limit_conn keep in their shared zone (conf/zone.h): a hash table of
 * keys (evaluated complex values, e.g. $binary_remote_addr) with a least-recently-used list, every node allocated
 * from the zone's slab, everything under the zone's lock. A node is this header, the owner's fixed-size payload,
 * then the key bytes.
 *
 * The zone's header (hy_ltable_t) also holds the zone's counters (`passed`, `delayed`, `rejected`), summed over
 * every worker since the zone was created (kept across reloads with the zone), for the metrics endpoint. */
#ifndef HY_HTTP_LIMIT_TABLE_H
#define HY_HTTP_LIMIT_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include "../core/slab.h"

typedef struct hy_lnode {
    struct hy_lnode *hnext;         /* hash chain */
    struct hy_lnode *lprev, *lnext; /* LRU: most recently used at the head */
    uint32_t hash;
    uint16_t len; /* key bytes */
} hy_lnode_t;

typedef struct hy_ltable {
    uint64_t passed;   /* requests that went through without delay (limit_req), or were counted (limit_conn) */
    uint64_t delayed;  /* limit_req: requests delayed (dry runs included) */
    uint64_t rejected; /* requests rejected (dry runs included): the metrics' per-zone rejection counter */
    uint64_t epoch;    /* bumped when the table is reset after a worker died holding the lock */
    uint32_t nbuckets, payload;
    size_t nodes;
    hy_lnode_t *lru_head, *lru_tail;
    hy_lnode_t *buckets[];
} hy_ltable_t;

/** Allocate the table in a fresh zone of `zone_size` bytes; nodes carry `payload` bytes for the owner. NULL when
 * the zone cannot hold it. */
hy_ltable_t *hy_ltable_create(hy_slab_t *slab, size_t zone_size, size_t payload);
/** The zone's lock; when the last holder died with it, the table is emptied (its nodes stay allocated: only
 * capacity is lost) and `epoch` bumped. */
void hy_ltable_lock(hy_slab_t *slab, hy_ltable_t *t);
/** The key's hash (nginx hashes with crc32; any good spread will do, the table is ours). */
uint32_t hy_ltable_hash(const char *key, size_t len);
/** Find a key (lock held). */
hy_lnode_t *hy_ltable_find(hy_ltable_t *t, uint32_t hash, const char *key, size_t len);
/** Allocate and insert a node (lock held), at the LRU head, payload zeroed. NULL when the zone is full. */
hy_lnode_t *hy_ltable_insert(hy_slab_t *slab, hy_ltable_t *t, uint32_t hash, const char *key, size_t len);
/** Make n the most recently used (lock held). */
void hy_ltable_touch(hy_ltable_t *t, hy_lnode_t *n);
/** Unlink and free a node (lock held). */
void hy_ltable_remove(hy_slab_t *slab, hy_ltable_t *t, hy_lnode_t *n);

static inline void *hy_lnode_data(hy_lnode_t *n)
{
    return (char *)n + ((sizeof(hy_lnode_t) + 7) & ~(size_t)7);
}
static inline char *hy_lnode_key(const hy_ltable_t *t, hy_lnode_t *n)
{
    return (char *)hy_lnode_data(n) + t->payload;
}

#endif
