/* h1parse.c — zero-copy HTTP/1 request parser, framing rules and chunked decoder.
 * See h1parse.h for the contract of each function; notes on nginx behaviour there come from experiments against
 * nginx 1.22.1. */
#include <arpa/inet.h>
#include <limits.h>
#include <netinet/in.h>
#include <string.h>

#include "h1parse.h"

/* RFC 9110 §5.6.2 tchar: "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." / "^" / "_" / "`" / "|" / "~" /
 * DIGIT / ALPHA */
static const unsigned char tchar_map[256] = {
    ['!'] = 1, ['#'] = 1, ['$'] = 1, ['%'] = 1, ['&'] = 1, ['\''] = 1, ['*'] = 1, ['+'] = 1, ['-'] = 1, ['.'] = 1,
    ['^'] = 1, ['_'] = 1, ['`'] = 1, ['|'] = 1, ['~'] = 1,
    ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1, ['8'] = 1, ['9'] = 1,
    ['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1, ['G'] = 1, ['H'] = 1, ['I'] = 1, ['J'] = 1,
    ['K'] = 1, ['L'] = 1, ['M'] = 1, ['N'] = 1, ['O'] = 1, ['P'] = 1, ['Q'] = 1, ['R'] = 1, ['S'] = 1, ['T'] = 1,
    ['U'] = 1, ['V'] = 1, ['W'] = 1, ['X'] = 1, ['Y'] = 1, ['Z'] = 1,
    ['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1, ['g'] = 1, ['h'] = 1, ['i'] = 1, ['j'] = 1,
    ['k'] = 1, ['l'] = 1, ['m'] = 1, ['n'] = 1, ['o'] = 1, ['p'] = 1, ['q'] = 1, ['r'] = 1, ['s'] = 1, ['t'] = 1,
    ['u'] = 1, ['v'] = 1, ['w'] = 1, ['x'] = 1, ['y'] = 1, ['z'] = 1,
};

#define IS_TCHAR(c) (tchar_map[(unsigned char)(c)] != 0)

/* field-value byte: HTAB, VCHAR, SP, obs-text (everything but CTLs and DEL); a table, as the value scan is the
 * parser's longest loop */
#define ROW_OF(x) x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x
static const unsigned char value_map[256] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, /* 0x00-0x0f: HTAB only */
    ROW_OF(0),                                      /* 0x10-0x1f */
    ROW_OF(1), ROW_OF(1), ROW_OF(1), ROW_OF(1), ROW_OF(1), /* 0x20-0x6f */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, /* 0x70-0x7f: DEL is not */
    ROW_OF(1), ROW_OF(1), ROW_OF(1), ROW_OF(1), ROW_OF(1), ROW_OF(1), ROW_OF(1), ROW_OF(1), /* obs-text */
};
#undef ROW_OF
static inline bool is_value_char(unsigned char c)
{
    return value_map[c] != 0;
}

static bool ascii_caseeq(const char *p, size_t n, const char *lit)
{
    size_t ln = strlen(lit);
    if (n != ln)
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char a = (unsigned char)p[i], b = (unsigned char)lit[i];
        if (a >= 'A' && a <= 'Z')
            a |= 0x20;
        if (b >= 'A' && b <= 'Z')
            b |= 0x20;
        if (a != b)
            return false;
    }
    return true;
}

static int fail(hy_h1_request_t *r, int status, const char *reason)
{
    r->error_status = status;
    r->error_reason = reason;
    return -1;
}

/* Length of a partial line [from, end), not counting a trailing CR that may be the start of CRLF. */
static size_t partial_len(const char *from, const char *end)
{
    size_t n = (size_t)(end - from);
    if (n > 0 && end[-1] == '\r')
        n--;
    return n;
}

/* The data ended inside the request line that starts at ls. */
static int partial_request_line(hy_h1_request_t *r, const char *ls, const char *end, size_t max_line)
{
    if (partial_len(ls, end) > max_line)
        return fail(r, 414, "client sent too long URI");
    return -2;
}

/* The data ended inside the header line that starts at ls. */
static int partial_header_line(hy_h1_request_t *r, const char *ls, const char *end, size_t max_header_line)
{
    if (partial_len(ls, end) > max_header_line)
        return fail(r, 400, "client sent too long header line");
    return -2;
}

