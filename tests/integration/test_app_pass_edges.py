"""fastcgi_pass / uwsgi_pass / scgi_pass with variables (an address literal, a value that is no address, a name
with no resolver) and their configuration errors, against the FastCGI peer of helpers/apppeers.py."""
import pytest

from conftest import simple, IS_NGINX
from helpers.apppeers import fcgi_peer
from helpers.process import wait_log


@pytest.fixture
def peer(prefix):
    b = fcgi_peer(prefix.tmp, unix=False)
    yield b
    b.stop()


def test_fastcgi_pass_from_a_variable(server, peer):
    srv = server(simple('''location / { fastcgi_pass $arg_t; fastcgi_param REQUEST_URI /conn; }'''))
    r = srv.get('/?t=' + peer.addr)
    assert r.status == 200 and r.body.startswith(b'conn=')
    r = srv.get('/?t=127.0.0.1:1/x')  # a URI part: no address
    assert r.status == 500
    wait_log(srv, r'invalid host in upstream "127.0.0.1:1/x"')
    r = srv.get('/?t=no-such-host.invalid:9000')
    assert r.status == 502
    wait_log(srv, 'no resolver defined to resolve no-such-host.invalid')


@pytest.mark.parametrize('stmt,msg', [
    ('fastcgi_pass 127.0.0.1:1; fastcgi_pass 127.0.0.1:2;', '"fastcgi_pass" directive is duplicate'),
    ('uwsgi_pass 127.0.0.1:1; uwsgi_pass 127.0.0.1:2;', '"uwsgi_pass" directive is duplicate'),
    ('scgi_pass 127.0.0.1:1/x;', 'invalid host in upstream "127.0.0.1:1/x"'),
    # nginx 1.22 takes both and the last one's handler wins; hayate refuses the second content handler
    pytest.param('fastcgi_pass 127.0.0.1:1; proxy_pass http://127.0.0.1:2;', '"proxy_pass" directive is duplicate',
                 marks=pytest.mark.hayate_only),
    ('fastcgi_pass $nope;', 'unknown "nope" variable'),
])
def test_pass_errors(run_cli, prefix, stmt, msg):
    conf = prefix.conf('http { server { listen 127.0.0.1:{port}; location / { %s } } }' % stmt)
    res = run_cli(['-p', prefix.tmp + '/', '-c', conf, '-t'])
    assert res.rc == 1, res
    assert msg in res.err, res.err
