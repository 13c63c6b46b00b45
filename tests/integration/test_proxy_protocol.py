"""listen ... proxy_protocol: PROXY v1 and v2 headers sent raw (TLVs, the HTTP bytes in the same packet or the
header split over packets), $proxy_protocol_* variables, realip from the header, broken headers closing the
connection with nginx's message, the header before a TLS handshake (also with the ClientHello in the same
packet), the timeout."""
import socket
import ssl
import struct
import time

import pytest

from helpers.tls import make_cert, client_ctx, read_response

SIG = b'\r\n\r\n\x00\r\nQUIT\n'

CONF = '''
http {
    log_format pp "$remote_addr:$remote_port $proxy_protocol_addr";
    add_header X-IP $remote_addr!$remote_port;
    add_header X-PP $proxy_protocol_addr!$proxy_protocol_port;
    add_header X-PPS $proxy_protocol_server_addr!$proxy_protocol_server_port;
    server {
        listen 127.0.0.1:{port} proxy_protocol;
        client_header_timeout 1s;
        server_name localhost;
        root {html};
        set_real_ip_from 127.0.0.1/32;
        location /pp {
            real_ip_header proxy_protocol;
            access_log {tmp}/logs/pp.log pp;
            try_files /t1 =404;  # not "return": REWRITE runs before PREACCESS, where realip takes a location's settings
        }
        location /tlv {
            return 200 "[$proxy_protocol_tlv_alpn|$proxy_protocol_tlv_0x02|$proxy_protocol_tlv_authority|$proxy_protocol_tlv_unique_id|$proxy_protocol_tlv_netns|$proxy_protocol_tlv_ssl_version|$proxy_protocol_tlv_ssl_cn|$proxy_protocol_tlv_ssl_0x23|$proxy_protocol_tlv_ssl_sig_alg|$proxy_protocol_tlv_ssl_key_alg|$proxy_protocol_tlv_ssl_verify|$proxy_protocol_tlv_0x000ae|$proxy_protocol_tlv_0x0f]";
        }
        location /bad_tlv {
            return 200 "[$proxy_protocol_tlv_nosuch]";
        }
        location / { }
    }
    server {
        listen 127.0.0.1:{port2};
        location / { return 200 "[$proxy_protocol_addr]"; }
    }
}
'''

V1 = b'PROXY TCP4 192.0.2.1 192.0.2.2 123 5678\r\n'


def tlv(t, v):
    return struct.pack('>BH', t, len(v)) + v


def v2(body, ver_cmd=0x21, fam=0x11):
    return SIG + bytes([ver_cmd, fam]) + struct.pack('>H', len(body)) + body


def v2_inet(tlvs=b''):
    return v2(bytes([192, 0, 2, 1, 192, 0, 2, 2]) + struct.pack('>HH', 123, 5678) + tlvs)


def req(path):
    return ('GET %s HTTP/1.0\r\nHost: localhost\r\n\r\n' % path).encode()


@pytest.fixture
def srv(server):
    return server(CONF, files={'html/t1': 'SEE-THIS'})


def send(srv, *parts, port=None):
    """Send parts on one connection (each its own segment), read one response."""
    c = srv.conn(port)
    c.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    for i, p in enumerate(parts):
        if i:
            time.sleep(0.05)  # separate segments; the server must wait for the rest either way
        c.send(p)
    r = c.read_response('GET')
    c.close()
    return r


def test_v1_tcp4_tcp6_unknown(srv):
    r = send(srv, V1 + req('/t1'))
    assert r.status == 200 and r.body == b'SEE-THIS'
    assert r.header('X-PP') == '192.0.2.1!123' and r.header('X-PPS') == '192.0.2.2!5678'
    assert r.header('X-IP').startswith('127.0.0.1!') and not r.header('X-IP').endswith('!123')
    r = send(srv, b'PROXY TCP6 2001:Db8::1 2001:Db8::2 123 5678\r\n' + req('/t1'))
    assert r.status == 200
    assert r.header('X-PP').lower() == '2001:db8::1!123' and r.header('X-PPS').lower() == '2001:db8::2!5678'
    for unk in (b'PROXY UNKNOWN\r\n', b'PROXY UNKNOWN 1 2 3 4 5 6\r\n'):
        r = send(srv, unk + req('/t1'))
        assert r.status == 200 and r.header('X-PP') == '!' and r.header('X-PPS') == '!'


