/* h2_prio.h — RFC 9218's Priority field value (the `priority` request header and the PRIORITY_UPDATE frame's
 * payload): an RFC 8941 Structured Field Dictionary whose members u (urgency, Integer 0..7, default 3) and i
 * (incremental, Boolean, default false) are read. Pure functions, no allocation. */
#ifndef HY_PROTO_H2_PRIO_H
#define HY_PROTO_H2_PRIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HY_H2_URGENCY_DEFAULT 3
#define HY_H2_URGENCY_LEVELS 8

typedef struct hy_h2_prio {
    uint8_t urgency; /* 0 (most urgent) .. 7 */
    bool incremental;
} hy_h2_prio_t;

/** Parse a Priority field value. On success *p holds the value's u and i, each parameter absent, out of range or
 * of another type than RFC 9218 says taking its default (RFC 9218 §4: such parameters are ignored); unknown keys
 * and their parameters are skipped; when a key repeats the last member counts (RFC 8941 §3.2). A value that is
 * not a valid Dictionary is ignored as a whole: false, *p untouched. An empty value is valid (the defaults). */
bool hy_h2_prio_parse(const char *s, size_t len, hy_h2_prio_t *p);

#endif
