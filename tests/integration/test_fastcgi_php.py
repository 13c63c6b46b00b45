"""fastcgi_pass to a real PHP-FPM from Debian, over a unix socket and over TCP (issue 13).

Written from nginx's ngx_http_fastcgi_module documentation and checked against Debian's nginx
(HY_BIN=/usr/sbin/nginx); the parameter files come from the binary's conf/ (nginx: /etc/nginx).
"""
import hashlib
import http.client
import os
import shutil
import threading

import pytest

from conftest import IS_NGINX, REPO
from helpers.appservers import php_fpm

pytestmark = pytest.mark.skipif(not os.path.exists('/usr/sbin/php-fpm8.2'), reason='php-fpm8.2 missing')

SCRIPTS = {
    'env.php': '''<?php
header('Content-Type: text/plain');
foreach (['REQUEST_METHOD', 'QUERY_STRING', 'SCRIPT_NAME', 'SCRIPT_FILENAME', 'REQUEST_URI', 'DOCUMENT_URI',
          'SERVER_PROTOCOL', 'GATEWAY_INTERFACE', 'CONTENT_TYPE', 'CONTENT_LENGTH', 'REMOTE_ADDR', 'SERVER_PORT',
          'REQUEST_SCHEME', 'HTTP_X_TEST', 'PATH_INFO', 'HTTP_HOST', 'REDIRECT_STATUS'] as $k) {
    echo $k, '=', isset($_SERVER[$k]) ? $_SERVER[$k] : '-', "\\n";
}
echo 'GET=', json_encode($_GET), "\\n";
''',
    'post.php': '''<?php
header('Content-Type: text/plain');
echo 'POST=', json_encode($_POST), "\\n";
$raw = file_get_contents('php://input');
echo 'RAW_LEN=', strlen($raw), "\\n", 'RAW_MD5=', md5($raw), "\\n";
''',
    'upload.php': '''<?php
header('Content-Type: text/plain');
foreach ($_FILES as $name => $f) {
    echo $name, ' ', $f['name'], ' ', $f['size'], ' ', md5_file($f['tmp_name']), "\\n";
}
echo 'FIELD=', isset($_POST['field']) ? $_POST['field'] : '-', "\\n";
''',
    'status.php': '''<?php
http_response_code(intval($_GET['code'] ?? 200));
header('X-App: php');
setcookie('a', '1');
setcookie('b', '2');
echo 'status body';
''',
    'big.php': '''<?php
header('Content-Type: application/octet-stream');
$chunk = str_repeat('0123456789abcdef', 4096);
for ($i = 0; $i < 32; $i++) { echo $chunk; }
''',
    'stream.php': '''<?php
header('Content-Type: text/plain');
for ($i = 0; $i < 5; $i++) { echo "line $i\\n"; flush(); }
''',
    'slow.php': '''<?php
sleep(3);
echo 'late';
''',
    'stderr.php': '''<?php
error_log('hello from php stderr');
echo 'ok';
''',
    'bigparams.php': '''<?php
header('Content-Type: text/plain');
for ($i = 0; $i < 12; $i++) {
    $v = $_SERVER['HTTP_X_BIG_' . $i] ?? '';
    echo 'X', $i, '=', strlen($v), ':', md5($v), "\\n";
}
echo 'REQUEST_URI=', $_SERVER['REQUEST_URI'], "\\n";
''',
    'redirect.php': '''<?php
header('Location: /env.php?from=redirect');
''',
}

SCRIPTS['dir/env.php'] = SCRIPTS['env.php']


def params(prefix, name):
    """Copy nginx's parameter file `name` into the prefix's conf/ (hayate: its own conf/; nginx: Debian's)."""
    src = os.path.join('/etc/nginx', name) if IS_NGINX else os.path.join(REPO, 'conf', name)
    shutil.copy(src, prefix.path('conf/' + name))


CONF = '''
http {
    large_client_header_buffers 8 16k;
    server {
        listen 127.0.0.1:{port};
        root {tmp}/php;
        fastcgi_read_timeout 10s;
        location ~ \\.php$ {
            include fastcgi.conf;
            fastcgi_param HTTP_X_TEST "from-conf";
            fastcgi_pass %s;
        }
        location /slow {
            include fastcgi.conf;
            fastcgi_param SCRIPT_FILENAME {tmp}/php/slow.php;
            fastcgi_read_timeout 1s;
            fastcgi_pass %s;
        }
        location /pathinfo/ {
            fastcgi_split_path_info ^(/pathinfo/.+?\\.php)(/.*)$;
            include fastcgi_params;
            fastcgi_param SCRIPT_FILENAME {tmp}/php/env.php;
            fastcgi_param PATH_INFO $fastcgi_path_info;
            fastcgi_pass %s;
        }
        location /dir/ {
            fastcgi_index env.php;
            include fastcgi_params;
            fastcgi_param SCRIPT_FILENAME {tmp}/php$fastcgi_script_name;
            fastcgi_pass %s;
        }
    }
}
'''


