/* suggest.c — nginx variables hayate lacks, and "did you mean" (see suggest.h). */
#include <string.h>
#include "suggest.h"

/* nginx 1.22's variables (core and the modules Debian builds) that hayate does not have; names ending in "_"
 * are families ($sent_trailer_name). Names hayate implements are found before this list is consulted. */
/* clang-format off */
const char *const hy_suggest_variables[] = {
    "fastcgi_path_info", "fastcgi_script_name", "geoip_area_code",
    "geoip_city", "geoip_city_continent_code", "geoip_city_country_code", "geoip_city_country_code3",
    "geoip_city_country_name", "geoip_country_code", "geoip_country_code3", "geoip_country_name", "geoip_dma_code",
    "geoip_latitude", "geoip_longitude", "geoip_org", "geoip_postal_code", "geoip_region", "geoip_region_name",
    "gzip_ratio", "http2",
    "pipe",
    "proxy_protocol_addr", "proxy_protocol_port", "proxy_protocol_server_addr", "proxy_protocol_server_port",
    "realip_remote_addr", "realip_remote_port", "request_body", "request_body_file", "request_completion",
    "sent_trailer_", "slice_range", "ssl_alpn_protocol", "ssl_cipher",
    "ssl_ciphers", "ssl_client_cert", "ssl_client_escaped_cert", "ssl_client_fingerprint", "ssl_client_i_dn",
    "ssl_client_i_dn_legacy", "ssl_client_raw_cert", "ssl_client_s_dn", "ssl_client_s_dn_legacy",
    "ssl_client_serial", "ssl_client_v_end", "ssl_client_v_remain", "ssl_client_v_start", "ssl_client_verify",
    "ssl_curve", "ssl_curves", "ssl_early_data", "ssl_protocol", "ssl_server_name", "ssl_session_id",
    "ssl_session_reused", "tcpinfo_rcv_space", "tcpinfo_rtt", "tcpinfo_rttvar", "tcpinfo_snd_cwnd",
    "upstream_trailer_", NULL,
};
/* clang-format on */

bool hy_suggest_variable(const char *name, size_t len)
{
    for (size_t i = 0; hy_suggest_variables[i]; i++) {
        const char *v = hy_suggest_variables[i];
        size_t vl = strlen(v);
        bool family = v[vl - 1] == '_'; /* "sent_trailer_": a prefix, never a name of its own */
        if (!family && vl == len && memcmp(v, name, len) == 0)
            return true;
        if (family && len > vl && memcmp(v, name, vl) == 0)
            return true;
    }
    return false;
}

/* Edit distance with adjacent transpositions (optimal string alignment: "uir" is 1 from "uri"), capped at 3. */
static int distance(const char *a, size_t al, const char *b)
{
    size_t bl = strlen(b);
    if (al > 63 || bl > 63 || (al > bl ? al - bl : bl - al) >= 3)
        return 3;
    static int d[64][64]; /* single-threaded: configuration parsing */
    for (size_t i = 0; i <= al; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= bl; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= al; i++)
        for (size_t j = 1; j <= bl; j++) {
            int v = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < v)
                v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v)
                v = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    return d[al][bl] < 3 ? d[al][bl] : 3;
}

void hy_suggest_near(hy_suggest_t *near, const char *name, size_t len, const char *candidate)
{
    int max = len <= 4 ? 1 : 2;
    int d = distance(name, len, candidate);
    if (d == 0 || d > max)
        return;
    if (near->best == NULL || d < near->dist) {
        near->best = candidate;
        near->dist = d;
    }
}
