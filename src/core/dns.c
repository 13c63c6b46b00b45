/* dns.c — DNS questions and answers on the wire (see dns.h). */
#include <string.h>
#include <sys/socket.h>
#include "dns.h"

static uint16_t rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static char lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c + 32) : c;
}

bool hy_dns_name_valid(const char *name, size_t len)
{
    if (len && name[len - 1] == '.')
        len--;
    if (len == 0 || len > HY_DNS_NAME_MAX) /* RFC 1035 says 253; nginx asks for names up to 255 */
        return false;
    size_t label = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)name[i];
        if (c == '.') {
            if (label == 0)
                return false;
            label = 0;
            continue;
        }
        if (c <= ' ' || c == 0x7f || ++label > 63)
            return false;
    }
    return label > 0;
}

int hy_dns_query(uint8_t *out, uint16_t id, const char *name, size_t len, uint16_t qtype)
{
    if (!hy_dns_name_valid(name, len))
        return -1;
    if (name[len - 1] == '.')
        len--;
    uint8_t *p = out;
    *p++ = (uint8_t)(id >> 8), *p++ = (uint8_t)id;
    *p++ = 0x01, *p++ = 0x00; /* RD */
    *p++ = 0, *p++ = 1;       /* QDCOUNT */
    memset(p, 0, 6);
    p += 6;
    size_t start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i == len || name[i] == '.') {
            *p++ = (uint8_t)(i - start);
            memcpy(p, name + start, i - start);
            p += i - start;
            start = i + 1;
        }
    }
    *p++ = 0;
    *p++ = (uint8_t)(qtype >> 8), *p++ = (uint8_t)qtype;
    *p++ = 0, *p++ = 1; /* IN */
    return (int)(p - out);
}

uint16_t hy_dns_id(const uint8_t *msg, size_t len)
{
    return len < 12 ? 0 : rd16(msg);
}

/* Read the (possibly compressed) name at msg[off] into out (lowercase, dotted, no trailing dot; "" for the root);
 * *next: the offset after the name where it was written. -1 when malformed. A '.' or NUL byte inside a label is
 * kept as \x01 so such a name can never equal a valid one. */
static int read_name(const uint8_t *msg, size_t len, size_t off, char out[HY_DNS_NAME_MAX + 1], size_t *next)
{
    size_t pos = off, n = 0;
    int hops = 0;
    bool jumped = false;
    for (;;) {
        if (pos >= len)
            return -1;
        uint8_t c = msg[pos];
        if (c == 0) {
            if (!jumped)
                *next = pos + 1;
            out[n] = '\0';
            return 0;
        }
        if ((c & 0xc0) == 0xc0) {
            if (pos + 1 >= len || ++hops > HY_DNS_MAX_HOPS)
                return -1;
            if (!jumped)
                *next = pos + 2;
            jumped = true;
            pos = (size_t)(c & 0x3f) << 8 | msg[pos + 1];
            continue;
        }
        if (c & 0xc0) /* 0x40, 0x80: extended label types, not used */
            return -1;
        if (pos + 1 + c > len || n + (n > 0) + c > HY_DNS_NAME_MAX)
            return -1;
        if (n > 0)
            out[n++] = '.';
        for (size_t i = 0; i < c; i++) {
            char ch = (char)msg[pos + 1 + i];
            out[n++] = ch == '.' || ch == '\0' ? '\x01' : lower(ch);
        }
        pos += 1 + (size_t)c;
    }
}

static bool name_eq(const char *a, const char *b, size_t blen)
{
    if (blen && b[blen - 1] == '.')
        blen--;
    if (strlen(a) != blen)
        return false;
    for (size_t i = 0; i < blen; i++)
        if (a[i] != lower(b[i]))
            return false;
    return true;
}

typedef struct rr {
    uint16_t type, class;
    uint32_t ttl;
    size_t rdata, rdlen;
} rr_t;

/* The record at *pos (owner into owner); *pos moves past it. -1 when malformed. */
static int read_rr(const uint8_t *msg, size_t len, size_t *pos, char owner[HY_DNS_NAME_MAX + 1], rr_t *r)
{
    size_t p;
    if (read_name(msg, len, *pos, owner, &p) != 0 || p + 10 > len)
        return -1;
    r->type = rd16(msg + p);
    r->class = rd16(msg + p + 2);
    r->ttl = rd32(msg + p + 4);
    if (r->ttl > 0x7fffffffu) /* RFC 2181: a TTL with the top bit set is zero */
        r->ttl = 0;
    r->rdlen = rd16(msg + p + 8);
    r->rdata = p + 10;
    if (r->rdata + r->rdlen > len)
        return -1;
    *pos = r->rdata + r->rdlen;
    return 0;
}

