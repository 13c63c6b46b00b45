/* directives_doc_test.c — keeps docs/directives.md, the module directive tables (hy_modules[]) and the
 * compatibility table (hy_compat_directives[]) in step:
 *   - every directive of every module table is documented as `supported` or `accepted`;
 *   - every compat entry is documented as `warn` (HY_COMPAT_WARN) or `not yet` (HY_COMPAT_NOT_YET);
 *   - every documented row is in one of the two tables, and no name is documented twice;
 *   - the compat table is sorted (hy_compat_find is a binary search) and disjoint from the module tables.
 * The doc is read from $HY_SRCDIR/docs/directives.md, else docs/directives.md (tests run from the repo root). */
#include <ctype.h>
#include <stdlib.h>
#include "../harness.h"
#include "conf/conf.h"
#include "conf/compat.h"

enum doc_status { DOC_SUPPORTED = 1, DOC_ACCEPTED, DOC_WARN, DOC_NOT_YET };

typedef struct doc_row {
    char name[64];
    int status; /* enum doc_status */
    unsigned line;
    int seen; /* matched by a table entry */
} doc_row_t;

static doc_row_t *rows;
static size_t nrows;
static char doc_path[4096];

/* Trim spaces and one pair of surrounding backticks; returns the start, sets *len. */
static const char *cell_trim(const char *p, size_t *len)
{
    size_t n = *len;
    while (n > 0 && isspace((unsigned char)p[0])) {
        p++;
        n--;
    }
    while (n > 0 && isspace((unsigned char)p[n - 1]))
        n--;
    if (n >= 2 && p[0] == '`' && p[n - 1] == '`') {
        p++;
        n -= 2;
    }
    *len = n;
    return p;
}

static int status_parse(const char *p, size_t n)
{
    static const struct {
        const char *s;
        int v;
    } tab[] = {{"supported", DOC_SUPPORTED}, {"accepted", DOC_ACCEPTED}, {"warn", DOC_WARN}, {"not yet", DOC_NOT_YET}};
    for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
        if (strlen(tab[i].s) == n && memcmp(tab[i].s, p, n) == 0)
            return tab[i].v;
    }
    return 0;
}

static const char *status_name(int st)
{
    switch (st) {
    case DOC_SUPPORTED:
        return "supported";
    case DOC_ACCEPTED:
        return "accepted";
    case DOC_WARN:
        return "warn";
    case DOC_NOT_YET:
        return "not yet";
    default:
        return "(invalid)";
    }
}

static int is_directive_name(const char *p, size_t n)
{
    if (n == 0 || n >= sizeof(rows[0].name) || !islower((unsigned char)p[0]))
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (!(islower((unsigned char)p[i]) || isdigit((unsigned char)p[i]) || p[i] == '_'))
            return 0;
    }
    return 1;
}

/* Parses every 4-cell table row "| name | context | status | notes |" whose first cell is a directive name
 * (the header row "| name | ..." is skipped). Returns the number of malformed directive rows. */
