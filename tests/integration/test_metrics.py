"""metrics; (hayate's own): Prometheus text exposition format 0.0.4, accepted by `promtool check metrics`
(Debian's prometheus package), counters summed over two workers and checked against the requests sent, kept
across a reload; TLS handshakes and resumptions."""
import re
import shutil
import socket
import ssl
import subprocess

import pytest

from helpers.process import master_conf, workers_of, wait_until, quick_get, cli, alive, children
from helpers.tls import make_cert, client_ctx, tls_connect, read_response

pytestmark = pytest.mark.hayate_only

HTTP = '''
    server {
        listen 127.0.0.1:{port};
        server_name www.example.com;
        location = /metrics { metrics; }
        location = /pid { return 200 "$pid"; }
        location = /moved { return 301 /pid; }
        location = /broken { return 500; }
        location / { root {html}; }
    }
    server {
        listen 127.0.0.1:{port};
        server_name api.example.com;
        location / { return 204; }
    }
'''
FILES = {'html/a.txt': 'hello\n'}
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$')


def scrape(port):
    c = socket.create_connection(('127.0.0.1', port))
    c.sendall(b'GET /metrics HTTP/1.0\r\nHost: www.example.com\r\n\r\n')
    data = b''
    while True:
        b = c.recv(65536)
        if not b:
            break
        data += b
    head, _, body = data.partition(b'\r\n\r\n')
    assert head.startswith(b'HTTP/1.1 200 OK'), head
    assert b'\r\nContent-Type: text/plain; version=0.0.4\r\n' in head, head
    return body.decode()


def samples(text):
    out = {}
    for line in text.splitlines():
        if line.startswith('#') or not line:
            continue
        m = SAMPLE.match(line)
        assert m, line
        out[m.group(1) + (m.group(2) or '')] = float(m.group(3))
    return out


def raw_get(port, host, path, body=False):
    """One request on its own connection, read to the end (the server closes it after its LOG phase ran): the
    whole response's byte count and the status (and the body)."""
    c = socket.create_connection(('127.0.0.1', port))
    c.sendall(b'GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n' % (path.encode(), host.encode()))
    data = b''
    while True:
        b = c.recv(65536)
        if not b:
            break
        data += b
    c.close()
    if body:
        return data.partition(b'\r\n\r\n')[2]
    return len(data), int(data.split(b' ', 2)[1])


@pytest.fixture
def two(server):
    s = server(master_conf(HTTP, workers=2), files=FILES, full=True)
    assert len(workers_of(s, 2)) == 2
    return s


def req(name, server, code):
    return 'hayate_http_requests_total{server="%s",code="%s"}' % (server, code)


def test_promtool_accepts_the_output(two):
    for path in ('/a.txt', '/missing', '/moved', '/broken'):
        raw_get(two.port, 'www.example.com', path)
    text = scrape(two.port)
    promtool = shutil.which('promtool')
    assert promtool, 'promtool (Debian package prometheus) is missing: make deps-test'
    p = subprocess.run([promtool, 'check', 'metrics'], input=text, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=30)
    assert p.returncode == 0, (p.stdout, p.stderr, text)
    assert p.stdout.strip() == '' and p.stderr.strip() == '', (p.stdout, p.stderr)
    # every family has HELP and TYPE, before its samples
    names = set(re.findall(r'^# TYPE (\S+) ', text, re.M))
    assert names == set(re.findall(r'^# HELP (\S+) ', text, re.M))
    for fam in ('hayate_connections', 'hayate_connections_accepted_total', 'hayate_connections_handled_total',
                'hayate_http_requests_total', 'hayate_http_request_duration_seconds',
                'hayate_http_response_bytes_total', 'hayate_tls_handshakes_total',
                'hayate_tls_session_resumptions_total', 'hayate_worker_processes', 'hayate_config_generation',
                'hayate_config_reloads_total', 'hayate_build_info'):
        assert fam in names, fam
    assert re.search(r'^hayate_build_info\{version="[^"]+"\} 1$', text, re.M), text


