/* range_test.c — Range parsing (table checked against nginx 1.22 by experiment), multipart framing, If-Range. */
#include <stdlib.h>
#include <string.h>
#include "../harness.h"
#include "core/hayate.h"
#include "filters/range.h"
#include "core/httpdate.h"

typedef struct rcase {
    const char *value;
    int64_t size;
    int max;
    int want;            /* n, 0 or -416 */
    const char *ranges;  /* "s-e,s-e" inclusive, when want > 0 */
} rcase_t;

/* Results observed from nginx 1.22.1 (ngx_http_range_filter_module) on a 10000-byte file unless noted. */
static const rcase_t cases[] = {
    {"bytes=0-99", 10000, 100, 1, "0-99"},
    {"bytes=-500", 10000, 100, 1, "9500-9999"},
    {"bytes=9500-", 10000, 100, 1, "9500-9999"},
    {"bytes=0-0,-1", 10000, 100, 2, "0-0,9999-9999"},
    {"bytes=0-99999", 10000, 100, 1, "0-9999"},
    {"bytes=10000-", 10000, 100, -416, NULL},
    {"bytes=10000-20000", 10000, 100, -416, NULL},
    {"bytes=9999-", 10000, 100, 1, "9999-9999"},
    {"bytes=-0", 10000, 100, -416, NULL},
    {"bytes=-10001", 10000, 100, 1, "0-9999"},
    {"bytes=-20000", 10000, 100, 1, "0-9999"},
    {"bytes=5-4", 10000, 100, -416, NULL},
    {"bytes=1-0", 10000, 100, -416, NULL},
    {"bytes=abc", 10000, 100, -416, NULL},
    {"bytes=", 10000, 100, 0, NULL},
    {"bytes=,", 10000, 100, -416, NULL},
    {"Bytes=0-1", 10000, 100, 1, "0-1"},
    {"BYTES=0-1", 10000, 100, 1, "0-1"},
    {"bytes = 0-1", 10000, 100, 0, NULL},
    {"bytes =0-1", 10000, 100, 0, NULL},
    {"bytes= 0-1", 10000, 100, 1, "0-1"},
    {"bytes=0 -1", 10000, 100, 1, "0-1"},
    {"bytes=0- 1", 10000, 100, 1, "0-1"},
    {"bytes=0-1 ", 10000, 100, 1, "0-1"},
    {" bytes=0-1", 10000, 100, 1, "0-1"},
    {"bytes=\t0-1", 10000, 100, -416, NULL},
    {"bytes=0-1, 3-4", 10000, 100, 2, "0-1,3-4"},
    {"bytes=0-1 ,3-4", 10000, 100, 2, "0-1,3-4"},
    {"bytes=0-1 , 3-4", 10000, 100, 2, "0-1,3-4"},
    {"bytes=0-1,,3-4", 10000, 100, -416, NULL},
    {"bytes=0-1,", 10000, 100, -416, NULL},
    {"bytes=,0-1", 10000, 100, -416, NULL},
    {"bytes=1-2,0-5", 10000, 100, 2, "1-2,0-5"},  /* not reordered */
    {"bytes=0-5,3-8", 10000, 100, 2, "0-5,3-8"},  /* overlapping: not coalesced */
    {"bytes=0-0,0-0,0-0", 10000, 100, 3, "0-0,0-0,0-0"},
    {"bytes=-1,-1,-1", 10000, 100, 3, "9999-9999,9999-9999,9999-9999"},
    {"bytes=-5000,-5000", 10000, 100, 2, "5000-9999,5000-9999"}, /* total == size: still served */
    {"bytes=-5000,-5001", 10000, 100, 0, NULL},                  /* total > size: whole file */
    {"bytes=0-5000,4000-9999", 10000, 100, 0, NULL},
    {"bytes=0-4999,5000-9999", 10000, 100, 2, "0-4999,5000-9999"},
    {"bytes=0-4999,5000-9999,0-0", 10000, 100, 0, NULL},
    {"bytes=0- ,1-2", 10000, 100, 0, NULL},
    {"bytes=0-,0-", 10000, 100, 0, NULL},
    {"bytes=0-1,20000-30000", 10000, 100, 1, "0-1"},
    {"bytes=20000-30000,0-1", 10000, 100, 1, "0-1"},
    {"bytes=0-1,5-4", 10000, 100, 1, "0-1"},
    {"bytes=5-4,0-1", 10000, 100, 1, "0-1"},
    {"bytes=20000-,30000-", 10000, 100, -416, NULL},
    {"bytes=0-1,9999-", 10000, 100, 2, "0-1,9999-9999"},
    {"items=0-1", 10000, 100, 0, NULL},
    {"bytes=-", 10000, 100, -416, NULL},
    {"bytes=0-1x", 10000, 100, -416, NULL},
    {"bytes=1-1", 10000, 100, 1, "1-1"},
    {"bytes=0-99999999999999999999", 10000, 100, -416, NULL},
    {"bytes=99999999999999999999-", 10000, 100, -416, NULL},
    {"bytes=0-9223372036854775807", 10000, 100, 1, "0-9999"},
    {"bytes=-9223372036854775807", 10000, 100, 1, "0-9999"},
    {"bytes=9223372036854775807-", 10000, 100, -416, NULL},
    {"bytes=+1-2", 10000, 100, -416, NULL},
    {"bytes=01-02", 10000, 100, 1, "1-2"},
    {"bytes=0-1;3-4", 10000, 100, -416, NULL},
    {"bytes=0-1,-", 10000, 100, -416, NULL},
    {"bytes=0-1,abc", 10000, 100, -416, NULL},
    {"bytes=- 5", 10000, 100, -416, NULL},
    /* max_ranges 2 */
    {"bytes=0-1", 10000, 2, 1, "0-1"},
    {"bytes=0-1,3-4", 10000, 2, 2, "0-1,3-4"},
    {"bytes=0-1,3-4,5-6", 10000, 2, 0, NULL},
    {"bytes=0-1,3-4,20000-", 10000, 2, 2, "0-1,3-4"}, /* only satisfiable ranges count */
    {"bytes=20000-,30000-,40000-", 10000, 2, -416, NULL},
    {"bytes=0-1,3-4,5-6,abc", 10000, 2, 0, NULL}, /* gives up before the syntax error */
    /* max_ranges 0 disables ranges */
    {"bytes=0-1", 10000, 0, 0, NULL},
    /* empty representation */
    {"bytes=0-", 0, 100, 0, NULL},
    {"bytes=0-0", 0, 100, 0, NULL},
    {"bytes=-5", 0, 100, 0, NULL},
    {"bytes=-0", 0, 100, 0, NULL},
    {"bytes=1-", 0, 100, -416, NULL},
    {"bytes=1-2", 0, 100, -416, NULL},
    {"bytes=0-1,1-2", 0, 100, 0, NULL},
    {"bytes=abc", 0, 100, -416, NULL},
    {"bytes=0-0,1-", 0, 100, 0, NULL},
    /* one-byte file */
    {"bytes=0-0", 1, 100, 1, "0-0"},
    {"bytes=-1", 1, 100, 1, "0-0"},
    {"bytes=1-", 1, 100, -416, NULL},
};

