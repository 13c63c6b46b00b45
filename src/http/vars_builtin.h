/* vars_builtin.h — nginx's built-in variables ($uri, $remote_addr, $arg_NAME ...): the table the registry (vars.c)
 * looks names up in, and the time-format caches the access log shares. */
#ifndef HY_HTTP_VARS_BUILTIN_H
#define HY_HTTP_VARS_BUILTIN_H

#include "request.h"
#include "vars-t.h"
#include "../conf/suggest.h"

/** Look `name` up in the built-in and prefix tables ($arg_NAME...: the longest prefix wins). On success fill
 * *get, *data (for prefixes a pointer to the suffix, allocated from cf->pool) and *flags and return true;
 * false when the name is neither a built-in nor has a known prefix. */
bool hy_vars__lookup_builtin(hy_conf_t *cf, hy_str_t name, hy_var_get_fn *get, uintptr_t *data, unsigned *flags);

/** The value of a header-like variable ($http_, $sent_http_, $sent_trailer_, $upstream_http_ NAME): the n fields
 * whose name is `name` (case-insensitive, '_' matching '-'), their values joined with `sep` as nginx does since 1.23
 * (", "; "; " for a request's Cookie); one field is returned as it is, several are joined in req's pool. False when
 * no field has that name. */
bool hy_vars_join_fields(hy_req_t *req, const hy_header_t *fields, size_t n, hy_str_t name, const char *sep,
                         hy_str_t *out);
/** $time_local for the current cached second ("30/Nov/2026:10:00:00 +0000"; static, 26 chars). */
const char *hy_vars_time_local(void);
/** $time_iso8601 for the current cached second ("2026-11-30T10:00:00+00:00"; static, 25 chars). */
const char *hy_vars_time_iso8601(void);
/** $date_local and $date_gmt (nginx's SSI module's) format the time with strftime's `fmt(req)`: the SSI filter
 * registers the page's `config timefmt` here (a registration, so http need not include filters); NULL or a
 * NULL result: nginx's default "%A, %d-%b-%Y %H:%M:%S %Z". */
void hy_vars_set_date_format(const char *(*fmt)(hy_req_t *req, char *buf, size_t size));
/** "Did you mean": offer every built-in variable's name to near (conf/suggest.h). */
void hy_vars__suggest_builtin(hy_suggest_t *near, const char *name, size_t len);
/** True for hayate's own named variables ($uri, $args, ...; not the $arg_/$http_... prefixes). */
bool hy_vars_is_builtin(hy_str_t name);
/** The complex-value evaluator the getters of $document_root and friends use (vars.c installs hy_vars_eval, so
 * the built-ins need not include the registry). */
void hy_vars__set_evaluator(int (*eval)(hy_req_t *req, const hy_complex_t *cv, hy_str_t *out));

#endif
