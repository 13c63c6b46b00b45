/* compress_test.c — one-shot buffers and streams of every codec, read back (gzip with zlib, zstd with libzstd;
 * brotli by its size only: the decoder is not linked), levels out of range, unknown codecs. */
#include <stdlib.h>
#include <zlib.h>
#include <zstd.h>
#include "../harness.h"
#include "core/hayate.h"
#include "filters/compress.h"
#include "filters/accept_encoding.h"

static char text[200000];

static size_t gunzip_into(const char *in, size_t n, char *out, size_t cap)
{
    z_stream z = {0};
    if (inflateInit2(&z, 15 + 16) != Z_OK)
        return 0;
    z.next_in = (Bytef *)in, z.avail_in = (uInt)n;
    z.next_out = (Bytef *)out, z.avail_out = (uInt)cap;
    int rc = inflate(&z, Z_FINISH);
    size_t got = cap - z.avail_out;
    inflateEnd(&z);
    return rc == Z_STREAM_END ? got : 0;
}

static void test_names(void)
{
    is_str(hy_codec_name(HY_CODING_GZIP), "gzip");
    is_str(hy_codec_name(HY_CODING_BR), "br");
    is_str(hy_codec_name(HY_CODING_ZSTD), "zstd");
    is_str(hy_codec_name(12345), "identity");
}

static void test_buffers(void)
{
    static char back[sizeof(text)];
    size_t n = 0;
    for (int level = -1; level <= 13; level += 7) { /* -1 and 13: out of range, level 6 instead */
        char *z = hy_compress_buf(HY_CODING_GZIP, level, text, sizeof(text), &n);
        ok(z != NULL && n > 0 && n < sizeof(text) / 2);
        if (z != NULL)
            is_int(gunzip_into(z, n, back, sizeof(back)), sizeof(text));
        ok(memcmp(back, text, sizeof(text)) == 0);
        free(z);
    }
    char *z = hy_compress_buf(HY_CODING_ZSTD, 3, text, sizeof(text), &n);
    ok(z != NULL);
    if (z != NULL) {
        is_int(ZSTD_decompress(back, sizeof(back), z, n), sizeof(text));
        ok(memcmp(back, text, sizeof(text)) == 0);
    }
    free(z);
    z = hy_compress_buf(HY_CODING_BR, 4, text, sizeof(text), &n);
    ok(z != NULL && n > 0 && n < sizeof(text) / 2);
    free(z);
    z = hy_compress_buf(HY_CODING_BR, 4, "", 0, &n); /* empty input: a valid (tiny) stream */
    ok(z != NULL && n > 0);
    free(z);
    ok(hy_compress_buf(999, 1, text, 10, &n) == NULL);
}

struct sink {
    char *buf;
    size_t len, cap;
    int calls;
};

static void emit(void *arg, char *b, size_t len)
{
    struct sink *s = arg;
    if (s->len + len > s->cap) {
        s->cap = (s->len + len) * 2;
        s->buf = realloc(s->buf, s->cap);
    }
    memcpy(s->buf + s->len, b, len);
    s->len += len;
    s->calls++;
    free(b);
}

static void test_streams(void)
{
    static char back[sizeof(text)];
    int codecs[] = {HY_CODING_GZIP, HY_CODING_BR, HY_CODING_ZSTD};
    for (size_t c = 0; c < 3; c++) {
        hy_zstream_t *zs = hy_zstream_new(codecs[c], 1);
        if (!ok(zs != NULL))
            continue;
        struct sink s = {0};
        for (size_t off = 0; off < sizeof(text); off += 7000) { /* many small writes */
            size_t n = sizeof(text) - off < 7000 ? sizeof(text) - off : 7000;
            is_int(hy_zstream_write(zs, text + off, n, false, emit, &s), 0);
        }
        is_int(hy_zstream_write(zs, NULL, 0, true, emit, &s), 0);
        ok(s.len > 0 && s.calls >= 1);
        if (codecs[c] == HY_CODING_GZIP)
            is_int(gunzip_into(s.buf, s.len, back, sizeof(back)), sizeof(text));
        else if (codecs[c] == HY_CODING_ZSTD)
            is_int(ZSTD_decompress(back, sizeof(back), s.buf, s.len), sizeof(text));
        if (codecs[c] != HY_CODING_BR)
            ok(memcmp(back, text, sizeof(text)) == 0);
        hy_zstream_free(zs);
        free(s.buf);
    }
    ok(hy_zstream_new(999, 1) == NULL);
    hy_compress_cleanup();
    hy_compress_cleanup(); /* twice: nothing left to free */
}

int main(void)
{
    unsigned x = 12345;
    for (size_t i = 0; i < sizeof(text); i++) {
        x = x * 1103515245u + 12345u;
        text[i] = "abcdefgh \n"[(x >> 16) % 10];
    }
    subtest("codec names", test_names);
    subtest("one-shot buffers", test_buffers);
    subtest("streams", test_streams);
    return done_testing();
}
