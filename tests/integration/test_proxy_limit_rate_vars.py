"""proxy_limit_rate with variables (nginx 1.27): evaluated once the upstream's response header is in, so an
$upstream_http_* field can set the rate; an empty value is no limit. The rate shows in the time the server itself
measured for the upstream response ($upstream_response_time), not in a client clock."""
import pytest

from conftest import simple

pytestmark = pytest.mark.hayate_only  # nginx 1.22: proxy_limit_rate takes a size only

CONF = simple('''
        location /h/ {
            proxy_pass http://127.0.0.1:{port}/data;
            proxy_limit_rate $upstream_http_x_rate;
            proxy_buffer_size 4k;
        }
        location /a/ {
            proxy_pass http://127.0.0.1:{port}/data;
            proxy_limit_rate $arg_r;
        }
        location /data { add_header X-Rate $arg_e; }
''', 'log_format rt "$request_uri $upstream_response_time"; access_log {tmp}/logs/rt.log rt;')


@pytest.fixture
def srv(server):
    return server(CONF, files={'html/data': 'X' * 40000})


def times(srv):
    srv.stop()
    out = {}
    for line in open(srv.tmp + '/logs/rt.log'):
        uri, rt = line.split()
        if rt != '-':
            out[uri] = float(rt)
    return out


def test_rate_from_upstream_header_and_args(srv):
    for path in ('/h/?e=20000', '/h/?e=', '/a/?r=20k'):
        r = srv.get(path)
        assert r.status == 200 and r.body == b'X' * 40000, path
    t = times(srv)
    assert t['/h/?e=20000'] >= 1.0, t  # 40000 bytes at 20000 bytes/s: about 2 s, at least 1 s after the first read
    assert t['/a/?r=20k'] >= 1.0, t


def test_invalid_value_is_no_limit(srv):
    r = srv.get('/a/?r=fast')
    assert r.status == 200 and r.body == b'X' * 40000
    assert 'invalid limit rate "fast"' in srv.error_log()
