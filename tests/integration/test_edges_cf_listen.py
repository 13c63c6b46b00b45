"""Several servers on one address: socket options may be given by one listen only ("duplicate listen options"),
a later server's options are taken when the first had none, one default server per address, ssl/http2 flags of any
listen apply to the address; a conflicting name is warned about and the first server keeps it."""
import re

import pytest

from conftest import IS_NGINX


def two_servers(l1, l2, extra1='', extra2=''):
    return '''
http {
    server { %s server_name one; %s return 200 "one"; }
    server { %s server_name two; %s return 200 "two"; }
}
''' % (l1, extra1, l2, extra2)


@pytest.mark.parametrize('l1,l2,msg', [
    ('listen 127.0.0.1:{port} backlog=10;', 'listen 127.0.0.1:{port} rcvbuf=8k;', 'duplicate listen options for 127.0.0.1:{port}'),
    ('listen 127.0.0.1:{port} reuseport;', 'listen 127.0.0.1:{port} so_keepalive=on;', 'duplicate listen options for 127.0.0.1:{port}'),
    ('listen 127.0.0.1:{port} default_server;', 'listen 127.0.0.1:{port} default_server;',
     'a duplicate default server for 127.0.0.1:{port}'),
])
def test_conflicts(prefix, run_cli, l1, l2, msg):
    path = prefix.conf(two_servers(l1, l2))
    r = run_cli(['-t', '-c', path])
    assert r.rc == 1, r
    line = [i for i, l in enumerate(open(path).read().split('\n'), 1) if 'server_name two' in l][0]
    assert re.search(re.escape(prefix.render(msg)) + r' in %s:%d' % (re.escape(path), line), r.err), r.err


def test_options_of_a_later_server_and_its_default(server):
    srv = server(two_servers('listen 127.0.0.1:{port};', 'listen 127.0.0.1:{port} backlog=64 default_server;'))
    assert srv.get('/', host='one').body == b'one'
    assert srv.get('/', host='two').body == b'two'
    assert srv.get('/', host='other').body == b'two'  # the default server is the second one


def test_conflicting_name_is_warned_and_the_first_kept(server):
    srv = server(two_servers('listen 127.0.0.1:{port};', 'listen 127.0.0.1:{port};',
                             extra2='server_name one;'))
    assert srv.get('/', host='one').body == b'one'
    assert re.search(r'\[warn\].*conflicting server name "one" on 127\.0\.0\.1:%d, ignored' % srv.port,
                     srv.error_log() + srv.stderr())


@pytest.mark.skipif(IS_NGINX, reason='Debian 12 nginx has no "http2" directive')
def test_http2_flag_of_any_listen_applies(server):
    srv = server(two_servers('listen 127.0.0.1:{port};', 'listen 127.0.0.1:{port} http2;'))
    from helpers.h2client import H2
    c = H2(srv.port)
    try:
        sid = c.request('/', authority='one')
        status, _, body = c.response(sid)
    finally:
        c.close()
    assert status == 200 and body == b'one'
    assert 'the "listen ... http2" directive is deprecated' in srv.error_log() + srv.stderr()
