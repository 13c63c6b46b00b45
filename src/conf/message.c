/* message.c — configuration messages in nginx's form: "hayate: [emerg] TEXT in FILE:LINE" (or "in command
 * line" for -g), on stderr and to an optional observer (the error log once it is open). The lexer and the
 * parser both report through here. */
#include <stdarg.h>
#include <stdio.h>
#include "conf.h"

void (*hy_conf_log_hook)(const char *level, const char *msg);

static void conf_log(hy_conf_t *cf, const char *level, const char *fmt, va_list ap)
{
    char msg[8192];
    char line[8192 + 512];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    if (cf->in_cmdline)
        snprintf(line, sizeof(line), "%s in command line", msg);
    else if (cf->file != NULL)
        snprintf(line, sizeof(line), "%s in %s:%u", msg, cf->file, cf->line);
    else
        snprintf(line, sizeof(line), "%s", msg);
    fprintf(stderr, "hayate: [%s] %s\n", level, line);
    if (hy_conf_log_hook != NULL)
        hy_conf_log_hook(level, line);
}

int hy_conf_error(hy_conf_t *cf, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    conf_log(cf, "emerg", fmt, ap);
    va_end(ap);
    return -1;
}

void hy_conf_warn(hy_conf_t *cf, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    conf_log(cf, "warn", fmt, ap);
    va_end(ap);
}
