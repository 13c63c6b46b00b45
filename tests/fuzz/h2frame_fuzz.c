/* h2frame_fuzz.c — libFuzzer driver: HTTP/2 frames (proto/h2frame.c). The input is walked as a sequence of frames
 * (header, then the payload its length names, cut at the input's end); each payload is checked by
 * hy_h2_frame_parse, whose result must lie within the payload and account for every byte (data + padding +
 * priority or other fixed fields), SETTINGS parameters are read and judged; then the input, as a header block, is
 * split into HEADERS + CONTINUATION frames at a frame size the input picks, and joined back. */
#include <string.h>
#include "fuzz.h"
#include "proto/h2frame.h"

static void check_frame(const hy_h2_hdr_t *h, const uint8_t *p)
{
    hy_h2_frame_t f;
    hy_h2_err_t e;
    if (hy_h2_frame_parse(h, p, &f, &e) < 0) {
        CHECK(e.what != NULL);
        CHECK(e.code <= HY_H2_HTTP_1_1_REQUIRED);
        return;
    }
    if (f.len)
        CHECK(f.data >= p && f.data + f.len <= p + h->length);
    CHECK(f.pad <= h->length);
    CHECK(f.len + f.pad <= h->length);
    switch (h->type) {
    case HY_H2_DATA:
        CHECK(f.len + f.pad == h->length);
        CHECK(h->sid != 0);
        break;
    case HY_H2_HEADERS:
        CHECK(f.len + f.pad + (h->flags & HY_H2_F_PRIORITY ? 5 : 0) == h->length);
        break;
    case HY_H2_SETTINGS:
        CHECK(h->length % 6 == 0 && h->sid == 0);
        for (size_t i = 0; i < f.len / 6; i++) {
            uint16_t id;
            uint32_t v;
            hy_h2_setting_at(&f, i, &id, &v);
            if (hy_h2_setting_check(id, v, &e) == 0 && id == HY_H2_SET_MAX_FRAME_SIZE)
                CHECK(v >= HY_H2_DEFAULT_FRAME && v <= HY_H2_MAX_FRAME);
        }
        break;
    case HY_H2_WINDOW_UPDATE:
        CHECK(f.value > 0 && f.value <= HY_H2_MAX_WINDOW);
        break;
    case HY_H2_PING:
        CHECK(h->length == 8);
        break;
    case HY_H2_PRIORITY:
        CHECK(h->length == 5 && f.dep != h->sid);
        break;
    case HY_H2_PUSH_PROMISE:
        CHECK(0); /* never accepted from a client */
        break;
    default:
        break;
    }
}

static void check_split(const uint8_t *data, size_t size)
{
    if (size < 2)
        return;
    size_t max_frame = 1 + data[0] % 64; /* small frames: many CONTINUATIONs */
    data++, size--;
    size_t room = hy_h2_headers_size(size, max_frame);
    uint8_t *buf = malloc(room), *back = malloc(size + 1);
    memcpy(buf + HY_H2_HDR, data, size);
    size_t n = hy_h2_frame_headers(buf, size, 3, true, max_frame);
    CHECK(n == room);
    size_t at = 0, got = 0;
    for (bool first = true;; first = false) {
        CHECK(at + HY_H2_HDR <= n);
        hy_h2_hdr_t h;
        hy_h2_hdr_parse(buf + at, &h);
        CHECK(h.type == (first ? HY_H2_HEADERS : HY_H2_CONTINUATION) && h.sid == 3);
        CHECK(h.length <= max_frame && at + HY_H2_HDR + h.length <= n);
        CHECK(first == !!(h.flags & HY_H2_F_END_STREAM));
        memcpy(back + got, buf + at + HY_H2_HDR, h.length);
        got += h.length;
        at += HY_H2_HDR + h.length;
        if (h.flags & HY_H2_F_END_HEADERS)
            break;
    }
    CHECK(at == n && got == size && memcmp(back, data, size) == 0);
    free(buf);
    free(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t pos = 0;
    while (size - pos >= HY_H2_HDR) {
        hy_h2_hdr_t h;
        hy_h2_hdr_parse(data + pos, &h);
        CHECK(h.sid <= 0x7fffffff && h.length <= HY_H2_MAX_FRAME);
        pos += HY_H2_HDR;
        if (h.length > size - pos)
            h.length = (uint32_t)(size - pos);
        /* the payload in its own allocation: a read past it is ASan's to see */
        uint8_t *p = malloc(h.length ? h.length : 1);
        memcpy(p, data + pos, h.length);
        check_frame(&h, p);
        free(p);
        pos += h.length;
    }
    check_split(data, size);
    return 0;
}
