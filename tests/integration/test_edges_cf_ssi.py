"""SSI edges beyond test_ssi.py / test_edges_ssi.py: regex captures and over-long names in echo, "\\$" in values,
values that grow past the first buffer, != and malformed regexes in if, elif chains, include paths relative to the
page, %XX and ".." in them, set= with a file-backed part, a page that is not identity-encoded, an unterminated block,
and ssi_types "*". Every expectation is nginx's (ngx_http_ssi_module); the tests run against Debian's nginx too."""
import pytest

from conftest import simple

ERR = b'[an error occurred while processing the directive]'
BIG = 'x' * 3000 + 'END'
NOTFOUND = object()  # the part is the 404 page: the path was taken as it is


def serve(server, page, files=None, extra='', loc=''):
    fs = {'html/dir/page.html': page, 'html/dir/part.html': 'P', 'html/part.html': 'ROOTP',
          'html/big.txt': BIG}
    fs.update(files or {})
    return server(simple('''
        root {html};
        location / { ssi on; %s }
        %s''' % (loc, extra)), files=fs)


@pytest.mark.parametrize('page,uri,want', [
    # a regex capture by number; one the location's regex has not
    ('<!--# if expr="$uri = /^\\/dir\\/(\\w+)/" --><!--# set var="v" value="[$1|$7]" --><!--# endif -->'
     '<!--# echo var="v" -->', '/dir/page.html', b'[page|]'),
    ('<!--# set var="v" value="[$1]" --><!--# echo var="v" -->', '/dir/page.html', b'[]'),
    # a name longer than any variable's
    ('<!--# echo var="%s" default="d" -->' % ('n' * 200), '/dir/page.html', b'd'),
    # "\$" is a dollar; values longer than a first buffer
    ('<!--# set var="a" value="\\$x" --><!--# echo var="a" -->', '/dir/page.html', b'$x'),
    ('<!--# set var="b" value="%s" --><!--# set var="c" value="$b$b$b" --><!--# echo var="c" -->' % ('y' * 150),
     '/dir/page.html', b'y' * 450),
    ('<!--# set var="b" value="1" --><!--# set var="c" value="${b}2${b}" --><!--# echo var="c" -->',
     '/dir/page.html', b'121'),
    # if: != and regexes
    ('<!--# set var="x" value="a" --><!--# if expr="$x != b" -->Y<!--# else -->N<!--# endif -->',
     '/dir/page.html', b'Y'),
    ('<!--# set var="x" value="b" --><!--# if expr="$x != b" -->Y<!--# else -->N<!--# endif -->',
     '/dir/page.html', b'N'),
    ('<!--# set var="x" value="abc" --><!--# if expr="$x = /b/" -->Y<!--# else -->N<!--# endif -->',
     '/dir/page.html', b'Y'),
    ('<!--# set var="x" value="abc" --><!--# if expr="$x != /^b/" -->Y<!--# else -->N<!--# endif -->',
     '/dir/page.html', b'Y'),
    ('<!--# set var="x" value="" --><!--# if expr="$x = " -->E<!--# else -->N<!--# endif -->',
     '/dir/page.html', b'E'),
    ('<!--# if expr="" -->A<!--# elif expr="" -->B<!--# elif expr="1" -->C<!--# else -->D<!--# endif -->',
     '/dir/page.html', b'C'),
    ('<!--# if expr="1" -->A<!--# elif expr="1" -->B<!--# else -->D<!--# endif -->', '/dir/page.html', b'A'),
    # include paths: relative to the page's directory, %XX decoded, ".." refused
    ('[<!--# include virtual="part.html" -->]', '/dir/page.html', b'[P]'),
    ('[<!--# include virtual="%70art.html" -->]', '/dir/page.html', b'[P]'),
    ('[<!--# include virtual="/dir/../part.html" -->]', '/dir/page.html', b'[' + ERR + b']'),
    ('[<!--# include virtual="../part.html" -->]', '/dir/page.html', b'[' + ERR + b']'),
    ('[<!--# include virtual="/dir/..x/../part.html" -->]', '/dir/page.html', b'[' + ERR + b']'),
    ('[<!--# include virtual="/dir/..x" -->]', '/dir/page.html', NOTFOUND),
    ('[<!--# include virtual="part.html?a=1" -->]', '/dir/page.html', b'[P]'),
    # set= with a part served from a file
    ('<!--# include virtual="/big.txt" set="v" -->[<!--# echo var="v" -->]', '/dir/page.html',
     b'[' + BIG.encode() + b']'),
    # an unterminated block is dropped, the rest of the page goes on
    ('A<!--# block name="one" -->stub', '/dir/page.html', b'A'),
])
def test_ssi_page(server, page, uri, want):
    srv = serve(server, page)
    r = srv.get(uri)
    assert r.status == 200, r
    if want is NOTFOUND:
        assert r.body.startswith(b'[<html>') and b'404 Not Found' in r.body and ERR not in r.body
    else:
        assert r.body == want


