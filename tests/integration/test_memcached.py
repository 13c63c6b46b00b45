"""memcached_pass (nginx's ngx_http_memcached_module) against Debian's memcached, and against peers written here for
what a real memcached never sends (a wrong key, a bad trailer, a value cut short). Written from nginx's documentation
and source; they pass against Debian's nginx (HY_BIN=/usr/sbin/nginx)."""
import gzip
import re
import socket

import pytest

from conftest import IS_NGINX
from helpers.appservers import memcached
from helpers.rawpeer import RawPeer


@pytest.fixture
def memd(prefix):
    m = memcached(prefix.tmp)
    yield m
    m.stop()


CONF = '''
http {
    include mime.types;
    default_type application/octet-stream;
    upstream memd {
        server %s;
        keepalive 2;
    }
    server {
        listen 127.0.0.1:{port};
        location / {
            set $memcached_key $uri;
            memcached_pass memd;
        }
        location /fallback/ {
            set $memcached_key $uri;
            memcached_pass memd;
            error_page 404 = @app;
        }
        location @app {
            return 200 "from the app\\n";
        }
        location /nokey {
            memcached_pass memd;
        }
        location /args {
            set $memcached_key "$arg_k";
            memcached_pass memd;
        }
        location /gz/ {
            set $memcached_key $uri;
            memcached_gzip_flag 2;
            memcached_pass memd;
        }
        location /gunzip/ {
            gunzip on;
            set $memcached_key $uri;
            memcached_gzip_flag 2;
            memcached_pass memd;
        }
    }
}
'''


def used(m, before):
    """Connections memcached took since `before` (a connections() reading), not counting the reading after."""
    return m.connections() - before - 1


def test_a_value_is_served_with_the_type_of_its_uri_and_its_length(server, memd):
    memd.set('/style.css', 'body{}')
    srv = server(CONF % memd.addr)
    r = srv.get('/style.css')
    assert r.status == 200 and r.body == b'body{}'
    assert r.header('Content-Type') == 'text/css'
    assert r.header('Content-Length') == '6'
    assert not r.has('Last-Modified') and not r.has('Content-Encoding')
    r = srv.get('/style.css', headers={'Range': 'bytes=1-3'})  # nginx's force_ranges
    assert r.status == 206 and r.body == b'ody' and r.header('Content-Range') == 'bytes 1-3/6'


def test_head_has_the_length_and_no_body(server, memd):
    memd.set('/a.txt', 'hello')
    srv = server(CONF % memd.addr)
    r = srv.head('/a.txt')
    assert r.status == 200 and r.body == b'' and r.header('Content-Length') == '5'


def test_a_missing_key_is_a_404_and_error_page_can_fall_back(server, memd):
    srv = server(CONF % memd.addr)
    r = srv.get('/none.html')
    assert r.status == 404
    assert re.search(r'\[info\] .*key: "/none.html" was not found by memcached', srv.error_log()), srv.error_log()
    memd.set('/fallback/hit', 'cached')
    assert srv.get('/fallback/hit').body == b'cached'
    r = srv.get('/fallback/miss')
    assert r.status == 200 and r.body == b'from the app\n'


def test_one_pooled_connection_serves_values_and_misses_and_head_closes_it(server, memd):
    """A value read to its trailer and an END both leave the connection reusable; a HEAD does not read the value, so
    that connection is closed (nginx-tests memcached_keepalive.t)."""
    memd.set('/k', 'SEE-THIS')
    srv = server(CONF % memd.addr)
    assert srv.get('/k').body == b'SEE-THIS'  # the pool has its connection now
    before = memd.connections()
    for path in ('/k', '/missing', '/k', '/fallback/miss', '/k'):
        srv.get(path)
    assert used(memd, before) == 0
    before = memd.connections()
    assert srv.head('/k').body == b''
    assert srv.get('/k').body == b'SEE-THIS'
    assert used(memd, before) == 1


def test_key_is_escaped_as_nginx_escapes_it(server, memd):
    """Control characters, space and '%' go as %XX; the rest as it is."""
    memd.set('/a%20b%25c/d\xe9', 'escaped')
    srv = server(CONF % memd.addr)
    r = srv.get('/a%20b%25c/d%E9')  # $uri: "/a b%c/d" and the byte 0xe9
    assert r.status == 200 and r.body == b'escaped'
    memd.set('raw', 'by arg')
    assert srv.get('/args?k=raw').body == b'by arg'


