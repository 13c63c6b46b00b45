/* parser.c — walks statements from the lexer and dispatches them to the module directive tables, nginx's
 * ngx_conf_parse()/ngx_conf_handler() semantics: context check, then ";"/"{" check, then argument count, then
 * the setter. `include` is built in (any context, sorted globs). Also: -T dump, paths. Messages: message.c. */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "conf.h"
#include "../core/file.h"
#include "compat.h"
#include "suggest.h"
#include "cycle.h"
#include "lexer.h"

/* nginx has no include depth limit; we stop self-including configs before the stack or fds run out */
#define MAX_INCLUDE_DEPTH 32

enum parse_type {
    PARSE_FILE,  /* a file: "}" is unexpected, EOF ends it */
    PARSE_BLOCK, /* inside { }: "}" ends it, EOF is an error */
};

typedef struct dump_file {
    const char *name;
    const char *data;
    size_t len;
    struct dump_file *next;
} dump_file_t;

typedef struct dump {
    dump_file_t *head;
    dump_file_t **tail;
} dump_t;

static char *join_path(hy_pool_t *pool, const char *prefix, const char *name, size_t len)
{
    if ((len > 0 && name[0] == '/') || prefix == NULL || prefix[0] == '\0')
        return hy_pstrndup(pool, name, len);
    size_t plen = strlen(prefix);
    bool slash = prefix[plen - 1] != '/';
    char *p = hy_palloc(pool, plen + slash + len + 1);
    memcpy(p, prefix, plen);
    if (slash)
        p[plen] = '/';
    memcpy(p + plen + slash, name, len);
    p[plen + slash + len] = '\0';
    return p;
}

char *hy_cycle_path(hy_cycle_t *cycle, const char *name, size_t len)
{
    return join_path(cycle->pool, cycle->prefix, name, len);
}

char *hy_cycle_conf_path(hy_cycle_t *cycle, const char *name, size_t len)
{
    return join_path(cycle->pool, cycle->conf_prefix, name, len);
}

void hy_conf_dump_enable(hy_conf_t *cf)
{
    if (cf->_dump != NULL)
        return;
    dump_t *d = hy_pcalloc(cf->pool, sizeof(*d));
    d->tail = &d->head;
    cf->_dump = d;
}

/* nginx -T shows each file once, however often it is included */
static void dump_add(hy_conf_t *cf, const char *name, const char *data, size_t len)
{
    dump_t *d = cf->_dump;
    if (d == NULL)
        return;
    for (dump_file_t *f = d->head; f != NULL; f = f->next)
        if (strcmp(f->name, name) == 0)
            return;
    dump_file_t *f = hy_pcalloc(cf->pool, sizeof(*f));
    f->name = hy_pstrndup(cf->pool, name, strlen(name));
    f->data = hy_pstrndup(cf->pool, data, len);
    f->len = len;
    *d->tail = f;
    d->tail = &f->next;
}

void hy_conf_dump_write(hy_conf_t *cf, int fd)
{
    dump_t *d = cf->_dump;
    if (d == NULL)
        return;
    /* nginx -T: header line, the file's bytes as read, then one newline (whether or not it ended with one) */
    for (dump_file_t *f = d->head; f != NULL; f = f->next) {
        (void)hy_write_all(fd, "# configuration file ", 21); /* -T: a failed write loses the text */
        (void)hy_write_all(fd, f->name, strlen(f->name));
        (void)hy_write_all(fd, ":\n", 2);
        (void)hy_write_all(fd, f->data, f->len);
        (void)hy_write_all(fd, "\n", 1);
    }
}

static int parse_loop(hy_conf_t *cf, enum parse_type type, bool skip);

static hy_array_t *new_args(hy_conf_t *cf)
{
    return hy_array_create(cf->temp != NULL ? cf->temp : cf->pool, 8, sizeof(hy_str_t));
}

