/* uri.c — request-target normalisation and Host validation, shared by every protocol (HTTP/1 today, HTTP/2
 * next). See uri.h for the contracts; notes on nginx behaviour come from experiments against nginx 1.22.1. */
#include <arpa/inet.h>
#include <limits.h>
#include <netinet/in.h>
#include <string.h>

#include "uri.h"

/* RFC 3986 §3.2.2 IPvFuture inside the brackets: "v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" ) */
static bool ipvfuture(const char *p, size_t n)
{
    size_t i = 1;
    if (n < 4 || (p[0] | 0x20) != 'v')
        return false;
    while (i < n && ((p[i] >= '0' && p[i] <= '9') || ((p[i] | 0x20) >= 'a' && (p[i] | 0x20) <= 'f')))
        i++;
    if (i == 1 || i >= n - 1 || p[i] != '.')
        return false;
    for (i++; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  strchr("-._~!$&'()*+,;=:", c) != NULL;
        if (!ok || c == '\0' || (c == '.' && p[i - 1] == '.')) /* no ".." anywhere in a host ($host in paths) */
            return false;
    }
    return true;
}

/* the bytes of a reg-name host as nginx takes them: controls, space, DEL, '/', '\\', '@', '[' and ']' refuse it;
 * '.' separates labels; ':' starts the port */
enum { HC_OK, HC_DOT, HC_COLON, HC_BAD };
static const unsigned char host_class[256] = {
    [0 ... 0x20] = HC_BAD, [0x7f] = HC_BAD, ['/'] = HC_BAD, ['\\'] = HC_BAD, ['@'] = HC_BAD,
    ['['] = HC_BAD,        [']'] = HC_BAD,  ['.'] = HC_DOT, [':'] = HC_COLON,
};

/* Check a host[:port] (or [v6]:port) without changing it; *host_len = length of the host part, trailing '.' off. */
static int check_host(const char *h, size_t len, size_t *host_len)
{
    size_t i = 0, hend;
    if (len == 0)
        return -1;
    if (h[0] == '[') {
        /* IP-literal: an IPv6 address (no zone id) or an IPvFuture (RFC 3986, nginx 1.29.x) */
        const char *rb = memchr(h, ']', len);
        if (rb == NULL)
            return -1;
        size_t al = (size_t)(rb - h) - 1;
        char addr[INET6_ADDRSTRLEN];
        struct in6_addr a6;
        if (al > 0 && (h[1] | 0x20) == 'v') {
            if (!ipvfuture(h + 1, al))
                return -1;
        } else {
            if (al == 0 || al >= sizeof(addr) || memchr(h + 1, '\0', al) != NULL) /* inet_pton stops at a NUL */
                return -1;
            memcpy(addr, h + 1, al);
            addr[al] = '\0';
            if (inet_pton(AF_INET6, addr, &a6) != 1)
                return -1;
        }
        i = al + 2;
        hend = i;
    } else {
        for (; i < len; i++) {
            unsigned k = host_class[(unsigned char)h[i]];
            if (k == HC_OK)
                continue;
            if (k == HC_COLON)
                break;
            if (k == HC_BAD || i == 0 || h[i - 1] == '.')
                return -1; /* a byte no host holds, or an empty label */
        }
        hend = i;
        if (hend > 0 && h[hend - 1] == '.')
            hend--;
        if (hend == 0)
            return -1;
    }
    if (i < len) { /* ":port": digits, at most 65535 (nginx 1.29.4); may be empty */
        if (h[i] != ':')
            return -1;
        unsigned port = 0;
        for (i++; i < len; i++) {
            if (h[i] < '0' || h[i] > '9')
                return -1;
            port = port * 10 + (unsigned)(h[i] - '0');
            if (port > 65535)
                return -1;
        }
    }
    *host_len = hend;
    return 0;
}

ssize_t hy_http_validate_host(char *host, size_t len)
{
    size_t hl;
    if (check_host(host, len, &hl) < 0)
        return -1;
    for (size_t i = 0; i < hl; i++) {
        if (host[i] >= 'A' && host[i] <= 'Z')
            host[i] |= 0x20;
    }
    return (ssize_t)hl;
}

/* Remove dot segments and (optionally) merge slashes in out[0..n), which starts with '/'. Returns the new length or
 * -1 when ".." climbs above the root. */
static ssize_t normalize_path(char *out, size_t n, bool merge_slashes)
{
    size_t i = 1, w = 1;
    while (i < n) {
        size_t j = i;
        while (j < n && out[j] != '/')
            j++;
        size_t seg = j - i;
        bool slash = j < n;
        if (seg == 0) {
            /* empty segment: "//" */
            if (!merge_slashes)
                out[w++] = '/';
            i = j + 1;
            continue;
        }
        if (seg == 1 && out[i] == '.') {
            i = slash ? j + 1 : j;
            continue;
        }
        if (seg == 2 && out[i] == '.' && out[i + 1] == '.') {
            if (w == 1)
                return -1;
            size_t k = w - 2; /* out[w-1] is '/' */
            while (out[k] != '/')
                k--;
            w = k + 1;
            i = slash ? j + 1 : j;
            continue;
        }
        if (w != i)
            memmove(out + w, out + i, seg);
        w += seg;
        if (slash)
            out[w++] = '/';
        i = j + 1;
    }
    return (ssize_t)w;
}

