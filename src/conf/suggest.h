/* suggest.h — what an operator needs when a name is not accepted: the nginx variables hayate does not have yet
 * (so `$gzip_ratio` is not reported like a typo), and the "did you mean" search for near misses. */
#ifndef HY_CONF_SUGGEST_H
#define HY_CONF_SUGGEST_H

#include <stdbool.h>
#include <stddef.h>

/** True when (name, len) is a variable of nginx 1.22 (full name, or a prefix family such as "sent_trailer_")
 * that hayate does not implement yet. Only meaningful for names hayate itself does not know. */
bool hy_suggest_variable(const char *name, size_t len);
/** The nginx variables hayate lacks, NULL-terminated (for "did you mean"). */
extern const char *const hy_suggest_variables[];

/** "Did you mean" search: offer each candidate name; the nearest one within a small edit distance (1 for
 * names of up to 4 characters, else 2; never an exact match) is kept in best. Start with {NULL, 0}. */
typedef struct hy_suggest {
    const char *best; /* borrowed: the candidate given */
    int dist;
} hy_suggest_t;
void hy_suggest_near(hy_suggest_t *near, const char *name, size_t len, const char *candidate);

#endif
