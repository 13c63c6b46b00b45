"""Regex captures with nginx's semantics: $1..$9 come from the last successful match of a regex with groups
(server_name, location, rewrite, if, map), a failed match or a match without groups leaves them as they were,
named captures of server_name/location/rewrite/if/map regexes are variables that keep their value; and the
`pcre2_compile() failed` message with file:line for a bad regex in every directive that takes one."""
import re

import pytest

from conftest import GLOBALS, EVENTS

CONF = '''
http {
    map $uri $mapped {
        ~^/map/(\\w+)/(\\w+)$ "$2-$1";
        default none;
    }
    map $uri $nm {
        ~^/nm/(?<nmx>\\w+)$ "v-$nmx";
        default none;
    }
    map $uri $mapc {
        ~^/mapc/\\w+/(\\w+)$ m;
        default none;
    }
    server {
        listen 127.0.0.1:{port};
        server_name default.test;
        return 200 "default";
    }
    server {
        listen 127.0.0.1:{port};
        server_name ~^(?<sub>[a-z]+)\\.(\\w+)\\.test$;
        location /sn/ {
            return 200 "sub=$sub 1=$1 2=$2";
        }
        location ~ ^/loc/(?<first>[^/]+)/(.*)$ {
            return 200 "first=$first 1=$1 2=$2 sub=$sub";
        }
        location ~ ^/few/(a) {
            return 200 "[$1][$2][$9]";
        }
        location ~ ^/keep/(\\w+) {
            if ($uri ~ "^/keep/") {
                return 200 "kept $1";
            }
            return 200 "no if";
        }
        location ~ ^/clr/(\\w+) {
            rewrite ^/nomatch/(.*)$ /x;
            return 200 "[$1]";
        }
        location /rw/ {
            rewrite ^/rw/(\\w+)/(?<tail>.*)$ /dest/$1?t=$tail last;
            return 200 "no rewrite";
        }
        location /dest/ {
            return 200 "uri=$uri args=$args tail=$tail sub=$sub";
        }
        location /if/ {
            if ($arg_v ~ "^(\\d+)-(?<word>\\w+)$") {
                return 200 "$1 $word";
            }
            return 200 "nomatch $1";
        }
        location ~ ^/nog/ {
            return 200 "[$1]";
        }
        location /mapfail/ {
            set $x $mapped;
            return 200 "[$1]";
        }
        location /nm/ {
            return 200 "$nm $nmx";
        }
        location /map/ {
            return 200 "$mapped";
        }
        location ~ ^/mapc/(\\w+) {
            set $before $1;
            set $v $mapc;
            return 200 "$before $v $1";
        }
    }
}
'''

HOST = 'foo.bar.test'


@pytest.fixture(scope='module')
def srv_conf():
    return GLOBALS + EVENTS + CONF


@pytest.fixture
def srv(server, srv_conf):
    return server(srv_conf, full=True)


@pytest.mark.parametrize('host,path,body', [
    ('default.test', '/sn/', 'default'),
    ('other.test', '/sn/', 'default'),              # no regex matched: the default server
    (HOST, '/sn/', 'sub=foo 1=foo 2=bar'),          # server_name captures, in a prefix location
    ('Foo.Bar.Test', '/sn/', 'sub=foo 1=foo 2=bar'),  # Host is lower-cased, server_name regexes are caseless
    (HOST, '/loc/a/b/c', 'first=a 1=a 2=b/c sub=foo'),  # the location's match replaces $1, $sub stays
    (HOST, '/few/a', '[a][][]'),                    # groups the regex does not have are empty
    (HOST, '/keep/zz', 'kept '),                    # a match of a regex without groups empties $1 too
    (HOST, '/nog/', '[]'),                          # (a location regex without groups as well)
    (HOST, '/mapfail/', '[foo]'),                   # a failed map or location regex leaves $1
    (HOST, '/clr/zz', '[]'),                        # a failed rewrite or if match clears $1 (nginx)
    (HOST, '/rw/abc/d/e', 'uri=/dest/abc args=t=d/e tail=d/e sub=foo'),
    (HOST, '/if/?v=12-ab', '12 ab'),
    (HOST, '/if/?v=x', 'nomatch '),                 # the failed if match cleared server_name's $1
    (HOST, '/map/a/b', 'b-a'),                      # map's own captures in its value
    (HOST, '/mapc/aa/bb', 'aa m bb'),               # and, as nginx, they become the request's $1 after it
    (HOST, '/nm/abc', 'v-abc abc'),                 # a map's named capture is a variable
])
def test_captures(srv, host, path, body):
    r = srv.get(path, host=host)
    assert r.status == 200, r
    assert r.body.decode() == body


REGEX_ERRORS = [
    ('location ~ ^/a(b { }', 'pcre2_compile() failed: missing closing parenthesis in "^/a(b"'),
    ('location ~* "(?<a>x)(?<a>y)" { }',
     'pcre2_compile() failed: two named subpatterns have the same name (PCRE2_DUPNAMES not set) in '
     '"(?<a>x)(?<a>y)" at "y)"'),
    ('server_name ~^(x;', 'pcre2_compile() failed: missing closing parenthesis in "^(x"'),
    ('rewrite ^(x /y;', 'pcre2_compile() failed: missing closing parenthesis in "^(x"'),
    ('if ($uri ~ "a)b") { return 200; }', 'pcre2_compile() failed: unmatched closing parenthesis in "a)b" at ")b"'),
    ('gzip_disable "(x";', 'pcre2_compile() failed: missing closing parenthesis in "(x"'),
]


@pytest.mark.parametrize('directive,msg', REGEX_ERRORS)
def test_bad_regex_file_line(run_cli, prefix, directive, msg):
    text = prefix.render(GLOBALS + EVENTS + 'http {\n    server {\n        listen 127.0.0.1:{port};\n'
                         '        %s\n    }\n}\n' % directive)
    path = prefix.write('conf/test.conf', text)
    r = run_cli(['-p', prefix.tmp + '/', '-c', path, '-t'])
    assert r.rc == 1, r
    want = re.escape(msg) + r' in ' + re.escape(path) + r':%d$' % (text.splitlines().index(
        '        ' + directive) + 1)
    assert re.search(want, r.err, re.M), r.err
