"""auth_basic (ngx_http_auth_basic_module) against htpasswd files made by the real tools: openssl passwd
(-1, -5, -6, -apr1), mkpasswd (yescrypt, bcrypt), htpasswd (-B, -m, -s), plus {PLAIN} and {SSHA}; nginx's 401
with WWW-Authenticate and its error-log lines; variables in the realm and the file name; a changed file takes
effect without a reload."""
import base64
import hashlib
import os
import shutil
import socket
import subprocess
import time

import pytest

from helpers.process import master_conf, workers_of

PASSWORD = 'pa55 w0rd!'


def basic(user, pw):
    return {'Authorization': 'Basic ' + base64.b64encode(('%s:%s' % (user, pw)).encode()).decode()}


def run(*cmd):
    return subprocess.run(cmd, check=True, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL).stdout.decode().strip()


def hashes():
    out = {
        'md5': run('openssl', 'passwd', '-1', PASSWORD),
        'sha256': run('openssl', 'passwd', '-5', PASSWORD),
        'sha512': run('openssl', 'passwd', '-6', PASSWORD),
        'apr1': run('openssl', 'passwd', '-apr1', PASSWORD),
        'plain': '{PLAIN}' + PASSWORD,
    }
    salt = os.urandom(8)
    out['ssha'] = '{SSHA}' + base64.b64encode(hashlib.sha1(PASSWORD.encode() + salt).digest() + salt).decode()
    if shutil.which('mkpasswd'):
        out['yescrypt'] = run('mkpasswd', '-m', 'yescrypt', PASSWORD)
        out['bcrypt'] = run('mkpasswd', '-m', 'bcrypt', PASSWORD)
    if shutil.which('htpasswd'):
        for flag, name in (('-B', 'htbcrypt'), ('-m', 'htmd5'), ('-s', 'htsha')):
            line = run('htpasswd', '-nb', flag, name, PASSWORD)
            out[name] = line.split(':', 1)[1]
    return out


HASHES = hashes()
HTPASSWD = '# made by the real tools\n\n' + ''.join('%s:%s\n' % kv for kv in HASHES.items())

CONF = '''
http {
    server {
        listen 127.0.0.1:{port};
        root {html};
        auth_basic "Restricted area";
        auth_basic_user_file htpasswd;
        location /off/ { auth_basic off; }
        location /var-realm/ { auth_basic "zone $http_x_zone"; }
        location /var-off/ { auth_basic $http_x_realm; }
        location /var-file/ { auth_basic_user_file {tmp}/conf/$http_x_file.htpasswd; }
        location /missing/ { auth_basic_user_file {tmp}/conf/nope; }
        location /user/ { add_header X-User "$remote_user"; }
        location /nofile/ { auth_basic_user_file {tmp}/conf/$http_x_nofile; }
    }
}
'''

FILES = {'conf/htpasswd': HTPASSWD, 'conf/alt.htpasswd': 'other:{PLAIN}x\n', 'html/index.html': 'secret\n',
         'html/off/index.html': 'open\n', 'html/var-realm/index.html': 'v\n', 'html/var-off/index.html': 'v\n',
         'html/var-file/index.html': 'f\n', 'html/missing/index.html': 'm\n', 'html/user/index.html': 'u\n'}


@pytest.fixture
def srv(server):
    return server(CONF, files=FILES)


@pytest.mark.parametrize('user', sorted(HASHES))
def test_every_scheme(srv, user):
    r = srv.get('/', headers=basic(user, PASSWORD))
    assert r.status == 200 and r.body == b'secret\n', HASHES[user]
    r = srv.get('/', headers=basic(user, PASSWORD + 'x'))
    assert r.status == 401
    assert 'user "%s": password mismatch' % user in srv.error_log()


def test_tools_made_every_scheme():
    want = {'md5', 'sha256', 'sha512', 'apr1', 'plain', 'ssha', 'yescrypt', 'bcrypt', 'htbcrypt', 'htmd5', 'htsha'}
    assert set(HASHES) == want
    assert HASHES['yescrypt'].startswith('$y$') and HASHES['bcrypt'].startswith('$2b$')
    assert HASHES['htbcrypt'].startswith('$2y$') and HASHES['htsha'].startswith('{SHA}')