/* Version "HTTP/" DIGIT "." DIGIT in [v, e) (trailing SPs already removed). Returns 10/11, or -1 with error set. */
static int parse_version(hy_h1_request_t *r, const char *v, const char *e)
{
    if (e - v < 5 || memcmp(v, "HTTP/", 5) != 0)
        return fail(r, 400, "client sent invalid request");
    const char *p = v + 5;
    const char *ms = p;
    unsigned major = 0;
    while (p < e && *p >= '0' && *p <= '9') {
        if (major < 1000)
            major = major * 10 + (unsigned)(*p - '0');
        p++;
    }
    size_t nd = (size_t)(p - ms);
    if (nd == 0 || (nd > 1 && *ms == '0'))
        return fail(r, 400, "client sent invalid request");
    size_t nm = 0;
    bool minor_ok = true;
    if (p < e) {
        if (*p != '.') {
            minor_ok = false;
        } else {
            p++;
            while (p < e && *p >= '0' && *p <= '9') {
                p++;
                nm++;
            }
            if (p != e)
                minor_ok = false;
        }
    }
    if (major >= 2) {
        /* "HTTP/2.0", "HTTP/3", "HTTP/10.0": a version we do not implement (RFC 9110 §15.6.6) */
        if (!minor_ok)
            return fail(r, 400, "client sent invalid request");
        return fail(r, 505, "client sent invalid version");
    }
    if (major == 0) /* HTTP/0.9 and friends */
        return fail(r, 400, "client sent invalid request");
    if (!minor_ok || nm != 1)
        return fail(r, 400, "client sent invalid request");
    /* RFC 9110 §2.5: a higher minor version of a major we implement is processed as our highest minor (nginx too) */
    return e[-1] == '0' ? 10 : 11;
}

