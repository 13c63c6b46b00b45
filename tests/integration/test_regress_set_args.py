"""`set $args` changes the request's query for this request only (nginx's changeable $args); `set` on another
built-in variable is a config error, as in nginx."""
import re


CONF = '''
http {
    server {
        listen 127.0.0.1:{port};
        location /a { set $args "x=1"; return 200 "args=$args\\n"; }
        location /b { return 200 "args=$args\\n"; }
        location /c { rewrite ^ /d?$args? last; }
        location /d { return 200 "d args=$args\\n"; }
    }
}
'''


def test_set_args_is_per_request(server):
    s = server(CONF)
    assert s.get('/a?q=2').body == b'args=x=1\n'
    assert s.get('/b?q=3').body == b'args=q=3\n'
    assert s.get('/c?q=4').body == b'd args=q=4\n'


def test_set_on_a_builtin_is_an_error(prefix, run_cli, prog):
    path = prefix.conf('''
http {
    server {
        listen 127.0.0.1:{port};
        location / { set $uri "/x"; }
    }
}
''')
    res = run_cli(['-p', prefix.tmp + '/', '-c', path, '-t'])
    assert res.rc == 1, res
    assert re.search(r'\[emerg\] .*the duplicate "uri" variable in %s:\d+' % re.escape(path), res.err), res.err
