/* parser_test.c — directive dispatch (contexts, argument counts, ";" vs "{"), raw blocks, unknown and compat
 * directives, include with sorted globs, -T dump, the generic slots, and the exact nginx message texts. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/stat.h>
#include "../harness.h"
#include "conf/conf.h"
#include "conf/compat.h"
#include "conf/cycle.h"
#include "conf/lexer.h"

/* is_str() on a char array trips -Waddress in the harness's NULL check; pass arrays through this */
static const char *S(const char *p) { return p; }

/* ---- test modules ---- */

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
    char name[64];
} loc_conf_t;

static char logbuf[8192], typesbuf[1024];
static size_t logn, typesn;
static loc_conf_t *locs[16];
static int nlocs;
static hy_pool_t *pool;

static loc_conf_t *new_loc(hy_conf_t *cf)
{
    loc_conf_t *l = hy_pcalloc(cf->pool, sizeof(*l));
    l->sendfile = HY_UNSET;
    l->ka_ms = HY_UNSET_MSEC;
    l->body = HY_UNSET_SIZE;
    l->send_s = HY_UNSET;
    l->satisfy = HY_UNSET;
    if (nlocs < 16)
        locs[nlocs++] = l;
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

static int set_http(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_conf_t saved = *cf;
    loc_conf_t *l = new_loc(cf);
    snprintf(l->name, sizeof(l->name), "http");
    cf->main_conf = confs(cf, l);
    cf->loc_conf = cf->main_conf;
    cf->ctx = HY_CTX_HTTP;
    int rc = hy_conf_parse_block(cf);
    cf->ctx = saved.ctx;
    cf->main_conf = saved.main_conf;
    cf->loc_conf = saved.loc_conf;
    return rc;
}

static int set_server(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_conf_t saved = *cf;
    loc_conf_t *l = new_loc(cf);
    snprintf(l->name, sizeof(l->name), "server");
    cf->srv_conf = confs(cf, l);
    cf->loc_conf = confs(cf, l);
    cf->ctx = HY_CTX_SERVER;
    int rc = hy_conf_parse_block(cf);
    cf->ctx = saved.ctx;
    cf->srv_conf = saved.srv_conf;
    cf->loc_conf = saved.loc_conf;
    return rc;
}

static int set_location(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    hy_conf_t saved = *cf;
    loc_conf_t *l = new_loc(cf);
    cf->loc_conf = confs(cf, l);
    cf->ctx = HY_CTX_LOC;
    int rc = hy_conf_parse_block(cf);
    /* the location's own words must still be in cf->args after its body was parsed */
    size_t n;
    hy_str_t *w = hy_conf_args(cf, &n);
    snprintf(l->name, sizeof(l->name), "%s:%s", w[0].ptr, w[n - 1].ptr);
    cf->ctx = saved.ctx;
    cf->loc_conf = saved.loc_conf;
    return rc;
}

static int types_raw(hy_conf_t *cf, void *data)
{
    size_t n;
    hy_str_t *w = hy_conf_args(cf, &n);
    if (n < 2)
        return hy_conf_error(cf, "invalid number of arguments in \"types\" directive");
    typesn += (size_t)snprintf(typesbuf + typesn, sizeof(typesbuf) - typesn, "%s:", w[0].ptr);
    for (size_t i = 1; i < n; i++)
        typesn +=
            (size_t)snprintf(typesbuf + typesn, sizeof(typesbuf) - typesn, "%s%s", w[i].ptr, i + 1 < n ? "," : ";");
    return 0;
}

static int set_types(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    cf->raw = types_raw;
    int rc = hy_conf_parse_block(cf);
    cf->raw = NULL;
    return rc;
}

/* echo: logs "FILE-BASENAME:LINE:[w1][w2]... " */
static int set_echo(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    size_t n;
    hy_str_t *w = hy_conf_args(cf, &n);
    const char *base = strrchr(cf->file, '/');
    logn += (size_t)snprintf(logbuf + logn, sizeof(logbuf) - logn, "%s:%u:", base ? base + 1 : cf->file, cf->line);
    for (size_t i = 1; i < n; i++)
        logn += (size_t)snprintf(logbuf + logn, sizeof(logbuf) - logn, "[%s]", w[i].ptr);
    logn += (size_t)snprintf(logbuf + logn, sizeof(logbuf) - logn, " ");
    return 0;
}

static const hy_bounds_t workers_bounds = {1, 64};
static const hy_bounds_t conns_bounds = {1, -1};
static const hy_enum_t satisfy_enum[] = {{"all", 0}, {"any", 1}, {NULL, 0}};
#define ALL_CTX (HY_CTX_MAIN | HY_CTX_EVENTS | HY_CTX_HTTP_ANY)

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
     .offset = offsetof(core_conf_t, conns),
     .post = &conns_bounds},
    {.name = "http", .ctx = HY_CTX_MAIN, .args = HY_ARGS_BLOCK, .set = set_http},
    {.name = "echo", .ctx = ALL_CTX, .args = HY_ARGS_ANY, .set = set_echo},
    {0},
};

