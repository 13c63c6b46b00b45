/* proxy_protocol_test.c — PROXY protocol v1/v2 parsing (every prefix of a valid header asks for more), errors with
 * nginx's wording, TLV lookup by name and by number, the SSL sub-TLVs. */
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include "../harness.h"
#include "event/proxy_protocol.h"

static ssize_t parse(const char *s, size_t n, hy_pp_t *pp, const char **why)
{
    return hy_pp_parse(s, n, pp, why);
}

/* every proper prefix of a valid header is HY_PP_AGAIN; the whole parses to its length */
static void all_prefixes(const char *h, size_t n)
{
    hy_pp_t pp;
    const char *why;
    for (size_t i = 0; i < n; i++)
        if (parse(h, i, &pp, &why) != HY_PP_AGAIN) {
            ok(!"prefix not AGAIN");
            return;
        }
    ok(1);
}

static void test_v1(void)
{
    hy_pp_t pp;
    const char *why;
    const char *h = "PROXY TCP4 192.0.2.1 192.0.2.2 123 5678\r\nGET / HTTP/1.1\r\n";
    size_t hl = strlen("PROXY TCP4 192.0.2.1 192.0.2.2 123 5678\r\n");
    is_int(parse(h, strlen(h), &pp, &why), hl);
    is_int(pp.version, 1);
    ok(pp.has_addrs);
    is_str(pp.src_text, "192.0.2.1");
    is_str(pp.dst_text, "192.0.2.2");
    is_int(pp.src_port, 123);
    is_int(pp.dst_port, 5678);
    is_int(pp.src.ss_family, AF_INET);
    is_int(ntohs(((struct sockaddr_in *)&pp.src)->sin_port), 123);
    ok(pp.tlvs == NULL);
    all_prefixes(h, hl);

    const char *h6 = "PROXY TCP6 2001:Db8::1 2001:Db8::2 0 65535\r\n";
    is_int(parse(h6, strlen(h6), &pp, &why), strlen(h6));
    is_str(pp.src_text, "2001:Db8::1"); /* as sent */
    is_int(pp.src.ss_family, AF_INET6);
    is_int(pp.dst_port, 65535);

    const char *u1 = "PROXY UNKNOWN\r\n", *u2 = "PROXY UNKNOWN 1 2 3 4 5 6\r\nx";
    is_int(parse(u1, strlen(u1), &pp, &why), strlen(u1));
    ok(!pp.has_addrs);
    is_int(pp.version, 1);
    is_int(parse(u2, strlen(u2), &pp, &why), strlen(u2) - 1);
    ok(!pp.has_addrs);
    is_str(pp.src_text, "");
}

static void bad(const char *s, const char *reason)
{
    hy_pp_t pp;
    const char *why = NULL;
    ssize_t rc = parse(s, strlen(s), &pp, &why);
    is_int(rc, HY_PP_ERROR);
    ok(why && strcmp(why, reason) == 0);
    ok(!pp.has_addrs && pp.version == 0);
}

static void test_v1_invalid(void)
{
    bad("GET / HTTP/1.1\r\n\r\n", "broken header");
    bad("PROXZ", "broken header");
    bad("PROXY TCP5 1.1.1.1 1.1.1.1 1 1\r\n", "broken header");
    bad("PROXY TCP4 1.1.1.1 1.1.1.1 1 1\n", "broken header");        /* bare LF */
    bad("PROXY TCP4 1.1.1.1 1.1.1.1 1 65536\r\n", "broken header");  /* port range */
    bad("PROXY TCP4 1.1.1.1 1.1.1.1 1 000001\r\n", "broken header"); /* 6 digits */
    bad("PROXY TCP4 1.1.1.1 1.1.1.1 1 x\r\n", "broken header");
    bad("PROXY TCP4 1.1.1.1 1.1.1.1 1\r\n", "broken header");     /* a field short */
    bad("PROXY TCP4 1.1.1.1 1.1.1.1 1 2 3\r\n", "broken header"); /* one too many */
    bad("PROXY TCP4 1.1.1.256 1.1.1.1 1 2\r\n", "broken header");
    bad("PROXY TCP4 localhost 1.1.1.1 1 2\r\n", "broken header");
    bad("PROXY TCP4  1.1.1.1 1.1.1.1 1 2\r\n", "broken header");
    bad("PROXY \r\n", "broken header");
    char line[200];
    memset(line, 'A', sizeof(line));
    memcpy(line, "PROXY UNKNOWN ", 14);
    line[199] = '\0';
    bad(line, "broken header"); /* no line end within 107 bytes */
    hy_pp_t pp;
    const char *why;
    line[HY_PP_V1_MAX - 1] = '\0';
    is_int(parse(line, strlen(line), &pp, &why), HY_PP_AGAIN); /* 106 bytes: the CRLF may still come */
    memcpy(line + HY_PP_V1_MAX - 3, "\r\n", 3);
    is_int(parse(line, strlen(line), &pp, &why), HY_PP_V1_MAX - 1);
}

