/* accept_encoding_fuzz.c — libFuzzer driver: Accept-Encoding (hy_ae_parse, one or two fields split at the first
 * '\n'), the effective q of every coding, the choice among every allowed set, and the qvalue parser. */
#include <string.h>

#include "fuzz.h"
#include "filters/accept_encoding.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *v = malloc(size ? size : 1);
    memcpy(v, data, size);
    const char *nl = memchr(v, '\n', size);
    size_t first = nl ? (size_t)(nl - v) : size;

    hy_accept_encoding_t ae;
    hy_ae_init(&ae);
    hy_ae_parse(&ae, v, first);
    if (nl != NULL)
        hy_ae_parse(&ae, nl + 1, size - first - 1);
    CHECK(ae.star >= -1 && ae.star <= 1000);
    for (int c = 0; c < HY_CODING_N; c++) {
        CHECK(ae.q[c] >= -1 && ae.q[c] <= 1000);
        int q = hy_ae_q(&ae, c);
        CHECK(q >= 0 && q <= 1000);
    }
    static const int prefs[] = {HY_CODING_BR, HY_CODING_ZSTD, HY_CODING_GZIP};
    for (unsigned allowed = 0; allowed < 8; allowed++) {
        int c = hy_ae_choose(&ae, allowed, prefs, 3);
        CHECK(c == -1 || (c >= 0 && c < HY_CODING_IDENTITY && (allowed & (1u << c)) && hy_ae_q(&ae, c) > 0));
        for (int o = 0; o < HY_CODING_IDENTITY && c >= 0; o++) /* nothing allowed is preferred by the client */
            if (allowed & (1u << o))
                CHECK(hy_ae_q(&ae, o) <= hy_ae_q(&ae, c));
        if (c == -1)
            for (int o = 0; o < HY_CODING_IDENTITY; o++)
                CHECK(!(allowed & (1u << o)) || hy_ae_q(&ae, o) == 0);
    }
    int q = hy_ae_parse_qvalue(v, size);
    CHECK(q >= -1 && q <= 1000);
    free(v);
    return 0;
}
