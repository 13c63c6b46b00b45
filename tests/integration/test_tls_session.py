"""TLS session resumption: the shared cache (TLS 1.2 session ids) and tickets (TLS 1.3) across two workers,
ticket-key files shared by two separately started instances."""
import os
import re
import time
import signal
import ssl

import pytest

from conftest import IS_NGINX
from helpers.tls import make_cert, client_ctx, tls_connect, read_response
from helpers.process import master_conf, workers_of, wait_until, children, drop_log_lines

N = 24  # resumptions; with SO_REUSEPORT spreading connections over 2 workers, many land on the other worker


def srv_body(cert, extra, protocols='TLSv1.2 TLSv1.3'):
    return '''
    server {
        listen 127.0.0.1:{port} ssl;
        ssl_certificate %s;
        ssl_certificate_key %s;
        ssl_protocols %s;
        %s
        location / { return 200 "$pid $ssl_session_reused $ssl_protocol\\n"; }
    }''' % (cert[0], cert[1], protocols, extra)


def get(port, ctx, session=None):
    c = tls_connect(port, sni='localhost', ctx=ctx, session=session)
    c.sendall(b'GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n')
    st, _, body = read_response(c)
    assert st == 200
    pid, reused, proto = body.decode().split()
    sess, client_says = c.session, c.session_reused
    c.close()
    return pid, reused, proto, sess, client_says


def resume_many(port, ctx):
    """One full handshake, then N resumptions of its session: [(pid_first, [(pid, reused), ...])]."""
    pid0, reused0, proto, sess, _ = get(port, ctx)
    assert reused0 == '.'
    out = []
    for _ in range(N):
        pid, reused, _, _, client_says = get(port, ctx, session=sess)
        assert (reused == 'r') == client_says
        out.append((pid, reused))
    return pid0, proto, out


def test_shared_cache_resumes_on_any_worker_tls12(server, prefix):
    cert = make_cert(prefix.tmp, 'c', 'localhost', kind='ec')
    s = server(master_conf(srv_body(cert, 'ssl_session_cache shared:SSL:1m; ssl_session_tickets off;'), workers=2),
               full=True)
    workers_of(s, 2)
    ctx = client_ctx(maxv=ssl.TLSVersion.TLSv1_2)
    pid0, proto, out = resume_many(s.prefix.port, ctx)
    assert proto == 'TLSv1.2'
    assert all(r == 'r' for _, r in out), out
    assert any(p != pid0 for p, _ in out), 'every connection went to one worker: cannot tell'


@pytest.mark.hayate_only
def test_builtin_cache_is_per_worker(server, prefix):
    """The counter-check of the test above: a per-worker cache cannot resume on the other worker."""
    cert = make_cert(prefix.tmp, 'c', 'localhost', kind='ec')
    s = server(master_conf(srv_body(cert, 'ssl_session_cache builtin:1000; ssl_session_tickets off;'), workers=2),
               full=True)
    workers_of(s, 2)
    pid0, proto, out = resume_many(s.prefix.port, client_ctx(maxv=ssl.TLSVersion.TLSv1_2))
    assert all((r == 'r') == (p == pid0) for p, r in out), out


def test_tickets_resume_on_any_worker_tls13(server, prefix):
    cert = make_cert(prefix.tmp, 'c', 'localhost', kind='ec')
    s = server(master_conf(srv_body(cert, '', protocols='TLSv1.3'), workers=2), full=True)
    workers_of(s, 2)
    ctx = client_ctx(minv=ssl.TLSVersion.TLSv1_3)
    # TLS 1.3 sends tickets after the handshake: the session is complete once a response was read
    pid0, proto, out = resume_many(s.prefix.port, ctx)
    assert proto == 'TLSv1.3'
    assert all(r == 'r' for _, r in out), out
    assert any(p != pid0 for p, _ in out)


def test_session_cache_off_and_tickets_off(server, prefix):
    cert = make_cert(prefix.tmp, 'c', 'localhost', kind='ec')
    s = server('http {%s\n}\n' % srv_body(cert, 'ssl_session_cache off; ssl_session_tickets off;'))
    for ctx in (client_ctx(maxv=ssl.TLSVersion.TLSv1_2), client_ctx(minv=ssl.TLSVersion.TLSv1_3)):
        _, _, _, sess, _ = get(s.prefix.port, ctx)
        _, reused, _, _, _ = get(s.prefix.port, ctx, session=sess)
        assert reused == '.'


