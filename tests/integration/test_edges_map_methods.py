"""map with `hostnames` (nginx's ngx_http_map_module docs: "*.name", ".name" and "name.*" masks, the longest
match wins, a trailing dot of the source is ignored), caseless regexes, and the methods nginx refuses before any
location (TRACE, and CONNECT: 405, or 400 when the target is no host:port)."""
import pytest

from conftest import simple
from helpers.conf_t import fails_at

MAP = simple('location / { return 200 "$m|$r"; }', http_extra=r'''
    map $arg_h $m {
        hostnames;
        default none;
        exact.test exact;
        *.a.test head-a;
        *.x.a.test head-xa;
        .b.test dot-b;
        www.c.* tail-c;
        www.c.d.* tail-cd;
    }
    map $arg_r $r {
        default none;
        ~*^ABC caseless;
        ~^def case;
    }''')


@pytest.fixture
def srv(server):
    return server(MAP)


@pytest.mark.parametrize('h,want', [
    ('exact.test', 'exact'),
    ('EXACT.TEST.', 'exact'),       # case and a trailing dot do not matter
    ('y.a.test', 'head-a'),
    ('y.x.a.test', 'head-xa'),      # the longest head mask
    ('a.test', 'none'),             # "*.a.test" needs a name before it
    ('b.test', 'dot-b'),            # ".b.test" is b.test too
    ('q.b.test', 'dot-b'),
    ('www.c.org', 'tail-c'),
    ('www.c.d.org', 'tail-cd'),     # the longest tail mask
    ('www.c', 'none'),
])
def test_hostnames(srv, h, want):
    assert srv.get('/?h=' + h).text == want + '|none'


@pytest.mark.parametrize('r,want', [('abcx', 'caseless'), ('ABC', 'caseless'), ('def', 'case'), ('DEF', 'none')])
def test_regex_case(srv, r, want):
    assert srv.get('/?r=' + r).text == 'none|' + want


@pytest.mark.parametrize('block,message', [
    ('map $uri $m { hostnames; *.a.test x; *.a.test y; }', 'conflicting parameter "*.a.test"'),
    ('map $uri $m { hostnames; .a.test x; a.test y; }', 'conflicting parameter "a.test"'),
    ('map $uri $m { a x; a y; }', 'conflicting parameter "a"'),
])
def test_rejected_at_t(prefix, run_cli, block, message):
    fails_at(prefix, run_cli, 'http {\n    %s\n}\n' % block, block, message)


@pytest.mark.parametrize('request_line,status', [
    (b'TRACE / HTTP/1.1', 405),
    # nginx 1.22 takes no authority-form target (400) and answers CONNECT /x from the static module (405)
    pytest.param(b'CONNECT example.test:443 HTTP/1.1', 405, marks=pytest.mark.hayate_only),
    pytest.param(b'CONNECT /x HTTP/1.1', 400, marks=pytest.mark.hayate_only),
])
def test_trace_and_connect(server, request_line, status):
    s = server(simple('location / { return 200 "ok"; }'))
    r = s.raw(request_line + b'\r\nHost: localhost\r\nConnection: close\r\n\r\n')
    assert r.status == status
