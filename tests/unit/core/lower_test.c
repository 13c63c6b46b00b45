/* lower_test.c — hy_lower_copy and hy_str_lower: every byte value, every length and alignment, in place, against the
 * byte-wise rule; hy_mem_visible, hy_mem_no_ctl and hy_mem_caseeq against
 * theirs. */
#include <stdlib.h>
#include "../harness.h"
#include "core/str.h"

static char want(char c)
{
    return (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
}

static void test_all_bytes(void)
{
    char src[256], dst[256];
    for (int i = 0; i < 256; i++)
        src[i] = (char)i;
    hy_lower_copy(dst, src, 256);
    int bad = 0;
    for (int i = 0; i < 256; i++)
        bad += dst[i] != want(src[i]);
    is_int(bad, 0);
}

static void test_lengths_and_offsets(void)
{
    const char *text = "Content-Type: X-FORWARDED-For @[`{ AZaz\x80\xc1\xda\xff Last-Modified";
    size_t tl = strlen(text);
    int bad = 0;
    for (size_t off = 0; off < 8; off++)
        for (size_t n = 0; off + n <= tl; n++) {
            char dst[128];
            memset(dst, '#', sizeof(dst));
            hy_lower_copy(dst, text + off, n);
            for (size_t i = 0; i < n; i++)
                bad += dst[i] != want(text[off + i]);
            bad += dst[n] != '#'; /* nothing written past n */
        }
    is_int(bad, 0);
}

/* in place (dst == src, as hy_str_lower): the overlapping last word lowers bytes lowered already */
static void test_in_place(void)
{
    const char *text = "X-FORWARDED-For: AbCdEfGhIjKlMnOpQrStUvWxYz\xc1\xda @[`{";
    size_t tl = strlen(text);
    int bad = 0;
    for (size_t n = 0; n <= tl; n++) {
        char buf[128];
        memcpy(buf, text, tl + 1);
        hy_str_lower(buf, n);
        for (size_t i = 0; i < tl; i++)
            bad += buf[i] != (i < n ? want(text[i]) : text[i]);
    }
    is_int(bad, 0);
}

static bool ref_visible(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)p[i] <= 0x20 || (unsigned char)p[i] >= 0x7f)
            return false;
    return true;
}

static bool ref_no_ctl(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)p[i] < 0x20 && p[i] != '\t')
            return false;
    return true;
}

/* hy_mem_visible / hy_mem_no_ctl: every byte value at every position of every length up to 24, in strings of a
 * plain letter, a tab (allowed in values) and a high byte (allowed in values only) */
static void test_field_bytes(void)
{
    int bad = 0;
    const char fills[] = {'a', '\t', (char)0xc3};
    for (size_t f = 0; f < sizeof(fills); f++)
        for (size_t n = 0; n <= 24; n++)
            for (size_t pos = 0; pos < (n ? n : 1); pos++)
                for (int b = 0; b < 256; b++) {
                    char s[32];
                    memset(s, fills[f], sizeof(s));
                    if (n)
                        s[pos] = (char)b;
                    bad += hy_mem_visible(s, n) != ref_visible(s, n);
                    bad += hy_mem_no_ctl(s, n) != ref_no_ctl(s, n);
                }
    is_int(bad, 0);
}

static bool ref_caseeq(const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (want(a[i]) != want(b[i]))
            return false;
    return true;
}

/* hy_mem_caseeq: every pair of byte values at the first, middle and last position of every length up to 17, the
 * rest of both strings equal letters of different case */
static void test_caseeq_pairs(void)
{
    int bad = 0;
    for (size_t n = 1; n <= 17; n++) {
        const size_t pos[] = {0, n / 2, n - 1};
        for (size_t k = 0; k < 3; k++)
            for (int x = 0; x < 256; x++)
                for (int y = 0; y < 256; y++) {
                    char a[24], b[24];
                    memset(a, 'Q', sizeof(a));
                    memset(b, 'q', sizeof(b));
                    a[pos[k]] = (char)x;
                    b[pos[k]] = (char)y;
                    bad += hy_mem_caseeq(a, b, n) != ref_caseeq(a, b, n);
                }
    }
    is_int(bad, 0);
}

int main(void)
{
    subtest("all bytes", test_all_bytes);
    subtest("lengths and offsets", test_lengths_and_offsets);
    subtest("in place", test_in_place);
    subtest("field name and value bytes", test_field_bytes);
    subtest("hy_mem_caseeq, every byte pair", test_caseeq_pairs);
    return done_testing();
}
