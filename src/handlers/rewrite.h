/* rewrite.h — nginx's rewrite module: return, rewrite, if, set, break, rewrite_log,
 * uninitialized_variable_warn. Scripts are compiled per server and location level at config time and run by
 * the request core's phase engine (http/request.c): once at the server level, then at the location level. */
#ifndef HY_HANDLERS_REWRITE_H
#define HY_HANDLERS_REWRITE_H

#include "../http/request.h"

extern hy_module_t hy_http_rewrite_module;

/* what a script run asks the phase engine to do next */
enum {
    HY_RW_CONTINUE = 0, /* go on in the current location */
    HY_RW_URI_CHANGED,  /* "last", or the URI changed: search the location again */
    HY_RW_DONE,         /* the request was answered (return, redirect, error) */
};

/** Run the rewrite directives of level `lc` (a server's or a location's conf). An "if" that matches switches
 * req->loc to the if block's conf. Returns HY_RW_*. */
int hy_rewrite_run(hy_req_t *req, hy_http_loc_conf_t *lc);
/** After a selection that may have matched a regex into req->captures (server_name, location): when a new
 * match happened, set the variables of that regex's named captures ($name), as nginx does at match time.
 * Does nothing otherwise, so a "set $name" in between is not undone. Never runs a regex. */
void hy_rewrite_named_captures(hy_req_t *req);
/** Whether "rewrite ... break" changed the URI without a new location search (nginx's cleared valid_location:
 * proxy_pass then sends the whole changed URI instead of replacing the location's prefix). */
bool hy_rewrite_uri_changed_in_location(hy_req_t *req);

/* Pure helpers (unit-tested). */

/** nginx's "if ($var)": false for "" and "0". */
bool hy_rewrite_truthy(hy_str_t v);
/** The URI and args after a non-redirect rewrite: `result` is the evaluated replacement (trailing '?' already
 * removed, add_args false then), `has_q` whether the replacement has a literal '?'. New strings go in `pool`. */
void hy_rewrite_split(hy_pool_t *pool, hy_str_t result, bool has_q, bool add_args, hy_str_t old_args,
                      hy_str_t *uri, hy_str_t *args);
/** The Location of a redirecting rewrite: the result, plus the old args after '?' (or '&' when the
 * replacement had args) unless add_args is false. */
hy_str_t hy_rewrite_redirect_location(hy_pool_t *pool, hy_str_t result, bool has_q, bool add_args,
                                      hy_str_t old_args);

#endif
