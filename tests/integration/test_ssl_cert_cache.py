"""Certificates and keys loaded by name and cached, as nginx documents them (ngx_http_ssl_module
ssl_certificate_cache, ngx_http_proxy_module proxy_ssl_certificate_cache, ngx_core_module
ssl_object_cache_inheritable, 1.27.4+; "data:" certificates; "store:" keys):

- `ssl_certificate_cache max=N [inactive=time] [valid=time]` caches certificates and keys named with variables:
  a replaced file is served from the cache until `valid` is over, then read again; the least recently used are
  evicted beyond `max`; a key that needed a password is never cached. `off` (the default) reads them each time.
- `ssl_object_cache_inheritable on` (default): on reload an object whose file keeps its inode and mtime is not
  read again; `off` reads everything again.
- A file named by several directives is read once per configuration (a FIFO works).

Debian's nginx 1.22 predates the caches: those tests are hayate_only."""
import os
import shutil
import signal
import ssl
import threading

import pytest

from conftest import IS_NGINX
from helpers.tls import make_cert, cert_der, tls_connect, https_get
from helpers.process import master_conf, wait_until


def peer_der(port, sni):
    try:
        c = tls_connect(port, sni=sni)
    except (ssl.SSLError, OSError):
        return None
    der = c.getpeercert(binary_form=True)
    c.close()
    return der


def replace(src, dst):
    """dst gets src's content as a new file (new inode), as `mv` does."""
    shutil.copy(src, dst + '.new')
    os.replace(dst + '.new', dst)


def var_conf(extra):
    return '''
http {
    server {
        listen 127.0.0.1:{port} ssl;
        server_name localhost;
        ssl_certificate {tmp}/certs/$ssl_server_name.crt;
        ssl_certificate_key {tmp}/certs/$ssl_server_name.key;
        %s
        location / { return 200 "ok\\n"; }
    }
}
''' % extra


@pytest.fixture
def certs(prefix):
    d = prefix.tmp + '/certs'
    os.makedirs(d, exist_ok=True)
    src = prefix.tmp + '/src'
    os.makedirs(src, exist_ok=True)
    out = {}
    for name in ('a.test', 'b.test', 'other'):
        out[name] = make_cert(src, name, name, kind='ec')
    for name in ('a.test', 'b.test'):
        shutil.copy(out[name][0], d + '/%s.crt' % name)
        shutil.copy(out[name][1], d + '/%s.key' % name)
    return d, out


@pytest.mark.hayate_only  # nginx 1.27.4+
def test_cached_until_valid_then_reread(server, certs):
    d, c = certs
    s = server(var_conf('ssl_certificate_cache max=10 valid=1s;'))
    assert peer_der(s.prefix.port, 'a.test') == cert_der(c['a.test'][0])
    replace(c['other'][0], d + '/a.test.crt')
    replace(c['other'][1], d + '/a.test.key')
    # within `valid` the cached pair is used (without the cache the new file would be read at once)
    assert peer_der(s.prefix.port, 'a.test') == cert_der(c['a.test'][0])
    # once `valid` is over the changed file is read again
    assert wait_until(lambda: peer_der(s.prefix.port, 'a.test') == cert_der(c['other'][0]), timeout=10)


def test_without_cache_each_handshake_reads_the_files(server, certs):
    d, c = certs
    s = server(var_conf(''))
    assert peer_der(s.prefix.port, 'a.test') == cert_der(c['a.test'][0])
    replace(c['other'][0], d + '/a.test.crt')
    replace(c['other'][1], d + '/a.test.key')
    assert peer_der(s.prefix.port, 'a.test') == cert_der(c['other'][0])


@pytest.mark.hayate_only  # nginx 1.27.4+
def test_max_evicts_least_recently_used(server, certs):
    d, c = certs
    # a certificate and its key are two objects: max=2 holds one pair
    s = server(var_conf('ssl_certificate_cache max=2;'))
    assert peer_der(s.prefix.port, 'a.test') == cert_der(c['a.test'][0])
    assert peer_der(s.prefix.port, 'b.test') == cert_der(c['b.test'][0])
    for name in ('a.test', 'b.test'):
        os.unlink(d + '/%s.crt' % name)
        os.unlink(d + '/%s.key' % name)
    assert peer_der(s.prefix.port, 'b.test') == cert_der(c['b.test'][0])  # still cached
    assert peer_der(s.prefix.port, 'a.test') is None  # evicted: the files are gone
    assert wait_until(lambda: 'cannot load certificate' in s.error_log(), timeout=5)


@pytest.mark.hayate_only  # nginx 1.27.4+
def test_encrypted_key_is_not_cached(server, prefix):
    d = prefix.tmp + '/certs'
    os.makedirs(d)
    crt, key = make_cert(d, 'e.test', 'e.test', password='s3cret')
    ocrt, okey = make_cert(prefix.tmp, 'other', 'other', kind='rsa')  # the same key type: a true mismatch
    prefix.write('conf/pw', 's3cret\n')
    s = server(var_conf('ssl_certificate_cache max=10; ssl_password_file %s/conf/pw;' % prefix.tmp))
    assert peer_der(s.prefix.port, 'e.test') == cert_der(crt)
    replace(ocrt, crt)
    replace(okey, key)
    # the certificate was cached but the key was not: the mismatched pair is read again, both files
    assert peer_der(s.prefix.port, 'e.test') == cert_der(ocrt)


