/* dns_msg.h — a DNS message builder shared by the DNS unit tests (dns_test.c, dns_edges_test.c): header,
 * question and answer records written into a fixed buffer, and hy_dns_parse called on the result. */
#ifndef HY_TESTS_DNS_MSG_H
#define HY_TESTS_DNS_MSG_H

#include <stdint.h>
#include <string.h>
#include "core/dns.h"

typedef struct msg {
    uint8_t b[2048];
    size_t n;
} msg_t;

static void put(msg_t *m, const void *p, size_t n)
{
    memcpy(m->b + m->n, p, n);
    m->n += n;
}

static void u16(msg_t *m, unsigned v)
{
    uint8_t x[2] = {(uint8_t)(v >> 8), (uint8_t)v};
    put(m, x, 2);
}

static void u32(msg_t *m, uint32_t v)
{
    u16(m, v >> 16);
    u16(m, v & 0xffff);
}

static void name(msg_t *m, const char *s)
{
    while (*s) {
        const char *dot = strchr(s, '.');
        size_t l = dot ? (size_t)(dot - s) : strlen(s);
        uint8_t c = (uint8_t)l;
        put(m, &c, 1);
        put(m, s, l);
        s += l + (dot != NULL);
    }
    uint8_t z = 0;
    put(m, &z, 1);
}

/* header + the question (name, qtype, IN) */
static void head(msg_t *m, uint16_t id, unsigned flags, unsigned an, const char *q, uint16_t qtype)
{
    m->n = 0;
    u16(m, id);
    u16(m, flags);
    u16(m, 1);
    u16(m, an);
    u16(m, 0);
    u16(m, 0);
    name(m, q);
    u16(m, qtype);
    u16(m, 1);
}

static void rr_a(msg_t *m, uint32_t ttl, uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
    u16(m, 0xc00c); /* the question's name */
    u16(m, HY_DNS_A);
    u16(m, 1);
    u32(m, ttl);
    u16(m, 4);
    uint8_t x[4] = {a, b, c, d};
    put(m, x, 4);
}

static int parse(msg_t *m, uint16_t id, const char *q, uint16_t qtype, hy_dns_answer_t *a)
{
    return hy_dns_parse(m->b, m->n, id, q, strlen(q), qtype, a);
}

#endif
