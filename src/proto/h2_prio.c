/* h2_prio.c — the Priority field value (see h2_prio.h): a small RFC 8941 §4.2 parser that walks every member of
 * the Dictionary (so that unknown members, inner lists and parameters are validated and skipped) and keeps the
 * last u and i it saw. */
#include <string.h>
#include "h2_prio.h"

enum { T_NONE, T_INT, T_DEC, T_STR, T_TOKEN, T_BYTES, T_BOOL, T_LIST };

typedef struct cur {
    const char *p, *end;
} cur_t;

typedef struct item {
    int type;
    long long i; /* T_INT, T_BOOL */
} item_t;

static bool is_digit(int c)
{
    return c >= '0' && c <= '9';
}

static bool is_lcalpha(int c)
{
    return c >= 'a' && c <= 'z';
}

static bool is_alpha(int c)
{
    return is_lcalpha(c) || (c >= 'A' && c <= 'Z');
}

static bool is_tchar(int c)
{
    return is_alpha(c) || is_digit(c) || (c && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

static bool is_b64(int c)
{
    return is_alpha(c) || is_digit(c) || c == '+' || c == '/' || c == '=';
}

static int peek(const cur_t *c)
{
    return c->p < c->end ? (unsigned char)*c->p : -1;
}

static void skip_sp(cur_t *c)
{
    while (c->p < c->end && *c->p == ' ')
        c->p++;
}

static void skip_ows(cur_t *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t'))
        c->p++;
}

/* §4.2.3.3: a key; its bytes are returned through k/klen */
static bool parse_key(cur_t *c, const char **k, size_t *klen)
{
    int ch = peek(c);
    if (!is_lcalpha(ch) && ch != '*')
        return false;
    const char *start = c->p;
    while (c->p < c->end && (is_lcalpha(*c->p) || is_digit(*c->p) || strchr("_-.*", *c->p) != NULL) && *c->p)
        c->p++;
    *k = start;
    *klen = (size_t)(c->p - start);
    return true;
}

/* §4.2.4: Integer or Decimal */
static bool parse_number(cur_t *c, item_t *it)
{
    bool neg = false, dec = false;
    size_t digits = 0, frac = 0;
    long long v = 0;
    if (peek(c) == '-') {
        neg = true;
        c->p++;
    }
    if (!is_digit(peek(c)))
        return false;
    while (c->p < c->end) {
        int ch = (unsigned char)*c->p;
        if (is_digit(ch)) {
            c->p++;
            digits++;
            if (dec)
                frac++;
            else
                v = v * 10 + (ch - '0');
        } else if (ch == '.' && !dec) {
            if (digits > 12)
                return false;
            dec = true;
            c->p++;
        } else {
            break;
        }
        if ((!dec && digits > 15) || (dec && digits > 15)) /* 12 integer + 3 fraction digits at most */
            return false;
    }
    if (dec && (frac == 0 || frac > 3))
        return false;
    it->type = dec ? T_DEC : T_INT;
    it->i = neg ? -v : v;
    return true;
}

/* §4.2.3.1: a Bare Item */
static bool parse_bare(cur_t *c, item_t *it)
{
    int ch = peek(c);
    it->type = T_NONE;
    it->i = 0;
    if (ch == '-' || is_digit(ch))
        return parse_number(c, it);
    if (ch == '"') {
        c->p++;
        while (c->p < c->end) {
            int x = (unsigned char)*c->p++;
            if (x == '\\') {
                if (c->p == c->end || (*c->p != '"' && *c->p != '\\'))
                    return false;
                c->p++;
            } else if (x == '"') {
                it->type = T_STR;
                return true;
            } else if (x < 0x20 || x > 0x7e) {
                return false;
            }
        }
        return false;
    }
    if (is_alpha(ch) || ch == '*') {
        c->p++;
        while (c->p < c->end && (is_tchar((unsigned char)*c->p) || *c->p == ':' || *c->p == '/'))
            c->p++;
        it->type = T_TOKEN;
        return true;
    }
    if (ch == ':') {
        c->p++;
        while (c->p < c->end && *c->p != ':') {
            if (!is_b64((unsigned char)*c->p))
                return false;
            c->p++;
        }
        if (c->p == c->end)
            return false;
        c->p++;
        it->type = T_BYTES;
        return true;
    }
    if (ch == '?') {
        c->p++;
        int b = peek(c);
        if (b != '0' && b != '1')
            return false;
        c->p++;
        it->type = T_BOOL;
        it->i = b == '1';
        return true;
    }
    return false;
}

/* §4.2.3.2: Parameters (validated, ignored) */
static bool parse_params(cur_t *c)
{
    while (peek(c) == ';') {
        c->p++;
        skip_sp(c);
        const char *k;
        size_t kl;
        if (!parse_key(c, &k, &kl))
            return false;
        if (peek(c) == '=') {
            c->p++;
            item_t v;
            if (!parse_bare(c, &v))
                return false;
        }
    }
    return true;
}

/* §4.2.1.1: Item or Inner List */
static bool parse_member(cur_t *c, item_t *it)
{
    if (peek(c) != '(') {
        return parse_bare(c, it) && parse_params(c);
    }
    c->p++;
    while (c->p < c->end) {
        skip_sp(c);
        if (peek(c) == ')') {
            c->p++;
            it->type = T_LIST;
            return parse_params(c);
        }
        item_t x;
        if (!parse_bare(c, &x) || !parse_params(c))
            return false;
        int ch = peek(c);
        if (ch != ' ' && ch != ')')
            return false;
    }
    return false;
}

bool hy_h2_prio_parse(const char *s, size_t len, hy_h2_prio_t *p)
{
    cur_t c = {s, s + len};
    item_t u = {T_NONE, 0}, i = {T_NONE, 0};
    skip_sp(&c);
    while (c.p < c.end) {
        const char *k;
        size_t kl;
        if (!parse_key(&c, &k, &kl))
            return false;
        item_t v;
        if (peek(&c) == '=') {
            c.p++;
            if (!parse_member(&c, &v))
                return false;
        } else {
            v.type = T_BOOL;
            v.i = 1;
            if (!parse_params(&c))
                return false;
        }
        if (kl == 1 && k[0] == 'u')
            u = v;
        else if (kl == 1 && k[0] == 'i')
            i = v;
        skip_ows(&c);
        if (c.p == c.end)
            break;
        if (*c.p != ',')
            return false;
        c.p++;
        skip_ows(&c);
        if (c.p == c.end)
            return false; /* a trailing comma */
    }
    p->urgency = u.type == T_INT && u.i >= 0 && u.i < HY_H2_URGENCY_LEVELS ? (uint8_t)u.i : HY_H2_URGENCY_DEFAULT;
    p->incremental = i.type == T_BOOL ? i.i != 0 : false;
    return true;
}
