/* zone_test.c — named shared memory zones: claims from directive setters (two test modules using nginx's
 * "zone=NAME:SIZE", "shared:NAME:SIZE" and "NAME SIZE" spellings) with nginx's exact messages, the zero-size
 * check, and the lifecycle across generations: kept mappings, init with the previous generation's data,
 * dropped zones unmapped when their last generation is released, a failed reload that mapped and was
 * dropped, a failing init. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include "../harness.h"
#include "conf/conf.h"
#include "conf/cycle.h"
#include "conf/zone.h"
#include "conf/lexer.h"

/* is_str() on a char array trips -Waddress in the harness's NULL check; pass arrays through this */
static const char *S(const char *p)
{
    return p;
}

/* ---- two test modules: "a" (limit_req_zone-like) and "b" (ssl_session_cache- and upstream-zone-like) ---- */

typedef struct state {
    uint64_t *counter; /* in the zone */
    void *self;        /* this generation's state, to check what init receives */
} state_t;

static int init_calls, init_fail;
static void *last_old_data;

static int init_a(hy_zone_t *z, void *old_data)
{
    init_calls++;
    last_old_data = old_data;
    if (init_fail)
        return -1;
    state_t *st = z->data;
    if (old_data != NULL) /* kept: the state is already in the zone */
        st->counter = ((state_t *)old_data)->counter;
    else
        st->counter = hy_slab_calloc(z->slab, sizeof(uint64_t));
    return st->counter ? 0 : -1;
}

static hy_module_t mod_a, mod_b;

static hy_zone_t *claim(hy_conf_t *cf, hy_str_t name, size_t size, const void *tag)
{
    hy_zone_t *z = hy_zone_claim(cf, name, size, tag);
    if (z != NULL && tag == &mod_a && z->data == NULL) {
        state_t *st = hy_pcalloc(cf->pool, sizeof(*st));
        st->self = st;
        z->data = st;
        z->init = init_a;
    }
    return z;
}

static int set_a_zone(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    size_t n;
    hy_str_t *w = hy_conf_args(cf, &n), name;
    size_t size;
    if (hy_zone_parse_named(cf, w[1], &name, &size) != 0)
        return -1;
    return claim(cf, name, size, &mod_a) ? 0 : -1;
}

static int set_a_use(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    size_t n;
    hy_str_t *w = hy_conf_args(cf, &n);
    return claim(cf, w[1], 0, &mod_a) ? 0 : -1;
}

static int set_b_cache(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    size_t n;
    hy_str_t *w = hy_conf_args(cf, &n), name;
    size_t size;
    if (hy_zone_parse_shared(cf, w[1], &name, &size) != 0)
        return -1;
    return claim(cf, name, size, &mod_b) ? 0 : -1;
}

static int set_b_zone(hy_conf_t *cf, const hy_directive_t *d, void *conf)
{
    size_t n;
    hy_str_t *w = hy_conf_args(cf, &n);
    int64_t size = hy_parse_size(w[2].ptr, w[2].len);
    if (size < 0)
        return hy_conf_error(cf, "invalid zone size \"%s\"", w[2].ptr);
    return claim(cf, w[1], (size_t)size, &mod_b) ? 0 : -1;
}

static const hy_directive_t a_directives[] = {
    {.name = "a_zone", .ctx = HY_CTX_MAIN, .args = HY_ARGS_1, .set = set_a_zone},
    {.name = "a_use", .ctx = HY_CTX_MAIN, .args = HY_ARGS_1, .set = set_a_use},
    {0},
};
static const hy_directive_t b_directives[] = {
    {.name = "b_cache", .ctx = HY_CTX_MAIN, .args = HY_ARGS_1, .set = set_b_cache},
    {.name = "b_zone", .ctx = HY_CTX_MAIN, .args = HY_ARGS_2, .set = set_b_zone},
    {0},
};
static hy_module_t mod_a = {.name = "a", .directives = a_directives};
static hy_module_t mod_b = {.name = "b", .directives = b_directives};
hy_module_t *hy_modules[] = {&mod_a, &mod_b, NULL};

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

/* ---- generations ---- */

static char msgs[4096]; /* config messages of the last load, one per line */

static void on_conf_log(const char *level, const char *msg)
{
    size_t n = strlen(msgs);
    snprintf(msgs + n, sizeof(msgs) - n, "[%s] %s\n", level, msg);
}

