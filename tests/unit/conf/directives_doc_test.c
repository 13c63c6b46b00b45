/* directives_doc_test.c — keeps docs/directives.md, the module directive tables (hy_modules[]) and the
 * compatibility table (hy_compat_directives[]) in step:
 *   - every directive of every module table is documented as `supported` or `accepted`;
 *   - every compat entry is documented as `warn` (HY_COMPAT_WARN) or `not yet` (HY_COMPAT_NOT_YET);
 *   - every documented row is in one of the two tables, and no name is documented twice;
 *   - the compat table is sorted (hy_compat_find is a binary search) and disjoint from the module tables;
 *   - `supported` and `accepted` are not interchangeable: a supported directive that stores its value at an
 *     offset (LOC(x), SRV(x), ...) must have that field read somewhere in src/ outside its table entry, its
 *     conf constructor and its merge (a read, not a write); a supported one must not use a check-only slot;
 *     an accepted one must reject what nginx rejects (a bogus value makes the real loader, hy_cycle_load,
 *     fail). Both checks are shown to catch an overstated status by planted cases. Limits: a supported
 *     directive whose custom setter names no field (env, listen, ...) is not checked for reads; a field that
 *     is read only to be ignored would pass. Integration tests carry the rest (tests/integration/
 *     test_directive_effects.py).
 * The doc is read from $HY_SRCDIR/docs/directives.md, else docs/directives.md (tests run from the repo root). */
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include "../harness.h"
#include "conf/conf.h"
#include "conf/compat.h"
#include "process/process.h"

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
    ok(n > 50); /* a sanity bound (the table shrinks as directives are implemented) */
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
    const hy_compat_t *c = hy_compat_find("mp4", strlen("mp4"));
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

/* --- supported vs accepted */

static char *src_text; /* every src/ * / *.c file, concatenated */
static char tmpdir[64];

static void src_load(void)
{
    const char *dir = getenv("HY_SRCDIR");
    char root[4096];
    snprintf(root, sizeof(root), "%s/src", dir != NULL && dir[0] != '\0' ? dir : ".");
    size_t len = 0, cap = 1 << 20;
    src_text = malloc(cap);
    DIR *top = opendir(root);
    struct dirent *e, *f;
    while (src_text != NULL && top != NULL && (e = readdir(top)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char sub[4400];
        snprintf(sub, sizeof(sub), "%s/%s", root, e->d_name);
        DIR *d = opendir(sub);
        while (d != NULL && (f = readdir(d)) != NULL) {
            size_t n = strlen(f->d_name);
            if (n < 3 || strcmp(f->d_name + n - 2, ".c") != 0)
                continue;
            char path[4800];
            snprintf(path, sizeof(path), "%s/%s", sub, f->d_name);
            FILE *fp = fopen(path, "r");
            size_t got;
            char buf[65536];
            while (fp != NULL && (got = fread(buf, 1, sizeof(buf), fp)) > 0) {
                if (len + got + 2 > cap) {
                    cap *= 2;
                    src_text = realloc(src_text, cap);
                    HY_ASSERT(src_text != NULL);
                }
                memcpy(src_text + len, buf, got);
                len += got;
            }
            if (fp != NULL)
                fclose(fp);
            src_text[len++] = '\n';
        }
        if (d != NULL)
            closedir(d);
    }
    if (top != NULL)
        closedir(top);
    if (src_text != NULL)
        src_text[len] = '\0';
}

static bool ident_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* The field a directive's table entry stores into: the argument of the offset macro (LOC(x), SRV(x), CORE(x),
 * ..., or offsetof(type, x)) in the entry `.name = "name"` of `src`. Empty when the entry has none. */
static void entry_field(const char *src, const char *name, char *out, size_t outsz)
{
    char key[96];
    snprintf(key, sizeof(key), ".name = \"%s\"", name);
    out[0] = '\0';
    const char *p = strstr(src, key);
    if (p == NULL)
        return;
    const char *end = strchr(p, '}');
    for (const char *q = p + strlen(key); end != NULL && q < end; q++) {
        const char *open = NULL;
        if (isupper((unsigned char)q[0]) && !ident_char(q[-1])) {
            const char *r = q;
            while (isupper((unsigned char)*r) || *r == '_')
                r++;
            if (*r == '(')
                open = r + 1;
        } else if (strncmp(q, "offsetof(", 9) == 0) {
            const char *comma = memchr(q, ',', (size_t)(end - q));
            open = comma != NULL ? comma + 1 : NULL;
        }
        if (open == NULL)
            continue;
        while (*open == ' ')
            open++;
        size_t n = 0;
        while (ident_char(open[n]) && n + 1 < outsz)
            n++;
        if (open[n] == ')' && n > 0) {
            memcpy(out, open, n);
            out[n] = '\0';
            return;
        }
    }
}

/* The name of the function around `p`: the identifier before "(" on the last line before p that starts in
 * column 0 with a letter (C function definitions in this tree start there). Empty at file level. */
