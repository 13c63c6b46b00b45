/* compress_cache_test.c — the compressed-body LRU: hits, versions, eviction, references outliving eviction. */
#include <stdlib.h>
#include "../harness.h"
#include "filters/compress_cache.h"

static char *dupbytes(const char *s, size_t n)
{
    char *p = malloc(n ? n : 1);
    memcpy(p, s, n);
    return p;
}

static hy_ccache_key_t key(uint64_t ino, int64_t size, int64_t mtime, int codec, int level)
{
    hy_ccache_key_t k = {.dev = 7, .ino = ino, .size = size, .mtime_ns = mtime, .ctime_ns = mtime,
                         .codec = codec, .level = level};
    return k;
}

static void test_hit_miss(void)
{
    hy_ccache_t *c = hy_ccache_create(1 << 20);
    hy_ccache_key_t k = key(1, 100, 5, 0, 6);
    ok(hy_ccache_get(c, &k) == NULL);
    hy_ccache_entry_t *e = hy_ccache_put(c, &k, dupbytes("abc", 3), 3);
    ok(e != NULL);
    hy_ccache_release(e);
    e = hy_ccache_get(c, &k);
    ok(e != NULL);
    if (e) {
        is_strn(e->data, e->len, "abc");
        hy_ccache_release(e);
    }
    /* another codec or level of the same file is another entry */
    hy_ccache_key_t k2 = key(1, 100, 5, 1, 6), k3 = key(1, 100, 5, 0, 9);
    ok(hy_ccache_get(c, &k2) == NULL);
    ok(hy_ccache_get(c, &k3) == NULL);
    hy_ccache_stats_t st = hy_ccache_stats(c);
    is_int(st.hits, 1);
    is_int(st.misses, 3);
    is_int(st.entries, 1);
    hy_ccache_destroy(c);
}

static void test_versions(void)
{
    hy_ccache_t *c = hy_ccache_create(1 << 20);
    hy_ccache_key_t v1 = key(2, 100, 5, 0, 6);
    hy_ccache_release(hy_ccache_put(c, &v1, dupbytes("one", 3), 3));
    /* same size, new mtime (a rewrite in the same second shows in the ns part) */
    hy_ccache_key_t v2 = key(2, 100, 6, 0, 6);
    ok(hy_ccache_get(c, &v2) == NULL);
    hy_ccache_stats_t st = hy_ccache_stats(c);
    is_int(st.stale, 1);
    is_int(st.entries, 0); /* the stale version is gone */
    ok(hy_ccache_get(c, &v1) == NULL);
    hy_ccache_key_t v3 = key(2, 100, 5, 0, 6);
    v3.ctime_ns = 99; /* only ctime changed */
    hy_ccache_release(hy_ccache_put(c, &v1, dupbytes("one", 3), 3));
    ok(hy_ccache_get(c, &v3) == NULL);
    /* put replaces the entry of an older version */
    hy_ccache_release(hy_ccache_put(c, &v1, dupbytes("one", 3), 3));
    hy_ccache_release(hy_ccache_put(c, &v2, dupbytes("two", 3), 3));
    st = hy_ccache_stats(c);
    is_int(st.entries, 1);
    hy_ccache_entry_t *e = hy_ccache_get(c, &v2);
    ok(e && e->len == 3 && memcmp(e->data, "two", 3) == 0);
    if (e)
        hy_ccache_release(e);
    hy_ccache_destroy(c);
}

static void test_lru_eviction(void)
{
    /* room for about three 1000-byte entries */
    hy_ccache_t *c = hy_ccache_create(3 * (1000 + sizeof(hy_ccache_entry_t) + 16) + 10);
    char buf[1000];
    memset(buf, 'x', sizeof(buf));
    hy_ccache_key_t k[5];
    for (int i = 0; i < 3; i++) {
        k[i] = key((uint64_t)(10 + i), 1000, 1, 0, 1);
        hy_ccache_release(hy_ccache_put(c, &k[i], dupbytes(buf, 1000), 1000));
    }
    is_int(hy_ccache_stats(c).entries, 3);
    /* touch 0, so 1 is the least recently used */
    hy_ccache_release(hy_ccache_get(c, &k[0]));
    k[3] = key(13, 1000, 1, 0, 1);
    hy_ccache_release(hy_ccache_put(c, &k[3], dupbytes(buf, 1000), 1000));
    hy_ccache_stats_t st = hy_ccache_stats(c);
    is_int(st.entries, 3);
    is_int(st.evictions, 1);
    ok(st.bytes <= 3 * (1000 + sizeof(hy_ccache_entry_t) + 16) + 10);
    hy_ccache_entry_t *e;
    ok((e = hy_ccache_get(c, &k[1])) == NULL);
    ok((e = hy_ccache_get(c, &k[0])) != NULL);
    if (e)
        hy_ccache_release(e);
    ok((e = hy_ccache_get(c, &k[2])) != NULL);
    if (e)
        hy_ccache_release(e);
    /* too big for the cache: refused, data stays the caller's */
    hy_ccache_key_t big = key(99, 5000, 1, 0, 1);
    char *d = dupbytes(buf, 1000);
    ok(hy_ccache_put(c, &big, d, 4000) == NULL);
    free(d);
    /* shrinking evicts */
    hy_ccache_set_max(c, 1000 + sizeof(hy_ccache_entry_t) + 16);
    is_int(hy_ccache_stats(c).entries, 1);
    hy_ccache_destroy(c);
}

static void test_refs_outlive_eviction(void)
{
    hy_ccache_t *c = hy_ccache_create(1500 + sizeof(hy_ccache_entry_t) + 16 + 50);
    hy_ccache_key_t a = key(20, 10, 1, 0, 1), b = key(21, 10, 1, 0, 1);
    char big[1500];
    memset(big, 'y', sizeof(big));
    hy_ccache_entry_t *held = hy_ccache_put(c, &a, dupbytes("held-bytes", 10), 10);
    ok(held != NULL);
    /* b needs the room: a is evicted while we still hold it */
    hy_ccache_release(hy_ccache_put(c, &b, dupbytes(big, 1500), 1500));
    ok(hy_ccache_get(c, &a) == NULL);
    if (held) {
        is_strn(held->data, held->len, "held-bytes"); /* still valid (ASan would catch a use after free) */
        ok(held->cache == NULL);
        hy_ccache_release(held);
    }
    /* destroying the cache with an entry still referenced keeps the entry alive */
    hy_ccache_entry_t *e = hy_ccache_get(c, &b);
    ok(e != NULL);
    hy_ccache_destroy(c);
    if (e) {
        is_int(e->len, 1500);
        ok(e->data[1499] == 'y');
        hy_ccache_release(e);
    }
}

int main(void)
{
    subtest("hit and miss", test_hit_miss);
    subtest("versions", test_versions);
    subtest("LRU eviction", test_lru_eviction);
    subtest("references outlive eviction", test_refs_outlive_eviction);
    return done_testing();
}
