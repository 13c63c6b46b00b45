"""SSI (ngx_http_ssi_module), from nginx's documentation: `ssi on` processes `<!--# command param="value" -->`
commands in responses of the listed types (text/html always): include (virtual, file, wait, set, stub), echo
(var, default, encoding), set, if/elif/else/endif, config (errmsg, timefmt), block/endblock; $date_local and
$date_gmt. A command that fails prints "[an error occurred while processing the directive]" unless
ssi_silent_errors. Every test here passes against Debian's nginx too (but the HTTP/2 variant: nginx 1.22
has no `http2 on`)."""
import re
import socket

from conftest import simple
from helpers.http1 import ProtocolError

ERR = b'[an error occurred while processing the directive]'


def conf(body, http_extra=''):
    return simple('root {html};\n' + body, http_extra=http_extra)


def test_echo_set_and_encodings(server):
    srv = server(conf('location / { ssi on; }'), files={
        'html/e.html': 'X<!--#echo var="arg_t" -->X',
        'html/s.html': 'X<!--#set var="v" value="<a&b>" -->'
                       '<!--#echo var="v" encoding="none" -->|'
                       '<!--#echo var="v" encoding="url" -->|'
                       '<!--#echo var="v" encoding="entity" -->|'
                       '<!--#echo var="v" -->X',
        'html/d.html': '<!--#echo var="nothing" default="dflt $arg_a" -->',
    })
    assert srv.get('/e.html').body == b'X(none)X'
    assert srv.get('/e.html?t=').body == b'XX'
    assert srv.get('/e.html?a=1&t=val&b=2').body == b'XvalX'
    assert srv.get('/s.html').body == b'X<a&b>|%3Ca&b%3E|&lt;a&amp;b&gt;|&lt;a&amp;b&gt;X'
    assert srv.get('/d.html?a=Z').body == b'dflt $arg_a'  # the default is not evaluated


def test_headers_cleared_and_types(server):
    srv = server(conf('''
        location / { ssi on; }
        location /typed/ { ssi on; ssi_types text/plain; }
        location /lm/ { ssi on; ssi_last_modified on; }
    '''), files={
        'html/p.html': 'a<!--#echo var="uri" -->b',
        'html/p.txt': 'a<!--#echo var="uri" -->b',
        'html/typed/p.txt': 'a<!--#echo var="uri" -->b',
        'html/lm/p.html': 'a<!--#echo var="uri" -->b',
    })
    r = srv.get('/p.html')
    assert r.body == b'a/p.htmlb'
    for h in ('Content-Length', 'Last-Modified', 'ETag', 'Accept-Ranges'):
        assert r.header(h) is None, h
    # text/plain is not processed unless listed
    assert srv.get('/p.txt').body == b'a<!--#echo var="uri" -->b'
    assert srv.get('/typed/p.txt').body == b'a/typed/p.txtb'
    # ssi_last_modified on: Last-Modified kept, the ETag made weak
    r = srv.get('/lm/p.html')
    assert r.header('Last-Modified') is not None
    assert r.header('ETag').startswith('W/')


def test_include_virtual_in_order_with_args(server):
    srv = server(conf('location / { ssi on; }'), files={
        'html/a.html': 'X<!--#echo var="arg_test" -->X',
        'html/b.html': '1<!--#include virtual="/a.html?test=one" -->2'
                       '<!--#include virtual="/c.html" -->3<!--#include virtual="a.html?test=rel" -->4',
        'html/c.html': 'C',
    })
    assert srv.get('/b.html?test=main').body == b'1XoneX2C3XrelX4'


def test_included_page_is_processed_and_nested(server):
    srv = server(conf('location / { ssi on; }'), files={
        'html/top.html': '[<!--#include virtual="/mid.html" -->]',
        'html/mid.html': '(<!--#include virtual="/leaf.html" -->)',
        'html/leaf.html': '<!--#echo var="uri" -->',
    })
    assert srv.get('/top.html').body == b'[(/leaf.html)]'


