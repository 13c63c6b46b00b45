"""metrics; per upstream peer (issue 14): tries, failures, up/down from max_fails/fail_timeout, the response time
histogram and the idle keep-alive pool, summed over two workers; promtool accepts the output."""
import shutil
import subprocess

import pytest

from conftest import free_port
from helpers.backend import Backend
from helpers.process import master_conf, workers_of
from test_metrics import raw_get, samples, scrape

pytestmark = pytest.mark.hayate_only


def closed_port():
    return free_port()  # nothing listens there, and no other server of this run is given it: connect() is refused


HTTP = '''
    upstream app {
        server 127.0.0.1:{be} max_fails=1 fail_timeout=60s;
        server 127.0.0.1:{dead} max_fails=1 fail_timeout=60s;
        server 127.0.0.1:{off} down;
        keepalive 4;
    }
    server {
        listen 127.0.0.1:{port};
        location = /metrics { metrics; }
        location /p/ {
            proxy_pass http://app;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
        }
    }
'''


@pytest.fixture
def be():
    b = Backend().start()
    yield b
    b.stop()


def test_peer_counters_state_and_pool_over_two_workers(server, be):
    conf = HTTP.replace('{be}', str(be.port)).replace('{dead}', str(closed_port())).replace('{off}',
                                                                                          str(closed_port()))
    dead = conf.split('server 127.0.0.1:')[2].split(' ')[0]
    off = conf.split('server 127.0.0.1:')[3].split(' ')[0]
    s = server(master_conf(conf, workers=2), full=True)
    assert len(workers_of(s, 2)) == 2
    n = 20
    for i in range(n):
        assert raw_get(s.port, 'localhost', '/p/%d' % i)[1] == 200
    be.wait_requests(n)
    text = scrape(s.port)
    got = samples(text)

    def v(fam, peer, extra=''):
        return got['%s{upstream="app",peer="127.0.0.1:%s"%s}' % (fam, peer, extra)]
    live = str(be.port)
    assert v('hayate_upstream_requests_total', live) == n, text
    assert v('hayate_upstream_failures_total', live) == 0, text
    # each worker tried the dead peer once (round robin), failed, and holds it down for fail_timeout
    fails = v('hayate_upstream_failures_total', dead)
    assert 1 <= fails <= 2, text
    assert v('hayate_upstream_requests_total', dead) == fails, text
    assert v('hayate_upstream_peer_up', live) == 1, text
    assert v('hayate_upstream_peer_up', dead) == 0, text
    assert v('hayate_upstream_peer_up', off) == 0, text
    assert v('hayate_upstream_requests_total', off) == 0, text
    assert v('hayate_upstream_response_seconds_count', live) == n, text
    assert v('hayate_upstream_response_seconds_bucket', live, ',le="+Inf"') == n, text
    assert got['hayate_upstream_keepalive_idle{upstream="app"}'] >= 1, text
    assert got['hayate_upstream_keepalive_idle{upstream="app"}'] <= 2, text  # one per worker: one at a time
    p = subprocess.run([shutil.which('promtool'), 'check', 'metrics'], input=text, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True, timeout=30)
    assert p.returncode == 0, (p.stdout, p.stderr, text)
    for fam, typ in (('hayate_upstream_requests_total', 'counter'), ('hayate_upstream_failures_total', 'counter'),
                     ('hayate_upstream_peer_up', 'gauge'), ('hayate_upstream_response_seconds', 'histogram'),
                     ('hayate_upstream_keepalive_idle', 'gauge')):
        assert '# TYPE %s %s\n' % (fam, typ) in text


def test_no_upstream_families_without_upstreams(server):
    s = server(master_conf('''
    server {
        listen 127.0.0.1:{port};
        location = /metrics { metrics; }
    }''', workers=1), full=True)
    assert len(workers_of(s, 1)) == 1
    assert 'hayate_upstream' not in scrape(s.port)
