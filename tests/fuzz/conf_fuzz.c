/* conf_fuzz.c — libFuzzer driver for the config lexer and parser: parses the input with
 * hy_conf_parse_string against a few test modules (blocks, a raw types block, every slot kind, a skipped
 * compat block). Must never crash or leak; every input gets its own pool, destroyed at the end.
 * "include" is rewritten so inputs cannot make the parser read (or glob) the fuzzing machine's files. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "conf/conf.h"
#include "conf/compat.h"
#include "conf/cycle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct {
    int64_t workers;
    int daemon;
    hy_str_t pid;
    int64_t conns;
} core_conf_t;

typedef struct {
    int sendfile;
    int64_t ka_ms;
    int64_t body;
    int64_t send_s;
    hy_str_t root;
    int satisfy;
} loc_conf_t;

static loc_conf_t *new_loc(hy_conf_t *cf)
{
    loc_conf_t *l = hy_pcalloc(cf->pool, sizeof(*l));
    l->sendfile = HY_UNSET;
    l->ka_ms = HY_UNSET_MSEC;
    l->body = HY_UNSET_SIZE;
    l->send_s = HY_UNSET;
    l->satisfy = HY_UNSET;
    return l;
}

static void **confs(hy_conf_t *cf, void *c)
{
    void **a = hy_pcalloc(cf->pool, 2 * sizeof(void *));
    a[1] = c;
    return a;
}

/* a test directive that takes any value */
static int set_nothing(hy_conf_t *cf, const hy_directive_t *d, void *conf) { return 0; }

static int set_events(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    uint32_t ctx = cf->ctx;
    cf->ctx = HY_CTX_EVENTS;
    int rc = hy_conf_parse_block(cf);
    cf->ctx = ctx;
    return rc;
}

/* http, server and location: a new level with its own loc conf */
static int set_level(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_conf_t saved = *cf;
    void **c = confs(cf, new_loc(cf));
    if (strcmp(d->name, "http") == 0) {
        cf->main_conf = c;
        cf->ctx = HY_CTX_HTTP;
    } else if (strcmp(d->name, "server") == 0) {
        cf->srv_conf = c;
        cf->ctx = HY_CTX_SERVER;
    } else {
        cf->ctx = HY_CTX_LOC;
    }
    cf->loc_conf = c;
    int rc = hy_conf_parse_block(cf);
    size_t n;
    hy_str_t *w = hy_conf_args(cf, &n); /* the directive's own words survive its block */
    if (n == 0 || strcmp(w[0].ptr, d->name) != 0)
        abort();
    cf->ctx = saved.ctx;
    cf->main_conf = saved.main_conf;
    cf->srv_conf = saved.srv_conf;
    cf->loc_conf = saved.loc_conf;
    return rc;
}

static int types_raw(hy_conf_t *cf, void *data)
{
    size_t n;
    hy_str_t *w = hy_conf_args(cf, &n);
    if (n < 2)
        return hy_conf_error(cf, "invalid number of arguments in \"types\" directive");
    for (size_t i = 0; i < n; i++)
        if (w[i].ptr[w[i].len] != '\0')
            abort();
    return 0;
}

static int set_types(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    cf->raw = types_raw;
    int rc = hy_conf_parse_block(cf);
    cf->raw = NULL;
    return rc;
}

static const hy_bounds_t workers_bounds = {1, 64};
static const hy_enum_t satisfy_enum[] = {{"all", 0}, {"any", 1}, {NULL, 0}};

static const hy_directive_t core_directives[] = {
    {.name = "worker_processes",
     .ctx = HY_CTX_MAIN,
     .args = HY_ARGS_1,
     .set = hy_slot_num,
     .conf = HY_CONF_CORE,
     .offset = offsetof(core_conf_t, workers),
     .post = &workers_bounds},
    {.name = "daemon",
     .ctx = HY_CTX_MAIN,
     .args = HY_ARGS_FLAG,
     .set = hy_slot_flag,
     .conf = HY_CONF_CORE,
     .offset = offsetof(core_conf_t, daemon)},
    {.name = "pid",
     .ctx = HY_CTX_MAIN,
     .args = HY_ARGS_1,
     .set = hy_slot_str,
     .conf = HY_CONF_CORE,
     .offset = offsetof(core_conf_t, pid)},
    {.name = "events", .ctx = HY_CTX_MAIN, .args = HY_ARGS_BLOCK | HY_ARGS_0, .set = set_events},
    {.name = "worker_connections",
     .ctx = HY_CTX_EVENTS,
     .args = HY_ARGS_1,
     .set = hy_slot_num,
     .conf = HY_CONF_CORE,
     .offset = offsetof(core_conf_t, conns)},
    {.name = "http", .ctx = HY_CTX_MAIN, .args = HY_ARGS_BLOCK | HY_ARGS_0, .set = set_level},
    {0},
};