/* Parse `text` into a fresh generation, as hy_cycle_load does up to the zone check. NULL on an error (the
 * messages are in msgs). */
static hy_cycle_t *load(const char *text)
{
    msgs[0] = '\0';
    hy_pool_t *pool = hy_pool_create(4096);
    hy_cycle_t *cycle = hy_pcalloc(pool, sizeof(*cycle));
    cycle->pool = pool;
    cycle->refs = 1;
    cycle->prefix = cycle->conf_prefix = "/tmp/";
    cycle->conf_file = "test.conf";
    cycle->core_conf = hy_pcalloc(pool, sizeof(void *) * (size_t)hy_modules_init());
    hy_conf_t cf = {.cycle = cycle, .pool = pool, .temp = pool, .ctx = HY_CTX_MAIN};
    int rc = hy_conf_parse_string(&cf, "test.conf", text, strlen(text));
    if (rc == 0)
        rc = hy_zones_check(cycle);
    if (rc != 0) {
        hy_cycle_unref(cycle);
        return NULL;
    }
    return cycle;
}

static hy_zone_t *zone(hy_cycle_t *cycle, const char *name)
{
    hy_zone_t **zs = cycle->zones ? cycle->zones->elts : NULL;
    for (size_t i = 0; zs && i < cycle->zones->nelts; i++)
        if (strcmp(zs[i]->name.ptr, name) == 0)
            return zs[i];
    return NULL;
}

static bool is_mapped(void *addr)
{
    return msync(addr, 1, MS_ASYNC) == 0 || errno != ENOMEM;
}

/* stderr, for the messages that have no file:line (hy_log_stderr) */
static char err_buf[4096];
static int saved_fd = -1;
static FILE *capture;

static void capture_start(void)
{
    fflush(stderr);
    capture = tmpfile();
    saved_fd = dup(2);
    dup2(fileno(capture), 2);
}

static const char *capture_end(void)
{
    fflush(stderr);
    dup2(saved_fd, 2);
    close(saved_fd);
    rewind(capture);
    size_t n = fread(err_buf, 1, sizeof(err_buf) - 1, capture);
    err_buf[n] = '\0';
    fclose(capture);
    return err_buf;
}

/* ---- tests ---- */

static void test_claims(void)
{
    /* one name claimed by two directives of one module: one zone; a reference before or after the size */
    hy_cycle_t *c = load("a_use one;\na_zone zone=one:64k;\na_use one;\nb_cache shared:two:1m;\n"
                         "b_zone three 32k;\nb_zone three 32k;\n");
    ok(c != NULL);
    is_int(c->zones->nelts, 3);
    hy_zone_t *z = zone(c, "one");
    ok(z != NULL && z->tag == &mod_a);
    is_int(z->size, 64 * 1024);
    ok(z->slab == NULL); /* claimed, not mapped */
    is_int(zone(c, "two")->size, 1024 * 1024);
    ok(zone(c, "two")->tag == &mod_b);
    is_int(zone(c, "three")->size, 32 * 1024);
    is_int(hy_zones_mapped(), 0);
    hy_cycle_unref(c);

    ok(load("a_zone zone=one:10m;\na_zone zone=one:20m;\n") == NULL);
    is_str(S(msgs), "[emerg] the size 20971520 of shared memory zone \"one\" conflicts with already declared "
                    "size 10485760 in test.conf:2\n");
    ok(load("a_zone zone=one:10m;\n\nb_cache shared:one:10m;\n") == NULL);
    is_str(S(msgs), "[emerg] the shared memory zone \"one\" is already declared for a different use in test.conf:3\n");
    ok(load("b_cache shared:S:1m; a_zone zone=S:1m;\n") == NULL);
    is_str(S(msgs), "[emerg] the shared memory zone \"S\" is already declared for a different use in test.conf:1\n");
    ok(load("b_zone up 16k;\n") == NULL); /* nginx's upstream zone: the name in the message */
    is_str(S(msgs), "[emerg] zone \"up\" is too small in test.conf:1\n");

    /* a reference nobody sizes: reported after parsing, without file:line (nginx's ngx_init_cycle) */
    capture_start();
    hy_cycle_t *r = load("a_zone zone=one:64k;\na_use nope;\n");
    const char *err = capture_end();
    ok(r == NULL);
    is_str(S(msgs), "");
    is_str(err, "hayate: [emerg] zero size shared memory zone \"nope\"\n");
}

