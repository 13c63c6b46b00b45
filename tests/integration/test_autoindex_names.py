"""autoindex listings of awkward file names (control bytes, quotes, 2/3/4-byte UTF-8, overlong and surrogate
forms, code points above U+10FFFF, cut sequences, names longer than the 50-column HTML cut): every format
byte for byte as nginx 1.22 lists them (the expected listings were produced by nginx on the same tree;
modification times are masked), and the jsonp callback's limits."""
import os
import re

import pytest

NAMES = [b'a~_.-b', b'ctl\x01x', b'q"<&>\'', 'é'.encode(), '€'.encode(), '😀'.encode(), b'\xe0\x80\x80',
         b'\xed\xa0\x80', b'\xf4\x90\x80\x80', b'x\xc3', b'\xf0\x9f\x98', ('é' * 60).encode(),
         ('a' * 49 + '€' + 'b').encode(), b'sp ace+%']


def norm(b):
    b = re.sub(rb'\d\d-[A-Z][a-z]{2}-\d{4} \d\d:\d\d', b'DD-Mon-YYYY HH:MM', b)
    b = re.sub(rb'"mtime":"[^"]*"', b'"mtime":"T"', b)
    return re.sub(rb'mtime="[^"]*"', b'mtime="T"', b)


CONF = '''
http {
    server {
        listen 127.0.0.1:{port};
        root {html};
        autoindex on;
        location /j/ { alias {html}/; autoindex_format json; }
        location /x/ { alias {html}/; autoindex_format xml; }
        location /p/ { alias {html}/; autoindex_format jsonp; }
    }
}
'''


@pytest.fixture
def listing(server, prefix):
    os.makedirs(prefix.path('html/d'))
    for n in NAMES:
        with open(os.path.join(prefix.path('html/d').encode(), n), 'wb') as f:
            f.write(b'x')
    return server(CONF)


@pytest.mark.parametrize('fmt,uri', [('html', '/d/'), ('json', '/j/d/'), ('xml', '/x/d/'),
                                     ('jsonp', '/p/d/?a=1&callback=cb.x_1')])
def test_awkward_names_as_nginx_lists_them(listing, fmt, uri):
    r = listing.get(uri)
    assert r.status == 200
    assert norm(r.body) == GOLDEN[fmt]


def test_jsonp_callback_limits(listing):
    """Up to 128 characters of letters, digits, '_' and '.'; anything else is 400 with nginx's [info] line."""
    r = listing.get('/p/d/?callback=' + 'c' * 128)
    assert r.status == 200 and r.body.startswith(b'/* callback */\r\n' + b'c' * 128 + b'([')
    assert listing.get('/p/d/?callback=' + 'c' * 129).status == 400
    assert listing.get('/p/d/?x=1&callback=a-b').status == 400
    log = listing.error_log()
    assert re.search(r'\[info\] \d+#\d+: \*\d+ client sent too long callback name: "%s"' % ('c' * 129), log), log
    assert re.search(r'\[info\] \d+#\d+: \*\d+ client sent invalid callback name: "a-b"', log), log


