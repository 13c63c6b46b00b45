"""split_clients (ngx_http_split_clients_module): the variable's value is the bucket where MurmurHash2 of the
string falls, with nginx's arithmetic, so every string gets the value nginx gives it."""
import pytest

from conftest import simple

CONF = simple('''
        location /k { return 200 "[$v]"; }
        location /n { return 200 "[$partial]"; }
        location = /idx/ { root {html}; index index${v}.html; }
''', http_extra='''
    split_clients "k=${arg_k}" $v {
        0.5%   a;
        2%     b;
        10.25% c;
        33%    d;
        *      e;
    }
    split_clients "$arg_k" $partial {
        25% lo;
        25% hi;
    }
''')


def murmur2(data):
    """MurmurHash2, 32-bit, seed 0 (reference for the expected buckets; checked against nginx by running this
    file with HY_BIN=/usr/sbin/nginx)."""
    m, mask = 0x5bd1e995, 0xffffffff
    h = len(data) & mask
    i = 0
    while len(data) - i >= 4:
        k = int.from_bytes(data[i:i + 4], 'little')
        k = (k * m) & mask
        k ^= k >> 24
        k = (k * m) & mask
        h = ((h * m) & mask) ^ k
        i += 4
    rest = data[i:]
    if rest:
        if len(rest) == 3:
            h ^= rest[2] << 16
        if len(rest) >= 2:
            h ^= rest[1] << 8
        h ^= rest[0]
        h = (h * m) & mask
    h ^= h >> 13
    h = (h * m) & mask
    h ^= h >> 15
    return h


def bucket(s, parts):
    h, bound = murmur2(s.encode()), 0
    for pct, val in parts:
        if pct is None:
            return val
        bound += pct * 0xffffffff // 10000
        if h < bound:
            return val
    return ''


V = [(50, 'a'), (200, 'b'), (1025, 'c'), (3300, 'd'), (None, 'e')]
PARTIAL = [(2500, 'lo'), (2500, 'hi')]


@pytest.fixture
def srv(server):
    return server(CONF)


def fetch_all(srv, path, keys):
    out = {}
    for i, k in enumerate(keys):
        if i % 500 == 0:   # below keepalive_requests (1000)
            c = srv.conn()
        c.send(('GET %s?k=%s HTTP/1.1\r\nHost: x\r\n\r\n' % (path, k)).encode())
        r = c.read_response()
        assert r.status == 200
        out[k] = r.body.decode()
    return out


def test_values_match_nginx_buckets(srv):
    keys = ['u%d' % i for i in range(1500)] + ['', 'a', 'ab', 'abc', 'abcd', 'abcde', 'x' * 300]
    got = fetch_all(srv, '/k', keys)
    seen = set()
    for k, body in got.items():
        want = bucket('k=' + k, V)
        assert body == '[%s]' % want, k
        seen.add(want)
    assert seen == {'a', 'b', 'c', 'd', 'e'}   # every bucket, the 0.5% one too


def test_without_star_the_rest_is_empty(srv):
    got = fetch_all(srv, '/n', ['s%d' % i for i in range(200)])
    values = set()
    for k, body in got.items():
        want = bucket(k, PARTIAL)
        assert body == '[%s]' % want, k
        values.add(want)
    assert values == {'lo', 'hi', ''}


def test_variable_in_index(srv):
    # as nginx-tests split_clients.t: the variable picks the index file
    for name in 'abcde':
        srv.write('html/idx/index%s.html' % name, 'file-' + name)
    k = next(k for k in ('u%d' % i for i in range(100)) if bucket('k=' + k, V) == 'd')
    r = srv.get('/idx/?k=' + k)
    assert r.status == 200 and r.body == b'file-d'


@pytest.mark.parametrize('body,msg', [
    ('1.234% a;', 'invalid percent value "1.234%"'),
    ('0% a;', 'invalid percent value "0%"'),
    ('x a;', 'invalid percent value "x"'),
    ('10 a;', 'invalid percent value "10"'),
    ('60% a; 50% b;', 'percent total is greater than 100%'),
    ('* a; 1% b;', 'percent total is greater than 100%'),
])
def test_bad_config(prefix, run_cli, body, msg):
    conf = prefix.conf('http {\n split_clients "$uri" $v {\n %s\n }\n}\n' % body)
    res = run_cli(['-p', prefix.tmp + '/', '-c', conf, '-t'])
    assert res.rc != 0
    assert msg in res.err and 'test.conf:' in res.err, res.err


@pytest.mark.hayate_only  # nginx 1.22 reads past the words of a one-word line (see docs/DIFFERENCES.md)
@pytest.mark.parametrize('body', ['1%;', '1% a b;'])
def test_line_is_two_words(prefix, run_cli, body):
    conf = prefix.conf('http {\n split_clients "$uri" $v {\n %s\n }\n}\n' % body)
    res = run_cli(['-p', prefix.tmp + '/', '-c', conf, '-t'])
    assert res.rc != 0
    assert 'invalid number of the split_clients parameters in ' in res.err and 'test.conf:' in res.err
