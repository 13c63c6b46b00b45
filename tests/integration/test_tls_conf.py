"""TLS configuration: bad certificates, keys and passwords fail -t with file:line and OpenSSL's reason; password
files; Debian's stock nginx.conf; reload swaps certificates without dropping connections."""
import os
import re
import signal
import shutil
import ssl

import pytest

from conftest import IS_NGINX
from helpers.tls import make_cert, cert_der, tls_connect, read_response, https_get, conf_with, line_of, openssl
from helpers.process import master_conf, wait_until


@pytest.mark.hayate_only  # nginx reports these without file:line
def test_bad_certificate_fails_t(prefix, run_cli):
    crt, key = make_cert(prefix.tmp, 'good', 'localhost')
    bad = prefix.write('bad.crt', 'not a certificate\n')
    path = prefix.conf(conf_with(bad, key))
    r = run_cli(['-t', '-c', path])
    assert r.rc != 0
    assert '%s:%d' % (path, line_of(path, 'ssl_certificate ')) in r.err
    assert 'bad.crt' in r.err and 'SSL:' in r.err and 'no start line' in r.err.lower().replace('_', ' ')


@pytest.mark.hayate_only  # nginx reports these without file:line
def test_missing_and_mismatched_key_fail_t(prefix, run_cli):
    crt, key = make_cert(prefix.tmp, 'good', 'localhost')
    crt2, key2 = make_cert(prefix.tmp, 'other', 'localhost', kind='rsa')
    path = prefix.conf(conf_with(crt, prefix.tmp + '/nope.key'))
    r = run_cli(['-t', '-c', path])
    assert r.rc != 0 and 'nope.key' in r.err and 'SSL:' in r.err and path + ':' in r.err
    path = prefix.conf(conf_with(crt, key2))
    r = run_cli(['-t', '-c', path])
    assert r.rc != 0 and 'key values mismatch' in r.err and path + ':' in r.err


@pytest.mark.hayate_only  # nginx reports these without file:line
def test_listen_ssl_without_certificate_fails_t(prefix, run_cli):
    path = prefix.conf('http {\n server {\n  listen 127.0.0.1:{port} ssl;\n }\n}\n')
    r = run_cli(['-t', '-c', path])
    assert r.rc != 0
    assert 'no "ssl_certificate" is defined for the "listen ... ssl" directive' in r.err
    assert path + ':' in r.err


@pytest.mark.hayate_only  # nginx reports these without file:line
def test_password_file(prefix, run_cli, server):
    crt, key = make_cert(prefix.tmp, 'enc', 'localhost', password='s3cret')
    prefix.write('conf/pw', 'wrong\ns3cret\n')
    prefix.write('conf/badpw', 'wrong\n')
    path = prefix.conf(conf_with(crt, key))
    r = run_cli(['-t', '-c', path])
    assert r.rc != 0 and 'PEM_read_bio_PrivateKey() failed' in r.err and path + ':' in r.err
    path = prefix.conf(conf_with(crt, key, 'ssl_password_file pw;'.replace('pw', prefix.tmp + '/conf/badpw')))
    r = run_cli(['-t', '-c', path])
    assert r.rc != 0 and 'SSL:' in r.err
    s = server(conf_with(crt, key, 'ssl_password_file %s/conf/pw;' % prefix.tmp))
    st, _, body, _ = https_get(s.prefix.port, '/')
    assert st == 200 and body == b'ok\n'


@pytest.mark.skipif(not os.path.exists('/etc/nginx/nginx.conf'), reason='no Debian nginx.conf')
def test_debian_stock_nginx_conf_passes_t(run_cli):
    with open('/etc/nginx/nginx.conf') as f:
        text = f.read()
    assert re.search(r'^\s*ssl_protocols ', text, re.M) and re.search(r'^\s*ssl_prefer_server_ciphers ', text, re.M)
    r = run_cli(['-t', '-c', '/etc/nginx/nginx.conf'])
    assert r.rc == 0, r.err


def test_ssl_directives_accepted(server, prefix):
    crt, key = make_cert(prefix.tmp, 'good', 'localhost', kind='ec')
    s = server(conf_with(crt, key, '''
        ssl_protocols TLSv1.2 TLSv1.3;
        ssl_ciphers ECDHE-ECDSA-AES256-GCM-SHA384;
        ssl_prefer_server_ciphers on;
        ssl_ecdh_curve X25519:prime256v1;
        ssl_conf_command Options -SessionTicket;
        ssl_buffer_size 4k;
        ssl_session_timeout 5m;
    '''))
    st, _, body, _ = https_get(s.prefix.port, '/')
    assert body == b'ok\n'
    c = tls_connect(s.prefix.port)
    if c.version() == 'TLSv1.2':
        assert c.cipher()[0] == 'ECDHE-ECDSA-AES256-GCM-SHA384'
    c.close()


