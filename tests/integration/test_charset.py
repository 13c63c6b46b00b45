"""The charset module (nginx's ngx_http_charset_module docs): charset names the charset in Content-Type for
charset_types; with a source_charset other than charset the body is recoded through a charset_map (single-byte
to single-byte, single-byte to and from UTF-8: characters the destination lacks become "&#N;"); the maps
conf/koi-win, conf/koi-utf and conf/win-utf ship with hayate."""
import gzip
import os

import pytest

from conftest import REPO, simple

TEXT = 'Привет, мир! € ✓ 😀 end'   # the check mark is in neither single-byte charset; the emoji is outside the BMP


def maps():
    files = {}
    for name in ('koi-win', 'koi-utf', 'win-utf'):
        with open(os.path.join(REPO, 'conf', name), 'rb') as f:
            files['conf/' + name] = f.read()
    return files


CONF = simple('''
        root {html};
        location /u2w/ { charset windows-1251; source_charset utf-8; }
        location /k2u/ { charset utf-8; source_charset koi8-r; }
        location /k2w/ { charset windows-1251; source_charset koi8-r; }
        location /w2k/ { charset koi8-r; source_charset windows-1251; }
        location /ab/ { charset A; source_charset B; }
        location /gz/ { charset A; source_charset B; gzip_static on; }
        location /name/ { charset utf-8; gzip_static on; }
        location /var/ { charset $arg_c; }
        location = /redir { charset utf-8; default_type text/html; return 302 /x; }
        location = /same { charset utf-8; source_charset UTF-8; default_type text/html; return 200 "same"; }
''', http_extra='''include koi-win; include koi-utf; include win-utf;
    charset_map B A { 58 59; C0 C1; }''')


@pytest.fixture(scope='module')
def big_utf8():
    # more than one read chunk, with 2- and 3-byte sequences across every possible cut
    return ('Ж' * 40000 + '€' * 30000 + 'a€Жx' * 5000)


@pytest.fixture
def srv(server, big_utf8):
    files = maps()
    files.update({'html/u2w/t.html': TEXT.encode(), 'html/u2w/big.html': big_utf8.encode(),
                  'html/u2w/t.bin': TEXT.encode(),
                  'html/k2u/t.html': 'Привет'.encode('koi8_r') + b'\x9a',
                  'html/k2w/t.html': 'Привет'.encode('koi8_r'), 'html/w2k/t.html': 'Привет'.encode('cp1251'),
                  'html/ab/t.html': b'XaX\xc0\xc1\x90' * 10,
                  'html/gz/t.html': b'XXX', 'html/gz/t.html.gz': gzip.compress(b'XXX'),
                  'html/name/t.html': b'n', 'html/name/t.html.gz': gzip.compress(b'n'),
                  'html/var/t.html': b'v'})
    return server(CONF, files=files)


def test_utf8_to_single_byte(srv):
    r = srv.get('/u2w/t.html')
    assert r.status == 200
    assert r.header('Content-Type') == 'text/html; charset=windows-1251'
    assert r.body == 'Привет, мир! € '.encode('cp1251') + b'&#10003; &#128512; end'
    assert r.header('Content-Length') is None      # the length changes: sent chunked
    assert r.header('Accept-Ranges') is None


def test_utf8_sequences_cut_between_reads(srv, big_utf8):
    assert srv.get('/u2w/big.html').body == big_utf8.encode('cp1251')


def test_type_not_in_charset_types_is_left_alone(srv):
    r = srv.get('/u2w/t.bin')
    assert r.header('Content-Type') == 'application/octet-stream'
    assert r.body == TEXT.encode()


def test_single_byte_to_utf8(srv):
    r = srv.get('/k2u/t.html')
    assert r.header('Content-Type') == 'text/html; charset=utf-8'
    assert r.body == 'Привет'.encode() + b'\xc2\xa0'   # 0x9a in KOI8-R is U+00A0


def test_single_byte_to_single_byte_keeps_length(srv):
    r = srv.get('/k2w/t.html')
    assert r.body == 'Привет'.encode('cp1251')
    assert r.header('Content-Length') == str(len('Привет'))


def test_map_used_backwards(srv):
    assert srv.get('/w2k/t.html').body == 'Привет'.encode('koi8_r')


def test_own_map_unmapped_bytes_become_question_marks(srv):
    r = srv.get('/ab/t.html')
    assert r.header('Content-Type') == 'text/html; charset=A'
    assert r.body == b'YaY\xc1??' * 10