def test_ticket_key_files_shared_by_two_instances(server, prefix, tmp_path):
    cert = make_cert(prefix.tmp, 'c', 'localhost', kind='ec')
    key_a = prefix.write('conf/a.key', os.urandom(80))
    key_old = prefix.write('conf/old.key', os.urandom(48))
    key_b = prefix.write('conf/b.key', os.urandom(80))
    conf = 'http {%s\n}\n'
    one = server(conf % srv_body(cert, 'ssl_session_ticket_key %s;' % key_a))
    # a second instance on another port: same first key, plus an old one; a third one knows other keys only
    from conftest import GLOBALS, EVENTS
    two_text = one.prefix.render(GLOBALS + EVENTS + conf % srv_body(cert, 'ssl_session_ticket_key %s; ssl_session_ticket_key %s;'
                                                 % (key_old, key_a))).replace(str(one.prefix.port),
                                                                               str(one.prefix.port2))
    from helpers.process import cli  # noqa: F401 (only to make sure helpers import)
    import subprocess
    import signal
    from conftest import HY_BIN, wait_port
    outs = []
    procs = []
    try:
        for name, text, port in (('two', two_text, one.prefix.port2),
                                 ('three', two_text.replace(key_a, key_b).replace(str(one.prefix.port2),
                                                                                 str(one.prefix.port3)),
                                  one.prefix.port3)):
            d = tmp_path / name
            (d / 'logs').mkdir(parents=True)
            text = text.replace(one.prefix.tmp + '/logs', str(d / 'logs'))
            (d / 'test.conf').write_text(text)
            p = subprocess.Popen([HY_BIN, '-p', str(d) + '/', '-c', str(d / 'test.conf')],
                                 stdout=subprocess.DEVNULL, stderr=open(str(d / 'logs' / 'stderr'), 'wb'))
            procs.append(p)
            assert wait_port(port, p, 5.0), (d / 'logs' / 'stderr').read_text()
        for ctx, proto in ((client_ctx(maxv=ssl.TLSVersion.TLSv1_2), 'TLSv1.2'),
                           (client_ctx(minv=ssl.TLSVersion.TLSv1_3), 'TLSv1.3')):
            _, _, got, sess, _ = get(one.prefix.port, ctx)
            assert got == proto
            assert get(one.prefix.port2, ctx, session=sess)[1] == 'r', proto  # same key: resumed elsewhere
            assert get(one.prefix.port3, ctx, session=sess)[1] == '.', proto  # unknown key: full handshake
    finally:
        for p in procs:
            p.send_signal(signal.SIGQUIT)
            p.wait(10)


@pytest.mark.hayate_only
def test_bad_ticket_key_file_fails_t(prefix, run_cli):
    cert = make_cert(prefix.tmp, 'c', 'localhost', kind='ec')
    bad = prefix.write('conf/bad.key', b'x' * 50)
    path = prefix.conf('http {%s\n}\n' % srv_body(cert, 'ssl_session_ticket_key %s;' % bad))
    r = run_cli(['-t', '-c', path])
    assert r.rc != 0 and 'must be 48 or 80 bytes' in r.err and path + ':' in r.err


def ticket_key_name(port, sess_file):
    """A TLS 1.2 handshake with a ticket: (worker pid, the ticket's key name in hex)."""
    from helpers.tls import openssl
    r = openssl('s_client', '-connect', '127.0.0.1:%d' % port, '-tls1_2', '-quiet', '-sess_out', sess_file,
                input=b'GET / HTTP/1.0\r\n\r\n')
    pid = r.stdout.decode().strip().split('\n')[-1].split()[0]
    t = openssl('sess_id', '-in', sess_file, '-noout', '-text').stdout.decode()
    m = re.search(r'TLS session ticket:\s*\n((?:\s*[0-9a-f]{4} - .*\n)+)', t)
    assert m, t
    hexbytes = re.findall(r'\b[0-9a-f]{2}\b', ' '.join(l.split(' - ', 1)[1][:48] for l in m.group(1).splitlines()))
    return pid, ''.join(hexbytes[:16])


