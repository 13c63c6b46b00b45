/* vars_fuzz.c — libFuzzer driver: the complex-value compiler (hy_vars_compile) against a small registry: a real
 * config (every module, one map) parsed with -t semantics, then the input compiled as a directive's text after
 * the http block. A compiled value's literal parts are pieces of the text, its variables valid indexes and its
 * captures $1..$9. The config is parsed again every 1,000 inputs, so that names the inputs register ($http_x,
 * $arg_y ...) cannot grow the registry without bound. */
#include <string.h>

#include "fuzz.h"
#include "conf/conf.h"
#include "conf/cycle.h"
#include "core/clock.h"
#include "http/vars.h"

static const char config[] = "events { }\n"
                             "http {\n"
                             "  map $arg_k $m { default d; ~^a(.)$ x$1; }\n"
                             "  access_log off;\n"
                             "  server { listen 127.0.0.1:1; server_name fuzz.test; }\n"
                             "}\n";

static hy_cycle_t *cycle;
static hy_conf_t cf;
static int runs;

static void setup(void)
{
    if (cycle != NULL)
        hy_pool_destroy(cycle->pool);
    hy_pool_t *pool = hy_pool_create(16384);
    cycle = hy_pcalloc(pool, sizeof(*cycle));
    cycle->pool = pool;
    cycle->refs = 1;
    cycle->prefix = cycle->conf_prefix = "/nonexistent/";
    cycle->conf_file = "(fuzz)";
    cycle->test_only = true;
    int nmod = hy_modules_init();
    cycle->core_conf = hy_pcalloc(pool, sizeof(void *) * (size_t)nmod);
    for (int i = 0; i < nmod; i++)
        if (hy_modules[i]->create_core_conf)
            cycle->core_conf[i] = hy_modules[i]->create_core_conf(cycle);
    memset(&cf, 0, sizeof(cf));
    cf.cycle = cycle;
    cf.pool = pool;
    cf.ctx = HY_CTX_MAIN;
    CHECK(hy_conf_parse_string(&cf, "fuzz.conf", config, strlen(config)) == 0);
    cf.main_conf = cycle->http_main_conf;
    cf.ctx = HY_CTX_HTTP;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (cycle == NULL) {
        FILE *null = fopen("/dev/null", "w"); /* config errors are expected; keep fd 2 for the sanitizers */
        if (null != NULL)
            stderr = null;
        hy_clock_update();
    }
    if (cycle == NULL || ++runs % 1000 == 0)
        setup();
    char *text = malloc(size ? size : 1);
    memcpy(text, data, size);
    hy_complex_t cv;
    int rc = hy_vars_compile(&cf, (hy_str_t){text, size}, &cv);
    CHECK(rc == 0 || rc == -1);
    if (rc == 0) {
        CHECK(cv.value.len == size && memcmp(cv.value.ptr, data, size) == 0);
        CHECK((cv.nparts == 0) == (memchr(data, '$', size) == NULL));
        size_t lit = 0;
        for (size_t i = 0; i < cv.nparts; i++) {
            const hy_cv_part_t *p = &cv.parts[i];
            if (p->kind == HY_CV_LITERAL) {
                CHECK(p->lit.len > 0 && p->lit.ptr >= cv.value.ptr &&
                      p->lit.ptr + p->lit.len <= cv.value.ptr + cv.value.len);
                CHECK(memchr(p->lit.ptr, '$', p->lit.len) == NULL);
                lit += p->lit.len;
            } else if (p->kind == HY_CV_CAPTURE) {
                CHECK(p->index >= 1 && p->index <= 9);
            } else {
                CHECK(p->kind == HY_CV_VAR && p->index >= 0);
            }
        }
        CHECK(lit < size || cv.nparts == 0);
    }
    free(text);
    return 0;
}
