/* conf_regex.h — compiling a regular expression from a directive: the core regex layer plus the config's
 * `file:line` error reporting. */
#ifndef HY_CONF_CONF_REGEX_H
#define HY_CONF_CONF_REGEX_H

#include "conf.h"
#include "../core/regex.h"

/** Compile `pattern` into cf->pool (freed with the generation). On error: NULL after hy_conf_error with nginx's
 * message (`pcre2_compile() failed: ... in "..." at "..."`, then ` in file:line`). */
hy_regex_t *hy_conf_regex(hy_conf_t *cf, hy_str_t pattern, bool caseless);

#endif
