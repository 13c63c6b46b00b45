/* compress_cache.c — per-worker LRU of compressed bodies (see compress_cache.h). */
#include <stdlib.h>
#include <string.h>
#include "compress_cache.h"
#include "../core/mem.h"

#define BUCKETS 1024
#define ENTRY_OVERHEAD (sizeof(hy_ccache_entry_t) + 16)

struct hy_ccache {
    hy_ccache_entry_t *table[BUCKETS];
    hy_ccache_entry_t *head, *tail; /* most recently used at head */
    size_t max_bytes;
    hy_ccache_stats_t st;
};

static uint32_t key_hash(const hy_ccache_key_t *k)
{
    /* identity only (not the version): a new version lands in the same chain and replaces the old one */
    uint64_t h = k->dev * 0x9e3779b97f4a7c15ull ^ k->ino * 0xc2b2ae3d27d4eb4full ^
                 (uint64_t)(k->codec * 31 + k->level) * 0x165667b19e3779f9ull;
    h ^= h >> 29;
    return (uint32_t)h;
}

static bool same_slot(const hy_ccache_key_t *a, const hy_ccache_key_t *b)
{
    return a->dev == b->dev && a->ino == b->ino && a->codec == b->codec && a->level == b->level;
}

static bool same_version(const hy_ccache_key_t *a, const hy_ccache_key_t *b)
{
    return a->size == b->size && a->mtime_ns == b->mtime_ns && a->ctime_ns == b->ctime_ns;
}

static size_t cost(const hy_ccache_entry_t *e)
{
    return e->len + ENTRY_OVERHEAD;
}

static void entry_free(hy_ccache_entry_t *e)
{
    free((void *)e->data);
    free(e);
}

static void lru_unlink(hy_ccache_t *c, hy_ccache_entry_t *e)
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

static void lru_push(hy_ccache_t *c, hy_ccache_entry_t *e)
{
    e->prev = NULL;
    e->next = c->head;
    if (c->head)
        c->head->prev = e;
    c->head = e;
    if (!c->tail)
        c->tail = e;
}

/* Take e out of the cache and drop the cache's reference. */
static void remove_entry(hy_ccache_t *c, hy_ccache_entry_t *e)
{
    hy_ccache_entry_t **pp = &c->table[e->hash & (BUCKETS - 1)];
    while (*pp != e)
        pp = &(*pp)->hnext;
    *pp = e->hnext;
    e->hnext = NULL;
    lru_unlink(c, e);
    c->st.bytes -= cost(e);
    c->st.entries--;
    e->cache = NULL;
    hy_ccache_release(e);
}

static void shrink(hy_ccache_t *c, size_t need)
{
    while (c->tail && c->st.bytes + need > c->max_bytes) {
        remove_entry(c, c->tail);
        c->st.evictions++;
    }
}

hy_ccache_t *hy_ccache_create(size_t max_bytes)
{
    hy_ccache_t *c = hy_calloc(sizeof(*c));
    c->max_bytes = max_bytes;
    return c;
}

void hy_ccache_destroy(hy_ccache_t *c)
{
    if (c == NULL)
        return;
    while (c->head)
        remove_entry(c, c->head);
    free(c);
}

void hy_ccache_set_max(hy_ccache_t *c, size_t max_bytes)
{
    c->max_bytes = max_bytes;
    shrink(c, 0);
}

static hy_ccache_entry_t *find_slot(hy_ccache_t *c, const hy_ccache_key_t *key, uint32_t h)
{
    hy_ccache_entry_t *e = c->table[h & (BUCKETS - 1)];
    while (e && !(e->hash == h && same_slot(&e->key, key)))
        e = e->hnext;
    return e;
}

hy_ccache_entry_t *hy_ccache_get(hy_ccache_t *c, const hy_ccache_key_t *key)
{
    uint32_t h = key_hash(key);
    hy_ccache_entry_t *e = find_slot(c, key, h);
    if (e == NULL) {
        c->st.misses++;
        return NULL;
    }
    if (!same_version(&e->key, key)) {
        remove_entry(c, e);
        c->st.stale++;
        c->st.misses++;
        return NULL;
    }
    c->st.hits++;
    if (c->head != e) {
        lru_unlink(c, e);
        lru_push(c, e);
    }
    e->refs++;
    return e;
}

hy_ccache_entry_t *hy_ccache_put(hy_ccache_t *c, const hy_ccache_key_t *key, char *data, size_t len)
{
    if (len + ENTRY_OVERHEAD > c->max_bytes)
        return NULL;
    uint32_t h = key_hash(key);
    hy_ccache_entry_t *old = find_slot(c, key, h);
    if (old)
        remove_entry(c, old);
    shrink(c, len + ENTRY_OVERHEAD);
    hy_ccache_entry_t *e = hy_calloc(sizeof(*e));
    e->data = data;
    e->len = len;
    e->key = *key;
    e->hash = h;
    e->cache = c;
    e->refs = 2; /* the cache's and the caller's */
    e->hnext = c->table[h & (BUCKETS - 1)];
    c->table[h & (BUCKETS - 1)] = e;
    lru_push(c, e);
    c->st.bytes += cost(e);
    c->st.entries++;
    c->st.inserts++;
    return e;
}

void hy_ccache_release(void *entry)
{
    hy_ccache_entry_t *e = entry;
    if (--e->refs == 0)
        entry_free(e);
}

hy_ccache_stats_t hy_ccache_stats(const hy_ccache_t *c)
{
    return c->st;
}