GOLDEN = {
    'html': (
        b'<html>\r\n'
        b'<head><title>Index of /d/</title></head>\r\n'
        b'<body>\r\n'
        b'<h1>Index of /d/</h1><hr><pre><a href="../">../</a>\r\n'
        b'<a href="aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa%E2%82%ACb">aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa..&gt;</a> DD-Mon-YYYY HH:MM                   1\r\n'
        b'<a href="a~_.-b">a~_.-b</a>                                             DD-Mon-YYYY HH:MM                   1\r\n'
        b'<a href="ctl%01x">ctl\x01x</a>                                              DD-Mon-YYYY HH:MM                   1\r\n'
        b'<a href="q%22%3C%26%3E%27">q&quot;&lt;&amp;&gt;\'</a>                                             DD-Mon-YYYY HH:MM                   1\r\n'
        b'<a href="sp%20ace%2B%25">sp ace+%</a>                                           DD-Mon-YYYY HH:MM                   1\r\n'
        b'<a href="x%C3">x\xc3</a>                                                 DD-Mon-YYYY HH:MM                   1\r\n'
        b'<a href="%C3%A9">\xc3\xa9</a>                                                 DD-Mon-YYYY HH:MM                   1\r\n'
        b'<a href="%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9">\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3..&gt;</a> DD-Mon-YYYY HH:MM                   1\r\n'
        b'<a href="%E0%80%80">\xe0\x80\x80</a>                                                DD-Mon-YYYY HH:MM                   1\r\n'
        b'<a href="%E2%82%AC">\xe2\x82\xac</a>                                                DD-Mon-YYYY HH:MM                   1\r\n'
        b'<a href="%ED%A0%80">\xed\xa0\x80</a>                                                DD-Mon-YYYY HH:MM                   1\r\n'
        b'<a href="%F0%9F%98">\xf0\x9f\x98</a>                                                DD-Mon-YYYY HH:MM                   1\r\n'
        b'<a href="%F0%9F%98%80">\xf0\x9f\x98\x80</a>                                               DD-Mon-YYYY HH:MM                   1\r\n'
        b'<a href="%F4%90%80%80">\xf4\x90\x80\x80</a>                                               DD-Mon-YYYY HH:MM                   1\r\n'
        b'</pre><hr></body>\r\n'
        b'</html>\r\n'
        b''
    ),
    'json': (
        b'[\r\n'
        b'{ "name":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\xe2\x82\xacb", "type":"file", "mtime":"T", "size":1 },\r\n'
        b'{ "name":"a~_.-b", "type":"file", "mtime":"T", "size":1 },\r\n'
        b'{ "name":"ctl\\u0001x", "type":"file", "mtime":"T", "size":1 },\r\n'
        b'{ "name":"q\\"<&>\'", "type":"file", "mtime":"T", "size":1 },\r\n'
        b'{ "name":"sp ace+%", "type":"file", "mtime":"T", "size":1 },\r\n'
        b'{ "name":"x\xc3", "type":"file", "mtime":"T", "size":1 },\r\n'
        b'{ "name":"\xc3\xa9", "type":"file", "mtime":"T", "size":1 },\r\n'
        b'{ "name":"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", "type":"file", "mtime":"T", "size":1 },\r\n'
        b'{ "name":"\xe0\x80\x80", "type":"file", "mtime":"T", "size":1 },\r\n'
        b'{ "name":"\xe2\x82\xac", "type":"file", "mtime":"T", "size":1 },\r\n'
        b'{ "name":"\xed\xa0\x80", "type":"file", "mtime":"T", "size":1 },\r\n'
        b'{ "name":"\xf0\x9f\x98", "type":"file", "mtime":"T", "size":1 },\r\n'
        b'{ "name":"\xf0\x9f\x98\x80", "type":"file", "mtime":"T", "size":1 },\r\n'
        b'{ "name":"\xf4\x90\x80\x80", "type":"file", "mtime":"T", "size":1 }\r\n'
        b']'
    ),
    'xml': (
        b'<?xml version="1.0"?>\r\n'
        b'<list>\r\n'
        b'<file mtime="T" size="1">aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\xe2\x82\xacb</file>\r\n'
        b'<file mtime="T" size="1">a~_.-b</file>\r\n'
        b'<file mtime="T" size="1">ctl\x01x</file>\r\n'
        b'<file mtime="T" size="1">q&quot;&lt;&amp;&gt;\'</file>\r\n'
        b'<file mtime="T" size="1">sp ace+%</file>\r\n'
        b'<file mtime="T" size="1">x\xc3</file>\r\n'
        b'<file mtime="T" size="1">\xc3\xa9</file>\r\n'
        b'<file mtime="T" size="1">\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9</file>\r\n'
        b'<file mtime="T" size="1">\xe0\x80\x80</file>\r\n'
        b'<file mtime="T" size="1">\xe2\x82\xac</file>\r\n'
        b'<file mtime="T" size="1">\xed\xa0\x80</file>\r\n'
        b'<file mtime="T" size="1">\xf0\x9f\x98</file>\r\n'
        b'<file mtime="T" size="1">\xf0\x9f\x98\x80</file>\r\n'
        b'<file mtime="T" size="1">\xf4\x90\x80\x80</file>\r\n'
        b'</list>\r\n'
        b''
    ),
    'jsonp': (
        b'/* callback */\r\n'
        b'cb.x_1([\r\n'
        b'{ "name":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\xe2\x82\xacb", "type":"file", "mtime":"T", "size":1 },\r\n'
        b'{ "name":"a~_.-b", "type":"file", "mtime":"T", "size":1 },\r\n'
        b'{ "name":"ctl\\u0001x", "type":"file", "mtime":"T", "size":1 },\r\n'
        b'{ "name":"q\\"<&>\'", "type":"file", "mtime":"T", "size":1 },\r\n'
        b'{ "name":"sp ace+%", "type":"file", "mtime":"T", "size":1 },\r\n'
        b'{ "name":"x\xc3", "type":"file", "mtime":"T", "size":1 },\r\n'
        b'{ "name":"\xc3\xa9", "type":"file", "mtime":"T", "size":1 },\r\n'
        b'{ "name":"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", "type":"file", "mtime":"T", "size":1 },\r\n'
        b'{ "name":"\xe0\x80\x80", "type":"file", "mtime":"T", "size":1 },\r\n'
        b'{ "name":"\xe2\x82\xac", "type":"file", "mtime":"T", "size":1 },\r\n'
        b'{ "name":"\xed\xa0\x80", "type":"file", "mtime":"T", "size":1 },\r\n'
        b'{ "name":"\xf0\x9f\x98", "type":"file", "mtime":"T", "size":1 },\r\n'
        b'{ "name":"\xf0\x9f\x98\x80", "type":"file", "mtime":"T", "size":1 },\r\n'
        b'{ "name":"\xf4\x90\x80\x80", "type":"file", "mtime":"T", "size":1 }\r\n'
        b']);'
    ),
}


def test_utf8_names_cut_in_characters_with_charset_utf8(server, prefix):
    """nginx measures html names in characters when the listing goes out as utf-8 (charset utf-8), else in
    bytes: 50 columns, cut to 47 and "..>" (the autoindex.t cases)."""
    name = 'test-' + 'ф' * 46  # 51 characters
    os.makedirs(prefix.path('html/u'))
    with open(os.path.join(prefix.path('html/u'), name), 'wb') as f:
        f.write(b'x')
    s = server('''
http {
    server {
        listen 127.0.0.1:{port};
        root {html};
        autoindex on;
        location /u/ { charset utf-8; }
        location /b/ { alias {html}/u/; }
    }
}
''')
    r = s.get('/u/')
    assert r.header('Content-Type') == 'text/html; charset=utf-8'
    assert ('>test-' + 'ф' * 42 + '..&gt;</a>').encode() in r.body
    raw = s.get('/b/').body   # no charset: 47 bytes, the last character cut in half
    assert b'>' + name.encode()[:47] + b'..&gt;</a>' in raw