def test_no_credentials(srv):
    r = srv.get('/')
    assert r.status == 401
    assert r.header('WWW-Authenticate') == 'Basic realm="Restricted area"'
    assert '[info]' in srv.error_log()
    assert 'no user/password was provided for basic authentication' in srv.error_log()


@pytest.mark.parametrize('value', ['Basic', 'Basic ', 'Bearer abc', 'Basic !!!!', 'Basic ' +
                                   base64.b64encode(b'nocolon').decode(), 'Basic ' + base64.b64encode(b':pw').decode()])
def test_unusable_credentials(srv, value):
    r = srv.get('/', headers={'Authorization': value})
    assert r.status == 401
    assert r.header('WWW-Authenticate') == 'Basic realm="Restricted area"'


def test_unknown_user(srv):
    r = srv.get('/', headers=basic('mallory', PASSWORD))
    assert r.status == 401
    assert 'user "mallory" was not found in "%s/conf/htpasswd"' % srv.tmp in srv.error_log()


def test_comment_is_not_a_user(srv):
    r = srv.get('/', headers=basic('# made by the real tools', PASSWORD))
    assert r.status == 401


def test_off_and_variables(srv):
    assert srv.get('/off/').status == 200
    r = srv.get('/var-realm/', headers={'X-Zone': 'blue'})
    assert r.status == 401 and r.header('WWW-Authenticate') == 'Basic realm="zone blue"'
    assert srv.get('/var-off/', headers={'X-Realm': 'off'}).status == 200  # a realm evaluating to "off"
    assert srv.get('/var-off/', headers={'X-Realm': 'r'}).status == 401
    r = srv.get('/var-file/', headers=dict(basic('other', 'x'), **{'X-File': 'alt'}))
    assert r.status == 200
    r = srv.get('/var-file/', headers=dict(basic('plain', PASSWORD), **{'X-File': 'alt'}))
    assert r.status == 401


def test_missing_file(srv):
    r = srv.get('/missing/', headers=basic('plain', PASSWORD))
    assert r.status == 403
    assert 'open() "%s/conf/nope" failed (2: No such file or directory)' % srv.tmp in srv.error_log()


def test_unreadable_file_is_500(srv):
    r = srv.get('/nofile/', headers=dict(basic('plain', PASSWORD), **{'X-Nofile': '../html'}))
    assert r.status == 500  # a directory: read() fails, logged at crit as nginx does
    assert 'failed (21: Is a directory)' in srv.error_log()
    srv.prefix.write('logs/error.log', '')  # the crit line is expected here


def test_colon_in_password(srv):
    # the user ends at the first ':' of the credentials, the password may hold more
    srv.write('conf/alt.htpasswd', 'col:%s\n' % run('openssl', 'passwd', '-apr1', 'a:b:c'))
    assert srv.get('/var-file/', headers=dict(basic('col', 'a:b:c'), **{'X-File': 'alt'})).status == 200
    assert srv.get('/var-file/', headers=dict(basic('col', 'a:b'), **{'X-File': 'alt'})).status == 401


def test_remote_user(srv):
    r = srv.get('/user/', headers=basic('plain', PASSWORD))
    assert r.status == 200 and r.header('X-User') == 'plain'


def test_file_change_without_reload(srv):
    assert srv.get('/', headers=basic('newbie', 'n3w')).status == 401
    srv.write('conf/htpasswd', HTPASSWD + 'newbie:%s\n' % run('openssl', 'passwd', '-apr1', 'n3w'))
    deadline = time.monotonic() + 10
    while srv.get('/', headers=basic('newbie', 'n3w')).status != 200:
        assert time.monotonic() < deadline, 'the changed file was never read again'
        time.sleep(0.1)
    # and a removed user is gone again
    srv.write('conf/htpasswd', 'plain:{PLAIN}x\n')
    deadline = time.monotonic() + 10
    while srv.get('/', headers=basic('newbie', 'n3w')).status != 401:
        assert time.monotonic() < deadline, 'the changed file was never read again'
        time.sleep(0.1)
    assert srv.get('/', headers=basic('plain', 'x')).status == 200