static void test_parsers(void)
{
    static const struct {
        const char *conf, *msg;
    } bad[] = {
        {"a_zone zone=one:31k;", "invalid zone size"}, /* placeholder, replaced below */
        {"a_zone zone=one:10x;", "[emerg] invalid zone size \"zone=one:10x\" in test.conf:1\n"},
        {"a_zone zone=one;", "[emerg] invalid zone size \"zone=one\" in test.conf:1\n"},
        {"a_zone zone=one:;", "[emerg] invalid zone size \"zone=one:\" in test.conf:1\n"},
        {"a_zone zone=one:1g;", "[emerg] invalid zone size \"zone=one:1g\" in test.conf:1\n"},
        {"a_zone zone=one:-1;", "[emerg] invalid zone size \"zone=one:-1\" in test.conf:1\n"},
        {"a_zone zone=one:0;", "[emerg] zone \"zone=one:0\" is too small in test.conf:1\n"},
        {"a_zone zone=:10m;", "[emerg] \"a_zone\" must have \"zone\" parameter in test.conf:1\n"},
        {"b_cache shared:S:31k;", "[emerg] session cache \"shared:S:31k\" is too small in test.conf:1\n"},
        {"b_cache shared:S:1x;", "[emerg] invalid session cache \"shared:S:1x\" in test.conf:1\n"},
        {"b_cache shared::1m;", "[emerg] invalid session cache \"shared::1m\" in test.conf:1\n"},
        {"b_cache shared:S;", "[emerg] invalid session cache \"shared:S\" in test.conf:1\n"},
        {"b_cache shared:S:;", "[emerg] invalid session cache \"shared:S:\" in test.conf:1\n"},
        {"b_cache shared:;", "[emerg] invalid session cache \"shared:\" in test.conf:1\n"},
        {"b_cache builtin:1000;", "[emerg] invalid session cache \"builtin:1000\" in test.conf:1\n"},
    };
    long pg = sysconf(_SC_PAGESIZE);
    char small[64], small_msg[128];
    /* 8 pages is the minimum (nginx: 32k with 4 KiB pages) */
    snprintf(small, sizeof(small), "a_zone zone=one:%ldk;", 8 * pg / 1024 - 1);
    snprintf(small_msg, sizeof(small_msg), "[emerg] zone \"zone=one:%ldk\" is too small in test.conf:1\n",
             8 * pg / 1024 - 1);
    for (size_t i = 0; i < HY_ARRAY_SIZE(bad); i++) {
        const char *conf = i == 0 ? small : bad[i].conf, *msg = i == 0 ? small_msg : bad[i].msg;
        ok(load(conf) == NULL);
        if (!is_str(S(msgs), msg))
            printf("#   for: %s\n", conf);
    }
    /* the good spellings */
    char exact[64];
    snprintf(exact, sizeof(exact), "a_zone zone=min:%ldk;", 8 * pg / 1024);
    hy_cycle_t *c = load(exact);
    ok(c != NULL && zone(c, "min")->size == (size_t)(8 * pg));
    hy_cycle_unref(c);
    c = load("a_zone one:10M; b_cache shared:SSL:2m; a_zone zone=k:1024K;");
    ok(c != NULL);
    is_int(zone(c, "one")->size, 10 * 1024 * 1024);
    is_int(zone(c, "SSL")->size, 2 * 1024 * 1024);
    is_int(zone(c, "k")->size, 1024 * 1024);
    hy_cycle_unref(c);
}