@pytest.mark.hayate_only  # nginx ends the whole response (the connection closes); see docs/DIFFERENCES.md
def test_include_set_too_big_for_the_output_buffer(server):
    srv = serve(server, '<!--# include virtual="/big.txt" set="v" -->[<!--# echo var="v" default="no" -->]',
                loc='subrequest_output_buffer_size 1k;')
    r = srv.get('/dir/page.html')
    assert r.status == 200
    assert ERR in r.body
    assert 'too big subrequest response' in srv.error_log()


@pytest.mark.hayate_only
def test_include_set_too_big_silently(server):
    srv = serve(server, '<!--# include virtual="/big.txt" set="v" -->[<!--# echo var="v" default="no" -->]',
                loc='subrequest_output_buffer_size 1k; ssi_silent_errors on;')
    r = srv.get('/dir/page.html')
    assert r.status == 200
    assert ERR not in r.body and r.body.endswith(b'[no]')


@pytest.mark.hayate_only  # nginx's SSI parses an encoded body too; see docs/DIFFERENCES.md
@pytest.mark.parametrize('ce,processed', [('identity', True), ('br', False), ('gzip', False)])
def test_encoded_page_is_left_alone(server, ce, processed):
    srv = server(simple('''
        location / { ssi on; ssi_types *; proxy_pass http://127.0.0.1:{port2}; }''', http_extra='''
    server {
        listen 127.0.0.1:{port2};
        location / { add_header Content-Encoding %s; default_type text/plain;
                     return 200 '<!--# echo var="ssi_x" default="done" -->'; }
    }''' % ce))
    r = srv.get('/p')
    assert r.status == 200
    assert r.body == (b'done' if processed else b'<!--# echo var="ssi_x" default="done" -->')


def test_ssi_types_star_and_listed(server):
    srv = server(simple('''
        root {html};
        location /any { ssi on; ssi_types *; }
        location /some { ssi on; ssi_types text/plain application/x-foo; }
        location /none { ssi on; }'''), files={
        'html/any/a.bin': '<!--# echo var="q" default="D" -->',
        'html/some/a.txt': '<!--# echo var="q" default="D" -->',
        'html/none/a.txt': '<!--# echo var="q" default="D" -->'})
    assert srv.get('/any/a.bin').body == b'D'
    assert srv.get('/some/a.txt').body == b'D'
    assert srv.get('/none/a.txt').body == b'<!--# echo var="q" default="D" -->'


@pytest.mark.parametrize('page,want', [
    # several blocks: the stub named is looked up among them; an unknown one is an error
    ('<!--# block name="one" -->1<!--# endblock --><!--# block name="two" -->2<!--# endblock -->'
     '[<!--# include virtual="/nonexistent" stub="one" -->|<!--# include virtual="/nonexistent" stub="two" -->]',
     b'[1|2]'),
    ('<!--# block name="one" -->1<!--# endblock -->[<!--# include virtual="/part.html" stub="three" -->]',
     b'[' + ERR + b']'),
    # a bad variable reference in an expression: an error, the body shown, and the endif without its if another error (nginx)
    ('[<!--# if expr="${x" -->Y<!--# endif -->]', b'[' + ERR + b'Y' + ERR + b']'),
])
def test_blocks_and_bad_expressions(server, page, want):
    srv = serve(server, page)
    r = srv.get('/dir/page.html')
    assert r.status == 200 and r.body == want


def test_include_cycle_ends_with_an_error(server):
    srv = serve(server, 'x<!--# include virtual="/dir/page.html" -->')
    srv.ignore_log = r'subrequests cycle'
    r = srv.get('/dir/page.html')
    assert r.status == 200
    assert r.body.startswith(b'xxxxxxxxxx') and ERR in r.body
    assert b'x' * 60 not in r.body  # nginx stops at 50 levels of subrequests