/* Full parse, starting at the first byte of the request line (s). */
static int parse_full(const char *buf, size_t len, size_t s, size_t max_line, size_t max_header_line,
                      hy_h1_request_t *r)
{
    const char *end = buf + len;
    const char *ls = buf + s;
    const char *p = ls;

    /* method */
    while (p < end && IS_TCHAR(*p))
        p++;
    if (p == end)
        return partial_request_line(r, ls, end, max_line);
    if (*p != ' ' || p == ls)
        return fail(r, 400, "client sent invalid method");
    hy_str_t method = {(char *)ls, (size_t)(p - ls)};
    while (p < end && *p == ' ')
        p++;
    if (p == end)
        return partial_request_line(r, ls, end, max_line);

    /* request-target: no whitespace, no CTL */
    const char *t = p;
    while (p < end && (unsigned char)*p > 0x20 && *p != 0x7f)
        p++;
    if (p == end)
        return partial_request_line(r, ls, end, max_line);
    if (p == t)
        return fail(r, 400, "client sent invalid request");
    hy_str_t target = {(char *)t, (size_t)(p - t)};
    if (*p == '\r' || *p == '\n') {
        if (*p == '\r' && p + 1 < end && p[1] != '\n')
            return fail(r, 400, "client sent invalid request");
        return fail(r, 400, "client sent HTTP/0.9 request (not supported)");
    }
    if (*p != ' ')
        return fail(r, 400, "client sent invalid request");
    /* "PRI * HTTP/2.0", an HTTP/2 preface sent where HTTP/2 is not spoken (RFC 9113 §3.4), is 400 as in nginx (whose
     * parser refuses the asterisk form), not 505 */
    if (target.len == 1 && target.ptr[0] == '*' && method.len == 3 && memcmp(method.ptr, "PRI", 3) == 0)
        return fail(r, 400, "client sent invalid request");
    while (p < end && *p == ' ')
        p++;

    /* version, up to the line end: the first CR or LF ends it, and a CR must be followed by LF (a bare CR is 400
     * at once, not a wait for an LF that may never come) */
    const char *e = p;
    while (e < end && *e != '\n' && *e != '\r')
        e++;
    if (e == end || (*e == '\r' && e + 1 == end))
        return partial_request_line(r, ls, end, max_line);
    if (*e == '\r' && e[1] != '\n')
        return fail(r, 400, "client sent invalid request");
    const char *lf = *e == '\r' ? e + 1 : e;
    if ((size_t)(e - ls) > max_line)
        return fail(r, 414, "client sent too long URI");
    const char *le = e;
    while (le > p && le[-1] == ' ')
        le--;
    int version = parse_version(r, p, le);
    if (version < 0)
        return -1;
    r->method = method;
    r->target = target;
    r->request_line = (hy_str_t){(char *)ls, (size_t)(le - ls)};
    r->version = version;

    /* header fields */
    size_t cap = r->num_headers, n = 0;
    bool invalid_names = false;
    p = lf + 1;
    for (;;) {
        if (p == end)
            return -2;
        if (*p == '\n') {
            p++;
            break;
        }
        if (*p == '\r') {
            if (p + 1 == end)
                return -2;
            if (p[1] != '\n')
                return fail(r, 400, "client sent invalid header line");
            p += 2;
            break;
        }
        const char *hs = p;
        /* obs-fold, or whitespace before the first field (RFC 9112 §5.2, §2.2): rejected */
        while (p < end && IS_TCHAR(*p))
            p++;
        /* other visible bytes make an invalid name that the caller drops or refuses (ignore_invalid_headers);
         * whitespace and CTLs before ':' stay errors */
        const char *tchars_end = p;
        while (p < end && *p != ':' && ((unsigned char)*p > 0x20 && (unsigned char)*p != 0x7f))
            p++;
        invalid_names |= p != tchars_end;
        if (p == end)
            return partial_header_line(r, hs, end, max_header_line);
        if (*p != ':' || p == hs)
            return fail(r, 400, "client sent invalid header line");
        hy_str_t name = {(char *)hs, (size_t)(p - hs)};
        p++;
        while (p < end && (*p == ' ' || *p == '\t'))
            p++;
        const char *vs = p;
        while (p < end && is_value_char((unsigned char)*p))
            p++;
        if (p == end)
            return partial_header_line(r, hs, end, max_header_line);
        const char *ve = p, *next;
        if (*p == '\n') {
            next = p + 1;
        } else if (*p == '\r') {
            if (p + 1 == end)
                return partial_header_line(r, hs, end, max_header_line);
            if (p[1] != '\n')
                return fail(r, 400, "client sent invalid header line");
            next = p + 2;
        } else {
            return fail(r, 400, "client sent invalid header line"); /* NUL or another CTL */
        }
        if ((size_t)(ve - hs) > max_header_line)
            return fail(r, 400, "client sent too long header line");
        while (ve > vs && (ve[-1] == ' ' || ve[-1] == '\t'))
            ve--;
        if (n == cap)
            return fail(r, 400, "client sent too many header lines");
        r->headers[n].name = name;
        r->headers[n].value = (hy_str_t){(char *)vs, (size_t)(ve - vs)};
        n++;
        p = next;
    }
    if ((size_t)(p - buf) > INT_MAX)
        return fail(r, 400, "client sent too large request");
    r->num_headers = n;
    r->invalid_names = invalid_names;
    return (int)(p - buf);
}

/* A CR in [p, end) followed by something other than LF (a CR as the last byte may still get its LF). */
static bool has_bare_cr(const char *p, const char *end)
{
    while ((p = memchr(p, '\r', (size_t)(end - p))) != NULL) {
        if (p + 1 < end && p[1] != '\n')
            return true;
        p++;
    }
    return false;
}

