/* metrics_test.c — the exposition text and the extension point: a family registered by a "module" comes after
 * the built-in ones with HELP and TYPE, its samples summed over slots; label escaping; registering twice. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "../harness.h"
#include "core/stats.h"
#include "http/metrics.h"

static uint32_t zone_a, zone_b;

static void each_zone(void *arg, const char *rest, uint32_t base)
{
    char labels[128], esc[64];
    hy_metrics_escape(esc, sizeof(esc), rest, strlen(rest));
    snprintf(labels, sizeof(labels), "zone=\"%s\"", esc);
    hy_metrics_sample(arg, labels, hy_stats_sum_ext(base));
}

static void collect(hy_metrics_out_t *out, void *data)
{
    hy_metrics_each_series("test_zone\t", each_zone, out);
}

static hy_metrics_family_t fam = {
    .name = "hayate_test_rejected_total", .help = "Test rejections.", .type = "counter", .collect = collect};

static void test_escape(void)
{
    char b[32];
    hy_metrics_escape(b, sizeof(b), "a\"b\\c\nd", 7);
    is_str(b, "a\\\"b\\\\c\\nd");
    hy_metrics_escape(b, 4, "abcdef", 6); /* truncated, terminated */
    is_str(b, "a");
}

static void test_family(void)
{
    is_int(hy_stats_create(2), 0);
    zone_a = hy_stats_series("test_zone\tone", 1);
    zone_b = hy_stats_series("test_zone\tt\"wo", 1);
    ok(zone_a != HY_STATS_SINK && zone_b != HY_STATS_SINK);
    for (size_t ix = 0; ix < 2; ix++) {
        pid_t pid = fork();
        if (pid == 0) {
            hy_stats_attach(ix);
            hy_stats_add(&hy_stats_me->ext[zone_a], 5);
            hy_stats_add(&hy_stats_me->ext[zone_b], 1);
            hy_stats_add(&hy_stats_me->accepted, 3);
            _exit(0);
        }
        int st;
        waitpid(pid, &st, 0);
    }
    hy_metrics_register(&fam);
    hy_metrics_register(&fam); /* no-op */
    size_t len;
    char *t = hy_metrics_render(&len);
    is_int(strlen(t), len);
    const char *h = strstr(t, "# HELP hayate_test_rejected_total Test rejections.\n"
                              "# TYPE hayate_test_rejected_total counter\n"
                              "hayate_test_rejected_total{zone=\"one\"} 10\n"
                              "hayate_test_rejected_total{zone=\"t\\\"wo\"} 2\n");
    ok(h != NULL);
    ok(h && strstr(t, "# TYPE hayate_tls_handshake_failures_total counter") < h); /* after the built-in ones */
    ok(h && strstr(h + 1, "# HELP hayate_test_rejected_total") == NULL);          /* once */
    ok(strstr(t, "\nhayate_connections_accepted_total 6\n") != NULL);
    ok(strstr(t, "\nhayate_worker_processes 2\n") != NULL);
    ok(strstr(t, "hayate_http_request_duration_seconds_bucket{le=\"0.005\"} 0\n") != NULL);
    ok(strstr(t, "hayate_http_request_duration_seconds_bucket{le=\"+Inf\"} 0\n") != NULL);
    free(t);
}

int main(void)
{
    subtest("escape", test_escape);
    subtest("registered family", test_family);
    return done_testing();
}