/* Parse buf as the file `name` (NULL: -g command-line parameters), then restore the includer's position. */
static int parse_source(hy_conf_t *cf, const char *name, const char *buf, size_t len)
{
    const char *saved_file = cf->file;
    unsigned saved_line = cf->line;
    void *saved_in = cf->_in;
    hy_lexer_t lx;

    if (cf->args == NULL)
        cf->args = new_args(cf);
    hy_lexer_init(&lx, buf, len, name == NULL);
    if (name != NULL) {
        dump_add(cf, name, buf, len);
        cf->file = hy_pstrndup(cf->pool, name, strlen(name));
    }
    cf->line = name != NULL ? 1 : 0;
    bool saved_cmdline = cf->in_cmdline;
    cf->_in = &lx;
    cf->in_cmdline = name == NULL;
    int rc = parse_loop(cf, PARSE_FILE, false);
    cf->_in = saved_in;
    cf->in_cmdline = saved_cmdline;
    cf->file = saved_file;
    cf->line = saved_line;
    return rc;
}

/* Read the file as nginx does: st_size bytes from fstat (so devices and /proc files read as empty, and a
 * directory fails with EISDIR). Returns 0 or an errno. The buffer is malloc'd; the caller frees it. */
static int read_fd(int fd, char **out, size_t *out_len)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return errno;
    if (S_ISDIR(st.st_mode))
        return EISDIR;
    size_t size = st.st_size > 0 ? (size_t)st.st_size : 0;
    char *buf = hy_alloc(size + 1);
    size_t len = 0;
    while (len < size) {
        ssize_t n = read(fd, buf + len, size - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int err = errno;
            free(buf);
            return err;
        }
        if (n == 0) /* shrank while reading */
            break;
        len += (size_t)n;
    }
    *out = buf;
    *out_len = len;
    return 0;
}

static int parse_path(hy_conf_t *cf, const char *path)
{
    if (cf->_include_depth > MAX_INCLUDE_DEPTH)
        return hy_conf_error(cf, "include nesting is too deep (more than %d levels) at \"%s\"", MAX_INCLUDE_DEPTH,
                             path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        return hy_conf_error(cf, "open() \"%s\" failed (%d: %s)", path, err, strerror(err));
    }
    char *buf = NULL;
    size_t len = 0;
    int err = read_fd(fd, &buf, &len);
    close(fd);
    if (err != 0)
        return hy_conf_error(cf, "pread() \"%s\" failed (%d: %s)", path, err, strerror(err));
    int rc = parse_source(cf, path, buf, len);
    free(buf);
    return rc;
}

static int include(hy_conf_t *cf, hy_str_t arg)
{
    char *path =
        cf->cycle != NULL ? hy_cycle_conf_path(cf->cycle, arg.ptr, arg.len) : hy_pstrndup(cf->pool, arg.ptr, arg.len);
    int rc;

    cf->_include_depth++;
    if (strpbrk(path, "*?[") == NULL) {
        rc = parse_path(cf, path);
    } else {
        glob_t g;
        int grc = glob(path, 0, NULL, &g); /* flags 0: results sorted, as nginx relies on */
        if (grc == GLOB_NOMATCH) {
            rc = 0;
        } else if (grc != 0) {
            int err = errno;
            rc = hy_conf_error(cf, "glob() \"%s\" failed (%d: %s)", path, err, strerror(err));
        } else {
            rc = 0;
            for (size_t i = 0; i < g.gl_pathc && rc == 0; i++)
                rc = parse_path(cf, g.gl_pathv[i]);
        }
        globfree(&g);
    }
    cf->_include_depth--;
    return rc;
}

static bool args_ok(uint32_t spec, size_t nargs)
{
    if (spec & HY_ARGS_ANY)
        return true;
    if (spec & HY_ARGS_FLAG)
        return nargs == 1;
    if (spec & HY_ARGS_1MORE)
        return nargs >= 1;
    if (spec & HY_ARGS_2MORE)
        return nargs >= 2;
    uint32_t counts = spec & 0xffu;
    if (counts == 0) /* a bare HY_ARGS_BLOCK means a block without arguments ("events {") */
        counts = HY_ARGS_0;
    return nargs <= 7 && (counts & (1u << nargs)) != 0;
}

