"""-V in nginx's form (issue 15, item 3): `configure arguments:` has only real nginx options, every default
nginx module hayate lacks is a --without-http_<name>_module, and none that it has."""
import re
import shlex

import pytest

from conftest import IS_NGINX

# every default nginx HTTP module (nginx's auto/options, the ones with a --without switch), with a directive
# of it and the context it goes in ('http', 'server' or 'location')
DEFAULT_MODULES = {
    'http_charset_module': ('location', 'charset utf-8;'),
    'http_gzip_module': ('location', 'gzip on;'),
    'http_ssi_module': ('location', 'ssi on;'),
    'http_userid_module': ('location', 'userid on;'),
    'http_access_module': ('location', 'allow 127.0.0.1;'),
    'http_auth_basic_module': ('location', 'auth_basic "x";'),
    'http_mirror_module': ('location', 'mirror_request_body off;'),
    'http_autoindex_module': ('location', 'autoindex on;'),
    'http_geo_module': ('http', 'geo $hy_geo { default 1; }'),
    'http_map_module': ('http', 'map $uri $hy_map { default 1; }'),
    'http_split_clients_module': ('http', 'split_clients "$uri" $hy_split { * a; }'),
    'http_referer_module': ('location', 'valid_referers none example.com;'),
    'http_rewrite_module': ('location', 'rewrite ^/old$ /new;'),
    'http_proxy_module': ('location', 'proxy_buffering off;'),
    'http_fastcgi_module': ('location', 'fastcgi_index index.php;'),
    'http_uwsgi_module': ('location', 'uwsgi_buffering off;'),
    'http_scgi_module': ('location', 'scgi_buffering off;'),
    'http_grpc_module': ('location', 'grpc_read_timeout 5s;'),
    'http_memcached_module': ('location', 'memcached_read_timeout 5s;'),
    'http_limit_conn_module': ('location', 'limit_conn_status 503;'),
    'http_limit_req_module': ('location', 'limit_req_status 503;'),
    'http_empty_gif_module': ('location', 'empty_gif;'),
    'http_browser_module': ('location', 'ancient_browser Links;'),
    'http_upstream_hash_module': ('http', 'upstream hy_u { hash $uri; server 127.0.0.1:9; }'),
    'http_upstream_ip_hash_module': ('http', 'upstream hy_u { ip_hash; server 127.0.0.1:9; }'),
    'http_upstream_least_conn_module': ('http', 'upstream hy_u { least_conn; server 127.0.0.1:9; }'),
    'http_upstream_random_module': ('http', 'upstream hy_u { random; server 127.0.0.1:9; }'),
    'http_upstream_keepalive_module': ('http', 'upstream hy_u { server 127.0.0.1:9; keepalive 4; }'),
    'http_upstream_zone_module': ('http', 'upstream hy_u { zone hy_z 64k; server 127.0.0.1:9; }'),
    'http-cache': ('http', 'proxy_cache_path {tmp}/cache keys_zone=hy_c:1m;'),
}


def configure_arguments(run_cli):
    res = run_cli(['-V'])
    assert res.rc == 0, res
    m = re.search(r'^configure arguments: (.*)$', res.err, re.M)
    assert m, res.err
    return shlex.split(m.group(1))


def test_V_lists_only_real_nginx_options(run_cli):
    args = configure_arguments(run_cli)
    allowed = re.compile(r'^--(prefix|conf-path|error-log-path|http-log-path|pid-path|sbin-path|modules-path|'
                         r'lock-path|user|group|builddir|with-cc-opt|with-ld-opt|with-[a-z0-9_-]+|'
                         r'without-[a-z0-9_-]+|http-[a-z-]+-temp-path)(=.*)?$')
    for a in args:
        assert allowed.match(a), a
    for bogus in ('--with-http_autoindex_module', '--with-http_gzip_module', '--with-http_index_module',
                  '--with-http_static_module', '--without-http_ssl_module', '--without-http_v2_module'):
        assert bogus not in args, bogus
    if not IS_NGINX:
        opts = dict(a[2:].split('=', 1) for a in args if '=' in a)
        for k in ('prefix', 'conf-path', 'error-log-path', 'http-log-path', 'pid-path'):
            assert opts.get(k, '').startswith('/'), (k, args)


# modules nginx builds only when asked (--with-...) that hayate has, with a directive of each
OPTIONAL_MODULES = {
    'http_ssl_module': ('server', 'ssl_session_timeout 5m;'),
    'http_gzip_static_module': ('location', 'gzip_static on;'),
    'http_secure_link_module': ('location', 'secure_link_secret s;'),
    'http_realip_module': ('server', 'set_real_ip_from 127.0.0.1;'),
}


@pytest.mark.hayate_only  # Debian's nginx is built with more of them
@pytest.mark.parametrize('module', sorted(OPTIONAL_MODULES))
def test_V_with_lists_the_optional_modules_hayate_has(module, run_cli, prefix):
    """-V says --with-<module> for each optional nginx module hayate has (test suites and tools skip a
    feature otherwise), and its directive passes -t."""
    assert '--with-' + module in configure_arguments(run_cli)
    ctx, directive = OPTIONAL_MODULES[module]
    body = {'server': 'server { listen 127.0.0.1:1; %s }' % directive,
            'location': 'server { listen 127.0.0.1:1; location / { %s } }' % directive}[ctx]
    path = prefix.conf('http { %s }' % body)
    res = run_cli(['-t', '-c', path])
    assert res.rc == 0, res.err


@pytest.mark.parametrize('module', sorted(DEFAULT_MODULES))
def test_V_without_matches_the_directives(module, run_cli, prefix):
    """A directive of the module passes -t exactly when -V does not say --without-<module>."""
    without = '--without-' + module in configure_arguments(run_cli)
    ctx, directive = DEFAULT_MODULES[module]
    directive = prefix.render(directive)
    http = directive if ctx == 'http' else ''
    server = directive if ctx == 'server' else ''
    location = directive if ctx == 'location' else ''
    conf = prefix.conf('''
http {
    %s
    server {
        listen 127.0.0.1:{port};
        %s
        location / { %s }
    }
}
''' % (http, server, location))
    res = run_cli(['-p', prefix.tmp + '/', '-c', conf, '-t'])
    if without:
        assert res.rc == 1, (module, res)
        if not IS_NGINX:
            assert 'not supported by hayate yet' in res.err, res.err
    else:
        assert res.rc == 0, (module, res)