static const hy_directive_t http_directives[] = {
    {.name = "server", .ctx = HY_CTX_HTTP, .args = HY_ARGS_BLOCK | HY_ARGS_0, .set = set_level},
    {.name = "location", .ctx = HY_CTX_SERVER | HY_CTX_LOC, .args = HY_ARGS_BLOCK | HY_ARGS_12, .set = set_level},
    {.name = "types", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_BLOCK | HY_ARGS_0, .set = set_types},
    {.name = "listen", .ctx = HY_CTX_SERVER, .args = HY_ARGS_1MORE, .set = set_nothing},
    {.name = "return", .ctx = HY_CTX_SERVER | HY_CTX_LOC, .args = HY_ARGS_12, .set = set_nothing},
    {.name = "proxy_set_header", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_2 | HY_ARGS_3, .set = set_nothing},
    {.name = "index", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_1MORE, .set = set_nothing},
    {.name = "log_format", .ctx = HY_CTX_HTTP, .args = HY_ARGS_2MORE, .set = set_nothing},
    {.name = "sendfile",
     .ctx = HY_CTX_HTTP_ANY,
     .args = HY_ARGS_FLAG,
     .set = hy_slot_flag,
     .conf = HY_CONF_LOC,
     .offset = offsetof(loc_conf_t, sendfile)},
    {.name = "keepalive_timeout",
     .ctx = HY_CTX_HTTP_ANY,
     .args = HY_ARGS_1,
     .set = hy_slot_msec,
     .conf = HY_CONF_LOC,
     .offset = offsetof(loc_conf_t, ka_ms)},
    {.name = "client_max_body_size",
     .ctx = HY_CTX_HTTP_ANY,
     .args = HY_ARGS_1,
     .set = hy_slot_size,
     .conf = HY_CONF_LOC,
     .offset = offsetof(loc_conf_t, body)},
    {.name = "send_timeout",
     .ctx = HY_CTX_HTTP_ANY,
     .args = HY_ARGS_1,
     .set = hy_slot_sec,
     .conf = HY_CONF_LOC,
     .offset = offsetof(loc_conf_t, send_s)},
    {.name = "root",
     .ctx = HY_CTX_HTTP_ANY,
     .args = HY_ARGS_1,
     .set = hy_slot_str,
     .conf = HY_CONF_LOC,
     .offset = offsetof(loc_conf_t, root)},
    {.name = "satisfy",
     .ctx = HY_CTX_HTTP_ANY,
     .args = HY_ARGS_1,
     .set = hy_slot_enum,
     .conf = HY_CONF_LOC,
     .offset = offsetof(loc_conf_t, satisfy),
     .post = satisfy_enum},
    {.name = "default_type",
     .ctx = HY_CTX_HTTP_ANY,
     .args = HY_ARGS_1,
     .set = hy_slot_str,
     .conf = HY_CONF_HTTP_MAIN,
     .offset = offsetof(loc_conf_t, root)},
    {0},
};

static hy_module_t core_module = {.name = "fcore", .directives = core_directives};
static hy_module_t http_module = {.name = "fhttp", .directives = http_directives};
hy_module_t *hy_modules[] = {&core_module, &http_module, NULL};

int hy_modules_init(void)
{
    int i = 0;
    for (; hy_modules[i] != NULL; i++)
        hy_modules[i]->index = i;
    return i;
}

const hy_directive_t *hy_modules_find(const char *name, size_t len, hy_module_t **mod)
{
    for (int i = 0; hy_modules[i] != NULL; i++)
        for (const hy_directive_t *d = hy_modules[i]->directives; d->name != NULL; d++)
            if (strlen(d->name) == len && memcmp(d->name, name, len) == 0) {
                *mod = hy_modules[i];
                return d;
            }
    return NULL;
}

/* stands in for the real table (compat.c), which is then not linked */
const hy_compat_t hy_compat_directives[] = {
    {"worker_cpu_affinity", HY_COMPAT_WARN, NULL},
    {"upstream", HY_COMPAT_WARN, NULL},
    {"perl_set", HY_COMPAT_NOT_YET, "embedded perl"},
    {NULL, 0, NULL},
};

const hy_compat_t *hy_compat_find(const char *name, size_t len)
{
    for (const hy_compat_t *c = hy_compat_directives; c->name != NULL; c++)
        if (strlen(c->name) == len && memcmp(c->name, name, len) == 0)
            return c;
    return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool initialized;
    if (!initialized) {
        /* silence the parser's messages (fprintf(stderr)) without closing fd 2, where libFuzzer and the
         * sanitizers still write their reports: glibc's stderr is an assignable FILE pointer */
        FILE *null = fopen("/dev/null", "w");
        if (null != NULL)
            stderr = null;
        hy_modules_init();
        initialized = true;
    }

    char *text = malloc(size + 1);
    memcpy(text, data, size);
    for (char *p = text; (p = memmem(p, size - (size_t)(p - text), "include", 7)) != NULL; p += 7)
        p[2] = 'k';

    hy_pool_t *pool = hy_pool_create(4096);
    core_conf_t core = {.workers = HY_UNSET, .daemon = HY_UNSET, .conns = HY_UNSET};
    void *core_confs[2] = {&core, NULL};
    hy_cycle_t cycle = {
        .pool = pool, .prefix = "/nonexistent/", .conf_prefix = "/nonexistent/", .core_conf = core_confs};
    hy_conf_t cf = {.cycle = &cycle, .pool = pool, .temp = pool};
    if (size > 0 && (data[0] & 1))
        hy_conf_dump_enable(&cf);
    if (size > 0 && data[0] == '!') /* -g parameter mode */
        (void)hy_conf_parse_string(&cf, NULL, text + 1, size - 1);
    else
        (void)hy_conf_parse_string(&cf, "fuzz.conf", text, size);
    if (cf._dump != NULL) {
        int fd = open("/dev/null", O_WRONLY);
        hy_conf_dump_write(&cf, fd);
        close(fd);
    }
    hy_pool_destroy(pool);
    free(text);
    return 0;
}
