"""`-t` errors (and accepted variants) of directives of the core, gzip, charset, userid, sub_filter, gunzip, SSI and
access log modules that the other conf tests leave out: each invalid value gives nginx's message with the
directive's file:line and exit code 1; each valid variant gives "test is successful"."""
import re

import pytest

from conftest import IS_NGINX, simple

H = 'http_extra'
S = 'server'
L = 'location'


def conf_for(where, body):
    if where == H:
        return simple('return 204;', http_extra=body)
    if where == S:
        # a second server on the port: nginx checks wildcard names when it hashes several servers' names
        return simple(body + '\n        location / { return 204; }',
                      http_extra='server { listen 127.0.0.1:{port}; server_name second; return 204; }')
    return simple('location / { %s return 204; }' % body)


BAD = [
    # core
    (S, 'client_body_temp_path t 1 11;', '"client_body_temp_path" directive invalid value'),
    (S, 'client_body_temp_path t 0;', '"client_body_temp_path" directive invalid value'),
    (S, 'client_body_temp_path t 4 4 4;', '"client_body_temp_path" directive invalid value'),
    (S, 'listen 127.0.0.1:{port2} backlog=0;', 'invalid backlog "backlog=0"'),
    (S, 'listen 127.0.0.1:{port2} backlog=70000;', 'invalid backlog "backlog=70000"'),
    (S, 'listen 127.0.0.1:{port2} rcvbuf=x;', 'invalid rcvbuf "rcvbuf=x"'),
    (S, 'listen 127.0.0.1:{port2} sndbuf=x;', 'invalid sndbuf "sndbuf=x"'),
    (S, 'listen 127.0.0.1:{port2} so_keepalive=x:1:1;', 'invalid so_keepalive value: "x:1:1"'),
    (S, 'listen 127.0.0.1:{port2} so_keepalive=1:1:40000000;', 'invalid so_keepalive value: "1:1:40000000"'),
    (S, 'listen 127.0.0.1:{port2} bogus;', 'invalid parameter "bogus"'),
    (S, 'server_name a*b.com;', 'invalid server name or wildcard "a*b.com" on '),
    (S, 'server_name *.a*.com;', 'invalid server name or wildcard "*.a*.com" on '),
    (S, 'server_name www.*.com;', 'invalid server name or wildcard "www.*.com" on '),
    (S, 'large_client_header_buffers 0 8k;', '"large_client_header_buffers" directive invalid value'),
    (S, 'large_client_header_buffers 4 0;', '"large_client_header_buffers" directive invalid value'),
    (L, 'open_file_cache max=0;', 'invalid "open_file_cache" parameter "max=0"'),
    (L, 'open_file_cache max=10 inactive=x;', 'invalid "open_file_cache" parameter "inactive=x"'),
    (L, 'open_file_cache max=10 bogus;', 'invalid "open_file_cache" parameter "bogus"'),
    # gzip
    (H, 'gzip_buffers 0 4k;', '"gzip_buffers" directive invalid value'),
    (H, 'gzip_buffers 4 0;', '"gzip_buffers" directive invalid value'),
    (H, 'gzip_disable "(";', 'pcre2_compile() failed'),
    # gunzip
    (H, 'gunzip_buffers 0 4k;', '"gunzip_buffers" directive invalid value'),
    # access log
    (H, 'log_format x escape=xml "$uri";', 'unknown log format escaping "xml"'),
    (H, 'log_format x "$uri"; log_format x "$uri";', 'duplicate "log_format" name "x"'),
    (H, 'open_log_file_cache max=-1;', 'invalid "open_log_file_cache" parameter "max=-1"'),
    (H, 'open_log_file_cache max=1 inactive=x;', 'invalid "open_log_file_cache" parameter "inactive=x"'),
    (H, 'open_log_file_cache max=1 valid=x;', 'invalid "open_log_file_cache" parameter "valid=x"'),
    (H, 'open_log_file_cache max=1 min_uses=-1;', 'invalid "open_log_file_cache" parameter "min_uses=-1"'),
    (H, 'open_log_file_cache max=1 bogus;', 'invalid "open_log_file_cache" parameter "bogus"'),
    (H, 'open_log_file_cache inactive=10s;', '"open_log_file_cache" must have "max" parameter'),
    (H, 'access_log {tmp}/logs/$uri.log combined buffer=4k;', 'buffered logs cannot have variables in name'),
    (H, 'access_log {tmp}/logs/a.log combined flush=1s;', 'no buffer is defined for access_log "{tmp}/logs/a.log"'),
    # userid
    (L, 'userid_mark ab;', '"userid_mark" directive value must be "off" or a single letter, digit or "="'),
    (L, 'userid_mark -;', '"userid_mark" directive value must be "off" or a single letter, digit or "="'),
    (L, 'userid_mark off; userid_mark a;', '"userid_mark" directive is duplicate'),
    (L, 'userid_expires x;', '"userid_expires" directive invalid value'),
    (L, 'userid_expires off; userid_expires max;', '"userid_expires" directive is duplicate'),
    (L, 'userid_domain a.org; userid_domain none;', '"userid_domain" directive is duplicate'),
    # charset maps
    (H, 'charset_map koi8-r windows-1251 { C0 ; }', 'invalid parameters number'),
    (H, 'charset_map koi8-r windows-1251 { XY C0; }', 'invalid value "XY"'),
    (H, 'charset_map koi8-r windows-1251 { C0 123; }', 'invalid value "123"'),
    (H, 'charset_map koi8-r utf-8 { C0 D0B; }', 'invalid value "D0B"'),
    (H, 'charset_map koi8-r utf-8 { C0 ZZ; }', 'invalid value "ZZ"'),
    (H, 'charset_map koi8-r utf-8 { C0 FFFFFF; }', 'invalid value "FFFFFF"'),
    (H, 'charset_map koi8-r utf-8 { C0 D0B1D0B1; }', 'invalid value "D0B1D0B1"'),
]

