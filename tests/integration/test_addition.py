"""addition (ngx_http_addition_module), from nginx's documentation: `add_before_body URI` and `add_after_body URI`
add the response body of a subrequest for URI before / after the response body, for the MIME types of
`addition_types` (text/html by default; "*" any). Every test here passes against Debian's nginx too."""
import socket
import threading

from conftest import simple


def conf(body, http_extra=''):
    return simple('root {html};\n' + body, http_extra=http_extra)


def test_before_and_after(server):
    srv = server(conf('''
        location / { add_before_body /before.html; add_after_body /after.html; }
        location /only_after/ { add_after_body /after.html; }
    '''), files={
        'html/page.html': 'PAGE',
        'html/before.html': 'BEFORE',
        'html/after.html': 'AFTER',
        'html/only_after/p.html': 'PAGE',
    })
    r = srv.get('/page.html')
    assert r.status == 200 and r.body == b'BEFOREPAGEAFTER'
    assert r.header('Content-Length') is None
    assert srv.get('/only_after/p.html').body == b'PAGEAFTER'


def test_empty_uri_switches_off_an_inherited_one(server):
    srv = server(conf('''
        add_before_body /before.html;
        location / { }
        location /none/ { add_before_body ""; }
    '''), files={'html/p.html': 'PAGE', 'html/none/p.html': 'PAGE', 'html/before.html': 'BEFORE'})
    assert srv.get('/p.html').body == b'BEFOREPAGE'
    assert srv.get('/none/p.html').body == b'PAGE'


def test_types(server):
    srv = server(conf('''
        location / { add_after_body /after.html; }
        location /t/ { add_after_body /after.html; addition_types text/plain; }
        location /any/ { add_after_body /after.html; addition_types *; }
    '''), files={
        'html/p.txt': 'TXT',
        'html/t/p.txt': 'TXT',
        'html/any/p.css': 'CSS',
        'html/after.html': 'AFTER',
    })
    assert srv.get('/p.txt').body == b'TXT'
    assert srv.get('/t/p.txt').body == b'TXTAFTER'
    assert srv.get('/any/p.css').body == b'CSSAFTER'


def test_only_200_responses(server):
    srv = server(conf('''
        location / { add_before_body /before.html; add_after_body /after.html; }
        location /e/ { return 403 "DENIED"; add_after_body /after.html; default_type text/html; }
    '''), files={'html/before.html': 'BEFORE', 'html/after.html': 'AFTER'})
    r = srv.get('/e/x')
    assert r.status == 403 and r.body == b'DENIED'


def test_additions_with_args_and_ssi_page(server):
    srv = server(conf('''
        location / { ssi on; add_before_body /b.html; add_after_body /a.html; }
    '''), files={
        'html/p.html': '[<!--#echo var="arg_x" -->]',
        'html/b.html': 'B<!--#echo var="arg_x" -->',
        'html/a.html': 'A',
    })
    # the page is processed; the subrequests get no arguments
    assert srv.get('/p.html?x=1').body == b'B(none)[1]A'


def test_streamed_body_from_upstream(server):
    lsock = socket.socket()
    lsock.bind(('127.0.0.1', 0))
    lsock.listen(1)
    up = lsock.getsockname()[1]
    srv = server(conf('''
        location /up/ { proxy_pass http://127.0.0.1:%d; proxy_buffering off;
                        add_before_body /before.html; add_after_body /after.html; }
    ''' % up), files={'html/before.html': 'BEFORE', 'html/after.html': 'AFTER'})

    def serve():
        c, _ = lsock.accept()
        c.recv(65536)
        c.sendall(b'HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n')
        for part in (b'one', b'two', b'three'):
            c.sendall(b'%x\r\n%s\r\n' % (len(part), part))
        c.sendall(b'0\r\n\r\n')
        c.close()

    t = threading.Thread(target=serve)
    t.start()
    try:
        r = srv.get('/up/x')
        assert r.status == 200 and r.body == b'BEFOREonetwothreeAFTER'
    finally:
        t.join(5)
        lsock.close()


def test_big_body_and_big_addition(server):
    srv = server(conf('location / { add_before_body /b.html; add_after_body /a.html; }'), files={
        'html/p.html': 'P' * 500000,
        'html/b.html': 'B' * 300000,
        'html/a.html': 'A' * 300000,
    })
    r = srv.get('/p.html')
    assert r.body == b'B' * 300000 + b'P' * 500000 + b'A' * 300000
