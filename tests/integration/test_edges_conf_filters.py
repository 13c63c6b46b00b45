"""`-t` errors of filter and upstream directives not checked elsewhere (gzip_buffers, gzip_cache, gzip_disable,
userid_*, charset_map and its entries, sub_filter, ssi_types, scgi/uwsgi/fastcgi/proxy temp paths and
bind, proxy_ssl_*): nginx's message and the file:line of the offending directive, exit code 1. Where nginx
has no such directive (gzip_cache) or words it differently, the case is hayate-only."""
import pytest

from conftest import IS_NGINX


def check(run_cli, prefix, http, needle, msg):
    conf = prefix.conf('''
http {
    %s
    server {
        listen 127.0.0.1:{port};
    }
}
''' % http)
    res = run_cli(['-p', prefix.tmp + '/', '-c', conf, '-t'])
    assert res.rc == 1, res
    line = None
    with open(conf) as f:
        for n, l in enumerate(f, 1):
            if needle in l:
                line = n
    assert line is not None
    want = '%s in %s:%d' % (msg, conf, line)
    if IS_NGINX and 'variable' in msg:
        want = msg  # nginx reports an unknown variable without its place
    assert '[emerg]' in res.err and want in res.err, (want, res.err)


MARK_MSG = '"userid_mark" directive value must be "off" or a single letter, digit or "="'

CASES = [
    ('gzip_buffers 0 8k;', 'gzip_buffers', 'invalid value'),
    ('gzip_buffers 4 8k;\n gzip_buffers 4 8k;', 'gzip_buffers 4 8k;\n', '"gzip_buffers" directive is duplicate'),
    ('gzip_proxied any bogus;', 'gzip_proxied', 'invalid value "bogus"'),
    ('gzip_disable "(";', 'gzip_disable', None),
    ('gzip_comp_level 10;', 'gzip_comp_level', None),
    ('gzip_http_version 2.0;', 'gzip_http_version', 'invalid value "2.0"'),
    ('userid_expires never;', 'userid_expires', '"userid_expires" directive invalid value'),
    ('userid_expires max;\n userid_expires off;', 'userid_expires off', '"userid_expires" directive is duplicate'),
    ('userid_mark ab;', 'userid_mark', MARK_MSG),
    ('userid_mark -;', 'userid_mark', MARK_MSG),
    ('userid_mark x;\n userid_mark off;', 'userid_mark off', '"userid_mark" directive is duplicate'),
    ('userid_domain a.example;\n userid_domain none;', 'userid_domain none',
     '"userid_domain" directive is duplicate'),
    ('userid bogus;', 'userid bogus', 'invalid value "bogus"'),
    ('charset_map koi8-r koi8-r { }', 'charset_map', '"charset_map" between the same charsets "koi8-r" and "koi8-r"'),
    ('charset_map a b { }\n charset_map b a { }', 'charset_map b a', 'duplicate "charset_map" between "b" and "a"'),
    ('charset_map a b {\n C0 ;\n }', 'C0 ;', 'invalid parameters number'),
    ('charset_map a b {\n G0 C0;\n }', 'G0 C0', 'invalid value "G0"'),
    ('charset_map a b {\n C0 1C0;\n }', 'C0 1C0', 'invalid value "1C0"'),
    ('charset_map a utf-8 {\n C0 D0B;\n }', 'C0 D0B', 'invalid value "D0B"'),
    ('charset_map a utf-8 {\n C0 ZZ;\n }', 'C0 ZZ', 'invalid value "ZZ"'),
    ('charset_map a utf-8 {\n C0 F09F98;\n }', 'C0 F09F98', 'invalid value "F09F98"'),
    ('sub_filter "" x;', 'sub_filter', 'empty search pattern'),
    ('sub_filter a $nope;', 'sub_filter', 'unknown "nope" variable'),
    ('proxy_temp_path /tmp/x 1 2 3 4;', 'proxy_temp_path', None),
    ('proxy_temp_path /tmp/x;\n proxy_temp_path /tmp/y;', 'proxy_temp_path /tmp/y', 'is duplicate'),
    ('proxy_bind 999.1.1.1;', 'proxy_bind', None),
    ('proxy_ssl_verify_depth -1;', 'proxy_ssl_verify_depth', None),
    ('proxy_ssl_protocols TLSv9;', 'proxy_ssl_protocols', None),
    ('proxy_ssl_certificate a.crt;\n proxy_ssl_certificate b.crt;', 'proxy_ssl_certificate b', 'is duplicate'),
    ('proxy_ssl_trusted_certificate a.crt;\n proxy_ssl_trusted_certificate b.crt;',
     'proxy_ssl_trusted_certificate b', 'is duplicate'),
    ('proxy_ssl_password_file /nonexistent/pw;', 'proxy_ssl_password_file', None),
    ('scgi_param A;', 'scgi_param', None),
    ('uwsgi_modifier1 abc;', 'uwsgi_modifier1', None),
]



@pytest.mark.parametrize('http,needle,msg', CASES, ids=[str(i) for i in range(len(CASES))])
def test_conf_errors(run_cli, prefix, http, needle, msg):
    if msg is None:  # only the place: the words vary with the value
        conf = prefix.conf('http {\n    %s\n    server { listen 127.0.0.1:{port}; }\n}\n' % http)
        res = run_cli(['-p', prefix.tmp + '/', '-c', conf, '-t'])
        assert res.rc == 1, res
        line = [n for n, l in enumerate(open(conf), 1) if needle in l][-1]
        assert '[emerg]' in res.err and ('%s:%d' % (conf, line)) in res.err, res.err
        return
    check(run_cli, prefix, http, needle, msg)


@pytest.mark.hayate_only
@pytest.mark.parametrize('http,needle,msg', [
    ('gzip_cache size=0;', 'gzip_cache', 'invalid "gzip_cache" parameter "size=0"'),
    ('gzip_cache max_file=x;', 'gzip_cache', 'invalid "gzip_cache" parameter "max_file=x"'),
    ('gzip_cache bogus;', 'gzip_cache', 'invalid "gzip_cache" parameter "bogus"'),
    ('gzip_cache off;\n gzip_cache off;', 'gzip_cache off;\n', '"gzip_cache" directive is duplicate'),
])
def test_hayate_conf_errors(run_cli, prefix, http, needle, msg):
    check(run_cli, prefix, http, needle, msg)


@pytest.mark.hayate_only
def test_gzip_cache_accepts_its_parameters(run_cli, prefix):
    conf = prefix.conf('http { gzip_cache size=1m max_file=64k; server { listen 127.0.0.1:{port}; } }')
    res = run_cli(['-p', prefix.tmp + '/', '-c', conf, '-t'])
    assert res.rc == 0, res
