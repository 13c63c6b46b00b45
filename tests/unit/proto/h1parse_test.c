/* h1parse_test.c — HTTP/1 request parser, framing, chunked decoder, target normaliser and host validation.
 * Expected statuses for edge cases come from experiments against nginx 1.22.1 (noted where we are stricter). */
#include <stdlib.h>
#include "../harness.h"
#include "core/hayate.h"
#include "proto/h1parse.h"
#include "http/uri.h"

#define MAXH 16
#define S(lit) lit, sizeof(lit) - 1

static hy_h1_header_t hdrs[MAXH];

static int parse(const char *buf, size_t len, size_t last_len, size_t max_line, size_t max_hl, hy_h1_request_t *r,
                 size_t cap)
{
    memset(r, 0, sizeof(*r));
    r->headers = hdrs;
    r->num_headers = cap;
    return hy_h1_parse_request(buf, len, last_len, max_line, max_hl, r);
}

static const char *find_header(const hy_h1_request_t *r, const char *name, size_t *vlen)
{
    for (size_t i = 0; i < r->num_headers; i++) {
        if (r->headers[i].name.len == strlen(name) && memcmp(r->headers[i].name.ptr, name, strlen(name)) == 0) {
            *vlen = r->headers[i].value.len;
            return r->headers[i].value.ptr;
        }
    }
    *vlen = 0;
    return NULL;
}

/* ---------------------------------------------------------------- good requests */

struct good_case {
    const char *raw;
    size_t len;
    int consumed; /* -1: whole input */
    const char *method, *target, *request_line;
    int version;
    int nh;
    const char *hname, *hvalue; /* one header to check (optional) */
};

static const struct good_case good[] = {
    {S("GET / HTTP/1.1\r\nHost: a\r\n\r\n"), -1, "GET", "/", "GET / HTTP/1.1", 11, 1, "Host", "a"},
    {S("GET / HTTP/1.0\r\n\r\n"), -1, "GET", "/", "GET / HTTP/1.0", 10, 0, NULL, NULL},
    {S("POST /submit?x=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\n"), -1, "POST", "/submit?x=1",
     "POST /submit?x=1 HTTP/1.1", 11, 2, "Content-Length", "3"},
    {S("DELETE /r HTTP/1.1\r\n\r\n"), -1, "DELETE", "/r", "DELETE /r HTTP/1.1", 11, 0, NULL, NULL},
    {S("OPTIONS * HTTP/1.1\r\n\r\n"), -1, "OPTIONS", "*", "OPTIONS * HTTP/1.1", 11, 0, NULL, NULL},
    {S("PROPFIND /d HTTP/1.1\r\n\r\n"), -1, "PROPFIND", "/d", "PROPFIND /d HTTP/1.1", 11, 0, NULL, NULL},
    /* tchar methods: nginx accepts "G_T"; we follow RFC tchar, so lower case and '-' are accepted too (the request
     * core answers 405/501 to unknown methods; nginx answers 400 "client sent invalid method" to "get") */
    {S("G_T / HTTP/1.1\r\n\r\n"), -1, "G_T", "/", "G_T / HTTP/1.1", 11, 0, NULL, NULL},
    {S("get / HTTP/1.1\r\n\r\n"), -1, "get", "/", "get / HTTP/1.1", 11, 0, NULL, NULL},
    {S("M-SEARCH * HTTP/1.1\r\n\r\n"), -1, "M-SEARCH", "*", "M-SEARCH * HTTP/1.1", 11, 0, NULL, NULL},
    /* OWS around values trimmed, empty value, HTAB inside the value kept */
    {S("GET / HTTP/1.1\r\nX-A: \t  v 1\t2 \t \r\n\r\n"), -1, "GET", "/", NULL, 11, 1, "X-A", "v 1\t2"},
    {S("GET / HTTP/1.1\r\nX-E:\r\n\r\n"), -1, "GET", "/", NULL, 11, 1, "X-E", ""},
    {S("GET / HTTP/1.1\r\nX-E:   \r\n\r\n"), -1, "GET", "/", NULL, 11, 1, "X-E", ""},
    {S("GET / HTTP/1.1\r\nX:a:b:c\r\n\r\n"), -1, "GET", "/", NULL, 11, 1, "X", "a:b:c"},
    /* obs-text in values, high bytes in the target (nginx accepts both) */
    {S("GET /caf\xc3\xa9 HTTP/1.1\r\nX-U: caf\xc3\xa9 \xff\r\n\r\n"), -1, "GET", "/caf\xc3\xa9", NULL, 11, 1, "X-U",
     "caf\xc3\xa9 \xff"},
    /* leading empty lines skipped (RFC 9112 §2.2) and counted in the consumed bytes */
    {S("\r\n\r\nGET /l HTTP/1.1\r\n\r\n"), -1, "GET", "/l", "GET /l HTTP/1.1", 11, 0, NULL, NULL},
    {S("\n\nGET /l HTTP/1.1\n\n"), -1, "GET", "/l", "GET /l HTTP/1.1", 11, 0, NULL, NULL},
    /* bare LF line ends (nginx accepts) */
    {S("GET /lf HTTP/1.1\nHost: a\nX: y\n\n"), -1, "GET", "/lf", "GET /lf HTTP/1.1", 11, 2, "X", "y"},
    {S("GET /lf HTTP/1.1\r\nHost: a\n\r\n"), -1, "GET", "/lf", NULL, 11, 1, "Host", "a"},
    /* several SPs between words, trailing SPs after the version (nginx accepts both) */
    {S("GET   /sp   HTTP/1.1  \r\n\r\n"), -1, "GET", "/sp", "GET   /sp   HTTP/1.1", 11, 0, NULL, NULL},
    /* HTTP/1.2 is processed as 1.1 (RFC 9110 §2.5; nginx does the same) */
    {S("GET / HTTP/1.2\r\n\r\n"), -1, "GET", "/", NULL, 11, 0, NULL, NULL},
    {S("GET / HTTP/1.9\r\n\r\n"), -1, "GET", "/", NULL, 11, 0, NULL, NULL},
    /* absolute-form target as sent */
    {S("GET http://Example.com:8080/a?b HTTP/1.1\r\n\r\n"), -1, "GET", "http://Example.com:8080/a?b", NULL, 11, 0,
     NULL, NULL},
    /* the body is not consumed */
    {S("POST / HTTP/1.1\r\nContent-Length: 4\r\n\r\nbody"), 38, "POST", "/", NULL, 11, 1, "Content-Length", "4"},
    /* underscore and digits in names */
    {S("GET / HTTP/1.1\r\nX_Under_1: z\r\n\r\n"), -1, "GET", "/", NULL, 11, 1, "X_Under_1", "z"},
};

