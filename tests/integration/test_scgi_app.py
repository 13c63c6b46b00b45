"""scgi_pass to an SCGI peer (a real process; helpers/appservers.py), over a unix socket and TCP (issue 13).

Written from nginx's ngx_http_scgi_module documentation and checked against Debian's nginx (HY_BIN=/usr/sbin/nginx).
"""
import os
import shutil

import pytest

from conftest import IS_NGINX, REPO
from helpers.appservers import scgi_peer

CONF = '''
http {
    server {
        listen 127.0.0.1:{port};
        root {html};
        location / {
            include scgi_params;
            scgi_param X_CONF conf-value;
            scgi_param X_MAYBE $arg_maybe if_not_empty;
            scgi_pass %s;
        }
    }
}
'''


@pytest.fixture(params=['unix', 'tcp'])
def peer(request, prefix):
    b = scgi_peer(prefix.tmp, unix=request.param == 'unix')
    yield b
    b.stop()


@pytest.fixture
def srv(server, prefix, peer):
    src = '/etc/nginx/scgi_params' if IS_NGINX else os.path.join(REPO, 'conf', 'scgi_params')
    shutil.copy(src, prefix.path('conf/scgi_params'))
    return server(CONF % peer.addr)


def env_of(r):
    head, _, body = r.body.partition(b'\nBODY=')
    return dict(l.split('=', 1) for l in head.decode().splitlines()), body


def test_scgi_environment(srv, prefix):
    r = srv.get('/path/x?q=1', headers={'X-Client': 'c1'})
    assert r.status == 200
    assert r.header('x-scgi') == 'yes'
    env, body = env_of(r)
    # SCGI's own rules: CONTENT_LENGTH first and always present, SCGI=1
    assert env['CONTENT_LENGTH'] == '0'
    assert env['SCGI'] == '1'
    assert env['REQUEST_METHOD'] == 'GET'
    assert env['REQUEST_URI'] == '/path/x?q=1'
    assert env['QUERY_STRING'] == 'q=1'
    assert env['HTTP_X_CLIENT'] == 'c1'
    assert env['X_CONF'] == 'conf-value'
    assert 'X_MAYBE' not in env
    assert env['SERVER_PORT'] == str(prefix.port)
    assert body == b''


def test_scgi_body_and_if_not_empty(srv):
    r = srv.get('/post?maybe=here', method='POST', body=b'a=1&b=2',
                headers={'Content-Type': 'application/x-www-form-urlencoded'})
    assert r.status == 200
    env, body = env_of(r)
    assert env['CONTENT_LENGTH'] == '7'
    assert env['REQUEST_METHOD'] == 'POST'
    assert env['X_MAYBE'] == 'here'
    assert body == b'a=1&b=2'


def test_scgi_status_header(srv):
    r = srv.get('/status/418')
    assert r.status == 418
    assert r.body == b'status 418'


def test_scgi_peer_down_is_502(srv, peer):
    srv.ignore_log = r'\[crit\].*connect\(\) to unix:.*failed \(2: No such file or directory\)'
    peer.stop()
    if peer.addr.startswith('unix:') and os.path.exists(peer.addr[5:]):
        os.unlink(peer.addr[5:])
    assert srv.get('/x').status == 502