static int doc_load(void)
{
    const char *dir = getenv("HY_SRCDIR");
    if (dir != NULL && dir[0] != '\0')
        snprintf(doc_path, sizeof(doc_path), "%s/docs/directives.md", dir);
    else
        snprintf(doc_path, sizeof(doc_path), "docs/directives.md");
    FILE *f = fopen(doc_path, "r");
    if (f == NULL)
        return -1;
    size_t cap = 1024;
    rows = calloc(cap, sizeof(*rows));
    int bad = 0;
    char line[2048];
    unsigned lineno = 0;
    while (rows != NULL && fgets(line, sizeof(line), f) != NULL) {
        lineno++;
        if (line[0] != '|' || strncmp(line, "|---", 4) == 0 || strncmp(line, "| ---", 5) == 0)
            continue;
        /* split on '|' */
        const char *cell[8];
        size_t clen[8];
        size_t nc = 0;
        const char *p = line + 1;
        for (;;) {
            const char *bar = strchr(p, '|');
            if (bar == NULL)
                break;
            if (nc < 8) {
                cell[nc] = p;
                clen[nc] = (size_t)(bar - p);
            }
            nc++;
            p = bar + 1;
        }
        if (nc != 4)
            continue; /* not a directive table (e.g. the statuses table has 2 cells) */
        size_t nlen = clen[0];
        const char *name = cell_trim(cell[0], &nlen);
        if (nlen == 4 && memcmp(name, "name", 4) == 0)
            continue; /* header row */
        size_t slen = clen[2];
        const char *st = cell_trim(cell[2], &slen);
        int status = status_parse(st, slen);
        if (!is_directive_name(name, nlen) || status == 0) {
            printf("# %s:%u: malformed row: %s", doc_path, lineno, line);
            bad++;
            continue;
        }
        if (nrows == cap) {
            cap *= 2;
            doc_row_t *n = realloc(rows, cap * sizeof(*rows));
            if (n == NULL)
                break;
            rows = n;
        }
        memcpy(rows[nrows].name, name, nlen);
        rows[nrows].name[nlen] = '\0';
        rows[nrows].status = status;
        rows[nrows].line = lineno;
        rows[nrows].seen = 0;
        nrows++;
    }
    fclose(f);
    return bad;
}

static doc_row_t *doc_find(const char *name)
{
    for (size_t i = 0; i < nrows; i++) {
        if (strcmp(rows[i].name, name) == 0)
            return &rows[i];
    }
    return NULL;
}

static size_t compat_len(void)
{
    size_t n = 0;
    while (hy_compat_directives[n].name != NULL)
        n++;
    return n;
}

/* --- the doc itself */

static int load_result;

static void test_doc_parses(void)
{
    ok(load_result >= 0);
    if (load_result < 0)
        printf("# cannot open %s (set HY_SRCDIR to the source tree)\n", doc_path);
    is_int(load_result, 0); /* malformed rows */
    ok(nrows > 400);        /* nginx 1.22 has ~550 directives: a parse that finds few rows is broken */
}

static void test_doc_no_duplicates(void)
{
    int dups = 0;
    for (size_t i = 0; i < nrows; i++) {
        for (size_t j = i + 1; j < nrows; j++) {
            if (strcmp(rows[i].name, rows[j].name) == 0) {
                printf("# \"%s\" documented twice: lines %u and %u\n", rows[i].name, rows[i].line, rows[j].line);
                dups++;
            }
        }
    }
    is_int(dups, 0);
}

/* --- the compat table */

static void test_compat_sorted_and_valid(void)
{
    size_t n = compat_len();
    ok(n > 300);
    for (size_t i = 0; i < n; i++) {
        const hy_compat_t *c = &hy_compat_directives[i];
        if (!ok(c->kind == HY_COMPAT_WARN || c->kind == HY_COMPAT_NOT_YET))
            printf("# bad kind for \"%s\"\n", c->name);
        ok(is_directive_name(c->name, strlen(c->name)));
        if (i > 0 && !ok(strcmp(hy_compat_directives[i - 1].name, c->name) < 0))
            printf("# compat table not sorted: \"%s\" before \"%s\"\n", hy_compat_directives[i - 1].name, c->name);
    }
}

