/* vars-t.h — the types of nginx's variables (values, getters, compiled complex values), apart from the
 * functions in vars.h so that the built-in getters (vars_builtin.c) need the types without the registry. */
#ifndef HY_HTTP_VARS_T_H
#define HY_HTTP_VARS_T_H

#include <stdbool.h>
#include <stdint.h>
#include "../core/str.h"
#include "../core/types.h"

typedef struct hy_var_value {
    char *ptr;
    size_t len;
    bool not_found; /* printed as "-" by the access log (escape=default) */
} hy_var_value_t;

/** A getter: fill *v for this request. `data` is the value given at registration (for prefixes: a pointer to
 * the hy_str_t suffix, e.g. "user_agent" for $http_user_agent). */
typedef void (*hy_var_get_fn)(hy_req_t *req, hy_var_value_t *v, uintptr_t data);

#define HY_VAR_NOCACHE 0x1u /* evaluated on every use (e.g. $status, $msec, map ... volatile) */

/* One part of a compiled complex value. */
typedef struct hy_cv_part {
    int kind;     /* HY_CV_LITERAL, HY_CV_VAR, HY_CV_CAPTURE */
    int index;    /* variable index (HY_CV_VAR) or capture number (HY_CV_CAPTURE) */
    hy_str_t lit; /* HY_CV_LITERAL: the text (conf pool) */
} hy_cv_part_t;

enum { HY_CV_LITERAL = 0, HY_CV_VAR, HY_CV_CAPTURE };

/** "text with $var and ${var}" compiled. When it has no variables, `value` holds the whole text and
 * nparts == 0 (callers can use it directly). */
typedef struct hy_complex {
    hy_str_t value;       /* the source text (conf pool, NUL-terminated) */
    hy_cv_part_t *parts;  /* conf pool; NULL when constant */
    size_t nparts;
} hy_complex_t;

#endif
