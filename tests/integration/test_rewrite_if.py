"""if: variable truthiness, = and !=, regex with captures, file tests; the if block's own conf."""
import pytest

from conftest import simple

CONF = simple('''
        root {html};
        location /t/ {
            if ($arg_a) { return 200 "a is true"; }
            return 200 "a is false";
        }
        location /eq/ {
            if ($arg_x = "yes") { return 200 "equal"; }
            if ($arg_x != "no") { return 200 "not no"; }
            return 200 "is no";
        }
        location /re/ {
            if ($http_user_agent ~* "^curl/(\\d+)") { return 200 "curl $1"; }
            if ($uri !~ "^/re/keep") { return 200 "not keep"; }
            return 200 "keep";
        }
        location /f/ {
            if (-f $request_filename) { return 200 "file"; }
            if (-d $request_filename) { return 200 "dir"; }
            if (!-e $request_filename) { return 200 "missing"; }
            return 200 "other";
        }
        location /ifset/ {
            set $flag "";
            if ($arg_on) { set $flag "on"; }
            return 200 "flag=$flag";
        }
        location /ifhdr/ {
            if ($arg_h) { add_header X-If yes; }
            add_header X-Loc yes;
        }
        if ($http_x_block) { return 403; }
''')


@pytest.fixture
def srv(server):
    return server(CONF, files={'html/f/file.txt': 'x', 'html/f/dir/a': 'y', 'html/ifhdr/index.html': 'hdr'})


@pytest.mark.parametrize('path,headers,body', [
    ('/t/?a=1', None, 'a is true'),
    ('/t/?a=0', None, 'a is false'),
    ('/t/?a=', None, 'a is false'),
    ('/t/', None, 'a is false'),
    ('/eq/?x=yes', None, 'equal'),
    ('/eq/?x=maybe', None, 'not no'),
    ('/eq/?x=no', None, 'is no'),
    ('/re/x', {'User-Agent': 'CURL/7.88'}, 'curl 7'),
    ('/re/x', {'User-Agent': 'wget'}, 'not keep'),
    ('/re/keep', {'User-Agent': 'wget'}, 'keep'),
    ('/f/file.txt', None, 'file'),
    ('/f/dir', None, 'dir'),
    ('/f/nothing', None, 'missing'),
    ('/ifset/?on=1', None, 'flag=on'),
    ('/ifset/', None, 'flag='),
])
def test_conditions(srv, path, headers, body):
    r = srv.get(path, headers=headers)
    assert r.status == 200
    assert r.text == body


def test_server_if(srv):
    assert srv.get('/t/', headers={'X-Block': '1'}).status == 403


def test_if_block_has_its_own_add_header(srv):
    # nginx: inside a matching "if", the if block's conf is used; it has its own add_header, so the
    # location's add_header is not inherited into it
    r = srv.get('/ifhdr/?h=1')
    assert r.status == 200
    assert r.header('X-If') == 'yes'
    assert r.header('X-Loc') is None
    r = srv.get('/ifhdr/')
    assert r.header('X-If') is None
    assert r.header('X-Loc') == 'yes'


@pytest.mark.parametrize('cond,msg', [
    ('if $a { }', 'invalid condition "$a"'),
    ('if ($a ?? b) { }', 'unexpected "??" in condition'),
    ('if (-q /x) { }', 'invalid condition "-q"'),
])
def test_config_errors(run_cli, prefix, cond, msg):
    path = prefix.conf(simple('location / { set $a 1; %s }' % cond))
    res = run_cli(['-t', '-p', prefix.tmp + '/', '-c', path])
    assert res.rc != 0
    assert msg in res.err