@pytest.mark.hayate_only  # nginx 1.27.4+
def test_proxy_ssl_certificate_cache(server, certs):
    d, c = certs
    s = server('''
http {
    server {
        listen 127.0.0.1:{port};
        location / {
            proxy_pass https://127.0.0.1:{port2};
            proxy_ssl_certificate {tmp}/certs/$arg_c.crt;
            proxy_ssl_certificate_key {tmp}/certs/$arg_c.key;
            proxy_ssl_certificate_cache max=10;
            proxy_ssl_session_reuse off;
        }
        location /nocache {
            proxy_pass https://127.0.0.1:{port2};
            proxy_ssl_certificate {tmp}/certs/$arg_c.crt;
            proxy_ssl_certificate_key {tmp}/certs/$arg_c.key;
            proxy_ssl_session_reuse off;
        }
    }
    server {
        listen 127.0.0.1:{port2} ssl;
        ssl_certificate {tmp}/src/other.crt;
        ssl_certificate_key {tmp}/src/other.key;
        ssl_verify_client optional_no_ca;
        location / { return 200 "$ssl_client_s_dn\\n"; }
    }
}
''')
    assert s.get('/?c=a.test').body == b'CN=a.test\n'
    replace(c['b.test'][0], d + '/a.test.crt')
    replace(c['b.test'][1], d + '/a.test.key')
    assert s.get('/?c=a.test').body == b'CN=a.test\n'  # cached
    assert s.get('/nocache?c=a.test').body == b'CN=b.test\n'  # the location that sets it off


def test_data_certificate(server, prefix):
    crt, key = make_cert(prefix.tmp, 'inline', 'inline.test', kind='ec')
    pem = open(crt).read().strip()
    s = server('''
http {
    server {
        listen 127.0.0.1:{port} ssl;
        ssl_certificate "data:%s";
        ssl_certificate_key %s;
        location / { return 200 "ok\\n"; }
    }
}
''' % (pem, key))
    assert peer_der(s.prefix.port, 'x') == cert_der(crt)


@pytest.mark.hayate_only  # "store:" keys: nginx 1.29.0+
def test_store_key(server, prefix):
    crt, key = make_cert(prefix.tmp, 'st', 'st.test', kind='ec')
    s = server('''
http {
    server {
        listen 127.0.0.1:{port} ssl;
        ssl_certificate %s;
        ssl_certificate_key store:file:%s;
        location / { return 200 "ok\\n"; }
    }
}
''' % (crt, key))
    st, _, body, _ = https_get(s.prefix.port, '/')
    assert st == 200 and body == b'ok\n'


def fifo_writer(path, content):
    """Writes content to the FIFO once, then nothing to any later reader (as nginx's ssl_cache.t does)."""
    def run():
        data = content
        for _ in range(50):
            try:
                with open(path, 'w') as f:
                    f.write(data)
            except OSError:
                return
            data = ''
    t = threading.Thread(target=run, daemon=True)
    t.start()


@pytest.mark.hayate_only  # nginx 1.27.2+
def test_file_named_twice_is_read_once(server, prefix):
    crt, key = make_cert(prefix.tmp, 'f', 'fifo.test', kind='ec')
    for name, src in (('f.crt.fifo', crt), ('f.key.fifo', key)):
        os.mkfifo(prefix.tmp + '/' + name)
        fifo_writer(prefix.tmp + '/' + name, open(src).read())
    s = server('''
http {
    ssl_certificate {tmp}/f.crt.fifo;
    ssl_certificate_key {tmp}/f.key.fifo;
    server {
        listen 127.0.0.1:{port} ssl;
        location / { return 200 "ok\\n"; }
    }
    server {
        listen 127.0.0.1:{port2} ssl;
        location / { return 200 "ok\\n"; }
    }
}
''')
    assert peer_der(s.prefix.port, 'x') == cert_der(crt)
    assert peer_der(s.prefix.port2, 'x') == cert_der(crt)


@pytest.mark.hayate_only  # nginx 1.27.4+
@pytest.mark.parametrize('inheritable', ['on', 'off'])
def test_object_cache_inheritable(server, prefix, inheritable):
    c1, k1 = make_cert(prefix.tmp, 'one', 'one.test', kind='ec')
    c2, k2 = make_cert(prefix.tmp, 'two', 'two.test', kind='ec')
    live_c, live_k = prefix.tmp + '/live.crt', prefix.tmp + '/live.key'
    shutil.copy(c1, live_c)
    shutil.copy(k1, live_k)

    def conf(gen):
        return master_conf('''
    server {
        listen 127.0.0.1:{port} ssl;
        ssl_certificate %s;
        ssl_certificate_key %s;
        location / { return 200 "%s\\n"; }
    }''' % (live_c, live_k, gen), workers=1, main='ssl_object_cache_inheritable %s;' % inheritable)
    s = server(conf('gen1'), full=True)
    assert peer_der(s.prefix.port, 'x') == cert_der(c1)
    # rewritten in place with the same mtime: the same inode, the same mtime
    for src, dst in ((c2, live_c), (k2, live_k)):
        st = os.stat(dst)
        with open(src, 'rb') as f, open(dst, 'wb') as o:
            o.write(f.read())
        os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns))
    prefix.conf(conf('gen2'), full=True)
    s.proc.send_signal(signal.SIGHUP)
    assert wait_until(lambda: https_get(s.prefix.port, '/')[2] == b'gen2\n', timeout=10)
    want = c1 if inheritable == 'on' else c2
    assert peer_der(s.prefix.port, 'x') == cert_der(want)
