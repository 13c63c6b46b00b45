"""geo (ngx_http_geo_module): CIDR longest-prefix match for IPv4 and IPv6, default, delete, include, ranges
(later ranges overwrite what they cover), the address from a variable (IPv4-mapped IPv6 looked up as IPv4,
non-addresses as 255.255.255.255), proxy/proxy_recursive with X-Forwarded-For, and config errors with
file:line. Passes with nginx 1.22."""
import pytest

from helpers.http1 import Conn


def line_of(conf, text):
    with open(conf) as f:
        for n, l in enumerate(f, 1):
            if text in l:
                return n
    raise AssertionError(text)

GEO = '''
    geo $arg_ip $cidr {
        default          dflt;
        include          {tmp}/geo.inc;
        10.0.0.0/8       ten;
        10.1.0.0/16      ten-one;
        10.1.2.3         host;
        192.0.2.0/24     doc;
        delete           192.0.2.0/24;
        255.255.255.255  none;
        2001:db8::/32    v6doc;
        2001:db8:1::/48  v6doc-one;
    }
    geo $arg_ip $nodefault {
        10.0.0.0/8 ten;
    }
    geo $arg_ip $rng {
        ranges;
        default                    dflt;
        10.0.0.0-10.0.0.255        a;
        10.0.0.10-10.0.0.20        b;
        10.0.0.15-10.0.0.15        c;
        10.0.1.0-10.0.2.255        d;
        10.0.3.0-10.0.3.255        e;
        delete                     10.0.3.0-10.0.3.255;
        delete                     10.0.2.0-10.0.2.255;
    }
    geo $client {
        default       world;
        127.0.0.0/8   loopback;
        ::1           loopback6;
    }
    geo $xff {
        default       dflt;
        proxy         127.0.0.0/8;
        proxy         192.0.2.0/24;
        127.0.0.0/8   loopback;
        192.0.2.0/24  doc;
        203.0.113.0/24 net3;
    }
    geo $xffr {
        proxy_recursive;
        default       dflt;
        proxy         127.0.0.0/8;
        proxy         192.0.2.0/24;
        127.0.0.0/8   loopback;
        192.0.2.0/24  doc;
        203.0.113.0/24 net3;
    }
'''


def conf(listen='listen 127.0.0.1:{port};'):
    return '''
http {
%s
    server {
        %s
        location / { return 200 "$cidr|$nodefault|$rng|$client|$xff|$xffr"; }
    }
}
''' % (GEO, listen)


@pytest.fixture
def srv(server, prefix):
    prefix.write('geo.inc', '172.16.0.0/12 included;\n')
    return server(conf())


def vals(srv, ip=None, headers=None):
    r = srv.get('/' + ('?ip=' + ip if ip is not None else ''), headers=headers)
    assert r.status == 200
    return r.body.decode().split('|')


@pytest.mark.parametrize('ip,cidr,rng', [
    ('10.9.9.9', 'ten', 'dflt'),
    ('10.1.9.9', 'ten-one', 'dflt'),
    ('10.1.2.3', 'host', 'dflt'),
    ('10.1.2.4', 'ten-one', 'dflt'),
    ('172.20.1.1', 'included', 'dflt'),
    ('192.0.2.1', 'dflt', 'dflt'),           # deleted network
    ('11.0.0.1', 'dflt', 'dflt'),
    ('10.0.0.5', 'ten', 'a'),
    ('10.0.0.12', 'ten', 'b'),
    ('10.0.0.15', 'ten', 'c'),
    ('10.0.0.20', 'ten', 'b'),
    ('10.0.0.21', 'ten', 'a'),
    ('10.0.1.7', 'ten', 'd'),
    ('10.0.3.7', 'ten', 'dflt'),             # deleted range
    ('10.0.2.7', 'ten', 'd'),                # delete removes only a whole range as added
    ('::ffff:10.1.2.3', 'host', 'dflt'),     # IPv4-mapped: the IPv4 tree
    ('2001:db8::1', 'v6doc', 'dflt'),
    ('2001:db8:1::1', 'v6doc-one', 'dflt'),
    ('2001:db9::1', 'dflt', 'dflt'),
    ('not-an-address', 'none', 'dflt'),      # 255.255.255.255
    ('', 'none', 'dflt'),
])
def test_geo_from_variable(srv, ip, cidr, rng):
    v = vals(srv, ip)
    assert v[0] == cidr and v[2] == rng, v
    assert v[1] == ('ten' if cidr.startswith(('ten', 'host')) or ip.startswith('10.') else ''), v


def test_geo_client_address(srv):
    v = vals(srv)
    assert v[3] == 'loopback'
    assert v[4] == 'loopback' and v[5] == 'loopback'


@pytest.mark.parametrize('xff,plain,recursive', [
    ('203.0.113.5', 'net3', 'net3'),
    ('10.0.0.1', 'dflt', 'dflt'),
    ('10.0.0.1, 203.0.113.5', 'net3', 'net3'),
    ('203.0.113.5, 192.0.2.7', 'doc', 'net3'),       # 192.0.2.7 is a trusted proxy: recursive goes past it
    ('203.0.113.5, 192.0.2.7, 127.0.0.2', 'loopback', 'net3'),
    ('192.0.2.7, 192.0.2.8', 'doc', 'doc'),           # all trusted: the leftmost
    ('garbage', 'loopback', 'loopback'),              # not an address: the client's own
    ('203.0.113.5:8080', 'net3', 'net3'),
])
def test_geo_proxy_x_forwarded_for(srv, xff, plain, recursive):
    v = vals(srv, headers={'X-Forwarded-For': xff})
    assert (v[4], v[5]) == (plain, recursive), v


def test_geo_ipv6_client(server, prefix):
    prefix.write('geo.inc', '')
    srv = server(conf('listen [::1]:{port};'), wait_host='::1')
    c = Conn('::1', srv.port)
    r = c.request(b'GET / HTTP/1.0\r\n\r\n')
    c.close()
    assert r.status == 200
    assert r.body.decode().split('|')[3] == 'loopback6'


@pytest.mark.parametrize('line,msg', [
    ('10.0.0.0/33 x;', 'invalid network "10.0.0.0/33"'),
    ('nonsense x;', 'invalid network "nonsense"'),
    ('10.0.0.0/8 x y;', 'invalid number of the geo parameters'),
])
def test_geo_bad_network(run_cli, prefix, line, msg):
    conf = prefix.conf('http {\n    geo $g {\n        %s\n    }\n}\n' % line)
    res = run_cli(['-p', prefix.tmp + '/', '-c', conf, '-t'])
    assert res.rc != 0
    assert msg in res.err and '%s:%d' % (conf, line_of(conf, line)) in res.err, res.err


def test_geo_bad_range(run_cli, prefix):
    conf = prefix.conf('http {\n    geo $g {\n        ranges;\n        10.0.0.9-10.0.0.1 x;\n    }\n}\n')
    res = run_cli(['-p', prefix.tmp + '/', '-c', conf, '-t'])
    assert res.rc != 0
    assert 'invalid range "10.0.0.9-10.0.0.1"' in res.err, res.err
    assert '%s:%d' % (conf, line_of(conf, '10.0.0.9-')) in res.err, res.err
