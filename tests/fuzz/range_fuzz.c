/* range_fuzz.c — libFuzzer driver: Range (hy_range_parse) against a representation size taken from the input,
 * the multipart length/part-header writers on what it returns, and If-Range. Every range returned must lie inside
 * the representation, and the multipart length must equal what the writers produce. */
#include <string.h>

#include "fuzz.h"
#include "filters/range.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    /* first byte: size class of the representation; second: max ranges */
    static const int64_t sizes[] = {0, 1, 2, 10, 100, 1000, 65536, INT64_MAX / 4};
    int64_t rep = sizes[data[0] & 7];
    int max = data[1] % 40 - 2; /* -2..37: includes max <= 0 */
    data += 2;
    size -= 2;
    char *v = malloc(size); /* exact size: ASan sees reads past the end */
    memcpy(v, data, size);

    int cnt = hy_range_count(v, size);
    CHECK(cnt >= 1);
    hy_range_t *rs = malloc(sizeof(hy_range_t) * (size_t)(max > 0 ? max : 1));
    int n = hy_range_parse(v, size, rep, rs, max);
    CHECK(n == HY_RANGE_NOT_SATISFIABLE || (n >= 0 && n <= (max > 0 ? max : 0)));
    CHECK(n <= cnt || n == HY_RANGE_NOT_SATISFIABLE);
    int64_t total = 0;
    for (int i = 0; i < n; i++) {
        CHECK(rs[i].start >= 0 && rs[i].start <= rs[i].end && rs[i].end < rep);
        total += rs[i].end - rs[i].start + 1;
    }
    CHECK(total <= rep);
    if (n >= 1) {
        static const char boundary[] = "00000000000000000001";
        hy_str_t type = HY_STR("text/plain");
        int64_t len = hy_range_multipart_length(rs, n, boundary, type, rep);
        int64_t w = 0;
        char hdr[256];
        for (int i = 0; i < n; i++) {
            size_t hl = hy_range_part_header(hdr, sizeof(hdr), boundary, type, &rs[i], rep);
            CHECK(hl < sizeof(hdr));
            w += (int64_t)hl + rs[i].end - rs[i].start + 1;
        }
        size_t el = hy_range_multipart_end(hdr, sizeof(hdr), boundary);
        CHECK(el < sizeof(hdr));
        CHECK(len == w + (int64_t)el);
        size_t cl = hy_range_content_range(hdr, sizeof(hdr), &rs[0], rep);
        CHECK(cl < sizeof(hdr));
    }
    /* the same bytes as an If-Range value, against a strong ETag and a date */
    (void)hy_range_if_range_ok(v, size, HY_STR("\"5e1f-1a\""), 784111777);
    (void)hy_range_if_range_ok(v, size, HY_STR_NULL, -1);
    free(rs);
    free(v);
    return 0;
}