def test_two_workers_see_the_change(server, proto):
    body = CONF.strip()[len('http {'):-1]
    srv = server(master_conf(body), files=FILES, full=True)
    assert len(workers_of(srv, 2)) == 2
    for _ in range(20):  # the workers read the file before the change
        assert srv.get('/', headers=basic('late', 'comer')).status == 401
    srv.write('conf/htpasswd', 'late:{PLAIN}comer\n')
    deadline = time.monotonic() + 10
    ok = 0
    while ok < 20:  # 20 fresh connections in a row, spread over both workers
        ok = ok + 1 if srv.get('/', headers=basic('late', 'comer')).status == 200 else 0
        assert time.monotonic() < deadline
        time.sleep(0.02)


@pytest.mark.parametrize('stmt,msg', [
    ('auth_basic_user_file a; auth_basic_user_file b;', '"auth_basic_user_file" directive is duplicate'),
    ('auth_basic a; auth_basic b;', '"auth_basic" directive is duplicate'),
    ('auth_basic;', 'invalid number of arguments in "auth_basic" directive'),
    ('auth_basic "$nosuchvar";', 'unknown "nosuchvar" variable'),
])
def test_bad_config(run_cli, prefix, stmt, msg):
    conf = prefix.conf('http { server { listen 127.0.0.1:{port}; location / { %s } } }' % stmt)
    r = run_cli(['-t', '-p', prefix.tmp + '/', '-c', conf])
    assert r.rc != 0
    assert msg in r.err and 'test.conf:' in r.err


def test_error_page_keeps_the_challenge(server, proto):
    srv = server('''
    http {
        server {
            listen 127.0.0.1:{port};
            root {html};
            location /p/ {
                auth_basic "inner";
                auth_basic_user_file htpasswd;
                error_page 401 /denied.html;
            }
            location = /named/ {
                auth_basic "named";
                auth_basic_user_file htpasswd;
                error_page 401 @den;
            }
            location @den { return 401 "named page\\n"; }
        }
    }
    ''', files={'conf/htpasswd': 'u:{PLAIN}p\n', 'html/p/index.html': 'in\n', 'html/denied.html': 'custom\n'})
    r = srv.get('/p/')
    assert r.status == 401 and r.body == b'custom\n'
    assert r.header('WWW-Authenticate') == 'Basic realm="inner"'
    r = srv.get('/named/')
    assert r.status == 401 and r.body == b'named page\n'
    assert r.header('WWW-Authenticate') == 'Basic realm="named"'
    assert srv.get('/p/', headers=basic('u', 'p')).status == 200


DELAY = '''
http {
    server {
        listen 127.0.0.1:{port};
        root {html};
        auth_delay 2s;
        auth_basic "slow";
        auth_basic_user_file htpasswd;
        location /any/ { satisfy any; deny all; }
    }
}
'''


def test_auth_delay(server):
    srv = server(DELAY, files={'conf/htpasswd': 'u:{PLAIN}p\n', 'html/index.html': 'in\n',
                               'html/any/index.html': 'in\n'})
    for path in ('/', '/any/'):
        c = srv.conn()
        c.send('GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n' % path)
        c.sock.settimeout(1.0)  # the delay is 2s: nothing may arrive before it ends
        with pytest.raises(socket.timeout):
            c.sock.recv(1)
        c.sock.settimeout(10.0)
        r = c.read_response('GET')
        assert r.status == 401 and r.header('WWW-Authenticate') == 'Basic realm="slow"'
        c.close()
    assert srv.error_log().count('delaying unauthorized request') == 2
    assert srv.get('/', headers=basic('u', 'p')).status == 200
    assert srv.error_log().count('delaying unauthorized request') == 2


def test_auth_delay_client_gone(server):
    # the client leaves during the delay: the pending answer is dropped with the request
    srv = server(DELAY, files={'conf/htpasswd': 'u:{PLAIN}p\n', 'html/index.html': 'in\n'})
    for _ in range(3):
        c = srv.conn()
        c.send('GET / HTTP/1.1\r\nHost: x\r\n\r\n')
        c.close()
    deadline = time.monotonic() + 10
    while srv.error_log().count('delaying unauthorized request') < 3:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert srv.get('/', headers=basic('u', 'p')).status == 200
    time.sleep(2.5)  # past the delays: no timer may fire on a request that is gone
    assert srv.alive()
    assert srv.get('/', headers=basic('u', 'p')).status == 200
