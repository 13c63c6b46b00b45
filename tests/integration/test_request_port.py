"""$request_port and $is_request_port (nginx 1.29): the port the client named, from an absolute-form request target
or else the Host header (":authority" over HTTP/2); empty, and $is_request_port empty, when it named none."""
import pytest

from conftest import simple
from helpers.h2client import H2

pytestmark = pytest.mark.hayate_only  # nginx 1.22 has not these variables

CONF = simple('location / { return 200 "[$is_request_port$request_port]"; }', http_extra='http2 on;')


@pytest.fixture
def srv(server):
    return server(CONF)


@pytest.mark.parametrize('req,want', [
    (b'GET / HTTP/1.0\r\n\r\n', b'[]'),
    (b'GET / HTTP/1.0\r\nHost: localhost\r\n\r\n', b'[]'),
    (b'GET / HTTP/1.0\r\nHost: localhost:8080\r\n\r\n', b'[:8080]'),
    (b'GET http://localhost:8080 HTTP/1.0\r\nHost: localhost\r\n\r\n', b'[:8080]'),
    (b'GET http://localhost:8080/x?a HTTP/1.0\r\nHost: localhost:9000\r\n\r\n', b'[:8080]'),
    (b'GET http://localhost/ HTTP/1.0\r\nHost: localhost:9000\r\n\r\n', b'[]'),
    (b'GET / HTTP/1.0\r\nHost: [::1]:8443\r\n\r\n', b'[:8443]'),
    (b'GET / HTTP/1.0\r\nHost: [::1]\r\n\r\n', b'[]'),
])
def test_http1(srv, req, want):
    r = srv.raw(req)
    assert r.status == 200 and r.body == want, (req, r.body)


def test_http2_authority(srv):
    c = H2(srv.port)
    try:
        sid = c.request('/', authority='localhost:8081')
        assert c.response(sid)[2] == b'[:8081]'
        sid = c.request('/', authority='localhost')
        assert c.response(sid)[2] == b'[]'
    finally:
        c.close()
