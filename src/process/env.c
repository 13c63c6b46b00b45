/* env.c — nginx's `env` directive (https://nginx.org/en/docs/ngx_core_module.html#env): a worker runs with TZ
 * and the variables the configuration names, nothing else inherited. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core_conf.h"

extern char **environ;

/* The array the last hy_core_env_apply replaced stays referenced: strings an earlier getenv() returned point into
 * it, and it may be the copy process/title.c made (LeakSanitizer would call it lost). volatile: a store nothing
 * reads is kept. */
static char **volatile replaced;

/* "NAME=value" for an inherited variable, or NULL when it is not set */
static char *inherited(const char *name, size_t len)
{
    for (char **e = environ; e != NULL && *e != NULL; e++) {
        if (strncmp(*e, name, len) == 0 && (*e)[len] == '=')
            return hy_strndup(*e, strlen(*e));
    }
    return NULL;
}

/* kept without being named: TZ (nginx keeps it) and NOTIFY_SOCKET (systemd's, which hayate itself reads when
 * a single process notifies; hayate's own addition) */
static const char *const implicit[] = {"TZ", "NOTIFY_SOCKET"};

static bool named(const hy_str_t *w, size_t n, const char *name)
{
    size_t len = strlen(name);
    for (size_t i = 0; i < n; i++) {
        if (w[i].len >= len && memcmp(w[i].ptr, name, len) == 0 && (w[i].len == len || w[i].ptr[len] == '='))
            return true;
    }
    return false;
}

void hy_core_env_apply(const hy_core_conf_t *core)
{
    size_t n = core->env != NULL ? core->env->nelts : 0;
    const hy_str_t *w = core->env != NULL ? core->env->elts : NULL;
    char **env = hy_calloc((n + HY_ARRAY_SIZE(implicit) + 1) * sizeof(char *));
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const char *eq = memchr(w[i].ptr, '=', w[i].len);
        size_t name_len = eq != NULL ? (size_t)(eq - w[i].ptr) : w[i].len;
        char *v = eq != NULL ? hy_strndup(w[i].ptr, w[i].len) : inherited(w[i].ptr, name_len);
        if (v != NULL)
            env[k++] = v;
    }
    for (size_t i = 0; i < HY_ARRAY_SIZE(implicit); i++) {
        char *v = named(w, n, implicit[i]) ? NULL : inherited(implicit[i], strlen(implicit[i]));
        if (v != NULL)
            env[k++] = v;
    }
    env[k] = NULL;
    replaced = environ;
    environ = env;
    tzset(); /* localtime_r reads TZ once: $time_local and the logs follow the new TZ from here on */
}