static void fmt_ranges(const hy_range_t *r, int n, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && len < cap; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%" PRId64 "-%" PRId64, i ? "," : "", r[i].start, r[i].end);
}

static void test_parse_table(void)
{
    ok(HY_ARRAY_SIZE(cases) >= 30);
    for (size_t i = 0; i < HY_ARRAY_SIZE(cases); i++) {
        const rcase_t *c = &cases[i];
        hy_range_t r[100];
        memset(r, 0xff, sizeof(r));
        int n = hy_range_parse(c->value, strlen(c->value), c->size, r, c->max);
        if (!is_int(n, c->want))
            printf("#   case %zu: \"%s\" size %" PRId64 " max %d\n", i, c->value, c->size, c->max);
        if (c->want > 0 && n == c->want) {
            char got[512];
            fmt_ranges(r, n, got, sizeof(got));
            if (!is_strn(got, strlen(got), c->ranges))
                printf("#   case %zu: \"%s\"\n", i, c->value);
        }
    }
}

static void test_parse_misc(void)
{
    hy_range_t r[4];
    /* length is honoured: the value need not be NUL-terminated */
    const char *v = "bytes=0-1,3-4GARBAGE";
    is_int(hy_range_parse(v, 13, 100, r, 4), 2);
    is_int(r[1].start, 3);
    is_int(r[1].end, 4);
    /* output array never written past max */
    hy_range_t small[2];
    is_int(hy_range_parse("bytes=0-0,1-1,2-2", 17, 100, small, 2), 0);
    is_int(hy_range_count("bytes=0-0,1-1,2-2", 17), 3);
    is_int(hy_range_count("bytes=0-0", 9), 1);
    /* huge file */
    int64_t big = INT64_C(5000000000000);
    is_int(hy_range_parse("bytes=-1", 8, big, r, 4), 1);
    is_int(r[0].start, big - 1);
    is_int(r[0].end, big - 1);
    is_int(hy_range_parse("bytes=4294967296-", 17, big, r, 4), 1);
    is_int(r[0].start, INT64_C(4294967296));
    is_int(r[0].end, big - 1);
    /* negative size (unknown length) is never ranged */
    is_int(hy_range_parse("bytes=0-1", 9, -1, r, 4), 0);
}