static void enclosing_function(const char *src, const char *p, char *out, size_t outsz)
{
    out[0] = '\0';
    for (const char *ls = p; ls > src; ls--) {
        if (ls[-1] != '\n' || !isalpha((unsigned char)ls[0]))
            continue;
        const char *paren = ls;
        while (*paren != '\0' && *paren != '\n' && *paren != '(' && *paren != '=' && *paren != ';')
            paren++;
        if (*paren != '(')
            return; /* a declaration, not a function */
        const char *b = paren;
        while (b > ls && ident_char(b[-1]))
            b--;
        size_t n = (size_t)(paren - b) < outsz - 1 ? (size_t)(paren - b) : outsz - 1;
        memcpy(out, b, n);
        out[n] = '\0';
        return;
    }
}

/* Whether `field` is read in `src`: an occurrence "->field" or ".field" that is not on a directive-table line,
 * not inside a constructor, merge, default-filling or setter function (create_*, merge_*, init_core*, set_*),
 * and not the target of an assignment. A heuristic over this tree's conventions, kept honest by the planted
 * cases below. */
static bool field_is_read(const char *src, const char *field)
{
    size_t fl = strlen(field);
    for (const char *p = src; (p = strstr(p, field)) != NULL; p += fl) {
        bool member = (p - src >= 2 && p[-2] == '-' && p[-1] == '>') || (p - src >= 1 && p[-1] == '.');
        if (!member || ident_char(p[fl]))
            continue;
        const char *ls = p;
        while (ls > src && ls[-1] != '\n')
            ls--;
        const char *le = strchr(p, '\n');
        size_t n = le != NULL ? (size_t)(le - ls) : strlen(ls);
        if (memmem(ls, n, ".name = ", 8) != NULL)
            continue;
        char fn[128];
        enclosing_function(src, p, fn, sizeof(fn));
        if (strncmp(fn, "create", 6) == 0 || strncmp(fn, "merge", 5) == 0 || strncmp(fn, "init_core", 9) == 0 ||
            strncmp(fn, "set_", 4) == 0)
            continue;
        const char *after = p + fl;
        while (*after == ' ')
            after++;
        if (after[0] == '=' && after[1] != '=')
            continue; /* a write */
        return true;
    }
    return false;
}

static bool is_check_slot(hy_conf_set_fn set)
{
    return set == hy_slot_check_flag || set == hy_slot_check_num || set == hy_slot_check_size ||
           set == hy_slot_check_msec || set == hy_slot_check_bitmask || set == hy_slot_check_bufs;
}

/* A supported directive's value must change behaviour: NULL when it plausibly does, else why not. */
static const char *supported_problem(const char *src, const hy_directive_t *d)
{
    if (is_check_slot(d->set))
        return "uses a check-only slot (its value is dropped)";
    char field[64];
    entry_field(src, d->name, field, sizeof(field));
    if (field[0] != '\0' && !field_is_read(src, field))
        return "its field is stored (and merged) but never read";
    return NULL;
}

/* Load "events {} http { server { location / { ... } } }" with `stmt` in the directive's context;
 * true when the real loader accepts it. */
static bool loads(const hy_directive_t *d, const char *stmt)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/doc.conf", tmpdir);
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return false;
    const char *m = "", *e = "", *h = "", *l = "";
    if (d == NULL)
        ;
    else if (d->ctx & HY_CTX_MAIN)
        m = stmt;
    else if (d->ctx & HY_CTX_EVENTS)
        e = stmt;
    else if (d->ctx & HY_CTX_HTTP)
        h = stmt;
    else
        l = stmt;
    fprintf(f, "error_log stderr;\n%s\nevents { %s }\nhttp { %s server { listen 127.0.0.1:1; location / { %s } } }\n",
            m, e, h, l);
    fclose(f);
    char prefix[80];
    snprintf(prefix, sizeof(prefix), "%s/", tmpdir);
    hy_opts_t opts = {.prefix = prefix, .conf_file = path, .quiet = true, .test = true};
    fflush(stderr);
    int saved = dup(2), devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 2);
    close(devnull);
    hy_cycle_t *c = hy_cycle_load(&opts);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    if (c != NULL)
        hy_cycle_unref(c);
    return c != NULL;
}

/* An accepted directive must reject what nginx rejects: a bogus value in every argument position. */
static const char *accepted_problem(const hy_directive_t *d)
{
    char stmt[160];
    bool two = (d->args & (HY_ARGS_2 | HY_ARGS_1MORE | HY_ARGS_2MORE)) != 0;
    snprintf(stmt, sizeof(stmt), "%s bogus%s;", d->name, two ? " bogus" : "");
    if (loads(d, stmt))
        return "accepts a bogus value (nginx rejects it)";
    return NULL;
}

static void check_status(const char *module, const hy_directive_t *d)
{
    doc_row_t *r = doc_find(d->name);
    if (r == NULL)
        return; /* reported by test_modules_documented_and_disjoint */
    const char *why = NULL;
    if (r->status == DOC_SUPPORTED)
        why = supported_problem(src_text, d);
    else if (r->status == DOC_ACCEPTED)
        why = accepted_problem(d);
    if (!ok(why == NULL))
        printf("# module %s: \"%s\" (%s:%u) is documented as \"%s\" but %s\n", module, d->name, doc_path, r->line,
               status_name(r->status), why);
}

