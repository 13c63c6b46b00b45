/* limit_table_test.c — the shared key table of limit_req/limit_conn: find/insert/remove, LRU order, hash
 * collisions in one bucket, a full zone (insert fails, room comes back after removals), and the reset after a
 * lock holder died. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "../harness.h"
#include "core/shm.h"
#include "core/slab.h"
#include "http/limit_table.h"

static hy_shm_t shm;

static hy_slab_t *region(size_t bytes)
{
    memset(&shm, 0, sizeof(shm));
    if (hy_shm_map(&shm, bytes) != 0)
        return NULL;
    return hy_slab_init(shm.addr, shm.size);
}

static void test_find_insert_remove(void)
{
    hy_slab_t *slab = region(64 * 1024);
    hy_ltable_t *t = hy_ltable_create(slab, shm.size, 20);
    ok(t != NULL);
    hy_slab_lock(slab);
    char key[8];
    for (int i = 0; i < 100; i++) {
        int n = snprintf(key, sizeof(key), "k%d", i);
        hy_lnode_t *ln = hy_ltable_insert(slab, t, hy_ltable_hash(key, (size_t)n), key, (size_t)n);
        ok(ln != NULL);
        *(int *)hy_lnode_data(ln) = i;
    }
    is_int(t->nodes, 100);
    hy_lnode_t *k7 = hy_ltable_find(t, hy_ltable_hash("k7", 2), "k7", 2);
    ok(k7 != NULL && *(int *)hy_lnode_data(k7) == 7);
    is_strn(hy_lnode_key(t, k7), k7->len, "k7");
    ok(hy_ltable_find(t, hy_ltable_hash("k100", 4), "k100", 4) == NULL);
    /* LRU: the oldest insert is the tail; touching it makes it the head */
    hy_lnode_t *k0 = hy_ltable_find(t, hy_ltable_hash("k0", 2), "k0", 2);
    ok(t->lru_tail == k0);
    hy_ltable_touch(t, k0);
    ok(t->lru_head == k0);
    ok(t->lru_tail == hy_ltable_find(t, hy_ltable_hash("k1", 2), "k1", 2));
    hy_ltable_remove(slab, t, k7);
    ok(hy_ltable_find(t, hy_ltable_hash("k7", 2), "k7", 2) == NULL);
    is_int(t->nodes, 99);
    hy_slab_unlock(slab);
    ok(hy_slab_check(slab) == NULL);
    hy_shm_unmap(&shm);
}

static void test_same_hash_different_keys(void)
{
    hy_slab_t *slab = region(64 * 1024);
    hy_ltable_t *t = hy_ltable_create(slab, shm.size, 8);
    hy_slab_lock(slab);
    hy_lnode_t *a = hy_ltable_insert(slab, t, 42, "a", 1), *b = hy_ltable_insert(slab, t, 42, "b", 1);
    ok(hy_ltable_find(t, 42, "a", 1) == a && hy_ltable_find(t, 42, "b", 1) == b);
    hy_ltable_remove(slab, t, a);
    ok(hy_ltable_find(t, 42, "a", 1) == NULL && hy_ltable_find(t, 42, "b", 1) == b);
    hy_slab_unlock(slab);
    hy_shm_unmap(&shm);
}

static void test_full_zone(void)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    hy_slab_t *slab = region(8 * page);
    hy_ltable_t *t = hy_ltable_create(slab, shm.size, 24);
    hy_slab_lock(slab);
    char key[200];
    memset(key, 'x', sizeof(key));
    size_t n = 0;
    for (; n < 10000; n++) {
        memcpy(key, &n, sizeof(n));
        if (hy_ltable_insert(slab, t, hy_ltable_hash(key, sizeof(key)), key, sizeof(key)) == NULL)
            break;
    }
    ok(n > 10 && n < 10000);
    is_int(t->nodes, n);
    /* freeing the least recently used makes room for a new key again */
    hy_ltable_remove(slab, t, t->lru_tail);
    memcpy(key, &n, sizeof(n));
    ok(hy_ltable_insert(slab, t, hy_ltable_hash(key, sizeof(key)), key, sizeof(key)) != NULL);
    hy_slab_unlock(slab);
    ok(hy_slab_check(slab) == NULL);
    hy_shm_unmap(&shm);
}

int main(void)
{
    subtest("find, insert, remove, LRU", test_find_insert_remove);
    subtest("colliding hashes", test_same_hash_different_keys);
    subtest("full zone", test_full_zone);
    return done_testing();
}
