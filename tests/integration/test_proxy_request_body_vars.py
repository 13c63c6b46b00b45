"""The proxied request is built once the client's body is read, as nginx creates it (ngx_http_read_client_request_body
then ngx_http_upstream_init): proxy_set_header and proxy_set_body may use $request_body and $request_body_file,
also when the body itself is not passed on (proxy_pass_request_body off, proxy_set_body), which nginx reads
anyway."""
import re

import pytest

from conftest import simple


def conf():
    return simple('''
        location /hdr { proxy_set_header X-Body $request_body; proxy_set_header X-File $request_body_file;
                        proxy_pass http://127.0.0.1:{port}/echo; }
        location /file { client_body_in_file_only on; proxy_set_header X-Body $request_body;
                         proxy_set_header X-File $request_body_file; proxy_pass http://127.0.0.1:{port}/echo; }
        location /nobody { proxy_pass_request_body off; proxy_set_header Content-Length "";
                           proxy_set_header X-Body $request_body; proxy_pass http://127.0.0.1:{port}/echo; }
        location /setbody { proxy_set_body "wrapped=$request_body"; proxy_pass http://127.0.0.1:{port}/echo; }
        location /echo { return 200 "body=[$http_x_body] file=[$http_x_file] len=[$http_content_length]\\n"; }''')


@pytest.fixture
def srv(server):
    return server(conf())


def test_request_body_in_a_header(srv):
    r = srv.get('/hdr', method='POST', body=b'hello')
    assert r.status == 200 and r.body == b'body=[hello] file=[] len=[5]\n'


def test_request_body_file_in_a_header(srv):
    r = srv.get('/file', method='POST', body=b'hello')
    m = re.match(rb'body=\[\] file=\[(/[^\]]+)\] len=\[5\]\n$', r.body)
    assert r.status == 200 and m, r.body


def test_body_read_though_not_passed(srv):
    r = srv.get('/nobody', method='POST', body=b'hello')
    assert r.status == 200 and r.body == b'body=[hello] file=[] len=[]\n'


def test_set_body_uses_the_body(srv):
    r = srv.get('/setbody', method='POST', body=b'hello')
    assert r.status == 200 and r.body == b'body=[] file=[] len=[13]\n'  # "wrapped=hello"


UNBUFFERED = '''
        proxy_request_buffering off;
        client_body_buffer_size 2k;
        location / { add_header X-Body "$request_body"; proxy_pass http://127.0.0.1:{port}/up; }
        location /up { return 200 "up\\n"; }'''


def test_unbuffered_body_kept_when_it_fits(server):
    # nginx's unbuffered reader keeps a body that fits in client_body_buffer_size: $request_body after the exchange
    srv = server(simple(UNBUFFERED))
    r = srv.get('/x', method='POST', body=b'0123456789' * 128)
    assert r.status == 200 and r.body == b'up\n'
    assert r.header('X-Body') == '0123456789' * 128


def test_unbuffered_body_too_large_is_not_kept(server):
    srv = server(simple(UNBUFFERED))
    r = srv.get('/x', method='POST', body=b'a' * 4096)
    assert r.status == 200 and r.body == b'up\n'
    assert r.header('X-Body') is None