HAYATE_ONLY = {
    'gzip_disable "(";', 'listen 127.0.0.1:{port2} so_keepalive=1:1:40000000;', 'open_file_cache max=10 bogus;',
    'charset_map koi8-r utf-8 { C0 FFFFFF; }', 'charset_map koi8-r utf-8 { C0 D0B1D0B1; }',
    'listen 127.0.0.1:{port2} backlog=70000;',
}


@pytest.mark.parametrize('where,body,msg', [
    pytest.param(*b, marks=pytest.mark.hayate_only) if b[1] in HAYATE_ONLY else b for b in BAD])
def test_bad(prefix, run_cli, where, body, msg):
    path = prefix.conf(conf_for(where, body))
    r = run_cli(['-t', '-c', path])
    assert r.rc == 1, r
    text = open(path).read().split('\n')
    rbody = prefix.render(body)
    # the line of the directive in error: the last line holding the snippet
    line = [i for i, l in enumerate(text, 1) if rbody.split(';')[0] in l][-1]
    where_re = r'.* in %s:%d' % (re.escape(path), line)
    if IS_NGINX and body.startswith('server_name'):
        where_re = ''  # nginx names the address, not the line, when it hashes the names at the end of http{}
    assert re.search(re.escape(prefix.render(msg)) + where_re, r.err), r.err


GOOD = [
    (S, 'listen 127.0.0.1:{port2} backlog=100 rcvbuf=64k sndbuf=64k so_keepalive=on;'),
    (S, 'listen 127.0.0.1:{port2} so_keepalive=off;'),
    (S, 'listen 127.0.0.1:{port2} so_keepalive=30m::10;'),
    (S, 'listen [::1]:{port2} ipv6only=on;'),
    (S, 'listen 127.0.0.1:{port2} ipv6only=on;'),
    (S, 'server_name *.a.com www.b.* .c.com ~^d\\d+$;'),
    (S, 'client_body_temp_path t/ 1 2 3;'),
    (H, 'gzip_disable msie6 degradation "^Bad";'),
    (H, 'log_format x escape=none "$uri"; log_format y escape=default "$uri"; log_format z escape=json "$uri";'),
    (H, 'open_log_file_cache off;'),
    (H, 'open_log_file_cache max=10 inactive=20s valid=1m min_uses=2;'),
    (L, 'userid on; userid_mark =; userid_expires off; userid_domain none; userid_p3p none;'),
    (L, 'userid v1; userid_mark 7; userid_expires max; userid_path /p;'),
    (H, 'charset_map koi8-r utf-8 { C0 D0B1; C1 E282AC; }'),
    (L, 'ssi on; ssi_types *; ssi_min_file_chunk 2k; ssi_value_length 512;'),
    (L, 'sub_filter $uri x; sub_filter_types *; sub_filter_once off; sub_filter_last_modified on;'),
]


@pytest.mark.parametrize('where,body', GOOD)
def test_good(prefix, run_cli, where, body):
    path = prefix.conf(conf_for(where, body))
    r = run_cli(['-t', '-c', path])
    assert r.rc == 0, r
    assert 'test is successful' in r.err
