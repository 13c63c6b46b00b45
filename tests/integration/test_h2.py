"""HTTP/2 (proto/h2.c): ALPN h2 and h2c with prior knowledge, nginx's directives, flow control, stream limits,
GOAWAY on shutdown and keepalive_requests, and the flood protections — with curl, nghttp, h2load and python3-h2
at frame level."""
import os
import re
import signal
import subprocess
import time

import pytest

from conftest import IS_NGINX
from helpers.tls import make_cert

import h2.errors
import h2.events
import h2.settings
from helpers.h2client import H2

pytestmark = pytest.mark.skipif(IS_NGINX, reason='hayate-specific limits and log wording')


@pytest.fixture(scope='module')
def cert(tmp_path_factory):
    return make_cert(str(tmp_path_factory.mktemp('h2certs')), 'ec', 'localhost', kind='ec')


def conf(cert, server_extra='', http_extra='', h2='http2 on;'):
    return '''
http {
    log_format h2 '$request|$server_protocol|$http2|$status|$body_bytes_sent';
    access_log {tmp}/logs/access.log h2;
    %s
    server {
        listen 127.0.0.1:{port};
        listen 127.0.0.1:{port2} ssl;
        %s
        ssl_certificate %s;
        ssl_certificate_key %s;
        root {html};
        location /ret { return 200 "proto=$server_protocol h2=$http2\\n"; }
        %s
    }
}
''' % (http_extra, h2, cert[0], cert[1], server_extra)


BIG = os.urandom(1 << 20)


def files():
    return {'html/index.html': 'hello\n', 'html/big.bin': BIG}


def curl(*args, timeout=20):
    r = subprocess.run(['curl', '-sk', '--max-time', '10'] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=timeout)
    return r.returncode, r.stdout


def access_lines(s, want=(), timeout=5.0):
    """The access log's lines, once every line in `want` is there (a stream's line is written when the stream
    closes, which may be just after the client has its last byte) or the deadline passed."""
    deadline = time.monotonic() + timeout
    while True:
        with open(s.tmp + '/logs/access.log') as f:
            lines = f.read().splitlines()
        if all(w in lines for w in want) or time.monotonic() > deadline:
            return lines
        time.sleep(0.05)