@pytest.mark.hayate_only  # nginx 1.22 keeps one ticket key per configuration (rotation came in 1.23)
def test_ticket_keys_in_the_shared_zone_rotate(server, prefix):
    cert = make_cert(prefix.tmp, 'c', 'localhost', kind='ec')
    s = server(master_conf(srv_body(cert, 'ssl_session_cache shared:SSL:1m; ssl_session_timeout 2s;'), workers=2),
               full=True)
    workers_of(s, 2)
    seen = {}  # key name -> set of worker pids that issued tickets with it
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        pid, name = ticket_key_name(s.prefix.port, prefix.tmp + '/sess.pem')
        seen.setdefault(name, set()).add(pid)
        if len(seen) >= 2 and any(len(p) >= 2 for p in seen.values()):
            break
    assert len(seen) >= 2, seen                      # the key rotated
    assert any(len(p) >= 2 for p in seen.values()), seen  # and both workers used the same key


_ctx12 = []


def tls12_get(port, session=None):
    if not _ctx12:
        _ctx12.append(client_ctx(maxv=ssl.TLSVersion.TLSv1_2))  # a session resumes only with its context
    return get(port, _ctx12[0], session)


def test_shared_cache_full_evicts_the_oldest_sessions(server, prefix):
    """A zone of the smallest size holds some sessions: once full, storing one more drops the least recently
    stored, so the first session of many cannot be resumed while the last one can."""
    cert = make_cert(prefix.tmp, 'c', 'localhost', kind='ec')
    s = server(master_conf(srv_body(cert, 'ssl_session_cache shared:SSL:32k; ssl_session_tickets off;',
                                    protocols='TLSv1.2'), workers=1), full=True)
    _, _, _, first, _ = tls12_get(s.prefix.port)
    assert tls12_get(s.prefix.port, first)[1] == 'r'  # stored
    last = None
    for _ in range(300):  # far more sessions than 32k hold
        _, reused, _, last, _ = tls12_get(s.prefix.port)
        assert reused == '.'
    assert tls12_get(s.prefix.port, last)[1] == 'r'
    assert tls12_get(s.prefix.port, first)[1] == '.'


def test_shared_cache_sessions_expire(server, prefix):
    """ssl_session_timeout bounds how long a stored session resumes."""
    cert = make_cert(prefix.tmp, 'c', 'localhost', kind='ec')
    s = server(master_conf(srv_body(cert, 'ssl_session_cache shared:SSL:1m; ssl_session_tickets off; '
                                    'ssl_session_timeout 3s;', protocols='TLSv1.2'), workers=1), full=True)
    _, _, _, sess, _ = tls12_get(s.prefix.port)
    assert tls12_get(s.prefix.port, sess)[1] == 'r'  # within 3 s, even on a loaded machine
    deadline = time.time() + 15
    while tls12_get(s.prefix.port, sess)[1] == 'r':
        assert time.time() < deadline, 'the session still resumes after 10 s'
        time.sleep(0.2)


def test_shared_cache_survives_reload(server, prefix):
    """HUP with the same shared zone: the new workers resume the sessions stored by the old ones."""
    cert = make_cert(prefix.tmp, 'c', 'localhost', kind='ec')
    s = server(master_conf(srv_body(cert, 'ssl_session_cache shared:SSL:1m; ssl_session_tickets off;',
                                    protocols='TLSv1.2'), workers=1), full=True)
    old = workers_of(s, 1)
    pid0, _, _, sess, _ = tls12_get(s.prefix.port)
    s.proc.send_signal(signal.SIGHUP)
    assert wait_until(lambda: (lambda k: len(k) == 1 and k != old)(children(s.proc.pid)), 5), children(s.proc.pid)
    pid1, reused, _, _, _ = tls12_get(s.prefix.port, sess)
    assert pid1 != pid0 and reused == 'r'


@pytest.mark.parametrize('value,ok', [
    ('none', True), ('off', True), ('builtin', True), ('builtin:1000 shared:S:1m', True),
    ('builtin:abc', False), ('bogus', False), ('shared:S', False)])
