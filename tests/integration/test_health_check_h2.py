"""Active health checks of a location with `proxy_http_version 2`: the probe speaks HTTP/2 as the proxied requests do
(h2c with prior knowledge, or ALPN "h2" over TLS), so an HTTP/2-only backend can pass them: one stream with
:method GET, :path uri and :authority the proxied Host; the status, the fields and the body (DATA frames) are
judged as for HTTP/1 (2xx/3xx, or `match`). Backends: python3-h2 (helpers/h2backend.py). NGINX Plus is not
available here: these tests are hayate's (hayate_only)."""
import pytest

from conftest import simple
from helpers.h2backend import H2Backend, H2Reply
from helpers.hcpeer import HcPeer
from helpers.hcclient import get, served_by, unhealthy_reason, healthy_line
from helpers.process import wait_until, wait_log
from helpers.tls import make_ca, make_signed_cert

pytestmark = pytest.mark.hayate_only


class Steered:
    """A handler for H2Backend: /hc* answers with `status`, `body`, `headers` (changed by the test), other paths
    with the backend's name."""

    def __init__(self, name):
        self.name, self.status, self.body, self.headers, self.chunk = name, 200, b'alive', [], 0

    def __call__(self, req):
        if (req.header(':path') or '').startswith('/hc'):
            return H2Reply(self.status, self.body, headers=[('content-type', 'text/html')] + self.headers,
                           chunk=self.chunk)
        return H2Reply(200, self.name.encode(), headers=[('content-type', 'text/plain')])


@pytest.fixture
def be():
    made = []

    def make(name, **kw):
        b = H2Backend(**kw)
        b.handler = Steered(name)
        b.start()
        made.append(b)
        return b
    yield make
    for b in made:
        b.stop()


def checks(b):
    with b.lock:
        return [r for r in b.requests if (r.header(':path') or '').startswith('/hc')]


def traffic(b):
    with b.lock:
        return [r for r in b.requests if not (r.header(':path') or '').startswith('/hc')]


def conf(ports, hc, scheme='http', loc_extra='', http_extra=''):
    servers = ''.join('server 127.0.0.1:%d;' % p for p in ports)
    return simple('''
        location / {
            proxy_pass %s://backend;
            proxy_http_version 2;
            health_check %s;
            %s
        }''' % (scheme, hc, loc_extra), http_extra='''
        upstream backend { zone backend 64k; %s }
        %s''' % (servers, http_extra))


def test_h2c_checks_speak_http2_and_failing_peer_taken_out(server, be):
    a, b = be('a'), be('b')
    srv = server(conf((a.port, b.port), 'interval=200ms fails=2 passes=2 uri=/hc?x=1'))
    assert wait_until(lambda: len(checks(a)) >= 2 and len(checks(b)) >= 1, 10), srv.error_log()
    r = checks(a)[0]
    assert (r.header(':method'), r.header(':path'), r.header(':scheme'), r.header(':authority')) == \
        ('GET', '/hc?x=1', 'http', 'backend')
    assert 'unhealthy' not in srv.error_log()
    assert sorted(set(served_by(srv.prefix.port))) == ['a', 'b']

    a.handler.status = 500
    m = wait_log(srv, unhealthy_reason(a.port), timeout=10)
    assert m, srv.error_log()
    assert m.group(1) == 'status 500'
    before = len(traffic(a))
    assert served_by(srv.prefix.port, 10) == ['b'] * 10
    assert len(traffic(a)) == before

    a.handler.status = 204
    assert wait_log(srv, healthy_line(a.port), timeout=10), srv.error_log()
    assert wait_until(lambda: 'a' in served_by(srv.prefix.port, 4), 5)


def test_h2c_match_header_and_body_over_frames(server, be):
    a = be('a')
    a.handler.headers = [('x-state', 'ready')]
    a.handler.body = b'x' * 40000 + b'alive'  # several DATA frames
    a.handler.chunk = 4000
    srv = server(conf((a.port,), 'interval=200ms uri=/hc match=ok', http_extra='''
        match ok {
            status 200;
            header X-State = ready;
            body ~ "ali+ve$";
        }'''))
    assert wait_until(lambda: len(checks(a)) >= 2, 10), srv.error_log()
    assert 'health check of peer' not in srv.error_log()
    a.handler.headers = [('x-state', 'draining')]
    m = wait_log(srv, unhealthy_reason(a.port), timeout=10)
    assert m, srv.error_log()
    assert m.group(1) == 'the response (status 200) does not match "ok" (header X-State)'
    a.handler.headers = [('x-state', 'ready')]
    assert wait_log(srv, healthy_line(a.port), timeout=10), srv.error_log()
    a.handler.body = b'dead'
    m = wait_log(srv, r'does not match "ok" \(body\)', timeout=10)
    assert m, srv.error_log()


def test_h2c_reset_stream_fails_the_check(server, be):
    a = be('a')
    srv = server(conf((a.port,), 'interval=200ms uri=/hc'))
    assert wait_until(lambda: len(checks(a)) >= 1, 10), srv.error_log()
    orig = a.handler
    a.handler = lambda req: H2Reply(action='rst', code=2) if req.header(':path').startswith('/hc') else orig(req)
    m = wait_log(srv, unhealthy_reason(a.port), timeout=10)
    assert m, srv.error_log()
    assert m.group(1) == 'the upstream reset the stream (RST_STREAM, error code 2)'


def test_http1_only_peer_fails_an_http2_check(server, prefix):
    a = HcPeer(prefix.tmp, 'a')
    try:
        srv = server(conf((a.port,), 'interval=200ms uri=/hc'))
        m = wait_log(srv, unhealthy_reason(a.port), timeout=10)
        assert m, srv.error_log()
        assert m.group(1).startswith('invalid HTTP/2 response') or \
            m.group(1) == 'the upstream closed the connection without a response', m.group(1)
    finally:
        a.stop()


def test_tls_alpn_h2_checks(server, be, prefix):
    ca = make_ca(prefix.tmp, 'h2ca')
    crt = make_signed_cert(prefix.tmp, 'h2be', 'backend.test', ca, 40)
    a = be('a', tls=crt)
    srv = server(conf((a.port,), 'interval=200ms uri=/hc', scheme='https', loc_extra='''
            proxy_ssl_verify on;
            proxy_ssl_name backend.test;
            proxy_ssl_trusted_certificate %s;''' % ca[0]))
    assert wait_until(lambda: len(checks(a)) >= 2, 10), srv.error_log()
    assert checks(a)[0].header(':scheme') == 'https'
    assert 'h2' in a.alpn
    assert 'health check of peer' not in srv.error_log()
    a.handler.status = 503
    m = wait_log(srv, unhealthy_reason(a.port), timeout=10)
    assert m, srv.error_log()
    assert m.group(1) == 'status 503'


def test_h2c_body_larger_than_examined(server, be):
    # 300k of body: the probe's windows let 256k through without WINDOW_UPDATE, judges them and closes
    a = be('a')
    a.handler.body = b'alive' + b'x' * 300000
    srv = server(conf((a.port,), 'interval=200ms uri=/hc match=big', http_extra='''
        match big { status 200; body ~ "^alive"; }'''))
    assert wait_until(lambda: len(checks(a)) >= 3, 10), srv.error_log()
    assert 'health check of peer' not in srv.error_log()
    a.handler.body = b'dead' + b'x' * 300000
    m = wait_log(srv, unhealthy_reason(a.port), timeout=10)
    assert m, srv.error_log()
    assert m.group(1) == 'the response (status 200) does not match "big" (body)'
