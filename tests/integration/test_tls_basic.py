"""TLS: listen ... ssl, certificates (RSA + ECDSA), protocols, ciphers, SNI, ALPN, $ssl_* variables, 497."""
import re
import socket
import ssl
import subprocess

import pytest

from conftest import IS_NGINX
from helpers.tls import make_cert, cert_der, client_ctx, tls_connect, read_response, https_get, openssl


@pytest.fixture(scope='session')
def certs(tmp_path_factory):
    d = str(tmp_path_factory.mktemp('certs'))
    c = {}
    c['rsa'] = make_cert(d, 'rsa', 'localhost')
    c['ec'] = make_cert(d, 'ec', 'localhost', kind='ec')
    c['a'] = make_cert(d, 'a', 'a.test', kind='ec')
    c['b'] = make_cert(d, 'b', 'b.test', kind='ec')
    c['w'] = make_cert(d, 'w', '*.w.test', kind='ec')
    c['r'] = make_cert(d, 'r', 'r1.test', kind='ec')
    return c


def tls_server(certs, body, extra='', listen='listen 127.0.0.1:{port} ssl;'):
    return '''
http {
    %s
    server {
        %s
        ssl_certificate %s;
        ssl_certificate_key %s;
        ssl_certificate %s;
        ssl_certificate_key %s;
        root {html};
        %s
    }
}
''' % (extra, listen, certs['rsa'][0], certs['rsa'][1], certs['ec'][0], certs['ec'][1], body)


VARS = ('location /v { return 200 "$scheme|$https|$ssl_protocol|$ssl_cipher|$ssl_server_name|'
        '$ssl_alpn_protocol|$ssl_session_reused|$ssl_curve|$server_port\\n"; }')


def test_https_get_and_variables(server, certs):
    s = server(tls_server(certs, VARS, extra='ssl_protocols TLSv1.2 TLSv1.3;'),
               files={'html/index.html': 'hello tls\n'})
    ctx = client_ctx(alpn=['http/1.1'])
    st, _, body, _ = https_get(s.prefix.port, '/', ctx=ctx)
    assert st == 200 and body == b'hello tls\n'
    st, _, body, _ = https_get(s.prefix.port, '/v', sni='example.org', ctx=client_ctx(alpn=['http/1.1']))
    f = body.decode().strip().split('|')
    assert f[0] == 'https' and f[1] == 'on'
    assert f[2] == 'TLSv1.3' and f[3].startswith('TLS_')
    assert f[4] == 'example.org' and f[5] == 'http/1.1' and f[6] == '.'
    assert f[7] == 'X25519'
    assert f[8] == str(s.prefix.port)
    # no SNI, no ALPN: empty values
    st, _, body, _ = https_get(s.prefix.port, '/v', sni=None)
    f = body.decode().strip().split('|')
    assert f[4] == '' and f[5] == ''