def test_include_escaped_uri(server):
    srv = server(conf('location / { ssi on; }'), files={
        'html/t1.html': 'X<!--#echo var="arg_test" -->X',
        'html/u1.html': 'X<!--#include virtual="/t%31.html?test=ok" -->X',
        'html/u3.html': 'X<!--#include virtual="/t1.html%3ftest=ok" -->X',
    })
    assert srv.get('/u1.html').body == b'XXokXX'
    # an escaped "?" is part of the path: that file does not exist
    assert b'404' in srv.get('/u3.html').body


def test_include_wait_and_set(server):
    srv = server(conf('location / { ssi on; }'), files={
        'html/i.html': 'x<!--#include virtual="/f.html" -->x<!--#include virtual="/s.html" -->x',
        'html/f.html': 'FIRST',
        'html/s.html': '<!--#include virtual="/w.html" wait="yes"-->xSECOND',
        'html/w.html': 'WAITED',
        'html/set.html': '<!--#include virtual="/w.html" set="got" -->[<!--#echo var="got" -->]',
    })
    assert srv.get('/i.html').body == b'xFIRSTxWAITEDxSECONDx'
    assert srv.get('/set.html').body == b'[WAITED]'


def test_stub_block_on_failure(server):
    srv = server(conf('location / { ssi on; }'), files={
        'html/b.html': '<!--#block name="one" -->STUB<!--#endblock -->'
                       'x<!--#include virtual="/missing" stub="one" -->x'
                       '<!--#include virtual="/ok.html" stub="one" -->x',
        'html/ok.html': 'OK',
    })
    assert srv.get('/b.html?a=1').body == b'xSTUBxOKx'


def test_if_elif_else(server):
    page = ('x<!--#if expr="$arg_if" -->IF<!--#elif expr="$arg_elif" -->ELIF'
            '<!--#else -->ELSE<!--#endif -->x')
    srv = server(conf('location / { ssi on; }'), files={
        'html/if.html': page,
        'html/eq.html': 'x<!--#if expr="$arg_v = equal" -->OK<!--#endif -->x',
        'html/ne.html': 'x<!--#if expr="equal != $arg_v" -->OK<!--#endif -->x',
        'html/re.html': 'x<!--#if expr="$arg_v = /(CAP\\d).*(CAP\\d)/" -->'
                        '<!--#echo var="1" -->-<!--#echo var="2" --><!--#endif -->x',
        'html/nre.html': 'x<!--#if expr="$arg_v != /re+gexp?/" -->OK<!--#endif -->x',
        'html/named.html': 'x<!--#if expr="$arg_v = /(?P<ncap>HERE)/" -->'
                           '<!--#echo var="ncap" --><!--#endif -->x',
        'html/cplx.html': 'x<!--#if expr="$arg_v = var$arg_v2" -->OK<!--#endif -->x',
    })
    assert srv.get('/if.html?if=1').body == b'xIFx'
    assert srv.get('/if.html?if=1&elif=1').body == b'xIFx'
    assert srv.get('/if.html?elif=1').body == b'xELIFx'
    assert srv.get('/if.html').body == b'xELSEx'
    assert srv.get('/eq.html?v=equal').body == b'xOKx'
    assert srv.get('/eq.html?v=other').body == b'xx'
    assert srv.get('/ne.html?v=other').body == b'xOKx'
    assert srv.get('/ne.html?v=equal').body == b'xx'
    assert srv.get('/re.html?v=aCAP1bCAP2').body == b'xCAP1-CAP2x'
    assert srv.get('/re.html?v=none').body == b'xx'
    assert srv.get('/nre.html?v=rgx').body == b'xOKx'
    assert srv.get('/nre.html?v=reeegex').body == b'xx'
    assert srv.get('/named.html?v=aHEREb').body == b'xHEREx'
    assert srv.get('/cplx.html?v=varHERE&v2=HERE').body == b'xOKx'


