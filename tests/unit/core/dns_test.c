/* dns_test.c — the DNS wire code (core/dns.c): queries as RFC 1035 writes them, answers parsed and checked
 * against the question, the CNAME chain, and malformed input (compression loops, truncation anywhere, wrong id,
 * another question, bad record lengths). */
#include <string.h>
#include <sys/socket.h>
#include "../harness.h"
#include "core/dns.h"

#include "dns_msg.h"

static void test_query(void)
{
    uint8_t out[HY_DNS_QUERY_MAX];
    int n = hy_dns_query(out, 0x1234, "www.Example.com", 15, HY_DNS_A);
    static const uint8_t want[] = {0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 3, 'w', 'w', 'w', 7, 'E', 'x',
                                   'a',  'm',  'p',  'l',  'e', 3, 'c', 'o', 'm', 0, 0, 1, 0, 1};
    is_int(n, sizeof(want));
    ok(memcmp(out, want, sizeof(want)) == 0);
    is_int(hy_dns_query(out, 1, "a.b.", 4, HY_DNS_AAAA), 12 + 5 + 4);
    is_int(hy_dns_query(out, 1, "", 0, HY_DNS_A), -1);
    is_int(hy_dns_query(out, 1, "a..b", 4, HY_DNS_A), -1);
    is_int(hy_dns_query(out, 1, ".a", 2, HY_DNS_A), -1);
    is_int(hy_dns_query(out, 1, "a b", 3, HY_DNS_A), -1);
    char big[300];
    memset(big, 'a', sizeof(big));
    is_int(hy_dns_query(out, 1, big, 64, HY_DNS_A), -1); /* a label of 64 */
    ok(hy_dns_query(out, 1, big, 63, HY_DNS_A) > 0);
    for (int i = 63; i < 256; i += 64)
        big[i] = '.';
    is_int(hy_dns_query(out, 1, big, 257, HY_DNS_A), -1); /* 257 bytes ("a" after the fourth dot) */
    ok(hy_dns_query(out, 1, big, 255, HY_DNS_A) > 0);    /* four labels of 63 */
}

static void test_answer(void)
{
    msg_t m;
    hy_dns_answer_t a;
    head(&m, 7, 0x8180, 2, "app.test", HY_DNS_A);
    rr_a(&m, 300, 10, 0, 0, 1);
    rr_a(&m, 60, 10, 0, 0, 2);
    is_int(parse(&m, 7, "APP.test.", HY_DNS_A, &a), HY_DNS_OK);
    is_int(a.rcode, 0);
    is_int(a.naddrs, 2);
    is_int(a.ttl, 60);
    is_int(a.addrs[0].family, AF_INET);
    is_int(a.addrs[1].bytes[3], 2);
    is_str(a.cname, "");
    ok(!a.truncated);
    /* the TTL with the top bit set counts as 0 */
    head(&m, 7, 0x8180, 1, "app.test", HY_DNS_A);
    rr_a(&m, 0x80000000u, 10, 0, 0, 1);
    is_int(parse(&m, 7, "app.test", HY_DNS_A, &a), HY_DNS_OK);
    is_int(a.ttl, 0);
    /* NXDOMAIN, truncated */
    head(&m, 7, 0x8183, 0, "app.test", HY_DNS_A);
    is_int(parse(&m, 7, "app.test", HY_DNS_A, &a), HY_DNS_OK);
    is_int(a.rcode, HY_DNS_NXDOMAIN);
    head(&m, 7, 0x8380, 0, "app.test", HY_DNS_A);
    is_int(parse(&m, 7, "app.test", HY_DNS_A, &a), HY_DNS_OK);
    ok(a.truncated);
    /* AAAA */
    head(&m, 9, 0x8180, 1, "six.test", HY_DNS_AAAA);
    u16(&m, 0xc00c), u16(&m, HY_DNS_AAAA), u16(&m, 1), u32(&m, 5), u16(&m, 16);
    uint8_t v6[16] = {0};
    v6[15] = 1;
    put(&m, v6, 16);
    is_int(parse(&m, 9, "six.test", HY_DNS_AAAA, &a), HY_DNS_OK);
    is_int(a.naddrs, 1);
    is_int(a.addrs[0].family, AF_INET6);
    is_int(a.addrs[0].bytes[15], 1);
    /* records of another owner or type are ignored */
    head(&m, 7, 0x8180, 2, "app.test", HY_DNS_A);
    name(&m, "evil.test"), u16(&m, HY_DNS_A), u16(&m, 1), u32(&m, 5), u16(&m, 4), u32(&m, 0x01020304);
    u16(&m, 0xc00c), u16(&m, HY_DNS_AAAA), u16(&m, 1), u32(&m, 5), u16(&m, 16), put(&m, v6, 16);
    is_int(parse(&m, 7, "app.test", HY_DNS_A, &a), HY_DNS_OK);
    is_int(a.naddrs, 0);
}