static void *conf_for(hy_conf_t *cf, const hy_directive_t *d, const hy_module_t *mod)
{
    void **confs = NULL;
    switch (d->conf) {
    case HY_CONF_CORE:
        confs = cf->cycle != NULL ? cf->cycle->core_conf : NULL;
        break;
    case HY_CONF_HTTP_MAIN:
        confs = cf->main_conf;
        break;
    case HY_CONF_SRV:
        confs = cf->srv_conf;
        break;
    case HY_CONF_LOC:
        confs = cf->loc_conf;
        break;
    default:
        break;
    }
    return confs != NULL && mod != NULL ? confs[mod->index] : NULL;
}

/* The known directive (module tables, then nginx's others) nearest to an unknown name, or NULL. */
static const char *nearest_directive(hy_str_t name)
{
    hy_suggest_t near = {NULL, 0};
    for (int i = 0; hy_modules[i]; i++)
        for (const hy_directive_t *d = hy_modules[i]->directives; d && d->name; d++)
            hy_suggest_near(&near, name.ptr, name.len, d->name);
    for (const hy_compat_t *c = hy_compat_directives; c->name; c++)
        hy_suggest_near(&near, name.ptr, name.len, c->name);
    return near.best;
}

void hy_conf_unsupported(hy_conf_t *cf)
{
    cf->_unsupported++;
}

/* The entry named `name` whose contexts include ctx (a name two modules define, such as "server" in http{} and in
 * upstream{}), or NULL. */
static const hy_directive_t *find_in_ctx(const hy_str_t name, uint32_t ctx, hy_module_t **mod)
{
    for (int i = 0; hy_modules[i]; i++)
        for (const hy_directive_t *d = hy_modules[i]->directives; d && d->name; d++)
            if ((d->ctx & ctx) && strlen(d->name) == name.len && memcmp(d->name, name.ptr, name.len) == 0) {
                *mod = hy_modules[i];
                return d;
            }
    return NULL;
}

/* One statement (cf->args, ended by ";" or "{") outside raw blocks. */
static int dispatch(hy_conf_t *cf, int last)
{
    size_t n;
    hy_str_t *w = hy_conf_args(cf, &n);
    const char *name = w[0].ptr;

    if (hy_str_eq(w[0], "include")) {
        if (last != HY_LEX_OK)
            return hy_conf_error(cf, "directive \"include\" is not terminated by \";\"");
        if (n != 2)
            return hy_conf_error(cf, "invalid number of arguments in \"include\" directive");
        return include(cf, w[1]);
    }

    hy_module_t *mod = NULL;
    const hy_directive_t *d = hy_modules_find(w[0].ptr, w[0].len, &mod);
    if (d == NULL) {
        const hy_compat_t *c = hy_compat_find(w[0].ptr, w[0].len);
        if (c == NULL) {
            const char *near = nearest_directive(w[0]);
            if (near != NULL)
                return hy_conf_error(cf, "unknown directive \"%s\" (did you mean \"%s\"?)", name, near);
            return hy_conf_error(cf, "unknown directive \"%s\"", name);
        }
        if (c->kind == HY_COMPAT_WARN) {
            hy_conf_warn(cf, "\"%s\" directive is not supported by hayate yet and is ignored", name);
            return last == HY_LEX_BLOCK_START ? parse_loop(cf, PARSE_BLOCK, true) : 0;
        }
        /* reported, and the parse goes on (skipping a block's body) so that one -t run lists every such
         * directive; the parse fails at its end (hy_conf_parse_file) */
        if (c->note != NULL)
            hy_conf_error(cf, "\"%s\" directive is not supported by hayate yet (%s)", name, c->note);
        else
            hy_conf_error(cf, "\"%s\" directive is not supported by hayate yet", name);
        hy_conf_unsupported(cf);
        return last == HY_LEX_BLOCK_START ? parse_loop(cf, PARSE_BLOCK, true) : 0;
    }

    if (!(d->ctx & cf->ctx)) { /* a name two modules define (server, keepalive_timeout in upstream{}) */
        const hy_directive_t *other = find_in_ctx(w[0], cf->ctx, &mod);
        if (other == NULL)
            return hy_conf_error(cf, "\"%s\" directive is not allowed here", name);
        d = other;
    }
    if (!(d->args & HY_ARGS_BLOCK) && last != HY_LEX_OK)
        return hy_conf_error(cf, "directive \"%s\" is not terminated by \";\"", name);
    if ((d->args & HY_ARGS_BLOCK) && last != HY_LEX_BLOCK_START)
        return hy_conf_error(cf, "directive \"%s\" has no opening \"{\"", name);
    if (!args_ok(d->args, n - 1))
        return hy_conf_error(cf, "invalid number of arguments in \"%s\" directive", name);

    if (d->set == NULL) /* a table entry without a setter: accept, and keep a block's body out of the way */
        return last == HY_LEX_BLOCK_START ? parse_loop(cf, PARSE_BLOCK, true) : 0;
    return d->set(cf, d, conf_for(cf, d, mod)) == 0 ? 0 : -1;
}

