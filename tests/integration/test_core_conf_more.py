"""http core directives' errors and variants not covered elsewhere (nginx's messages and file:line):
client_body_temp_path levels, location modifiers written together with the name ("~*\\.php", "^~/x"), listen
parameters (backlog, rcvbuf, sndbuf; ipv6only, ignored on IPv4 as nginx; so_keepalive=off, bind), options given on a second server of the
same address, a root with a trailing slash."""
import pytest

from conftest import simple


def t(run_cli, prefix, body):
    conf = prefix.conf(body)
    return conf, run_cli(['-p', prefix.tmp + '/', '-c', conf, '-t'])


def line_of(conf, needle):
    return [n for n, l in enumerate(open(conf), 1) if needle in l][-1]


@pytest.mark.parametrize('stmt,msg', [
    ('client_body_temp_path t 1 2 3 1;', 'invalid number of arguments in "client_body_temp_path" directive'),
    ('client_body_temp_path t 0;', '"client_body_temp_path" directive invalid value'),
    ('client_body_temp_path t x;', '"client_body_temp_path" directive invalid value'),
    ('client_body_temp_path t 5 5 1;', '"client_body_temp_path" directive invalid value'),  # past 10 digits
    ('client_body_temp_path t 3 3 3;', None),  # levels take digits from the 10-digit name, any width
    ('client_body_temp_path t; client_body_temp_path u;', '"client_body_temp_path" directive is duplicate'),
])
def test_client_body_temp_path(run_cli, prefix, stmt, msg):
    conf, res = t(run_cli, prefix, simple('location / { %s }' % stmt))
    if msg is None:
        assert res.rc == 0, res
        return
    assert res.rc == 1, res
    assert '%s in %s:%d' % (msg, conf, line_of(conf, 'client_body_temp_path')) in res.err, res.err


@pytest.mark.parametrize('listen,msg', [
    ('listen 127.0.0.1:{port} backlog=0;', 'invalid backlog "backlog=0"'),
    ('listen 127.0.0.1:{port} rcvbuf=x;', 'invalid rcvbuf "rcvbuf=x"'),
    ('listen 127.0.0.1:{port} sndbuf=1q;', 'invalid sndbuf "sndbuf=1q"'),
])
def test_listen_parameter_errors(run_cli, prefix, listen, msg):
    conf, res = t(run_cli, prefix, simple('location / { }', listen=listen))
    assert res.rc == 1, res
    assert '%s in %s:%d' % (msg.replace('{port}', str(prefix.port)), conf, line_of(conf, 'listen')) in res.err, res.err


def test_listen_variants_serve(server):
    srv = server('''
http {
    server { listen 127.0.0.1:{port} so_keepalive=off bind rcvbuf=64k sndbuf=64k backlog=128 ipv6only=on;
             location / { return 200 "one"; } }
    server { listen [::1]:{port} ipv6only=on so_keepalive=30s::5; location / { return 200 "two"; } }
    server { listen 127.0.0.1:{port2}; server_name a; location / { return 200 "a"; } }
    server { listen 127.0.0.1:{port2} reuseport default_server; server_name b; location / { return 200 "b"; } }
}
''')
    assert srv.get('/').body == b'one'
    c = srv.conn(host='::1')
    r = c.request(b'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
    assert r.body == b'two'
    assert srv.get('/', port=srv.port2, host='zzz').body == b'b'  # options on the second server of the address
    assert srv.get('/', port=srv.port2, host='a').body == b'a'


def test_location_modifiers_joined_to_the_name(server):
    srv = server(simple('''root {html};
        location ^~/static/ { return 200 "prefix-stop"; }
        location ~*\\.PHP$ { return 200 "caseless"; }
        location ~\\.txt$ { return 200 "regex"; }
        location =/exact { return 200 "exact"; }
        location / { return 200 "default"; }'''))
    assert srv.get('/static/a.txt').body == b'prefix-stop'
    assert srv.get('/x/a.php').body == b'caseless'
    assert srv.get('/x/a.txt').body == b'regex'
    assert srv.get('/exact').body == b'exact'
    assert srv.get('/other').body == b'default'


def test_root_with_a_trailing_slash(server):
    srv = server(simple('location / { root {html}/; }'), files={'html/a.txt': 'A'})
    r = srv.get('/a.txt')
    assert r.status == 200 and r.body == b'A'