def test_errors_errmsg_and_silent(server):
    srv = server(conf('''
        location / { ssi on; }
        location /silent/ { ssi on; ssi_silent_errors on; }
    '''), files={
        'html/e.html': 'a<!--#unknowncmd -->b<!--#echo -->c',
        'html/c.html': '<!--#config errmsg="OOPS" -->a<!--#echo -->b',
        'html/silent/e.html': 'a<!--#unknowncmd -->b<!--#echo -->c',
    })
    assert srv.get('/e.html').body == b'a' + ERR + b'b' + ERR + b'c'
    assert srv.get('/c.html').body == b'aOOPSb'
    assert srv.get('/silent/e.html').body == b'abc'


def test_config_timefmt_and_date_vars(server):
    srv = server(conf('''
        location / { ssi on; }
        location /h/ { ssi on; add_header X-Var x${date_gmt}x; }
    '''), files={
        'html/t.html': '<!--#config timefmt="%Y|%%" --><!--#echo var="date_gmt" -->,'
                       '<!--#echo var="date_local" -->',
        'html/d.html': '<!--#echo var="date_gmt" -->',
        'html/h/x.html': 'X',
    })
    body = srv.get('/t.html').body
    assert re.fullmatch(rb'\d{4}\|%,\d{4}\|%', body), body
    body = srv.get('/d.html').body
    assert re.fullmatch(rb'\w+, \d\d-\w+-\d{4} \d\d:\d\d:\d\d \w+', body), body
    assert re.fullmatch(r'x\w+, \d\d-\w+-\d{4} \d\d:\d\d:\d\d \w+x', srv.get('/h/x.html').header('X-Var'))


def test_commands_split_across_buffers(server):
    """A proxied body arrives in pieces; a command split anywhere is still one command."""
    lsock = socket.socket()
    lsock.bind(('127.0.0.1', 0))
    lsock.listen(1)
    up = lsock.getsockname()[1]
    srv = server(conf('location / { ssi on; proxy_pass http://127.0.0.1:%d; proxy_buffering off; }' % up))
    import threading
    import time

    body = b'a<!--#set var="a" value="A" -->-<!--#echo var="a" -->-<!-- plain --><b>'

    def serve():
        c, _ = lsock.accept()
        c.recv(65536)
        c.sendall(b'HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n\r\n')
        for i in range(len(body)):
            c.sendall(body[i:i + 1])
            time.sleep(0.002)
        c.close()

    t = threading.Thread(target=serve)
    t.start()
    try:
        assert srv.get('/x').body == b'a-A-<!-- plain --><b>'
    finally:
        t.join(5)
        lsock.close()


def test_big_page_and_big_include(server):
    big = 'Y' * 300000
    srv = server(conf('location / { ssi on; }'), files={
        'html/big.html': 'A' * 200000 + '<!--#include virtual="/inc.html" -->' + 'B' * 200000,
        'html/inc.html': big,
    })
    r = srv.get('/big.html')
    assert r.body == b'A' * 200000 + big.encode() + b'B' * 200000


def test_off_by_default(server):
    srv = server(conf('location / { }'), files={'html/a.html': 'a<!--#echo var="uri" -->b'})
    r = srv.get('/a.html')
    assert r.body == b'a<!--#echo var="uri" -->b'
    assert r.header('Content-Length') == str(len(r.body))


def test_invalid_expressions(server):
    srv = server(conf('location / { ssi on; }'), files={
        # an "if" that cannot be read prints the errmsg and the text goes on as if there were none: the
        # "else" and "endif" that follow are errors too
        'html/neg.html': '<!--#if expr="!$arg_a" -->Y<!--#else -->N<!--#endif -->',
        'html/re.html': '<!--#if expr="$uri = /re.html" -->Y<!--#else -->N<!--#endif -->',
        'html/ok.html': '<!--#if expr="$uri=/ok/" -->Y<!--#else -->N<!--#endif -->',
    })
    assert srv.get('/neg.html').body == ERR + b'Y' + ERR + b'N' + ERR
    assert srv.get('/re.html').body == ERR + b'Y' + ERR + b'N' + ERR
    assert srv.get('/ok.html').body == b'Y'


