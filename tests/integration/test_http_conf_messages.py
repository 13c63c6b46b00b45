"""http directives rejected (or warned about) at -t in nginx 1.22's words (checked with its -t on the same
configs) at the directive's file:line: headers, error_page, try_files, index, map, split_clients, and the
value checks of plain slots."""
import re

import pytest

SRV = [
    ('expires abc;', '"expires" directive invalid value'),
    ('expires modified;', '"expires" directive invalid value'),
    ('expires modified x;', '"expires" directive invalid value'),
    ('expires @25:00;', '"expires" directive invalid value'),
    ('expires @25h;', '"expires" directive daily time value must be less than 24 hours'),
    ('expires epoch; expires max;', '"expires" directive is duplicate'),
    ('add_header;', 'invalid number of arguments in "add_header" directive'),
    ('add_header X-A a b;', 'invalid parameter "b"'),
    ('error_page 404;', 'invalid number of arguments in "error_page" directive'),
    ('error_page 99 /x;', 'value "99" must be between 300 and 599'),
    ('error_page 404 =abc /x;', 'invalid value "=abc"'),
    ('try_files /a;', 'invalid number of arguments in "try_files" directive'),
    ('index;', 'invalid number of arguments in "index" directive'),
    ('open_file_cache_valid abc;', '"open_file_cache_valid" directive invalid value'),
    ('open_file_cache_min_uses abc;', '"open_file_cache_min_uses" directive invalid number'),
    ('open_file_cache_errors maybe;',
     'invalid value "maybe" in "open_file_cache_errors" directive, it must be "on" or "off"'),
    ('if_modified_since sometimes;', 'invalid value "sometimes"'),
    ('etag maybe;', 'invalid value "maybe" in "etag" directive, it must be "on" or "off"'),
    ('client_max_body_size abc;', '"client_max_body_size" directive invalid value'),
    ('types_hash_max_size abc;', '"types_hash_max_size" directive invalid number'),
    ('server_tokens maybe;', 'invalid value "maybe"'),
    ('keepalive_requests abc;', '"keepalive_requests" directive invalid number'),
    ('send_timeout abc;', '"send_timeout" directive invalid value'),
    ('recursive_error_pages maybe;',
     'invalid value "maybe" in "recursive_error_pages" directive, it must be "on" or "off"'),
    ('lingering_close maybe;', 'invalid value "maybe"'),
    ('max_ranges abc;', '"max_ranges" directive invalid number'),
    ('default_type a b;', 'invalid number of arguments in "default_type" directive'),
]

HTTP = [
    ('map $uri $m { default a; default b; }', 'duplicate default map parameter'),
    ('map $uri $m { hostnames; a b c; }', 'invalid number of the map parameters'),
    ('map $uri $m { ~( a; }', 'pcre2_compile() failed: missing closing parenthesis in "("'),
    ('map $uri m { }', 'invalid variable name "m"'),
    ('map $uri $m { volatile; a b; a c; }', 'conflicting parameter "a"'),
    ('split_clients "$remote_addr" $s { 60% a; 50% b; }', 'percent total is greater than 100%'),
    ('split_clients "$remote_addr" s { 10% a; }', 'invalid variable name "s"'),
    ('split_clients "$remote_addr" $s { x% a; }', 'invalid percent value "x%"'),
    ('split_clients "$remote_addr" $s { 0% a; }', 'invalid percent value "0%"'),
]


def check(prefix, run_cli, text, needle, message):
    path = prefix.conf(text)
    res = run_cli(['-p', prefix.tmp + '/', '-c', path, '-t'])
    line = [i for i, l in enumerate(open(path), 1) if needle in l][0]
    assert res.rc == 1, res
    assert re.search(r'\[emerg\] (\d+#\d+: )?%s in %s:%d\n' % (re.escape(message), re.escape(path), line),
                     res.err), res.err


@pytest.mark.parametrize('directive,message', SRV, ids=[c[0] for c in SRV])
def test_server_level(prefix, run_cli, directive, message):
    check(prefix, run_cli, 'http {\n    server {\n        listen 127.0.0.1:{port};\n        %s\n    }\n}\n'
          % directive, directive, message)


@pytest.mark.parametrize('block,message', HTTP, ids=[c[0] for c in HTTP])
def test_http_level(prefix, run_cli, block, message):
    check(prefix, run_cli, 'http {\n    %s\n}\n' % block, block, message)


@pytest.mark.parametrize('directive', ['error_page 300 /x;', 'error_page 404 =200 @named;', 'index a/ b;',
                                       'expires @1h30m;', 'expires modified +1h;'])
def test_accepted(prefix, run_cli, directive):
    path = prefix.conf('http {\n    server {\n        listen 127.0.0.1:{port};\n        %s\n'
                       '        location @named { return 204; }\n    }\n}\n' % directive)
    res = run_cli(['-p', prefix.tmp + '/', '-c', path, '-t'])
    assert res.rc == 0, res


def test_absolute_index_not_last_is_a_warning(prefix, run_cli):
    path = prefix.conf('http {\n    server {\n        listen 127.0.0.1:{port};\n        index /abs b;\n    }\n}\n')
    res = run_cli(['-p', prefix.tmp + '/', '-c', path, '-t'])
    assert res.rc == 0, res
    line = [i for i, l in enumerate(open(path), 1) if 'index /abs' in l][0]
    assert re.search(r'\[warn\] (\d+#\d+: )?only the last index in "index" directive should be absolute in %s:%d\n'
                     % (re.escape(path), line), res.err), res.err
