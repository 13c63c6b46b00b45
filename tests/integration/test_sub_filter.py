"""sub_filter (ngx_http_sub_filter_module), from nginx's documentation: `sub_filter STRING REPLACEMENT` (several
per level, variables in both, case-insensitive matching), `sub_filter_once`, `sub_filter_last_modified`,
`sub_filter_types` (text/html always). Matches spanning buffers, large static files, the order before gzip."""
import gzip
import os
import random

import pytest

from conftest import simple, IS_NGINX
from helpers.process import status_field

KIB = 1024
MIB = 1 << 20


def conf(body, http_extra=''):
    return simple('root {html};\n' + body, http_extra=http_extra)


def test_replaces_case_insensitively_once_by_default(server):
    srv = server(conf('location / { sub_filter Hello Bye; }'),
                 files={'html/a.html': 'hello HELLO Hello\n'})
    r = srv.get('/a.html')
    assert r.status == 200
    assert r.body == b'Bye HELLO Hello\n'


def test_once_off_replaces_every_occurrence(server):
    srv = server(conf('location / { sub_filter hello bye; sub_filter_once off; }'),
                 files={'html/a.html': 'hello HELLO Hello hell helloo\n'})
    assert srv.get('/a.html').body == b'bye bye bye hell byeo\n'


def test_several_strings_leftmost_first(server):
    srv = server(conf('''
        location /o { alias {html}/; sub_filter aab +; sub_filter yyz -; }
        location /m { alias {html}/; sub_filter_once off; sub_filter aabb +; sub_filter aaabb -; }
        location /p { alias {html}/; sub_filter_once off; sub_filter abc 1; sub_filter ab 2; }
    '''), files={'html/once.html': 'yyzyyzaabaabyyz', 'html/multi.html': 'aabbaaabbaabb',
                 'html/p.html': 'abcabX', 'html/end.html': 'abcab'})
    # once: each string is replaced once
    assert srv.get('/o/once.html').body == b'-yyz+aabyyz'
    # the earliest match wins, even when a longer string would match one byte later
    assert srv.get('/m/multi.html').body == b'+-+'
    # at the same position the first configured string wins
    assert srv.get('/p/p.html').body == b'12X'
    if not IS_NGINX:  # nginx leaves a match of the shorter string alone when the body ends inside the longer one
        assert srv.get('/p/end.html').body == b'12'


def test_variables_in_string_and_replacement(server):
    srv = server(simple('''
        sub_filter_types text/plain; default_type text/plain;
        location /s { sub_filter_once off; sub_filter X$arg_a '[$arg_b]'; return 200 $arg_c; }
    '''))
    r = srv.get('/s?a=foo&b=bar&c=XfooXFOOxfoo-Xfo')
    assert r.body == b'[bar][bar][bar]-Xfo'
    # an empty search string (here: "X" only) still matches its literal part
    assert srv.get('/s?c=aXb').body == b'a[]b'


def test_empty_variable_search_string_matches_nothing(server):
    srv = server(simple('''
        sub_filter_types text/plain; default_type text/plain;
        location /s { sub_filter_once off; sub_filter $arg_a +; sub_filter $arg_b -; return 200 $arg_c; }
    '''))
    assert srv.get('/s?b=b&c=abab').body == b'a-a-'
    assert srv.get('/s?c=abab').body == b'abab'


def test_headers_length_validators_removed(server):
    srv = server(conf('location / { sub_filter foo bar; }'),
                 files={'html/a.html': 'foo foo'})
    r = srv.get('/a.html')
    assert r.body == b'bar foo'
    assert r.header('Content-Length') is None
    assert r.header('Transfer-Encoding') == 'chunked'
    assert r.header('Last-Modified') is None
    assert r.header('ETag') is None
    assert r.header('Accept-Ranges') is None
    # a Range request gets the whole substituted body
    r = srv.get('/a.html', headers={'Range': 'bytes=0-1'})
    assert r.status == 200 and r.body == b'bar foo'
    # HEAD: the same head, no body
    r = srv.head('/a.html')
    assert r.status == 200 and r.body == b''
    assert r.header('Content-Length') is None and r.header('ETag') is None