static void test_status_matches_code(void)
{
    ok(src_text != NULL && strlen(src_text) > 100000);
    ok(loads(NULL, "")); /* the template itself loads: a rejection below is the directive's */
    for (size_t m = 0; hy_modules[m] != NULL; m++) {
        const hy_directive_t *d = hy_modules[m]->directives;
        for (; d != NULL && d->name != NULL; d++)
            check_status(hy_modules[m]->name, d);
    }
}

static int accept_anything(hy_conf_t *cf, const hy_directive_t *d, void *conf) { return 0; }

/* Planted cases: each check must catch an overstated status. */
static void test_planted_overstatements(void)
{
    /* a supported directive whose field is only constructed, merged and stored */
    const char *planted = "static void *create_loc(hy_conf_t *cf)\n{\n    l->planted_knob = HY_UNSET;\n}\n"
                          "static int merge_loc(hy_conf_t *cf, void *parent, void *child)\n{\n"
                          "    if (c->planted_knob == HY_UNSET)\n        c->planted_knob = p->planted_knob;\n}\n"
                          "static const hy_directive_t t[] = {\n"
                          "    {.name = \"planted_knob\", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_FLAG,\n"
                          "     .set = hy_slot_flag, LOC(planted_knob)},\n};\n"
                          "static int set_x(hy_conf_t *cf)\n{\n    if (lc->planted_knob != HY_UNSET)\n"
                          "        return -1;\n    lc->planted_knob = 3;\n}\n";
    hy_directive_t d = {.name = "planted_knob", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_FLAG, .set = hy_slot_flag};
    char field[64];
    entry_field(planted, "planted_knob", field, sizeof(field));
    is_str(field, "planted_knob");
    ok(supported_problem(planted, &d) != NULL);
    /* the same source with one read passes */
    char with_read[1024];
    snprintf(with_read, sizeof(with_read), "%sstatic void use(void)\n{\n    if (lc->planted_knob == 2)\n        go();\n}\n", planted);
    ok(supported_problem(with_read, &d) == NULL);
    char with_cmp[1024];
    snprintf(with_cmp, sizeof(with_cmp), "%sbool use(hy_req_t *r)\n{\n    return r->loc->planted_knob;\n}\n", planted);
    ok(supported_problem(with_cmp, &d) == NULL);
    /* a supported directive on a check-only slot */
    hy_directive_t chk = {.name = "pcre_jit", .ctx = HY_CTX_MAIN, .args = HY_ARGS_FLAG, .set = hy_slot_check_flag};
    ok(supported_problem(src_text, &chk) != NULL);
    /* the real tree: client_body_buffer_size-like planted field names are caught, real reads are not */
    hy_directive_t sendfile = {.name = "sendfile", .ctx = HY_CTX_HTTP_ANY, .args = HY_ARGS_FLAG, .set = hy_slot_flag};
    ok(supported_problem(src_text, &sendfile) == NULL);
    /* an accepted directive whose setter takes anything: swap pcre_jit's setter for one that accepts all */
    hy_module_t *owner = NULL;
    const hy_directive_t *real = hy_modules_find("pcre_jit", 8, &owner);
    ok(real != NULL && owner != NULL);
    if (real == NULL || owner == NULL)
        return;
    ok(accepted_problem(real) == NULL);
    const hy_directive_t *saved = owner->directives;
    size_t n = 0;
    while (saved[n].name != NULL)
        n++;
    hy_directive_t *copy = calloc(n + 1, sizeof(*copy));
    memcpy(copy, saved, n * sizeof(*copy));
    for (size_t i = 0; i < n; i++)
        if (strcmp(copy[i].name, "pcre_jit") == 0)
            copy[i].set = accept_anything;
    owner->directives = copy;
    ok(accepted_problem(real) != NULL);
    owner->directives = saved;
    free(copy);
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
    src_load();
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/hy_doc_test_XXXXXX");
    if (mkdtemp(tmpdir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    subtest("doc parses", test_doc_parses);
    subtest("doc has no duplicate rows", test_doc_no_duplicates);
    subtest("compat table sorted and valid", test_compat_sorted_and_valid);
    subtest("hy_compat_find", test_compat_find);
    subtest("compat entries documented with their status", test_compat_documented);
    subtest("module directives documented, not in compat", test_modules_documented_and_disjoint);
    subtest("every doc row is in a table", test_every_row_backed);
    subtest("supported is read, accepted rejects what nginx rejects", test_status_matches_code);
    subtest("planted overstatements are caught", test_planted_overstatements);
    char path[128];
    snprintf(path, sizeof(path), "%s/doc.conf", tmpdir);
    unlink(path);
    rmdir(tmpdir);
    free(rows);
    free(src_text);
    return done_testing();
}
