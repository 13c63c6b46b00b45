/* dns_fuzz.c — libFuzzer driver: DNS answers (hy_dns_parse) for the questions "app.test" A and AAAA with the id the
 * message carries. Nothing outside the input is read (ASan), results are one of the three codes, the addresses
 * kept are bounded and of the type asked, a CNAME end is a NUL-terminated name of at most 255 bytes that is not
 * the question, and the parse is the same from an exact-length copy. Also: a query made from the input's first
 * bytes as a name is either refused or parses back as its own question. */
#include <string.h>
#include <sys/socket.h>

#include "fuzz.h"
#include "core/dns.h"

static void one(const uint8_t *v, size_t size, uint16_t qtype)
{
    hy_dns_answer_t a;
    uint16_t id = hy_dns_id(v, size);
    int rc = hy_dns_parse(v, size, id, "app.test", 8, qtype, &a);
    CHECK(rc == HY_DNS_OK || rc == HY_DNS_MALFORMED || rc == HY_DNS_MISMATCH);
    if (rc != HY_DNS_OK)
        return;
    CHECK(a.naddrs <= HY_DNS_MAX_ADDRS);
    CHECK(a.rcode >= 0 && a.rcode <= 15);
    for (size_t i = 0; i < a.naddrs; i++)
        CHECK(a.addrs[i].family == (qtype == HY_DNS_A ? AF_INET : AF_INET6));
    CHECK(a.nsrvs <= HY_DNS_MAX_SRVS && (qtype == HY_DNS_SRV || a.nsrvs == 0));
    for (size_t i = 0; i < a.nsrvs; i++)
        CHECK(memchr(a.srvs[i].target, '\0', sizeof(a.srvs[i].target)) != NULL);
    CHECK(memchr(a.cname, '\0', sizeof(a.cname)) != NULL);
    CHECK(strcmp(a.cname, "app.test") != 0);
    if (a.naddrs)
        CHECK(a.cname[0] == '\0');
    hy_dns_answer_t b;
    CHECK(hy_dns_parse(v, size, id, "APP.TEST.", 9, qtype, &b) == rc);
    CHECK(b.naddrs == a.naddrs && b.nsrvs == a.nsrvs && b.ttl == a.ttl && strcmp(a.cname, b.cname) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *v = malloc(size ? size : 1);
    memcpy(v, data, size);
    one(v, size, HY_DNS_A);
    one(v, size, HY_DNS_AAAA);
    one(v, size, HY_DNS_SRV);
    /* a query for the input as a name */
    size_t nl = size < 300 ? size : 300;
    uint8_t q[HY_DNS_QUERY_MAX];
    int n = hy_dns_query(q, 0x4242, (const char *)v, nl, HY_DNS_A);
    CHECK(n == -1 || (n > 12 && n <= HY_DNS_QUERY_MAX));
    if (n > 0) {
        CHECK(hy_dns_name_valid((const char *)v, nl));
        q[2] |= 0x80; /* as its own (empty) answer */
        hy_dns_answer_t a;
        CHECK(hy_dns_parse(q, (size_t)n, 0x4242, (const char *)v, nl, HY_DNS_A, &a) == HY_DNS_OK);
        CHECK(a.naddrs == 0 && a.rcode == 0);
    }
    free(v);
    return 0;
}
