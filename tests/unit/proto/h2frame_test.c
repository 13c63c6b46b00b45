/* h2frame_test.c — HTTP/2 frames (proto/h2frame.c): the frame header both ways, each type's payload rules of RFC 9113
 * §6 (sizes, stream 0 or not, padding, increments, self-dependency) with their error codes and whether they are
 * stream or connection errors, SETTINGS values (§6.5.2), the writers, and a header block split into HEADERS and
 * CONTINUATION frames at the peer's SETTINGS_MAX_FRAME_SIZE. */
#include <string.h>
#include "../harness.h"
#include "proto/h2frame.h"

#define is_mem(p, n, b, bn) harness_is_mem((p), (n), (b), (bn), #p " eq " #b, __FILE__, __LINE__)

static int parse(uint8_t type, uint8_t flags, uint32_t sid, const void *payload, size_t len, hy_h2_frame_t *f,
                 hy_h2_err_t *e)
{
    hy_h2_hdr_t h = {(uint32_t)len, type, flags, sid};
    return hy_h2_frame_parse(&h, payload, f, e);
}

static void test_header(void)
{
    uint8_t b[9];
    hy_h2_hdr_write(b, 0x123456, HY_H2_HEADERS, 0x25, 0x80000007); /* the reserved bit is not sent */
    hy_h2_hdr_t h;
    hy_h2_hdr_parse(b, &h);
    is_int(h.length, 0x123456);
    is_int(h.type, HY_H2_HEADERS);
    is_int(h.flags, 0x25);
    is_int(h.sid, 7);
    b[5] |= 0x80; /* received with the reserved bit: ignored (§4.1) */
    hy_h2_hdr_parse(b, &h);
    is_int(h.sid, 7);
}

static void test_data(void)
{
    hy_h2_frame_t f;
    hy_h2_err_t e;
    is_int(parse(HY_H2_DATA, 0, 0, "ab", 2, &f, &e), -1);
    is_int(e.code, HY_H2_PROTOCOL_ERROR);
    ok(!e.stream);
    is_int(parse(HY_H2_DATA, 0, 1, "ab", 2, &f, &e), 0);
    is_int(f.len, 2);
    ok(memcmp(f.data, "ab", 2) == 0);
    is_int(f.pad, 0);
    /* padded: pad length 2, "xy", 2 bytes of padding */
    is_int(parse(HY_H2_DATA, HY_H2_F_PADDED, 1, "\x02xy\0\0", 5, &f, &e), 0);
    is_int(f.len, 2);
    ok(memcmp(f.data, "xy", 2) == 0);
    is_int(f.pad, 3);
    /* padding as long as the rest: a connection error PROTOCOL_ERROR (§6.1) */
    is_int(parse(HY_H2_DATA, HY_H2_F_PADDED, 1, "\x05xy\0\0", 5, &f, &e), -1);
    is_int(e.code, HY_H2_PROTOCOL_ERROR);
    ok(!e.stream);
    is_int(parse(HY_H2_DATA, HY_H2_F_PADDED, 1, "\x04\0\0\0\0", 5, &f, &e), 0); /* all padding: fine */
    is_int(f.len, 0);
    is_int(parse(HY_H2_DATA, HY_H2_F_PADDED, 1, "", 0, &f, &e), -1); /* no room for the pad length */
    is_int(e.code, HY_H2_FRAME_SIZE_ERROR);
}

