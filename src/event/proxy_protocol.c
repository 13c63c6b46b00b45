/* proxy_protocol.c — PROXY protocol v1/v2 header parser and TLV lookup (see proxy_protocol.h). */
#include <string.h>
#include <stdio.h>
#include <strings.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include "proxy_protocol.h"

static const char v2_sig[12] = {0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a};

static unsigned u16(const uint8_t *p)
{
    return (unsigned)p[0] << 8 | p[1];
}

/* text → sockaddr with port; false when not IPv4/IPv6 text */
static bool set_addr(struct sockaddr_storage *ss, const char *text, uint16_t port)
{
    memset(ss, 0, sizeof(*ss));
    struct sockaddr_in *in = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
    if (inet_pton(AF_INET, text, &in->sin_addr) == 1) {
        in->sin_family = AF_INET;
        in->sin_port = htons(port);
        return true;
    }
    memset(ss, 0, sizeof(*ss));
    if (inet_pton(AF_INET6, text, &in6->sin6_addr) == 1) {
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons(port);
        return true;
    }
    return false;
}

/* one space-terminated field of the v1 line at *p (before end); copies it NUL-terminated into out */
static bool field(const char **p, const char *end, char *out, size_t cap)
{
    const char *s = *p, *sp = memchr(s, ' ', (size_t)(end - s));
    if (sp == NULL || sp == s || (size_t)(sp - s) >= cap)
        return false;
    memcpy(out, s, (size_t)(sp - s));
    out[sp - s] = '\0';
    *p = sp + 1;
    return true;
}

static bool port(const char *s, size_t n, uint16_t *out)
{
    if (n == 0 || n > 5)
        return false;
    unsigned v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (unsigned)(s[i] - '0');
    }
    if (v > 65535)
        return false;
    *out = (uint16_t)v;
    return true;
}

static bool addr_chars(const char *s)
{
    for (; *s; s++)
        if (!(*s == ':' || *s == '.' || (*s >= '0' && *s <= '9') || ((*s | 0x20) >= 'a' && (*s | 0x20) <= 'f')))
            return false;
    return true;
}

static ssize_t parse_v1(const char *buf, size_t len, hy_pp_t *pp, const char **reason)
{
    static const char prefix[] = "PROXY ";
    size_t cmp = len < 6 ? len : 6;
    *reason = "broken header";
    if (memcmp(buf, prefix, cmp) != 0)
        return HY_PP_ERROR;
    size_t scan = len < HY_PP_V1_MAX ? len : HY_PP_V1_MAX;
    const char *lf = memchr(buf, '\n', scan);
    if (lf == NULL)
        return len < HY_PP_V1_MAX ? HY_PP_AGAIN : HY_PP_ERROR;
    if (lf - buf < 7 || lf[-1] != '\r') /* "PROXY " then at least one byte, then CRLF */
        return HY_PP_ERROR;
    const char *p = buf + 6, *end = lf - 1; /* end: the CR */
    size_t consumed = (size_t)(lf + 1 - buf);
    pp->version = 1;
    if ((size_t)(end - p) >= 7 && memcmp(p, "UNKNOWN", 7) == 0)
        return (ssize_t)consumed; /* anything may follow UNKNOWN up to the line end */
    if (end - p < 5 || memcmp(p, "TCP", 3) != 0 || (p[3] != '4' && p[3] != '6') || p[4] != ' ')
        return HY_PP_ERROR;
    p += 5;
    char src[HY_PP_ADDR_TEXT], dst[HY_PP_ADDR_TEXT], sport[8], dport[8];
    if (!field(&p, end, src, sizeof(src)) || !field(&p, end, dst, sizeof(dst)) || !field(&p, end, sport, sizeof(sport)))
        return HY_PP_ERROR;
    size_t dlen = (size_t)(end - p);
    if (dlen >= sizeof(dport))
        return HY_PP_ERROR;
    memcpy(dport, p, dlen);
    dport[dlen] = '\0';
    uint16_t sp, dp;
    if (!addr_chars(src) || !addr_chars(dst) || !port(sport, strlen(sport), &sp) || !port(dport, dlen, &dp) ||
        !set_addr(&pp->src, src, sp) || !set_addr(&pp->dst, dst, dp))
        return HY_PP_ERROR;
    memcpy(pp->src_text, src, sizeof(src));
    memcpy(pp->dst_text, dst, sizeof(dst));
    pp->src_port = sp, pp->dst_port = dp;
    pp->has_addrs = true;
    return (ssize_t)consumed;
}

