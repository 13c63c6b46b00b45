"""add_trailer (ngx_http_headers_module): trailer fields after a chunked HTTP/1.1 body and as the last HEADERS
frame of an HTTP/2 stream; the statuses (and `always`), inheritance, empty values, variables evaluated as the
response ends ($sent_trailer_NAME, $body_bytes_sent, $upstream_*)."""
import re
import socket
import time
import zlib

import h2.events
import pytest

from conftest import IS_NGINX, simple
from helpers.h2client import H2

BODY = b'SEE-THIS'
BIG = b'x' * 300000

TEXT = b''.join(b'line %d of a text that compresses\n' % i for i in range(20000))

FILES = {'html/gz/a.txt': TEXT, 'html/t1': BODY, 'html/header': b'', 'html/own/a': BODY, 'html/in/a': BODY, 'html/big': BIG,
         'html/empty': b'', 'html/cont': BODY}

CONF = simple('''
        root {html};
        add_trailer X-Var $host;
        add_trailer X-Always $host always;
        add_trailer X-Empty '';
        add_trailer X-Sent-Trailer $sent_trailer_x_var;
        add_trailer X-Complex $host:$uri;
        location /t1 { }
        location /nx { }
        location /header { add_header X-Var foo; }
        location /own/ { add_trailer X-Own own; }
        location /in/ { }
        location /not_chunked { chunked_transfer_encoding off; alias {html}/t1; }
        location = /gone { return 410; }
        location = /ret { return 200 "ret"; }
        location /big { add_trailer X-Bytes $body_bytes_sent; add_trailer X-Time $request_time; }
        location /proxy {
            proxy_pass http://127.0.0.1:{port}/big;
            add_trailer X-Length $upstream_response_length;
            add_trailer X-Up-Status $upstream_status;
        }
        location /gz/ {
            gzip on;
            gzip_min_length 1;
            gzip_types text/plain;
            add_trailer X-Gz $sent_http_content_encoding;
        }
        location /multi {
            add_trailer Foo foo;
            add_trailer Foo bar;
            add_trailer X-Sent-Foo $sent_trailer_foo;
            return 200 "m";
        }
''', http_extra='add_trailer X-Http http;')


def raw_get(port, path, version='HTTP/1.1', method='GET', headers=()):
    """One request on its own connection (Connection: close); the whole reply as bytes."""
    s = socket.create_connection(('127.0.0.1', port), timeout=10)
    req = '%s %s %s\r\nHost: localhost\r\nConnection: close\r\n' % (method, path, version)
    req += ''.join('%s: %s\r\n' % h for h in headers) + '\r\n'
    s.sendall(req.encode())
    data = b''
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    s.close()
    return data


def parse_fields(block):
    out = []
    for line in block.split(b'\r\n'):
        if line:
            k, v = line.split(b':', 1)
            out.append((k.decode(), v.strip().decode()))
    return out


class Reply:
    def __init__(self, data):
        head, rest = data.split(b'\r\n\r\n', 1)
        lines = head.split(b'\r\n')
        self.status = int(lines[0].split()[1])
        self.headers = parse_fields(b'\r\n'.join(lines[1:]))
        self.chunked = self.header('Transfer-Encoding') == 'chunked'
        self.trailers = []
        if not self.chunked:
            self.body = rest
            return
        body = b''
        while True:  # chunk-size CRLF data CRLF ... 0 CRLF trailer-section CRLF (RFC 9112 §7.1)
            line, rest = rest.split(b'\r\n', 1)
            n = int(line.split(b';')[0], 16)
            if n == 0:
                break
            body += rest[:n]
            assert rest[n:n + 2] == b'\r\n'
            rest = rest[n + 2:]
        assert rest.endswith(b'\r\n'), rest
        self.trailers = parse_fields(rest[:-2]) if rest != b'\r\n' else []
        self.trailer_block = rest
        self.body = body

    def header(self, name):
        for k, v in self.headers:
            if k.lower() == name.lower():
                return v
        return None

    def trailer(self, name):
        vals = [v for k, v in self.trailers if k.lower() == name.lower()]
        return vals[0] if vals else None

    def trailer_names(self):
        return [k.lower() for k, _ in self.trailers]


@pytest.fixture
def srv(server):
    return server(CONF, files=FILES)


def get(srv, path, **kw):
    return Reply(raw_get(srv.port, path, **kw))