def test_url_encoding_details(server):
    srv = server(conf('location / { ssi on; }'), files={
        'html/e.html': '<!--#set var="v" value="a b/c?d=e&f#g%h\'i" --><!--#echo var="v" encoding="url" -->',
    })
    assert srv.get('/e.html').body == b'a%20b/c?d=e&f%23g%25h%27i'


def test_include_file_is_relative(server):
    srv = server(conf('location / { ssi on; }'), files={
        'html/sub/p.html': '<!--#include file="inc.html" -->|<!--#include virtual="inc.html" -->'
                           '|<!--#include virtual="/inc.html" -->',
        'html/sub/inc.html': 'SUB',
        'html/inc.html': 'TOP',
    })
    assert srv.get('/sub/p.html').body == b'SUB|SUB|TOP'


def test_head_has_the_get_head(server):
    srv = server(conf('location / { ssi on; }'), files={'html/p.html': 'a<!--#include virtual="/p.html" -->'})
    r = srv.get('/p.html', method='HEAD')
    assert r.status == 200 and r.body == b''
    for h in ('Content-Length', 'Last-Modified', 'ETag', 'Accept-Ranges'):
        assert r.header(h) is None, h


def test_include_loop_is_cut(server):
    srv = server(conf('location / { ssi on; }'), files={'html/self.html': 'a<!--#include virtual="/self.html" -->b'})
    r = srv.get('/self.html')
    assert r.status == 200
    assert r.body == b'a' * 52 + ERR + b'b' * 52


def test_proxied_page_and_proxied_include(server):
    """A proxied page (headers of the upstream cleared) including a proxied part."""
    srv = server(conf('''
        location / { ssi on; }
        location /p/ { ssi on; proxy_pass http://127.0.0.1:{port}/local/; }
        location /local/ { ssi off; alias {html}/; }
    '''), files={
        'html/page.html': '[<!--#include virtual="/local/part.html" -->]<!--#echo var="arg_a" -->',
        'html/part.html': 'PART',
    })
    r = srv.get('/p/page.html?a=1')
    assert r.body == b'[PART]1'
    assert r.header('Last-Modified') is None and r.header('Accept-Ranges') is None


def test_over_http2(server, proto):
    srv = server(conf('location / { ssi on; }'), files={
        'html/a.html': 'x<!--#include virtual="/b.html" -->x<!--#include virtual="/c.html" wait="yes" -->x',
        'html/b.html': 'B' * 70000,
        'html/c.html': 'C',
    })
    r = srv.get('/a.html')
    assert r.status == 200 and r.body == b'x' + b'B' * 70000 + b'xCx'


def test_gzipped_include_is_inflated(server):
    """gunzip on: the gzip body of an included proxied part is inflated (the client would get gzip inside plain
    text otherwise), whatever the client accepts."""
    import gzip
    part = b''.join(b'X%03dXXXXXX' % i for i in range(100))
    srv = server(conf('''
        location / { gunzip on; proxy_pass http://127.0.0.1:{port}/back/; proxy_set_header Accept-Encoding gzip; }
        location /t.html { ssi on; }
        location /back/ { alias {html}/back/; default_type text/plain; gzip_static on; gzip_http_version 1.0; }
    '''), files={'html/t.html': 'xxx <!--#include virtual="/t1" --> xxx', 'html/back/t1.gz': gzip.compress(part)})
    for ae in (None, 'gzip'):
        r = srv.get('/t.html', headers={'Accept-Encoding': ae} if ae else None)
        assert r.header('Content-Encoding') is None
        assert r.body == b'xxx ' + part + b' xxx'



def test_include_set_takes_up_to_subrequest_output_buffer_size(server):
    srv = server(conf('''
        location / { ssi on; }
        location /small/ { alias {html}/; subrequest_output_buffer_size 42; }
    '''), files={
        'html/p.html': '<!--#include virtual="/$arg_c" set="x" -->set: <!--#echo var="x" -->',
        'html/long': 'x' * 1000,
        'html/empty': '',
    })
    assert srv.get('/p.html?c=long').body == b'set: ' + b'x' * 1000  # the default (4k) holds it
    assert srv.get('/p.html?c=empty').body == b'set: '
    # over 42 bytes: nginx fails the request (closes the connection), hayate prints the errmsg instead
    try:
        body = srv.get('/p.html?c=small/long').body
    except ProtocolError:
        body = b''
    assert b'x' * 100 not in body


