"""empty_gif (ngx_http_empty_gif_module): a location answers a 1x1 transparent GIF, 43 bytes."""
import pytest

from conftest import simple

# nginx's ngx_empty_gif image
GIF = bytes.fromhex('47494638396101000100800100000000ffffff21f90401000001002c00000000010001000002024c01003b')

CONF = simple('''
        location = /pixel.gif { empty_gif; }
        location /px { empty_gif; }
        location / { return 200 "other"; }
''')


@pytest.fixture
def srv(server):
    return server(CONF)


def test_get_answers_the_gif(srv):
    r = srv.get('/pixel.gif')
    assert r.status == 200
    assert r.body == GIF
    assert len(GIF) == 43
    assert r.header('Content-Type') == 'image/gif'
    assert r.header('Content-Length') == '43'
    assert r.header('Last-Modified') == 'Mon, 28 Sep 1970 06:00:00 GMT'


def test_any_uri_of_the_location(srv):
    r = srv.get('/px/a/b.png?x=1')
    assert r.status == 200 and r.body == GIF
    assert srv.get('/elsewhere').body == b'other'


def test_head_has_no_body(srv):
    r = srv.head('/pixel.gif')
    assert r.status == 200
    assert r.body == b''
    assert r.header('Content-Type') == 'image/gif'
    assert r.header('Content-Length') == '43'


@pytest.mark.parametrize('method', ['POST', 'PUT', 'DELETE'])
def test_other_methods_405(srv, method):
    r = srv.get('/pixel.gif', method=method, body=b'abc')
    assert r.status == 405


def test_keepalive_after_body_discarded(srv):
    c = srv.conn()
    c.send(b'POST /pixel.gif HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc'
           b'GET /pixel.gif HTTP/1.1\r\nHost: x\r\n\r\n')
    assert c.read_response().status == 405
    r = c.read_response()
    assert r.status == 200 and r.body == GIF


def test_not_allowed_outside_location(server, prefix, run_cli):
    prefix.conf(simple('empty_gif;'))
    res = run_cli(['-t', '-c', prefix.path('conf/test.conf')])
    assert res.rc != 0
    assert 'test.conf:' in res.err and '"empty_gif" directive is not allowed here' in res.err
