/* main.c — nginx's command line: -? -h -v -V -t -T -q -s signal -p prefix -e file -c file -g directives. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <openssl/opensslv.h>
#include <openssl/crypto.h>
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include "core/hayate.h"
#include "core/log.h"
#include "core/mem.h"
#include "core/paths.h"
#include "process/process.h"
#include "process/core_conf.h"
#include "process/title.h"
#include "conf/lexer.h"

#ifndef HY_CC
#define HY_CC "cc"
#endif

static void usage(void)
{
    fprintf(stderr,
            "Usage: hayate [-?hvVtTq] [-s signal] [-p prefix] [--doctor]\n"
            "             [-e filename] [-c filename] [-g directives]\n\n"
            "Options:\n"
            "  -?,-h         : this help\n"
            "  -v            : show version and exit\n"
            "  -V            : show version and configure options then exit\n"
            "  -t            : test configuration and exit\n"
            "  -T            : test configuration, dump it and exit\n"
            "  -q            : suppress non-error messages during configuration testing\n"
            "  -s signal     : send signal to a master process: stop, quit, reopen, reload\n"
            "  -p prefix     : set prefix path (default: the directory above the binary's)\n"
            "  -e filename   : set error log file (default: logs/error.log)\n"
            "  -c filename   : set configuration file (default: conf/hayate.conf, else the embedded default)\n"
            "  -g directives : set global directives out of configuration file\n"
            "  --doctor      : report what this machine limits for the configuration, with the fixes\n\n");
}

/* nginx's default HTTP modules (auto/options: the ones with a --without-http_*_module switch) that hayate
 * does not have. -V names each as nginx's configure would, so tools that read -V see what is missing. */
static const char *const without_modules[] = {
    "grpc",
};

static char *default_prefix(void);
static char *absolute(const char *base, const char *name, bool dir);

static void version(bool verbose, const char *prefix)
{
    fprintf(stderr, "hayate version: hayate/%s (nginx/%s compatible)\n", HY_VERSION, HY_NGINX_COMPAT_VERSION);
    if (!verbose)
        return;
    char pcre_ver[64] = "";
    pcre2_config(PCRE2_CONFIG_VERSION, pcre_ver);
    fprintf(stderr,
            "built by %s\n"
            "built with %s (running with %s)\n"
            "TLS SNI support enabled\n"
            "built with PCRE2 %s\n"
            "built with brotli and zstd compression (hayate's own, with the directives of the common modules)\n",
            HY_CC, OPENSSL_VERSION_TEXT, OpenSSL_version(OPENSSL_VERSION), pcre_ver);
    char *p = prefix ? absolute(NULL, prefix, true) : default_prefix();
    char *paths[] = {absolute(p, HY_PATH_CONF, false), absolute(p, HY_PATH_ERROR_LOG, false),
                     absolute(p, HY_PATH_HTTP_LOG, false), absolute(p, HY_PATH_PID, false)};
    fprintf(stderr, "configure arguments: --prefix=%s --conf-path=%s --error-log-path=%s --http-log-path=%s "
            "--pid-path=%s --with-http_ssl_module --with-http_gzip_static_module --with-http_secure_link_module "
            "--with-http_realip_module --with-http_stub_status_module --with-http_sub_module --with-http_gunzip_module "
            "--with-http_random_index_module --with-http_v2_module --with-http_auth_request_module --with-http_addition_module", p, paths[0],
            paths[1], paths[2], paths[3]);
    for (size_t i = 0; i < HY_ARRAY_SIZE(paths); i++)
        free(paths[i]);
    free(p);
    for (size_t i = 0; i < HY_ARRAY_SIZE(without_modules); i++)
        fprintf(stderr, " --without-http_%s_module", without_modules[i]);
    fprintf(stderr, "\n");
}

/* The prefix: -p, else the compiled-in one (make install), else the directory above the one holding the
 * binary when it has conf/mime.types (build/hayate → the checkout), else /usr/local/hayate/ (nginx's style). */
