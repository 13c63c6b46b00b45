/* target_fuzz.c — libFuzzer driver: request-target normalisation (hy_http_parse_target: origin, absolute and
 * asterisk form, percent-decoding, dot segments, merge_slashes) and Host validation (hy_http_validate_host) on
 * raw bytes, as a Host header value would reach it. The path that comes out is absolute and has no dot segment;
 * a valid host is lower case, non-empty, and has no '/', CTL, SP or "..". */
#include <string.h>

#include "fuzz.h"
#include "http/uri.h"

static bool within(hy_str_t outer, hy_str_t s)
{
    return s.ptr == NULL || (s.ptr >= outer.ptr && s.ptr + s.len <= outer.ptr + outer.len);
}

static void check_host(const char *in, size_t len)
{
    char *h = malloc(len ? len : 1);
    memcpy(h, in, len);
    ssize_t hl = hy_http_validate_host(h, len);
    CHECK(hl == -1 || (hl >= 1 && (size_t)hl <= len));
    for (ssize_t i = 0; i < hl; i++) {
        unsigned char c = (unsigned char)h[i];
        CHECK(!(c >= 'A' && c <= 'Z') && c != '/' && c != '\\' && c > 0x20 && c != 0x7f);
    }
    if (hl > 0)
        CHECK(memmem(h, (size_t)hl, "..", 2) == NULL && h[0] != '.');
    free(h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    static const hy_str_t methods[] = {HY_STR("GET"), HY_STR("OPTIONS"), HY_STR("CONNECT"), HY_STR("POST")};
    hy_str_t method = methods[data[0] & 3];
    bool merge = (data[0] & 4) != 0;
    data++;
    size--;
    char *t = malloc(size ? size : 1);
    memcpy(t, data, size);
    hy_str_t target = {t, size};

    char *out = malloc(size + 2);
    size_t out_len = 0;
    hy_str_t args, host;
    int rc = hy_http_parse_target(method, target, merge, out, &out_len, &args, &host);
    CHECK(rc == 0 || rc == -1);
    if (rc == 0) {
        CHECK(out_len >= 1 && out_len <= size && out[out_len] == '\0');
        CHECK(memchr(out, '\0', out_len) == NULL);
        if (!(out_len == 1 && out[0] == '*')) {
            CHECK(out[0] == '/');
            CHECK(memmem(out, out_len, "/../", 4) == NULL && memmem(out, out_len, "/./", 3) == NULL);
            CHECK(!(out_len >= 3 && memcmp(out + out_len - 3, "/..", 3) == 0));
            CHECK(!(out_len >= 2 && memcmp(out + out_len - 2, "/.", 2) == 0));
            if (merge)
                CHECK(memmem(out, out_len, "//", 2) == NULL);
        }
        CHECK(within(target, args) && within(target, host));
        if (host.ptr != NULL)
            check_host(host.ptr, host.len);
    }
    check_host(t, size);
    free(out);
    free(t);
    return 0;
}