static void test_headers(void)
{
    hy_h2_frame_t f;
    hy_h2_err_t e;
    is_int(parse(HY_H2_HEADERS, HY_H2_F_END_HEADERS, 0, "\x82", 1, &f, &e), -1);
    is_int(e.code, HY_H2_PROTOCOL_ERROR);
    /* padded and with priority: pad length 1, dependency 3 exclusive, weight, block "\x82", one padding byte */
    is_int(parse(HY_H2_HEADERS, HY_H2_F_PADDED | HY_H2_F_PRIORITY, 5, "\x01\x80\0\0\x03\x10\x82\0", 8, &f, &e), 0);
    is_int(f.dep, 3);
    is_int(f.len, 1);
    is_int(f.data[0], 0x82);
    is_int(f.pad, 2);
    is_int(parse(HY_H2_HEADERS, HY_H2_F_PRIORITY, 5, "\0\0\0", 3, &f, &e), -1); /* too short for the priority */
    is_int(e.code, HY_H2_FRAME_SIZE_ERROR);
    /* its own dependency: left to the session (the block is decoded still) */
    is_int(parse(HY_H2_HEADERS, HY_H2_F_PRIORITY, 5, "\0\0\0\x05\x10\x82", 6, &f, &e), 0);
    is_int(f.dep, 5);
}

static void test_control(void)
{
    hy_h2_frame_t f;
    hy_h2_err_t e;
    /* PRIORITY */
    is_int(parse(HY_H2_PRIORITY, 0, 0, "\0\0\0\x01\x10", 5, &f, &e), -1);
    ok(!e.stream);
    is_int(parse(HY_H2_PRIORITY, 0, 3, "\0\0\0\x01", 4, &f, &e), -1);
    is_int(e.code, HY_H2_FRAME_SIZE_ERROR);
    ok(e.stream);
    is_int(parse(HY_H2_PRIORITY, 0, 3, "\0\0\0\x03\x10", 5, &f, &e), -1);
    is_int(e.code, HY_H2_PROTOCOL_ERROR);
    ok(e.stream);
    is_int(parse(HY_H2_PRIORITY, 0, 3, "\0\0\0\x01\x10", 5, &f, &e), 0);
    /* RST_STREAM */
    is_int(parse(HY_H2_RST_STREAM, 0, 0, "\0\0\0\x08", 4, &f, &e), -1);
    is_int(e.code, HY_H2_PROTOCOL_ERROR);
    is_int(parse(HY_H2_RST_STREAM, 0, 1, "\0\0\0\x08\0", 5, &f, &e), -1);
    is_int(e.code, HY_H2_FRAME_SIZE_ERROR);
    ok(!e.stream);
    is_int(parse(HY_H2_RST_STREAM, 0, 1, "\0\0\0\x08", 4, &f, &e), 0);
    is_int(f.value, HY_H2_CANCEL);
    /* SETTINGS */
    is_int(parse(HY_H2_SETTINGS, 0, 1, "", 0, &f, &e), -1);
    is_int(e.code, HY_H2_PROTOCOL_ERROR);
    is_int(parse(HY_H2_SETTINGS, HY_H2_F_ACK, 0, "\0\x04\0\0\0\x01", 6, &f, &e), -1);
    is_int(e.code, HY_H2_FRAME_SIZE_ERROR);
    is_int(parse(HY_H2_SETTINGS, 0, 0, "\0\x04\0\0\0", 5, &f, &e), -1);
    is_int(e.code, HY_H2_FRAME_SIZE_ERROR);
    is_int(parse(HY_H2_SETTINGS, 0, 0, "\0\x04\0\0\x01\0" "\0\x05\0\0\x40\0", 12, &f, &e), 0);
    uint16_t id;
    uint32_t v;
    hy_h2_setting_at(&f, 1, &id, &v);
    is_int(id, HY_H2_SET_MAX_FRAME_SIZE);
    is_int(v, 16384);
    /* PUSH_PROMISE from a client */
    is_int(parse(HY_H2_PUSH_PROMISE, 0, 1, "\0\0\0\x02", 4, &f, &e), -1);
    is_int(e.code, HY_H2_PROTOCOL_ERROR);
    /* PING */
    is_int(parse(HY_H2_PING, 0, 0, "12345678", 8, &f, &e), 0);
    is_int(parse(HY_H2_PING, 0, 0, "1234567", 7, &f, &e), -1);
    is_int(e.code, HY_H2_FRAME_SIZE_ERROR);
    is_int(parse(HY_H2_PING, 0, 1, "12345678", 8, &f, &e), -1);
    is_int(e.code, HY_H2_PROTOCOL_ERROR);
    /* GOAWAY */
    is_int(parse(HY_H2_GOAWAY, 0, 0, "\0\0\0\x05\0\0\0\x02" "dbg", 11, &f, &e), 0);
    is_int(f.last_sid, 5);
    is_int(f.value, HY_H2_INTERNAL_ERROR);
    is_int(f.len, 3);
    is_int(parse(HY_H2_GOAWAY, 0, 0, "\0\0\0\x05", 4, &f, &e), -1);
    is_int(e.code, HY_H2_FRAME_SIZE_ERROR);
    /* WINDOW_UPDATE: 0 is a stream error on a stream, a connection error on the connection */
    is_int(parse(HY_H2_WINDOW_UPDATE, 0, 0, "\x80\0\0\x01", 4, &f, &e), 0);
    is_int(f.value, 1);
    is_int(parse(HY_H2_WINDOW_UPDATE, 0, 0, "\0\0\0\0", 4, &f, &e), -1);
    ok(!e.stream);
    is_int(parse(HY_H2_WINDOW_UPDATE, 0, 3, "\0\0\0\0", 4, &f, &e), -1);
    ok(e.stream);
    is_int(e.code, HY_H2_PROTOCOL_ERROR);
    is_int(parse(HY_H2_WINDOW_UPDATE, 0, 3, "\0\0\0\0\0", 5, &f, &e), -1);
    is_int(e.code, HY_H2_FRAME_SIZE_ERROR);
    /* CONTINUATION, PRIORITY_UPDATE, unknown */
    is_int(parse(HY_H2_CONTINUATION, 0, 0, "\x82", 1, &f, &e), -1);
    is_int(parse(HY_H2_PRIORITY_UPDATE, 0, 0, "\0\0\0\x03u=1", 7, &f, &e), 0);
    is_int(f.value, 3);
    is_int(f.len, 3);
    is_int(parse(HY_H2_PRIORITY_UPDATE, 0, 1, "\0\0\0\x03u=1", 7, &f, &e), -1);
    is_int(parse(HY_H2_PRIORITY_UPDATE, 0, 0, "\0\0\0\0u=1", 7, &f, &e), -1);
    is_int(parse(0xfa, 0xff, 9, "whatever", 8, &f, &e), 0);
}