@pytest.fixture(params=['unix', 'tcp'])
def fpm(request, prefix):
    b = php_fpm(prefix.tmp, SCRIPTS, unix=request.param == 'unix')
    yield b
    b.stop()


@pytest.fixture
def srv(server, prefix, fpm):
    params(prefix, 'fastcgi_params')
    params(prefix, 'fastcgi.conf')
    return server(CONF % ((fpm.addr,) * 4))


def lines(body):
    return dict(l.split('=', 1) for l in body.decode().splitlines() if '=' in l)


def test_get_with_query_passes_cgi_params(srv, prefix):
    r = srv.get('/env.php?a=1&b=two', headers={'X-Test': 'client'})
    assert r.status == 200
    v = lines(r.body)
    assert v['REQUEST_METHOD'] == 'GET'
    assert v['QUERY_STRING'] == 'a=1&b=two'
    assert v['SCRIPT_NAME'] == '/env.php'
    assert v['SCRIPT_FILENAME'] == prefix.tmp + '/php/env.php'
    assert v['REQUEST_URI'] == '/env.php?a=1&b=two'
    assert v['GATEWAY_INTERFACE'] == 'CGI/1.1'
    assert v['SERVER_PROTOCOL'] == 'HTTP/1.1'
    assert v['REMOTE_ADDR'] == '127.0.0.1'
    assert v['SERVER_PORT'] == str(prefix.port)
    assert v['REDIRECT_STATUS'] == '200'
    assert v['HTTP_HOST'] == 'localhost'
    # fastcgi_param HTTP_X_TEST replaces the client's X-Test (the param wins, as in nginx)
    assert v['HTTP_X_TEST'] == 'from-conf'
    assert v['GET'] == '{"a":"1","b":"two"}'


def check_big_params(srv, n, size):
    big = {'X-Big-%d' % i: ('%d' % i)[-1] * size for i in range(n)}
    r = srv.get('/bigparams.php?q=1', headers=big)
    assert r.status == 200, r
    v = lines(r.body)
    for i in range(12):
        val = big.get('X-Big-%d' % i, '').encode()
        assert v['X%d' % i] == '%d:%s' % (len(val), hashlib.md5(val).hexdigest())
    assert v['REQUEST_URI'] == '/bigparams.php?q=1'


def test_parameters_larger_than_32k(srv):
    # about 48 KiB of parameters in one PARAMS record (PHP-FPM parses each record on its own: a pair cut across
    # two records was refused, and the connection closed: 502)
    check_big_params(srv, 6, 8000)


@pytest.mark.hayate_only
def test_parameters_larger_than_one_record(srv):
    # about 108 KiB: more than a record holds (65535 bytes). nginx refuses ("fastcgi request record is too big",
    # 500); hayate sends several PARAMS records, each with whole pairs (DIFFERENCES.md)
    check_big_params(srv, 12, 9000)


def test_post_form(srv):
    r = srv.get('/post.php', method='POST', body=b'x=1&y=hello+world',
                headers={'Content-Type': 'application/x-www-form-urlencoded'})
    assert r.status == 200
    v = lines(r.body)
    assert v['POST'] == '{"x":"1","y":"hello world"}'


def test_post_1mib_raw_body_arrives_byte_exact(srv):
    body = os.urandom(1 << 20)
    r = srv.get('/post.php', method='POST', body=body, headers={'Content-Type': 'application/octet-stream'})
    assert r.status == 200
    v = lines(r.body)
    assert v['RAW_LEN'] == str(len(body))
    assert v['RAW_MD5'] == hashlib.md5(body).hexdigest()


def test_chunked_request_body(srv):
    c = srv.conn()
    c.sock.sendall(b'POST /post.php HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/octet-stream\r\n'
                   b'Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n')
    r = c.read_response()
    assert r.status == 200
    v = lines(r.body)
    assert v['RAW_LEN'] == '11'
    assert v['RAW_MD5'] == hashlib.md5(b'hello world').hexdigest()


def test_multipart_upload(srv):
    data = os.urandom(200000)
    b = b'----hyboundary'
    body = (b'--' + b + b'\r\nContent-Disposition: form-data; name="field"\r\n\r\nvalue\r\n'
            b'--' + b + b'\r\nContent-Disposition: form-data; name="f"; filename="x.bin"\r\n'
            b'Content-Type: application/octet-stream\r\n\r\n' + data + b'\r\n--' + b + b'--\r\n')
    r = srv.get('/upload.php', method='POST', body=body,
                headers={'Content-Type': 'multipart/form-data; boundary=' + b.decode()})
    assert r.status == 200
    text = r.body.decode()
    assert 'f x.bin %d %s' % (len(data), hashlib.md5(data).hexdigest()) in text
    assert 'FIELD=value' in text


