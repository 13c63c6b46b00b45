"""TLS 1.3 early data (0-RTT): `ssl_early_data on` answers a request sent in the client's first flight, with
$ssl_early_data "1" while the handshake is still open; a ticket resumes once only, on whichever worker, so early
data cannot be replayed; a server asking for client certificates takes none. The client is `openssl s_client`
(-sess_out / -sess_in / -early_data); Python's ssl cannot send early data."""
import os
import re
import subprocess

import pytest

from conftest import IS_NGINX
from helpers.tls import make_cert, make_ca
from helpers.process import master_conf, workers_of

REQ = b'GET /a HTTP/1.1\r\nHost: localhost\r\n%s\r\n'
THEN = b'GET /b HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'  # sent after the handshake


def srv_body(cert, extra):
    return '''
    server {
        listen 127.0.0.1:{port} ssl;
        ssl_certificate %s;
        ssl_certificate_key %s;
        ssl_protocols TLSv1.3;
        %s
        location / { return 200 "uri=$uri early=[$ssl_early_data] pid=$pid\\n"; }
    }''' % (cert[0], cert[1], extra)


def s_client(port, args, stdin=b''):
    p = subprocess.run(['openssl', 's_client', '-connect', '127.0.0.1:%d' % port, '-servername', 'localhost',
                        '-tls1_3', '-ign_eof'] + args, input=stdin, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=20)
    return p.stdout.decode(errors='replace')


def new_session(port, path):
    out = s_client(port, ['-sess_out', path], REQ % b'Connection: close\r\n')
    assert 'early=[]' in out and os.path.getsize(path) > 0, out
    return path


def early(port, sess, tmp, first, then=b''):
    """Sends `first` as early data on a resumption of `sess`, then `then` after the handshake."""
    f = os.path.join(tmp, 'early.txt')
    with open(f, 'wb') as fh:
        fh.write(first)
    return s_client(port, ['-sess_in', sess, '-early_data', f], then)


def answers(out):
    return re.findall(r'uri=(\S+) early=\[(\d?)\] pid=(\d+)', out)


@pytest.mark.hayate_only  # nginx 1.22 with OpenSSL takes early data too, but its tickets are not single-use
def test_early_request_answered_and_marked(server, prefix):
    cert = make_cert(prefix.tmp, 'c', 'localhost', kind='ec')
    s = server(master_conf(srv_body(cert, 'ssl_session_cache shared:SSL:1m; ssl_early_data on;'), workers=2),
               full=True)
    sess = new_session(s.prefix.port, os.path.join(prefix.tmp, 's.pem'))
    # the first request in 0-RTT data, the second after the handshake on the same connection
    out = early(s.prefix.port, sess, prefix.tmp, REQ % b'', THEN)
    assert 'Early data was accepted' in out, out
    assert 'Reused, TLSv1.3' in out
    got = answers(out)
    assert [(u, e) for u, e, _ in got] == [('/a', '1'), ('/b', '')], out


def test_early_data_off_sends_none(server, prefix):
    cert = make_cert(prefix.tmp, 'c', 'localhost', kind='ec')
    s = server(master_conf(srv_body(cert, 'ssl_session_cache shared:SSL:1m;'), workers=1), full=True)
    sess = new_session(s.prefix.port, os.path.join(prefix.tmp, 's.pem'))
    out = early(s.prefix.port, sess, prefix.tmp, REQ % b'', THEN)
    # the ticket does not allow early data: the client keeps it to itself, the session still resumes
    assert 'Early data was not sent' in out and 'Reused, TLSv1.3' in out, out
    assert [(u, e) for u, e, _ in answers(out)] == [('/b', '')], out


@pytest.mark.hayate_only
def test_a_ticket_resumes_once_on_any_worker(server, prefix):
    """Replay protection: the same ticket offered again (to either worker) resumes nothing and its early data
    is skipped; the client then asks after a full handshake, and the answer names the worker."""
    cert = make_cert(prefix.tmp, 'c', 'localhost', kind='ec')
    s = server(master_conf(srv_body(cert, 'ssl_session_cache shared:SSL:1m; ssl_early_data on;'), workers=2),
               full=True)
    workers = set(str(p) for p in workers_of(s, 2))
    sess = new_session(s.prefix.port, os.path.join(prefix.tmp, 's.pem'))
    out = early(s.prefix.port, sess, prefix.tmp, REQ % b'Connection: close\r\n')
    assert 'Early data was accepted' in out and answers(out)[0][1] == '1', out
    first_pid = answers(out)[0][2]
    seen = set()
    for _ in range(12):
        out = early(s.prefix.port, sess, prefix.tmp, REQ % b'',
                    b'GET /late HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n')
        assert 'Early data was rejected' in out and 'New, TLSv1.3' in out, out
        got = answers(out)
        assert [(u, e) for u, e, _ in got] == [('/late', '')], out
        seen.add(got[0][2])
    assert seen & workers and (seen - {first_pid}), 'no replay reached the other worker: cannot tell (%s)' % seen


@pytest.mark.hayate_only
def test_builtin_cache_ticket_single_use(server, prefix):
    cert = make_cert(prefix.tmp, 'c', 'localhost', kind='ec')
    s = server(master_conf(srv_body(cert, 'ssl_session_cache builtin:100; ssl_early_data on;'), workers=1),
               full=True)
    sess = new_session(s.prefix.port, os.path.join(prefix.tmp, 's.pem'))
    out = early(s.prefix.port, sess, prefix.tmp, REQ % b'Connection: close\r\n')
    assert 'Early data was accepted' in out and answers(out)[0][1] == '1', out
    out = early(s.prefix.port, sess, prefix.tmp, REQ % b'', THEN)
    assert 'Early data was rejected' in out and 'New, TLSv1.3' in out, out
    assert [(u, e) for u, e, _ in answers(out)] == [('/b', '')], out


@pytest.mark.hayate_only
def test_no_early_data_where_client_certificates_are_asked(server, prefix):
    cert = make_cert(prefix.tmp, 'c', 'localhost', kind='ec')
    ca = make_ca(prefix.tmp)
    s = server(master_conf(srv_body(cert, 'ssl_session_cache shared:SSL:1m; ssl_early_data on; '
                                          'ssl_client_certificate %s; ssl_verify_client optional;' % ca[0]),
                           workers=1), full=True)
    sess = new_session(s.prefix.port, os.path.join(prefix.tmp, 's.pem'))
    out = early(s.prefix.port, sess, prefix.tmp, REQ % b'', THEN)
    assert 'Early data was rejected' in out, out
    assert [(u, e) for u, e, _ in answers(out)] == [('/b', '')], out


def test_early_data_flag_checked(prefix, run_cli):
    cert = make_cert(prefix.tmp, 'c', 'localhost', kind='ec')
    ok = prefix.conf(master_conf(srv_body(cert, 'ssl_early_data on;'), workers=1), full=True)
    assert run_cli(['-t', '-c', ok]).rc == 0
    bad = prefix.conf(master_conf(srv_body(cert, 'ssl_early_data maybe;'), workers=1), full=True)
    r = run_cli(['-t', '-c', bad])
    assert r.rc != 0 and 'it must be "on" or "off"' in r.err and bad + ':' in r.err, r.err
