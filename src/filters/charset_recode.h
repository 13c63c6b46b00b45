/* charset_recode.h — recoding bytes through charset_map tables (nginx's charset module): one byte for one byte
 * between two single-byte charsets, a single-byte charset to UTF-8, UTF-8 to a single-byte charset (characters
 * the charset lacks become "&#N;", invalid UTF-8 "?"). Streaming: a UTF-8 sequence cut between two calls is
 * kept until the next one. */
#ifndef HY_HTTP_FILTER_CHARSET_RECODE_H
#define HY_HTTP_FILTER_CHARSET_RECODE_H

#include <stddef.h>
#include <stdint.h>

enum { HY_RECODE_BYTE, HY_RECODE_TO_UTF8, HY_RECODE_FROM_UTF8 };

/* The tables of one direction, as charset_map builds them:
 * BYTE: 256 bytes (byte → byte); TO_UTF8: 256 entries of 4 bytes (length, then up to 3 bytes of UTF-8);
 * FROM_UTF8: 256 pages (high byte of the BMP code point) of 256 bytes, a NULL page or a 0 byte: no character. */
typedef struct hy_recode {
    int mode;
    const uint8_t *table;
    uint8_t *const *pages;
    uint8_t saved[4]; /* FROM_UTF8: an incomplete sequence from the end of the previous call */
    size_t saved_len;
} hy_recode_t;

/** The largest output hy_recode can produce for n input bytes. */
size_t hy_recode_bound(const hy_recode_t *rc, size_t n);
/** Recode n bytes of src into dst (hy_recode_bound(rc, n) bytes); returns the number of bytes written. */
size_t hy_recode(hy_recode_t *rc, const uint8_t *src, size_t n, uint8_t *dst);
/** Decode one UTF-8 character at p (n bytes available): the code point with *used bytes, -1 when the sequence
 * is cut short by the end of the input, -2 when invalid (*used = 1). */
int32_t hy_utf8_decode_one(const uint8_t *p, size_t n, size_t *used);

#endif