/* SRV (RFC 2782): priority, weight, port and a target written compressed (a pointer into the question) */
static void test_srv(void)
{
    msg_t m;
    hy_dns_answer_t a;
    head(&m, 5, 0x8180, 3, "_http._tcp.app.test", HY_DNS_SRV);
    u16(&m, 0xc00c), u16(&m, HY_DNS_SRV), u16(&m, 1), u32(&m, 30), u16(&m, 6 + 2);
    u16(&m, 1), u16(&m, 5), u16(&m, 8080), u16(&m, 0xc000 | 23); /* "app.test" inside the question */
    u16(&m, 0xc00c), u16(&m, HY_DNS_SRV), u16(&m, 1), u32(&m, 20), u16(&m, 6 + 2 + 2);
    u16(&m, 2), u16(&m, 0), u16(&m, 81), name(&m, "b"), m.n -= 1, u16(&m, 0xc000 | 23); /* "b.app.test" */
    u16(&m, 0xc00c), u16(&m, HY_DNS_A), u16(&m, 1), u32(&m, 1), u16(&m, 4), u32(&m, 0x01020304); /* ignored */
    is_int(parse(&m, 5, "_http._tcp.app.test", HY_DNS_SRV, &a), HY_DNS_OK);
    is_int(a.nsrvs, 2);
    is_int(a.naddrs, 0);
    is_int(a.ttl, 20);
    is_int(a.srvs[0].priority, 1);
    is_int(a.srvs[0].weight, 5);
    is_int(a.srvs[0].port, 8080);
    is_str(a.srvs[0].target, "app.test");
    is_int(a.srvs[1].port, 81);
    is_str(a.srvs[1].target, "b.app.test");
    is_str(a.cname, "");
    /* a target running past the record's data is malformed */
    head(&m, 5, 0x8180, 1, "_http._tcp.app.test", HY_DNS_SRV);
    u16(&m, 0xc00c), u16(&m, HY_DNS_SRV), u16(&m, 1), u32(&m, 30), u16(&m, 7);
    u16(&m, 1), u16(&m, 5), u16(&m, 80), name(&m, "x.test");
    is_int(parse(&m, 5, "_http._tcp.app.test", HY_DNS_SRV, &a), HY_DNS_MALFORMED);
    /* only a CNAME: its target is asked again */
    head(&m, 5, 0x8180, 1, "_http._tcp.app.test", HY_DNS_SRV);
    u16(&m, 0xc00c), u16(&m, HY_DNS_CNAME), u16(&m, 1), u32(&m, 30), u16(&m, 8);
    name(&m, "alias"), m.n -= 1, u16(&m, 0xc000 | 23);
    is_int(parse(&m, 5, "_http._tcp.app.test", HY_DNS_SRV, &a), HY_DNS_OK);
    is_int(a.nsrvs, 0);
    is_str(a.cname, "alias.app.test");
}

