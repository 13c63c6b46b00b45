/* server.c — virtual server selection by Host, as nginx orders it: exact name, then the longest leading
 * wildcard ("*.example.com", ".example.com"), then the longest trailing wildcard ("www.example.*"), then
 * regular expressions in config order, then the address's default server. */
#include <string.h>
#include "core.h"

static bool suffix_match(const hy_server_name_t *sn, const char *host, size_t len)
{
    /* sn->name is ".example.com" (with the dot) for "*.example.com"; ".example.com" also matches "example.com" */
    if (len > sn->name.len && memcmp(host + len - sn->name.len, sn->name.ptr, sn->name.len) == 0)
        return true;
    return false;
}

hy_http_srv_conf_t *hy_http_find_server(hy_http_addr_t *addr, const char *host, size_t len, hy_regex_caps_t *caps)
{
    hy_http_srv_conf_t **srvs = addr->servers->elts;
    if (host == NULL || len == 0) { /* no Host: a server_name "" takes it (nginx), else the default server */
        for (size_t i = 0; i < addr->servers->nelts; i++) {
            hy_array_t *names = srvs[i]->server_names;
            for (size_t j = 0; names && j < names->nelts; j++) {
                hy_server_name_t *sn = (hy_server_name_t *)names->elts + j;
                if (sn->kind == 0 && sn->name.len == 0)
                    return srvs[i];
            }
        }
        return addr->default_server;
    }
    if (addr->servers->nelts == 1) { /* one server: only a regex server_name needs running (for its captures) */
        hy_array_t *names = srvs[0]->server_names;
        bool has_regex = false;
        for (size_t j = 0; names && j < names->nelts; j++)
            has_regex |= ((hy_server_name_t *)names->elts)[j].kind == 3;
        if (!has_regex)
            return addr->default_server;
    }
    hy_http_srv_conf_t *head = NULL, *tail = NULL;
    size_t head_len = 0, tail_len = 0;
    for (size_t i = 0; i < addr->servers->nelts; i++) {
        hy_array_t *names = srvs[i]->server_names;
        if (names == NULL)
            continue;
        hy_server_name_t *sn = names->elts;
        for (size_t j = 0; j < names->nelts; j++) {
            switch (sn[j].kind) {
            case 0:
                if (sn[j].name.len == len && memcmp(sn[j].name.ptr, host, len) == 0)
                    return srvs[i];
                break;
            case 1:
                if (sn[j].name.len > head_len && suffix_match(&sn[j], host, len))
                    head = srvs[i], head_len = sn[j].name.len;
                break;
            case 2:
                if (sn[j].name.len > tail_len && len > sn[j].name.len &&
                    memcmp(host, sn[j].name.ptr, sn[j].name.len) == 0)
                    tail = srvs[i], tail_len = sn[j].name.len;
                break;
            default:
                break;
            }
        }
    }
    if (head)
        return head;
    if (tail)
        return tail;
    for (size_t i = 0; i < addr->servers->nelts; i++) {
        hy_array_t *names = srvs[i]->server_names;
        if (names == NULL)
            continue;
        hy_server_name_t *sn = names->elts;
        for (size_t j = 0; j < names->nelts; j++) {
            if (sn[j].kind != 3)
                continue;
            if (hy_regex_exec(sn[j].regex, (hy_str_t){(char *)host, len}, caps) > 0)
                return srvs[i];
        }
    }
    return addr->default_server;
}
