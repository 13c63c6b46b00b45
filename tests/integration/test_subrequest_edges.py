"""Subrequests (mirror, auth_request) past test_mirror.py and test_auth_request.py: a mirrored body the client's
reader kept in a temp file, a mirror target that streams its answer in pieces or cuts it, auth_request behind
realip (the subrequest sees the client's real address) and over HTTP/2."""
import pytest

from conftest import IS_NGINX, simple
from helpers.backend import Backend
from helpers.h2client import H2


@pytest.fixture
def app():
    b = Backend().start()
    b.handler = lambda r: b.reply(200, ('app %d' % len(r.body)).encode())
    yield b
    b.stop()


@pytest.fixture
def mir():
    b = Backend().start()
    yield b
    b.stop()


def test_mirrored_body_from_a_temp_file(server, app, mir):
    mir.handler = lambda r: mir.reply(200, b'ignored')
    srv = server(simple('''client_body_buffer_size 8k;
        location = /m { internal; proxy_pass http://127.0.0.1:%d/mirror; }
        location / { mirror /m; proxy_pass http://127.0.0.1:%d; }''' % (mir.port, app.port)))
    body = bytes(range(256)) * 400  # 100 KB: past the buffer, on disk
    r = srv.get('/up', method='POST', body=body)
    assert r.status == 200 and r.body == b'app %d' % len(body)
    mir.wait_requests(1)
    assert mir.requests[0].body == body
    assert app.requests[0].body == body


@pytest.mark.parametrize('answer', ['streamed', 'cut'])
def test_mirror_target_streams_or_cuts(server, app, mir, answer):
    if answer == 'streamed':
        mir.handler = lambda r: Backend.chunked(200, [b'a' * 70000, 0.1, b'b' * 70000, 0.1, b'c'])
    else:
        mir.handler = lambda r: [b'HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n' + b'x' * 5000, 0.1]
        mir.close_after = 1
    srv = server(simple('''
        location = /m { internal; proxy_pass http://127.0.0.1:%d/mirror; proxy_http_version 1.1;
                        proxy_buffering off; }
        location / { mirror /m; proxy_pass http://127.0.0.1:%d; }''' % (mir.port, app.port)))
    for _ in range(3):
        r = srv.get('/x')
        assert r.status == 200 and r.body == b'app 0'
    mir.wait_requests(3)


def test_auth_request_behind_realip(server, app):
    auth = Backend().start()
    try:
        auth.handler = lambda r: auth.reply(200 if r.header('X-Seen') == '10.9.8.7' else 403, b'')
        srv = server(simple('''set_real_ip_from 127.0.0.1; real_ip_header X-Real-IP;
            location = /auth { internal; proxy_pass http://127.0.0.1:%d;
                               proxy_set_header X-Seen $remote_addr; }
            location / { auth_request /auth; proxy_pass http://127.0.0.1:%d; }''' % (auth.port, app.port)))
        assert srv.get('/p', headers=[('X-Real-IP', '10.9.8.7')]).status == 200
        assert srv.get('/p', headers=[('X-Real-IP', '10.1.1.1')]).status == 403
    finally:
        auth.stop()


@pytest.mark.hayate_only  # nginx 1.22 has no "http2 on"
def test_auth_request_over_h2(server, app):
    auth = Backend().start()
    try:
        auth.handler = lambda r: auth.reply(200 if r.header('X-UA') == 'tester/1' else 401, b'')
        srv = server(simple('''
            location = /auth { internal; proxy_pass http://127.0.0.1:%d; proxy_set_header X-UA $http_user_agent; }
            location / { auth_request /auth; proxy_pass http://127.0.0.1:%d; }''' % (auth.port, app.port),
                            'http2 on;'))
        c = H2(srv.port)
        try:
            assert c.get('/p', headers=[('user-agent', 'tester/1')])[0] == 200
            assert c.get('/p', headers=[('user-agent', 'other')])[0] == 401
        finally:
            c.close()
    finally:
        auth.stop()
