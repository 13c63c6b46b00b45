"""rewrite's replacement with arguments (https://nginx.org/en/docs/http/ngx_http_rewrite_module.html#rewrite):
when the request's path was sent with a %-escape or a '+', a capture placed after the replacement's '?' is
escaped for the arguments ('%' -> %25, '&' -> %26, ...), so a decoded capture does not break the arguments
apart (nginx ticket #162); a capture in the path part and a path sent unescaped are left as they are."""
from conftest import simple

CONF = simple('''
        location /capturedup { rewrite ^(.*) $1?c=$1; return 200 "uri:$uri args:$args"; }
        location /capture { rewrite ^(.*) $1?c=d; return 200 "uri:$uri args:$args"; }
''')


def test_capture_in_args_is_escaped_when_the_path_was_escaped(server):
    s = server(CONF)
    r = s.get('/capturedup/%25?a=b')
    assert r.body == b'uri:/capturedup/% args:c=/capturedup/%25&a=b', r.body
    r = s.get('/capturedup/x%26y')
    assert r.body == b'uri:/capturedup/x&y args:c=/capturedup/x%26y', r.body


def test_capture_left_alone_without_escapes(server):
    s = server(CONF)
    r = s.get('/capturedup/x?a=b')
    assert r.body == b'uri:/capturedup/x args:c=/capturedup/x&a=b', r.body
    r = s.get('/capture/%25?a=b')
    assert r.body == b'uri:/capture/% args:c=d&a=b', r.body