static char *default_prefix(void)
{
#ifdef HY_PATH_PREFIX
    return hy_strndup(HY_PATH_PREFIX, strlen(HY_PATH_PREFIX));
#else
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0)
        return hy_strndup("/usr/local/hayate/", 18);
    exe[n] = '\0';
    for (int i = 0; i < 2; i++) {
        char *s = strrchr(exe, '/');
        if (s == NULL)
            break;
        *s = '\0';
    }
    size_t len = strlen(exe);
    char *p = hy_alloc(len + sizeof("/conf/mime.types"));
    memcpy(p, exe, len);
    memcpy(p + len, "/conf/mime.types", sizeof("/conf/mime.types"));
    if (access(p, F_OK) != 0) { /* not a checkout nor a prefix tree: a copy in /usr/local/sbin must not write
                                 * /usr/local/logs */
        free(p);
        return hy_strndup("/usr/local/hayate/", 18);
    }
    p[len] = '/';
    p[len + 1] = '\0';
    return p;
#endif
}

static char *absolute(const char *base, const char *name, bool dir)
{
    char cwd[PATH_MAX];
    const char *b = base;
    if (name[0] != '/' && b == NULL)
        b = getcwd(cwd, sizeof(cwd)) ? cwd : "/";
    size_t bl = name[0] == '/' ? 0 : strlen(b), nl = strlen(name);
    char *p = hy_alloc(bl + nl + 3);
    size_t o = 0;
    if (bl) {
        memcpy(p, b, bl);
        o = bl;
        if (p[o - 1] != '/')
            p[o++] = '/';
    }
    memcpy(p + o, name, nl);
    o += nl;
    if (dir && (o == 0 || p[o - 1] != '/'))
        p[o++] = '/';
    p[o] = '\0';
    return p;
}

static int send_signal(hy_cycle_t *cycle, const char *name)
{
    static const struct {
        const char *name;
        int sig;
    } sigs[] = {{"stop", SIGTERM}, {"quit", SIGQUIT}, {"reopen", SIGUSR1}, {"reload", SIGHUP}};
    int sig = 0;
    for (size_t i = 0; i < HY_ARRAY_SIZE(sigs); i++)
        if (strcmp(sigs[i].name, name) == 0)
            sig = sigs[i].sig;
    hy_core_conf_t *core = hy_core_conf(cycle);
    char *path = hy_cycle_path(cycle, core->pid.ptr, core->pid.len);
    hy_log_stderr(HY_LOG_NOTICE, "signal process started");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        hy_log_stderr(HY_LOG_ERR, "open() \"%s\" failed (%d: %s)", path, errno, strerror(errno));
        return 1;
    }
    char buf[32];
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n < 0)
        n = 0;
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
        n--;
    buf[n] = '\0';
    int64_t pid = hy_parse_int(buf, (size_t)n);
    if (pid <= 0 || pid > INT32_MAX) {
        hy_log_stderr(HY_LOG_ERR, "invalid PID number \"%s\" in \"%s\"", buf, path);
        return 1;
    }
    if (kill((pid_t)pid, sig) != 0) {
        hy_log_stderr(HY_LOG_ERR, "kill(%lld, %d) failed (%d: %s)", (long long)pid, sig, errno, strerror(errno));
        return 1;
    }
    return 0;
}

static void early_log_hook(const char *level, const char *msg)
{
    int l = hy_log_level_parse(level, strlen(level));
    hy_log(l > 0 ? l : HY_LOG_EMERG, "%s", msg);
}

static hy_opts_t opts;      /* process lifetime: reachable until exit */
static hy_cycle_t *cycle;

