"""FastCGI records as the fastcgi module reads them (ngx_http_fastcgi_module): padding, a head split across
STDOUT records, STDERR before and inside the body (logged without its trailing line end; fastcgi_catch_stderr
makes it a 502), END_REQUEST before a complete head, an unsupported version or record type (502), bytes after
END_REQUEST, a parameter value longer than 127 bytes (a four-byte length) arriving whole. The peer is a raw FastCGI
responder in this file whose records are chosen by DOCUMENT_URI; they run against Debian's nginx too."""
import struct

import pytest

from conftest import simple
from helpers.rawpeer import RawPeer, fcgi_params


def rec(t, content, pad=0, version=1):
    return struct.pack('>BBHHBB', version, t, 1, len(content), pad, 0) + content + b'\0' * pad


END = rec(3, b'\0' * 8)
HEAD = b'Content-Type: text/plain\r\n\r\n'

ANSWERS = {
    '/pad': rec(6, HEAD + b'padded', pad=5) + END,
    '/split': rec(6, b'Content-Ty') + rec(6, b'pe: text/plain\r\nX-A: 1\r') + rec(6, b'\n\r\nbo') + rec(6, b'dy') + END,
    '/stderr': rec(7, b'early warning.\n') + rec(6, HEAD + b'one') + rec(7, b'late warning\r\n') + rec(6, b'two') + END,
    '/catch': rec(7, b'PHP Fatal error: x\n') + rec(6, HEAD + b'never') + END,
    '/endfirst': rec(6, b'Content-Type: text/pl') + END,
    '/badver': rec(6, HEAD + b'x', version=2) + END,
    '/badtype': rec(11, b'zz') + rec(6, HEAD + b'x') + END,
    '/after': rec(6, HEAD + b'fine') + END + b'garbage after the end',
    # 9 KB of stderr and the head in one write: more than fastcgi_buffer_size, which bounds the head alone
    '/bigstderr': rec(7, b'sample stderr text' * 512) + rec(6, HEAD + b'SEE-THIS') + END,
}


class FcgiPeer(RawPeer):
    def __init__(self):
        super().__init__(16)

    def serve(self, c):
        f = c.makefile('rb')
        try:
            pdata = b''
            while True:
                h = f.read(8)
                if len(h) < 8:
                    return
                _, t, _, n, pad, _ = struct.unpack('>BBHHBB', h)
                body = f.read(n + pad)[:n]
                if t == 4:
                    pdata += body
                if t == 5 and n == 0:
                    break
            env = fcgi_params(pdata)
            uri = env.get('DOCUMENT_URI', '')
            if uri == '/long':
                out = HEAD + ('%d' % len(env.get('QUERY_STRING', ''))).encode()
                c.sendall(rec(6, out) + END)
            else:
                c.sendall(ANSWERS.get(uri, rec(6, b'Status: 500 X\r\n\r\n') + END))
        except OSError:
            pass
        finally:
            f.close()
            c.close()


@pytest.fixture
def srv(server):
    peer = FcgiPeer()
    s = server(simple('''location / { fastcgi_pass 127.0.0.1:%d; fastcgi_param DOCUMENT_URI $document_uri;
        fastcgi_param QUERY_STRING $query_string; }
        location /catch { fastcgi_pass 127.0.0.1:%d; fastcgi_param DOCUMENT_URI $document_uri;
                          fastcgi_catch_stderr "Fatal error"; }''' % (peer.port, peer.port)))
    yield s
    peer.stop()


@pytest.mark.parametrize('uri,body', [('/pad', b'padded'), ('/split', b'body'), ('/stderr', b'onetwo'),
                                      ('/after', b'fine'), ('/bigstderr', b'SEE-THIS')])
def test_records(srv, uri, body):
    r = srv.get(uri)
    assert r.status == 200 and r.body == body, r


def test_split_head_fields(srv):
    assert srv.get('/split').header('X-A') == '1'


def test_stderr_logged_without_line_end(srv):
    srv.get('/stderr')
    log = srv.error_log()
    assert 'FastCGI sent in stderr: "early warning" while reading response header from upstream' in log, log
    assert 'FastCGI sent in stderr: "late warning" while reading upstream' in log, log


@pytest.mark.parametrize('uri', ['/catch', '/endfirst', '/badver', '/badtype'])
def test_502(srv, uri):
    assert srv.get(uri).status == 502


def test_long_parameters(srv):
    q = 'v=' + 'x' * 300
    r = srv.get('/long?' + q)
    assert r.status == 200 and r.body == b'%d' % len(q)