/* the bytes of an origin-form target that the full parse below treats specially */
enum { PC_OK, PC_SEP, PC_STOP };
static const unsigned char path_class[256] = {
    [0 ... 0x20] = PC_STOP, [0x7f] = PC_STOP, ['%'] = PC_STOP, ['?'] = PC_STOP, ['#'] = PC_STOP,
    ['/'] = PC_SEP,         ['.'] = PC_SEP,
};

/* The common target: '/' and then bytes that need neither decoding nor normalising — no '%', '?', '#', control,
 * space or DEL, and no '/' or '.' right after a '/' (no "//", no dot segment). Such a path is its own result. */
static bool plain_path(const char *p, size_t n)
{
    if (p[0] != '/')
        return false;
    for (size_t i = 1; i < n; i++) {
        unsigned k = path_class[(unsigned char)p[i]];
        if (k == PC_OK)
            continue;
        if (k == PC_STOP || p[i - 1] == '/')
            return false;
    }
    return true;
}

int hy_http_parse_target(hy_str_t method, hy_str_t target, bool merge_slashes, char *out, size_t *out_len,
                         hy_str_t *args, hy_str_t *host)
{
    const char *p = target.ptr, *end = target.ptr + target.len;

    *host = HY_STR_NULL;
    *args = HY_STR_NULL;
    *out_len = 0;
    if (target.len == 0)
        return -1;
    if (plain_path(p, target.len)) {
        memcpy(out, p, target.len);
        out[target.len] = '\0';
        *out_len = target.len;
        return 0;
    }
    for (const char *q = p; q < end; q++) {
        if ((unsigned char)*q <= 0x20 || *q == 0x7f)
            return -1;
    }
    if (target.len == 1 && *p == '*') {
        if (!(method.len == 7 && memcmp(method.ptr, "OPTIONS", 7) == 0))
            return -1;
        out[0] = '*';
        out[1] = '\0';
        *out_len = 1;
        return 0;
    }
    if (*p != '/') {
        /* absolute-form: scheme "://" authority [path-abempty] ["?" query] */
        const char *q = p;
        unsigned char c0 = (unsigned char)(*q | 0x20);
        if (c0 < 'a' || c0 > 'z')
            return -1;
        while (q < end && *q != ':') {
            unsigned char c = (unsigned char)*q;
            unsigned char lc = (unsigned char)(c | 0x20);
            if (!((lc >= 'a' && lc <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.'))
                return -1;
            q++;
        }
        if (end - q < 3 || q[1] != '/' || q[2] != '/')
            return -1;
        const char *as = q + 3, *ae = as;
        while (ae < end && *ae != '/' && *ae != '?' && *ae != '#')
            ae++;
        size_t hl;
        if (check_host(as, (size_t)(ae - as), &hl) < 0)
            return -1;
        *host = (hy_str_t){(char *)as, (size_t)(ae - as)};
        p = ae;
    }

    /* path: up to '?' or '#' */
    const char *pe = p;
    while (pe < end && *pe != '?' && *pe != '#')
        pe++;
    if (pe < end && *pe == '?') {
        const char *qs = pe + 1, *qe = qs;
        while (qe < end && *qe != '#')
            qe++;
        *args = (hy_str_t){(char *)qs, (size_t)(qe - qs)};
    }
    if (p == pe) {
        /* absolute-form without a path (or "http://h?x"): the path is "/" (RFC 9112 §3.2.2) */
        out[0] = '/';
        out[1] = '\0';
        *out_len = 1;
        return 0;
    }

    /* percent-decode */
    size_t w = 0;
    for (const char *q = p; q < pe; q++) {
        if (*q != '%') {
            out[w++] = *q;
            continue;
        }
        if (pe - q < 3)
            return -1;
        int hi = hy_hex_digit((unsigned char)q[1]), lo = hy_hex_digit((unsigned char)q[2]);
        if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
            return -1;
        out[w++] = (char)(hi << 4 | lo);
        q += 2;
    }
    ssize_t nl = normalize_path(out, w, merge_slashes);
    if (nl < 0)
        return -1;
    out[nl] = '\0';
    *out_len = (size_t)nl;
    return 0;
}

/* the bytes nginx escapes in a URI it sends upstream (NGX_ESCAPE_URI's set) */
static const unsigned char uri_esc[256] = {
    [0 ... 0x20] = 1, [0x7f ... 0xff] = 1, ['#'] = 1, ['%'] = 1, ['?'] = 1, ['"'] = 1, ['<'] = 1,
    ['>'] = 1,        ['\\'] = 1,         ['^'] = 1, ['`'] = 1, ['{'] = 1, ['|'] = 1, ['}'] = 1,
};

static inline bool uri_escaped(unsigned char c)
{
    return uri_esc[c];
}

size_t hy_pct_escape(char *dst, const char *src, size_t n, bool (*escaped)(unsigned char c))
{
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)src[i];
        if (!escaped(c)) {
            if (dst)
                dst[len] = (char)c;
            len++;
            continue;
        }
        if (dst) {
            dst[len] = '%';
            dst[len + 1] = "0123456789ABCDEF"[c >> 4];
            dst[len + 2] = "0123456789ABCDEF"[c & 15];
        }
        len += 3;
    }
    return len;
}

bool hy_pct_not_unreserved(unsigned char c)
{
    return !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
             c == '_' || c == '~');
}

size_t hy_uri_escape(char *dst, const char *src, size_t n)
{
    if (dst == NULL) { /* the length only: most URIs need no escape */
        size_t extra = 0;
        for (size_t i = 0; i < n; i++)
            extra += uri_esc[(unsigned char)src[i]];
        return n + 2 * extra;
    }
    return hy_pct_escape(dst, src, n, uri_escaped);
}