def test_header_split_across_packets(srv):
    r = send(srv, b'PROXY TCP4 192.0', b'.2.1 192.0.2.2 123 5678\r', b'\n' + req('/t1')[:10], req('/t1')[10:])
    assert r.status == 200 and r.header('X-PP') == '192.0.2.1!123'
    h = v2_inet(tlv(0x01, b'h2'))
    r = send(srv, h[:5], h[5:14], h[14:20], h[20:] + req('/tlv'))
    assert r.status == 200 and r.body.startswith(b'[h2|')


def test_keepalive_after_header(srv):
    c = srv.conn()
    c.send(V1 + b'GET /t1 HTTP/1.1\r\nHost: localhost\r\n\r\n')
    r1 = c.read_response()
    c.send(b'GET /t1 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n')
    r2 = c.read_response()
    assert r1.header('X-PP') == r2.header('X-PP') == '192.0.2.1!123'


def test_realip_from_header(srv):
    r = send(srv, V1 + req('/pp'))
    assert r.header('X-IP') == '192.0.2.1!123' and r.header('X-PP') == '192.0.2.1!123'
    r = send(srv, b'PROXY TCP6 2001:Db8::1 2001:Db8::2 123 5678\r\n' + req('/pp'))
    assert r.header('X-IP') == '2001:db8::1!123'
    r = send(srv, v2(bytes(range(1, 17)) + bytes(range(17, 33)) + struct.pack('>HH', 80, 81), fam=0x21) + req('/pp'))
    assert r.header('X-IP') == '102:304:506:708:90a:b0c:d0e:f10!80'
    # without addresses (UNKNOWN): the connection's address stays
    r = send(srv, b'PROXY UNKNOWN\r\n' + req('/pp'))
    assert r.header('X-IP').startswith('127.0.0.1!')
    srv.stop()
    with open(srv.prefix.path('logs/pp.log')) as f:
        lines = f.read().splitlines()
    assert lines[:3] == ['192.0.2.1:123 192.0.2.1', '2001:db8::1:123 2001:Db8::1',
                         '102:304:506:708:90a:b0c:d0e:f10:80 102:304:506:708:90a:b0c:d0e:f10']
    assert lines[3].startswith('127.0.0.1:') and lines[3].endswith(' -')


def test_v2_tlvs(srv):
    sub = tlv(0x21, b'TLSv1.2') + tlv(0x22, b'example.com') + tlv(0x23, b'AES256-SHA') + tlv(0x24, b'SHA1') + \
        tlv(0x25, b'RSA512')
    tlvs = tlv(0x01, b'ALPN1') + tlv(0x02, b'localhost') + tlv(0x03, b'4321') + tlv(0x05, b'UNIQQ') + \
        tlv(0x20, b'\x01' + struct.pack('>I', 255) + sub) + tlv(0x30, b'NETNS') + tlv(0xae, b'12345')
    r = send(srv, v2_inet(tlvs) + req('/tlv'))
    assert r.status == 200
    assert r.body == b'[ALPN1|localhost|localhost|UNIQQ|NETNS|TLSv1.2|example.com|AES256-SHA|SHA1|RSA512|255|12345|]'
    assert r.header('X-PP') == '192.0.2.1!123' and r.header('X-PPS') == '192.0.2.2!5678'
    # no TLVs at all, and v1: every TLV variable empty
    r = send(srv, v2_inet() + req('/tlv'))
    assert r.body == b'[||||||||||||]'
    r = send(srv, V1 + req('/tlv'))
    assert r.body == b'[||||||||||||]'
    # an unknown name: empty, with nginx's message
    r = send(srv, v2_inet(tlvs) + req('/bad_tlv'))
    assert r.status == 200 and r.body == b'[]'
    assert 'unknown PROXY protocol TLV "nosuch"' in srv.error_log()


def test_v2_without_addresses(srv):
    for h in (v2(bytes(12), ver_cmd=0x20),          # LOCAL
              v2(bytes(12), fam=0x12),              # UDP
              v2(b'', fam=0x00),                    # UNSPEC
              v2(bytes(216), fam=0x31)):            # UNIX
        r = send(srv, h + req('/t1'))
        assert r.status == 200 and r.header('X-PP') == '!'


