/* h1_request_fuzz.c — libFuzzer driver: HTTP/1 request parser (whole and split through the cheap path), framing,
 * target normalisation of the parsed target and host validation; checks invariants and aborts on violation. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/h1parse.h"
#include "http/uri.h"

#define MAXH 32

#define CHECK(c)                                                                                                       \
    do {                                                                                                               \
        if (!(c)) {                                                                                                    \
            fprintf(stderr, "invariant failed: %s (%s:%d)\n", #c, __FILE__, __LINE__);                                 \
            abort();                                                                                                   \
        }                                                                                                              \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool is_tchar(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

static bool within(const char *buf, size_t len, hy_str_t s)
{
    return s.len == 0 || (s.ptr >= buf && s.ptr + s.len <= buf + len);
}

/* A CR not followed by LF (a CR as the last byte may still get its LF). */
static bool has_bare_cr(const char *buf, size_t len)
{
    for (size_t i = 0; i + 1 < len; i++)
        if (buf[i] == '\r' && buf[i + 1] != '\n')
            return true;
    return false;
}

static int do_parse(const char *buf, size_t len, size_t last_len, hy_h1_header_t *h, hy_h1_request_t *r)
{
    memset(r, 0, sizeof(*r));
    r->headers = h;
    r->num_headers = MAXH;
    return hy_h1_parse_request(buf, len, last_len, 4096, 4096, r);
}

static void check_path(const char *out, size_t n, bool merge)
{
    CHECK(out[n] == '\0');
    CHECK(memchr(out, '\0', n) == NULL);
    if (n == 1 && out[0] == '*')
        return;
    CHECK(n >= 1 && out[0] == '/');
    CHECK(memmem(out, n, "/../", 4) == NULL);
    CHECK(memmem(out, n, "/./", 3) == NULL);
    CHECK(!(n >= 3 && memcmp(out + n - 3, "/..", 3) == 0));
    CHECK(!(n >= 2 && memcmp(out + n - 2, "/.", 2) == 0));
    if (merge)
        CHECK(memmem(out, n, "//", 2) == NULL);
}

static void check_target(hy_str_t method, hy_str_t target)
{
    char *out = malloc(target.len + 1);
    for (int merge = 0; merge < 2; merge++) {
        size_t out_len = 0;
        hy_str_t args, host;
        int rc = hy_http_parse_target(method, target, merge, out, &out_len, &args, &host);
        CHECK(rc == 0 || rc == -1);
        if (rc != 0)
            continue;
        CHECK(out_len <= target.len);
        check_path(out, out_len, merge);
        CHECK(within(target.ptr, target.len, args));
        CHECK(within(target.ptr, target.len, host));
        if (host.ptr != NULL) {
            char *h = malloc(host.len + 1);
            memcpy(h, host.ptr, host.len);
            ssize_t hl = hy_http_validate_host(h, host.len);
            CHECK(hl >= 1 && (size_t)hl <= host.len);
            for (ssize_t i = 0; i < hl; i++)
                CHECK(!(h[i] >= 'A' && h[i] <= 'Z') && h[i] != '/' && (unsigned char)h[i] > 0x20);
            CHECK(memmem(h, (size_t)hl, "..", 2) == NULL);
            free(h);
        }
    }
    free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t split_seed = data[0];
    data++;
    size--;
    /* exact-size copy so ASan sees any read past the end */
    char *buf = malloc(size ? size : 1);
    memcpy(buf, data, size);

    hy_h1_header_t h[MAXH];
    hy_h1_request_t r;
    int rc = do_parse(buf, size, 0, h, &r);
    CHECK(rc == -1 || rc == -2 || (rc > 0 && (size_t)rc <= size));
    /* still waiting means every byte so far may be part of a valid head: a bare CR is 400 at once (issue 17) */
    CHECK(rc != -2 || !has_bare_cr(buf, size));
    if (rc == -1)
        CHECK((r.error_status == 400 || r.error_status == 414 || r.error_status == 505) && r.error_reason != NULL);

    if (rc > 0) {
        CHECK(r.version == 10 || r.version == 11);
        CHECK(r.method.len > 0 && within(buf, size, r.method));
        CHECK(r.target.len > 0 && within(buf, size, r.target));
        CHECK(r.num_headers <= MAXH);
        for (size_t i = 0; i < r.method.len; i++)
            CHECK(is_tchar((unsigned char)r.method.ptr[i]));
        for (size_t i = 0; i < r.target.len; i++)
            CHECK((unsigned char)r.target.ptr[i] > 0x20 && r.target.ptr[i] != 0x7f);
        for (size_t i = 0; i < r.num_headers; i++) {
            hy_str_t n = r.headers[i].name, v = r.headers[i].value;
            CHECK(n.len > 0 && within(buf, size, n) && within(buf, size, v));
            /* a name is visible bytes without ':'; one that is not a token is an nginx "invalid header", which
             * hy_h1_field_name_valid reports (the connection drops or refuses it: ignore_invalid_headers) */
            bool token = true;
            for (size_t k = 0; k < n.len; k++) {
                unsigned char c = (unsigned char)n.ptr[k];
                CHECK(c > 0x20 && c != 0x7f && c != ':');
                token = token && is_tchar(c);
            }
            CHECK(hy_h1_field_name_valid(n) == token);
            for (size_t k = 0; k < v.len; k++) {
                unsigned char c = (unsigned char)v.ptr[k];
                CHECK(c == '\t' || (c >= 0x20 && c != 0x7f));
            }
            if (v.len > 0) {
                CHECK(v.ptr[0] != ' ' && v.ptr[0] != '\t');
                CHECK(v.ptr[v.len - 1] != ' ' && v.ptr[v.len - 1] != '\t');
            }
        }
        int64_t cl;
        bool chunked;
        int status = 0;
        const char *reason = NULL;
        int frc = hy_h1_framing(&r, &cl, &chunked, &status, &reason);
        if (frc == 0) {
            CHECK(!(chunked && cl != -1));
            CHECK(cl >= -1);
        } else {
            CHECK(frc == -1 && (status == 400 || status == 501) && reason != NULL);
        }
        check_target(r.method, r.target);

        /* the same request parsed in two steps (second one through the cheap path) gives the same result */
        size_t k = size ? split_seed % size : 0;
        if (k > 0) {
            hy_h1_header_t h2[MAXH];
            hy_h1_request_t r2;
            int rc1 = do_parse(buf, k, 0, h2, &r2);
            CHECK(rc1 == -2 || rc1 == rc);
            CHECK(rc1 != -2 || !has_bare_cr(buf, k));
            if (rc1 == -2) {
                int rc2 = do_parse(buf, size, k, h2, &r2);
                CHECK(rc2 == rc);
                CHECK(r2.num_headers == r.num_headers);
                CHECK(r2.target.ptr == r.target.ptr && r2.target.len == r.target.len);
            }
        }
    } else {
        /* also drive the normaliser with the raw input as a target */
        check_target(HY_STR("GET"), (hy_str_t){buf, size});
    }
    free(buf);
    return 0;
}