def test_last_modified_on_keeps_it_and_weakens_etag(server):
    srv = server(conf('location / { sub_filter foo bar; sub_filter_last_modified on; }'),
                 files={'html/a.html': 'foo'})
    r = srv.get('/a.html')
    assert r.body == b'bar'
    assert r.header('Last-Modified') is not None
    assert r.header('ETag', '').startswith('W/"')


def test_types(server):
    srv = server(conf('''
        location /d { alias {html}/; sub_filter foo bar; }
        location /t { alias {html}/; sub_filter foo bar; sub_filter_types text/plain; }
        location /any { alias {html}/; sub_filter foo bar; sub_filter_types *; }
    '''), files={'html/a.txt': 'foo', 'html/a.html': 'foo', 'html/a.css': 'foo'})
    # text/html only by default: other types keep their body and length
    r = srv.get('/d/a.txt')
    assert r.body == b'foo' and r.header('Content-Length') == '3'
    assert srv.get('/d/a.html').body == b'bar'
    # a list adds to text/html
    assert srv.get('/t/a.txt').body == b'bar'
    assert srv.get('/t/a.html').body == b'bar'
    assert srv.get('/t/a.css').body == b'foo'
    assert srv.get('/any/a.css').body == b'bar'


def test_inheritance(server):
    srv = server(conf('''
        location /inherit { alias {html}/; }
        location /own { alias {html}/; sub_filter two 2; }
    ''', http_extra='sub_filter one 1; sub_filter_once off;'),
        files={'html/a.html': 'one two one two'})
    assert srv.get('/inherit/a.html').body == b'1 two 1 two'
    # a level with sub_filter of its own replaces the inherited list
    assert srv.get('/own/a.html').body == b'one 2 one 2'


def test_empty_body_untouched(server):
    srv = server(conf('location / { sub_filter foo bar; }'), files={'html/e.html': ''})
    r = srv.get('/e.html')
    assert r.status == 200 and r.body == b''
    assert r.header('Content-Length') == '0'


def text_with(pattern, size, seed, at):
    """`size` bytes of random lower-case text without `pattern`'s first letter, with pattern at offsets `at`."""
    rnd = random.Random(seed)
    letters = [c for c in 'abcdefghijklmnopqrstuvwxyz \n' if c != pattern[0].lower()]
    data = bytearray(''.join(rnd.choice(letters) for _ in range(size)).encode())
    for off in at:
        data[off:off + len(pattern)] = pattern.encode()
    return bytes(data)


def test_matches_across_buffer_boundaries_in_a_large_file(server):
    # the file is read in pieces of at most 64 KiB: put matches across every such boundary and elsewhere
    pat = 'Zebra-crossing-' * 5
    at = [0, 65536 - 3, 2 * 65536 - 40, 3 * 65536 - 1, 200000, 4 * 65536 - len(pat) + 1, 500000 - len(pat)]
    data = text_with(pat, 500000, 1, at)
    srv = server(conf('location / { sub_filter %s "<X>"; sub_filter_once off; }' % pat.lower()),
                 files={'html/big.html': data})
    r = srv.get('/big.html')
    assert r.status == 200
    assert r.body == data.replace(pat.encode(), b'<X>')
    assert r.body.count(b'<X>') == len(at)


def test_once_on_large_file_rest_unchanged(server):
    data = text_with('Qq', 3 * MIB, 2, [70000, 2 * MIB])
    srv = server(conf('location / { sub_filter qq "!"; }'), files={'html/big.html': data})
    r = srv.get('/big.html')
    assert r.body == data.replace(b'Qq', b'!', 1)


def test_substituted_text_is_what_gets_compressed(server):
    data = text_with('Kk', 200000, 3, [10, 65535, 150000])
    srv = server(conf('location / { sub_filter kk "[replaced]"; sub_filter_once off; }',
                      http_extra='gzip on; gzip_min_length 1;'),
                 files={'html/a.html': data})
    r = srv.get('/a.html', headers={'Accept-Encoding': 'gzip'})
    assert r.header('Content-Encoding') == 'gzip'
    assert gzip.decompress(r.body) == data.replace(b'Kk', b'[replaced]')