def wait_log(s, pattern, timeout=5.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if re.search(pattern, s.error_log()):
            return True
        time.sleep(0.05)
    return False


def test_curl_alpn_h2_and_prior_knowledge(server, cert):
    s = server(conf(cert), files=files())
    rc, out = curl('--http2', '-w', '|%{http_version}', 'https://127.0.0.1:%d/ret' % s.port2)
    assert rc == 0 and out == b'proto=HTTP/2.0 h2=h2\n|2'
    rc, out = curl('--http2-prior-knowledge', '-w', '|%{http_version}', 'http://127.0.0.1:%d/ret' % s.port)
    assert rc == 0 and out == b'proto=HTTP/2.0 h2=h2c\n|2'
    # HTTP/1.1 still works on both
    rc, out = curl('--http1.1', '-w', '|%{http_version}', 'http://127.0.0.1:%d/ret' % s.port)
    assert out == b'proto=HTTP/1.1 h2=\n|1.1'
    rc, out = curl('--http2', '-o', '-', 'https://127.0.0.1:%d/big.bin' % s.port2)
    assert rc == 0 and out == BIG
    want = ['GET /ret HTTP/2.0|HTTP/2.0|h2|200|21', 'GET /ret HTTP/2.0|HTTP/2.0|h2c|200|22',
            'GET /ret HTTP/1.1|HTTP/1.1||200|19', 'GET /big.bin HTTP/2.0|HTTP/2.0|h2|200|%d' % len(BIG)]
    lines = access_lines(s, want)
    for w in want:
        assert w in lines


def test_http2_off_is_not_offered(server, cert):
    s = server(conf(cert, h2=''), files=files())
    rc, out = curl('--http2', '-w', '|%{http_version}', 'https://127.0.0.1:%d/ret' % s.port2)
    assert out == b'proto=HTTP/1.1 h2=\n|1.1'
    rc, out = curl('--http2-prior-knowledge', 'http://127.0.0.1:%d/ret' % s.port)
    assert b'h2c' not in out  # the preface is not HTTP/1 either: an error, never an HTTP/2 answer


def test_listen_http2_deprecated_form(server, cert):
    tpl = conf(cert, h2='').replace('listen 127.0.0.1:{port};', 'listen 127.0.0.1:{port} http2;')
    s = server(tpl, files=files())
    assert 'the "listen ... http2" directive is deprecated, use the "http2" directive instead' in \
        s.stderr() + s.error_log()
    rc, out = curl('--http2-prior-knowledge', 'http://127.0.0.1:%d/ret' % s.port)
    assert out == b'proto=HTTP/2.0 h2=h2c\n'


def test_obsolete_names_warn(server, cert):
    s = server(conf(cert, http_extra='http2_max_field_size 8k; http2_idle_timeout 10s; http2_recv_timeout 5s;'
                    'http2_max_header_size 16k; http2_max_requests 10; http2_chunk_size 4k;'
                    'http2_recv_buffer_size 128k; http2_body_preread_size 32k;'), files=files())
    text = s.stderr() + s.error_log()
    for old, new in (('http2_max_field_size', 'large_client_header_buffers'),
                     ('http2_max_header_size', 'large_client_header_buffers'),
                     ('http2_idle_timeout', 'keepalive_timeout'), ('http2_recv_timeout', 'client_header_timeout'),
                     ('http2_max_requests', 'keepalive_requests')):
        assert 'the "%s" directive is obsolete, use the "%s" directive instead' % (old, new) in text


def test_settings_and_chunk_size(server, cert):
    s = server(conf(cert, http_extra='http2_max_concurrent_streams 7; http2_body_preread_size 32k;'
                    'http2_chunk_size 1k;'), files=files())
    c = H2(s.port2, tls=True)
    ev = c.wait_for(h2.events.RemoteSettingsChanged)
    assert ev is not None
    ch = {k: v.new_value for k, v in ev.changed_settings.items()}
    assert ch[h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS] == 7
    assert ch[h2.settings.SettingCodes.INITIAL_WINDOW_SIZE] == 32768
    sid = c.request('/big.bin')
    st, hd, body = c.response(sid)
    assert st == 200 and body == BIG
    sizes = [e.flow_controlled_length for e in c.events if isinstance(e, h2.events.DataReceived)]
    assert max(sizes) == 1024  # http2_chunk_size
    c.close()


def test_multiplexed_and_small_window(server, cert):
    s = server(conf(cert), files=files())
    c = H2(s.port, settings={h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 1000})
    sids = [c.request('/big.bin'), c.request('/index.html'), c.request('/ret')]
    # the small responses are not stuck behind the big one's window
    assert c.response(sids[1])[2] == b'hello\n'
    assert c.response(sids[2])[2] == b'proto=HTTP/2.0 h2=h2c\n'
    st, hd, body = c.response(sids[0], timeout=30)
    assert body == BIG
    c.close()


def test_limit_req_delay_on_multiplexed_streams(server, cert):
    """limit_req delays some streams of one connection while others go on; the delayed ones finish, and a client
    resetting a delayed stream leaves the connection usable (limit_req must not take over the shared socket)."""
    s = server(conf(cert, http_extra='limit_req_zone $binary_remote_addr zone=lr:1m rate=5r/s;',
                    server_extra='location /lim/ { limit_req zone=lr burst=10; alias {html}/; }'), files=files())
    c = H2(s.port)
    sids = [c.request('/lim/index.html') for _ in range(4)]  # 1 at once, the others 200 ms apart
    other = c.request('/index.html')
    assert c.response(other)[2] == b'hello\n'  # not held behind the delayed streams
    for sid in sids:
        st, _, body = c.response(sid, timeout=10)
        assert st == 200 and body == b'hello\n'
    delayed = [c.request('/lim/index.html') for _ in range(3)]
    c.conn.reset_stream(delayed[-1])  # the client gives up on a stream that waits
    c.flush()
    for sid in delayed[:-1]:
        assert c.response(sid, timeout=10)[0] == 200
    assert c.get('/ret')[2] == b'proto=HTTP/2.0 h2=h2c\n'
    c.close()
    assert s.alive()


def test_request_body_and_range(server, cert):
    s = server(conf(cert), files=files())
    c = H2(s.port)
    body = os.urandom(300000)
    sid = c.request('/ret', method='POST', body=body, headers=[('content-length', str(len(body)))])
    assert c.response(sid)[0] == 200
    st, hd, b = c.get('/big.bin', headers=[('range', 'bytes=10-19')])
    assert st == 206 and b == BIG[10:20] and hd['content-range'] == 'bytes 10-19/%d' % len(BIG)
    # the connection is still usable after the unread body
    assert c.get('/index.html')[2] == b'hello\n'
    c.close()


def test_client_max_body_size(server, cert):
    s = server(conf(cert, server_extra='client_max_body_size 1k;'), files=files())
    c = H2(s.port)
    sid = c.request('/ret', method='POST', body=b'x' * 5000, headers=[('content-length', '5000')])
    assert c.response(sid)[0] == 413
    c.close()


def raw_headers(sid, path, enc):
    block = enc.encode([(':method', 'GET'), (':path', path), (':scheme', 'http'), (':authority', 'localhost')])
    return len(block).to_bytes(3, 'big') + b'\x01\x05' + sid.to_bytes(4, 'big') + block


def test_concurrent_stream_limit(server, cert):
    """Streams past http2_max_concurrent_streams: once the client acknowledged the limit, exceeding it is a
    connection error for nghttp2 (GOAWAY PROTOCOL_ERROR with the last stream it took, logged)."""
    import hpack
    s = server(conf(cert, http_extra='http2_max_concurrent_streams 2;'), files=files())
    c = H2(s.port)
    assert c.wait_for(h2.events.RemoteSettingsChanged) is not None
    c.wait_for(h2.events.SettingsAcknowledged, timeout=1)
    c.after_goaway = True  # from here on frames are sent and decoded raw (python-h2 would refuse the excess)
    enc = hpack.Encoder()
    c.send_raw(b''.join(raw_headers(1 + 2 * i, '/index.html', enc) for i in range(8)))
    term = c.wait_for(h2.events.ConnectionTerminated)
    assert term is not None and term.error_code == h2.errors.ErrorCodes.PROTOCOL_ERROR and term.last_stream_id == 3
    assert wait_log(s, r'\[info\].*client sent invalid HTTP/2: request HEADERS: max concurrent streams exceeded')


def test_client_push_promise_is_a_connection_error_at_once(server, cert):
    """A client cannot push (RFC 9113 §8.4): the PUSH_PROMISE frame's header alone gets GOAWAY PROTOCOL_ERROR, as
    nginx answers it (nghttp2 alone would wait for a payload the client may never send)."""
    s = server(conf(cert), files=files())
    c = H2(s.port)
    assert c.wait_for(h2.events.RemoteSettingsChanged) is not None
    c.after_goaway = True
    c.send_raw(b'\x00\x00\x04\x05\x00\x00\x00\x00\x01')  # length 4, type 5, stream 1, and no payload
    term = c.wait_for(h2.events.ConnectionTerminated, timeout=5)
    assert term is not None and term.error_code == h2.errors.ErrorCodes.PROTOCOL_ERROR
    assert wait_log(s, r'\[info\].*client sent PUSH_PROMISE frame')


def test_ping_flood_goaway(server, cert):
    s = server(conf(cert), files=files())
    c = H2(s.port)
    for i in range(3000):
        c.conn.ping(b'%08d' % i)
    try:
        c.flush()
    except OSError:
        pass
    ev = c.wait_for(h2.events.ConnectionTerminated, timeout=10)
    assert ev is not None and ev.error_code == h2.errors.ErrorCodes.ENHANCE_YOUR_CALM
    assert wait_log(s, r'\[info\].*client sent too many PING frames \(flood\)')
    # other connections are served
    assert H2(s.port).get('/index.html')[2] == b'hello\n'


def test_rapid_reset_goaway(server, cert):
    s = server(conf(cert), files=files())
    c = H2(s.port)
    term = None
    for i in range(600):
        try:
            sid = c.request('/big.bin')
            c.conn.reset_stream(sid)
            c.flush()
        except OSError:
            break
        if i % 50 == 0:
            c.read(0.01)
        if any(isinstance(e, h2.events.ConnectionTerminated) for e in c.events):
            break
    term = c.wait_for(h2.events.ConnectionTerminated, timeout=10)
    assert term is not None and term.error_code == h2.errors.ErrorCodes.ENHANCE_YOUR_CALM
    assert wait_log(s, r'\[info\].*client reset too many streams \(rapid reset\)')


def test_continuation_flood(server, cert):
    s = server(conf(cert), files=files())
    c = H2(s.port)
    c.read(0.3)
    import hpack
    block = hpack.Encoder().encode([(':method', 'GET'), (':path', '/'), (':scheme', 'http'),
                                    (':authority', 'x')])
    frames = b'\x00\x00' + bytes([len(block)]) + b'\x01\x00\x00\x00\x00\x01' + block  # HEADERS, no END_HEADERS
    for i in range(100):
        frames += b'\x00\x00\x01\x09\x00\x00\x00\x00\x01' + b'\x40'  # CONTINUATION with a trivial byte
    try:
        c.send_raw(frames)
    except OSError:
        pass
    assert wait_log(s, r'\[info\].*client sent too many CONTINUATION frames \(flood\)')


def test_header_list_bomb(server, cert):
    s = server(conf(cert, http_extra='large_client_header_buffers 4 1k;'), files=files())
    c = H2(s.port)
    sid = c.request('/index.html', headers=[('x-big', 'a' * 3000)])
    with pytest.raises(ConnectionError):
        c.response(sid)
    assert wait_log(s, r'\[info\].*client sent too large header list')
    assert c.get('/index.html')[2] == b'hello\n'  # only the stream was refused


def test_keepalive_requests_goaway(server, cert):
    s = server(conf(cert, server_extra='keepalive_requests 3;'), files=files())
    c = H2(s.port)
    for i in range(3):
        assert c.get('/index.html')[0] == 200
    ev = c.wait_for(h2.events.ConnectionTerminated)
    assert ev is not None and ev.error_code == 0 and ev.last_stream_id == 5


def test_sigquit_goaway_stream_completes_under_small_window(server, cert):
    s = server(conf(cert), files=files())
    c = H2(s.port, settings={h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 16384})
    sid = c.request('/big.bin')
    # read slowly: acknowledge nothing until the signal went out
    c.read(0.5)
    s.proc.send_signal(signal.SIGQUIT)
    ev = c.wait_for(h2.events.ConnectionTerminated, timeout=5)
    assert ev is not None and ev.error_code == 0 and ev.last_stream_id == sid
    st, hd, body = c.response(sid, timeout=30)
    assert st == 200 and body == BIG
    assert s.proc.wait(10) == 0


def test_nghttp_and_h2load(server, cert):
    s = server(conf(cert), files=files())
    r = subprocess.run(['nghttp', '-ns', 'https://127.0.0.1:%d/index.html' % s.port2,
                        'https://127.0.0.1:%d/big.bin' % s.port2, 'https://127.0.0.1:%d/ret' % s.port2],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
    assert r.returncode == 0, r.stderr
    assert r.stdout.count(b' 200 ') >= 3 or r.stdout.count(b'200') >= 3
    for url in ('https://127.0.0.1:%d/index.html' % s.port2, 'http://127.0.0.1:%d/index.html' % s.port):
        r = subprocess.run(['h2load', '-n', '20000', '-c', '50', '-m', '10', url], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=120)
        out = r.stdout.decode()
        assert 'requests: 20000 total, 20000 started, 20000 done, 20000 succeeded, 0 failed, 0 errored' in out, out
        assert 'status codes: 20000 2xx' in out


def test_zero_window_reader_meets_send_timeout(server, cert):
    s = server(conf(cert, server_extra='send_timeout 1s;'), files=files())
    c = H2(s.port, settings={h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 0})
    c.request('/big.bin')
    deadline = time.monotonic() + 10
    while not c.closed and time.monotonic() < deadline:
        c.read(0.5)
    assert c.closed
    assert wait_log(s, r'\[info\].*client timed out \(110: Connection timed out\) while sending response to client')
    assert H2(s.port).get('/index.html')[2] == b'hello\n'


@pytest.mark.parametrize('kind', ['SETTINGS', 'PRIORITY', 'empty DATA', 'WINDOW_UPDATE'])
def test_control_frame_floods(server, cert, kind):
    s = server(conf(cert), files=files())
    c = H2(s.port)
    sid = c.request('/big.bin', end=False) if kind == 'empty DATA' else None  # stays open: window
    c.read(0.3)
    if kind == 'SETTINGS':
        frame = b'\x00\x00\x00\x04\x00\x00\x00\x00\x00'
    elif kind == 'PRIORITY':
        frame = b'\x00\x00\x05\x02\x00\x00\x00\x00\x03' + b'\x00\x00\x00\x00\x10'
    elif kind == 'empty DATA':
        frame = b'\x00\x00\x00\x00\x00' + sid.to_bytes(4, 'big')
    else:
        frame = b'\x00\x00\x04\x08\x00\x00\x00\x00\x00' + b'\x00\x00\x00\x01'
    try:
        for i in range(6):
            c.send_raw(frame * 200)
    except OSError:
        pass
    assert wait_log(s, r'\[info\].*client sent too many %s frames \(flood\)' % kind)
    assert H2(s.port).get('/index.html')[2] == b'hello\n'


def test_no_prior_knowledge_over_tls(server, cert):
    """As nginx: the preface over TLS without ALPN h2 is an (invalid) HTTP/1 request, never HTTP/2."""
    from helpers.tls import tls_connect, client_ctx
    s = server(conf(cert), files=files())
    c = tls_connect(s.port2, sni='localhost', ctx=client_ctx(alpn=['http/1.1']))
    c.sendall(b'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n')
    data = c.recv(4096)
    assert data.startswith(b'HTTP/1.1 ')
    c.close()
