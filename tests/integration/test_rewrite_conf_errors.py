"""rewrite module directives rejected at -t with nginx 1.22's words (checked with its -t) at file:line, and a
few flag combinations whose effect is seen in the response."""
import re

import pytest

from conftest import simple

ERRORS = [
    ('return abc;', 'invalid return code "abc"'),
    ('return 1000;', 'invalid return code "1000"'),
    ('return http://x y;', 'invalid return code "http://x"'),
    ('rewrite ^ /x bogus;', 'invalid parameter "bogus"'),
    ('set x 1;', 'invalid variable name "x"'),
    ('set $uri 1;', 'the duplicate "uri" variable'),
    ('if x { }', 'invalid condition "x"'),
    ('if ( ) { }', 'invalid condition ")"'),
    ('if ($a { }', 'invalid condition "$a"'),
    ('if ($arg_a b c d) { }', 'invalid condition "$arg_a"'),
    ('if ($arg_a = ) { }', 'invalid condition "$arg_a"'),
    ('if (-f) { }', 'invalid condition "-f"'),
    ('if (!-q /x) { }', 'invalid condition "!-q"'),
    ('if ($arg_a ~ "(") { }', 'pcre2_compile() failed: missing closing parenthesis in "("'),
    ('rewrite "(" /x;', 'pcre2_compile() failed: missing closing parenthesis in "("'),
]


@pytest.mark.parametrize('directive,message', ERRORS, ids=[e[0] for e in ERRORS])
def test_errors(prefix, run_cli, directive, message):
    path = prefix.conf(simple('location / {\n        %s\n        }' % directive))
    res = run_cli(['-p', prefix.tmp + '/', '-c', path, '-t'])
    line = [i for i, l in enumerate(open(path), 1) if directive in l][0]
    assert res.rc == 1, res
    assert re.search(r'\[emerg\] (\d+#\d+: )?%s in %s:%d\n' % (re.escape(message), re.escape(path), line),
                     res.err), res.err


def test_flags(server):
    s = server(simple('''
        location /a { rewrite ^ http://example.test/x last; }
        location /b { rewrite ^/b(.*)$ /dest$1? permanent; }
        location /dest { return 200 "dest $uri $args\\n"; }
        location /n { return 204 "ignored"; }
        location /m { return 304; }
        location /t { return 307 /dest; }'''))
    r = s.get('/a?q=1')
    assert r.status == 302 and r.header('Location') == 'http://example.test/x?q=1'  # a URL redirects anyway
    r = s.get('/b/y?q=1')
    assert r.status == 301 and r.header('Location') == 'http://localhost:%d/dest/y' % s.prefix.port  # "?" drops args
    r = s.get('/n')
    assert r.status == 204 and r.body == b'' and r.header('Content-Length') is None
    r = s.get('/m')
    assert r.status == 304 and r.body == b''
    r = s.get('/t')
    assert r.status == 307 and r.header('Location') == 'http://localhost:%d/dest' % s.prefix.port
