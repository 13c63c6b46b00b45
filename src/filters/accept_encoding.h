/* accept_encoding.h — Accept-Encoding (RFC 9110 §12.5.3) with q-values, for the compression filters:
 * which of the codings hayate can produce does the client accept, and which does it prefer. */
#ifndef HY_HTTP_ACCEPT_ENCODING_H
#define HY_HTTP_ACCEPT_ENCODING_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

/* The content codings hayate produces (index into hy_accept_encoding_t.q), plus identity. */
enum hy_coding { HY_CODING_GZIP = 0, HY_CODING_BR, HY_CODING_ZSTD, HY_CODING_IDENTITY, HY_CODING_N };

typedef struct hy_accept_encoding {
    int16_t q[HY_CODING_N]; /* explicit q in thousandths (0..1000), -1 when the coding is not listed */
    int16_t star;           /* q of "*", -1 when absent */
    bool present;           /* at least one Accept-Encoding field was parsed */
} hy_accept_encoding_t;

/** Start empty (no field seen: nothing but identity is acceptable). */
void hy_ae_init(hy_accept_encoding_t *ae);
/** Add one Accept-Encoding field value (call once per field; a coding listed twice keeps its highest q).
 * "x-gzip" counts as gzip; unknown codings are skipped; an element with a malformed q gets q=0. */
void hy_ae_parse(hy_accept_encoding_t *ae, const char *s, size_t len);
/** Effective q (0..1000) of a coding: its own, else that of "*", else 0 — identity is 1000 unless excluded
 * by "identity;q=0" or "*;q=0" without an identity element. */
int hy_ae_q(const hy_accept_encoding_t *ae, int coding);
/** The acceptable coding (q > 0) among the bit set `allowed` (1u << HY_CODING_*) with the highest q; ties go
 * to the earliest in prefs[] (the server's preference). -1 when none is acceptable. */
int hy_ae_choose(const hy_accept_encoding_t *ae, unsigned allowed, const int *prefs, size_t nprefs);
/** Parse a qvalue ("0", "0.5", "1.000"); returns thousandths or -1 when malformed. */
int hy_ae_parse_qvalue(const char *s, size_t len);

#endif
