"""ssl_protocols and proxy_ssl_protocols are nginx bitmask directives: written twice, the protocols of both are
enabled (nginx ORs them in); a protocol named again is a [warn] "duplicate value" at its line, not an error."""
import ssl

import pytest

from helpers.tls import make_cert, conf_with, line_of, client_ctx, tls_connect


@pytest.fixture
def pair(prefix):
    return make_cert(prefix.tmp, 'good', 'localhost', kind='ec')


def handshake(port, version):
    try:
        s = tls_connect(port, sni='localhost', ctx=client_ctx(minv=version, maxv=version))
    except (ssl.SSLError, ConnectionError):
        return None
    v = s.version()
    s.close()
    return v


def test_two_directives_enable_both(server, pair):
    srv = server(conf_with(pair[0], pair[1], extra='ssl_protocols TLSv1.2;\n        ssl_protocols TLSv1.3;'))
    assert handshake(srv.port, ssl.TLSVersion.TLSv1_2) == 'TLSv1.2'
    assert handshake(srv.port, ssl.TLSVersion.TLSv1_3) == 'TLSv1.3'


def test_one_directive_limits(server, pair):
    srv = server(conf_with(pair[0], pair[1], extra='ssl_protocols TLSv1.3;'))
    assert handshake(srv.port, ssl.TLSVersion.TLSv1_2) is None
    assert handshake(srv.port, ssl.TLSVersion.TLSv1_3) == 'TLSv1.3'


@pytest.mark.hayate_only  # nginx 1.22 writes the same warning through its error log, without the "hayate:" prefix
def test_duplicate_value_is_a_warning(prefix, run_cli, pair):
    path = prefix.conf(conf_with(pair[0], pair[1], extra='ssl_protocols TLSv1.2;\n        ssl_protocols tlsv1.2 TLSv1.3;\n'
                                 '        location /p { proxy_ssl_protocols TLSv1.2; proxy_ssl_protocols TLSv1.2;'
                                 ' proxy_pass https://127.0.0.1:1; }'))
    r = run_cli(['-t', '-c', path])
    assert r.rc == 0, r
    assert '[warn] duplicate value "tlsv1.2" in %s:%d' % (path, line_of(path, 'tlsv1.2')) in r.err, r.err
    assert '[warn] duplicate value "TLSv1.2" in %s:%d' % (path, line_of(path, 'proxy_ssl_protocols')) in r.err, r.err
