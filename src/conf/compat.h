/* compat.h — nginx directives hayate does not implement (yet): tuning knobs accepted with a [warn], and
 * features rejected with a clear "not supported yet" error. docs/directives.md lists the same names; a unit
 * test keeps the two and the module tables in step. */
#ifndef HY_CONF_COMPAT_H
#define HY_CONF_COMPAT_H

#include <stddef.h>

enum hy_compat_kind {
    HY_COMPAT_WARN = 1,   /* pure tuning knob: accepted, ignored, one [warn] line */
    HY_COMPAT_NOT_YET = 2 /* a feature hayate lacks: [emerg] ... is not supported by hayate yet */
};

typedef struct hy_compat {
    const char *name;
    int kind;         /* enum hy_compat_kind */
    const char *note; /* short reason or the issue that will implement it; may be NULL */
} hy_compat_t;

/** The table, terminated by {NULL}. */
extern const hy_compat_t hy_compat_directives[];
/** Look a directive name up; NULL when nginx has no such directive we know of. */
const hy_compat_t *hy_compat_find(const char *name, size_t len);
#endif
