/* vars_builtin.h — between the variable registry (vars.c) and the built-in variables (vars_builtin.c). */
#ifndef HY_HTTP_VARS_BUILTIN_H
#define HY_HTTP_VARS_BUILTIN_H

#include "vars.h"

/** Look `name` up in the built-in and prefix tables ($arg_NAME...: the longest prefix wins). On success fill
 * *get, *data (for prefixes a pointer to the suffix, allocated from cf->pool) and *flags and return true;
 * false when the name is neither a built-in nor has a known prefix. */
bool hy_vars__lookup_builtin(hy_conf_t *cf, hy_str_t name, hy_var_get_fn *get, uintptr_t *data, unsigned *flags);

#endif