static void test_compat_find(void)
{
    size_t n = compat_len();
    for (size_t i = 0; i < n; i++) {
        const hy_compat_t *c = &hy_compat_directives[i];
        if (!ok(hy_compat_find(c->name, strlen(c->name)) == c))
            printf("# hy_compat_find misses \"%s\"\n", c->name);
    }
    ok(hy_compat_find("", 0) == NULL);
    ok(hy_compat_find("no_such_directive", strlen("no_such_directive")) == NULL);
    ok(hy_compat_find("zzzz", 4) == NULL);
    ok(hy_compat_find("a", 1) == NULL);
    /* the length is honoured: a prefix of a longer buffer, and never a prefix match */
    const hy_compat_t *aio = hy_compat_find("aio_write", 3);
    ok(aio != NULL && strcmp(aio->name, "aio") == 0);
    ok(hy_compat_find("ai", 2) == NULL);
    ok(hy_compat_find("aio_", 4) == NULL);
    ok(hy_compat_find("aio\0x", 5) == NULL);
    ok(hy_compat_find("AIO", 3) == NULL); /* nginx directive names are case-sensitive */
    /* a few entries whose kind the docs promise */
    const hy_compat_t *c = hy_compat_find("proxy_pass", strlen("proxy_pass"));
    ok(c != NULL && c->kind == HY_COMPAT_NOT_YET && c->note != NULL);
    c = hy_compat_find("timer_resolution", strlen("timer_resolution"));
    ok(c != NULL && c->kind == HY_COMPAT_WARN);
    c = hy_compat_find("ssl_engine", strlen("ssl_engine"));
    ok(c != NULL && c->kind == HY_COMPAT_NOT_YET);
}

static void test_compat_documented(void)
{
    size_t n = compat_len();
    for (size_t i = 0; i < n; i++) {
        const hy_compat_t *c = &hy_compat_directives[i];
        doc_row_t *r = doc_find(c->name);
        if (!ok(r != NULL)) {
            printf("# compat entry \"%s\" missing from %s\n", c->name, doc_path);
            continue;
        }
        r->seen = 1;
        int want = c->kind == HY_COMPAT_WARN ? DOC_WARN : DOC_NOT_YET;
        if (!ok(r->status == want))
            printf("# \"%s\" (%s:%u) is documented as \"%s\", compat says \"%s\"\n", c->name, doc_path, r->line,
                   status_name(r->status), status_name(want));
    }
}

/* --- the module tables */

/* Directives the parser handles itself rather than through a module table (conf/parser.c). */
static const char *const parser_builtins[] = {"include"};

static void check_implemented(const char *module, const char *name)
{
    doc_row_t *r = doc_find(name);
    if (!ok(r != NULL)) {
        printf("# module %s: directive \"%s\" missing from %s\n", module, name, doc_path);
    } else {
        r->seen = 1;
        if (!ok(r->status == DOC_SUPPORTED || r->status == DOC_ACCEPTED))
            printf("# module %s: \"%s\" (%s:%u) is documented as \"%s\", want supported or accepted\n", module,
                   name, doc_path, r->line, status_name(r->status));
    }
    if (!ok(hy_compat_find(name, strlen(name)) == NULL))
        printf("# module %s: \"%s\" is also in the compat table (delete it from src/conf/compat.c)\n", module, name);
}

static void test_modules_documented_and_disjoint(void)
{
    size_t total = 0;
    for (size_t i = 0; i < sizeof(parser_builtins) / sizeof(parser_builtins[0]); i++)
        check_implemented("(parser)", parser_builtins[i]);
    for (size_t m = 0; hy_modules[m] != NULL; m++) {
        const hy_directive_t *d = hy_modules[m]->directives;
        for (; d != NULL && d->name != NULL; d++) {
            total++;
            check_implemented(hy_modules[m]->name, d->name);
        }
    }
    ok(total > 0);
}

/* runs last: every row must have been claimed by a table */
static void test_every_row_backed(void)
{
    for (size_t i = 0; i < nrows; i++) {
        if (!ok(rows[i].seen))
            printf("# %s:%u: \"%s\" (%s) is in no module table and not in the compat table\n", doc_path,
                   rows[i].line, rows[i].name, status_name(rows[i].status));
    }
}

int main(void)
{
    load_result = doc_load();
    subtest("doc parses", test_doc_parses);
    subtest("doc has no duplicate rows", test_doc_no_duplicates);
    subtest("compat table sorted and valid", test_compat_sorted_and_valid);
    subtest("hy_compat_find", test_compat_find);
    subtest("compat entries documented with their status", test_compat_documented);
    subtest("module directives documented, not in compat", test_modules_documented_and_disjoint);
    subtest("every doc row is in a table", test_every_row_backed);
    free(rows);
    return done_testing();
}