@pytest.mark.hayate_only  # nginx reports these without file:line
def test_bad_conf_command_fails_t(prefix, run_cli):
    crt, key = make_cert(prefix.tmp, 'good', 'localhost', kind='ec')
    path = prefix.conf(conf_with(crt, key, 'ssl_conf_command NoSuchCommand on;'))
    r = run_cli(['-t', '-c', path])
    assert r.rc != 0 and 'SSL_CONF_cmd' in r.err and path + ':' in r.err


def test_reload_swaps_certificate_keeps_connections(server, prefix):
    crt1, key1 = make_cert(prefix.tmp, 'one', 'localhost', kind='ec')
    crt2, key2 = make_cert(prefix.tmp, 'two', 'localhost', kind='ec')
    live_crt, live_key = prefix.tmp + '/live.crt', prefix.tmp + '/live.key'
    shutil.copy(crt1, live_crt)
    shutil.copy(key1, live_key)
    big = os.urandom(1 << 20) * 24  # larger than the socket buffers: still in flight during the reloads
    body = """
    server {
        listen 127.0.0.1:{port} ssl;
        ssl_certificate %s;
        ssl_certificate_key %s;
        root {html};
    }""" % (live_crt, live_key)
    s = server(master_conf(body, workers=2), full=True, files={'html/big.bin': big})
    old = tls_connect(s.prefix.port)
    assert old.getpeercert(binary_form=True) == cert_der(crt1)
    old.sendall(b'GET /big.bin HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
    got = old.recv(65536)
    # a broken certificate: the reload is refused, the old configuration keeps serving. Files are replaced (a new
    # inode), not rewritten: with ssl_object_cache_inheritable on (the default) a reload keeps an object whose file
    # has the same inode and mtime, which a rewrite within the same second keeps (nginx 1.27.4+ alike)
    with open(live_crt + '.new', 'w') as f:
        f.write('garbage\n')
    os.replace(live_crt + '.new', live_crt)
    s.proc.send_signal(signal.SIGHUP)
    assert wait_until(lambda: 'SSL:' in s.error_log(), timeout=10)
    c = tls_connect(s.prefix.port)
    assert c.getpeercert(binary_form=True) == cert_der(crt1)
    c.close()
    for src, dst in ((crt2, live_crt), (key2, live_key)):
        shutil.copy(src, dst + '.new')
        os.replace(dst + '.new', dst)
    s.proc.send_signal(signal.SIGHUP)

    def new_cert():
        c = tls_connect(s.prefix.port)
        der = c.getpeercert(binary_form=True)
        c.close()
        return der == cert_der(crt2)
    assert wait_until(new_cert, timeout=10)
    # the transfer that started before both reloads completes (its old worker finishes it)
    while True:
        chunk = old.recv(1 << 20)
        if not chunk:
            break
        got += chunk
    old.close()
    head, rest = got.split(b'\r\n\r\n', 1)
    assert head.startswith(b'HTTP/1.1 200') and rest == big


def test_early_data(prefix, run_cli, server):
    crt, key = make_cert(prefix.tmp, 'good', 'localhost', kind='ec')
    path = prefix.conf(conf_with(crt, key, 'ssl_early_data on;'))
    r = run_cli(['-t', '-c', path])
    assert r.rc == 0, r.err  # 0-RTT itself: test_tls_early_data.py
    s = server(conf_with(crt, key, 'ssl_early_data off; location /e { return 200 "[$ssl_early_data]\\n"; }'))
    st, _, body, _ = https_get(s.prefix.port, '/e')
    assert body == b'[]\n'


def test_early_data_and_stapling_responder_values_checked(prefix, run_cli):
    """Values nginx refuses are refused with file:line: a non-flag for ssl_early_data, a responder that is not
    an http:// URL (nginx checks it when it would query the responder; hayate always, docs/directives.md)."""
    crt, key = make_cert(prefix.tmp, 'good', 'localhost', kind='ec')
    for extra, msg in (('ssl_early_data maybe;', 'it must be "on" or "off"'),
                       ('ssl_stapling on; ssl_stapling_responder ftp://ocsp.example;',
                        'invalid URL prefix in OCSP responder "ftp://ocsp.example"')):
        path = prefix.conf(conf_with(crt, key, extra))
        r = run_cli(['-t', '-c', path])
        assert r.rc != 0 and msg in r.err and path + ':' in r.err, r.err
    path = prefix.conf(conf_with(crt, key, 'ssl_stapling_responder http://127.0.0.1:1/ocsp;'))
    assert run_cli(['-t', '-c', path]).rc == 0


def _rss_kib(pid):
    with open('/proc/%d/status' % pid) as f:
        for ln in f:
            if ln.startswith('VmRSS:'):
                return int(ln.split()[1])
    raise AssertionError('no VmRSS')


def _open_idle(port, ctx, n):
    """n TLS keep-alive connections, each answered once and left open (idle, waiting for a next request)."""
    conns = []
    for _ in range(n):
        s = tls_connect(port, ctx=ctx)
        s.sendall(b'GET / HTTP/1.1\r\nHost: localhost\r\n\r\n')
        got = b''
        while not got.endswith(b'ok\n'):
            chunk = s.recv(4096)
            assert chunk, got
            got += chunk
        conns.append(s)
    return conns


@pytest.mark.hayate_only  # hayate's own policy (event/tls.c, KEEP_BUFFERS_MAX = 512)
def test_idle_connections_give_back_record_buffers(server, prefix, monkeypatch):
    """OpenSSL's record buffers stay with a keep-alive connection while the worker holds up to 512 TLS
    connections (no free/malloc around every request); beyond that, each connection that goes idle gives them
    back. Connections 262..512 (buffers kept) cost clearly more resident memory each than 522..922 (given back):
    both batches come after the first 260, which pay the one-time growth."""
    # under ASan freed buffers would sit in its quarantine and stay resident: reuse them at once instead
    monkeypatch.setenv('ASAN_OPTIONS', ':'.join(filter(None, [os.environ.get('ASAN_OPTIONS'),
                                                              'quarantine_size_mb=0'])))
    crt, key = make_cert(prefix.tmp, 'good', 'localhost', kind='ec')
    s = server(conf_with(crt, key, 'keepalive_timeout 60s;'))
    pid = s.proc.pid  # master_process off: this process serves
    ctx = __import__('helpers.tls', fromlist=['client_ctx']).client_ctx()
    conns = _open_idle(s.prefix.port, ctx, 260)
    r0 = _rss_kib(pid)
    conns += _open_idle(s.prefix.port, ctx, 250)
    r1 = _rss_kib(pid)
    conns += _open_idle(s.prefix.port, ctx, 12)  # over the threshold from here on
    r2 = _rss_kib(pid)
    conns += _open_idle(s.prefix.port, ctx, 400)
    r3 = _rss_kib(pid)
    kept = (r1 - r0) / 250.0
    given_back = (r3 - r2) / 400.0
    for c in conns:
        c.close()
    # KiB per connection: without the give-back both batches cost the same (24.5 and 24.4 in a release build);
    # with it the second costs ~10 KiB less (release and ASan builds alike)
    assert kept - given_back > 4, (r0, r1, r2, r3, kept, given_back)


def _peer_cn(port, sni):
    """The CN of the certificate the server sends for `sni`."""
    s = tls_connect(port, sni=sni)
    try:
        pem = ssl.DER_cert_to_PEM_cert(s.getpeercert(binary_form=True))
    finally:
        s.close()
    subj = openssl('x509', '-noout', '-subject', '-nameopt', 'RFC2253', input=pem.encode()).stdout.decode()
    return subj.strip().split('CN=', 1)[1].split(',')[0]


def test_certificate_named_by_variables(server, prefix):
    """ssl_certificate with variables: the pair is loaded at each handshake, after SNI chose the server."""
    for n in ('alpha', 'beta'):
        make_cert(prefix.tmp + '/conf', n, n + '.example', kind='ec')
    s = server('''
http {
    map $ssl_server_name $cert_name {
        default alpha;
        beta.example beta;
    }
    server {
        listen 127.0.0.1:{port} ssl;
        ssl_certificate $cert_name.crt;
        ssl_certificate_key $cert_name.key;
        location / { return 200 "$ssl_server_name\\n"; }
    }
    server {
        listen 127.0.0.1:{port2} ssl;
        ssl_certificate $ssl_server_name.crt;
        ssl_certificate_key $ssl_server_name.key;
        location / { return 200 "ok\\n"; }
    }
}
''')
    assert _peer_cn(s.prefix.port, 'beta.example') == 'beta.example'
    assert _peer_cn(s.prefix.port, 'other.example') == 'alpha.example'
    status, _, body, _ = https_get(s.prefix.port, sni='beta.example', host='beta.example')
    assert status == 200 and body == b'beta.example\n'
    # a name with no files: that handshake fails and is logged; the server goes on
    with pytest.raises(OSError):
        tls_connect(s.prefix.port2, sni='nothere').close()
    assert 'cannot load certificate' in prefix.error_log() and 'nothere.crt' in prefix.error_log()
    assert _peer_cn(s.prefix.port, 'beta.example') == 'beta.example'
