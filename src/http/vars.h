/* vars.h — nginx's variables: a registry per http{} (builtins, prefixes such as $arg_NAME, and variables that
 * modules like map define), "complex values" compiled once at config time into literal and variable parts,
 * and lazy per-request evaluation with a per-request cache.
 *
 * A variable's getter fills a hy_var_value_t; "not found" is distinct from "empty" because the access log
 * prints "-" for the former (nginx's not_found). Values point into the request pool, the conf pool or static
 * storage and live at least until the request ends. */
#ifndef HY_HTTP_VARS_H
#define HY_HTTP_VARS_H

#include "request.h"
#include "vars-t.h"
#include "vars_builtin.h"

extern hy_module_t hy_http_vars_module; /* the registry; before map and the access log in hy_modules[] */
extern hy_module_t hy_http_map_module;  /* map.c */
extern hy_module_t hy_http_geo_module;  /* geo.c */
extern hy_module_t hy_http_log_module;  /* log_access.c: log_format, access_log, open_log_file_cache */

/** Compile `text` (words as given in the config) into *out. Variables are looked up by name; names not known
 * yet (e.g. a map defined further down) are resolved when the http block ends, where an unknown name fails with
 * nginx's message `unknown "NAME" variable`. Syntax errors are reported at once with nginx's wording.
 * Returns 0, or -1 after hy_conf_error. Must be called inside http{} (cf->main_conf set). */
int hy_vars_compile(hy_conf_t *cf, hy_str_t text, hy_complex_t *out);
/** Evaluate a compiled value for the request into *out (request pool; or the constant text). Returns 0. */
int hy_vars_eval(hy_req_t *req, const hy_complex_t *cv, hy_str_t *out);
/** Scan a variable name after '$' at *p: NAME or {NAME} (letters, digits, '_'); advances *p past it. The name
 * may be empty (the caller reports that in its own words). -1 after hy_conf_error for a missing '}'. */
int hy_vars_scan_name(hy_conf_t *cf, const char **p, const char *end, hy_str_t *name);
/** The index of variable `name` (without '$'), registering it as used; -1 after hy_conf_error on a bad name. */
int hy_vars_index(hy_conf_t *cf, hy_str_t name);
/** The value of indexed variable `index` for the request (cached unless the variable is HY_VAR_NOCACHE).
 * Never NULL. */
const hy_var_value_t *hy_var_get(hy_req_t *req, int index);
/** The value of the variable `name` (without '$') for the request, looked up at run time (nginx's
 * ngx_http_get_variable: SSI's echo and expressions name variables in the page, not in the config): a variable
 * the config uses or defines, else a built-in one or one of a prefix ($arg_NAME, $http_NAME, ...). Returns false
 * when no such variable exists; *v (request pool or static) otherwise. */
bool hy_var_get_by_name(hy_req_t *req, hy_str_t name, hy_var_value_t *v);
/** The built-in or prefixed ($http_*, $cookie_* ...) variable `name` as if no module defined that name (a `set`
 * variable's fallback). false when there is none. */
bool hy_var_get_builtin(hy_req_t *req, hy_str_t name, hy_var_value_t *v);
/** Define (or redefine, last one wins like nginx's changeable variables) a variable in the current http{}.
 * Returns its index. Used by map. */
int hy_vars_define(hy_conf_t *cf, hy_str_t name, hy_var_get_fn get, uintptr_t data, unsigned flags);
/** Define the variables whose names start with `prefix` (a literal, e.g. "upstream_http_"): get receives a
 * hy_str_t * suffix as data, as the built-in prefixes do. Names used before and after the call both get it.
 * Returns 0 (-1 after hy_conf_error outside http{}). */
int hy_vars_define_prefix(hy_conf_t *cf, const char *prefix, hy_var_get_fn get, unsigned flags);
/** Whether `name` already has a getter in the current http{} (defined by map, set or a module): a module whose
 * variable users may redefine (nginx's changeable ones, e.g. $uid_reset by a map) defines its own only if not. */
bool hy_vars_is_defined(hy_conf_t *cf, hy_str_t name);

/* Named captures of regexes that http-level modules match (map) are variables, as in nginx. The variables
 * are the rewrite module's (they share nginx's namespace with "set"), which sits above this layer, so it
 * collects such regexes and installs its setter through these. */
/** Remember `re` (if it has named groups) so the capture variables' owner can register its names. */
void hy_vars_add_named_regex(hy_conf_t *cf, hy_regex_t *re);
/** The regexes remembered in this http{} (*n of them; NULL when none). */
hy_regex_t **hy_vars_named_regexes(hy_conf_t *cf, size_t *n);
/** Install the function that sets the named-capture variables of the request's last match. */
void hy_vars_set_named_hook(hy_conf_t *cf, void (*fn)(hy_req_t *req));
/** After a match into req->captures: set its named-capture variables (nothing when no hook or no names). */
void hy_vars_named_captures(hy_req_t *req);

/* vars_builtin.c */

#endif
