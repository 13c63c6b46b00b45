/* charset_recode_test.c — the charset recoder (filters/charset_recode.c): UTF-8 decoding (overlong, surrogate-free
 * ranges, cut sequences), UTF-8 to a single-byte charset fed one byte at a time, and the other two modes. */
#include <stdlib.h>
#include <string.h>
#include "../harness.h"
#include "filters/charset_recode.h"

static void test_decode(void)
{
    size_t used;
    is_int(hy_utf8_decode_one((const uint8_t *)"A", 1, &used), 'A');
    is_int(hy_utf8_decode_one((const uint8_t *)"\xd0\x96", 2, &used), 0x416);
    is_int(used, 2);
    is_int(hy_utf8_decode_one((const uint8_t *)"\xe2\x82\xac", 3, &used), 0x20ac);
    is_int(hy_utf8_decode_one((const uint8_t *)"\xf0\x9f\x98\x80", 4, &used), 0x1f600);
    is_int(used, 4);
    is_int(hy_utf8_decode_one((const uint8_t *)"\xe2\x82", 2, &used), -1);      /* cut short */
    is_int(hy_utf8_decode_one((const uint8_t *)"\xc0\x80", 2, &used), -2);      /* overlong lead */
    is_int(hy_utf8_decode_one((const uint8_t *)"\xe0\x80\x80", 3, &used), -2);  /* overlong */
    is_int(hy_utf8_decode_one((const uint8_t *)"\x80", 1, &used), -2);          /* lone continuation */
    is_int(used, 1);
    is_int(hy_utf8_decode_one((const uint8_t *)"\xd0" "A", 2, &used), -2);         /* bad continuation */
    is_int(hy_utf8_decode_one((const uint8_t *)"\xf4\x90\x80\x80", 4, &used), -2); /* above U+10FFFF */
}

static uint8_t page4[256];
static uint8_t *pages[256];

static void test_from_utf8_bytewise(void)
{
    memset(page4, 0, sizeof(page4));
    page4[0x16] = 0xc6; /* U+0416 → 0xC6 */
    pages[4] = page4;
    hy_recode_t rc = {.mode = HY_RECODE_FROM_UTF8, .pages = pages};
    const char *in = "a\xd0\x96\xe2\x82\xac\xf0\x9f\x98\x80\x80z";
    char out[256];
    size_t n = 0;
    for (size_t i = 0; i < strlen(in); i++) { /* one byte per call: every sequence is cut */
        uint8_t buf[64];
        size_t l = hy_recode(&rc, (const uint8_t *)in + i, 1, buf);
        ok(l <= hy_recode_bound(&rc, 1));
        memcpy(out + n, buf, l);
        n += l;
    }
    is_strn(out, n, "a\xc6&#8364;&#128512;?z");
    rc.saved_len = 0;
    uint8_t buf[64];
    size_t l = hy_recode(&rc, (const uint8_t *)in, strlen(in), buf);
    is_strn((char *)buf, l, "a\xc6&#8364;&#128512;?z");
}

static void test_byte_and_to_utf8(void)
{
    uint8_t t[256], u[256 * 4];
    for (int i = 0; i < 256; i++) {
        t[i] = i == 'X' ? 'Y' : (uint8_t)i;
        u[i * 4] = 1, u[i * 4 + 1] = i < 128 ? (uint8_t)i : '?';
    }
    u[0xc6 * 4] = 2, u[0xc6 * 4 + 1] = 0xd0, u[0xc6 * 4 + 2] = 0x96;
    hy_recode_t b = {.mode = HY_RECODE_BYTE, .table = t}, w = {.mode = HY_RECODE_TO_UTF8, .table = u};
    uint8_t out[32];
    size_t l = hy_recode(&b, (const uint8_t *)"aXb", 3, out);
    is_strn((char *)out, l, "aYb");
    l = hy_recode(&w, (const uint8_t *)"a\xc6\xc7", 3, out);
    ok(l <= hy_recode_bound(&w, 3));
    is_strn((char *)out, l, "a\xd0\x96?");
}

int main(void)
{
    subtest("utf-8 decoding", test_decode);
    subtest("utf-8 to single byte, cut anywhere", test_from_utf8_bytewise);
    subtest("byte to byte, byte to utf-8", test_byte_and_to_utf8);
    return done_testing();
}