static void test_settings_values(void)
{
    hy_h2_err_t e;
    is_int(hy_h2_setting_check(HY_H2_SET_ENABLE_PUSH, 1, &e), 0);
    is_int(hy_h2_setting_check(HY_H2_SET_ENABLE_PUSH, 2, &e), -1);
    is_int(e.code, HY_H2_PROTOCOL_ERROR);
    is_int(hy_h2_setting_check(HY_H2_SET_INITIAL_WINDOW_SIZE, 0x7fffffff, &e), 0);
    is_int(hy_h2_setting_check(HY_H2_SET_INITIAL_WINDOW_SIZE, 0x80000000u, &e), -1);
    is_int(e.code, HY_H2_FLOW_CONTROL_ERROR);
    is_int(hy_h2_setting_check(HY_H2_SET_MAX_FRAME_SIZE, 16383, &e), -1);
    is_int(e.code, HY_H2_PROTOCOL_ERROR);
    is_int(hy_h2_setting_check(HY_H2_SET_MAX_FRAME_SIZE, 16777215, &e), 0);
    is_int(hy_h2_setting_check(HY_H2_SET_MAX_FRAME_SIZE, 16777216, &e), -1);
    is_int(hy_h2_setting_check(0x99, 0xffffffffu, &e), 0); /* unknown: ignored */
}