static ssize_t parse_v2(const uint8_t *b, size_t len, hy_pp_t *pp, const char **reason)
{
    if (len < 16)
        return HY_PP_AGAIN;
    if ((b[12] >> 4) != 2) {
        *reason = "unknown PROXY protocol version";
        return HY_PP_ERROR;
    }
    size_t total = 16 + u16(b + 14);
    if (total > HY_PP_MAX) {
        *reason = "header is too large";
        return HY_PP_ERROR;
    }
    if (len < total)
        return HY_PP_AGAIN;
    pp->version = 2;
    unsigned command = b[12] & 0x0f, family = b[13] >> 4, transport = b[13] & 0x0f;
    if (command != 1 || transport != 1 || (family != 1 && family != 2))
        return (ssize_t)total; /* LOCAL, datagrams, UNSPEC/UNIX: the connection's own addresses stay */
    const uint8_t *a = b + 16;
    size_t alen = family == 1 ? 12 : 36, n = family == 1 ? 4 : 16;
    if (total - 16 < alen) {
        *reason = "broken PROXY protocol v2 addresses";
        return HY_PP_ERROR;
    }
    int af = family == 1 ? AF_INET : AF_INET6;
    struct sockaddr_storage *ss[2] = {&pp->src, &pp->dst};
    char *text[2] = {pp->src_text, pp->dst_text};
    uint16_t ports[2] = {(uint16_t)u16(a + 2 * n), (uint16_t)u16(a + 2 * n + 2)};
    for (int i = 0; i < 2; i++) {
        memset(ss[i], 0, sizeof(*ss[i]));
        if (af == AF_INET) {
            struct sockaddr_in *in = (struct sockaddr_in *)ss[i];
            in->sin_family = AF_INET;
            memcpy(&in->sin_addr, a + i * n, n);
            in->sin_port = htons(ports[i]);
            hy_inet_ntop(AF_INET, &in->sin_addr, text[i], HY_PP_ADDR_TEXT);
        } else {
            struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss[i];
            in6->sin6_family = AF_INET6;
            memcpy(&in6->sin6_addr, a + i * n, n);
            in6->sin6_port = htons(ports[i]);
            hy_inet_ntop(AF_INET6, &in6->sin6_addr, text[i], HY_PP_ADDR_TEXT);
        }
    }
    pp->src_port = ports[0], pp->dst_port = ports[1];
    pp->has_addrs = true;
    if (total > 16 + alen) {
        pp->tlvs = a + alen;
        pp->tlvs_len = total - 16 - alen;
    }
    return (ssize_t)total;
}

ssize_t hy_pp_parse(const char *buf, size_t len, hy_pp_t *pp, const char **reason)
{
    memset(pp, 0, sizeof(*pp));
    *reason = NULL;
    if (len == 0)
        return HY_PP_AGAIN;
    size_t cmp = len < sizeof(v2_sig) ? len : sizeof(v2_sig);
    ssize_t rc = memcmp(buf, v2_sig, cmp) == 0 ? parse_v2((const uint8_t *)buf, len, pp, reason)
                                               : parse_v1(buf, len, pp, reason);
    if (rc < 0) { /* nothing half-filled is left for the caller */
        memset(pp, 0, sizeof(*pp));
        if (rc == HY_PP_AGAIN)
            *reason = NULL;
    }
    return rc;
}

int hy_pp_tlv_find(const uint8_t *tlvs, size_t len, unsigned type, hy_str_t *value)
{
    size_t i = 0;
    while (i < len) {
        if (len - i < 3)
            return -1;
        unsigned t = tlvs[i];
        size_t n = u16(tlvs + i + 1);
        i += 3;
        if (len - i < n)
            return -1;
        if (t == type) {
            value->ptr = (char *)(tlvs + i);
            value->len = n;
            return 1;
        }
        i += n;
    }
    return 0;
}

typedef struct {
    const char *name;
    unsigned type;
} tlv_name_t;

static const tlv_name_t top_names[] = {
    {"alpn", 0x01}, {"authority", 0x02}, {"unique_id", 0x05}, {"ssl", 0x20}, {"netns", 0x30}, {NULL, 0},
};
static const tlv_name_t ssl_names[] = {
    {"version", 0x21}, {"cn", 0x22}, {"cipher", 0x23}, {"sig_alg", 0x24}, {"key_alg", 0x25}, {NULL, 0},
};

int hy_pp_tlv_get(const uint8_t *tlvs, size_t len, hy_str_t name, hy_str_t *value, char verify_buf[11],
                  const char **err)
{
    const tlv_name_t *names = top_names;
    *err = NULL;
    if (name.len >= 4 && memcmp(name.ptr, "ssl_", 4) == 0) {
        hy_str_t ssl;
        int rc = hy_pp_tlv_find(tlvs, len, 0x20, &ssl);
        if (rc <= 0) {
            if (rc < 0)
                *err = "broken PROXY protocol TLV";
            return rc;
        }
        if (ssl.len < 5) {
            *err = "broken PROXY protocol TLV";
            return -1;
        }
        name.ptr += 4, name.len -= 4;
        const uint8_t *s = (const uint8_t *)ssl.ptr;
        if (name.len == 6 && memcmp(name.ptr, "verify", 6) == 0) {
            uint32_t v = (uint32_t)s[1] << 24 | (uint32_t)s[2] << 16 | (uint32_t)s[3] << 8 | s[4];
            int n = snprintf(verify_buf, 11, "%u", v);
            value->ptr = verify_buf;
            value->len = (size_t)n;
            return 1;
        }
        tlvs = s + 5;
        len = ssl.len - 5;
        names = ssl_names;
    }
    unsigned type = 0;
    if (name.len >= 2 && name.ptr[0] == '0' && name.ptr[1] == 'x') {
        if (name.len == 2) {
            *err = "invalid PROXY protocol TLV";
            return -1;
        }
        for (size_t i = 2; i < name.len; i++) {
            int d = hy_hex_digit((unsigned char)name.ptr[i]);
            if (d < 0) {
                *err = "invalid PROXY protocol TLV";
                return -1;
            }
            if (type <= 0xff) /* past 0xff nothing can match: stop growing */
                type = type * 16 + (unsigned)d;
        }
    } else {
        const tlv_name_t *e = names;
        while (e->name && !(strlen(e->name) == name.len && strncasecmp(e->name, name.ptr, name.len) == 0))
            e++;
        if (e->name == NULL) {
            *err = "unknown PROXY protocol TLV";
            return -1;
        }
        type = e->type;
    }
    if (type > 0xff)
        return 0;
    int rc = hy_pp_tlv_find(tlvs, len, type, value);
    if (rc < 0)
        *err = "broken PROXY protocol TLV";
    return rc;
}