int hy_h1_parse_request(const char *buf, size_t len, size_t last_len, size_t max_line, size_t max_header_line,
                        hy_h1_request_t *r)
{
    if (max_line == 0)
        max_line = SIZE_MAX;
    if (max_header_line == 0)
        max_header_line = SIZE_MAX;

    /* RFC 9112 §2.2: skip empty lines before the request line */
    size_t s = 0;
    for (;;) {
        if (s == len)
            return -2;
        if (buf[s] == '\n') {
            s++;
        } else if (buf[s] == '\r') {
            if (s + 1 == len)
                return -2;
            if (buf[s + 1] != '\n')
                return fail(r, 400, "client sent invalid request");
            s += 2;
        } else {
            break;
        }
    }

    if (last_len > 0 && last_len <= len) {
        /* cheap path: buf[0..last_len) was parsed before without an error. Unless a line was completed by the new
         * bytes (or a bare CR arrived: 400 now), only the limit on the current line needs checking. (So the full
         * parse runs at most once per line.) */
        size_t from = last_len > s ? last_len : s;
        const char *cr_from = buf + (from > s ? from - 1 : s); /* a CR that ended the old bytes */
        if (memchr(buf + from, '\n', len - from) == NULL && !has_bare_cr(cr_from, buf + len)) {
            const char *lf = memrchr(buf + s, '\n', len - s);
            if (lf == NULL)
                return partial_request_line(r, buf + s, buf + len, max_line);
            return partial_header_line(r, lf + 1, buf + len, max_header_line);
        }
    }
    return parse_full(buf, len, s, max_line, max_header_line, r);
}

int hy_h1_framing(const hy_h1_request_t *r, int64_t *content_length, bool *chunked, int *status, const char **reason)
{
    const hy_str_t *cl = NULL, *te = NULL;
    *content_length = -1;
    *chunked = false;
    for (size_t i = 0; i < r->num_headers; i++) {
        const hy_h1_header_t *h = &r->headers[i];
        if (ascii_caseeq(h->name.ptr, h->name.len, "content-length")) {
            if (cl != NULL)
                goto duplicate;
            cl = &h->value;
        } else if (ascii_caseeq(h->name.ptr, h->name.len, "transfer-encoding")) {
            if (te != NULL)
                goto duplicate;
            te = &h->value;
        }
    }
    int64_t n = -1;
    if (cl != NULL) {
        if (cl->len == 0)
            goto invalid_cl;
        n = 0;
        for (size_t i = 0; i < cl->len; i++) {
            unsigned char c = (unsigned char)cl->ptr[i];
            if (c < '0' || c > '9')
                goto invalid_cl;
            if (n > (INT64_MAX - (c - '0')) / 10)
                goto invalid_cl;
            n = n * 10 + (c - '0');
        }
    }
    if (te != NULL) {
        if (r->version < 11) {
            *status = 400;
            *reason = "client sent HTTP/1.0 request with \"Transfer-Encoding\" header";
            return -1;
        }
        if (cl != NULL) {
            *status = 400;
            *reason = "client sent \"Content-Length\" and \"Transfer-Encoding\" headers at the same time";
            return -1;
        }
        if (!ascii_caseeq(te->ptr, te->len, "chunked")) {
            *status = 501;
            *reason = "client sent unknown \"Transfer-Encoding\"";
            return -1;
        }
        *chunked = true;
        return 0;
    }
    *content_length = n;
    return 0;

duplicate:
    *status = 400;
    *reason = "client sent duplicate header line";
    return -1;
invalid_cl:
    *status = 400;
    *reason = "client sent invalid \"Content-Length\" header";
    return -1;
}

enum {
    CH_SIZE0 = 0,  /* first hex digit of a chunk-size */
    CH_SIZE,       /* more hex digits */
    CH_SIZE_WS,    /* BWS after the size */
    CH_EXT,        /* chunk extensions, up to the line end */
    CH_SIZE_LF,    /* CR seen on the size line */
    CH_DATA,       /* chunk data */
    CH_DATA_CR,    /* CRLF after the data */
    CH_DATA_LF,
    CH_TRAILER,    /* start of a trailer line or of the final empty line */
    CH_TRAILER_LINE,
    CH_TRAILER_LF,
    CH_END_LF,     /* CR of the final empty line seen */
    CH_DONE,
};

bool hy_h1_chunked_done(const hy_h1_chunked_t *d)
{
    return d->state == CH_DONE;
}

static inline bool is_ext_char(unsigned char c)
{
    return (c >= 0x20 && c != 0x7f) || c == '\t';
}