static void test_writers(void)
{
    uint8_t b[64], *e;
    uint16_t ids[] = {3, 4};
    uint32_t vals[] = {128, 65536};
    e = hy_h2_write_settings(b, ids, vals, 2);
    is_int(e - b, 21);
    is_mem((char *)b, 21, "\0\0\x0c\x04\0\0\0\0\0\0\x03\0\0\0\x80\0\x04\0\x01\0\0", 21);
    is_int(hy_h2_write_settings_ack(b) - b, 9);
    is_mem((char *)b, 9, "\0\0\0\x04\x01\0\0\0\0", 9);
    is_int(hy_h2_write_ping_ack(b, (const uint8_t *)"ABCDEFGH") - b, 17);
    is_mem((char *)b, 17, "\0\0\x08\x06\x01\0\0\0\0ABCDEFGH", 17);
    is_int(hy_h2_write_window_update(b, 3, 0x7fffffff) - b, 13);
    is_mem((char *)b, 13, "\0\0\x04\x08\0\0\0\0\x03\x7f\xff\xff\xff", 13);
    is_int(hy_h2_write_rst(b, 5, HY_H2_REFUSED_STREAM) - b, 13);
    is_mem((char *)b, 13, "\0\0\x04\x03\0\0\0\0\x05\0\0\0\x07", 13);
    is_int(hy_h2_write_goaway(b, 7, HY_H2_ENHANCE_YOUR_CALM) - b, 17);
    is_mem((char *)b, 17, "\0\0\x08\x07\0\0\0\0\0\0\0\0\x07\0\0\0\x0b", 17);
    is_int(hy_h2_write_data_hdr(b, 1, 5, true) - b, 9);
    is_mem((char *)b, 9, "\0\0\x05\0\x01\0\0\0\x01", 9);
    is_str(hy_h2_error_name(HY_H2_COMPRESSION_ERROR), "COMPRESSION_ERROR");
}

static void test_headers_split(void)
{
    uint8_t buf[200];
    /* one frame: the block stays in place */
    memcpy(buf + 9, "\x88\x82", 2);
    is_int(hy_h2_frame_headers(buf, 2, 1, true, 16384), 11);
    is_mem((char *)buf, 11, "\0\0\x02\x01\x05\0\0\0\x01\x88\x82", 11);
    /* 25 bytes at a max frame size of 10: HEADERS 10, CONTINUATION 10, CONTINUATION 5 (END_HEADERS) */
    uint8_t block[25];
    for (int i = 0; i < 25; i++)
        block[i] = (uint8_t)('a' + i);
    memcpy(buf + 9, block, 25);
    is_int(hy_h2_headers_size(25, 10), 25 + 27);
    size_t n = hy_h2_frame_headers(buf, 25, 3, false, 10);
    is_int(n, 52);
    hy_h2_hdr_t h;
    hy_h2_hdr_parse(buf, &h);
    ok(h.type == HY_H2_HEADERS && h.length == 10 && h.flags == 0 && h.sid == 3);
    is_mem((char *)buf + 9, 10, (char *)block, 10);
    hy_h2_hdr_parse(buf + 19, &h);
    ok(h.type == HY_H2_CONTINUATION && h.length == 10 && h.flags == 0 && h.sid == 3);
    is_mem((char *)buf + 28, 10, (char *)block + 10, 10);
    hy_h2_hdr_parse(buf + 38, &h);
    ok(h.type == HY_H2_CONTINUATION && h.length == 5 && h.flags == HY_H2_F_END_HEADERS && h.sid == 3);
    is_mem((char *)buf + 47, 5, (char *)block + 20, 5);
    /* END_STREAM rides on HEADERS only; an exact multiple makes no empty CONTINUATION */
    memcpy(buf + 9, block, 20);
    n = hy_h2_frame_headers(buf, 20, 5, true, 10);
    is_int(n, 38);
    hy_h2_hdr_parse(buf, &h);
    is_int(h.flags, HY_H2_F_END_STREAM);
    hy_h2_hdr_parse(buf + 19, &h);
    ok(h.type == HY_H2_CONTINUATION && h.length == 10 && h.flags == HY_H2_F_END_HEADERS);
}

int main(void)
{
    subtest("frame header", test_header);
    subtest("DATA", test_data);
    subtest("HEADERS", test_headers);
    subtest("control frames", test_control);
    subtest("SETTINGS values", test_settings_values);
    subtest("writers", test_writers);
    subtest("header block split", test_headers_split);
    return done_testing();
}