def test_single_byte_recoding_with_range(srv):
    r = srv.get('/ab/t.html', headers={'Range': 'bytes=0-3'})
    assert r.status == 206
    assert r.body == b'YaY\xc1'


def test_content_encoding_not_recoded_nor_named(srv):
    r = srv.get('/gz/t.html', headers={'Accept-Encoding': 'gzip'})
    assert r.header('Content-Encoding') == 'gzip'
    assert r.header('Content-Type') == 'text/html'
    assert gzip.decompress(r.body) == b'XXX'
    assert srv.get('/gz/t.html').body == b'YYY'


def test_named_without_recoding_even_with_content_encoding(srv):
    r = srv.get('/name/t.html', headers={'Accept-Encoding': 'gzip'})
    assert r.header('Content-Encoding') == 'gzip'
    assert r.header('Content-Type') == 'text/html; charset=utf-8'


def test_charset_from_variable(srv):
    assert srv.get('/var/t.html?c=koi8-r').header('Content-Type') == 'text/html; charset=koi8-r'
    assert srv.get('/var/t.html').header('Content-Type') == 'text/html'


def test_no_charset_on_redirect(srv):
    r = srv.get('/redir')
    assert r.status == 302
    assert r.header('Content-Type') == 'text/html'


def test_same_charset_any_case_only_named(srv):
    r = srv.get('/same')
    assert r.header('Content-Type') == 'text/html; charset=utf-8'
    assert r.body == b'same'


def test_head_of_recoded_utf8_has_no_length(srv):
    r = srv.head('/u2w/t.html')
    assert r.status == 200 and r.header('Content-Length') is None


@pytest.mark.parametrize('http,message', [
    ('charset_map a a { }', '"charset_map" between the same charsets "a" and "a"'),
    ('charset_map a b { } charset_map b a { }', 'duplicate "charset_map" between "b" and "a"'),
    ('charset_map a b { 1G 20; }', 'invalid value "1G"'),
    ('charset_map a b { 41; }', 'invalid parameters number'),
    ('charset_map a utf-8 { 80 E2; }', 'invalid value "E2"'),
    ('charset_map a utf-8 { 80 F09F9880; }', 'invalid value "F09F9880"'),
    ('charset a; source_charset b;', 'no "charset_map" between the charsets "b" and "a"'),
    ('charset a; charset b;', '"charset" directive is duplicate'),
    ('override_charset maybe;', 'invalid value "maybe" in "override_charset" directive, it must be "on" or "off"'),
])
def test_conf_errors(prefix, run_cli, http, message):
    conf = prefix.conf(simple('root {html};', http_extra=http))
    r = run_cli(['-t', '-p', prefix.tmp + '/', '-c', conf])
    assert r.rc == 1 and message in r.err, r.err


def test_shipped_maps_load_together(prefix, run_cli):
    for rel, content in maps().items():
        prefix.write(rel, content)
    conf = prefix.conf(simple('root {html}; charset utf-8; source_charset windows-1251; override_charset on;',
                              http_extra='include koi-win; include koi-utf; include win-utf;'))
    r = run_cli(['-t', '-p', prefix.tmp + '/', '-c', conf])
    assert r.rc == 0, r.err


GZ_CONF = simple('''
        root {html};
        gzip on; gzip_min_length 1; gzip_types text/plain;
        location /ab/ { charset A; source_charset B; }
        location /plain/ { alias {html}/ab/; }
        location /u/ { charset utf-8; source_charset koi8-r; }
''', http_extra='''include koi-utf;
    charset_map B A { 58 59; }''')


@pytest.mark.parametrize('first', ['/plain/t.html', '/ab/t.html'])
def test_recoded_then_compressed(server, first):
    """gzip compresses the recoded body (the charset filter comes first), and a compressed copy cached for one
    location is never served for another that recodes the same file."""
    files = maps()
    files.update({'html/ab/t.html': b'XaX' * 100, 'html/u/t.html': 'Привет'.encode('koi8_r') * 50})
    s = server(GZ_CONF, files=files)
    gz = {'Accept-Encoding': 'gzip'}
    for path in (first, '/ab/t.html', '/plain/t.html', '/ab/t.html'):
        r = s.get(path, headers=gz)
        assert r.header('Content-Encoding') == 'gzip'
        assert gzip.decompress(r.body) == (b'YaY' if path.startswith('/ab/') else b'XaX') * 100, path
    r = s.get('/u/t.html', headers=gz)
    assert gzip.decompress(r.body) == ('Привет' * 50).encode()