/* Build the multipart body exactly as a caller would and compare its length with the arithmetic. */
static void test_multipart(void)
{
    const char *boundary = "00000000000000000014";
    hy_str_t type = HY_STR("text/plain");
    hy_range_t r2[2] = {{0, 0}, {9999, 9999}};
    /* nginx's Content-Length for "bytes=0-0,-1" on a 10000-byte text/plain file with a 20-digit boundary */
    is_int(hy_range_multipart_length(r2, 2, boundary, type, 10000), 208);
    hy_range_t r3[2] = {{0, 1}, {3, 4}};
    is_int(hy_range_multipart_length(r3, 2, boundary, type, 10000), 204);
    hy_range_t r4[2] = {{0, 4999}, {5000, 9999}};
    is_int(hy_range_multipart_length(r4, 2, boundary, type, 10000), 10209);
    hy_range_t r5[3] = {{0, 0}, {0, 0}, {0, 0}};
    is_int(hy_range_multipart_length(r5, 3, boundary, type, 10000), 289);

    char part[256];
    size_t n = hy_range_part_header(part, sizeof(part), boundary, type, &r2[1], 10000);
    is_strn(part, n,
            "\r\n--00000000000000000014\r\nContent-Type: text/plain\r\nContent-Range: bytes 9999-9999/10000\r\n\r\n");
    n = hy_range_multipart_end(part, sizeof(part), boundary);
    is_strn(part, n, "\r\n--00000000000000000014--\r\n");
    n = hy_range_part_header(part, sizeof(part), "B", HY_STR_NULL, &r2[0], 7);
    is_strn(part, n, "\r\n--B\r\nContent-Range: bytes 0-0/7\r\n\r\n");
    n = hy_range_content_range(part, sizeof(part), &r4[1], 10000);
    is_strn(part, n, "bytes 5000-9999/10000");
    /* too small: the length needed is still returned */
    char tiny[8];
    ok(hy_range_part_header(tiny, sizeof(tiny), boundary, type, &r2[0], 10000) > sizeof(tiny));

    /* build real bodies for assorted sets and types, compare with the computed length */
    static const char *types[] = {"", "application/octet-stream", "text/html; charset=utf-8"};
    static const char *values[] = {"bytes=0-0,-1", "bytes=1-2,0-5,9-", "bytes=0-9,10-99,100-999,1000-9999",
                                   "bytes=-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1"};
    int64_t sizes[] = {10000, 123456789, 1};
    for (size_t t = 0; t < HY_ARRAY_SIZE(types); t++) {
        for (size_t v = 0; v < HY_ARRAY_SIZE(values); v++) {
            for (size_t s = 0; s < HY_ARRAY_SIZE(sizes); s++) {
                hy_range_t rr[16];
                int k = hy_range_parse(values[v], strlen(values[v]), sizes[s], rr, 16);
                if (k <= 0)
                    continue;
                hy_str_t ty = {(char *)types[t], strlen(types[t])};
                int64_t body = 0;
                char buf[512];
                for (int i = 0; i < k; i++) {
                    body += (int64_t)hy_range_part_header(buf, sizeof(buf), "0123456789abcdefghij", ty, &rr[i],
                                                          sizes[s]);
                    body += rr[i].end - rr[i].start + 1;
                }
                body += (int64_t)hy_range_multipart_end(buf, sizeof(buf), "0123456789abcdefghij");
                is_int(hy_range_multipart_length(rr, k, "0123456789abcdefghij", ty, sizes[s]), body);
            }
        }
    }
}

static void test_if_range(void)
{
    hy_str_t etag = HY_STR("\"6b0cf68d-2710\"");
    int64_t lm = hy_httpdate_parse("Mon, 30 Nov 2026 04:07:41 GMT", 29);
    ok(lm > 0);
#define IR(v) hy_range_if_range_ok((v), strlen(v), etag, lm)
    ok(IR("\"6b0cf68d-2710\""));
    ok(IR(" \"6b0cf68d-2710\" "));
    ok(!IR("W/\"6b0cf68d-2710\""));
    ok(!IR("\"6b0cf68d-2711\""));
    ok(!IR("\"6b0cf68d-2710"));
    ok(!IR("6b0cf68d-2710\""));
    ok(!IR("\""));
    ok(!IR(""));
    ok(IR("Mon, 30 Nov 2026 04:07:41 GMT"));
    ok(IR("Monday, 30-Nov-26 04:07:41 GMT"));
    ok(IR("Mon Nov 30 04:07:41 2026"));
    ok(!IR("Mon, 30 Nov 2026 04:07:42 GMT"));
    ok(!IR("Mon, 30 Nov 2026 04:07:40 GMT"));
    ok(!IR("Mon, 30 nov 2026 04:07:41 GMT"));
    ok(!IR("garbage"));
#undef IR
    /* weak entity etag never matches, even itself */
    hy_str_t weak = HY_STR("W/\"abc\"");
    ok(!hy_range_if_range_ok("W/\"abc\"", 7, weak, lm));
    ok(!hy_range_if_range_ok("\"abc\"", 5, weak, lm));
    /* no etag / no last-modified */
    ok(!hy_range_if_range_ok("\"abc\"", 5, HY_STR_NULL, lm));
    ok(!hy_range_if_range_ok("Mon, 30 Nov 2026 04:07:41 GMT", 29, etag, -1));
}

int main(void)
{
    subtest("parse table (nginx results)", test_parse_table);
    subtest("parse misc", test_parse_misc);
    subtest("multipart framing and length", test_multipart);
    subtest("If-Range", test_if_range);
    return done_testing();
}