static void test_cname(void)
{
    msg_t m;
    hy_dns_answer_t a;
    /* app.test CNAME real.test (compressed: "real" + pointer to ".test"); real.test A 10.0.0.9 */
    head(&m, 3, 0x8180, 2, "app.test", HY_DNS_A);
    u16(&m, 0xc00c), u16(&m, HY_DNS_CNAME), u16(&m, 1), u32(&m, 30), u16(&m, 7);
    uint8_t real[5] = {4, 'r', 'e', 'a', 'l'};
    put(&m, real, 5);
    u16(&m, 0xc010); /* "test" in the question (12 + 4 = 16) */
    size_t real_at = m.n - 7;
    u16(&m, 0xc000 | (unsigned)real_at), u16(&m, HY_DNS_A), u16(&m, 1), u32(&m, 100), u16(&m, 4);
    u32(&m, 0x0a000009);
    is_int(parse(&m, 3, "app.test", HY_DNS_A, &a), HY_DNS_OK);
    is_int(a.naddrs, 1);
    is_int(a.addrs[0].bytes[3], 9);
    is_int(a.ttl, 30); /* the chain's smallest */
    /* a CNAME alone: the chain's end to ask for */
    head(&m, 3, 0x8180, 1, "app.test", HY_DNS_A);
    u16(&m, 0xc00c), u16(&m, HY_DNS_CNAME), u16(&m, 1), u32(&m, 30), u16(&m, 12);
    name(&m, "other.test");
    is_int(parse(&m, 3, "app.test", HY_DNS_A, &a), HY_DNS_OK);
    is_int(a.naddrs, 0);
    is_str(a.cname, "other.test");
    /* a CNAME loop: app -> app */
    head(&m, 3, 0x8180, 1, "app.test", HY_DNS_A);
    u16(&m, 0xc00c), u16(&m, HY_DNS_CNAME), u16(&m, 1), u32(&m, 30), u16(&m, 2), u16(&m, 0xc00c);
    is_int(parse(&m, 3, "app.test", HY_DNS_A, &a), HY_DNS_MALFORMED);
    /* a CNAME whose target runs past its rdata */
    head(&m, 3, 0x8180, 1, "app.test", HY_DNS_A);
    u16(&m, 0xc00c), u16(&m, HY_DNS_CNAME), u16(&m, 1), u32(&m, 30), u16(&m, 3);
    name(&m, "other.test");
    m.b[7] = 1;
    is_int(parse(&m, 3, "app.test", HY_DNS_A, &a), HY_DNS_MALFORMED);
}

static void test_mismatch(void)
{
    msg_t m;
    hy_dns_answer_t a;
    head(&m, 7, 0x8180, 1, "app.test", HY_DNS_A);
    rr_a(&m, 5, 1, 2, 3, 4);
    is_int(parse(&m, 8, "app.test", HY_DNS_A, &a), HY_DNS_MISMATCH);    /* wrong id */
    is_int(parse(&m, 7, "other.test", HY_DNS_A, &a), HY_DNS_MISMATCH);  /* another name */
    is_int(parse(&m, 7, "app.test", HY_DNS_AAAA, &a), HY_DNS_MISMATCH); /* another type */
    is_int(parse(&m, 7, "app.tes", HY_DNS_A, &a), HY_DNS_MISMATCH);
    m.b[2] = 0x01; /* a query, not a response */
    is_int(parse(&m, 7, "app.test", HY_DNS_A, &a), HY_DNS_MISMATCH);
    head(&m, 7, 0x8180, 0, "app.test", HY_DNS_A);
    m.b[m.n - 1] = 3; /* class CH */
    is_int(parse(&m, 7, "app.test", HY_DNS_A, &a), HY_DNS_MISMATCH);
}

