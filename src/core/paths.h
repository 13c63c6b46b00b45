/* paths.h — the compiled-in paths nginx's configure calls --prefix, --conf-path, --error-log-path,
 * --http-log-path and --pid-path. A development build defines none of them: the prefix is then the directory
 * above the binary's (so build/hayate serves the checkout) and the others are relative to it. `make install`
 * builds with -DHY_PATH_PREFIX=... and absolute paths (see the Makefile). -V prints them. */
#ifndef HY_CORE_PATHS_H
#define HY_CORE_PATHS_H

/* HY_PATH_PREFIX: absolute, ends with '/'; undefined = the directory above the binary's */
#ifndef HY_PATH_CONF
#define HY_PATH_CONF "conf/hayate.conf"
#endif
#ifndef HY_PATH_ERROR_LOG
#define HY_PATH_ERROR_LOG "logs/error.log"
#endif
#ifndef HY_PATH_HTTP_LOG
#define HY_PATH_HTTP_LOG "logs/access.log"
#endif
#ifndef HY_PATH_PID
#define HY_PATH_PID "logs/hayate.pid"
#endif

#endif
