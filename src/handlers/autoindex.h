/* autoindex.h — directory listings in nginx's autoindex formats (html, json, jsonp, xml). */
#ifndef HY_HANDLERS_AUTOINDEX_H
#define HY_HANDLERS_AUTOINDEX_H

#include <stddef.h>
#include <stdbool.h>
#include "../core/str.h"
#include "../conf/conf.h"

/* The content handler: a listing for a URI ending in '/' (GET/HEAD) when `autoindex on` (after index, before
 * static); the directives autoindex, autoindex_exact_size, autoindex_localtime, autoindex_format. */
extern hy_module_t hy_http_autoindex_module;

#define HY_AUTOINDEX_HTML 0
#define HY_AUTOINDEX_JSON 1
#define HY_AUTOINDEX_XML 2
#define HY_AUTOINDEX_JSONP 3

typedef struct hy_autoindex_opts {
    bool exact_size;   /* autoindex_exact_size (nginx default on) */
    bool localtime;    /* autoindex_localtime (html only, like nginx) */
    int format;        /* HY_AUTOINDEX_* */
    bool utf8;         /* the response charset is utf-8: html names are measured and cut in characters, not bytes */
    hy_str_t callback; /* jsonp: the already-validated callback name; empty = plain json */
} hy_autoindex_opts_t;

/** Read directory `dirpath` (NUL-terminated) and render the listing for the decoded request URI `uri` (shown in
 * the html title) into a malloc'd buffer (*out, *out_len; the caller frees it with free()). Names starting with
 * '.' are hidden; directories come first, then byte order. Entries are stat'ed following symlinks; a dangling
 * symlink is listed from lstat as nginx does; entries that cannot be stat'ed at all are skipped.
 * Returns 0, or a negative errno if the directory cannot be opened or read (-ENOMEM on allocation failure). */
int hy_autoindex_render(const char *dirpath, hy_str_t uri, const hy_autoindex_opts_t *o, char **out,
                        size_t *out_len);
/** The Content-Type nginx sends for the format: "text/html", "application/json", "application/javascript" (jsonp
 * with a callback) or "text/xml; charset=utf-8". */
hy_str_t hy_autoindex_content_type(const hy_autoindex_opts_t *o);

#endif