@pytest.mark.parametrize('code', [200, 201, 404, 503])
def test_status_headers_and_cookies(srv, code):
    r = srv.get('/status.php?code=%d' % code)
    assert r.status == code
    assert r.header('x-app') == 'php'
    cookies = r.header_all('set-cookie')
    assert cookies == ['a=1', 'b=2']
    assert r.body == b'status body'


def test_large_response(srv):
    r = srv.get('/big.php')
    assert r.status == 200
    assert r.body == b'0123456789abcdef' * 4096 * 32


def test_streamed_response(srv):
    r = srv.get('/stream.php')
    assert r.status == 200
    assert r.body == b''.join(b'line %d\n' % i for i in range(5))


def test_head_request(srv):
    r = srv.head('/status.php')
    assert r.status == 200
    assert r.body == b''


def test_missing_script_is_404(srv):
    r = srv.get('/nope.php')
    assert r.status == 404


def test_app_stderr_is_logged_at_error(srv, prefix):
    r = srv.get('/stderr.php')
    assert r.status == 200
    assert r.body == b'ok'
    log = prefix.error_log()
    assert 'FastCGI sent in stderr' in log
    assert 'hello from php stderr' in log
    assert '[error]' in [l for l in log.splitlines() if 'hello from php stderr' in l][0]


def test_slow_app_is_504(srv):
    r = srv.get('/slow')
    assert r.status == 504


def test_location_header_without_status_is_302(srv):
    r = srv.get('/redirect.php')
    assert r.status == 302
    assert r.header('location', '').endswith('/env.php?from=redirect')


def test_split_path_info(srv):
    r = srv.get('/pathinfo/app.php/extra/path')
    assert r.status == 200
    v = lines(r.body)
    assert v['SCRIPT_NAME'] == '/pathinfo/app.php'
    assert v['PATH_INFO'] == '/extra/path'


def test_fastcgi_index(srv):
    r = srv.get('/dir/')
    assert r.status == 200
    v = lines(r.body)
    assert v['SCRIPT_NAME'] == '/dir/env.php'


UNIX_CONNECT_FAILED = r'\[crit\].*connect\(\) to unix:.*failed \(2: No such file or directory\)'


def test_app_down_is_502(srv, fpm):
    srv.ignore_log = UNIX_CONNECT_FAILED
    fpm.stop()
    r = srv.get('/env.php')
    assert r.status == 502


def test_app_restarted_under_load_no_failed_get(srv, fpm, prefix):
    """PHP-FPM restarted while clients keep asking: every GET gets a 200 or, while it is down, a 502 —
    never a reset or a hang; after the restart every request succeeds again."""
    srv.ignore_log = UNIX_CONNECT_FAILED
    stop = threading.Event()
    bad = []

    def load():
        while not stop.is_set():
            try:
                c = http.client.HTTPConnection('127.0.0.1', prefix.port, timeout=10)
                c.request('GET', '/env.php')
                st = c.getresponse().status
                c.close()
                if st not in (200, 502):
                    bad.append(st)
            except Exception as e:  # noqa: BLE001
                bad.append(repr(e))

    ts = [threading.Thread(target=load) for _ in range(4)]
    for t in ts:
        t.start()
    try:
        fpm.restart()
    finally:
        stop.set()
        for t in ts:
            t.join(30)
    assert bad == []
    for _ in range(20):
        assert srv.get('/env.php').status == 200


DEBIAN_SNIPPET = '/etc/nginx/snippets/fastcgi-php.conf'


@pytest.mark.skipif(not os.path.exists(DEBIAN_SNIPPET), reason='nginx-common (Debian snippets) missing')
def test_debian_site_php_block_serves_php(server, prefix, fpm):
    """Debian's default site with its PHP block uncommented: snippets/fastcgi-php.conf unchanged."""
    params(prefix, 'fastcgi.conf')
    os.makedirs(prefix.path('conf/snippets'), exist_ok=True)
    shutil.copy(DEBIAN_SNIPPET, prefix.path('conf/snippets/fastcgi-php.conf'))
    srv = server('''
http {
    include mime.types;
    server {
        listen 127.0.0.1:{port} default_server;
        root {tmp}/php;
        index index.html index.htm index.nginx-debian.html;
        server_name _;
        location / {
            try_files $uri $uri/ =404;
        }
        location ~ \\.php$ {
            include snippets/fastcgi-php.conf;
            fastcgi_pass %s;
        }
    }
}
''' % fpm.addr)
    r = srv.get('/env.php?q=1')
    assert r.status == 200
    v = lines(r.body)
    assert v['SCRIPT_NAME'] == '/env.php'
    assert v['SCRIPT_FILENAME'] == prefix.tmp + '/php/env.php'
    assert v['QUERY_STRING'] == 'q=1'
    assert srv.get('/missing.php').status == 404
