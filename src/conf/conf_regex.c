/* conf_regex.c — see conf_regex.h. */
#include "conf_regex.h"

hy_regex_t *hy_conf_regex(hy_conf_t *cf, hy_str_t pattern, bool caseless)
{
    char err[HY_REGEX_ERR_MAX];
    hy_regex_t *re = hy_regex_compile(cf->pool, pattern, caseless, err);
    if (re == NULL)
        hy_conf_error(cf, "%s", err);
    return re;
}
