/* ssi_parse.h — the SSI command scanner (nginx's ngx_http_ssi_module syntax): a pure, incremental state machine
 * that splits a byte stream into text and `<!--# command param="value" ... -->` commands. It owns no I/O and no
 * request: the SSI filter (ssi.c) feeds it the body in whatever pieces it comes and gets callbacks.
 *
 * The contract:
 *   - hy_ssi_feed may be called with any split of the input (down to one byte at a time); the callbacks see the
 *     same text and commands whatever the split. Text is delivered in slices of the input (or of the constant
 *     "<!--#" when a prefix of it held back at a piece's end turns out not to start a command).
 *   - A command: `<!--#`, optional white space, a name ([A-Za-z0-9_]{1,32}), then parameters `name="value"` or
 *     `name='value'` (up to HY_SSI_MAX_PARAMS, names up to 32 bytes, values up to value_len bytes; a backslash
 *     escapes the next byte inside a value), separated by optional white space, ended by `-->`.
 *   - Anything else after `<!--#` is an error: the scanner skips to the next `-->` and reports the command with
 *     `error` set (the filter prints its errmsg there), as nginx does. `<!--` without `#` is text.
 *   - on_cmd returning non-zero pauses the scanner right after that command (hy_ssi_feed returns the bytes
 *     consumed so far): the caller feeds the rest later (SSI's `include ... wait="yes"`).
 *   - At the end of the input, hy_ssi_finish delivers a held-back prefix as text; an unterminated command is
 *     dropped (nginx outputs nothing for it either). */
#ifndef HY_FILTERS_SSI_PARSE_H
#define HY_FILTERS_SSI_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include "../core/str.h"

#define HY_SSI_MAX_PARAMS 16
#define HY_SSI_NAME_MAX 32

typedef struct hy_ssi_param {
    hy_str_t name, value; /* point into the parser's storage, valid during the callback */
} hy_ssi_param_t;

typedef struct hy_ssi_cmd {
    hy_str_t name;
    hy_ssi_param_t params[HY_SSI_MAX_PARAMS];
    size_t nparams;
    const char *error; /* non-NULL: the command could not be parsed (why, for the log) */
} hy_ssi_cmd_t;

typedef struct hy_ssi_parser {
    int state;
    size_t match;     /* bytes of "<!--#" or "-->" matched so far */
    char quote;       /* the open value's quote */
    bool escaped;     /* a backslash precedes the next value byte */
    const char *error;
    size_t value_len; /* ssi_value_length */
    char name[HY_SSI_NAME_MAX + 1];
    size_t name_len;
    char pnames[HY_SSI_MAX_PARAMS][HY_SSI_NAME_MAX + 1];
    size_t pname_len[HY_SSI_MAX_PARAMS];
    char *values;     /* HY_SSI_MAX_PARAMS * (value_len + 1) bytes, the caller's */
    size_t vlen[HY_SSI_MAX_PARAMS];
    size_t nparams;
    void *arg;
    void (*on_text)(void *arg, const char *p, size_t n);
    int (*on_cmd)(void *arg, const hy_ssi_cmd_t *cmd);
} hy_ssi_parser_t;

/** Bytes of value storage hy_ssi_parser_init needs for value_len. */
static inline size_t hy_ssi_values_size(size_t value_len)
{
    return HY_SSI_MAX_PARAMS * (value_len + 1);
}
/** Set up p; values has hy_ssi_values_size(value_len) bytes and lives as long as p. */
void hy_ssi_parser_init(hy_ssi_parser_t *p, size_t value_len, char *values,
                        void (*on_text)(void *arg, const char *p, size_t n),
                        int (*on_cmd)(void *arg, const hy_ssi_cmd_t *cmd), void *arg);
/** Scan len bytes; returns how many were consumed (all of them unless on_cmd paused the scanner). */
size_t hy_ssi_feed(hy_ssi_parser_t *p, const char *data, size_t len);
/** The input ended: text held back is delivered. */
void hy_ssi_finish(hy_ssi_parser_t *p);

#endif
