/* dns_edges_test.c — more of the DNS wire code (core/dns.c): names refused for control characters, DEL or a
 * label over 63 bytes; the question matched with a trailing dot and in any case; AAAA records of a wrong length;
 * records of another class or type skipped, a CNAME pointing at the root. dns_test.c has the main cases. */
#include <string.h>
#include <sys/socket.h>
#include "../harness.h"
#include "core/dns.h"

#include "dns_msg.h"

static void test_names(void)
{
    ok(hy_dns_name_valid("a.test", 6));
    ok(!hy_dns_name_valid("a\x01.test", 7));
    ok(!hy_dns_name_valid("a\x7f.test", 7));
    ok(!hy_dns_name_valid("a b.test", 8));
    char label[80];
    memset(label, 'x', 64);
    memcpy(label + 64, ".test", 6);
    ok(!hy_dns_name_valid(label, 69)); /* a 64-byte label */
    ok(hy_dns_name_valid(label + 1, 68));
    uint8_t out[HY_DNS_QUERY_MAX];
    ok(hy_dns_query(out, 1, "a.test.", 7, HY_DNS_A) > 0); /* the root's dot is dropped */
    is_int(hy_dns_query(out, 1, "a..test", 7, HY_DNS_A), -1);
}

static void test_question_forms(void)
{
    msg_t m;
    hy_dns_answer_t a;
    head(&m, 9, 0x8180, 1, "app.test", HY_DNS_A);
    rr_a(&m, 5, 10, 0, 0, 1);
    is_int(hy_dns_parse(m.b, m.n, 9, "APP.Test.", 9, HY_DNS_A, &a), HY_DNS_OK); /* any case, a final dot */
    is_int(a.naddrs, 1);
    is_int(hy_dns_parse(m.b, m.n, 9, "APP.Tesx", 8, HY_DNS_A, &a), HY_DNS_MISMATCH);
    /* an AAAA answer of 4 bytes, an A of 16: malformed */
    head(&m, 9, 0x8180, 1, "app.test", HY_DNS_AAAA);
    u16(&m, 0xc00c), u16(&m, HY_DNS_AAAA), u16(&m, 1), u32(&m, 5), u16(&m, 4), u32(&m, 1);
    is_int(parse(&m, 9, "app.test", HY_DNS_AAAA, &a), HY_DNS_MALFORMED);
    head(&m, 9, 0x8180, 1, "app.test", HY_DNS_A);
    u16(&m, 0xc00c), u16(&m, HY_DNS_A), u16(&m, 1), u32(&m, 5), u16(&m, 16);
    for (int i = 0; i < 4; i++)
        u32(&m, 0);
    is_int(parse(&m, 9, "app.test", HY_DNS_A, &a), HY_DNS_MALFORMED);
    /* records of another class or type are skipped; a TXT of any length is fine */
    head(&m, 9, 0x8180, 3, "app.test", HY_DNS_A);
    u16(&m, 0xc00c), u16(&m, HY_DNS_A), u16(&m, 3), u32(&m, 5), u16(&m, 2), u16(&m, 0); /* class CH */
    u16(&m, 0xc00c), u16(&m, 16), u16(&m, 1), u32(&m, 5), u16(&m, 3), u16(&m, 0x0278), put(&m, "y", 1);
    rr_a(&m, 7, 10, 0, 0, 2);
    is_int(parse(&m, 9, "app.test", HY_DNS_A, &a), HY_DNS_OK);
    is_int(a.naddrs, 1);
    is_int(a.addrs[0].bytes[3], 2);
    is_int(a.ttl, 7);
    /* a CNAME of another class does not link; a CNAME to the root is malformed */
    head(&m, 9, 0x8180, 1, "app.test", HY_DNS_A);
    u16(&m, 0xc00c), u16(&m, HY_DNS_CNAME), u16(&m, 3), u32(&m, 5), u16(&m, 12);
    name(&m, "other.test");
    is_int(parse(&m, 9, "app.test", HY_DNS_A, &a), HY_DNS_OK);
    is_int(a.naddrs, 0);
    is_str(a.cname, "");
    head(&m, 9, 0x8180, 1, "app.test", HY_DNS_A);
    u16(&m, 0xc00c), u16(&m, HY_DNS_CNAME), u16(&m, 1), u32(&m, 5), u16(&m, 1);
    name(&m, "");
    is_int(parse(&m, 9, "app.test", HY_DNS_A, &a), HY_DNS_MALFORMED);
    /* a label holding a dot or a NUL cannot be confused with two labels */
    head(&m, 9, 0x8180, 1, "app.test", HY_DNS_A);
    u16(&m, 0xc00c), u16(&m, HY_DNS_CNAME), u16(&m, 1), u32(&m, 5), u16(&m, 5);
    uint8_t odd[5] = {3, 'a', '.', 0, 0};
    put(&m, odd, 5);
    is_int(parse(&m, 9, "app.test", HY_DNS_A, &a), HY_DNS_OK);
    ok(strchr(a.cname, '.') == NULL && a.cname[1] == '\x01' && a.cname[2] == '\x01');
}

int main(void)
{
    subtest("names", test_names);
    subtest("question forms and record kinds", test_question_forms);
    return done_testing();
}