def test_counters_match_requests_sent_over_two_workers(two):
    port = two.port
    before = samples(scrape(port))  # the scrape itself is counted when it ends (LOG phase): not in its own output
    pids = set()
    n = 30
    for _ in range(n):
        pids.add(raw_get(port, 'www.example.com', '/pid', body=True))
    assert len(pids) == 2, pids  # SO_REUSEPORT spread them over both workers
    for _ in range(3):
        raw_get(port, 'www.example.com', '/missing')
    for _ in range(4):
        raw_get(port, 'api.example.com', '/')
    raw_get(port, 'www.example.com', '/moved')
    raw_get(port, 'www.example.com', '/broken')
    after = samples(scrape(port))
    www, api = 'www.example.com', 'api.example.com'
    # n /pid requests + the first scrape, all 2xx on www
    assert after[req('r', www, '2xx')] - before[req('r', www, '2xx')] == n + 1
    assert after[req('r', www, '4xx')] - before[req('r', www, '4xx')] == 3
    assert after[req('r', www, '3xx')] - before[req('r', www, '3xx')] == 1
    assert after[req('r', www, '5xx')] - before[req('r', www, '5xx')] == 1
    assert after[req('r', api, '2xx')] - before.get(req('r', api, '2xx'), 0) == 4
    total = n + 1 + 3 + 4 + 1 + 1
    cnt = 'hayate_http_request_duration_seconds_count'
    assert after[cnt] - before[cnt] == total
    assert after['hayate_http_request_duration_seconds_bucket{le="+Inf"}'] == after[cnt]
    les = [v for k, v in after.items() if k.startswith('hayate_http_request_duration_seconds_bucket')]
    assert les == sorted(les)  # cumulative
    acc = 'hayate_connections_accepted_total'
    assert after[acc] - before[acc] == total  # the first scrape's connection is in `before`, this one's here
    assert after['hayate_connections_handled_total'] == after[acc]
    assert after['hayate_connections{state="active"}'] == 1
    assert after['hayate_connections{state="writing"}'] == 1


def test_response_bytes_exact(two):
    port = two.port
    before = samples(scrape(port))
    mid = samples(scrape(port))  # `mid` includes `before`'s response; get its size from the difference
    scrape_bytes = mid['hayate_http_response_bytes_total'] - before['hayate_http_response_bytes_total']
    assert scrape_bytes > 1000
    sent = sum(raw_get(port, 'www.example.com', '/a.txt')[0] for _ in range(7))
    after = samples(scrape(port))
    got = after['hayate_http_response_bytes_total'] - mid['hayate_http_response_bytes_total']
    # mid's own response is in `got` too: it is within a few bytes of `before`'s (numbers grew by a digit or two)
    assert abs(got - sent - scrape_bytes) < 64, (got, sent, scrape_bytes)


def test_counters_survive_reload(two):
    port = two.port
    for _ in range(10):
        assert raw_get(port, 'www.example.com', '/a.txt')[1] == 200
    before = samples(scrape(port))
    old = workers_of(two, 2)
    res = cli(two, '-s', 'reload')
    assert res.returncode == 0, res
    assert wait_until(lambda: not any(alive(p) for p in old), 10), old
    assert wait_until(lambda: (lambda k: len(k) == 2 and not set(k) & set(old))(children(two.proc.pid)), 10)
    after = samples(scrape(port))
    www2 = req('r', 'www.example.com', '2xx')
    assert after[www2] == before[www2] + 1  # + the `before` scrape; nothing lost with the old workers
    assert after['hayate_config_reloads_total'] == before['hayate_config_reloads_total'] + 1
    assert after['hayate_config_generation'] == before['hayate_config_generation'] + 1
    assert after['hayate_worker_processes'] == 2