def test_trailers_after_chunked_body(srv):
    r = get(srv, '/t1')
    assert r.status == 200 and r.chunked
    assert r.header('Content-Length') is None  # the body is chunked so the trailers can follow
    assert r.body == BODY
    assert r.header('X-Var') is None and r.header('X-Always') is None  # not in the head
    assert r.trailer('X-Var') == 'localhost'
    assert r.trailer('X-Always') == 'localhost'
    assert r.trailer('X-Complex') == 'localhost:/t1'
    assert 'x-empty' not in r.trailer_names()  # an empty value adds nothing
    assert 'x-http' not in r.trailer_names()   # the server level has its own add_trailer


def test_sent_trailer_variable(srv):
    r = get(srv, '/t1')
    assert r.trailer('X-Sent-Trailer') == 'localhost'  # reads a trailer added before it


def test_error_status_only_always(srv):
    r = get(srv, '/nx')
    assert r.status == 404 and r.chunked
    assert r.trailer('X-Always') == 'localhost'
    assert r.trailer('X-Var') is None
    r = get(srv, '/gone')
    assert r.status == 410 and r.trailer('X-Always') == 'localhost' and r.trailer('X-Var') is None


def test_empty_body_and_header_of_same_name(srv):
    r = get(srv, '/header')
    assert r.status == 200 and r.body == b''
    assert r.header('X-Var') == 'foo'
    assert r.trailer('X-Var') == 'localhost'


def test_return_text(srv):
    r = get(srv, '/ret')
    assert r.body == b'ret' and r.trailer('X-Var') == 'localhost'


def test_inheritance(srv):
    r = get(srv, '/own/a')
    assert r.trailer('X-Own') == 'own'
    assert r.trailer('X-Var') is None and r.trailer('X-Always') is None  # a level with its own drops the parent's
    r = get(srv, '/in/a')
    assert r.trailer('X-Var') == 'localhost'


def test_multiple_trailers_of_one_name(srv):
    r = get(srv, '/multi')
    assert [v for k, v in r.trailers if k == 'Foo'] == ['foo', 'bar']
    assert r.trailer('X-Sent-Foo') in ('foo', 'foo, bar')


@pytest.mark.hayate_only  # nginx 1.22: the first line; nginx 1.23+ joins them, as hayate
def test_sent_trailer_joined(srv):
    assert get(srv, '/multi').trailer('X-Sent-Foo') == 'foo, bar'


def test_no_trailers_http10(srv):
    data = raw_get(srv.port, '/t1', version='HTTP/1.0')
    r = Reply(data)
    assert not r.chunked and r.body == BODY
    assert r.header('Content-Length') == str(len(BODY))
    assert b'X-Always' not in data


def test_no_trailers_when_not_chunked(srv):
    data = raw_get(srv.port, '/not_chunked')
    r = Reply(data)
    assert not r.chunked and r.body == BODY and r.header('Content-Length') == str(len(BODY))
    assert b'X-Always' not in data


def test_no_trailers_for_head(srv):
    data = raw_get(srv.port, '/t1', method='HEAD')
    assert b'X-Always' not in data and b'\r\n0\r\n' not in data


def test_variables_evaluated_at_the_end(srv):
    r = get(srv, '/big')
    assert r.body == BIG
    assert int(r.trailer('X-Bytes')) > 0
    assert re.fullmatch(r'\d+\.\d{3}', r.trailer('X-Time'))


@pytest.mark.hayate_only  # nginx counts what the socket took before the last buffer; hayate the whole body
def test_body_bytes_sent_is_the_whole_body(srv):
    r = get(srv, '/big')
    assert int(r.trailer('X-Bytes')) == len(BIG)


def test_upstream_variables(srv):
    r = get(srv, '/proxy')
    assert r.body == BIG
    assert r.trailer('X-Up-Status') == '200'
    assert int(r.trailer('X-Length')) == len(BIG)
    assert r.trailer('X-Var') is None  # the location has its own add_trailer


def test_compressed_body(srv):
    """A body a filter compresses as a stream ends with the trailers too."""
    r = get(srv, '/gz/a.txt', headers=[('Accept-Encoding', 'gzip')])
    assert r.header('Content-Encoding') == 'gzip'
    assert zlib.decompress(r.body, 16 + zlib.MAX_WBITS) == TEXT
    assert r.trailer('X-Gz') == 'gzip'


