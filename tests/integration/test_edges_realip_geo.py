"""realip and geo edges (nginx's ngx_http_realip_module and ngx_http_geo_module docs): an address taken from a
header may carry a port ("1.2.3.4:80", "[::1]:80", "[::1]"); a malformed one leaves the client address as it is;
set_real_ip_from takes a host name; geo's proxy list reads X-Forwarded-For the same way; values rejected at -t."""
import pytest

from conftest import simple
from helpers.conf_t import fails_at, http_srv

REALIP = """
http {
    server {
        listen 127.0.0.1:{port};
        set_real_ip_from 127.0.0.1;
        real_ip_header X-Real-IP;
        location /rip { return 200 "$remote_addr|$realip_remote_addr"; }
        location /port { return 200 "$remote_port"; }
    }
    server {
        listen 127.0.0.1:{port2};
        set_real_ip_from 127.0.0.0/8;
        real_ip_header X-Forwarded-For;
        location /xff { return 200 "$remote_addr"; }
    }
    server {
        listen 127.0.0.1:{port3};
        set_real_ip_from localhost;
        real_ip_header X-Real-IP;
        location /byname { return 200 "$remote_addr"; }
    }
}
"""


@pytest.fixture
def rip(server):
    return server(REALIP)


@pytest.mark.parametrize('value,addr', [
    ('1.2.3.4:80', '1.2.3.4'),
    ('[2001:db8::1]:8080', '2001:db8::1'),
    # "[IPv6]" without a port: nginx 1.23+ (1.22 declines it)
    pytest.param('[2001:db8::2]', '2001:db8::2', marks=pytest.mark.hayate_only),
    ('[2001:db8::3', '127.0.0.1'),          # no closing bracket
    ('[2001:db8::4]x', '127.0.0.1'),        # something else than ":port" after it
    ('1.2.3.4:', '127.0.0.1'),              # an empty port
    ('1.2.3.4:123456', '127.0.0.1'),        # a port of more than 5 digits
    ('1.2.3.4:1a', '127.0.0.1'),
    ('1.2.3.4:0', '127.0.0.1'),             # port 0
    ('1.2.3.4:70000', '127.0.0.1'),         # past 65535
    ('[]:80', '127.0.0.1'),
    ('a' * 60, '127.0.0.1'),                # longer than any address
])
def test_x_real_ip_forms(rip, value, addr):
    assert rip.get('/rip', headers={'X-Real-IP': value}).text == '%s|127.0.0.1' % addr


def test_port_from_the_header(rip):
    assert rip.get('/port', headers={'X-Real-IP': '[2001:db8::1]:8080'}).text == '8080'
    assert rip.get('/port', headers={'X-Real-IP': '1.2.3.4:81'}).text == '81'


@pytest.mark.parametrize('value,addr', [
    ('9.9.9.9, 5.6.7.8 , ', '5.6.7.8'),      # trailing separators are skipped
    ('9.9.9.9,5.6.7.8,,', '5.6.7.8'),
    ('9.9.9.9 bogus', '127.0.0.1'),          # the last element is not an address
])
def test_forwarded_for_separators(rip, value, addr):
    assert rip.get('/xff', port=rip.port2, headers={'X-Forwarded-For': value}).text == addr


def test_set_real_ip_from_a_host_name(rip):
    assert rip.get('/byname', port=rip.port3, headers={'X-Real-IP': '10.9.8.7'}).text == '10.9.8.7'


GEO = simple('''
        location / { return 200 "$g"; }
''', http_extra='''
    geo $g {
        proxy 127.0.0.1;
        default no;
        10.0.0.0/8 ten;
        2001:db8::/32 v6;
    }''')


@pytest.mark.parametrize('xff,value', [
    ('10.1.2.3', 'ten'),
    ('10.1.2.3:8080', 'ten'),
    ('[2001:db8::1]:80', 'v6'),
    pytest.param('[2001:db8::1]', 'v6', marks=pytest.mark.hayate_only),  # nginx 1.23+, as above
    ('[2001:db8::1', 'no'),
    ('[2001:db8::1]x', 'no'),
    ('11.1.2.3, 10.1.2.3 ,', 'ten'),
    ('x' * 60, 'no'),
])
def test_geo_proxy_forwarded_forms(server, xff, value):
    s = server(GEO)
    assert s.get('/', headers={'X-Forwarded-For': xff}).text == value


ERRORS = [
    ('set_real_ip_from 1.2.3.4/33;', 'host not found in set_real_ip_from "1.2.3.4/33"'),
    ('set_real_ip_from ::1/129;', 'host not found in set_real_ip_from "::1/129"'),
    ('set_real_ip_from no-such-host.invalid;', 'host not found in set_real_ip_from "no-such-host.invalid"'),
]


@pytest.mark.parametrize('directive,message', ERRORS, ids=[e[0] for e in ERRORS])
def test_realip_rejected_at_t(prefix, run_cli, directive, message):
    fails_at(prefix, run_cli, http_srv(directive), directive, message)


GEO_ERRORS = [
    ('geo $g { ranges; 10.0.0.1-abc x; }', 'invalid range "10.0.0.1-abc"'),
    ('geo $g { ranges; ::1-::2 x; }', 'invalid range "::1-::2"'),
    ('geo $g { ranges; 10.0.0.9-10.0.0.1 x; }', 'invalid range "10.0.0.9-10.0.0.1"'),
    ('geo $g { ranges; 10.0.0.1 x; }', 'invalid range "10.0.0.1"'),
    ('geo $g { 10.0.0.0/8 a; ranges; }', 'the "ranges" directive must be the first directive inside "geo" block'),
    ('geo $g { a b c; }', 'invalid number of the geo parameters'),
    ('geo $g { 10.0.0.0/40 a; }', 'invalid network "10.0.0.0/40"'),
    ('geo $g { delete 10.0.0.0/40; }', 'invalid network "10.0.0.0/40"'),
    ('geo $remote_addr g { default a; }', 'invalid variable name "g"'),
    ('geo g { default a; }', 'invalid variable name "g"'),
]


@pytest.mark.parametrize('block,message', GEO_ERRORS, ids=[e[0] for e in GEO_ERRORS])
def test_geo_rejected_at_t(prefix, run_cli, block, message):
    fails_at(prefix, run_cli, 'http {\n    %s\n}\n' % block, block, message)