static const hy_directive_t http_directives[] = {
    {.name = "server", .ctx = HY_CTX_HTTP, .args = HY_ARGS_BLOCK | HY_ARGS_0, .set = set_server},
    {.name = "location", .ctx = HY_CTX_SERVER | HY_CTX_LOC, .args = HY_ARGS_BLOCK | HY_ARGS_12, .set = set_location},
    {.name = "types", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_BLOCK, .set = set_types},
    {.name = "listen", .ctx = HY_CTX_SERVER, .args = HY_ARGS_1MORE, .set = set_nothing},
    {.name = "two", .ctx = HY_CTX_HTTP, .args = HY_ARGS_2 | HY_ARGS_3, .set = set_nothing},
    {.name = "more2", .ctx = HY_CTX_HTTP, .args = HY_ARGS_2MORE, .set = set_nothing},
    {.name = "none", .ctx = HY_CTX_HTTP, .args = HY_ARGS_0, .set = set_nothing},
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

static hy_module_t core_module = {.name = "tcore", .directives = core_directives};
static hy_module_t http_module = {.name = "thttp", .directives = http_directives};
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
        for (const hy_directive_t *d = hy_modules[i]->directives; d != NULL && d->name != NULL; d++)
            if (strlen(d->name) == len && memcmp(d->name, name, len) == 0) {
                *mod = hy_modules[i];
                return d;
            }
    return NULL;
}

/* stands in for the real table (compat.c), which is then not linked */
const hy_compat_t hy_compat_directives[] = {
    {"tune_knob", HY_COMPAT_WARN, NULL},
    {"tune_block", HY_COMPAT_WARN, NULL},
    {"perl_set", HY_COMPAT_NOT_YET, "embedded perl"},
    {"js_import", HY_COMPAT_NOT_YET, NULL},
    {NULL, 0, NULL},
};

const hy_compat_t *hy_compat_find(const char *name, size_t len)
{
    for (const hy_compat_t *c = hy_compat_directives; c->name != NULL; c++)
        if (strlen(c->name) == len && memcmp(c->name, name, len) == 0)
            return c;
    return NULL;
}

/* ---- harness: a fresh generation per run, stderr captured ---- */

static hy_cycle_t cycle;
static core_conf_t core;
static hy_conf_t cf;
static char err_buf[16384];
static char *err = err_buf; /* what the run wrote to stderr */
static char tmpdir[256];
static int saved_fd = -1;
static FILE *capture;

static void setup(void)
{
    hy_pool_destroy(pool);
    pool = hy_pool_create(4096);
    memset(&cycle, 0, sizeof(cycle));
    cycle.pool = pool;
    cycle.prefix = "/usr/local/hayate/";
    cycle.conf_prefix = hy_pstrndup(pool, tmpdir, strlen(tmpdir)); /* no trailing '/': joined anyway */
    cycle.core_conf = hy_pcalloc(pool, 2 * sizeof(void *));
    cycle.core_conf[0] = &core;
    core = (core_conf_t){.workers = HY_UNSET, .daemon = HY_UNSET, .pid = HY_STR_NULL, .conns = HY_UNSET};
    memset(&cf, 0, sizeof(cf));
    cf.cycle = &cycle;
    cf.pool = pool;
    cf.temp = pool;
    logn = typesn = 0;
    logbuf[0] = typesbuf[0] = '\0';
    nlocs = 0;
}

static void capture_start(void)
{
    fflush(stderr);
    capture = tmpfile();
    saved_fd = dup(2);
    dup2(fileno(capture), 2);
}

static void capture_end(void)
{
    fflush(stderr);
    dup2(saved_fd, 2);
    close(saved_fd);
    rewind(capture);
    size_t n = fread(err_buf, 1, sizeof(err_buf) - 1, capture);
    err_buf[n] = '\0';
    fclose(capture);
}

