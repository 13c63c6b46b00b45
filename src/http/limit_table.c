/* limit_table.c — the shared key table of limit_req and limit_conn (see limit_table.h). */
#include <string.h>
#include "limit_table.h"
#include "../core/murmur.h"

#define NODE_HEAD ((sizeof(hy_lnode_t) + 7) & ~(size_t)7)

hy_ltable_t *hy_ltable_create(hy_slab_t *slab, size_t zone_size, size_t payload)
{
    /* about one bucket per 128 bytes of zone: a full zone of 64-byte nodes keeps chains of two or so */
    uint32_t nb = 64;
    while ((size_t)nb * 2 * 128 <= zone_size && nb < (1u << 22))
        nb *= 2;
    hy_ltable_t *t = hy_slab_calloc(slab, sizeof(*t) + sizeof(hy_lnode_t *) * nb);
    if (t == NULL)
        return NULL;
    t->nbuckets = nb;
    t->payload = (uint32_t)((payload + 7) & ~(size_t)7);
    return t;
}

void hy_ltable_lock(hy_slab_t *slab, hy_ltable_t *t)
{
    if (hy_slab_lock(slab)) {
        memset(t->buckets, 0, sizeof(hy_lnode_t *) * t->nbuckets);
        t->lru_head = t->lru_tail = NULL;
        t->nodes = 0;
        t->epoch++;
    }
}

uint32_t hy_ltable_hash(const char *key, size_t len)
{
    return hy_murmur_hash2(key, len);
}

hy_lnode_t *hy_ltable_find(hy_ltable_t *t, uint32_t hash, const char *key, size_t len)
{
    for (hy_lnode_t *n = t->buckets[hash & (t->nbuckets - 1)]; n; n = n->hnext)
        if (n->hash == hash && n->len == len && memcmp(hy_lnode_key(t, n), key, len) == 0)
            return n;
    return NULL;
}

static void lru_unlink(hy_ltable_t *t, hy_lnode_t *n)
{
    if (n->lprev)
        n->lprev->lnext = n->lnext;
    else
        t->lru_head = n->lnext;
    if (n->lnext)
        n->lnext->lprev = n->lprev;
    else
        t->lru_tail = n->lprev;
}

static void lru_push(hy_ltable_t *t, hy_lnode_t *n)
{
    n->lprev = NULL;
    n->lnext = t->lru_head;
    if (t->lru_head)
        t->lru_head->lprev = n;
    else
        t->lru_tail = n;
    t->lru_head = n;
}

hy_lnode_t *hy_ltable_insert(hy_slab_t *slab, hy_ltable_t *t, uint32_t hash, const char *key, size_t len)
{
    hy_lnode_t *n = hy_slab_alloc_locked(slab, NODE_HEAD + t->payload + len);
    if (n == NULL)
        return NULL;
    memset(n, 0, NODE_HEAD + t->payload);
    n->hash = hash;
    n->len = (uint16_t)len;
    memcpy(hy_lnode_key(t, n), key, len);
    hy_lnode_t **b = &t->buckets[hash & (t->nbuckets - 1)];
    n->hnext = *b;
    *b = n;
    lru_push(t, n);
    t->nodes++;
    return n;
}

void hy_ltable_touch(hy_ltable_t *t, hy_lnode_t *n)
{
    if (t->lru_head == n)
        return;
    lru_unlink(t, n);
    lru_push(t, n);
}

void hy_ltable_remove(hy_slab_t *slab, hy_ltable_t *t, hy_lnode_t *n)
{
    hy_lnode_t **pp = &t->buckets[n->hash & (t->nbuckets - 1)];
    while (*pp && *pp != n)
        pp = &(*pp)->hnext;
    if (*pp)
        *pp = n->hnext;
    lru_unlink(t, n);
    t->nodes--;
    hy_slab_free_locked(slab, n);
}
