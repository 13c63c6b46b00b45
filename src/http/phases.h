/* phases.h — nginx's phase engine. Modules register handlers into phases at configuration time (from their
 * postconfiguration); the request core runs them in order and names no module. After the http{} block is
 * parsed, hy_http_phases_init() flattens the registrations into one array of (checker, handler, next) steps, as
 * nginx's ngx_http_init_phase_handlers does, so running a request is a walk over that array.
 *
 * Phase order and what each one does (checker semantics):
 *   POST_READ       after the head is parsed (realip).                    generic
 *   SERVER_REWRITE  the server's rewrite directives.                      generic
 *   FIND_CONFIG     the location for req->uri (core; no handlers).        internal/client_max_body_size checks
 *   REWRITE         the location's rewrite directives.                    generic; skipped for the server level
 *   POST_REWRITE    URI changed by REWRITE → count it, back to FIND_CONFIG (10 changes → 500). core; no handlers
 *   PREACCESS       limits (limit_req, limit_conn).                       generic
 *   ACCESS          access control (allow/deny, auth_basic).              access: a status answers, OK moves on
 *   POST_ACCESS     core; no handlers.
 *   PRECONTENT      try_files, mirror.                                   generic
 *   CONTENT         the location's handler if it has one, else the chain (index, autoindex, static ...):
 *                   DECLINED passes to the next; when every handler declined: 403 for ".../", else 404.
 *   LOG             once per request when it is over (hy_req_log_phase).
 *
 * Handler results:
 *   HY_OK        this phase is done: go to the next phase (CONTENT: the request was answered).
 *   HY_DECLINED  not mine: the next handler of the same phase.
 *   HY_AGAIN     waiting on I/O: stop; the handler resumes with hy_http_phases_resume(req) later.
 *   HY_DONE      the request was answered or redirected (hy_req_error, internal redirect...): stop.
 *   100..999     answer with this status (hy_req_error: error_page applies).
 */
#ifndef HY_HTTP_PHASES_H
#define HY_HTTP_PHASES_H

#include "../conf/conf.h"
#include "../core/str.h"

/* nginx's NGX_HTTP_MAX_URI_CHANGES: internal redirects and rewrites a request may make */
#define HY_MAX_URI_CHANGES 10

enum hy_phase {
    HY_PHASE_POST_READ = 0,
    HY_PHASE_SERVER_REWRITE,
    HY_PHASE_FIND_CONFIG,
    HY_PHASE_REWRITE,
    HY_PHASE_POST_REWRITE,
    HY_PHASE_PREACCESS,
    HY_PHASE_ACCESS,
    HY_PHASE_POST_ACCESS,
    HY_PHASE_PRECONTENT,
    HY_PHASE_CONTENT,
    HY_PHASE_LOG,
    HY_PHASE_COUNT
};

enum { HY_OK = 0, HY_DECLINED = -5, HY_AGAIN = -2, HY_DONE = -4 };

/** A phase handler: one of the HY_OK/DECLINED/AGAIN/DONE results or an HTTP status (see above). */
typedef int (*hy_phase_handler_fn)(hy_req_t *req);

/** Register fn in phase (a module's postconfiguration calls this). Handlers of one phase run in the order they
 * were registered, i.e. hy_modules[] order (src/process/modules.c). FIND_CONFIG, POST_REWRITE and POST_ACCESS
 * take no handlers (-1 after hy_conf_error). Returns 0. */
int hy_http_phase_add(hy_conf_t *cf, enum hy_phase phase, hy_phase_handler_fn fn);
/** Build the flat step array of the http{} block being configured; called once after every module's
 * postconfiguration. */
int hy_http_phases_init(hy_conf_t *cf);

/* Entry points that start or restart the walk (the request lifecycle lives in request.h). */
/** Start the request: validates the target and Host, picks the server, runs the phase engine from POST_READ
 * (http/phases.h). On return the response may still be in flight. */
void hy_req_process(hy_req_t *req);
/** nginx's ngx_http_internal_redirect: new URI and args (args may be empty), rerun from the server rewrite
 * phase. Counts against the 10-redirect limit (500 after). Always finishes or continues the request. */
void hy_req_internal_redirect(hy_req_t *req, hy_str_t uri, hy_str_t args);
/** nginx's ngx_http_named_location: continue in location "@name" from its rewrite phase (500 if unknown). */
void hy_req_named_redirect(hy_req_t *req, hy_str_t name);
/** nginx's post_action: once the response has been written, when the request's location has a post_action (a
 * URI or @name) and none ran yet, redirect there with req->post_action set (the protocol drops what it sends;
 * its final send ends the request as usual) and return true; false: nothing to run. */
bool hy_req_post_action(hy_req_t *req);
/** Run the LOG phase once (http/phases.c); the protocol calls it when the request is over. */
void hy_req_log_phase(hy_req_t *req);
/** Start a request at the SERVER_REWRITE phase (POST_READ runs from hy_req_process before the server is known). */
void hy_http_phases_run(hy_req_t *req, enum hy_phase from);
/** Continue a request whose handler returned HY_AGAIN, at the same step. */
void hy_http_phases_resume(hy_req_t *req);
/** Names of the handlers registered in a phase, for tests and -T style dumps: fills fns, returns the count. */
size_t hy_http_phase_handlers(hy_cycle_t *cycle, enum hy_phase phase, hy_phase_handler_fn *fns, size_t cap);

#endif
