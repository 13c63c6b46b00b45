/* lexer.c — nginx config tokenizer. The state machine reproduces nginx's ngx_conf_read_token() behaviour
 * (documented grammar plus its observable quirks, checked against nginx 1.22 -t): a quoted word must be
 * followed by a space, ";", "{" or ")"; "}" only closes a block at the start of a word; backslash escapes
 * are decoded in every word, quoted or not; "{" right after "$" belongs to the word ("${var}"). */
#include <string.h>
#include "lexer.h"

static bool is_space(char ch) { return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n'; }

/* Copy raw[0..n) into the pool as one word, decoding \" \' \\ \t \r \n; any other backslash stays. */
static int push_word(hy_conf_t *cf, const char *raw, size_t n)
{
    hy_str_t *w = hy_array_push(cf->args);
    char *dst = hy_palloc(cf->pool, n + 1);
    w->ptr = dst;
    for (size_t i = 0; i < n; i++) {
        if (raw[i] == '\\' && i + 1 < n) {
            char next = raw[i + 1];
            if (next == '"' || next == '\'' || next == '\\') {
                *dst++ = next;
                i++;
                continue;
            }
            if (next == 't' || next == 'r' || next == 'n') {
                *dst++ = next == 't' ? '\t' : next == 'r' ? '\r' : '\n';
                i++;
                continue;
            }
        }
        *dst++ = raw[i];
    }
    *dst = '\0';
    w->len = (size_t)(dst - w->ptr);
    return 0;
}

void hy_lexer_init(hy_lexer_t *lx, const char *buf, size_t len, bool cmdline)
{
    lx->buf = buf;
    lx->len = len;
    lx->pos = 0;
    lx->cmdline = cmdline;
}

int hy_lexer_next(hy_conf_t *cf, hy_lexer_t *lx)
{
    bool need_space = false, last_space = true, comment = false, variable = false, escaped = false;
    bool d_quoted = false, s_quoted = false;
    /* `start` is where the current word (or comment) began; as in nginx it is also updated on every
     * separator, so "pos - start" is what nginx's 4096-byte read buffer would have to hold. */
    size_t start = lx->pos;
    unsigned start_line = cf->line;

    cf->args->nelts = 0;
    for (;;) {
        if (lx->pos >= lx->len) {
            if (cf->args->nelts > 0 || !last_space) {
                if (lx->cmdline)
                    return hy_conf_error(cf, "unexpected end of parameter, expecting \";\"");
                return hy_conf_error(cf, "unexpected end of file, expecting \";\" or \"}\"");
            }
            return HY_LEX_EOF;
        }
        if (!lx->cmdline && lx->pos - start >= HY_LEX_MAX_TOKEN) {
            cf->line = start_line;
            if (d_quoted || s_quoted)
                return hy_conf_error(cf, "too long parameter, probably missing terminating \"%c\" character",
                                     d_quoted ? '"' : '\'');
            return hy_conf_error(cf, "too long parameter \"%.*s...\" started", 10, lx->buf + start);
        }

        char ch = lx->buf[lx->pos++];
        if (ch == '\n') {
            cf->line++;
            comment = false;
        }
        if (comment)
            continue;
        if (escaped) {
            escaped = false;
            continue;
        }

        if (need_space) {
            if (is_space(ch)) {
                last_space = true;
                need_space = false;
                continue;
            }
            if (ch == ';')
                return HY_LEX_OK;
            if (ch == '{')
                return HY_LEX_BLOCK_START;
            if (ch != ')')
                return hy_conf_error(cf, "unexpected \"%c\"", ch);
            /* `if ($a = "b")`: the ")" starts a new word */
            last_space = true;
            need_space = false;
        }

        if (last_space) {
            start = lx->pos - 1;
            start_line = cf->line;
            if (is_space(ch))
                continue;
            switch (ch) {
            case ';':
            case '{':
                if (cf->args->nelts == 0)
                    return hy_conf_error(cf, "unexpected \"%c\"", ch);
                return ch == '{' ? HY_LEX_BLOCK_START : HY_LEX_OK;
            case '}':
                if (cf->args->nelts != 0)
                    return hy_conf_error(cf, "unexpected \"}\"");
                return HY_LEX_BLOCK_DONE;
            case '#':
                comment = true;
                continue;
            case '\\':
                escaped = true;
                break;
            case '"':
                start++;
                d_quoted = true;
                break;
            case '\'':
                start++;
                s_quoted = true;
                break;
            case '$':
                variable = true;
                break;
            default:
                break;
            }
            last_space = false;
            continue;
        }

        /* inside a word */
        if (ch == '{' && variable)
            continue;
        variable = false;
        if (ch == '\\') {
            escaped = true;
            continue;
        }
        if (ch == '$') {
            variable = true;
            continue;
        }
        bool found = false;
        if (d_quoted) {
            if (ch == '"') {
                d_quoted = false;
                need_space = true;
                found = true;
            }
        } else if (s_quoted) {
            if (ch == '\'') {
                s_quoted = false;
                need_space = true;
                found = true;
            }
        } else if (is_space(ch) || ch == ';' || ch == '{') {
            last_space = true;
            found = true;
        }
        if (!found)
            continue;
        push_word(cf, lx->buf + start, lx->pos - 1 - start);
        if (ch == ';')
            return HY_LEX_OK;
        if (ch == '{')
            return HY_LEX_BLOCK_START;
    }
}