int hy_dns_parse(const uint8_t *msg, size_t len, uint16_t id, const char *name, size_t name_len, uint16_t qtype,
                 hy_dns_answer_t *out)
{
    memset(out, 0, sizeof(*out));
    if (len < 12)
        return HY_DNS_MALFORMED;
    if (rd16(msg) != id || !(msg[2] & 0x80))
        return HY_DNS_MISMATCH;
    out->truncated = (msg[2] & 0x02) != 0;
    out->rcode = msg[3] & 0x0f;
    size_t qd = rd16(msg + 4), an = rd16(msg + 6);
    if (qd != 1)
        return HY_DNS_MALFORMED;
    char owner[HY_DNS_NAME_MAX + 1];
    size_t pos;
    if (read_name(msg, len, 12, owner, &pos) != 0 || pos + 4 > len)
        return HY_DNS_MALFORMED;
    if (!name_eq(owner, name, name_len) || rd16(msg + pos) != qtype || rd16(msg + pos + 2) != 1)
        return HY_DNS_MISMATCH;
    pos += 4;
    if (out->truncated || out->rcode != HY_DNS_NOERROR)
        return HY_DNS_OK;
    /* validate the whole answer section once */
    size_t answers = pos, p = pos;
    rr_t r;
    for (size_t i = 0; i < an; i++) {
        if (read_rr(msg, len, &p, owner, &r) != 0)
            return HY_DNS_MALFORMED;
        if (r.class == 1 && ((r.type == HY_DNS_A && r.rdlen != 4) || (r.type == HY_DNS_AAAA && r.rdlen != 16)))
            return HY_DNS_MALFORMED;
        if (r.class == 1 && r.type == HY_DNS_SRV && qtype == HY_DNS_SRV) {
            char t[HY_DNS_NAME_MAX + 1];
            size_t after;
            if (r.rdlen < 7 || read_name(msg, len, r.rdata + 6, t, &after) != 0 || after > r.rdata + r.rdlen)
                return HY_DNS_MALFORMED;
        }
    }
    /* follow the chain from the question's name */
    char target[HY_DNS_NAME_MAX + 1];
    size_t tlen = name_len;
    if (tlen && name[tlen - 1] == '.')
        tlen--;
    for (size_t i = 0; i < tlen; i++)
        target[i] = lower(name[i]);
    target[tlen] = '\0';
    uint32_t ttl = UINT32_MAX;
    for (int links = 0;; links++) {
        bool found = false;
        p = answers;
        for (size_t i = 0; i < an; i++) {
            read_rr(msg, len, &p, owner, &r);
            if (r.class != 1 || r.type != qtype || strcmp(owner, target) != 0)
                continue;
            found = true;
            if (r.ttl < ttl)
                ttl = r.ttl;
            if (qtype == HY_DNS_SRV) {
                if (out->nsrvs < HY_DNS_MAX_SRVS) {
                    hy_dns_srv_t *s = &out->srvs[out->nsrvs++];
                    const uint8_t *d = msg + r.rdata;
                    size_t after;
                    s->priority = rd16(d), s->weight = rd16(d + 2), s->port = rd16(d + 4);
                    read_name(msg, len, r.rdata + 6, s->target, &after); /* checked above */
                }
                continue;
            }
            if (out->naddrs < HY_DNS_MAX_ADDRS) {
                hy_dns_addr_t *a = &out->addrs[out->naddrs++];
                a->family = qtype == HY_DNS_A ? AF_INET : AF_INET6;
                memcpy(a->bytes, msg + r.rdata, r.rdlen);
            }
        }
        if (found)
            break;
        /* a CNAME for the target? */
        bool linked = false;
        p = answers;
        for (size_t i = 0; i < an && !linked; i++) {
            read_rr(msg, len, &p, owner, &r);
            if (r.class != 1 || r.type != HY_DNS_CNAME || strcmp(owner, target) != 0)
                continue;
            size_t after;
            char next[HY_DNS_NAME_MAX + 1];
            if (read_name(msg, len, r.rdata, next, &after) != 0 || after > r.rdata + r.rdlen || next[0] == '\0')
                return HY_DNS_MALFORMED;
            if (r.ttl < ttl)
                ttl = r.ttl;
            memcpy(target, next, strlen(next) + 1);
            linked = true;
        }
        if (!linked)
            break;
        if (links + 1 >= HY_DNS_MAX_CNAMES)
            return HY_DNS_MALFORMED; /* a chain too long (or a loop of CNAMEs) */
    }
    out->ttl = ttl == UINT32_MAX ? 0 : ttl;
    if (out->naddrs == 0 && out->nsrvs == 0 && !name_eq(target, name, name_len))
        memcpy(out->cname, target, strlen(target) + 1);
    return HY_DNS_OK;
}
