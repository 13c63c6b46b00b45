/* accept_encoding.c — Accept-Encoding parsing with q-values (RFC 9110 §12.5.3, §12.4.2). */
#include <string.h>
#include <strings.h>
#include "accept_encoding.h"

void hy_ae_init(hy_accept_encoding_t *ae)
{
    for (int i = 0; i < HY_CODING_N; i++)
        ae->q[i] = -1;
    ae->star = -1;
    ae->present = false;
}

int hy_ae_parse_qvalue(const char *s, size_t len)
{
    /* qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] ) */
    if (len == 0 || (s[0] != '0' && s[0] != '1'))
        return -1;
    int v = (s[0] - '0') * 1000;
    if (len == 1)
        return v;
    if (s[1] != '.' || len > 5)
        return -1;
    int scale = 100;
    for (size_t i = 2; i < len; i++, scale /= 10) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v += (s[i] - '0') * scale;
    }
    return v > 1000 ? -1 : v;
}

static bool is_ows(char c)
{
    return c == ' ' || c == '\t';
}

static bool name_is(const char *p, size_t n, const char *lit)
{
    return strlen(lit) == n && strncasecmp(p, lit, n) == 0;
}

static void set_q(int16_t *slot, int q)
{
    if (*slot < q)
        *slot = (int16_t)q;
}

void hy_ae_parse(hy_accept_encoding_t *ae, const char *s, size_t len)
{
    ae->present = true;
    const char *p = s, *end = s + len;
    while (p < end) {
        /* one element: name [ OWS ";" OWS param ]* up to the next comma */
        while (p < end && (is_ows(*p) || *p == ','))
            p++;
        if (p >= end)
            break;
        const char *name = p;
        while (p < end && *p != ',' && *p != ';' && !is_ows(*p))
            p++;
        size_t nlen = (size_t)(p - name);
        int q = 1000;
        while (p < end && *p != ',') {
            while (p < end && is_ows(*p))
                p++;
            if (p >= end || *p == ',')
                break;
            if (*p != ';') { /* junk after the name: the element is malformed */
                q = 0;
                while (p < end && *p != ',')
                    p++;
                break;
            }
            p++;
            while (p < end && is_ows(*p))
                p++;
            const char *param = p;
            while (p < end && *p != ',' && *p != ';' && !is_ows(*p))
                p++;
            size_t plen = (size_t)(p - param);
            if (plen >= 2 && (param[0] == 'q' || param[0] == 'Q') && param[1] == '=') {
                int v = hy_ae_parse_qvalue(param + 2, plen - 2);
                q = v < 0 ? 0 : v;
            } else if (plen >= 1 && (param[0] == 'q' || param[0] == 'Q')) {
                /* "q = 0.5": OWS around "=" is not in the grammar; treat as malformed */
                q = 0;
            }
        }
        if (nlen == 0)
            continue;
        if (name_is(name, nlen, "gzip") || name_is(name, nlen, "x-gzip"))
            set_q(&ae->q[HY_CODING_GZIP], q);
        else if (name_is(name, nlen, "br"))
            set_q(&ae->q[HY_CODING_BR], q);
        else if (name_is(name, nlen, "zstd"))
            set_q(&ae->q[HY_CODING_ZSTD], q);
        else if (name_is(name, nlen, "identity"))
            set_q(&ae->q[HY_CODING_IDENTITY], q);
        else if (nlen == 1 && name[0] == '*')
            set_q(&ae->star, q);
    }
}

int hy_ae_q(const hy_accept_encoding_t *ae, int coding)
{
    if (coding < 0 || coding >= HY_CODING_N)
        return 0;
    if (ae->q[coding] >= 0)
        return ae->q[coding];
    if (ae->star >= 0)
        return ae->star;
    return coding == HY_CODING_IDENTITY ? 1000 : 0;
}

int hy_ae_choose(const hy_accept_encoding_t *ae, unsigned allowed, const int *prefs, size_t nprefs)
{
    int best = -1, best_q = 0;
    for (size_t i = 0; i < nprefs; i++) {
        int c = prefs[i];
        if (c < 0 || c >= HY_CODING_N || !(allowed & (1u << c)))
            continue;
        int q = hy_ae_q(ae, c);
        if (q > best_q) {
            best = c;
            best_q = q;
        }
    }
    return best;
}