/* Statements until EOF (files) or the matching "}" (blocks). `skip` reads and discards a block's body,
 * nested blocks included (directives that are accepted and ignored). */
static int parse_loop(hy_conf_t *cf, enum parse_type type, bool skip)
{
    hy_lexer_t *lx = cf->_in;
    for (;;) {
        int rc = hy_lexer_next(cf, lx);
        if (rc == HY_LEX_ERROR)
            return -1;
        if (rc == HY_LEX_BLOCK_DONE) {
            if (type != PARSE_BLOCK)
                return hy_conf_error(cf, "unexpected \"}\"");
            return 0;
        }
        if (rc == HY_LEX_EOF) {
            if (type == PARSE_BLOCK)
                return hy_conf_error(cf, "unexpected end of file, expecting \"}\"");
            return 0;
        }
        if (rc == HY_LEX_BLOCK_START && lx->cmdline)
            return hy_conf_error(cf, "block directives are not supported in -g option");
        if (skip) {
            if (rc == HY_LEX_BLOCK_START && parse_loop(cf, PARSE_BLOCK, true) != 0)
                return -1;
            continue;
        }
        if (cf->raw != NULL) {
            /* types { } and friends: every statement goes to the block's handler, except "include", which
             * nginx's raw handlers (types, map, geo) all pass back to the parser */
            if (rc == HY_LEX_BLOCK_START)
                return hy_conf_error(cf, "unexpected \"{\"");
            hy_str_t *w = cf->args->elts;
            int r = hy_str_eq(w[0], "include") ? dispatch(cf, rc) : cf->raw(cf, cf->raw_data);
            if (r != 0)
                return -1;
            continue;
        }
        if (dispatch(cf, rc) != 0)
            return -1;
    }
}

int hy_conf_parse_block(hy_conf_t *cf)
{
    /* the block directive's own words stay readable in cf->args after its body is parsed */
    HY_ASSERT(cf->_in != NULL); /* only from a block directive's setter, while a file is being parsed */
    hy_array_t *outer = cf->args;
    cf->args = new_args(cf);
    int rc = parse_loop(cf, PARSE_BLOCK, false);
    cf->args = outer;
    return rc;
}

int hy_conf_parse_file(hy_conf_t *cf, const char *path)
{
    if (cf->ctx == 0)
        cf->ctx = HY_CTX_MAIN;
    int rc = parse_path(cf, path);
    return rc == 0 && cf->_unsupported > 0 ? -1 : rc;
}

int hy_conf_parse_string(hy_conf_t *cf, const char *name, const char *text, size_t len)
{
    if (cf->ctx == 0)
        cf->ctx = HY_CTX_MAIN;
    int rc = parse_source(cf, name, text, len);
    return rc == 0 && cf->_unsupported > 0 ? -1 : rc;
}
