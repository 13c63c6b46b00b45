/* uri_escape_test.c — hy_uri_escape (the URI a proxy sends upstream, nginx's NGX_ESCAPE_URI set) against the byte
 * rule for every byte value, the length-only call against the written length, and the plain-path shortcut of
 * hy_http_parse_target against paths that need the full parse. */
#include <string.h>
#include "../harness.h"
#include "http/uri.h"

static bool ref_escaped(unsigned char c)
{
    return c <= ' ' || c >= 0x7f || (c != 0 && strchr("#%?\"<>\\^`{|}", c) != NULL);
}

static void test_every_byte(void)
{
    int bad = 0;
    for (int b = 0; b < 256; b++) {
        char src[3] = {'a', (char)b, 'z'}, dst[16];
        size_t want = ref_escaped((unsigned char)b) ? 5 : 3;
        bad += hy_uri_escape(NULL, src, 3) != want;
        bad += hy_uri_escape(dst, src, 3) != want;
        if (want == 5) {
            char hex[3];
            snprintf(hex, sizeof(hex), "%02X", b);
            bad += dst[1] != '%' || memcmp(dst + 2, hex, 2) != 0;
        } else {
            bad += memcmp(dst, src, 3) != 0;
        }
    }
    is_int(bad, 0);
    char out[64];
    size_t n = hy_uri_escape(out, "/a b/%?#", 8);
    is_strn(out, n, "/a%20b/%25%3F%23");
    is_int(hy_uri_escape(NULL, "/a b/%?#", 8), n);
}

static int parse(const char *target, char *out, size_t *n, bool merge)
{
    hy_str_t args, host;
    return hy_http_parse_target(HY_STR("GET"), (hy_str_t){(char *)target, strlen(target)}, merge, out, n, &args,
                                &host);
}

static void test_plain_and_full(void)
{
    const char *same[] = {"/", "/small.html", "/a/b.c/d", "/a/", "/\xc3\xa9t\xc3\xa9", "/a.b./c..d/e."};
    for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
        char out[64];
        size_t n = 0;
        ok(parse(same[i], out, &n, true) == 0);
        is_strn(out, n, same[i]);
        is_int(out[n], 0);
    }
    const struct {
        const char *in, *want;
        bool merge;
    } full[] = {
        {"/a//b", "/a/b", true}, {"/a//b", "/a//b", false}, {"/a/./b", "/a/b", true}, {"/a/b/..", "/a/", true},
        {"/a/.hidden", "/a/.hidden", true}, {"/%41b", "/Ab", true}, {"/a?x=1", "/a", true}, {"/a#f", "/a", true},
        {"//", "/", true},
    };
    for (size_t i = 0; i < sizeof(full) / sizeof(full[0]); i++) {
        char out[64];
        size_t n = 0;
        ok(parse(full[i].in, out, &n, full[i].merge) == 0);
        is_strn(out, n, full[i].want);
    }
    char out[64];
    size_t n;
    ok(parse("/a b", out, &n, true) < 0);
    ok(parse("/a\x7f", out, &n, true) < 0);
    ok(parse("/..", out, &n, true) < 0);
}

int main(void)
{
    subtest("hy_uri_escape, every byte", test_every_byte);
    subtest("parse_target: plain paths as they are, others normalised", test_plain_and_full);
    return done_testing();
}
