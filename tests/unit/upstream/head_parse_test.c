/* head_parse_test.c — the upstream engine's pure parsers: one response-head field line (hy_upstream_field), a CGI
 * head's end and its parse (Status:, an HTTP status line, Location without Status, Content-Length), the upstream
 * field lookup ('_' matches '-'), *_bind literals, and the memcached key's escaping. */
#include <stdlib.h>
#include <arpa/inet.h>
#include "../harness.h"
#include "core/mem.h"
#include "upstream/upstream.h"
#include "upstream/uconf.h"
#include "upstream/memcached.h"

#define S(lit) lit, sizeof(lit) - 1

static hy_pool_t *pool;
static hy_req_t req;
static hy_ureq_t u;

static int field(const char *text, bool strict, hy_str_t *n, hy_str_t *v, size_t *used)
{
    static char buf[256];
    size_t len = strlen(text);
    memcpy(buf, text, len);
    char *pos = buf;
    int r = hy_upstream_field(&pos, buf + len, strict, n, v);
    *used = (size_t)(pos - buf);
    return r;
}

static void test_field(void)
{
    hy_str_t n, v;
    size_t used;
    is_int(field("Name: value\r\nNext: x\r\n", true, &n, &v, &used), 1);
    is_strn(n.ptr, n.len, "Name");
    is_strn(v.ptr, v.len, "value");
    is_int(used, 13);
    is_int(field("A:\t  spaced  \t\n", true, &n, &v, &used), 1); /* bare LF; blanks trimmed both sides */
    is_strn(v.ptr, v.len, "spaced");
    is_int(field("Empty:\r\n", true, &n, &v, &used), 1);
    is_int(v.len, 0);
    is_int(field("\r\nrest", true, &n, &v, &used), 0); /* the empty line */
    is_int(used, 0);
    is_int(field("\n", true, &n, &v, &used), 0);
    is_int(field("No-End: x", true, &n, &v, &used), -1);   /* no line end yet */
    is_int(field("no colon\r\n", true, &n, &v, &used), -1);
    is_int(field(": no name\r\n", true, &n, &v, &used), -1);
    is_int(field("Sp ace: x\r\n", true, &n, &v, &used), -1); /* a space in the name */
    is_int(field("Del\x7f: x\r\n", true, &n, &v, &used), -1);
    is_int(field("Ctl: a\x01" "b\r\n", true, &n, &v, &used), -1); /* strict: control in the value */
    is_int(field("Ctl: a\x01" "b\r\n", false, &n, &v, &used), 1); /* lenient (CGI heads) */
    is_int(field("Tab: a\tb\r\n", true, &n, &v, &used), 1);        /* a tab is no control here */
}

static void test_cgi_head_end(void)
{
    is_int(hy_uconf_cgi_head_end(S("")), 0);
    is_int(hy_uconf_cgi_head_end(S("\nbody")), 1);
    is_int(hy_uconf_cgi_head_end(S("\r\nbody")), 2);
    is_int(hy_uconf_cgi_head_end(S("A: b\n\nbody")), 6);
    is_int(hy_uconf_cgi_head_end(S("A: b\r\n\r\nbody")), 8);
    is_int(hy_uconf_cgi_head_end(S("A: b\n\r\nbody")), 7);
    is_int(hy_uconf_cgi_head_end(S("A: b\r\nC: d\r\n")), 0); /* not complete yet */
    is_int(hy_uconf_cgi_head_end(S("A: b\r\n\r")), 0);
}

static int cgi(const char *text)
{
    static char buf[512];
    size_t n = strlen(text);
    memcpy(buf, text, n);
    return hy_uconf_parse_cgi_head(&u, buf, n);
}

static const char *in_header(const char *name)
{
    static char out[128];
    const hy_str_t *v = hy_upstream_header(&u, (hy_str_t){(char *)name, strlen(name)});
    if (v == NULL)
        return NULL;
    snprintf(out, sizeof(out), "%.*s", (int)v->len, v->ptr);
    return out;
}

