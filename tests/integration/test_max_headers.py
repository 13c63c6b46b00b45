"""max_headers (nginx 1.29, http and server): more request header fields than the limit is 400 ("Request Header Or
Cookie Too Large" page, nginx's 494), over HTTP/1 and HTTP/2. Fields ignore_invalid_headers drops are not counted;
on HTTP/2 neither are the pseudo-headers, the cookie crumbs nor the Host that :authority implies. The limit is the
one of the server the request's Host selects."""
import pytest

from conftest import simple
from helpers.h2client import H2

pytestmark = pytest.mark.hayate_only  # nginx 1.22 has no max_headers

CONF = '''
http {
    http2 on;
    max_headers 5;
    server {
        listen 127.0.0.1:{port};
        server_name localhost;
        location / { return 200 "ok"; }
    }
    server {
        listen 127.0.0.1:{port};
        server_name big;
        max_headers 20;
        location / { return 200 "big"; }
    }
}
'''


@pytest.fixture
def srv(server):
    return server(CONF)


def test_http1_limit(srv):
    # Connection: close is added by the client helper: one field more
    r = srv.get('/', headers=[('X-Blah', str(i)) for i in range(1, 4)])  # Host + 3 + Connection = 5
    assert r.status == 200 and r.body == b'ok'
    r = srv.get('/', headers=[('X-Blah', str(i)) for i in range(1, 5)])  # 6
    assert r.status == 400
    assert b'too large' in r.body.lower()  # the page of 494 (hayate's words, nginx's "Request Header Or Cookie ...")
    assert 'client sent too many header lines' in srv.error_log()


def test_http1_server_selected_by_host(srv):
    r = srv.get('/', host='big', headers=[('X-Blah', str(i)) for i in range(1, 15)])
    assert r.status == 200 and r.body == b'big'
    r = srv.get('/', host='big', headers=[('X-Blah', str(i)) for i in range(1, 25)])
    assert r.status == 400


def test_http1_ignored_fields_not_counted(srv):
    r = srv.get('/', headers=[('X_Under', '1'), ('X_Score', '2'), ('X-Blah', '1'), ('X-Blah', '2'), ('X-Blah', '3')])
    assert r.status == 200  # the two fields with '_' are dropped (underscores_in_headers off)


def h2_status(port, headers, authority='localhost'):
    c = H2(port)
    try:
        sid = c.request('/', headers=headers, authority=authority)
        status, _, _ = c.response(sid)
        return status
    finally:
        c.close()


def test_http2_limit(srv):
    five = [('x-blah', str(i)) for i in range(5)]
    assert h2_status(srv.port, five) == 200  # :authority's Host is not the client's field
    assert h2_status(srv.port, five + [('x-blah', '6')]) == 400
    # cookie crumbs are not counted (nginx keeps them apart)
    assert h2_status(srv.port, five + [('cookie', 'a=1'), ('cookie', 'b=2')]) == 200
    # a Host field the client sends is
    assert h2_status(srv.port, five + [('host', 'localhost')]) == 400


def test_default_allows_many(server):
    s = server(simple('location / { return 200 "ok"; }'))
    r = s.get('/', headers=[('X-Blah', str(i)) for i in range(100)])
    assert r.status == 200


def test_invalid_value(run_cli, prefix):
    conf = prefix.conf(simple('location / { }', http_extra='max_headers lots;'))
    res = run_cli(['-t', '-p', prefix.tmp + '/', '-c', conf])
    assert res.rc != 0 and 'max_headers' in res.err, res.err
