"""The Location of hayate's own redirects and the bodiless answers (nginx's ngx_http_core_module docs:
server_name_in_redirect, port_in_redirect, absolute_redirect; the host is the request's Host, else the local
address), `return 444`, and the status codes whose answer has no body."""
import socket

import pytest

CONF = '''
http {
    server {
        listen 127.0.0.1:{port};
        listen [::1]:{port};
        server_name primary.test alias.test;
        root {html};
        location /snr/ { server_name_in_redirect on; }
        location /nop/ { port_in_redirect off; }
        location = /close { return 444; }
        location = /r303 { return 303 /target; }
        location = /r307 { return 307 http://example.test/t; }
        location = /r308 { return 308 /target; }
        location = /s204 { return 204; }
        location = /s304 { return 304; }
    }
    server {
        listen 127.0.0.1:{port2};
        server_name ~^re\\.test$ other.test;
        root {html};
        location /snr/ { server_name_in_redirect on; }
    }
}
'''

FILES = {'html/snr/d/i.txt': 'x', 'html/nop/d/i.txt': 'x', 'html/plain/d/i.txt': 'x'}


@pytest.fixture
def srv(server):
    return server(CONF, files=FILES)


def test_server_name_in_redirect(srv):
    r = srv.get('/snr/d', host='alias.test')
    assert r.status == 301 and r.header('Location') == 'http://primary.test:%d/snr/d/' % srv.port


def test_server_name_in_redirect_with_a_regex_first_name(srv):
    # the first name is a regex: nginx's server_name is then empty... and the Host is used
    r = srv.get('/snr/d', host='other.test', port=srv.port2)
    assert r.status == 301 and r.header('Location').endswith(':%d/snr/d/' % srv.port2)


def test_port_in_redirect_off(srv):
    r = srv.get('/nop/d', host='alias.test')
    assert r.status == 301 and r.header('Location') == 'http://alias.test/nop/d/'


@pytest.mark.parametrize('host', ['127.0.0.1', pytest.param('::1', marks=pytest.mark.hayate_only)])
def test_no_host_uses_the_local_address(srv, host):
    c = socket.create_connection((host, srv.port), timeout=5)
    c.sendall(b'GET /plain/d HTTP/1.0\r\n\r\n')
    data = b''
    while True:
        chunk = c.recv(65536)
        if not chunk:
            break
        data += chunk
    c.close()
    head = data.split(b'\r\n\r\n')[0].decode()
    want = '127.0.0.1' if host == '127.0.0.1' else '[::1]'  # nginx 1.22 forgets the brackets: "http://::1:PORT"
    assert head.startswith('HTTP/1.1 301') and ('\r\nLocation: http://%s:%d/plain/d/' % (want, srv.port)) in head, head


def test_return_444_closes_without_an_answer(srv):
    c = socket.create_connection(('127.0.0.1', srv.port), timeout=5)
    c.sendall(b'GET /close HTTP/1.1\r\nHost: x\r\n\r\n')
    assert c.recv(65536) == b''
    c.close()


@pytest.mark.parametrize('path,status,location', [
    ('/r303', 303, '/target'), ('/r307', 307, 'http://example.test/t'), ('/r308', 308, '/target')])
def test_return_redirect_codes(srv, path, status, location):
    r = srv.get(path, host='alias.test')
    assert r.status == status
    loc = r.header('Location')
    assert loc == location or loc == 'http://alias.test:%d%s' % (srv.port, location)
    assert r.header('Content-Type') == 'text/html' and r.body


@pytest.mark.parametrize('path,status', [('/s204', 204), ('/s304', 304)])
def test_bodiless_codes(srv, path, status):
    r = srv.get(path)
    assert r.status == status and r.body == b''
    assert r.header('Content-Length') in (None, '0')
