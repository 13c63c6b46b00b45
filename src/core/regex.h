/* regex.h — the one regular-expression layer (PCRE2): compile once with nginx's error wording, JIT when the
 * library has it, named captures listed, and matching through one per-process match block whose offsets are
 * copied into a capture record the caller owns (a request keeps one in its arena), so no match call mallocs.
 *
 * nginx's rule for captures (checked against nginx 1.22): every successful match replaces the record, also the
 * match of a regex without groups (which leaves $1..$9 empty); a failed match leaves it as it was (the rewrite
 * module then empties it itself, as nginx's script code does). */
#ifndef HY_CORE_REGEX_H
#define HY_CORE_REGEX_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdbool.h>
#include <stdint.h>
#include "mem.h"
#include "str.h"

/** One named group: "(?<name>...)" is group `group`. */
typedef struct hy_regex_name {
    hy_str_t name; /* NUL-terminated, points into the compiled pattern's name table */
    uint32_t group;
} hy_regex_name_t;

typedef struct hy_regex {
    pcre2_code *code;   /* freed when the pool given to hy_regex_compile is cleared */
    hy_str_t pattern;   /* the source (pool copy, NUL-terminated) */
    uint32_t ncaptures; /* capturing groups, $0 not counted */
    uint32_t nnames;
    hy_regex_name_t *names;
    void *data; /* the owner's per-regex data (http: variable slots of the named captures) */
} hy_regex_t;

/** The captures of the last match that set them. Offsets are into `subject`, which the caller keeps alive
 * as long as the record is read (a request: its arena). */
typedef struct hy_regex_caps {
    hy_pool_t *pool;      /* where `ov` is (re)allocated: the request's arena */
    const hy_regex_t *re; /* the regex whose match this is; NULL until one matched */
    const char *subject;
    size_t *ov;      /* 2 * n offsets; PCRE2_UNSET for a group that did not take part */
    uint32_t n;      /* pairs set, group 0 included (0: none) */
    uint32_t size;   /* pairs allocated */
    uint32_t nmatch; /* bumped on every update, so callers can tell "a new match happened" */
} hy_regex_caps_t;

#define HY_REGEX_ERR_MAX 512

/** Regex executions in this process since it started (a plain counter, for tests and stats). */
extern uint64_t hy_regex_exec_count;
/** Use PCRE2's JIT when compiling (default true: measured 3-4.5x cheaper matches, see ARCHITECTURE.md). */
extern bool hy_regex_jit;

/** Compile `pattern` (not necessarily NUL-terminated), case-insensitive when `caseless`. The regex and its
 * pattern copy live in `pool` and the PCRE2 code is freed when the pool is cleared. On error returns NULL and
 * writes nginx's message into err[HY_REGEX_ERR_MAX]: `pcre2_compile() failed: <PCRE2 message> in "<pattern>"`
 * followed by ` at "<rest>"` unless the error is at the end of the pattern. */
hy_regex_t *hy_regex_compile(hy_pool_t *pool, hy_str_t pattern, bool caseless, char *err);
/** The named groups of `re` (*n of them; NULL when none). Owned by `re`. */
const hy_regex_name_t *hy_regex_names(const hy_regex_t *re, uint32_t *n);
/** Search `subject` for `re` (unanchored unless the pattern anchors). Returns 1 on a match, 0 on
 * none, or a negative PCRE2 error code (e.g. a match limit), which callers treat as no match. On a match
 * `caps` (may be NULL) takes this match's offsets (allocated from caps->pool when it needs more room); on no
 * match it is left alone. Counts into hy_regex_exec_count. Allocates nothing per call except to grow caps. */
int hy_regex_exec(const hy_regex_t *re, hy_str_t subject, hy_regex_caps_t *caps);
/** Capture group `i` of the record (empty when the group did not take part or does not exist). */
hy_str_t hy_regex_group(const hy_regex_caps_t *caps, uint32_t i);

#endif