def test_keepalive_and_large_file_over_tls(server, certs):
    big = bytes(range(256)) * 8192  # 2 MiB: file segments, records growing to 16 KiB
    s = server(tls_server(certs, ''), files={'html/big.bin': big, 'html/small.txt': 'small\n'})
    c = tls_connect(s.prefix.port, sni='localhost')
    for path, want in (('/small.txt', b'small\n'), ('/big.bin', big), ('/small.txt', b'small\n')):
        c.sendall(('GET %s HTTP/1.1\r\nHost: localhost\r\n\r\n' % path).encode())
        st, h, body = read_response(c)
        assert st == 200 and body == want
    # pipelined requests in one TLS record
    c.sendall(b'GET /small.txt HTTP/1.1\r\nHost: x\r\n\r\nGET /small.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
    data = b''
    while True:
        chunk = c.recv(65536)
        if not chunk:
            break
        data += chunk
    assert data.count(b'HTTP/1.1 200') == 2 and data.endswith(b'small\n')
    c.close()


def tls_stat():
    """The kernel's TLS counters (/proc/net/tls_stat), or None where the kernel has no kTLS."""
    try:
        with open('/proc/net/tls_stat') as f:
            return {k: int(v) for k, v in (ln.split() for ln in f if ln.strip())}
    except FileNotFoundError:
        return None


def test_ktls_option_serves_files(server, certs):
    # `ssl_conf_command Options KTLS` asks OpenSSL for kernel TLS; where the kernel cannot (no tls ULP, as on
    # the build machine) the files go out through the record buffer, byte-exact either way
    big = bytes(range(256)) * 4096 + b'tail'
    s = server(tls_server(certs, 'ssl_conf_command Options KTLS;'),
               files={'html/big.bin': big, 'html/small.txt': 'small\n'})
    c = tls_connect(s.prefix.port, sni='localhost')
    for path, want in (('/big.bin', big), ('/small.txt', b'small\n'), ('/big.bin', big)):
        c.sendall(('GET %s HTTP/1.1\r\nHost: localhost\r\n\r\n' % path).encode())
        st, h, body = read_response(c)
        assert st == 200 and body == want
    c.close()


@pytest.mark.skipif(tls_stat() is None, reason='this kernel has no kTLS (/proc/net/tls_stat missing)')
def test_ktls_sends_files_from_the_kernel(server, certs):
    big = bytes(range(256)) * 4096
    s = server(tls_server(certs, 'ssl_conf_command Options KTLS; ssl_protocols TLSv1.2;'),
               files={'html/big.bin': big})
    before = tls_stat()
    st, _, body, _ = https_get(s.prefix.port, '/big.bin', ctx=client_ctx(maxv=ssl.TLSVersion.TLSv1_2,
                                                                        ciphers='ECDHE-ECDSA-AES128-GCM-SHA256'))
    after = tls_stat()
    assert st == 200 and body == big
    assert after.get('TlsTxSw', 0) + after.get('TlsTxDevice', 0) > \
        before.get('TlsTxSw', 0) + before.get('TlsTxDevice', 0), (before, after)


def test_rsa_and_ecdsa_chosen_by_client(server, certs):
    s = server(tls_server(certs, ''))
    for cipher, which in (('ECDHE-ECDSA-AES128-GCM-SHA256', 'ec'), ('ECDHE-RSA-AES128-GCM-SHA256', 'rsa')):
        ctx = client_ctx(maxv=ssl.TLSVersion.TLSv1_2, ciphers=cipher)
        c = tls_connect(s.prefix.port, sni='localhost', ctx=ctx)
        assert c.getpeercert(binary_form=True) == cert_der(certs[which][0]), which
        assert c.cipher()[0] == cipher
        c.close()


def test_ssl_protocols(server, certs):
    s = server(tls_server(certs, VARS, extra='ssl_protocols TLSv1.2;'))
    st, _, body, _ = https_get(s.prefix.port, '/v')
    assert body.decode().split('|')[2] == 'TLSv1.2'
    with pytest.raises((ssl.SSLError, ConnectionResetError)):
        tls_connect(s.prefix.port, ctx=client_ctx(minv=ssl.TLSVersion.TLSv1_3))


@pytest.mark.hayate_only
def test_secure_defaults(server, certs):
    """Default: TLS 1.2 and 1.3 only, ECDHE + AEAD only (nginx's defaults are wider; docs/DIFFERENCES.md)."""
    s = server(tls_server(certs, ''))
    for args in (['-tls1_1', '-cipher', 'DEFAULT@SECLEVEL=0'], ['-tls1_2', '-cipher', 'AES128-SHA'],
                 ['-tls1_2', '-cipher', 'ECDHE-RSA-AES128-SHA256'], ['-tls1_2', '-cipher', 'DHE-RSA-AES128-GCM-SHA256']):
        r = openssl('s_client', '-connect', '127.0.0.1:%d' % s.prefix.port, *args, input=b'')
        assert b'Cipher is (NONE)' in r.stdout or r.returncode != 0, args
    r = openssl('s_client', '-connect', '127.0.0.1:%d' % s.prefix.port, '-tls1_2', input=b'')
    assert r.returncode == 0 and b'ECDHE' in r.stdout


def sni_conf(certs, default_extra=''):
    def srv(name, cert, default=False, extra='', label=None):
        return '''
    server {
        listen 127.0.0.1:{port} ssl%s;
        server_name %s;
        ssl_certificate %s;
        ssl_certificate_key %s;
        %s
        location / { return 200 "%s $host\\n"; }
    }''' % (' default_server' if default else '', name, cert[0], cert[1], extra, label or name)
    return 'http {%s%s%s%s%s\n}\n' % (srv('a.test', certs['a'], True, default_extra), srv('b.test', certs['b']),
                                      srv('*.w.test', certs['w']), srv('~^r\\d+\\.test$', certs['r'], label='regex'),
                                      srv('localhost', certs['rsa']))


def test_sni_selects_certificate(server, certs):
    s = server(sni_conf(certs))
    for sni, which in (('a.test', 'a'), ('b.test', 'b'), ('x.w.test', 'w'), ('r7.test', 'r'), ('B.TEST', 'b'),
                       ('unknown.test', 'a'), (None, 'a')):
        c = tls_connect(s.prefix.port, sni=sni)
        assert c.getpeercert(binary_form=True) == cert_der(certs[which][0]), sni
        c.close()
    # the request is served by Host, as nginx does (SNI chose only the certificate)
    st, _, body, _ = https_get(s.prefix.port, '/', sni='b.test', host='x.w.test')
    assert body == b'*.w.test x.w.test\n'


def test_reject_handshake(server, certs):
    s = server(sni_conf(certs, default_extra='ssl_reject_handshake on;'))
    c = tls_connect(s.prefix.port, sni='b.test')
    assert c.getpeercert(binary_form=True) == cert_der(certs['b'][0])
    c.close()
    for sni in ('a.test', 'nothing.test', None):
        with pytest.raises(ssl.SSLError) as e:
            tls_connect(s.prefix.port, sni=sni)
        assert 'UNRECOGNIZED_NAME' in str(e.value).upper(), sni
    # one [info] line per failed handshake with the client (nginx: "handshake rejected while SSL handshaking")
    assert re.search(r'\[info\] .* while SSL handshaking, client: 127\.0\.0\.1', s.error_log()), s.error_log()


def test_alpn(server, certs):
    s = server(tls_server(certs, VARS))
    c = tls_connect(s.prefix.port, ctx=client_ctx(alpn=['h2', 'http/1.1']))
    assert c.selected_alpn_protocol() == 'http/1.1'
    c.close()
    with pytest.raises(ssl.SSLError) as e:
        tls_connect(s.prefix.port, ctx=client_ctx(alpn=['h2']))
    assert 'NO APPLICATION PROTOCOL' in str(e.value).upper().replace('_', ' ')


def plain_get(port, path='/'):
    with socket.create_connection(('127.0.0.1', port), timeout=5) as c:
        c.sendall(('GET %s HTTP/1.1\r\nHost: localhost\r\n\r\n' % path).encode())
        return read_response(c), c.recv(100)


def test_plain_http_on_tls_port_is_497(server, certs):
    # the 497 happens before a location is chosen: the server's error_page applies (nginx)
    s = server(tls_server(certs, 'location /p { return 200 "no"; }\n'
                          'error_page 497 =301 https://$host:$server_port$request_uri;'))
    (st, h, body), _ = plain_get(s.prefix.port, '/p/q?a=1')
    assert st == 301 and h['location'] == 'https://localhost:%d/p/q?a=1' % s.prefix.port
    assert 'client sent plain HTTP request to HTTPS port' in s.error_log()


def test_plain_http_on_tls_port_is_400(server, certs):
    s = server(tls_server(certs, ''))
    (st, h, body), rest = plain_get(s.prefix.port, '/x')
    assert st == 400 and b'The plain HTTP request was sent to HTTPS port' in body
    assert h.get('connection') == 'close' and rest == b''


@pytest.mark.hayate_only  # ssl_handshake_timeout is nginx 1.25's
def test_handshake_timeout(server, certs):
    s = server(tls_server(certs, '', extra='ssl_handshake_timeout 300ms;'))
    with socket.create_connection(('127.0.0.1', s.prefix.port), timeout=10) as c:
        assert c.recv(10) == b''  # closed by the server, not by our 10 s timeout


def test_ssl_on_is_deprecated_but_works(server, certs, run_cli):
    conf = '''
http {
    server {
        listen 127.0.0.1:{port};
        ssl on;
        ssl_certificate %s;
        ssl_certificate_key %s;
        location / { return 200 "$scheme\\n"; }
    }
}
''' % certs['rsa']
    s = server(conf)
    st, _, body, _ = https_get(s.prefix.port, '/')
    assert body == b'https\n'
    r = run_cli(['-t', '-c', s.prefix.conf_path])
    assert r.rc == 0
    assert 'the "ssl" directive is deprecated, use the "listen ... ssl" directive instead in ' in r.err


def test_close_notify_before_close(server, certs):
    """A response that ends the connection ends with close_notify: a client reading to EOF sees no truncation."""
    s = server(tls_server(certs, ''), files={'html/a.txt': 'abc\n'})
    for req in (b'GET /a.txt HTTP/1.0\r\n\r\n', b'GET /a.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'):
        raw = socket.create_connection(('127.0.0.1', s.prefix.port), timeout=5)
        ctx = client_ctx()
        ctx.options &= ~getattr(ssl, 'OP_IGNORE_UNEXPECTED_EOF', 0x80)  # Python sets it: we want to see a truncation
        c = ctx.wrap_socket(raw, server_hostname='localhost', suppress_ragged_eofs=False)
        c.sendall(req)
        data = b''
        while True:
            chunk = c.recv(65536)  # SSLEOFError here if the server closed without close_notify
            if not chunk:
                break
            data += chunk
        c.close()
        assert data.startswith(b'HTTP/1.1 200') and data.endswith(b'abc\n')


def test_request_without_host_uses_default_server(server, certs):
    """nginx 1.22 serves a request without Host from the address's default server, whatever the SNI name."""
    s = server(sni_conf(certs))
    c = tls_connect(s.prefix.port, sni='b.test')
    c.sendall(b'GET / HTTP/1.0\r\n\r\n')
    st, _, body = read_response(c)
    c.close()
    assert st == 200 and body.startswith(b'a.test ')


@pytest.mark.hayate_only  # nginx logs some of these at [crit], which the teardown refuses
def test_bad_clients_do_not_hurt_the_worker(server, certs):
    """Garbage, truncated hellos, resets mid-handshake and mid-response: the worker keeps serving."""
    import os as _os
    big = b'x' * (4 << 20)
    s = server(tls_server(certs, ''), files={'html/big.bin': big, 'html/a.txt': 'a\n'})
    port = s.prefix.port
    for payload in (b'\x16\x03\x01\x00\x05hello', b'\x16\x03\x01\xff\xff' + _os.urandom(300), b'\x80' + _os.urandom(64),
                    _os.urandom(2000), b'\x16'):
        with socket.create_connection(('127.0.0.1', port), timeout=5) as c:
            c.sendall(payload)
            c.shutdown(socket.SHUT_WR)
            try:
                while c.recv(4096):
                    pass
            except ConnectionResetError:
                pass
    # a TLS connection that sends garbage records after the handshake
    c = tls_connect(port)
    raw = socket.socket(fileno=_os.dup(c.fileno()))
    raw.sendall(b'\x17\x03\x03\x00\x10' + _os.urandom(16))
    raw.close()
    try:
        c.recv(100)
    except (ssl.SSLError, ConnectionResetError, OSError):
        pass
    c.close()
    # a client that goes away in the middle of a large response
    c = tls_connect(port)
    c.sendall(b'GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n')
    c.recv(1000)
    c.close()
    st, _, body, _ = https_get(port, '/a.txt')
    assert st == 200 and body == b'a\n'


@pytest.mark.hayate_only  # nginx 1.22's defaults enable TLS 1.0/1.1 and CBC suites
def test_default_configuration_has_no_weak_finding(server, certs):
    """sslscan (Debian) against a server with only a certificate: no TLS 1.0/1.1, no CBC or RSA key exchange,
    no compression, no client renegotiation."""
    import shutil
    if shutil.which('sslscan') is None:
        pytest.skip('sslscan not installed (make deps-test installs it)')
    s = server(tls_server(certs, ''))
    r = subprocess.run(['sslscan', '--no-colour', '127.0.0.1:%d' % s.prefix.port], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=120)
    out = r.stdout.decode()
    for proto in ('SSLv2', 'SSLv3', 'TLSv1.0', 'TLSv1.1'):
        assert re.search(r'^%s\s+disabled' % re.escape(proto), out, re.M), out
    assert re.search(r'^TLSv1\.2\s+enabled', out, re.M) and re.search(r'^TLSv1\.3\s+enabled', out, re.M)
    assert 'Session renegotiation not supported' in out or 'Insecure session renegotiation' not in out
    assert 'Compression enabled' not in out
    suites = re.findall(r'^(?:Preferred|Accepted)\s+TLSv1\.[23]\s+\d+ bits\s+(\S+)', out, re.M)
    assert suites, out
    for name in suites:
        assert name.startswith('TLS_') or (name.startswith('ECDHE-') and ('GCM' in name or 'CHACHA20' in name)), name


@pytest.mark.hayate_only  # nginx 1.22's defaults enable TLS 1.0/1.1 and CBC suites
def test_testssl_finds_nothing_weak_in_the_default_configuration(server, certs, tmp_path):
    """Debian's testssl.sh against a server with only certificates: protocols, cipher categories, forward
    secrecy and the vulnerability checks (Heartbleed, CCS, renegotiation, CRIME, POODLE, fallback SCSV, SWEET32,
    FREAK, DROWN, LOGJAM, BEAST, LUCKY13, RC4) — every finding OK or INFO, none LOW or worse."""
    import json
    s = server(tls_server(certs, ''))
    out = str(tmp_path / 'testssl.json')
    r = subprocess.run(['testssl', '--quiet', '--color', '0', '--warnings', 'off', '-p', '-s', '-f', '-H', '-I', '-R',
                        '-C', '-O', '-Z', '-W', '-F', '-D', '-J', '-A', '-L', '-4', '--jsonfile', out,
                        '127.0.0.1:%d' % s.prefix.port], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)
    findings = json.load(open(out))
    assert len(findings) > 25, r.stdout.decode()[-3000:]  # the checks ran
    # testssl's words on its own client, not on the server: Debian's openssl 3.0.19-1~deb12u2 has no engine support,
    # which testssl reports as a WARN ("No engine or GOST support via engine with your /usr/bin/openssl")
    tool = {'engine_problem'}
    bad = [(f['id'], f['severity'], f['finding']) for f in findings
           if f['severity'] not in ('OK', 'INFO') and f['id'] not in tool]
    assert bad == [], bad
    by_id = {f['id']: f for f in findings}
    for proto in ('SSLv2', 'SSLv3', 'TLS1', 'TLS1_1'):
        assert 'not offered' in by_id[proto]['finding'], by_id[proto]


def record_sizes(port, path):
    """Plaintext sizes of the application-data records of a TLS 1.2 AES-GCM response, as `openssl s_client -msg`
    shows their headers (each record carries 24 bytes more: explicit nonce and tag)."""
    r = openssl('s_client', '-connect', '127.0.0.1:%d' % port, '-tls1_2', '-cipher', 'ECDHE-ECDSA-AES128-GCM-SHA256',
                '-ign_eof', '-msg', input=('GET %s HTTP/1.0\r\n\r\n' % path).encode())
    out = r.stdout.decode('latin-1')
    sizes = [int(m.group(1) + m.group(2), 16) - 24
             for m in re.finditer(r'<<< [^\n]*RecordHeader[^\n]*\n\s+17 03 03 ([0-9a-f]{2}) ([0-9a-f]{2})', out)]
    assert sizes, out[-2000:]
    return sizes


@pytest.mark.hayate_only  # nginx writes ssl_buffer_size records from the first byte
def test_records_start_small_and_grow(server, certs):
    big = b'r' * 300000
    two = tls_server(certs, '').replace('    }\n}\n', """    }
    server {
        listen 127.0.0.1:{port2} ssl;
        ssl_certificate %s;
        ssl_certificate_key %s;
        ssl_buffer_size 4k;
        root {html};
    }
}
""" % certs['ec'])
    s = server(two, files={'html/r.bin': big})
    sizes = record_sizes(s.prefix.port, '/r.bin')
    assert sizes[0] <= 1400 and sizes[1] > sizes[0]            # a fast first byte
    assert max(sizes) == 16384 and sizes.count(16384) >= 10   # then full records
    assert sum(sizes) > len(big)                              # head + body, nothing lost
    sizes = record_sizes(s.prefix.port2, '/r.bin')
    assert sizes[0] <= 1400 and max(sizes) == 4096             # ssl_buffer_size caps them