static void check_good(const struct good_case *c, int rc, const hy_h1_request_t *r)
{
    int want = c->consumed < 0 ? (int)c->len : c->consumed;
    if (!is_int(rc, want)) {
        printf("#   case: %s  (%s)\n", c->raw, r->error_reason ? r->error_reason : "");
        return;
    }
    is_strn(r->method.ptr, r->method.len, c->method);
    is_strn(r->target.ptr, r->target.len, c->target);
    if (c->request_line)
        is_strn(r->request_line.ptr, r->request_line.len, c->request_line);
    is_int(r->version, c->version);
    is_int(r->num_headers, c->nh);
    if (c->hname) {
        size_t vl;
        const char *v = find_header(r, c->hname, &vl);
        is_strn(v, vl, c->hvalue);
    }
}

static void test_good(void)
{
    for (size_t i = 0; i < HY_ARRAY_SIZE(good); i++) {
        hy_h1_request_t r;
        int rc = parse(good[i].raw, good[i].len, 0, 8192, 8192, &r, MAXH);
        check_good(&good[i], rc, &r);
    }
}

/* byte by byte: -2 until the last byte, then the same result; once with last_len (cheap path), once without */
static void test_incremental(void)
{
    for (size_t i = 0; i < HY_ARRAY_SIZE(good); i++) {
        const struct good_case *c = &good[i];
        size_t n = c->consumed < 0 ? c->len : (size_t)c->consumed;
        for (int mode = 0; mode < 2; mode++) {
            char *copy = malloc(n); /* exact-size copy so ASan catches reads past the end */
            memcpy(copy, c->raw, n);
            size_t last = 0;
            int bad = 0;
            hy_h1_request_t r;
            for (size_t k = 1; k < n; k++) {
                int rc = parse(copy, k, mode ? last : 0, 8192, 8192, &r, MAXH);
                if (rc != -2) {
                    bad++;
                    printf("#   case %zu mode %d prefix %zu: rc %d\n", i, mode, k, rc);
                    break;
                }
                last = k;
            }
            is_int(bad, 0);
            int rc = parse(copy, n, mode ? last : 0, 8192, 8192, &r, MAXH);
            struct good_case cc = *c;
            cc.consumed = (int)n;
            check_good(&cc, rc, &r);
            free(copy);
        }
    }
}

static void test_pipelined(void)
{
    static const char buf[] = "GET /one HTTP/1.1\r\nHost: a\r\n\r\n"
                              "GET /two HTTP/1.1\r\nHost: b\r\nX: 2\r\n\r\nGET /thr";
    size_t len = sizeof(buf) - 1;
    hy_h1_request_t r;
    int rc = parse(buf, len, 0, 8192, 8192, &r, MAXH);
    is_int(rc, 30);
    is_strn(r.target.ptr, r.target.len, "/one");
    is_int(r.num_headers, 1);
    int rc2 = parse(buf + rc, len - (size_t)rc, 0, 8192, 8192, &r, MAXH);
    is_int(rc2, 36);
    is_strn(r.target.ptr, r.target.len, "/two");
    is_int(r.num_headers, 2);
    size_t vl;
    const char *v = find_header(&r, "X", &vl);
    is_strn(v, vl, "2");
    int rc3 = parse(buf + rc + rc2, len - (size_t)(rc + rc2), 0, 8192, 8192, &r, MAXH);
    is_int(rc3, -2);
    /* blank lines between pipelined requests are skipped (nginx does the same) */
    static const char b2[] = "\r\n\r\nGET /b HTTP/1.1\r\n\r\n";
    is_int(parse(b2, sizeof(b2) - 1, 0, 8192, 8192, &r, MAXH), (int)sizeof(b2) - 1);
    is_strn(r.target.ptr, r.target.len, "/b");
}

/* ---------------------------------------------------------------- errors */

struct bad_case {
    const char *raw;
    size_t len;
    int status;
    const char *reason; /* substring of error_reason */
};

