/* lset.c — listener sets. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/un.h>
#include "lset.h"
#include "../core/log.h"
#include "../core/mem.h"
#include "../http/core.h"

static int take(hy_lset_t *old, const hy_listen_spec_t *spec, size_t slot, bool shared, bool peek)
{
    if (old == NULL)
        return -1;
    for (size_t a = 0; a < old->num_addrs; a++) {
        if (!hy_listen_same_addr(&old->specs[a], spec) || old->shared[a] != shared)
            continue;
        if (shared) {
            int fd = old->fds[a];
            if (fd < 0 || peek)
                return fd;
            for (size_t s = 0; s < old->num_slots; s++)
                old->fds[s * old->num_addrs + a] = -1;
            return fd;
        }
        if (slot >= old->num_slots)
            return -1;
        int fd = old->fds[slot * old->num_addrs + a];
        if (!peek)
            old->fds[slot * old->num_addrs + a] = -1;
        return fd;
    }
    return -1;
}

hy_lset_t *hy_lset_open(hy_cycle_t *cycle, size_t slots, hy_lset_t *old)
{
    hy_http_main_conf_t *m = hy_http_main(cycle);
    size_t n = m ? m->addrs->nelts : 0;
    hy_http_addr_t *addrs = m ? m->addrs->elts : NULL;
    hy_lset_t *s = hy_calloc(sizeof(*s));
    s->num_addrs = n;
    s->num_slots = slots;
    s->specs = hy_calloc(sizeof(hy_listen_spec_t) * (n ? n : 1));
    size_t cells = n * slots;
    s->fds = hy_alloc(sizeof(int) * (cells > 0 ? cells : 1));
    s->shared = hy_calloc(sizeof(bool) * (n ? n : 1));
    for (size_t i = 0; i < cells; i++)
        s->fds[i] = -1;
    /* first open what the old set cannot give, so a failure leaves the old set whole */
    for (size_t a = 0; a < n; a++) {
        s->specs[a] = addrs[a].spec;
        s->shared[a] = addrs[a].spec.is_unix;
        if (!s->shared[a])
            s->specs[a].reuseport = true; /* one socket per worker (docs/DIFFERENCES.md) */
        if (addrs[a].via) /* served through the wildcard socket of its port */
            continue;
        for (size_t slot = 0; slot < (s->shared[a] ? 1 : slots); slot++) {
            if (take(old, &s->specs[a], slot, s->shared[a], true) >= 0)
                continue;
            const char *what = "";
            int fd = hy_listen_open(&s->specs[a], &what);
            if (fd < 0) {
                hy_log_stderr(HY_LOG_EMERG, "%s to %s failed (%d: %s)", what, s->specs[a].text, -fd, strerror(-fd));
                hy_lset_free(s, false);
                return NULL;
            }
            s->fds[slot * n + a] = fd;
        }
    }
    for (size_t a = 0; a < n; a++) {
        for (size_t slot = 0; slot < slots && !addrs[a].via; slot++) {
            if (s->shared[a] && slot > 0) {
                s->fds[slot * n + a] = s->fds[a];
                continue;
            }
            if (s->fds[slot * n + a] < 0)
                s->fds[slot * n + a] = take(old, &s->specs[a], slot, s->shared[a], false);
        }
    }
    return s;
}

void hy_lset_free(hy_lset_t *s, bool unlink_unix)
{
    if (s == NULL)
        return;
    for (size_t a = 0; a < s->num_addrs; a++) {
        for (size_t slot = 0; slot < s->num_slots; slot++) {
            int fd = s->fds[slot * s->num_addrs + a];
            if (fd < 0)
                continue;
            close(fd);
            if (s->shared[a]) {
                if (unlink_unix)
                    unlink(((struct sockaddr_un *)&s->specs[a].addr)->sun_path);
                break;
            }
        }
    }
    free(s->specs);
    free(s->fds);
    free(s->shared);
    free(s);
}
