"""Values rejected at -t by the http2, resolver and limit_rate directives (nginx's words, at the directive's
file:line), and the forms they accept."""
import pytest

from helpers.conf_t import fails_at, passes, http_srv

SRV = [
    ('http2_chunk_size 0;', 'the http2 chunk size cannot be zero'),
    ('http2_chunk_size abc;', '"http2_chunk_size" directive invalid value'),
    ('http2_body_preread_size 2049m;', 'the maximum body preread buffer size is 2147483647'),
    ('http2_max_concurrent_streams abc;', '"http2_max_concurrent_streams" directive invalid number'),
    # nginx 1.22 takes any value for the obsolete names; hayate checks it as the directive that replaced them
    pytest.param('http2_idle_timeout abc;', '"http2_idle_timeout" directive invalid value', marks=pytest.mark.hayate_only),
    pytest.param('http2_max_requests abc;', '"http2_max_requests" directive invalid number',
                 marks=pytest.mark.hayate_only),
    ('resolver 127.0.0.1 valid=abc;', 'invalid parameter: valid=abc'),
    # ipv4= came in nginx 1.23.1 (1.22 takes it for a host name)
    pytest.param('resolver 127.0.0.1 ipv4=maybe;', 'invalid parameter: ipv4=maybe', marks=pytest.mark.hayate_only),
    ('resolver 127.0.0.1 ipv6=maybe;', 'invalid parameter: ipv6=maybe'),
    pytest.param('resolver 127.0.0.1 ipv4=off ipv6=off;', '"ipv4" and "ipv6" cannot both be "off"',
                 marks=pytest.mark.hayate_only),
    ('resolver 127.0.0.1; resolver 127.0.0.2;', '"resolver" directive is duplicate'),
    ('resolver_timeout abc;', '"resolver_timeout" directive invalid value'),
    ('resolver_timeout 1s; resolver_timeout 2s;', '"resolver_timeout" directive is duplicate'),
    ('limit_rate abc;', '"limit_rate" directive invalid value'),
    ('limit_rate 1k; limit_rate 2k;', '"limit_rate" directive is duplicate'),
    ('limit_rate_after abc;', '"limit_rate_after" directive invalid value'),
]


@pytest.mark.parametrize('directive,message', SRV, ids=[str(i) for i in range(len(SRV))])
def test_rejected_at_t(prefix, run_cli, directive, message):
    fails_at(prefix, run_cli, http_srv(directive), directive, message)


@pytest.mark.parametrize('block,message', [
    ('http2_recv_buffer_size 16;', '"http2_recv_buffer_size" directive value is too small'),
])
def test_http_level_rejected_at_t(prefix, run_cli, block, message):
    fails_at(prefix, run_cli, 'http {\n    %s\n}\n' % block, block, message)


@pytest.mark.parametrize('directive', [
    'resolver 127.0.0.1:5353 [::1] valid=30s ipv6=off;',
    pytest.param('resolver 127.0.0.1 ipv4=off;', marks=pytest.mark.hayate_only),
    'limit_rate $arg_r; limit_rate_after 1m;',
    'http2_chunk_size 32m;',
])
def test_accepted(prefix, run_cli, directive):
    passes(prefix, run_cli, http_srv(directive))