def test_an_unset_key_is_a_500(server, memd):
    srv = server(CONF % memd.addr)
    assert srv.get('/nokey').status == 500
    assert 'the "$memcached_key" variable is not set' in srv.error_log()


def test_only_get_and_head(server, memd):
    memd.set('/k', 'v')
    srv = server(CONF % memd.addr)
    assert srv.get('/k', method='POST', body='x=1').status == 405
    assert srv.get('/k', method='DELETE').status == 405


def test_gzip_flag_names_the_encoding_and_gunzip_can_undo_it(server, memd):
    packed = gzip.compress(b'TEST' * 10)
    memd.set('/gz/v', packed, flags=2)
    memd.set('/gz/plain', 'plain', flags=4)
    memd.set('/gunzip/v', packed, flags=3)
    srv = server(CONF % memd.addr)
    r = srv.get('/gz/v')
    assert r.header('Content-Encoding') == 'gzip' and r.body == packed
    r = srv.get('/gz/plain')
    assert not r.has('Content-Encoding') and r.body == b'plain'
    assert srv.get('/gunzip/v').body == b'TEST' * 10  # a client that did not ask for gzip
    r = srv.get('/gunzip/v', headers={'Accept-Encoding': 'gzip'})
    assert r.header('Content-Encoding') == 'gzip' and gzip.decompress(r.body) == b'TEST' * 10


def test_next_upstream_not_found_asks_the_next_server(server, prefix):
    a, b = memcached(prefix.tmp), memcached(prefix.tmp)
    try:
        b.set('/only-on-b', 'from b')
        srv = server('''
http {
    upstream two {
        server %s;
        server %s;
    }
    server {
        listen 127.0.0.1:{port};
        location / {
            set $memcached_key $uri;
            memcached_next_upstream not_found;
            memcached_pass two;
        }
        location /plain/ {
            set $memcached_key /only-on-b;
            memcached_pass two;
        }
    }
}
''' % (a.addr, b.addr))
        for _ in range(4):  # whichever peer round robin starts with
            assert srv.get('/only-on-b').body == b'from b'
        statuses = sorted(srv.get('/plain/').status for _ in range(4))
        assert statuses == [200, 200, 404, 404]  # without not_found, a's miss is the answer
    finally:
        a.stop()
        b.stop()


def test_over_a_unix_socket(server, prefix):
    m = memcached(prefix.tmp, unix=True)
    try:
        m.set('/u', 'over unix')
        srv = server(CONF % m.addr)
        assert srv.get('/u').body == b'over unix'
    finally:
        m.stop()


# ---------------------------------------------------------------- what a real memcached never sends


class FakeMemcached(RawPeer):
    """Answers every "get KEY" with reply(key) (bytes, or a list of parts sent apart); records the keys."""

    def __init__(self, reply):
        self.reply, self.keys = reply, []
        super().__init__()

    def serve(self, c):
        with c:
            f = c.makefile('rb')
            while True:
                line = f.readline()
                if not line:
                    return
                key = line[4:].rstrip(b'\r\n')
                self.keys.append(key)
                parts = self.reply(key)
                for p in parts if isinstance(parts, list) else [parts]:
                    c.sendall(p)
                if not isinstance(parts, list):
                    continue
                return  # a list: the peer closes after it


FAKE = '''
http {
    server {
        listen 127.0.0.1:{port};
        location / {
            set $memcached_key $uri;
            memcached_pass 127.0.0.1:%d;
        }
        location /gz/ {
            set $memcached_key $uri;
            memcached_gzip_flag 1;
            memcached_pass 127.0.0.1:%d;
        }
    }
}
'''


def fake(server, reply):
    p = FakeMemcached(reply)
    return p, server(FAKE % (p.port, p.port))


