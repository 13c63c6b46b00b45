"""Built-in variables at the edges: $sent_http_* read while the head is still being made (add_header), $cookie_*
with spaces around "=", $arg_* case, a prefix variable
with the longest prefix winning, $realpath_root and $document_root under alias and regex locations."""
import re

import pytest

from conftest import simple


def test_sent_http_while_the_head_is_made(server):
    srv = server(simple('''
        root {html};
        location /f {
            add_header X-Other o;
            add_header X-V "[$sent_http_content_type|$sent_http_content_length|$sent_http_etag|$sent_http_accept_ranges|$sent_http_x_other|$sent_http_x_none]";
            add_header X-LM "[$sent_http_last_modified]";
        }
        location /r {
            add_header X-V "[$sent_http_location|$sent_http_content_length|$sent_http_last_modified|$sent_http_etag]" always;
            return 301 /elsewhere;
        }'''), files={'html/f.txt': 'hello'})
    r = srv.get('/f.txt')
    assert r.status == 200
    etag = r.header('ETag')
    assert r.header('X-V') == '[text/plain|5|%s||o|]' % etag  # Accept-Ranges comes later (nginx)
    assert r.header('X-LM') == '[%s]' % r.header('Last-Modified')
    r = srv.get('/r')
    assert r.status == 301
    assert re.fullmatch(r'\[(http://localhost:\d+)?/elsewhere\|\d*\|\|\]', r.header('X-V')), r.header('X-V')


@pytest.mark.parametrize('cookie,want', [
    ('a = 1', '1'),
    ('a=1', '1'),
    ('b=2; a =3', '3'),
    ('ab=4; a=5', '5'),
    ('a', ''),
    ('A=6', '6'),  # names are matched without regard to case (nginx)
])
def test_cookie_spacing(server, cookie, want):
    srv = server(simple('location / { return 200 "[$cookie_a]"; }'))
    assert srv.get('/', headers={'Cookie': cookie}).body == ('[%s]' % want).encode()


def test_arg_name_case_and_prefix_variables(server):
    srv = server(simple('''
        location / { return 200 "[$arg_Foo|$arg_foo|$http_x_a|$sent_http_x|$upstream_http_x]"; }'''))
    r = srv.get('/?FOO=1&foo=2', headers={'X-A': 'h'})
    assert r.body == b'[1|1|h||]'


def test_roots_under_alias_and_regex_locations(server):
    srv = server(simple('''
        root {html};
        location /al/ { alias {html}/sub/; return 200 "$document_root|$realpath_root|$request_filename"; }
        location ~ ^/re/(.*)$ { root {html}/sub; return 200 "$document_root|$request_filename"; }'''),
        files={'html/sub/x': 'x'})
    tmp = srv.tmp
    assert srv.get('/al/x').body.decode() == '%s/html/sub/|%s/html/sub|%s/html/sub/x' % (tmp, tmp, tmp)
    assert srv.get('/re/y').body.decode() == '%s/html/sub|%s/html/sub/re/y' % (tmp, tmp)
