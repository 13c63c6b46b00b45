/* metrics.h — hayate's "metrics;" location handler (Prometheus text exposition format 0.0.4), the per-request
 * counting behind it (a LOG phase handler: requests per server and status class, the duration histogram,
 * response bytes), and the registry through which other modules add metric families of their own.
 *
 * Adding a family (e.g. limit_req rejections per zone):
 *   1. at init_worker time, reserve counters that survive reloads: ix = hy_stats_series("limit_req\tZONE", 1)
 *      (core/stats.h); on the hot path: hy_stats_add(&hy_stats_me->ext[ix], 1);
 *   2. once per process (init_worker), hy_metrics_register(&family) with a static hy_metrics_family_t whose
 *      collect callback emits its samples: hy_metrics_sample(out, "zone=\"ZONE\"", hy_stats_sum_ext(ix)), or
 *      iterates keys with hy_metrics_each_series("limit_req\t", ...). HELP and TYPE lines are written for it.
 * See docs/METRICS.md. */
#ifndef HY_HTTP_METRICS_H
#define HY_HTTP_METRICS_H

#include <stdint.h>
#include "../conf/conf.h"
#include "../core/str.h"

extern hy_module_t hy_http_metrics_module;

typedef struct hy_metrics_out hy_metrics_out_t;

/** Emit the samples of one family into out (hy_metrics_sample / hy_metrics_sample_f). */
typedef void (*hy_metrics_collect_fn)(hy_metrics_out_t *out, void *data);

typedef struct hy_metrics_family {
    const char *name; /* "hayate_<what>_<unit>[_total]" (Prometheus naming: base units, _total for counters) */
    const char *help; /* one line, no newline */
    const char *type; /* "counter" or "gauge" */
    hy_metrics_collect_fn collect;
    void *data;
    struct hy_metrics_family *_next; /* private: the registry */
    bool _linked;
} hy_metrics_family_t;

/** Add a family to this process's output, after the built-in ones, in registration order. The struct must live
 * as long as the process (static); registering it again is a no-op. */
void hy_metrics_register(hy_metrics_family_t *f);
/** One sample of the family being collected: `labels` is the text inside the braces (`zone="a",x="b"`, values
 * escaped with hy_metrics_escape) or NULL for none. */
void hy_metrics_sample(hy_metrics_out_t *out, const char *labels, uint64_t value);
/** A sample named after the family plus `suffix` ("_bucket", "_sum", "_count" of a histogram; "" for none), its
 * value already formatted (e.g. "0.250"). */
void hy_metrics_sample_text(hy_metrics_out_t *out, const char *suffix, const char *labels, const char *value);
/** Escape a label value (backslash, double quote, newline) into dst (cap bytes, NUL-terminated, truncated). */
void hy_metrics_escape(char *dst, size_t cap, const char *src, size_t len);
/** Call fn for every series registered (hy_stats_series) with a key that starts with `prefix`: the rest of the key
 * and the index of its first counter. */
void hy_metrics_each_series(const char *prefix, void (*fn)(void *arg, const char *rest, uint32_t base), void *arg);
/** The whole exposition text (built-in families, then the registered ones), NUL-terminated, malloc'd: the caller
 * frees it. *len: its length. */
char *hy_metrics_render(size_t *len);

#endif