int main(int argc, char **argv)
{
    const char *prefix = NULL, *conf = NULL, *signal_name = NULL;
    bool show_version = false, show_configure = false, help = false;
    bool doctor = false;
    hy_mem_init();
    hy_title_init(argc, argv);
    if (hy_title_argv()) /* the originals become title space */
        argv = (char **)hy_title_argv();
    for (int i = 1; i < argc; i++) {
        const char *p = argv[i];
        if (strcmp(p, "--doctor") == 0) {
            doctor = true;
            continue;
        }
        if (*p++ != '-') {
            fprintf(stderr, "hayate: invalid option: \"%s\"\n", argv[i]);
            return 1;
        }
        while (*p) {
            char c = *p++;
            const char **target = NULL;
            switch (c) {
            case '?': case 'h': help = true; break;
            case 'v': show_version = true; break;
            case 'V': show_version = show_configure = true; break;
            case 't': opts.test = true; break;
            case 'T': opts.test = opts.dump = true; break;
            case 'q': opts.quiet = true; break;
            case 'p': target = &prefix; break;
            case 'c': target = &conf; break;
            case 'e': target = &opts.error_log; break;
            case 'g': target = &opts.directives; break;
            case 's': target = &signal_name; break;
            default:
                fprintf(stderr, "hayate: invalid option: \"%s\"\n", p - 1);
                return 1;
            }
            if (target) {
                if (*p) {
                    *target = p;
                } else if (i + 1 < argc) {
                    *target = argv[++i];
                } else {
                    fprintf(stderr, "hayate: option \"-%c\" requires %s\n", c,
                            c == 'p' ? "directory name" : c == 'e' || c == 'c' ? "file name" : "parameter");
                    return 1;
                }
                if (c == 's' && strcmp(*target, "stop") && strcmp(*target, "quit") && strcmp(*target, "reopen") &&
                    strcmp(*target, "reload")) {
                    fprintf(stderr, "hayate: invalid option: \"-s %s\"\n", *target);
                    return 1;
                }
                break;
            }
        }
    }
    if (show_version || help) {
        version(show_configure, prefix);
        if (help)
            usage();
        return 0;
    }
    hy_log_quiet = opts.quiet;
    /* -e applies before the configuration is read: startup errors go there too (and to stderr) */
    static hy_log_target_t early;
    opts.prefix = prefix ? absolute(NULL, prefix, true) : default_prefix();
    if (opts.error_log && strcmp(opts.error_log, "stderr") != 0) {
        char *path = absolute(opts.prefix, opts.error_log, false);
        int fd = hy_log_open_file(path);
        early = (hy_log_target_t){.path = path, .fd = fd, .level = HY_LOG_ERR};
        if (fd >= 0) {
            hy_log_set_targets(&early, 1);
            hy_conf_log_hook = early_log_hook;
        }
    }
    if (conf) {
        opts.conf_file = absolute(opts.prefix, conf, false);
    } else {
        char *def = absolute(opts.prefix, HY_PATH_CONF, false);
        if (access(def, F_OK) == 0)
            opts.conf_file = def;
        else
            free(def);
    }
    const char *shown = opts.conf_file ? opts.conf_file : "(embedded)";
    cycle = hy_cycle_load(&opts);
    if (cycle == NULL) {
        if (opts.test)
            fprintf(stderr, "hayate: configuration file %s test failed\n", shown);
        return 1;
    }
    if (doctor)
        return hy_doctor(cycle);
    if (opts.test) {
        if (hy_cycle_open_logs(cycle) != 0) {
            fprintf(stderr, "hayate: configuration file %s test failed\n", shown);
            return 1;
        }
        if (!opts.quiet) {
            fprintf(stderr, "hayate: the configuration file %s syntax is ok\n", shown);
            fprintf(stderr, "hayate: configuration file %s test is successful\n", shown);
        }
        if (opts.dump)
            hy_cycle_dump(cycle);
        return 0;
    }
    if (signal_name)
        return send_signal(cycle, signal_name);
    return hy_serve(cycle, &opts);
}
