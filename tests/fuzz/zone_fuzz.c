/* zone_fuzz.c — libFuzzer driver for the shared-zone argument parsers and claims (conf/zone.h). Each input
 * line is one directive argument: lines starting with "shared:" go through hy_zone_parse_shared, the others
 * through hy_zone_parse_named; a parsed zone is claimed for one of two tags (by the line's parity), and a line
 * starting with "@" claims its rest as a reference (size 0). hy_zones_check closes the run. Must never crash,
 * hang or leak; nothing is mapped. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "conf/conf.h"
#include "conf/cycle.h"
#include "conf/zone.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char tag_a[1], tag_b[1];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool initialized;
    if (!initialized) {
        /* silence the messages (stderr) without closing fd 2, where libFuzzer reports (as conf_fuzz.c) */
        FILE *null = fopen("/dev/null", "w");
        if (null != NULL)
            stderr = null;
        initialized = true;
    }
    hy_pool_t *pool = hy_pool_create(4096);
    hy_cycle_t cycle = {.pool = pool, .prefix = "/nonexistent/", .conf_prefix = "/nonexistent/", .refs = 1};
    hy_conf_t cf = {.cycle = &cycle, .pool = pool, .temp = pool, .file = "fuzz.conf", .line = 1};
    const char *p = (const char *)data, *end = p + size;
    int rc = 0;
    for (unsigned line = 0; p < end && rc == 0; line++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        /* arguments are NUL-terminated pool strings in the parser; keep that */
        hy_str_t arg = {hy_pstrndup(pool, p, len), len};
        hy_str_t name;
        size_t zsize = 0;
        const void *tag = line % 2 ? tag_a : tag_b;
        if (len > 0 && arg.ptr[0] == '@')
            rc = hy_zone_claim(&cf, (hy_str_t){arg.ptr + 1, len - 1}, 0, tag) ? 0 : -1;
        else if (len >= 7 && memcmp(arg.ptr, "shared:", 7) == 0)
            rc = hy_zone_parse_shared(&cf, arg, &name, &zsize) == 0 && hy_zone_claim(&cf, name, zsize, tag) ? 0 : -1;
        else
            rc = hy_zone_parse_named(&cf, arg, &name, &zsize) == 0 && hy_zone_claim(&cf, name, zsize, tag) ? 0 : -1;
        p += len + (nl != NULL);
    }
    if (rc == 0)
        (void)hy_zones_check(&cycle);
    hy_pool_destroy(pool);
    return 0;
}
