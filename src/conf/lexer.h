/* lexer.h — the nginx config tokenizer (nginx's ngx_conf_read_token grammar).
 *
 * Splits a config text into statements: each call reads the words of one statement into cf->args and tells
 * how the statement ended (";", "{", or a lone "}" closing the current block). Quotes, backslash escapes,
 * "#" comments, "$var"/"${var}" and nginx's 4096-byte token limit behave exactly as in nginx. Line numbers
 * are kept in cf->line (the line of the last character read, which is what nginx reports). */
#ifndef HY_CONF_LEXER_H
#define HY_CONF_LEXER_H

#include <stddef.h>
#include <stdbool.h>
#include "conf.h"

/* nginx's config buffer size: a token (or comment) this long is "too long parameter" */
#define HY_LEX_MAX_TOKEN 4096

/* hy_lexer_next() results */
enum hy_lex_result {
    HY_LEX_ERROR = -1,      /* reported with hy_conf_error */
    HY_LEX_OK = 0,          /* a statement ended by ";" */
    HY_LEX_BLOCK_START = 1, /* a statement ended by "{" */
    HY_LEX_BLOCK_DONE = 2,  /* a "}" (cf->args is empty) */
    HY_LEX_EOF = 3,         /* end of input between statements */
};

/** One input being tokenized: borrowed bytes, a read position, and the -g ("command line") mode flag. */
typedef struct hy_lexer {
    const char *buf; /* borrowed; need not be NUL-terminated */
    size_t len;
    size_t pos;
    bool cmdline; /* -g parameters: no token limit, "unexpected end of parameter" at EOF, "in command line" */
} hy_lexer_t;


/** Start tokenizing buf[0..len) (borrowed; must outlive the lexer). */
void hy_lexer_init(hy_lexer_t *lx, const char *buf, size_t len, bool cmdline);

/** Read the next statement into cf->args (reset first; words are NUL-terminated, unescaped, allocated in
 * cf->pool so setters may keep them). Advances cf->line. Returns an hy_lex_result; HY_LEX_ERROR after
 * hy_conf_error reported the problem. */
int hy_lexer_next(hy_conf_t *cf, hy_lexer_t *lx);

#endif