def test_keepalive_after_trailers(srv):
    """The connection stays usable: the trailer section ends where the next response starts."""
    s = socket.create_connection(('127.0.0.1', srv.port), timeout=10)
    s.sendall(b'GET /t1 HTTP/1.1\r\nHost: localhost\r\n\r\nGET /ret HTTP/1.1\r\nHost: localhost\r\n'
              b'Connection: close\r\n\r\n')
    data = b''
    while True:
        c = s.recv(65536)
        if not c:
            break
        data += c
    s.close()
    first, second = data.split(b'HTTP/1.1 200', 2)[1:]
    assert first.endswith(b'\r\n0\r\nX-Var: localhost\r\nX-Always: localhost\r\nX-Sent-Trailer: localhost\r\n'
                          b'X-Complex: localhost:/t1\r\n\r\n')
    assert Reply(b'HTTP/1.1 200' + second).body == b'ret'


# ---- HTTP/2

H2_CONF = '''
http {
    server {
        listen 127.0.0.1:{port} http2;
        root {html};
        location / { add_trailer X-Var $host; }
        location /cont {
            add_trailer X-Long $arg_h;
            add_trailer X-Long $arg_h;
            add_trailer X-Long $arg_h;
            add_trailer X-Long $arg_h;
            add_trailer X-Long $arg_h;
        }
        location = /nx404 { add_trailer X-Var $host; }
        location /proxy {
            proxy_pass http://127.0.0.1:{port2}/big;
            add_trailer X-Length $upstream_response_length;
        }
    }
    server {
        listen 127.0.0.1:{port2};
        root {html};
    }
}
'''


def h2_exchange(port, path, timeout=10.0):
    """The events of one stream, in order, until it ends."""
    c = H2(port)
    sid = c.request(path)
    deadline = time.monotonic() + timeout
    out = []
    i = 0
    while time.monotonic() < deadline:
        while i < len(c.events):
            ev = c.events[i]
            i += 1
            if getattr(ev, 'stream_id', None) == sid:
                out.append(ev)
                if isinstance(ev, h2.events.DataReceived) and ev.flow_controlled_length:
                    c.conn.acknowledge_received_data(ev.flow_controlled_length, sid)
                    c.flush_quiet()
                if isinstance(ev, (h2.events.StreamEnded, h2.events.StreamReset)):
                    return out
        c.read(0.2)
    raise TimeoutError(path)


def kinds(evs):
    return [type(e).__name__ for e in evs]


def test_h2_trailers_frame(server):
    s = server(H2_CONF, files=FILES)
    evs = h2_exchange(s.port, '/t1')
    assert kinds(evs) == ['ResponseReceived', 'DataReceived', 'TrailersReceived', 'StreamEnded']
    head = dict(evs[0].headers)
    assert head[':status'] == '200' and 'x-var' not in head
    assert evs[0].stream_ended is None
    assert evs[1].data == BODY and evs[1].stream_ended is None
    assert dict(evs[2].headers) == {'x-var': 'localhost'}
    assert evs[2].stream_ended is not None  # the trailers' HEADERS frame carries END_STREAM


def test_h2_trailers_without_data(server):
    s = server(H2_CONF, files=FILES)
    evs = h2_exchange(s.port, '/empty')
    # no (empty) DATA frame between the head and the trailers
    assert kinds(evs) == ['ResponseReceived', 'TrailersReceived', 'StreamEnded']
    assert dict(evs[1].headers) == {'x-var': 'localhost'}


def test_h2_no_trailers_on_error(server):
    s = server(H2_CONF, files=FILES)
    evs = h2_exchange(s.port, '/nx404')
    assert dict(evs[0].headers)[':status'] == '404'
    assert 'TrailersReceived' not in kinds(evs)


def test_h2_long_trailers_continuation(server):
    s = server(H2_CONF, files=FILES)
    evs = h2_exchange(s.port, '/cont?h=' + 'x' * 4000)
    assert kinds(evs) == ['ResponseReceived', 'DataReceived', 'TrailersReceived', 'StreamEnded']
    t = evs[2].headers
    assert len(t) == 5 and all(k == 'x-long' and v == 'x' * 4000 for k, v in t)


def test_h2_proxied_stream(server):
    s = server(H2_CONF, files=FILES)
    evs = h2_exchange(s.port, '/proxy')
    names = kinds(evs)
    assert names[0] == 'ResponseReceived' and names[-2:] == ['TrailersReceived', 'StreamEnded']
    assert b''.join(e.data for e in evs if isinstance(e, h2.events.DataReceived)) == BIG
    assert dict(evs[-2].headers) == {'x-length': str(len(BIG))}
