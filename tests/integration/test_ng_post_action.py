"""post_action (nginx's undocumented directive, http/server/location/if in location): once the response has
been sent, the request is redirected to the post_action URI (or @name), whose output is dropped; `off` (the
default) runs nothing. The connection then goes on as usual (keep-alive)."""
import time

from conftest import simple

CONF = simple('''
        location /named { post_action @after; }
        location /off { post_action off; }
        location /post {
            access_log {tmp}/logs/post.log;
            return 200 "HIDDEN";
        }
        location @after { rewrite ^ /remote_hit break; proxy_pass http://127.0.0.1:{port}; }
        location /remote_hit {
            access_log {tmp}/logs/remote.log;
            return 200 "HIDDEN";
        }
        location = /index.html { post_action /post; }
''')


def read(prefix, name):
    try:
        with open(prefix.path('logs/' + name), errors='replace') as f:
            return f.read()
    except FileNotFoundError:
        return ''


def wait_for(fn, timeout=5.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if fn():
            return True
        time.sleep(0.05)
    return fn()


def test_post_action_runs_after_the_response_and_is_not_sent(server, prefix):
    s = server(CONF, files={'html/index.html': 'SEE-THIS'})
    s2 = s.conn()
    for _ in range(2):  # keep-alive survives the post action
        r = s2.request(b'GET /index.html HTTP/1.1\r\nHost: localhost\r\n\r\n')
        assert r.status == 200 and r.body == b'SEE-THIS', r
    assert wait_for(lambda: read(prefix, 'post.log').count('\n') == 2), read(prefix, 'post.log')


def test_post_action_to_a_named_location_proxies(server, prefix):
    s = server(CONF, files={'html/named': 'SEE-THIS'})
    r = s.get('/named')
    assert r.status == 200 and r.body == b'SEE-THIS', r
    assert wait_for(lambda: 'GET /remote_hit' in read(prefix, 'remote.log'))


def test_post_action_off(server, prefix):
    s = server(CONF, files={'html/off': 'SEE-THIS'})
    r = s.get('/off')
    assert r.body == b'SEE-THIS', r
    r = s.get('/named')  # a request after, so a post action of /off would have been logged by now
    assert wait_for(lambda: 'GET /remote_hit' in read(prefix, 'remote.log'))
    assert read(prefix, 'post.log') == ''