static int run(const char *text)
{
    setup();
    capture_start();
    int rc = hy_conf_parse_string(&cf, "t.conf", text, strlen(text));
    capture_end();
    return rc;
}

static int run_file(const char *name)
{
    setup();
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
    capture_start();
    int rc = hy_conf_parse_file(&cf, path);
    capture_end();
    return rc;
}

static void write_file(const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
    char *slash = strrchr(path, '/');
    *slash = '\0';
    mkdir(path, 0700);
    *slash = '/';
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

/* "hayate: [emerg] MSG in t.conf:LINE\n" */
static const char *emerg(const char *msg, int line)
{
    static char buf[4096];
    snprintf(buf, sizeof(buf), "hayate: [emerg] %s in t.conf:%d\n", msg, line);
    return buf;
}

/* ---- tests ---- */

static loc_conf_t *find_loc(const char *name)
{
    for (int i = 0; i < nlocs; i++)
        if (strcmp(locs[i]->name, name) == 0)
            return locs[i];
    return NULL;
}

static void test_dispatch(void)
{
    int rc = run("worker_processes 4;\n"
                 "daemon OFF;\n"
                 "pid /run/x.pid;\n"
                 "events { worker_connections 1024; }\n"
                 "http {\n"
                 "    sendfile on;\n"
                 "    keepalive_timeout 75s;\n"
                 "    default_type text/plain;\n"
                 "    server {\n"
                 "        listen 80 default_server;\n"
                 "        location /a {\n"
                 "            root \"/var/www\";\n"
                 "            client_max_body_size 1m;\n"
                 "            send_timeout 1m;\n"
                 "            satisfy ANY;\n"
                 "            location = /a/b { sendfile off; }\n"
                 "        }\n"
                 "    }\n"
                 "}\n");
    is_int(rc, 0);
    is_str(err, "");
    is_int(core.workers, 4);
    is_int(core.daemon, 0);
    is_strn(core.pid.ptr, core.pid.len, "/run/x.pid");
    is_int(core.pid.ptr[core.pid.len], '\0');
    ok(cf.file == NULL); /* position restored after the top level */
    is_int(core.conns, 1024);
    loc_conf_t *http = find_loc("http");
    ok(http != NULL);
    if (http) {
        is_int(http->sendfile, 1);
        is_int(http->ka_ms, 75000);
        is_strn(http->root.ptr, http->root.len, "text/plain"); /* default_type: HY_CONF_HTTP_MAIN conf */
    }
    loc_conf_t *a = find_loc("location:/a");
    ok(a != NULL);
    if (a) {
        is_strn(a->root.ptr, a->root.len, "/var/www");
        is_int(a->body, 1048576);
        is_int(a->send_s, 60);
        is_int(a->satisfy, 1);
        is_int(a->sendfile, HY_UNSET);
    }
    loc_conf_t *b = find_loc("location:/a/b");
    ok(b != NULL);
    if (b)
        is_int(b->sendfile, 0);
}

static void test_context(void)
{
    is_int(run("sendfile on;"), -1);
    is_str(err, emerg("\"sendfile\" directive is not allowed here", 1));
    is_int(run("events {\n}\nworker_connections 1;"), -1);
    is_str(err, emerg("\"worker_connections\" directive is not allowed here", 3));
    is_int(run("http { location / {} }"), -1);
    is_str(err, emerg("\"location\" directive is not allowed here", 1));
    is_int(run("http { server { listen 80; location / { listen 81; } } }"), -1);
    is_str(err, emerg("\"listen\" directive is not allowed here", 1));
    /* the context check comes before the ";"/"{" check, as in nginx */
    is_int(run("sendfile on {}"), -1);
    is_str(err, emerg("\"sendfile\" directive is not allowed here", 1));
}

static void test_args(void)
{
    is_int(run("worker_processes;"), -1);
    is_str(err, emerg("invalid number of arguments in \"worker_processes\" directive", 1));
    is_int(run("\nworker_processes 1\n 2;"), -1);
    is_str(err, emerg("invalid number of arguments in \"worker_processes\" directive", 3));
    is_int(run("daemon on off;"), -1);
    is_str(err, emerg("invalid number of arguments in \"daemon\" directive", 1));
    is_int(run("http { two a; }"), -1);
    is_str(err, emerg("invalid number of arguments in \"two\" directive", 1));
    is_int(run("http { two a b; two a b c; }"), 0);
    is_int(run("http { two a b c d; }"), -1);
    is_int(run("http { more2 a; }"), -1);
    is_str(err, emerg("invalid number of arguments in \"more2\" directive", 1));
    is_int(run("http { more2 a b c d e f g h i j; none; }"), 0);
    is_int(run("http { none a; }"), -1);
    is_int(run("http { server { listen; } }"), -1);
    is_str(err, emerg("invalid number of arguments in \"listen\" directive", 1));
    is_int(run("echo 1 2 3 4 5 6 7 8 9 10; echo;"), 0);
    is_int(run("events x {}"), -1);
    is_str(err, emerg("invalid number of arguments in \"events\" directive", 1));
    is_int(run("http x {}"), -1); /* a bare HY_ARGS_BLOCK takes no arguments */
    is_int(run("http { server { location {} } }"), -1);
    is_str(err, emerg("invalid number of arguments in \"location\" directive", 1));
    is_int(run("http { server { location = / {} location a b c {} } }"), -1);
}

static void test_blocks(void)
{
    is_int(run("events {}\nhttp\n;"), -1);
    is_str(err, emerg("directive \"http\" has no opening \"{\"", 3));
    is_int(run("daemon off\n{}"), -1);
    is_str(err, emerg("directive \"daemon\" is not terminated by \";\"", 2));
    is_int(run("events {}\n}\n"), -1);
    is_str(err, emerg("unexpected \"}\"", 2));
    is_int(run("events {}\nhttp {\n\n"), -1);
    is_str(err, emerg("unexpected end of file, expecting \"}\"", 4));
    is_int(run("http {\n sendfile on\n"), -1);
    is_str(err, emerg("unexpected end of file, expecting \";\" or \"}\"", 3));
    is_int(run("http { sendfile \"on\"x; }"), -1);
    is_str(err, emerg("unexpected \"x\"", 1));
    is_int(run(";"), -1);
    is_str(err, emerg("unexpected \";\"", 1));
    is_int(run("http { server { } } }"), -1);
    is_str(err, emerg("unexpected \"}\"", 1));
}

static void test_unknown(void)
{
    is_int(run("events {}\nfoo bar;"), -1);
    is_str(err, emerg("unknown directive \"foo\"", 2));
    is_int(run("tune_knob 1 2;\nworker_processes 2;"), 0);
    is_str(err, "hayate: [warn] \"tune_knob\" directive is not supported by hayate yet and is ignored in t.conf:1\n");
    is_int(core.workers, 2);
    is_int(run("tune_block x {\n a { b; }\n c;\n}\nworker_processes 3;"), 0);
    is_str(err, "hayate: [warn] \"tune_block\" directive is not supported by hayate yet and is ignored in t.conf:1\n");
    is_int(core.workers, 3);
    is_int(run("tune_block {\n a { b; }\n"), -1);
    ok(strstr(err, "unexpected end of file, expecting \"}\" in t.conf:3") != NULL);
    is_int(run("http {\n perl_set $x y;\n}"), -1);
    is_str(err, emerg("\"perl_set\" directive is not supported by hayate yet (embedded perl)", 2));
    is_int(run("js_import a;"), -1);
    is_str(err, emerg("\"js_import\" directive is not supported by hayate yet", 1));
    /* every unsupported directive of the file in one run; the parse goes on and still fails */
    is_int(run("js_import a;\nperl_set $x y { z; }\nworker_processes 4;\njs_import b;"), -1);
    is_str(err, "hayate: [emerg] \"js_import\" directive is not supported by hayate yet in t.conf:1\n"
                "hayate: [emerg] \"perl_set\" directive is not supported by hayate yet (embedded perl) in t.conf:2\n"
                "hayate: [emerg] \"js_import\" directive is not supported by hayate yet in t.conf:4\n");
    is_int(core.workers, 4);
    /* a near miss of a known name */
    is_int(run("worker_processs 2;"), -1);
    is_str(err, emerg("unknown directive \"worker_processs\" (did you mean \"worker_processes\"?)", 1));
}

static void test_raw(void)
{
    write_file("mime.types", "text/css css;\n");
    is_int(run("http { types { text/html html htm; include mime.types; image/png png; } types {} }"), 0);
    is_str(S(typesbuf), "text/html:html,htm;text/css:css;image/png:png;");
    is_int(run("http { types { include a b; } }"), -1);
    is_str(err, emerg("invalid number of arguments in \"include\" directive", 1));
    is_int(run("http { types {\n text/html html;\n a {} } }"), -1);
    is_str(err, emerg("unexpected \"{\"", 3));
    is_int(run("http { types { text/html; } }"), -1);
    is_str(err, emerg("invalid number of arguments in \"types\" directive", 1));
    /* after the raw block, statements are dispatched again */
    is_int(run("http { types { a b; } sendfile on; } worker_processes 1;"), 0);
    is_int(core.workers, 1);
    is_int(run("http { types { a b; } sendfile on; }\nsendfile on;"), -1);
    is_str(err, emerg("\"sendfile\" directive is not allowed here", 2));
}

static void test_slots(void)
{
    is_int(run("worker_processes 1; worker_processes 2;"), -1);
    is_str(err, emerg("\"worker_processes\" directive is duplicate", 1));
    is_int(run("worker_processes 0;"), -1);
    is_str(err, emerg("value must be between 1 and 64", 1));
    is_int(run("worker_processes 65;"), -1);
    is_int(run("worker_processes 64;"), 0);
    is_int(core.workers, 64);
    is_int(run("events { worker_connections 0; }"), -1);
    is_str(err, emerg("value must be equal to or greater than 1", 1));
    is_int(run("events { worker_connections 99999999; }"), 0);
    is_int(run("worker_processes x;"), -1);
    is_str(err, emerg("\"worker_processes\" directive invalid number", 1));
    is_int(run("worker_processes -1;"), -1);
    is_str(err, emerg("\"worker_processes\" directive invalid number", 1));
    is_int(run("daemon yes;"), -1);
    is_str(err, emerg("invalid value \"yes\" in \"daemon\" directive, it must be \"on\" or \"off\"", 1));
    is_int(run("daemon On;"), 0);
    is_int(core.daemon, 1);
    is_int(run("daemon on;\ndaemon on;"), -1);
    is_str(err, emerg("\"daemon\" directive is duplicate", 2));
    is_int(run("pid a; pid b;"), -1);
    is_str(err, emerg("\"pid\" directive is duplicate", 1));
    is_int(run("pid \"\";"), 0);
    ok(core.pid.ptr != NULL && core.pid.len == 0);
    is_int(run("http { client_max_body_size 1x; }"), -1);
    is_str(err, emerg("\"client_max_body_size\" directive invalid value", 1));
    is_int(run("http { client_max_body_size 8k; client_max_body_size 8k; }"), -1);
    is_str(err, emerg("\"client_max_body_size\" directive is duplicate", 1));
    is_int(run("http { keepalive_timeout abc; }"), -1);
    is_str(err, emerg("\"keepalive_timeout\" directive invalid value", 1));
    is_int(run("http { keepalive_timeout 500ms; }"), 0);
    is_int(find_loc("http")->ka_ms, 500);
    is_int(run("http { keepalive_timeout 1; keepalive_timeout 2; }"), -1);
    is_str(err, emerg("\"keepalive_timeout\" directive is duplicate", 1));
    is_int(run("http { send_timeout 10x; }"), -1);
    is_str(err, emerg("\"send_timeout\" directive invalid value", 1));
    is_int(run("http { send_timeout 2h; }"), 0);
    is_int(find_loc("http")->send_s, 7200);
    is_int(run("http { satisfy some; }"), -1);
    is_str(err, emerg("invalid value \"some\"", 1));
    is_int(run("http { satisfy all; satisfy any; }"), -1);
    is_str(err, emerg("\"satisfy\" directive is duplicate", 1));
}

static int hook_calls;
static char hook_msg[512];
static void hook(const char *level, const char *msg)
{
    hook_calls++;
    snprintf(hook_msg, sizeof(hook_msg), "%s|%s", level, msg);
}

static void test_hook_and_cmdline(void)
{
    hy_conf_log_hook = hook;
    hook_calls = 0;
    is_int(run("tune_knob;"), 0);
    is_int(hook_calls, 1);
    is_str(S(hook_msg), "warn|\"tune_knob\" directive is not supported by hayate yet and is ignored in t.conf:1");
    hy_conf_log_hook = NULL;

    /* name NULL: nginx's -g parameters */
    setup();
    capture_start();
    int rc = hy_conf_parse_string(&cf, NULL, "daemon off; worker_processes 2;", 31);
    capture_end();
    is_int(rc, 0);
    is_int(core.daemon, 0);
    is_int(core.workers, 2);
    setup();
    capture_start();
    rc = hy_conf_parse_string(&cf, NULL, "daemon maybe;", 13);
    capture_end();
    is_int(rc, -1);
    is_str(err, "hayate: [emerg] invalid value \"maybe\" in \"daemon\" directive, it must be \"on\" or \"off\" in "
                "command line\n");
    setup();
    capture_start();
    rc = hy_conf_parse_string(&cf, NULL, "events {}", 9);
    capture_end();
    is_int(rc, -1);
    is_str(err, "hayate: [emerg] block directives are not supported in -g option in command line\n");
    setup();
    capture_start();
    rc = hy_conf_parse_string(&cf, NULL, "daemon off", 10);
    capture_end();
    is_str(err, "hayate: [emerg] unexpected end of parameter, expecting \";\" in command line\n");
}

static void test_include(void)
{
    write_file("main.conf", "echo main 1;\n"
                            "include conf.d/*.conf;\n"
                            "include single.conf;\n"
                            "include nomatch/*.conf;\n"
                            "http { include inner.conf; }\n"
                            "include conf.d/*.conf;\n"
                            "echo main 7;\n");
    write_file("conf.d/b.conf", "echo b;");
    write_file("conf.d/a.conf", "\necho a;\n");
    write_file("conf.d/c.txt", "echo c;");
    write_file("conf.d/10.conf", "echo 10;");
    write_file("single.conf", "echo single;\n");
    write_file("inner.conf", "sendfile on;\necho inner;\n");
    is_int(run_file("main.conf"), 0);
    is_str(err, "");
    is_str(S(logbuf), "main.conf:1:[main][1] 10.conf:1:[10] a.conf:2:[a] b.conf:1:[b] single.conf:1:[single] "
                      "inner.conf:2:[inner] 10.conf:1:[10] a.conf:2:[a] b.conf:1:[b] main.conf:7:[main][7] ");
    ok(find_loc("http") != NULL && find_loc("http")->sendfile == 1);
    ok(cf.file == NULL);

    /* a missing file: nginx's open() message at the including line */
    char want[1024];
    write_file("missing.conf", "echo x;\n\ninclude nothere.conf;\n");
    is_int(run_file("missing.conf"), -1);
    snprintf(want, sizeof(want),
             "hayate: [emerg] open() \"%s/nothere.conf\" failed (2: No such file or directory) in %s/missing.conf:3\n",
             tmpdir, tmpdir);
    is_str(err, want);
    /* the top-level file itself: no position */
    is_int(run_file("none.conf"), -1);
    snprintf(want, sizeof(want), "hayate: [emerg] open() \"%s/none.conf\" failed (2: No such file or directory)\n",
             tmpdir);
    is_str(err, want);

    /* errors inside an included file name that file and line; the includer's position comes back after */
    write_file("bad.conf", "echo 1;\ninclude sub/bad.conf;\n");
    write_file("sub/bad.conf", "echo 2;\n\nqqqqq;\n");
    is_int(run_file("bad.conf"), -1);
    snprintf(want, sizeof(want), "hayate: [emerg] unknown directive \"qqqqq\" in %s/sub/bad.conf:3\n", tmpdir);
    is_str(err, want);
    write_file("after.conf", "include sub/ok.conf;\necho 2;\n\nhttp {");
    write_file("sub/ok.conf", "echo 1;\n\n\n\n\n");
    is_int(run_file("after.conf"), -1);
    snprintf(want, sizeof(want), "hayate: [emerg] unexpected end of file, expecting \"}\" in %s/after.conf:4\n",
             tmpdir);
    is_str(err, want);
    is_str(S(logbuf), "ok.conf:1:[1] after.conf:2:[2] ");

    /* a block cannot be closed by an included file */
    write_file("close.conf", "http {\ninclude sub/close.conf;\n}\n");
    write_file("sub/close.conf", "sendfile on;\n}\n");
    is_int(run_file("close.conf"), -1);
    snprintf(want, sizeof(want), "hayate: [emerg] unexpected \"}\" in %s/sub/close.conf:2\n", tmpdir);
    is_str(err, want);

    /* absolute include paths, and include syntax errors */
    char text[1024];
    snprintf(text, sizeof(text), "include %s/single.conf;", tmpdir);
    is_int(run(text), 0);
    is_str(S(logbuf), "single.conf:1:[single] ");
    is_int(run("include a b;"), -1);
    is_str(err, emerg("invalid number of arguments in \"include\" directive", 1));
    is_int(run("include a {}"), -1);
    is_str(err, emerg("directive \"include\" is not terminated by \";\"", 1));
    is_int(run("include;"), -1);

    /* self-inclusion stops at the depth limit */
    write_file("self.conf", "include self.conf;\n");
    is_int(run_file("self.conf"), -1);
    ok(strstr(err, "include nesting is too deep (more than 32 levels)") != NULL);
    ok(strstr(err, "self.conf:1\n") != NULL);
    ok(strchr(err, '\n') == err + strlen(err) - 1); /* one message, not one per level */
}

static void test_dump(void)
{
    write_file("d/main.conf", "include x/*.conf;\ninclude x/*.conf;\necho end;");
    write_file("d/x/2.conf", "echo 2;\n");
    write_file("d/x/1.conf", "# one\n");
    char path[512], dir[512];
    snprintf(path, sizeof(path), "%s/d/main.conf", tmpdir);
    snprintf(dir, sizeof(dir), "%s/d/", tmpdir);
    setup();
    cycle.conf_prefix = dir; /* includes resolve against the main file's directory */
    hy_conf_dump_enable(&cf);
    is_int(hy_conf_parse_file(&cf, path), 0);
    FILE *f = tmpfile();
    hy_conf_dump_write(&cf, fileno(f));
    rewind(f);
    char got[4096];
    size_t n = fread(got, 1, sizeof(got) - 1, f);
    got[n] = '\0';
    fclose(f);
    char want[4096];
    /* nginx -T: each file once, in the order first read, followed by one newline */
    snprintf(want, sizeof(want),
             "# configuration file %s/d/main.conf:\ninclude x/*.conf;\ninclude x/*.conf;\necho end;\n"
             "# configuration file %s/d/x/1.conf:\n# one\n\n"
             "# configuration file %s/d/x/2.conf:\necho 2;\n\n",
             tmpdir, tmpdir, tmpdir);
    is_str(S(got), want);

    /* without hy_conf_dump_enable nothing is recorded */
    setup();
    is_int(hy_conf_parse_file(&cf, path), 0);
    f = tmpfile();
    hy_conf_dump_write(&cf, fileno(f));
    is_int(ftell(f), 0);
    fclose(f);

    /* the embedded config is dumped under its name */
    setup();
    hy_conf_dump_enable(&cf);
    is_int(hy_conf_parse_string(&cf, "(embedded)", "echo x;", 7), 0);
    f = tmpfile();
    hy_conf_dump_write(&cf, fileno(f));
    rewind(f);
    n = fread(got, 1, sizeof(got) - 1, f);
    got[n] = '\0';
    fclose(f);
    is_str(S(got), "# configuration file (embedded):\necho x;\n");
}

static void test_paths(void)
{
    setup();
    is_str(hy_cycle_path(&cycle, "logs/error.log", 14), "/usr/local/hayate/logs/error.log");
    is_str(hy_cycle_path(&cycle, "/var/log/x", 10), "/var/log/x");
    char want[512];
    snprintf(want, sizeof(want), "%s/mime.types", tmpdir);
    is_str(hy_cycle_conf_path(&cycle, "mime.typesXX", 10), want);
    cycle.conf_prefix = "/etc/hayate/";
    is_str(hy_cycle_conf_path(&cycle, "a.conf", 6), "/etc/hayate/a.conf");
}

static void rm_rf(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        printf("# could not remove %s\n", dir);
}

int main(void)
{
    hy_modules_init();
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/hy_parser_test.XXXXXX");
    if (mkdtemp(tmpdir) == NULL)
        return 2;
    subtest("dispatch to module tables", test_dispatch);
    subtest("context checks", test_context);
    subtest("argument counts", test_args);
    subtest("block structure", test_blocks);
    subtest("unknown and compat directives", test_unknown);
    subtest("raw blocks (types)", test_raw);
    subtest("generic slots", test_slots);
    subtest("log hook and -g parameters", test_hook_and_cmdline);
    subtest("include", test_include);
    subtest("-T dump", test_dump);
    subtest("paths", test_paths);
    hy_pool_destroy(pool);
    rm_rf(tmpdir);
    return done_testing();
}
