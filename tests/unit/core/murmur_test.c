/* murmur_test.c — MurmurHash2 as nginx's ngx_murmur_hash2 (the values were checked through split_clients
 * against nginx 1.22: tests/integration/test_split_clients.py). */
#include <string.h>
#include "../harness.h"
#include "core/murmur.h"

static uint32_t mh(const char *s)
{
    return hy_murmur_hash2(s, strlen(s));
}

static void test_vectors(void)
{
    is_int(hy_murmur_hash2(NULL, 0), 0);
    is_int(mh("k=u1"), 0x014157d3);
    is_int(mh("k=u2"), 0x0afc25d7);
    is_int(mh("k=u3"), 0x23b63a0b);
    is_int(mh("k=u4"), 0xc119393f);
    is_int(mh("k=u5"), 0xa7609edf);
}

static void test_tails(void)
{
    /* every tail length (0..3 bytes after the 4-byte blocks) reaches the final mix, and high bytes are unsigned */
    ok(mh("a") != mh("b"));
    ok(mh("ab") != mh("ac"));
    ok(mh("abc") != mh("abd"));
    ok(mh("abcde") != mh("abcdf"));
    ok(hy_murmur_hash2("\xff", 1) != hy_murmur_hash2("\x7f", 1));
}

int main(void)
{
    subtest("vectors", test_vectors);
    subtest("tails", test_tails);
    return done_testing();
}