static void test_lifecycle(void)
{
    init_calls = 0;
    hy_cycle_t *g1 = load("a_zone zone=one:64k;\na_zone zone=two:64k;\nb_cache shared:three:32k;\n");
    ok(g1 != NULL);
    is_int(hy_zones_map(g1), 0);
    is_int(init_calls, 2); /* b has no init */
    ok(last_old_data == NULL);
    hy_zone_t *one1 = zone(g1, "one"), *two1 = zone(g1, "two"), *three1 = zone(g1, "three");
    ok(one1->slab != NULL && two1->slab != NULL && three1->slab != NULL);
    ok(!one1->is_kept && !two1->is_kept);
    ok((void *)one1->slab == one1->shm.addr);
    is_int(hy_zones_mapped(), 3);
    uint64_t *counter = ((state_t *)one1->data)->counter;
    ok(counter != NULL);
    *counter = 5;
    /* the workers' view: a child's update lands in the master's mapping */
    pid_t pid = fork();
    if (pid == 0) {
        hy_slab_lock(one1->slab);
        *((state_t *)one1->data)->counter += 10;
        hy_slab_unlock(one1->slab);
        _exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
    is_int(*counter, 15);

    /* reload: one kept, two resized (a new mapping), three dropped, four new */
    init_calls = 0;
    hy_cycle_t *g2 = load("a_zone zone=one:64k;\na_zone zone=two:128k;\na_zone zone=four:32k;\n");
    ok(g2 != NULL);
    is_int(hy_zones_map(g2), 0);
    is_int(init_calls, 3);
    hy_zone_t *one2 = zone(g2, "one"), *two2 = zone(g2, "two"), *four2 = zone(g2, "four");
    ok(one2->is_kept && !two2->is_kept && !four2->is_kept);
    ok(one2->slab == one1->slab && one2->shm.addr == one1->shm.addr);
    ok(two2->shm.addr != two1->shm.addr);
    ok(((state_t *)one2->data)->counter == counter); /* init carried the state over */
    is_int(*((state_t *)one2->data)->counter, 15);
    is_int(hy_zones_mapped(), 5);

    /* a worker forked for g2 while g1 is still alive lets go of what only g1 uses, keeps g2's zones */
    void *old_two = two1->shm.addr, *old_three = three1->shm.addr;
    pid = fork();
    if (pid == 0) {
        hy_zones_worker_init(g2);
        bool gone = !is_mapped(old_two) && !is_mapped(old_three) && two1->slab == NULL && three1->slab == NULL;
        bool kept = is_mapped(one2->shm.addr) && is_mapped(two2->shm.addr) && is_mapped(four2->shm.addr) &&
                    *((state_t *)one2->data)->counter == 15;
        _exit(gone && kept && hy_zones_mapped() == 3 ? 0 : 1);
    }
    waitpid(pid, &st, 0);
    ok(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    is_int(hy_zones_mapped(), 5); /* the parent (the master) still holds all of them */

    /* the old generation goes: what only it used is unmapped, the kept zone stays */
    void *two1_addr = two1->shm.addr, *three1_addr = three1->shm.addr, *one_addr = one1->shm.addr;
    ok(is_mapped(two1_addr) && is_mapped(three1_addr));
    hy_cycle_unref(g1);
    ok(!is_mapped(two1_addr));
    ok(!is_mapped(three1_addr));
    ok(is_mapped(one2->shm.addr));
    is_int(*counter, 15);
    is_int(hy_zones_mapped(), 3);
    ok(hy_slab_check(one2->slab) == NULL);

    /* a reload that mapped its zones and then failed (e.g. a socket could not be bound) is released; the
     * next one must get the live generation's data, not the dropped one's */
    hy_cycle_t *g3 = load("a_zone zone=five:64k;\na_zone zone=one:64k;\n");
    is_int(hy_zones_map(g3), 0);
    ok(last_old_data == one2->data);
    hy_cycle_unref(g3);
    is_int(hy_zones_mapped(), 3); /* five is gone again */
    hy_cycle_t *g4 = load("a_zone zone=one:64k;\n");
    is_int(hy_zones_map(g4), 0);
    ok(last_old_data == one2->data);
    ok(zone(g4, "one")->shm.addr == one_addr);

    /* an init that fails stops the generation; its fresh mappings go with it */
    init_fail = 1;
    hy_cycle_t *g5 = load("a_zone zone=six:64k;\n");
    is_int(hy_zones_map(g5), -1);
    init_fail = 0;
    is_int(hy_zones_mapped(), 4);
    hy_cycle_unref(g5);
    is_int(hy_zones_mapped(), 3);

    hy_cycle_unref(g2);
    ok(is_mapped(one_addr)); /* g4 still holds it */
    is_int(hy_zones_mapped(), 1);
    hy_cycle_unref(g4);
    ok(!is_mapped(one_addr));
    is_int(hy_zones_mapped(), 0);

    /* "-t": claims are checked, nothing is mapped (hy_cycle_load does not call hy_zones_map then) */
    hy_cycle_t *t = load("a_zone zone=one:64k;\n");
    ok(t != NULL && zone(t, "one")->slab == NULL);
    is_int(hy_zones_mapped(), 0);
    hy_cycle_unref(t);
}

int main(void)
{
    hy_conf_log_hook = on_conf_log;
    subtest("claims", test_claims);
    subtest("parsers", test_parsers);
    subtest("lifecycle", test_lifecycle);
    return done_testing();
}
