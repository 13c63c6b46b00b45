"""map: exact (case-insensitive), hostnames wildcards, regexes in order with captures, default, include,
variables in values, forward references; values observed through the access log. Passes with nginx 1.22."""
import pytest

from test_log_access import read_lines

FILES = {'html/a.txt': 'abc'}


def conf(maps, fmt):
    return '''
http {
    log_format m '%s';
    %s
    server {
        listen 127.0.0.1:{port};
        server_name localhost;
        root {html};
        access_log logs/m.log m;
    }
}
''' % (fmt, maps)


def values(s, path='/a.txt', host='localhost', n=1):
    s.get(path, host=host)
    return read_lines(s, 'logs/m.log', n)[n - 1].split(b'|')


MAPS = r'''
    map $arg_k $exact {
        default     dflt;
        Apple       fruit;
        \default    escaped;
        ""          empty-key;
        ~^num(\d+)-(\d+)$  n$2.$1;
        ~*^CASE     caseless;
        ~^a         regex-a;
    }
    map $arg_k $nodefault { x 1; }
    map "$arg_a:$arg_b" $pair { 1:2 one-two; default none; }
    map $arg_k $withvar { x "v=$arg_v"; default "$uri"; }
    map $exact $chained { fruit yes; default no; }
    map $arg_k $vol { volatile; default v; }
'''
FMT = '$exact|$nodefault|$pair|$withvar|$chained|$vol|$later'
LATER = 'map $arg_k $later { default late; }'


@pytest.fixture
def srv(server):
    return server(conf(MAPS + LATER, FMT), files=FILES)


@pytest.mark.parametrize('query,expected', [
    ('k=apple', [b'fruit', b'', b'none', b'/a.txt', b'yes', b'v', b'late']),
    ('k=APPLE', [b'fruit', b'', b'none', b'/a.txt', b'yes', b'v', b'late']),
    ('k=default', [b'escaped', b'', b'none', b'/a.txt', b'no', b'v', b'late']),
    ('k=num12-34', [b'n34.12', b'', b'none', b'/a.txt', b'no', b'v', b'late']),
    ('k=case-x', [b'caseless', b'', b'none', b'/a.txt', b'no', b'v', b'late']),
    ('k=apricot', [b'regex-a', b'', b'none', b'/a.txt', b'no', b'v', b'late']),
    ('k=zzz', [b'dflt', b'', b'none', b'/a.txt', b'no', b'v', b'late']),
    ('k=', [b'empty-key', b'', b'none', b'/a.txt', b'no', b'v', b'late']),
    ('k=x&v=7&a=1&b=2', [b'dflt', b'1', b'one-two', b'v=7', b'no', b'v', b'late']),
])
def test_map_values(srv, query, expected):
    assert values(srv, '/a.txt?' + query) == expected


HOSTMAPS = '''
    map $host $h {
        hostnames;
        default          none;
        example.com      exact;
        *.example.com    wild;
        *.a.example.com  deeper;
        .example.org     dot;
        www.example.*    tail;
        ~^re\\.          regex;
    }
'''


@pytest.mark.parametrize('host,expected', [
    ('example.com', b'exact'),
    ('x.example.com', b'wild'),
    ('y.x.example.com', b'wild'),
    ('b.a.example.com', b'deeper'),
    ('example.org', b'dot'),
    ('z.example.org', b'dot'),
    ('www.example.net', b'tail'),
    ('re.test', b'regex'),
    ('other.test', b'none'),
])
def test_map_hostnames(server, host, expected):
    s = server(conf(HOSTMAPS, '$h'), files=FILES)
    assert values(s, host=host) == [expected]


def test_map_include(server):
    s = server(conf('map $arg_k $inc { include maps/inc.map; default d; }', '$inc'),
               files=dict(FILES, **{'conf/maps/inc.map': 'a 1;\nb 2;\n'}))
    assert values(s, '/a.txt?k=b') == [b'2']


@pytest.mark.parametrize('maps,msg', [
    ('map $uri $x { a 1; a 2; }', 'conflicting parameter "a"'),
    ('map $uri $x { a 1; A 2; }', 'conflicting parameter "a"'),
    ('map $uri $x { default 1; default 2; }', 'duplicate default map parameter'),
    ('map $uri $x { a 1 2; }', 'invalid number of the map parameters'),
    ('map $uri x { a 1; }', 'invalid variable name "x"'),
    ('map $uri $x { hostnames; a.*.com 2; }', 'invalid hostname or wildcard "a.*.com"'),
    ('map $uri $x { ~(a 1; }', 'pcre2_compile() failed: missing closing parenthesis in "(a"'),
    ('map $uri $x { a $nope; }', 'unknown "nope" variable'),
])
def test_map_errors(run_cli, prefix, maps, msg):
    path = prefix.conf(conf(maps, '-'))
    r = run_cli(['-p', prefix.tmp + '/', '-t', '-c', path])
    assert r.rc != 0 and msg in r.err, r.err