def test_session_cache_values(prefix, run_cli, value, ok):
    cert = make_cert(prefix.tmp, 'c', 'localhost', kind='ec')
    path = prefix.conf('http {%s\n}\n' % srv_body(cert, 'ssl_session_cache %s;' % value))
    r = run_cli(['-t', '-c', path])
    if ok:
        assert r.rc == 0, r
        return
    line = [i for i, l in enumerate(open(path), 1) if 'ssl_session_cache' in l][0]
    bad = value
    assert r.rc == 1 and ('invalid session cache "%s" in %s:%d' % (bad, path, line)) in r.err, r


def test_session_of_a_connection_ended_by_a_fatal_alert_is_dropped(server, prefix):
    """OpenSSL removes the session of a connection it ends with a fatal alert (a forged record here) from the
    cache: the shared cache drops it too, so it no longer resumes, while another session still does."""
    import socket as pysocket
    cert = make_cert(prefix.tmp, 'c', 'localhost', kind='ec')
    s = server(master_conf(srv_body(cert, 'ssl_session_cache shared:SSL:1m; ssl_session_tickets off;',
                                    protocols='TLSv1.2'), workers=1), full=True)
    _, _, _, sess, _ = tls12_get(s.prefix.port)
    _, _, _, other, _ = tls12_get(s.prefix.port)
    assert tls12_get(s.prefix.port, sess)[1] == 'r'
    c = tls_connect(s.prefix.port, sni='localhost', ctx=_ctx12[0], session=sess)
    assert c.session_reused
    raw = pysocket.socket(fileno=os.dup(c.fileno()))
    raw.sendall(b'\x17\x03\x03\x00\x30' + os.urandom(0x30))  # application data no key decrypts
    raw.settimeout(5)
    try:
        alert = raw.recv(64)
    except OSError:
        alert = b''
    raw.close()
    c.close()
    assert alert[:1] == b'\x15', alert  # the server's alert record
    assert tls12_get(s.prefix.port, sess)[1] == '.'
    assert tls12_get(s.prefix.port, other)[1] == 'r'
    if IS_NGINX:  # nginx 1.22 logs the forged record at [crit]
        s.stop()
        drop_log_lines(s, r'SSL_read\(\) failed')


SNI_SESSIONS = '''
http {
    ssl_certificate %(crt)s;
    ssl_certificate_key %(key)s;
    server {
        listen 127.0.0.1:{port} ssl;
        server_name default;
        ssl_session_tickets off;
        ssl_session_cache shared:cache1:1m;
        location / { return 200 "$ssl_server_name $ssl_session_reused\\n"; }
    }
    server {
        listen 127.0.0.1:{port};
        server_name nocache;
        ssl_session_tickets off;
        ssl_session_cache shared:cache2:1m;
        location / { return 200 "$ssl_server_name $ssl_session_reused\\n"; }
    }
    server {
        listen 127.0.0.1:{port2} ssl;
        server_name default;
        ssl_session_ticket_key %(t1)s;
        location / { return 200 "$ssl_server_name $ssl_session_reused\\n"; }
    }
    server {
        listen 127.0.0.1:{port2};
        server_name tickets;
        ssl_session_ticket_key %(t2)s;
        location / { return 200 "$ssl_server_name $ssl_session_reused\\n"; }
    }
}
'''


def test_sessions_of_sni_servers_use_the_default_servers_cache_and_keys(server, prefix):
    """Resumption is decided before SNI (nginx-tests ssl_sni_sessions.t): a session or ticket made while an SNI
    server answered is stored and found with the default server's cache and ticket keys, so it resumes even
    when that server has a cache or keys of its own."""
    crt, key = make_cert(prefix.tmp, 'sni', 'localhost', kind='ec')
    t1 = prefix.write('t1.key', b'1' * 48)
    t2 = prefix.write('t2.key', b'2' * 48)
    s = server(SNI_SESSIONS % {'crt': crt, 'key': key, 't1': t1, 't2': t2})
    for port, name in ((s.prefix.port, 'nocache'), (s.prefix.port2, 'tickets')):
        ctx = client_ctx()
        answers, sess = [], None
        for _ in range(2):
            c = tls_connect(port, sni=name, ctx=ctx, session=sess)
            c.sendall(b'GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n' % name.encode())
            st, _, body = read_response(c)
            assert st == 200
            answers.append(body.decode().strip())
            sess = c.session
            c.close()
        assert answers == ['%s .' % name, '%s r' % name], (port, answers)