static void test_cgi_head(void)
{
    is_int(cgi("Status: 404 Not Here\r\nContent-Type: text/plain\r\nContent-Length: 12\r\n\r\n"), 0);
    is_int(u.status, 404);
    is_strn(u.status_line.ptr, u.status_line.len, "Not Here");
    is_int(u.resp_length, 12);
    is_str(in_header("content_type"), "text/plain"); /* '_' matches '-', any case */
    is_str(in_header("CONTENT-LENGTH"), "12");
    ok(in_header("Status") == NULL); /* consumed, not passed on */
    ok(in_header("X-None") == NULL);
    ok(in_header("Content-Typ") == NULL);

    is_int(cgi("Status: 201\n\n"), 0);
    is_int(u.status, 201);
    is_int(u.status_line.len, 0);

    is_int(cgi("Location: /elsewhere\r\n\r\n"), 0); /* no Status: a redirect */
    is_int(u.status, 302);
    is_int(cgi("Content-Type: text/html\r\n\r\n"), 0);
    is_int(u.status, 200);
    is_int(u.resp_length, -1);

    is_int(cgi("HTTP/1.1 203 Partial Info\r\nX-A: 1\r\n\r\n"), 0); /* an HTTP status line (uwsgi apps) */
    is_int(u.status, 203);
    is_strn(u.status_line.ptr, u.status_line.len, "Partial Info");
    is_str(in_header("x-a"), "1");
    is_int(cgi("HTTP/1.0 200\r\n\r\n"), 0);
    is_int(u.status, 200);

    is_int(cgi("HTTP/1.1 2x0 Bad\r\n\r\n"), -1);
    is_int(cgi("HTTP/1.1-nospace\r\n\r\n"), -1);
    is_int(cgi("Status: abc\r\n\r\n"), -1);
    is_int(cgi("Status: 099\r\n\r\n"), -1);
    is_int(cgi("Status: 2000\r\n\r\n"), -1);
    is_int(cgi("Content-Length: -5\r\n\r\n"), -1);
    is_int(cgi("Content-Length: many\r\n\r\n"), -1);
    is_int(cgi("broken line\r\n\r\n"), -1);
    ok(hy_upstream_header(NULL, HY_STR("x")) == NULL);
}

static void test_bind(void)
{
    struct sockaddr_storage ss;
    socklen_t len = 0;
    is_int(hy_uconf_parse_bind(HY_STR("127.0.0.2"), &ss, &len), 0);
    is_int(ss.ss_family, AF_INET);
    is_int(len, sizeof(struct sockaddr_in));
    is_int(hy_uconf_parse_bind(HY_STR("::1"), &ss, &len), 0);
    is_int(ss.ss_family, AF_INET6);
    is_int(len, sizeof(struct sockaddr_in6));
    is_int(hy_uconf_parse_bind(HY_STR("127.0.0.1:80"), &ss, &len), 0); /* an optional port (nginx 1.11.2) */
    is_int(ntohs(((struct sockaddr_in *)&ss)->sin_port), 80);
    is_int(hy_uconf_parse_bind(HY_STR("[::1]:8080"), &ss, &len), 0);
    is_int(ss.ss_family, AF_INET6);
    is_int(ntohs(((struct sockaddr_in6 *)&ss)->sin6_port), 8080);
    is_int(hy_uconf_parse_bind(HY_STR("[::1]"), &ss, &len), 0);
    is_int(ntohs(((struct sockaddr_in6 *)&ss)->sin6_port), 0);
    is_int(hy_uconf_parse_bind(HY_STR("127.0.0.1:"), &ss, &len), -1);
    is_int(hy_uconf_parse_bind(HY_STR("127.0.0.1:65536"), &ss, &len), -1);
    is_int(hy_uconf_parse_bind(HY_STR("127.0.0.1:8x"), &ss, &len), -1);
    is_int(hy_uconf_parse_bind(HY_STR("[::1]x"), &ss, &len), -1);
    is_int(hy_uconf_parse_bind(HY_STR("localhost"), &ss, &len), -1);
    is_int(hy_uconf_parse_bind(HY_STR(""), &ss, &len), -1);
    is_int(hy_uconf_parse_bind(HY_STR("0000:0000:0000:0000:0000:0000:0000:0000:0000:0000"), &ss, &len), -1);
}

/* nginx's NGX_ESCAPE_MEMCACHED: every byte below 0x21 and '%'; DEL and bytes above 0x7f go as they are */
static void test_memcached_escape(void)
{
    char out[3 * 256];
    for (int c = 0; c < 256; c++) {
        char in = (char)c;
        size_t n = hy_upstream_memcached_escape(out, &in, 1);
        bool esc = c <= 0x20 || c == '%';
        if (!is_int(n, esc ? 3 : 1))
            break;
        if (esc) {
            char want[4];
            snprintf(want, sizeof(want), "%%%02X", c);
            is_strn(out, n, want);
        } else {
            ok(out[0] == in);
        }
    }
    size_t n = hy_upstream_memcached_escape(out, S("/a b%c\t\x7f\xe9"));
    is_strn(out, n, "/a%20b%25c%09\x7f\xe9");
    is_int(hy_upstream_memcached_escape(out, "", 0), 0);
}

int main(void)
{
    pool = hy_pool_create(4096);
    req.pool = pool;
    u.req = &req;
    subtest("one field line", test_field);
    subtest("the end of a CGI head", test_cgi_head_end);
    subtest("a CGI head", test_cgi_head);
    subtest("bind literals", test_bind);
    subtest("memcached key escaping", test_memcached_escape);
    hy_pool_destroy(pool);
    return done_testing();
}
