/* browser.h — nginx's ngx_http_browser_module: $modern_browser, $ancient_browser and $msie from the User-Agent,
 * with modern_browser, ancient_browser, modern_browser_value and ancient_browser_value.
 *
 * The decision (hy_browser_classify, pure; nginx's ngx_http_browser):
 *   1. no User-Agent: modern when `modern_browser unlisted`, else ancient;
 *   2. the modern_browser list, Opera first, then msie, gecko, safari, konqueror (an Opera not listed is added with
 *      a version no browser reaches: its UA may say MSIE too): the first whose mark is in the UA (looked for after a
 *      fixed offset: "MSIE " after 25 bytes, "rv:" and "Safari/" after 13, "Konqueror/" after 25, "Opera" anywhere)
 *      decides, by the version after the mark ("X.Y.Z.W", each part after the first two digits wide) against the
 *      listed one; a modern_browser list without a match: ancient unless `unlisted`;
 *   3. `ancient_browser netscape4`: "Mozilla/1." to "Mozilla/4." in a UA longer than 13 bytes is ancient;
 *   4. a UA containing one of the ancient_browser strings is ancient;
 *   5. else modern with `modern_browser unlisted`, ancient without.
 * Both lists and `unlisted`/`netscape4` are inherited together, as nginx does. */
#ifndef HY_HTTP_BROWSER_H
#define HY_HTTP_BROWSER_H

#include <stdbool.h>
#include <stdint.h>
#include "../core/str.h"
#include "../conf/conf.h"

enum { HY_BROWSER_MODERN = 0, HY_BROWSER_ANCIENT = 1 };

typedef struct hy_browser_modern {
    uint64_t version; /* X.Y.Z.W as X*10^6 + Y*10^4 + Z*10^2 + W */
    unsigned mask;    /* index in the browser table (0: Opera) */
} hy_browser_modern_t;

typedef struct hy_browser_conf {
    hy_array_t *modern;  /* hy_browser_modern_t sorted by mask (merged), or NULL */
    hy_array_t *ancient; /* hy_str_t, or NULL */
    bool modern_unlisted, netscape4;
    bool sorted;                                  /* `modern` is in its final form (sorted, Opera in) */
    const hy_str_t *modern_value, *ancient_value; /* NULL until merged: "1" */
} hy_browser_conf_t;

/** HY_BROWSER_MODERN or HY_BROWSER_ANCIENT for the User-Agent `ua` (NULL: the request has none). Pure. */
int hy_browser_classify(const hy_browser_conf_t *c, const hy_str_t *ua);
/** A version as modern_browser reads it ("X", "X.Y", ... digits and dots); false for any other character. */
bool hy_browser_parse_version(hy_str_t s, uint64_t *out);
/** The browser table's index of a modern_browser name (opera, msie, gecko, safari, konqueror; any case), or -1. */
int hy_browser_mask(hy_str_t name);

extern hy_module_t hy_http_browser_module;

#endif