@pytest.mark.parametrize('line,words', [
    (b'ERROR\r\n', r'memcached sent invalid response: "ERROR"'),
    (b'VALUE /other 0 1\r\nx\r\nEND\r\n', r'memcached sent invalid key in response "VALUE /other 0 1" for key "/k"'),
    (b'VALUE /k 0 x1\r\n', r'memcached sent invalid length in response "VALUE /k 0 x1" for key "/k"'),
    (b'VALUE /k 0\r\n', r'memcached sent invalid response: "VALUE /k 0"'),
    (b'END\n', r'memcached sent invalid response: "END"'),
])
def test_an_invalid_head_is_a_502_in_nginx_words(server, line, words):
    p, srv = fake(server, lambda key: line)
    try:
        assert srv.get('/k').status == 502
        assert re.search(r'\[error\] .*' + re.escape(words), srv.error_log()), srv.error_log()
        if not IS_NGINX:
            assert 'upstream sent invalid header' not in srv.error_log()
    finally:
        p.stop()


def test_invalid_flags_matter_only_with_a_gzip_flag(server):
    p, srv = fake(server, lambda key: b'VALUE ' + key + b' zz 2\r\nok\r\nEND\r\n')
    try:
        assert srv.get('/k').body == b'ok'
        assert srv.get('/gz/k').status == 502
        assert 'memcached sent invalid flags in response "VALUE /gz/k zz 2" for key "/gz/k"' in srv.error_log()
    finally:
        p.stop()


def test_a_value_and_trailer_split_across_reads(server):
    """nginx-tests memcached_fake.t: the trailer arriving in pieces is no error."""
    p, srv = fake(server, lambda key: [b'VALUE /k 0 8\r\nSEE-TH', b'IS', b'\r\nEN', b'D\r\n'])
    try:
        r = srv.get('/k')
        assert r.status == 200 and r.body == b'SEE-THIS'
        assert '[error]' not in srv.error_log(), srv.error_log()
    finally:
        p.stop()


def test_a_bad_trailer_still_delivers_the_value_and_is_logged(server):
    p, srv = fake(server, lambda key: [b'VALUE /k 0 8\r\nSEE-THIS\r\nEND\r\n\x00EXTRA'])
    try:
        r = srv.get('/k')
        assert r.status == 200 and r.body == b'SEE-THIS'
        assert 'memcached sent invalid trailer' in srv.error_log()
    finally:
        p.stop()


def test_a_value_cut_short_ends_the_client_connection(server):
    p, srv = fake(server, lambda key: [b'VALUE /k 0 100\r\n' + b'x' * 10])
    try:
        c = socket.create_connection(('127.0.0.1', srv.port), timeout=5)
        c.sendall(b'GET /k HTTP/1.1\r\nHost: x\r\n\r\n')
        data = b''
        while True:
            chunk = c.recv(65536)
            if not chunk:
                break
            data += chunk
        head, _, body = data.partition(b'\r\n\r\n')
        assert b' 200 ' in head and b'Content-Length: 100' in head and body == b'x' * 10
        assert 'upstream prematurely closed connection' in srv.error_log()
    finally:
        p.stop()


@pytest.mark.parametrize('directive', ['memcached_pass 127.0.0.1;', 'fastcgi_pass 127.0.0.1;', 'scgi_pass localhost;',
                                       'uwsgi_pass uwsgi://127.0.0.1;'])
def test_a_target_without_port_fails_the_config(run_cli, prefix, directive):
    """These modules have no default port: nginx's "no port in upstream" at the directive's line (an upstream{} name
    and unix: need none)."""
    conf = prefix.conf('''http {
    server {
        listen 127.0.0.1:{port};
        location / {
            set $memcached_key $uri;
            %s
        }
    }
}
''' % directive)
    res = run_cli(['-p', prefix.tmp + '/', '-c', conf, '-t'])
    host = directive.split()[1].rstrip(';').replace('uwsgi://', '')
    assert res.rc == 1, res
    with open(conf) as f:
        line = next(i for i, l in enumerate(f.read().splitlines(), 1) if directive in l)
    assert 'no port in upstream "%s" in %s:%d' % (host, conf, line) in res.err, res.err


def test_an_upstream_name_and_a_unix_socket_need_no_port(run_cli, prefix):
    conf = prefix.conf('''http {
    server {
        listen 127.0.0.1:{port};
        location / { set $memcached_key $uri; memcached_pass memd; }
        location /u { fastcgi_pass unix:/tmp/no-such.sock; }
    }
    upstream memd { server 127.0.0.1:11211; }
}
''')
    res = run_cli(['-p', prefix.tmp + '/', '-c', conf, '-t'])
    assert res.rc == 0, res