ssize_t hy_h1_decode_chunked(hy_h1_chunked_t *d, char *buf, size_t *len)
{
    size_t n = *len, i = 0, w = 0;

    if (d->state == CH_DONE) {
        *len = 0;
        return (ssize_t)n;
    }
    while (i < n) {
        unsigned char c = (unsigned char)buf[i];
        int st = d->state;
        switch (st) {
        case CH_SIZE0:
        case CH_SIZE: {
            int v = hy_hex_digit(c);
            if (v >= 0) {
                if (d->remaining > (HY_H1_CHUNK_MAX_SIZE - (uint64_t)v) / 16)
                    return -1;
                d->remaining = d->remaining * 16 + (uint64_t)v;
                d->state = CH_SIZE;
                break;
            }
            if (d->state == CH_SIZE0)
                return -1;
            if (c == ' ' || c == '\t')
                d->state = CH_SIZE_WS;
            else if (c == ';')
                d->state = CH_EXT;
            else if (c == '\r')
                d->state = CH_SIZE_LF;
            else if (c == '\n')
                goto size_line_done;
            else
                return -1;
            break;
        }
        case CH_SIZE_WS:
            if (c == ' ' || c == '\t')
                break;
            if (c == ';')
                d->state = CH_EXT;
            else if (c == '\r')
                d->state = CH_SIZE_LF;
            else if (c == '\n')
                goto size_line_done;
            else
                return -1;
            break;
        case CH_EXT:
            if (c == '\r')
                d->state = CH_SIZE_LF;
            else if (c == '\n')
                goto size_line_done;
            else if (!is_ext_char(c))
                return -1;
            break;
        case CH_SIZE_LF:
            if (c != '\n')
                return -1;
            goto size_line_done;
        case CH_DATA: {
            size_t avail = n - i;
            size_t take = d->remaining < avail ? (size_t)d->remaining : avail;
            if (w != i)
                memmove(buf + w, buf + i, take);
            w += take;
            i += take;
            d->remaining -= take;
            d->total += take;
            if (d->remaining == 0)
                d->state = CH_DATA_CR;
            continue;
        }
        case CH_DATA_CR:
            if (c == '\r') {
                d->state = CH_DATA_LF;
            } else if (c == '\n') {
                d->state = CH_SIZE0;
                d->line_bytes = 0;
            } else {
                return -1;
            }
            break;
        case CH_DATA_LF:
            if (c != '\n')
                return -1;
            d->state = CH_SIZE0;
            d->line_bytes = 0;
            break;
        case CH_TRAILER:
            if (++d->line_bytes > HY_H1_TRAILERS_MAX)
                return -1;
            if (c == '\r') {
                d->state = CH_END_LF;
            } else if (c == '\n') {
                goto body_done;
            } else if (c == ' ' || c == '\t' || !is_ext_char(c)) {
                return -1; /* obs-fold in trailers, or a CTL */
            } else {
                d->state = CH_TRAILER_LINE;
            }
            break;
        case CH_TRAILER_LINE:
            if (++d->line_bytes > HY_H1_TRAILERS_MAX)
                return -1;
            if (c == '\r')
                d->state = CH_TRAILER_LF;
            else if (c == '\n')
                d->state = CH_TRAILER;
            else if (!is_ext_char(c))
                return -1;
            break;
        case CH_TRAILER_LF:
            if (c != '\n')
                return -1;
            d->state = CH_TRAILER;
            break;
        case CH_END_LF:
            if (c != '\n')
                return -1;
            goto body_done;
        default:
            return -1;
        }
        /* a byte of a size line: count it against the line limit */
        if (st <= CH_SIZE_LF && ++d->line_bytes > HY_H1_CHUNK_LINE_MAX)
            return -1;
        i++;
        continue;

    size_line_done:
        i++;
        d->line_bytes = 0;
        d->state = d->remaining == 0 ? CH_TRAILER : CH_DATA;
        continue;

    body_done:
        i++;
        d->state = CH_DONE;
        {
            size_t left = n - i;
            if (left > 0 && w != i)
                memmove(buf + w, buf + i, left);
            *len = w;
            return (ssize_t)left;
        }
    }
    *len = w;
    return -2;
}

bool hy_h1_field_name_valid(hy_str_t name)
{
    for (size_t i = 0; i < name.len; i++) {
        if (!IS_TCHAR(name.ptr[i]))
            return false;
    }
    return name.len > 0;
}
