/* ssi_parse.c — the SSI command scanner (see ssi_parse.h for the contract). One state per position in the
 * grammar; every byte is looked at once, so a command split across any number of pieces scans the same. */
#include <string.h>
#include "ssi_parse.h"

enum {
    S_TEXT = 0,
    S_OPEN,       /* matching "<!--#" (p->match bytes so far) */
    S_PRE_NAME,   /* white space before the command's name */
    S_NAME,
    S_PRE_PARAM,  /* white space before a parameter or the end */
    S_PNAME,
    S_PRE_EQ,     /* white space before '=' */
    S_PRE_QUOTE,  /* white space after '=' */
    S_VALUE,
    S_CLOSE,      /* matching "-->" (p->match bytes so far) */
    S_SKIP,       /* a bad command: up to the next "-->" */
};

static const char OPEN[] = "<!--#";

void hy_ssi_parser_init(hy_ssi_parser_t *p, size_t value_len, char *values,
                        void (*on_text)(void *arg, const char *p, size_t n),
                        int (*on_cmd)(void *arg, const hy_ssi_cmd_t *cmd), void *arg)
{
    memset(p, 0, sizeof(*p));
    p->value_len = value_len;
    p->values = values;
    p->on_text = on_text;
    p->on_cmd = on_cmd;
    p->arg = arg;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static bool is_name(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static void fail(hy_ssi_parser_t *p, const char *why)
{
    p->error = why;
    p->state = S_SKIP;
    p->match = 0;
}

static int emit(hy_ssi_parser_t *p)
{
    hy_ssi_cmd_t cmd;
    cmd.name = (hy_str_t){p->name, p->name_len};
    cmd.nparams = p->error ? 0 : p->nparams;
    cmd.error = p->error;
    for (size_t i = 0; i < cmd.nparams; i++) {
        cmd.params[i].name = (hy_str_t){p->pnames[i], p->pname_len[i]};
        cmd.params[i].value = (hy_str_t){p->values + i * (p->value_len + 1), p->vlen[i]};
    }
    p->state = S_TEXT;
    p->match = 0;
    return p->on_cmd(p->arg, &cmd);
}

size_t hy_ssi_feed(hy_ssi_parser_t *p, const char *data, size_t len)
{
    size_t i = 0;
    while (i < len) {
        char c = data[i];
        switch (p->state) {
        case S_TEXT: {
            const char *lt = memchr(data + i, '<', len - i);
            size_t n = lt ? (size_t)(lt - (data + i)) : len - i;
            if (n)
                p->on_text(p->arg, data + i, n);
            i += n;
            if (lt) {
                p->state = S_OPEN;
                p->match = 1;
                i++;
            }
            continue;
        }
        case S_OPEN:
            if (c != OPEN[p->match]) { /* not a command: what matched is text; look at c again as text */
                p->on_text(p->arg, OPEN, p->match);
                p->state = S_TEXT;
                p->match = 0;
                continue;
            }
            if (++p->match == 5) {
                p->state = S_PRE_NAME;
                p->name_len = p->nparams = 0;
                p->error = NULL;
            }
            break;
        case S_PRE_NAME:
            if (is_space(c))
                break;
            if (!is_name(c)) {
                fail(p, "invalid SSI command");
                continue;
            }
            p->state = S_NAME;
            continue;
        case S_NAME:
            if (is_name(c)) {
                if (p->name_len == HY_SSI_NAME_MAX) {
                    fail(p, "the SSI command is too long");
                    continue;
                }
                p->name[p->name_len++] = c;
            } else if (is_space(c)) {
                p->state = S_PRE_PARAM;
            } else if (c == '-') {
                p->state = S_CLOSE;
                p->match = 1;
            } else {
                fail(p, "invalid SSI command");
                continue;
            }
            break;
        case S_PRE_PARAM:
            if (is_space(c))
                break;
            if (c == '-') {
                p->state = S_CLOSE;
                p->match = 1;
                break;
            }
            if (!is_name(c)) {
                fail(p, "invalid SSI parameter");
                continue;
            }
            if (p->nparams == HY_SSI_MAX_PARAMS) {
                fail(p, "too many SSI command parameters");
                continue;
            }
            p->pname_len[p->nparams] = 0;
            p->vlen[p->nparams] = 0;
            p->state = S_PNAME;
            continue;
        case S_PNAME:
            if (is_name(c)) {
                size_t *n = &p->pname_len[p->nparams];
                if (*n == HY_SSI_NAME_MAX) {
                    fail(p, "too long SSI parameter name");
                    continue;
                }
                p->pnames[p->nparams][(*n)++] = c;
            } else if (is_space(c)) {
                p->state = S_PRE_EQ;
            } else if (c == '=') {
                p->state = S_PRE_QUOTE;
            } else {
                fail(p, "invalid SSI parameter");
                continue;
            }
            break;
        case S_PRE_EQ:
            if (is_space(c))
                break;
            if (c != '=') {
                fail(p, "invalid SSI parameter");
                continue;
            }
            p->state = S_PRE_QUOTE;
            break;
        case S_PRE_QUOTE:
            if (is_space(c))
                break;
            if (c != '"' && c != '\'') {
                fail(p, "the SSI parameter value is not quoted");
                continue;
            }
            p->quote = c;
            p->escaped = false;
            p->state = S_VALUE;
            break;
        case S_VALUE:
            if (!p->escaped && c == p->quote) {
                p->nparams++;
                p->state = S_PRE_PARAM;
                break;
            }
            if (!p->escaped && c == '\\') {
                p->escaped = true;
                break;
            }
            if (p->escaped && c != p->quote && c != '\\') { /* a backslash before anything else is kept */
                if (p->vlen[p->nparams] == p->value_len) {
                    fail(p, "too long SSI parameter value");
                    continue;
                }
                p->values[p->nparams * (p->value_len + 1) + p->vlen[p->nparams]++] = '\\';
            }
            p->escaped = false;
            if (p->vlen[p->nparams] == p->value_len) {
                fail(p, "too long SSI parameter value");
                continue;
            }
            p->values[p->nparams * (p->value_len + 1) + p->vlen[p->nparams]++] = c;
            break;
        case S_CLOSE:
            if (p->match == 1 && c == '-') {
                p->match = 2;
                break;
            }
            if (p->match == 2 && c == '>') {
                i++;
                if (emit(p) != 0)
                    return i;
                continue;
            }
            fail(p, "invalid SSI command end");
            if (c == '-') { /* "--->": the dashes so far still count towards the "-->" skipped to */
                p->match = 2;
                break;
            }
            continue;
        case S_SKIP:
            if (c == '-') {
                p->match = p->match < 2 ? p->match + 1 : 2;
            } else if (c == '>' && p->match == 2) {
                i++;
                if (emit(p) != 0)
                    return i;
                continue;
            } else {
                p->match = 0;
            }
            break;
        }
        i++;
    }
    return len;
}

void hy_ssi_finish(hy_ssi_parser_t *p)
{
    if (p->state == S_OPEN)
        p->on_text(p->arg, OPEN, p->match);
    p->state = S_TEXT;
    p->match = 0;
}