static const struct bad_case bad[] = {
    /* request line */
    {S("GET\t/ HTTP/1.1\r\n\r\n"), 400, "invalid method"},        /* nginx: 400 invalid method */
    {S("G(T / HTTP/1.1\r\n\r\n"), 400, "invalid method"},
    {S(" GET / HTTP/1.1\r\n\r\n"), 400, "invalid method"},
    {S("GET\r\n\r\n"), 400, "invalid method"},
    {S("GET /\r\n\r\n"), 400, "HTTP/0.9"},                         /* nginx answers 0.9; we refuse */
    {S("GET /\n"), 400, "HTTP/0.9"},
    {S("GET /a\x01" "b HTTP/1.1\r\n\r\n"), 400, "invalid request"}, /* nginx: 400 */
    {S("GET /a\x7f HTTP/1.1\r\n\r\n"), 400, "invalid request"},
    {S("GET / HTTP/2.0\r\n\r\n"), 505, "invalid version"},        /* nginx: 505 */
    {S("GET / HTTP/3.0\r\n\r\n"), 505, "invalid version"},        /* nginx: 505 */
    {S("GET / HTTP/3\r\n\r\n"), 505, "invalid version"},
    {S("GET / HTTP/10.0\r\n\r\n"), 505, "invalid version"},
    {S("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), 400, "invalid request"}, /* the HTTP/2 preface; nginx: 400 */
    {S("GET / HTTP/0.9\r\n\r\n"), 400, "invalid request"},
    {S("GET / HTTP/01.1\r\n\r\n"), 400, "invalid request"},       /* nginx: 400 */
    {S("GET / HTTP/1.01\r\n\r\n"), 400, "invalid request"},       /* nginx reads it as 1.1; RFC: one DIGIT */
    {S("GET / HTTP/1\r\n\r\n"), 400, "invalid request"},
    {S("GET / HTTP/1.\r\n\r\n"), 400, "invalid request"},
    {S("GET / HTTP/1.1x\r\n\r\n"), 400, "invalid request"},
    {S("GET / http/1.1\r\n\r\n"), 400, "invalid request"},        /* nginx: 400 */
    {S("GET / HTTP/2.x\r\n\r\n"), 400, "invalid request"},
    {S("GET / FOO\r\n\r\n"), 400, "invalid request"},
    {S("GET / HTTP/1.1\rHost: a\r\n\r\n"), 400, "invalid request"}, /* bare CR: nginx 400 */
    {S("GET / HTTP/1.1 x\r\n\r\n"), 400, "invalid request"},
    {S("\r\rGET / HTTP/1.1\r\n\r\n"), 400, "invalid request"},    /* nginx skips bare CRs here; we do not */
    /* header fields */
    {S("GET / HTTP/1.1\r\nHost: a\r\nX: a\r\n b\r\n\r\n"), 400, "invalid header line"},  /* obs-fold: nginx 400 */
    {S("GET / HTTP/1.1\r\nX: a\r\n\tb\r\n\r\n"), 400, "invalid header line"},
    {S("GET / HTTP/1.1\r\n Host: a\r\n\r\n"), 400, "invalid header line"},              /* ws before 1st field */
    {S("GET / HTTP/1.1\r\nHost : a\r\n\r\n"), 400, "invalid header line"},              /* nginx 400 */
    {S("GET / HTTP/1.1\r\nHost\t: a\r\n\r\n"), 400, "invalid header line"},
    {S("GET / HTTP/1.1\r\n: b\r\n\r\n"), 400, "invalid header line"},                  /* empty name: nginx 400 */
    {S("GET / HTTP/1.1\r\nX: a\0b\r\n\r\n"), 400, "invalid header line"},              /* NUL: nginx 400 */
    {S("GET / HTTP/1.1\r\nX\0: a\r\n\r\n"), 400, "invalid header line"},
    {S("GET / HTTP/1.1\r\nX: a\x01" "b\r\n\r\n"), 400, "invalid header line"},         /* nginx accepts; strict */
    {S("GET / HTTP/1.1\r\nX: a\x7f\r\n\r\n"), 400, "invalid header line"},
    {S("GET / HTTP/1.1\r\nX: a\rb\r\n\r\n"), 400, "invalid header line"},              /* bare CR: nginx 400 */
    {S("GET / HTTP/1.1\r\nX: a\r\n\rX\r\n"), 400, "invalid header line"},
    {S("GET / HTTP/1.1\r\nNoColon\r\n\r\n"), 400, "invalid header line"},              /* nginx ignores it */
};

/* nginx's "invalid header" names (visible non-token bytes) parse; hy_h1_field_name_valid tells them apart so the
 * connection can drop them (ignore_invalid_headers on) or refuse the request (off) */
static void test_invalid_names(void)
{
    static const char *const raw[] = {"GET / HTTP/1.1\r\nX(y): b\r\nHost: a\r\n\r\n",
                                      "GET / HTTP/1.1\r\nX\xc3\xa9: b\r\nHost: a\r\n\r\n",
                                      "GET / HTTP/1.1\r\nFoo@Bar: b\r\nHost: a\r\n\r\n"};
    for (size_t i = 0; i < HY_ARRAY_SIZE(raw); i++) {
        hy_h1_request_t r;
        char copy[128];
        size_t len = strlen(raw[i]);
        memcpy(copy, raw[i], len);
        is_int(parse(copy, len, 0, 8192, 8192, &r, MAXH), (int)len);
        is_int(r.num_headers, 2);
        ok(r.invalid_names); /* the connection checks names only when the parser saw one */
        ok(!hy_h1_field_name_valid(r.headers[0].name));
        ok(hy_h1_field_name_valid(r.headers[1].name));
    }
    hy_h1_request_t tok;
    char g[] = "GET / HTTP/1.1\r\nX-a_b.c!#$%&'*+^`|~9: b\r\nHost: a\r\n\r\n";
    is_int(parse(g, strlen(g), 0, 8192, 8192, &tok, MAXH), (int)strlen(g));
    ok(!tok.invalid_names);
    ok(!hy_h1_field_name_valid((hy_str_t){"", 0}));
    ok(hy_h1_field_name_valid((hy_str_t){"X-a_b.c!#$%&'*+^`|~9", 20}));
}

static void test_errors(void)
{
    for (size_t i = 0; i < HY_ARRAY_SIZE(bad); i++) {
        hy_h1_request_t r;
        char *copy = malloc(bad[i].len);
        memcpy(copy, bad[i].raw, bad[i].len);
        int rc = parse(copy, bad[i].len, 0, 8192, 8192, &r, MAXH);
        if (!is_int(rc, -1)) {
            printf("#   case %zu: %s\n", i, bad[i].raw);
            free(copy);
            continue;
        }
        if (!is_int(r.error_status, bad[i].status))
            printf("#   case %zu: %s\n", i, bad[i].raw);
        ok(r.error_reason != NULL && strstr(r.error_reason, bad[i].reason) != NULL);
        /* the same error is found when the data arrives in two pieces (second call through the cheap path) */
        size_t half = bad[i].len / 2;
        if (parse(copy, half, 0, 8192, 8192, &r, MAXH) == -2) {
            is_int(parse(copy, bad[i].len, half, 8192, 8192, &r, MAXH), -1);
            is_int(r.error_status, bad[i].status);
        }
        /* and when it arrives byte by byte */
        int rc3 = -2;
        size_t last = 0;
        for (size_t k = 1; k <= bad[i].len && rc3 == -2; k++) {
            rc3 = parse(copy, k, last, 8192, 8192, &r, MAXH);
            last = k;
        }
        is_int(rc3, -1);
        is_int(r.error_status, bad[i].status);
        free(copy);
    }
}

static void test_early_errors(void)
{
    hy_h1_request_t r;
    static const char req[] = "GET /\r\n";
    is_int(parse(req, 3, 0, 100, 100, &r, MAXH), -2);
    is_int(parse(req, 6, 3, 100, 100, &r, MAXH), -2); /* "GET /\r": the CR may be followed by LF */
    is_int(parse(req, 7, 6, 100, 100, &r, MAXH), -1); /* line complete: error now, not at the empty line */
    is_int(r.error_status, 400);
    static const char hdr[] = "GET / HTTP/1.1\r\nX : y\r\nHost: a";
    is_int(parse(hdr, 16, 0, 100, 100, &r, MAXH), -2);
    is_int(parse(hdr, sizeof(hdr) - 1, 16, 100, 100, &r, MAXH), -1);
    is_str(r.error_reason, "client sent invalid header line");
    /* a cheap-path call that completes no line only checks the current line's length */
    static const char ok1[] = "GET / HTTP/1.1\r\nHost: aaaaaaaa";
    is_int(parse(ok1, 20, 0, 100, 100, &r, MAXH), -2);
    is_int(parse(ok1, sizeof(ok1) - 1, 20, 100, 100, &r, MAXH), -2);
    is_int(parse(ok1, sizeof(ok1) - 1, 20, 100, 10, &r, MAXH), -1);
    is_int(r.error_status, 400);
    /* a bare CR with no LF anywhere (issue 17): 400 at once, whole or through the cheap path */
    static const char cr[] = "GET / HTTP/1.1\rHost: localhost\r\r";
    is_int(parse(cr, sizeof(cr) - 1, 0, 100, 100, &r, MAXH), -1);
    is_int(r.error_status, 400);
    is_int(parse(cr, 14, 0, 100, 100, &r, MAXH), -2);
    is_int(parse(cr, 15, 14, 100, 100, &r, MAXH), -2); /* "...HTTP/1.1\r": the CR may be followed by LF */
    is_int(parse(cr, 16, 15, 100, 100, &r, MAXH), -1); /* the CR that ended the last read is bare */
    is_int(r.error_status, 400);
    is_int(parse(cr, sizeof(cr) - 1, 14, 100, 100, &r, MAXH), -1);
    is_int(r.error_status, 400);
}

static void test_limits(void)
{
    hy_h1_request_t r;
    char big[20000];
    /* request line exactly at the limit passes, one more byte is 414 */
    int n = snprintf(big, sizeof(big), "GET /%s HTTP/1.1\r\n\r\n", "aaaaaaaaaa");
    size_t line = (size_t)n - 4;
    is_int(parse(big, (size_t)n, 0, line, 100, &r, MAXH), n);
    is_int(parse(big, (size_t)n, 0, line - 1, 100, &r, MAXH), -1);
    is_int(r.error_status, 414);
    is_str(r.error_reason, "client sent too long URI");
    /* 414 while the line is still incomplete: full parse and cheap path */
    memset(big, 'a', sizeof(big));
    memcpy(big, "GET /", 5);
    is_int(parse(big, 100, 0, 100, 100, &r, MAXH), -2);
    is_int(parse(big, 101, 0, 100, 100, &r, MAXH), -1);
    is_int(r.error_status, 414);
    is_int(parse(big, 101, 100, 100, 100, &r, MAXH), -1);
    is_int(r.error_status, 414);
    /* 0 means no limit */
    is_int(parse(big, sizeof(big), 0, 0, 0, &r, MAXH), -2);
    /* a CR at the end of an incomplete line is not counted (it may be the CR of CRLF) */
    memcpy(big + 100 - 9, " HTTP/1.1\r", 10);
    is_int(parse(big, 101, 0, 100, 100, &r, MAXH), -2);
    is_int(parse(big, 101, 99, 100, 100, &r, MAXH), -2);
    is_int(parse(big, 101, 0, 99, 100, &r, MAXH), -1);
    is_int(r.error_status, 414);

    /* header line limit: complete line, incomplete line (full parse and cheap path) */
    n = snprintf(big, sizeof(big), "GET / HTTP/1.1\r\nX: 123456789\r\n\r\n"); /* "X: 123456789" = 12 bytes */
    is_int(parse(big, (size_t)n, 0, 100, 12, &r, MAXH), n);
    is_int(parse(big, (size_t)n, 0, 100, 11, &r, MAXH), -1);
    is_int(r.error_status, 400);
    is_str(r.error_reason, "client sent too long header line");
    is_int(parse(big, 28, 0, 100, 11, &r, MAXH), -1); /* "X: 123456789" partial: 12 > 11 */
    is_int(r.error_status, 400);
    is_int(parse(big, 28, 20, 100, 11, &r, MAXH), -1);
    is_int(r.error_status, 400);
    is_int(parse(big, 27, 20, 100, 11, &r, MAXH), -2);

    /* too many header lines for the array */
    n = snprintf(big, sizeof(big), "GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n");
    is_int(parse(big, (size_t)n, 0, 100, 100, &r, 3), n);
    is_int(r.num_headers, 3);
    is_int(parse(big, (size_t)n, 0, 100, 100, &r, 2), -1);
    is_int(r.error_status, 400);
    is_str(r.error_reason, "client sent too many header lines");
    is_int(parse(big, (size_t)n, 0, 100, 100, &r, 0), -1);
}

/* ---------------------------------------------------------------- framing */

struct framing_case {
    const char *raw;
    int rc;
    int status;
    int64_t cl;
    bool chunked;
};

static const struct framing_case framing[] = {
    {"GET / HTTP/1.1\r\nHost: a\r\n\r\n", 0, 0, -1, false},
    {"POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\n", 0, 0, 3, false},
    {"POST / HTTP/1.1\r\ncontent-length: 0\r\n\r\n", 0, 0, 0, false},
    {"POST / HTTP/1.1\r\nContent-Length: 0003\r\n\r\n", 0, 0, 3, false},           /* nginx: 200 */
    {"POST / HTTP/1.1\r\nContent-Length:  3 \r\n\r\n", 0, 0, 3, false},             /* OWS trimmed; nginx: 200 */
    {"POST / HTTP/1.1\r\nContent-Length: 9223372036854775807\r\n\r\n", 0, 0, INT64_MAX, false},
    {"POST / HTTP/1.0\r\nContent-Length: 5\r\n\r\n", 0, 0, 5, false},
    {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", 0, 0, -1, true},
    {"POST / HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n", 0, 0, -1, true},    /* nginx: 200 */
    {"POST / HTTP/1.1\r\nTRANSFER-ENCODING: CHUNKED \r\n\r\n", 0, 0, -1, true},
    /* errors */
    {"POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", -1, 400, -1, false}, /* nginx 400 */
    {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n", -1, 400, -1, false},
    {"POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: gzip\r\n\r\n", -1, 400, -1, false}, /* nginx 501 */
    {"POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n", -1, 400, -1, false},       /* nginx 400 */
    {"POST / HTTP/1.1\r\nContent-Length: 3\r\ncontent-length: 4\r\n\r\n", -1, 400, -1, false},
    {"POST / HTTP/1.1\r\nContent-Length: 3x\r\n\r\n", -1, 400, -1, false},                           /* nginx 400 */
    {"POST / HTTP/1.1\r\nContent-Length: +3\r\n\r\n", -1, 400, -1, false},                           /* nginx 400 */
    {"POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", -1, 400, -1, false},
    {"POST / HTTP/1.1\r\nContent-Length: 3 4\r\n\r\n", -1, 400, -1, false},
    {"POST / HTTP/1.1\r\nContent-Length: 3, 3\r\n\r\n", -1, 400, -1, false},                         /* nginx 400 */
    {"POST / HTTP/1.1\r\nContent-Length:\r\n\r\n", -1, 400, -1, false},                              /* nginx 400 */
    {"POST / HTTP/1.1\r\nContent-Length: 0x10\r\n\r\n", -1, 400, -1, false},
    {"POST / HTTP/1.1\r\nContent-Length: 9223372036854775808\r\n\r\n", -1, 400, -1, false},
    {"POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n", -1, 400, -1, false},      /* nginx 400 */
    {"POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", -1, 501, -1, false},            /* nginx 501 */
    {"POST / HTTP/1.1\r\nTransfer-Encoding: identity\r\n\r\n", -1, 501, -1, false},                 /* nginx 501 */
    {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", -1, 501, -1, false},         /* nginx 501 */
    {"POST / HTTP/1.1\r\nTransfer-Encoding:\r\n\r\n", -1, 501, -1, false},                          /* nginx 501 */
    {"POST / HTTP/1.1\r\nTransfer-Encoding: chunkedx\r\n\r\n", -1, 501, -1, false},
    {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", -1, 400, -1, false},
    {"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", -1, 400, -1, false},                  /* nginx 400 */
};

static void test_framing(void)
{
    for (size_t i = 0; i < HY_ARRAY_SIZE(framing); i++) {
        const struct framing_case *c = &framing[i];
        hy_h1_request_t r;
        size_t len = strlen(c->raw);
        if (!is_int(parse(c->raw, len, 0, 8192, 8192, &r, MAXH), (int)len))
            continue;
        int64_t cl = 42;
        bool ch = true;
        int status = 0;
        const char *reason = NULL;
        int rc = hy_h1_framing(&r, &cl, &ch, &status, &reason);
        if (!is_int(rc, c->rc))
            printf("#   case %zu: %s\n", i, c->raw);
        if (rc == 0) {
            is_int(cl, c->cl);
            is_int(ch, c->chunked);
        } else {
            is_int(status, c->status);
            ok(reason != NULL && strncmp(reason, "client sent", 11) == 0);
        }
    }
    /* reasons in nginx's wording */
    hy_h1_request_t r;
    const char *raw = "POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n";
    parse(raw, strlen(raw), 0, 0, 0, &r, MAXH);
    int64_t cl;
    bool ch;
    int st;
    const char *reason = NULL;
    is_int(hy_h1_framing(&r, &cl, &ch, &st, &reason), -1);
    is_str(reason, "client sent duplicate header line");
}

/* ---------------------------------------------------------------- chunked */

struct chunk_case {
    const char *in;
    size_t len;
    ssize_t rc;          /* -1 invalid, -2 incomplete, >= 0 leftover */
    const char *payload; /* expected payload (when rc != -1) */
    const char *leftover;
};

static const struct chunk_case chunks[] = {
    {S("3\r\nabc\r\n0\r\n\r\n"), 0, "abc", ""},
    {S("0\r\n\r\n"), 0, "", ""},
    {S("3\r\nabc\r\n4\r\ndefg\r\n0\r\n\r\n"), 0, "abcdefg", ""},
    {S("A\r\n0123456789\r\n0\r\n\r\n"), 0, "0123456789", ""},
    {S("a\r\n0123456789\r\n000\r\n\r\n"), 0, "0123456789", ""},
    {S("0003\r\nabc\r\n0\r\n\r\n"), 0, "abc", ""},
    {S("3;ext=val\r\nabc\r\n0;last\r\n\r\n"), 0, "abc", ""},                   /* nginx 200 */
    {S("3 ;a=\"q s\"\r\nabc\r\n0\r\n\r\n"), 0, "abc", ""},
    {S("3 \r\nabc\r\n0\r\n\r\n"), 0, "abc", ""},                               /* nginx 200 */
    {S("3\nabc\n0\n\n"), 0, "abc", ""},                                        /* nginx 200 */
    {S("3\r\nabc\r\n0\r\nX-T: 1\r\nY: 2\r\n\r\n"), 0, "abc", ""},              /* trailers skipped */
    {S("3\r\nabc\r\n0\r\n\r\nGET / HTTP/1.1\r\n"), 16, "abc", "GET / HTTP/1.1\r\n"},
    {S("2\r\nhi\r\n0\r\nT: v\r\n\r\nNEXT"), 4, "hi", "NEXT"},
    {S("3\r\nabc\r\n"), -2, "abc", ""},
    {S("3\r\nab"), -2, "ab", ""},
    {S("3\r\nabc\r\n0\r\n"), -2, "abc", ""},
    {S("3\r\nabc\r\n0\r\nX: 1\r\n"), -2, "abc", ""},
    {S("fffffffffffffff\r\n"), -2, "", ""},                                    /* 2^60-1: fine */
    {S("3fffffffffffffff\r\n"), -2, "", ""},                                   /* 2^62-1: the maximum */
    /* invalid */
    {S("zz\r\nabc\r\n0\r\n\r\n"), -1, NULL, NULL},                              /* nginx 400 */
    {S("0x3\r\nabc\r\n0\r\n\r\n"), -1, NULL, NULL},                             /* nginx 400 */
    {S("\r\nabc\r\n0\r\n\r\n"), -1, NULL, NULL},
    {S(";x\r\nabc\r\n0\r\n\r\n"), -1, NULL, NULL},
    {S("-3\r\nabc\r\n0\r\n\r\n"), -1, NULL, NULL},
    {S("+3\r\nabc\r\n0\r\n\r\n"), -1, NULL, NULL},
    {S(" 3\r\nabc\r\n0\r\n\r\n"), -1, NULL, NULL},
    {S("3 3\r\nabc\r\n0\r\n\r\n"), -1, NULL, NULL},
    {S("3\r\nabcX\r\n0\r\n\r\n"), -1, NULL, NULL},                              /* missing CRLF: nginx 400 */
    {S("3\r\nabc\rX0\r\n\r\n"), -1, NULL, NULL},
    {S("3\rX\nabc\r\n0\r\n\r\n"), -1, NULL, NULL},                              /* bare CR */
    {S("4000000000000000\r\n"), -1, NULL, NULL},                                /* 2^62: overflow */
    {S("ffffffffffffffffff\r\nabc\r\n0\r\n\r\n"), -1, NULL, NULL},              /* nginx 400 */
    {S("3;a\x01\r\nabc\r\n0\r\n\r\n"), -1, NULL, NULL},                         /* CTL in extension */
    {S("3\r\nabc\r\n0\r\nX: a\0b\r\n\r\n"), -1, NULL, NULL},                    /* NUL in trailer */
    {S("3\r\nabc\r\n0\r\nX: a\r\n b\r\n\r\n"), -1, NULL, NULL},                 /* obs-fold in trailer */
    {S("3\r\nabc\r\n0\r\n\rX"), -1, NULL, NULL},
};

/* decode `in` cut into pieces at the given offsets (sorted, < len); accumulate payload and leftover */
static ssize_t decode_split(const char *in, size_t len, const size_t *cuts, size_t ncuts, char *payload,
                            size_t *plen, char *left, size_t *llen)
{
    hy_h1_chunked_t d = {0};
    size_t pos = 0;
    *plen = 0;
    *llen = 0;
    ssize_t rc = -2;
    for (size_t k = 0; k <= ncuts; k++) {
        size_t stop = k < ncuts ? cuts[k] : len;
        size_t n = stop - pos;
        char *piece = malloc(n + 1);
        memcpy(piece, in + pos, n);
        size_t dl = n;
        rc = hy_h1_decode_chunked(&d, piece, &dl);
        if (rc == -1) {
            free(piece);
            return -1;
        }
        memcpy(payload + *plen, piece, dl);
        *plen += dl;
        if (rc >= 0) {
            memcpy(left, piece + dl, (size_t)rc);
            *llen = (size_t)rc;
            /* the rest of the input, if any, is leftover too */
            memcpy(left + *llen, in + stop, len - stop);
            *llen += len - stop;
            free(piece);
            return (ssize_t)*llen;
        }
        free(piece);
        pos = stop;
    }
    return rc;
}

static void test_chunked(void)
{
    char payload[256], left[256];
    size_t plen, llen;
    for (size_t i = 0; i < HY_ARRAY_SIZE(chunks); i++) {
        const struct chunk_case *c = &chunks[i];
        /* whole, then every 2-piece split, then byte by byte */
        for (size_t cut = 0; cut <= c->len + 1; cut++) {
            size_t cuts[256];
            size_t ncuts = 0;
            if (cut == c->len + 1) {
                for (size_t k = 1; k < c->len; k++)
                    cuts[ncuts++] = k;
            } else if (cut > 0 && cut < c->len) {
                cuts[ncuts++] = cut;
            }
            ssize_t rc = decode_split(c->in, c->len, cuts, ncuts, payload, &plen, left, &llen);
            if (!is_int(rc, c->rc)) {
                printf("#   chunk case %zu cut %zu\n", i, cut);
                break;
            }
            if (rc != -1)
                is_strn(payload, plen, c->payload);
            if (rc >= 0)
                is_strn(left, llen, c->leftover);
        }
    }

    /* in place: payload at buf[0..len), leftover right after it */
    char buf[] = "5\r\nhello\r\n1;x=y\r\n!\r\n0\r\nTrailer: t\r\n\r\nGET /next";
    size_t len = strlen(buf);
    hy_h1_chunked_t d = {0};
    ssize_t rc = hy_h1_decode_chunked(&d, buf, &len);
    is_int(rc, 9);
    is_int(len, 6);
    is_strn(buf, len, "hello!");
    is_strn(buf + len, (size_t)rc, "GET /next");
    ok(hy_h1_chunked_done(&d));
    is_int(d.total, 6);
    /* after completion everything is leftover */
    char more[] = "xyz";
    size_t ml = 3;
    is_int(hy_h1_decode_chunked(&d, more, &ml), 3);
    is_int(ml, 0);

    /* size line and trailer limits */
    static char longline[HY_H1_CHUNK_LINE_MAX + 16];
    memset(longline, 'a', sizeof(longline));
    memcpy(longline, "1;", 2);
    hy_h1_chunked_t d2 = {0};
    size_t l2 = HY_H1_CHUNK_LINE_MAX;
    is_int(hy_h1_decode_chunked(&d2, longline, &l2), -2);
    hy_h1_chunked_t d3 = {0};
    size_t l3 = sizeof(longline);
    is_int(hy_h1_decode_chunked(&d3, longline, &l3), -1);

    /* overflow in a later chunk after a big one */
    char big[] = "3FFFFFFFFFFFFFFF0\r\n";
    hy_h1_chunked_t d4 = {0};
    size_t l4 = strlen(big);
    is_int(hy_h1_decode_chunked(&d4, big, &l4), -1);
}

/* ---------------------------------------------------------------- target normalisation */

struct target_case {
    const char *method, *target;
    bool merge;
    int rc;
    const char *path, *args, *host; /* args/host NULL: none */
};

static const struct target_case targets[] = {
    /* nginx experiment results (merge_slashes on unless stated) */
    {"GET", "//a/./b/../c", true, 0, "/a/c", NULL, NULL},
    {"GET", "//a/./b/../c", false, 0, "//a/c", NULL, NULL},            /* merge_slashes off */
    {"GET", "/../x", true, -1, NULL, NULL, NULL},
    {"GET", "/%2e%2e/x", true, -1, NULL, NULL, NULL},
    {"GET", "/a/%2F..", true, 0, "/", NULL, NULL},
    {"GET", "/a/%2F..", false, 0, "/a/", NULL, NULL},
    {"GET", "/a%2Fb", true, 0, "/a/b", NULL, NULL},
    {"GET", "/a/b%2F..%2Fc", true, 0, "/a/c", NULL, NULL},
    {"GET", "/a%00b", true, -1, NULL, NULL, NULL},
    {"GET", "/a%zzb", true, -1, NULL, NULL, NULL},
    {"GET", "/a%2", true, -1, NULL, NULL, NULL},
    {"GET", "/a%", true, -1, NULL, NULL, NULL},
    {"GET", "/a?x=%zz", true, 0, "/a", "x=%zz", NULL},                 /* args not decoded */
    {"GET", "/a/b/.", true, 0, "/a/b/", NULL, NULL},
    {"GET", "/a/b/..", true, 0, "/a/", NULL, NULL},
    {"GET", "/a/..", true, 0, "/", NULL, NULL},
    {"GET", "/..", true, -1, NULL, NULL, NULL},
    {"GET", "/.", true, 0, "/", NULL, NULL},
    {"GET", "/./", true, 0, "/", NULL, NULL},
    {"GET", "/a/.../b", true, 0, "/a/.../b", NULL, NULL},
    {"GET", "/a/..x/b", true, 0, "/a/..x/b", NULL, NULL},
    {"GET", "/a/.b", true, 0, "/a/.b", NULL, NULL},
    {"GET", "/.hidden/..", true, 0, "/", NULL, NULL},
    {"GET", "/a\\..\\b", true, 0, "/a\\..\\b", NULL, NULL},             /* backslash is not a separator */
    {"GET", "/a#frag", true, 0, "/a", NULL, NULL},
    {"GET", "/a?b#c", true, 0, "/a", "b", NULL},
    {"GET", "/a#b?c", true, 0, "/a", NULL, NULL},
    {"GET", "/%23", true, 0, "/#", NULL, NULL},
    {"GET", "/a%3Fb?c", true, 0, "/a?b", "c", NULL},
    {"GET", "/a/b/..?x", true, 0, "/a/", "x", NULL},
    {"GET", "/a/b/%2e", true, 0, "/a/b/", NULL, NULL},
    {"GET", "/a/b/%2e%2e", true, 0, "/a/", NULL, NULL},
    {"GET", "/a/.%2e/", true, 0, "/", NULL, NULL},
    {"GET", "/a/b/.%2E", true, 0, "/a/", NULL, NULL},
    {"GET", "//..", true, -1, NULL, NULL, NULL},
    {"GET", "//..", false, 0, "/", NULL, NULL},
    {"GET", "/a//..", false, 0, "/a/", NULL, NULL},
    {"GET", "//a//b/../..", false, 0, "//a/", NULL, NULL},
    {"GET", "///..", false, 0, "//", NULL, NULL},
    {"GET", "/%2f%2F", true, 0, "/", NULL, NULL},
    {"GET", "/%2f%2F", false, 0, "///", NULL, NULL},
    {"GET", "/a/../../b", true, -1, NULL, NULL, NULL},
    {"GET", "/a/b/../../..", true, -1, NULL, NULL, NULL},
    {"GET", "/a//b", true, 0, "/a/b", NULL, NULL},
    {"GET", "/a/./../b", true, 0, "/b", NULL, NULL},
    {"GET", "/a;x/../b", true, 0, "/b", NULL, NULL},
    {"GET", "/a%20b", true, 0, "/a b", NULL, NULL},
    {"GET", "/%41%62", true, 0, "/Ab", NULL, NULL},
    {"GET", "/a%2e/b", true, 0, "/a./b", NULL, NULL},
    {"GET", "/a/%2e/b", true, 0, "/a/b", NULL, NULL},
    {"GET", "/a%ff", true, 0, "/a\xff", NULL, NULL},
    {"GET", "/a?", true, 0, "/a", "", NULL},
    {"GET", "/?x?y", true, 0, "/", "x?y", NULL},
    {"GET", "/", true, 0, "/", NULL, NULL},
    /* absolute-form (RFC 9112 §3.2.2): host overrides the Host header */
    {"GET", "http://Example.COM:8080/a/../b?q=1", true, 0, "/b", "q=1", "Example.COM:8080"},
    {"GET", "http://host", true, 0, "/", NULL, "host"},
    {"GET", "http://host?x", true, 0, "/", "x", "host"},
    {"GET", "HTTP://Host/p", true, 0, "/p", NULL, "Host"},
    {"GET", "https://host/p", true, 0, "/p", NULL, "host"},
    {"GET", "ftp://h/p", true, 0, "/p", NULL, "h"},                     /* nginx accepts any scheme */
    {"GET", "http://[::1]:8/p", true, 0, "/p", NULL, "[::1]:8"},
    {"GET", "http://h:/p", true, 0, "/p", NULL, "h:"},
    {"GET", "http://u@h/p", true, -1, NULL, NULL, NULL},
    {"GET", "http://h:80:90/p", true, -1, NULL, NULL, NULL},
    {"GET", "http://a..b/p", true, -1, NULL, NULL, NULL},
    {"GET", "http://h:abc/p", true, -1, NULL, NULL, NULL},
    {"GET", "http:/h/p", true, -1, NULL, NULL, NULL},
    {"GET", "http:///p", true, -1, NULL, NULL, NULL},
    {"GET", "http://h/../x", true, -1, NULL, NULL, NULL},
    {"GET", "1http://h/p", true, -1, NULL, NULL, NULL},
    /* asterisk-form: only OPTIONS (nginx 1.22 answers 400 even to OPTIONS *) */
    {"OPTIONS", "*", true, 0, "*", NULL, NULL},
    {"GET", "*", true, -1, NULL, NULL, NULL},
    {"OPTIONS", "*x", true, -1, NULL, NULL, NULL},
    /* other forms and raw junk */
    {"GET", "a/b", true, -1, NULL, NULL, NULL},
    {"CONNECT", "example.com:443", true, -1, NULL, NULL, NULL},
    {"GET", "", true, -1, NULL, NULL, NULL},
    {"GET", "/a b", true, -1, NULL, NULL, NULL},
    {"GET", "/a\x01", true, -1, NULL, NULL, NULL},
};

static void test_targets(void)
{
    for (size_t i = 0; i < HY_ARRAY_SIZE(targets); i++) {
        const struct target_case *c = &targets[i];
        size_t tl = strlen(c->target);
        char *t = malloc(tl + 1); /* exact size: ASan catches over-reads */
        memcpy(t, c->target, tl);
        char *out = malloc(tl + 1);
        size_t out_len = 99;
        hy_str_t args, host;
        hy_str_t method = {(char *)c->method, strlen(c->method)};
        int rc = hy_http_parse_target(method, (hy_str_t){t, tl}, c->merge, out, &out_len, &args, &host);
        if (!is_int(rc, c->rc)) {
            printf("#   target %zu: %s -> %.*s\n", i, c->target, rc == 0 ? (int)out_len : 0, out);
        } else if (rc == 0) {
            is_strn(out, out_len, c->path);
            is_int(out[out_len], 0);
            if (c->args) {
                is_strn(args.ptr, args.len, c->args);
            } else {
                ok(args.ptr == NULL && args.len == 0);
            }
            if (c->host) {
                is_strn(host.ptr, host.len, c->host);
            } else {
                ok(host.ptr == NULL && host.len == 0);
            }
        }
        free(out);
        free(t);
    }
}

/* ---------------------------------------------------------------- host validation */

struct host_case {
    const char *in;
    ssize_t rc;
    const char *out;
};

static const struct host_case hosts[] = {
    {"example.com", 11, "example.com"},
    {"Ex.COM.:80", 6, "ex.com"},             /* nginx: host=ex.com */
    {"a.:", 1, "a"},                         /* nginx: host=a */
    {"[::1]:8080", 5, "[::1]"},              /* nginx: host=[::1] */
    {"[::1]", 5, "[::1]"},
    {"[2001:DB8::1]", 13, "[2001:db8::1]"},
    {"[::ffff:1.2.3.4]:1", 16, "[::ffff:1.2.3.4]"},
    {"127.0.0.1:18080", 9, "127.0.0.1"},
    {"a_b-c", 5, "a_b-c"},                   /* nginx: ok */
    {"caf\xc3\xa9.com", 9, "caf\xc3\xa9.com"}, /* raw UTF-8: nginx ok */
    {"localhost", 9, "localhost"},
    {"a:", 1, "a"},
    {"a..b", -1, NULL},                      /* nginx: 400 */
    {"a/b", -1, NULL},                       /* nginx: 400 */
    {"a..", -1, NULL},                       /* nginx: 400 */
    {".", -1, NULL},                         /* nginx: 400 */
    {":80", -1, NULL},                       /* nginx: 400 */
    {"", -1, NULL},                          /* nginx: 400 */
    {"a b", -1, NULL},                       /* nginx: 400 */
    {"a\\b", -1, NULL},                      /* nginx accepts; we do not */
    {".a", -1, NULL},                        /* nginx accepts; empty label */
    {"u@a", -1, NULL},                       /* nginx accepts */
    {"a:b", -1, NULL},                       /* nginx strips anything after ':'; port must be digits */
    {"a:1:2", -1, NULL},
    {"[::1", -1, NULL},                      /* nginx accepts */
    {"[::1]x", -1, NULL},                    /* nginx accepts */
    {"[]", -1, NULL},
    {"[::g]", -1, NULL},
    {"[.99...:]", -1, NULL},                 /* found by the fuzzer */
    {"[1.2.3.4]", -1, NULL},
    {"[::1%eth0]", -1, NULL},
    {"[:::1]", -1, NULL},
    {"a\tb", -1, NULL},
    {"a\x7f", -1, NULL},
};

static void test_hosts(void)
{
    for (size_t i = 0; i < HY_ARRAY_SIZE(hosts); i++) {
        size_t l = strlen(hosts[i].in);
        char *h = malloc(l + 1);
        memcpy(h, hosts[i].in, l);
        ssize_t rc = hy_http_validate_host(h, l);
        if (!is_int(rc, hosts[i].rc))
            printf("#   host %zu: %s\n", i, hosts[i].in);
        else if (rc >= 0)
            is_strn(h, (size_t)rc, hosts[i].out);
        free(h);
    }
    /* NUL inside */
    char nul[] = "a\0b";
    is_int(hy_http_validate_host(nul, 3), -1);
    /* NUL inside an IPv6 literal: inet_pton stopped at it and took "[::\0!]" for [::] (found by target_fuzz) */
    char nul6[] = "[::\0!]:81";
    is_int(hy_http_validate_host(nul6, sizeof(nul6) - 1), -1);
}

int main(void)
{
    subtest("good requests", test_good);
    subtest("incremental parsing", test_incremental);
    subtest("pipelined requests", test_pipelined);
    subtest("errors", test_errors);
    subtest("invalid field names parse, flagged by hy_h1_field_name_valid", test_invalid_names);
    subtest("early errors", test_early_errors);
    subtest("limits", test_limits);
    subtest("framing", test_framing);
    subtest("chunked", test_chunked);
    subtest("targets", test_targets);
    subtest("hosts", test_hosts);
    return done_testing();
}