static void test_malformed(void)
{
    msg_t m;
    hy_dns_answer_t a;
    /* every truncation of a valid answer is malformed */
    head(&m, 7, 0x8180, 2, "app.test", HY_DNS_A);
    rr_a(&m, 5, 1, 2, 3, 4);
    rr_a(&m, 5, 1, 2, 3, 5);
    size_t bad = 0;
    for (size_t n = 0; n < m.n; n++)
        bad += hy_dns_parse(m.b, n, 7, "app.test", 8, HY_DNS_A, &a) == HY_DNS_MALFORMED;
    is_int(bad, m.n);
    is_int(parse(&m, 7, "app.test", HY_DNS_A, &a), HY_DNS_OK);
    /* a compression pointer to itself, and a two-pointer loop, in the question */
    m.n = 0;
    u16(&m, 7), u16(&m, 0x8180), u16(&m, 1), u16(&m, 0), u16(&m, 0), u16(&m, 0);
    u16(&m, 0xc00c), u16(&m, 1), u16(&m, 1);
    is_int(parse(&m, 7, "app.test", HY_DNS_A, &a), HY_DNS_MALFORMED);
    m.n = 12;
    u16(&m, 0xc00e), u16(&m, 0xc00c), u16(&m, 1), u16(&m, 1);
    is_int(parse(&m, 7, "app.test", HY_DNS_A, &a), HY_DNS_MALFORMED);
    /* a loop in an answer's owner */
    head(&m, 7, 0x8180, 1, "app.test", HY_DNS_A);
    size_t at = m.n;
    u16(&m, 0xc000 | (unsigned)at), u16(&m, 1), u16(&m, 1), u32(&m, 5), u16(&m, 4), u32(&m, 1);
    is_int(parse(&m, 7, "app.test", HY_DNS_A, &a), HY_DNS_MALFORMED);
    /* a pointer past the end */
    head(&m, 7, 0x8180, 1, "app.test", HY_DNS_A);
    u16(&m, 0xc7ff), u16(&m, 1), u16(&m, 1), u32(&m, 5), u16(&m, 4), u32(&m, 1);
    is_int(parse(&m, 7, "app.test", HY_DNS_A, &a), HY_DNS_MALFORMED);
    /* extended label types */
    head(&m, 7, 0x8180, 1, "app.test", HY_DNS_A);
    uint8_t ext = 0x41;
    put(&m, &ext, 1);
    is_int(parse(&m, 7, "app.test", HY_DNS_A, &a), HY_DNS_MALFORMED);
    /* an A record of 5 bytes, an rdlength past the end */
    head(&m, 7, 0x8180, 1, "app.test", HY_DNS_A);
    u16(&m, 0xc00c), u16(&m, 1), u16(&m, 1), u32(&m, 5), u16(&m, 5), u32(&m, 1);
    uint8_t z = 0;
    put(&m, &z, 1);
    is_int(parse(&m, 7, "app.test", HY_DNS_A, &a), HY_DNS_MALFORMED);
    head(&m, 7, 0x8180, 1, "app.test", HY_DNS_A);
    u16(&m, 0xc00c), u16(&m, 1), u16(&m, 1), u32(&m, 5), u16(&m, 400), u32(&m, 1);
    is_int(parse(&m, 7, "app.test", HY_DNS_A, &a), HY_DNS_MALFORMED);
    /* more answers announced than present */
    head(&m, 7, 0x8180, 3, "app.test", HY_DNS_A);
    rr_a(&m, 5, 1, 2, 3, 4);
    is_int(parse(&m, 7, "app.test", HY_DNS_A, &a), HY_DNS_MALFORMED);
    /* two questions */
    head(&m, 7, 0x8180, 0, "app.test", HY_DNS_A);
    m.b[5] = 2;
    is_int(parse(&m, 7, "app.test", HY_DNS_A, &a), HY_DNS_MALFORMED);
    /* a name of more than 255 bytes through pointers: 5 labels of 63 */
    m.n = 0;
    u16(&m, 7), u16(&m, 0x8180), u16(&m, 1), u16(&m, 0), u16(&m, 0), u16(&m, 0);
    for (int i = 0; i < 5; i++) {
        uint8_t l = 63;
        put(&m, &l, 1);
        uint8_t lab[63];
        memset(lab, 'a', 63);
        put(&m, lab, 63);
    }
    put(&m, &z, 1);
    u16(&m, 1), u16(&m, 1);
    is_int(parse(&m, 7, "app.test", HY_DNS_A, &a), HY_DNS_MALFORMED);
    /* more addresses than kept: the first HY_DNS_MAX_ADDRS */
    head(&m, 7, 0x8180, HY_DNS_MAX_ADDRS + 5, "app.test", HY_DNS_A);
    for (int i = 0; i < HY_DNS_MAX_ADDRS + 5; i++)
        rr_a(&m, 5, 10, 0, 0, (uint8_t)i);
    is_int(parse(&m, 7, "app.test", HY_DNS_A, &a), HY_DNS_OK);
    is_int(a.naddrs, HY_DNS_MAX_ADDRS);
    is_int(hy_dns_id(m.b, 11), 0);
    is_int(hy_dns_id(m.b, 12), 7);
}

int main(void)
{
    subtest("query", test_query);
    subtest("answer", test_answer);
    subtest("cname", test_cname);
    subtest("srv", test_srv);
    subtest("mismatch", test_mismatch);
    subtest("malformed", test_malformed);
    return done_testing();
}
