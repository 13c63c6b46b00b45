/* log_escape_test.c — the access log's escaping tables, byte by byte, against nginx's rules:
 * default: '"', '\\', bytes < 0x20 and >= 0x7f as \xHH (upper-case hex); json: \" \\ \n \r \t \b \f, other
 * bytes < 0x20 as \u00HH (upper-case hex), everything else (0x7f, >= 0x80) unchanged; none: unchanged. */
#include <stdbool.h>
#include <stdio.h>
#include "../harness.h"
#include "http/log_escape.h"

static size_t esc(int mode, const char *src, size_t n, char *out)
{
    size_t want = hy_log_escape_len(mode, src, n);
    char *end = hy_log_escape(mode, out, src, n);
    is_int((size_t)(end - out), want); /* the length pass and the write pass agree */
    return (size_t)(end - out);
}

static void test_default_every_byte(void)
{
    int bad = 0;
    for (int c = 0; c < 256; c++) {
        char in = (char)c, out[8], want[8];
        size_t n = esc(HY_ESC_DEFAULT, &in, 1, out);
        bool escaped = c < 0x20 || c >= 0x7f || c == '"' || c == '\\';
        if (escaped)
            snprintf(want, sizeof(want), "\\x%02X", c);
        else
            want[0] = (char)c, want[1] = '\0';
        if (n != strlen(want) || memcmp(out, want, n) != 0) {
            printf("# default: byte 0x%02x\n", c);
            bad++;
        }
    }
    is_int(bad, 0);
}

static void test_json_every_byte(void)
{
    int bad = 0;
    for (int c = 0; c < 256; c++) {
        char in = (char)c, out[8], want[8];
        size_t n = esc(HY_ESC_JSON, &in, 1, out);
        const char *shortesc = c == '"' ? "\\\"" : c == '\\' ? "\\\\" : c == '\n' ? "\\n" : c == '\r' ? "\\r"
                             : c == '\t' ? "\\t" : c == '\b' ? "\\b" : c == '\f' ? "\\f" : NULL;
        if (shortesc)
            snprintf(want, sizeof(want), "%s", shortesc);
        else if (c < 0x20)
            snprintf(want, sizeof(want), "\\u%04X", c);
        else
            want[0] = (char)c, want[1] = '\0';
        if (n != strlen(want) || memcmp(out, want, n) != 0) {
            printf("# json: byte 0x%02x\n", c);
            bad++;
        }
    }
    is_int(bad, 0);
}

static void test_none(void)
{
    char all[256], out[256];
    for (int c = 0; c < 256; c++)
        all[c] = (char)c;
    is_int(esc(HY_ESC_NONE, all, 256, out), 256);
    ok(memcmp(all, out, 256) == 0);
}

static void test_strings(void)
{
    char out[128];
    const char ua[] = "Mozilla \"5.0\" \\ \x01\x7f\xc3\xa9";
    size_t n = esc(HY_ESC_DEFAULT, ua, sizeof(ua) - 1, out);
    is_strn(out, n, "Mozilla \\x225.0\\x22 \\x5C \\x01\\x7F\\xC3\\xA9");
    n = esc(HY_ESC_JSON, ua, sizeof(ua) - 1, out);
    is_strn(out, n, "Mozilla \\\"5.0\\\" \\\\ \\u0001\x7f\xc3\xa9");
    n = esc(HY_ESC_JSON, "a\tb\nc\rd\be\ff\x1f", 12, out);
    is_strn(out, n, "a\\tb\\nc\\rd\\be\\ff\\u001F");
    n = esc(HY_ESC_DEFAULT, "", 0, out);
    is_int(n, 0);
    is_int(hy_log_escape_len(HY_ESC_DEFAULT, "plain text", 10), 10);
    is_int(hy_log_escape_len(HY_ESC_JSON, "\x00", 1), 6);
    is_int(hy_log_escape_len(HY_ESC_DEFAULT, "\x00", 1), 4);
}

int main(void)
{
    subtest("default escaping of every byte", test_default_every_byte);
    subtest("json escaping of every byte", test_json_every_byte);
    subtest("escape=none", test_none);
    subtest("strings", test_strings);
    return done_testing();
}