static size_t v2(uint8_t *out, uint8_t ver_cmd, uint8_t fam, const uint8_t *body, size_t n)
{
    static const uint8_t sig[12] = {0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a};
    memcpy(out, sig, 12);
    out[12] = ver_cmd, out[13] = fam, out[14] = (uint8_t)(n >> 8), out[15] = (uint8_t)n;
    if (n)
        memcpy(out + 16, body, n);
    return 16 + n;
}

static size_t tlv(uint8_t *out, uint8_t type, const void *v, size_t n)
{
    out[0] = type, out[1] = (uint8_t)(n >> 8), out[2] = (uint8_t)n;
    memcpy(out + 3, v, n);
    return 3 + n;
}

static void test_v2(void)
{
    uint8_t body[512], h[600], sub[200], ssl[220];
    size_t n = 0;
    const uint8_t addrs[12] = {192, 0, 2, 1, 192, 0, 2, 2, 0, 123, 0x16, 0x2e};
    memcpy(body, addrs, 12);
    n = 12;
    n += tlv(body + n, 0x01, "ALPN1", 5);
    n += tlv(body + n, 0x02, "localhost", 9);
    size_t s = 0;
    s += tlv(sub + s, 0x21, "TLSv1.2", 7);
    s += tlv(sub + s, 0x22, "example.com", 11);
    ssl[0] = 1, ssl[1] = 0, ssl[2] = 0, ssl[3] = 0, ssl[4] = 255;
    memcpy(ssl + 5, sub, s);
    n += tlv(body + n, 0x20, ssl, 5 + s);
    n += tlv(body + n, 0xae, "12345", 5);
    size_t hl = v2(h, 0x21, 0x11, body, n);
    memcpy(h + hl, "GET", 3);
    hy_pp_t pp;
    const char *why;
    is_int(parse((char *)h, hl + 3, &pp, &why), hl);
    is_int(pp.version, 2);
    ok(pp.has_addrs);
    is_str(pp.src_text, "192.0.2.1");
    is_str(pp.dst_text, "192.0.2.2");
    is_int(pp.src_port, 123);
    is_int(pp.dst_port, 5678);
    is_int(pp.tlvs_len, n - 12);
    all_prefixes((char *)h, hl);

    hy_str_t v;
    char vb[11];
    const char *err;
    is_int(hy_pp_tlv_get(pp.tlvs, pp.tlvs_len, HY_STR("alpn"), &v, vb, &err), 1);
    is_strn(v.ptr, v.len, "ALPN1");
    is_int(hy_pp_tlv_get(pp.tlvs, pp.tlvs_len, HY_STR("0x01"), &v, vb, &err), 1);
    is_strn(v.ptr, v.len, "ALPN1");
    is_int(hy_pp_tlv_get(pp.tlvs, pp.tlvs_len, HY_STR("AUTHORITY"), &v, vb, &err), 1);
    is_strn(v.ptr, v.len, "localhost");
    is_int(hy_pp_tlv_get(pp.tlvs, pp.tlvs_len, HY_STR("0x000ae"), &v, vb, &err), 1);
    is_strn(v.ptr, v.len, "12345");
    is_int(hy_pp_tlv_get(pp.tlvs, pp.tlvs_len, HY_STR("ssl_version"), &v, vb, &err), 1);
    is_strn(v.ptr, v.len, "TLSv1.2");
    is_int(hy_pp_tlv_get(pp.tlvs, pp.tlvs_len, HY_STR("ssl_0x22"), &v, vb, &err), 1);
    is_strn(v.ptr, v.len, "example.com");
    is_int(hy_pp_tlv_get(pp.tlvs, pp.tlvs_len, HY_STR("ssl_verify"), &v, vb, &err), 1);
    is_strn(v.ptr, v.len, "255");
    is_int(hy_pp_tlv_get(pp.tlvs, pp.tlvs_len, HY_STR("ssl"), &v, vb, &err), 1);
    is_int(v.len, 5 + s);
    is_int(hy_pp_tlv_get(pp.tlvs, pp.tlvs_len, HY_STR("netns"), &v, vb, &err), 0);
    is_int(hy_pp_tlv_get(pp.tlvs, pp.tlvs_len, HY_STR("ssl_cipher"), &v, vb, &err), 0);
    is_int(hy_pp_tlv_get(pp.tlvs, pp.tlvs_len, HY_STR("0x1ff"), &v, vb, &err), 0);
    is_int(hy_pp_tlv_get(pp.tlvs, pp.tlvs_len, HY_STR("bogus"), &v, vb, &err), -1);
    is_str(err, "unknown PROXY protocol TLV");
    is_int(hy_pp_tlv_get(pp.tlvs, pp.tlvs_len, HY_STR("0xzz"), &v, vb, &err), -1);
    is_str(err, "invalid PROXY protocol TLV");
    is_int(hy_pp_tlv_get(pp.tlvs, pp.tlvs_len, HY_STR("0x"), &v, vb, &err), -1);
    is_int(hy_pp_tlv_get(pp.tlvs, pp.tlvs_len - 1, HY_STR("0xae"), &v, vb, &err), -1); /* runs past the end */
    is_str(err, "broken PROXY protocol TLV");
    is_int(hy_pp_tlv_get(NULL, 0, HY_STR("alpn"), &v, vb, &err), 0);
    is_int(hy_pp_tlv_get(NULL, 0, HY_STR("ssl_cn"), &v, vb, &err), 0);

    /* IPv6 */
    uint8_t a6[36] = {0x20, 0x01, 0x0d, 0xb8, [15] = 1, [16] = 0x20, 0x01, 0x0d, 0xb8, [31] = 2, [32] = 0, 80, 1, 0};
    hl = v2(h, 0x21, 0x21, a6, 36);
    is_int(parse((char *)h, hl, &pp, &why), hl);
    is_str(pp.src_text, "2001:db8::1");
    is_str(pp.dst_text, "2001:db8::2");
    is_int(pp.src_port, 80);
    is_int(pp.dst_port, 256);
    ok(pp.tlvs == NULL);

    /* accepted without addresses: LOCAL, UDP, UNSPEC, UNIX */
    hl = v2(h, 0x20, 0x11, addrs, 12);
    is_int(parse((char *)h, hl, &pp, &why), hl);
    ok(!pp.has_addrs);
    hl = v2(h, 0x21, 0x12, addrs, 12);
    is_int(parse((char *)h, hl, &pp, &why), hl);
    ok(!pp.has_addrs);
    hl = v2(h, 0x21, 0x00, NULL, 0);
    is_int(parse((char *)h, hl, &pp, &why), 16);
    ok(!pp.has_addrs);
    is_int(pp.version, 2);

    /* errors */
    hl = v2(h, 0x11, 0x11, addrs, 12);
    is_int(parse((char *)h, hl, &pp, &why), HY_PP_ERROR);
    is_str(why, "unknown PROXY protocol version");
    hl = v2(h, 0x21, 0x11, addrs, 11);
    is_int(parse((char *)h, hl, &pp, &why), HY_PP_ERROR);
    is_str(why, "broken PROXY protocol v2 addresses");
    ok(!pp.has_addrs);
    h[14] = 0x10, h[15] = 0x00; /* 4096 + 16 */
    is_int(parse((char *)h, 16, &pp, &why), HY_PP_ERROR);
    is_str(why, "header is too large");
    h[14] = 0x0f, h[15] = 0xf0; /* exactly 4096 in all: waits for it */
    is_int(parse((char *)h, 16, &pp, &why), HY_PP_AGAIN);
    ok(why == NULL);
}

int main(void)
{
    subtest("v1", test_v1);
    subtest("v1 invalid", test_v1_invalid);
    subtest("v2 and TLVs", test_v2);
    return done_testing();
}