def test_included_part_has_the_request_id_of_the_page(server):
    srv = server(conf('''
        add_header X-Request-Id $request_id;
        location / { ssi on; }
        location /body { return 200 $request_id; }
    '''), files={'html/add.html': '<!--#include virtual="/body" -->'})
    r = srv.get('/add.html')
    assert re.fullmatch(r'[0-9a-f]{32}', r.header('X-Request-Id'))
    assert r.body.decode() == r.header('X-Request-Id')


def test_client_gone_while_an_include_runs(server):
    """The client closes while an included part is still coming from a slow upstream: the page's subrequests
    go with it, and the server goes on serving."""
    import threading
    lsock = socket.socket()
    lsock.bind(('127.0.0.1', 0))
    lsock.listen(4)
    up = lsock.getsockname()[1]
    srv = server(conf('''
        location / { ssi on; }
        location /slow { proxy_pass http://127.0.0.1:%d; }
    ''' % up), files={'html/p.html': 'A<!--#include virtual="/slow" -->B<!--#include virtual="/q.html" -->C',
                      'html/q.html': 'Q'})
    accepted = threading.Event()
    release = threading.Event()
    conns = []

    def serve():
        c, _ = lsock.accept()
        conns.append(c)
        c.recv(65536)
        accepted.set()
        release.wait(10)
        try:
            c.sendall(b'HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nSLOW')
        except OSError:
            pass
        c.close()

    t = threading.Thread(target=serve)
    t.start()
    try:
        s = socket.create_connection(('127.0.0.1', srv.prefix.port))
        s.sendall(b'GET /p.html HTTP/1.1\r\nHost: localhost\r\n\r\n')
        assert accepted.wait(5)
        s.close()
        release.set()
        t.join(5)
        assert srv.get('/q.html').body == b'Q'
    finally:
        release.set()
        lsock.close()


def test_big_page_in_batches(server):
    """A big page is scanned batch by batch: a long part that outputs nothing (a false "if"), includes spread
    over it, and text after them all come out whole and in order."""
    hidden = 'h' * 300000
    parts = ''.join('<!--#include virtual="/n.html?i=%d" -->%s' % (i, 'z' * 70000) for i in range(5))
    srv = server(conf('location / { ssi on; }'), files={
        'html/p.html': 'S<!--#if expr="$arg_no" -->' + hidden + '<!--#endif -->' + parts + 'E',
        'html/n.html': '[<!--#echo var="arg_i" -->]',
    })
    want = 'S' + ''.join('[%d]%s' % (i, 'z' * 70000) for i in range(5)) + 'E'
    r = srv.get('/p.html')
    assert r.body == want.encode()


def test_page_and_included_part_recoded_once(server):
    """charset recodes the processed page, included parts and all, once (SSI runs before charset)."""
    import os
    from conftest import REPO
    with open(os.path.join(REPO, 'conf', 'koi-utf'), 'rb') as f:
        koi = f.read()
    srv = server(conf('location / { ssi on; charset utf-8; source_charset koi8-r; }',
                      http_extra='include koi-utf;'),
                 files={'conf/koi-utf': koi, 'html/p.html': b'\xc1<!--#include virtual="/i.html" -->\xc2',
                        'html/i.html': b'\xc3'})
    r = srv.get('/p.html')
    assert r.header('Content-Type') == 'text/html; charset=utf-8'
    assert r.body == 'ацб'.encode()


def test_ssi_in_if(server):
    srv = server(conf('location / { if ($arg_s) { ssi on; } }'), files={'html/p.html': 'x<!--#echo var="uri" -->x'})
    assert srv.get('/p.html').body == b'x<!--#echo var="uri" -->x'
    assert srv.get('/p.html?s=1').body == b'x/p.htmlx'