@pytest.mark.parametrize('data,msg', [
    (req('/t1'), 'broken header: "GET /t1 HTTP/1.0" while reading PROXY protocol'),
    (b'PROXY TCP4 192.0.2.1 192.0.2.2 123 99999\r\n' + req('/t1'), 'broken header: "PROXY TCP4 192.0.2.1'),
    (b'PROXY TCP4 192.0.2.1 192.0.2.2 123\r\n' + req('/t1'), 'broken header: "PROXY TCP4 192.0.2.1 192.0.2.2 123"'),
    (b'PROXY TCP4 host 192.0.2.2 1 2\r\n' + req('/t1'), 'broken header'),
    (b'PROXY UNKNOWN ' + b'x' * 120 + b'\r\n', 'broken header'),
    (v2(bytes(12), ver_cmd=0x11), 'unknown PROXY protocol version: 1'),
    (SIG + b'\x21\x11\x10\x00' + bytes(4096), 'header is too large'),
    (v2(bytes(8)), 'broken PROXY protocol v2 addresses'),
])
def test_broken_header_closes(srv, data, msg):
    c = srv.conn()
    c.send(data)
    assert c.is_closed()
    assert c.buf == b''  # nothing answered
    assert msg in srv.error_log()
    assert '[error]' in [l for l in srv.error_log().splitlines() if msg in l][0]
    assert srv.get('/t1', port=srv.port2).status == 200  # the worker lives on


def test_timeout_and_eof(srv):
    c = srv.conn()
    c.send(b'PROXY TCP4 192.0.2.1')
    assert c.is_closed(timeout=10)
    assert 'client timed out while reading PROXY protocol' in srv.error_log()


def test_plain_listener_has_no_header(srv):
    # the other server has no proxy_protocol: a PROXY line is a bad request there, and the variable is empty
    r = srv.get('/', port=srv.port2)
    assert r.body == b'[]'
    c = srv.conn(srv.port2)
    r = c.request(V1 + req('/'))
    assert r.status == 400


# ---- over TLS

@pytest.fixture(scope='module')
def cert(tmp_path_factory):
    return make_cert(str(tmp_path_factory.mktemp('ppcert')), 'rsa', 'localhost')


TLS_CONF = '''
http {
    server {
        listen 127.0.0.1:{port} ssl proxy_protocol;
        ssl_certificate %s;
        ssl_certificate_key %s;
        location / { return 200 "$scheme $proxy_protocol_addr $proxy_protocol_tlv_authority $ssl_server_name"; }
    }
}
'''


def tls_over(sock, ctx):
    """Drive a TLS client over an already-connected socket through memory BIOs, so that the first flight can
    ride in the same packet as the PROXY header: returns (sslobj, incoming, outgoing)."""
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(inc, out, server_hostname='localhost')
    return obj, inc, out


def pump(sock, obj, inc, out, op):
    while True:
        try:
            res = op()
        except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
            if out.pending:
                sock.sendall(out.read())
            data = sock.recv(65536)
            if not data:
                raise EOFError('closed')
            inc.write(data)
            continue
        if out.pending:
            sock.sendall(out.read())
        return res


def test_tls_after_header(server, cert):
    s = server(TLS_CONF % cert)
    hdr = v2_inet(tlv(0x02, b'proxied.example'))
    # the header alone, then an ordinary handshake
    raw = socket.create_connection(('127.0.0.1', s.port), timeout=5)
    raw.sendall(hdr)
    t = client_ctx().wrap_socket(raw, server_hostname='localhost')
    t.sendall(b'GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n')
    st, _, body = read_response(t)
    assert st == 200 and body == b'https 192.0.2.1 proxied.example localhost'
    t.close()
    # the header and the ClientHello in one packet
    for h in (hdr, V1):
        raw = socket.create_connection(('127.0.0.1', s.port), timeout=5)
        obj, inc, out = tls_over(raw, client_ctx())
        try:
            obj.do_handshake()
        except ssl.SSLWantReadError:
            pass
        raw.sendall(h + out.read())
        pump(raw, obj, inc, out, obj.do_handshake)
        obj.write(b'GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n')
        raw.sendall(out.read())
        data = b''
        while True:
            try:
                data += pump(raw, obj, inc, out, lambda: obj.read(65536))
            except (EOFError, ssl.SSLZeroReturnError, ssl.SSLEOFError):
                break
            if data.endswith(b'localhost'):
                break
        assert data.startswith(b'HTTP/1.1 200') and data.endswith(b'https 192.0.2.1 %s localhost' % (
            b'proxied.example' if h is hdr else b''))
        raw.close()


def test_tls_broken_header(server, cert):
    s = server(TLS_CONF % cert)
    raw = socket.create_connection(('127.0.0.1', s.port), timeout=5)
    with pytest.raises((ssl.SSLError, OSError)):
        client_ctx().wrap_socket(raw, server_hostname='localhost')  # a ClientHello is not a PROXY header
    assert 'broken header: "\\x16\\x03' in s.error_log()