def test_tls_handshakes_and_resumptions(server, prefix):
    cert = make_cert(prefix.tmp, 'c', 'localhost', kind='ec')
    body = '''
    server {
        listen 127.0.0.1:{port} ssl;
        ssl_certificate %s;
        ssl_certificate_key %s;
        ssl_session_cache shared:SSL:1m;
        ssl_session_tickets off;
        location / { return 200 "$ssl_session_reused"; }
    }
    server {
        listen 127.0.0.1:{port2};
        location = /metrics { metrics; }
    }''' % cert
    s = server(master_conf(body, workers=2), full=True)
    workers_of(s, 2)
    mport = s.prefix.port2
    before = samples(scrape(mport))
    ctx = client_ctx(maxv=ssl.TLSVersion.TLSv1_2)

    def get(session=None):
        c = tls_connect(s.port, sni='localhost', ctx=ctx, session=session)
        c.sendall(b'GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n')
        st, _, b = read_response(c)
        sess = c.session
        c.close()
        return b, sess

    b, sess = get()
    assert b == b'.'
    reused = sum(get(sess)[0] == b'r' for _ in range(5))
    assert reused == 5
    bad = socket.create_connection(('127.0.0.1', s.port))
    bad.sendall(b'\x16\x03\x01\x00\x05garbage')
    bad.recv(100)
    bad.close()
    after = wait_until(lambda: (lambda a: a if a['hayate_tls_handshake_failures_total'] >
                                before['hayate_tls_handshake_failures_total'] else None)(samples(scrape(mport))), 5)
    assert after, 'the failed handshake was not counted'
    assert after['hayate_tls_handshakes_total'] - before['hayate_tls_handshakes_total'] == 6
    assert after['hayate_tls_session_resumptions_total'] - before['hayate_tls_session_resumptions_total'] == 5


def test_only_in_location(run_cli, prefix):
    path = prefix.conf('http { server { listen 127.0.0.1:{port}; metrics; } }')
    res = run_cli(['-p', prefix.tmp + '/', '-c', path, '-t'])
    assert res.rc != 0
    assert '"metrics" directive is not allowed here in ' in res.err and 'test.conf:' in res.err, res.err


def test_head_and_405(two):
    c = socket.create_connection(('127.0.0.1', two.port))
    c.sendall(b'HEAD /metrics HTTP/1.0\r\nHost: www.example.com\r\n\r\n')
    data = b''
    while True:
        b = c.recv(65536)
        if not b:
            break
        data += b
    assert data.startswith(b'HTTP/1.1 200 OK') and data.endswith(b'\r\n\r\n'), data  # no body
    assert b'Content-Type: text/plain; version=0.0.4\r\n' in data
    n, st = raw_get(two.port, 'www.example.com', '/metrics')
    c = socket.create_connection(('127.0.0.1', two.port))
    c.sendall(b'POST /metrics HTTP/1.0\r\nHost: www.example.com\r\nContent-Length: 0\r\n\r\n')
    assert c.recv(4096).startswith(b'HTTP/1.1 405'), 'expected 405'


LIMITS = '''
    limit_req_zone $binary_remote_addr zone=one:1m rate=1r/m;
    limit_conn_zone $binary_remote_addr zone=conns:1m;
    server {
        listen 127.0.0.1:{port};
        location = /metrics { metrics; }
        location = /a.txt { limit_req zone=one; root {html}; }  # not return: it runs before PREACCESS
        location = /b.txt { limit_conn conns 10; root {html}; }
    }
'''


def test_limit_zone_rejections_per_zone_over_two_workers(server):
    """limit_req's rejections (and delays) and limit_conn's rejections per zone: counted in the zone, so one figure
    for both workers; promtool accepts the families."""
    s = server(master_conf(LIMITS, workers=2), files={'html/a.txt': 'a\n', 'html/b.txt': 'b\n'}, full=True)
    assert len(workers_of(s, 2)) == 2
    codes = [raw_get(s.port, 'localhost', '/a.txt')[1] for _ in range(7)]
    assert sorted(codes) == [200] + [503] * 6, codes  # 1r/m, no burst: the first passes, on either worker
    assert raw_get(s.port, 'localhost', '/b.txt')[1] == 200
    text = scrape(s.port)
    got = samples(text)
    assert got['hayate_limit_req_rejected_total{zone="one"}'] == 6, text
    assert got['hayate_limit_req_delayed_total{zone="one"}'] == 0, text
    assert got['hayate_limit_conn_rejected_total{zone="conns"}'] == 0, text
    assert '# TYPE hayate_limit_req_rejected_total counter' in text
    p = subprocess.run([shutil.which('promtool'), 'check', 'metrics'], input=text, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True, timeout=30)
    assert p.returncode == 0, (p.stdout, p.stderr, text)


def test_no_limit_families_without_zones(two):
    assert 'hayate_limit_req' not in scrape(two.port)