@pytest.mark.hayate_only  # nginx substitutes inside the compressed bytes (and corrupts them)
def test_compressed_body_left_alone(server):
    raw = b'foo foo foo'
    srv = server(conf('location / { sub_filter foo bar; gzip_static always; }'),
                 files={'html/a.html': 'foo', 'html/a.html.gz': gzip.compress(raw)})
    r = srv.get('/a.html')
    assert r.header('Content-Encoding') == 'gzip'
    assert gzip.decompress(r.body) == raw


@pytest.mark.hayate_only  # the memory bound is hayate's
def test_large_file_bounded_memory(server, monkeypatch):
    monkeypatch.setenv('ASAN_OPTIONS', ':'.join(filter(None, [os.environ.get('ASAN_OPTIONS'),
                                                              'quarantine_size_mb=0'])))
    block = text_with('Mm', MIB, 4, [100, 5000, 700000])
    data = block * 48
    srv = server(conf('location / { sub_filter mm "<<MM>>"; sub_filter_once off; }'),
                 files={'html/big.html': data, 'html/small.html': 'x'})
    pid = srv.proc.pid
    assert srv.get('/small.html').status == 200
    base = int(status_field(pid, 'VmRSS')[0])
    c = srv.conn(timeout=30.0, rcvbuf=16384)
    c.send(b'GET /big.html HTTP/1.0\r\nHost: x\r\n\r\n')
    got = bytearray()
    peak = 0
    while True:
        chunk = c.sock.recv(65536)
        if not chunk:
            break
        got += chunk
        if len(got) % (2 * MIB) < 65536:
            peak = max(peak, int(status_field(pid, 'VmRSS')[0]))
    head, _, body = bytes(got).partition(b'\r\n\r\n')
    assert body == data.replace(b'Mm', b'<<MM>>')
    assert peak - base < 16 * 1024, 'worker RSS grew by %d KiB' % (peak - base)


@pytest.mark.parametrize('line, message', [
    ('sub_filter a;', 'invalid number of arguments in "sub_filter" directive'),
    ('sub_filter "" x;', 'empty search pattern'),
    ('sub_filter_once maybe;', 'invalid value "maybe" in "sub_filter_once" directive, it must be "on" or "off"'),
])
def test_config_errors(prefix, run_cli, line, message):
    prefix.conf(simple('location / { %s }' % line))
    res = run_cli(['-t', '-c', prefix.path('conf/test.conf')])
    assert res.rc != 0
    assert message in res.err and 'test.conf:' in res.err


def test_client_gone_mid_stream(server):
    data = text_with('Mm', 8 * MIB, 6, [10, 5 * MIB])
    srv = server(conf('location / { sub_filter mm "<M>"; sub_filter_once off; }'),
                 files={'html/big.html': data})
    for _ in range(3):
        c = srv.conn(rcvbuf=8192)
        c.send(b'GET /big.html HTTP/1.1\r\nHost: x\r\n\r\n')
        c.read_head()
        c.sock.recv(1000)
        c.close()
    assert srv.get('/big.html').body == data.replace(b'Mm', b'<M>')


def test_sub_filter_then_charset_recoding_then_gzip(server, prefix):
    """nginx's filter order: sub_filter substitutes in the source charset, charset recodes the result, gzip
    compresses last."""
    import gzip as _gzip
    import os as _os
    import shutil as _shutil
    from conftest import IS_NGINX, REPO
    src = '/etc/nginx/win-utf' if IS_NGINX else _os.path.join(REPO, 'conf', 'win-utf')
    _shutil.copy(src, prefix.path('conf/win-utf'))
    srv = server('''
http {
    include mime.types;
    include win-utf;
    server {
        listen 127.0.0.1:{port};
        root {html};
        location / {
            source_charset utf-8;
            charset windows-1251;
            sub_filter 'hello' 'привет';
            gzip on;
            gzip_min_length 1;
        }
    }
}
''', files={'html/t.html': 'hello мир ' * 50})
    r = srv.get('/t.html', headers={'Accept-Encoding': 'gzip'})
    assert r.status == 200
    assert r.header('content-type') == 'text/html; charset=windows-1251'
    assert r.header('content-encoding') == 'gzip'
    # sub_filter_once on (the default): the first 'hello' only
    assert _gzip.decompress(r.body) == ('привет мир ' + 'hello мир ' * 49).encode('cp1251')
