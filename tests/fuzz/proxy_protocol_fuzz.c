/* proxy_protocol_fuzz.c — libFuzzer driver: PROXY protocol header parsing (hy_pp_parse) and TLV lookup
 * (hy_pp_tlv_get). The consumed length never exceeds the input; a parsed header parses the same from the
 * exact-length copy (so nothing after it is read), and every shorter prefix is AGAIN or an error, never a header;
 * TLV values lie inside the TLV region. */
#include <string.h>

#include "fuzz.h"
#include "event/proxy_protocol.h"

static const char *names[] = {"alpn",   "authority",  "unique_id",   "ssl",         "netns",      "ssl_version",
                              "ssl_cn", "ssl_cipher", "ssl_sig_alg", "ssl_key_alg", "ssl_verify", "0x03",
                              "0xae",   "ssl_0x21",   "0x",          "0xzz",        "bogus"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *v = malloc(size ? size : 1);
    memcpy(v, data, size);
    hy_pp_t pp;
    const char *why;
    ssize_t rc = hy_pp_parse(v, size, &pp, &why);
    CHECK(rc == HY_PP_AGAIN || rc == HY_PP_ERROR || (rc > 0 && (size_t)rc <= size));
    CHECK(rc != HY_PP_ERROR || why != NULL);
    if (rc > 0) {
        CHECK(pp.version == 1 || pp.version == 2);
        CHECK(strlen(pp.src_text) < HY_PP_ADDR_TEXT && strlen(pp.dst_text) < HY_PP_ADDR_TEXT);
        char *exact = malloc((size_t)rc);
        memcpy(exact, v, (size_t)rc);
        hy_pp_t again;
        CHECK(hy_pp_parse(exact, (size_t)rc, &again, &why) == rc);
        CHECK(again.has_addrs == pp.has_addrs && again.src_port == pp.src_port && again.tlvs_len == pp.tlvs_len);
        ssize_t shorter = hy_pp_parse(exact, (size_t)rc - 1, &again, &why);
        CHECK(shorter == HY_PP_AGAIN || shorter == HY_PP_ERROR);
        free(exact);
        if (pp.tlvs) {
            CHECK((const char *)pp.tlvs >= v && (const char *)pp.tlvs + pp.tlvs_len <= v + rc);
            for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
                hy_str_t val;
                char vb[11];
                const char *err;
                int r =
                    hy_pp_tlv_get(pp.tlvs, pp.tlvs_len, (hy_str_t){(char *)names[i], strlen(names[i])}, &val, vb, &err);
                CHECK(r == 1 || r == 0 || (r == -1 && err != NULL));
                if (r == 1 && val.ptr != vb)
                    CHECK(val.ptr >= (const char *)pp.tlvs && val.ptr + val.len <= (const char *)pp.tlvs + pp.tlvs_len);
            }
        }
    }
    free(v);
    return 0;
}
