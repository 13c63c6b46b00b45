/* proxy_protocol_edges_test.c — PROXY protocol v1 lines refused field by field (empty, too long, bad address
 * characters, a destination port too long), and TLV lookups on damaged lists (a TLV header cut short, an SSL
 * TLV shorter than its fixed part). proxy_protocol_test.c has the main cases. */
#include <string.h>
#include "../harness.h"
#include "event/proxy_protocol.h"

static void bad(const char *s)
{
    hy_pp_t pp;
    const char *why = NULL;
    memset(&pp, 0, sizeof(pp));
    if (!is_int(hy_pp_parse(s, strlen(s), &pp, &why), HY_PP_ERROR))
        printf("#   %s\n", s);
    ok(why && strcmp(why, "broken header") == 0);
}

static void test_v1_fields(void)
{
    bad("PROXY \r\n");
    bad("PROXY TCP4\r\n");
    bad("PROXY TCP4x1.1.1.1 1.1.1.1 1 1\r\n");
    bad("PROXY TCP4  1.1.1.1 1 1\r\n");                           /* an empty source */
    bad("PROXY TCP4 1.1.1.1 1.1.1.1 1 1234567890\r\n");           /* destination port too long */
    bad("PROXY TCP4 1.1.1.g 1.1.1.1 1 1\r\n");                    /* not an address character */
    bad("PROXY TCP4 1.1.1.1 1.1.1.1 1 \r\n");                      /* an empty destination port */
    bad("PROXY TCP4 1.1.1.1 1.1.1.1 99999 1\r\n");                /* five digits, out of range */
    bad("PROXY TCP4 1.1.1.1 1.1.1.1 1 1x\r\n");
    bad("PROXY TCP4 1.1.1.1 1.1.1.1.1 1 1\r\n");                  /* characters fine, not an IPv4 address */
    bad("PROXY TCP4 1111111111111111111111111111111111111111111111111 1.1.1.1 1 1\r\n"); /* field too long */
    hy_pp_t pp;
    const char *why;
    const char *ok6 = "PROXY TCP6 ABCD::EF 0:0:0:0:0:0:0:1 65535 0\r\n";
    is_int(hy_pp_parse(ok6, strlen(ok6), &pp, &why), strlen(ok6));
    is_int(pp.src_port, 65535);
}

static void test_tlv_damaged(void)
{
    hy_str_t v;
    char vb[11];
    const char *err;
    const uint8_t cut[] = {0x01, 0x00}; /* a TLV header of 2 bytes */
    is_int(hy_pp_tlv_find(cut, sizeof(cut), 0x01, &v), -1);
    is_int(hy_pp_tlv_get(cut, sizeof(cut), HY_STR("alpn"), &v, vb, &err), -1);
    is_int(hy_pp_tlv_get(cut, sizeof(cut), HY_STR("ssl_cn"), &v, vb, &err), -1);
    is_str(err, "broken PROXY protocol TLV");
    const uint8_t short_ssl[] = {0x20, 0x00, 0x03, 1, 0, 0}; /* the SSL TLV's fixed part is 5 bytes */
    is_int(hy_pp_tlv_get(short_ssl, sizeof(short_ssl), HY_STR("ssl_verify"), &v, vb, &err), -1);
    is_str(err, "broken PROXY protocol TLV");
    const uint8_t two[] = {0x30, 0x00, 0x01, 'n', 0x02, 0x00, 0x02, 'h', 'i'};
    is_int(hy_pp_tlv_get(two, sizeof(two), HY_STR("0X02"), &v, vb, &err), -1); /* "0X" is no hex prefix */
    is_str(err, "unknown PROXY protocol TLV");
    is_int(hy_pp_tlv_get(two, sizeof(two), HY_STR("0xA"), &v, vb, &err), 0);
    is_int(hy_pp_tlv_get(two, sizeof(two), HY_STR("0x2"), &v, vb, &err), 1);
    is_strn(v.ptr, v.len, "hi");
    is_int(hy_pp_tlv_get(two, sizeof(two), HY_STR("0x00000000002"), &v, vb, &err), 1);
    is_int(hy_pp_tlv_get(two, sizeof(two), HY_STR("0x1000000000002"), &v, vb, &err), 0); /* no wrap-around */
    is_int(hy_pp_tlv_get(two, sizeof(two), HY_STR("0x2g"), &v, vb, &err), -1);
    is_int(hy_pp_tlv_get(two, sizeof(two), HY_STR("NETNS"), &v, vb, &err), 1);
    is_strn(v.ptr, v.len, "n");
}

int main(void)
{
    subtest("v1 fields", test_v1_fields);
    subtest("damaged TLVs", test_tlv_damaged);
    return done_testing();
}
