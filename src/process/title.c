/* title.c — process titles over the argv area (see title.h). */
#include <stdlib.h>
#include <string.h>
#include "title.h"
#include "../core/mem.h"

extern char **environ;

static char *area;      /* argv[0]: start of the writable area */
static size_t area_len; /* through the last contiguous argv/environ string, including its NUL */
static char **saved_argv;
static char *cmdline = "";
static char **env_strings; /* the copied environment strings, kept reachable when unsetenv() drops one */

void hy_title_init(int argc, char **argv)
{
    if (argc < 1 || argv[0] == NULL)
        return;
    saved_argv = hy_calloc(sizeof(char *) * ((size_t)argc + 1));
    size_t total = 0;
    for (int i = 0; i < argc; i++) {
        saved_argv[i] = hy_strndup(argv[i], strlen(argv[i]));
        total += strlen(argv[i]) + 1;
    }
    cmdline = hy_alloc(total + 1);
    size_t o = 0;
    for (int i = 0; i < argc; i++) {
        size_t l = strlen(argv[i]);
        if (i)
            cmdline[o++] = ' ';
        memcpy(cmdline + o, argv[i], l);
        o += l;
    }
    cmdline[o] = '\0';
    /* the area: argv strings, then the environment strings when they follow at once (the usual layout) */
    area = argv[0];
    char *end = argv[0] + strlen(argv[0]) + 1;
    for (int i = 1; i < argc; i++)
        if (argv[i] == end)
            end = argv[i] + strlen(argv[i]) + 1;
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = hy_calloc(sizeof(char *) * (n + 1));
    env_strings = hy_calloc(sizeof(char *) * (n + 1));
    for (size_t i = 0; i < n; i++) {
        if (environ[i] == end)
            end = environ[i] + strlen(environ[i]) + 1;
        env[i] = env_strings[i] = hy_strndup(environ[i], strlen(environ[i]));
    }
    environ = env; /* getenv() and exec now read the copy: the old strings become title space */
    area_len = (size_t)(end - area);
}

void hy_title_set(const char *title)
{
    if (area == NULL || area_len < 2)
        return;
    static const char prog[] = "hayate: ";
    size_t o = 0, pl = sizeof(prog) - 1, tl = strlen(title);
    size_t room = area_len - 1;
    memcpy(area, prog, pl < room ? pl : room);
    o = pl < room ? pl : room;
    size_t c = tl < room - o ? tl : room - o;
    memcpy(area + o, title, c);
    o += c;
    /* NUL padding: the kernel then shows exactly the title in /proc/PID/cmdline */
    memset(area + o, '\0', area_len - o);
}

char *const *hy_title_argv(void)
{
    return saved_argv;
}

const char *hy_title_cmdline(void)
{
    return cmdline;
}
