"""HTTP/1.x connection edges (issue 18's coverage): the Keep-Alive header of keepalive_timeout's second value, a
chunked request body the handler does not read (dropped, the connection kept; or, malformed or too large, the
connection closed), "100 Continue" before a final response to a body nobody reads, HTTP/1.0 keep-alive on
request, trailers in the last chunk (add_trailer), a header section that does not fit large_client_header_buffers,
a client that closes in the middle of its request head, lingering_close always."""
import socket
import time

import pytest

from conftest import simple
from helpers.process import wait_log


def srv_return(server, extra_loc='', http_extra='', server_extra=''):
    return server(simple('%s location / { %s return 200 "ok\\n"; }' % (server_extra, extra_loc), http_extra))


def test_keepalive_header_timeout(server):
    srv = srv_return(server, http_extra='keepalive_timeout 30s 17s;')
    c = srv.conn()
    r = c.request(b'GET / HTTP/1.1\r\nHost: x\r\n\r\n')
    assert r.status == 200
    assert r.header('Connection') == 'keep-alive'
    assert r.header('Keep-Alive') == 'timeout=17'
    c.close()


def test_chunked_body_not_read_is_dropped_and_connection_kept(server):
    srv = srv_return(server)
    c = srv.conn()
    c.send(b'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n')
    r = c.read_response()
    assert r.status == 200 and r.body == b'ok\n'
    # the body comes after the response: dropped, then the next request is answered
    c.send(b'5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nX-T: 1\r\n\r\n')
    c.send(b'GET /next HTTP/1.1\r\nHost: x\r\n\r\n')
    r = c.read_response()
    assert r.status == 200 and r.body == b'ok\n'
    c.close()


def test_chunked_body_in_pieces_before_next_request(server):
    srv = srv_return(server)
    c = srv.conn()
    c.send(b'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n')
    r = c.read_response()
    assert r.status == 200
    c.send(b'4\r\ndefg\r\n')
    assert c.still_open(0.3)
    c.send(b'0\r\n\r\nGET /n HTTP/1.1\r\nHost: x\r\n\r\n')
    r = c.read_response()
    assert r.status == 200 and r.body == b'ok\n'
    c.close()


def test_malformed_chunked_body_after_response_closes(server):
    srv = srv_return(server)
    c = srv.conn()
    c.send(b'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n')
    r = c.read_response()
    assert r.status == 200
    c.send_lenient(b'zz\r\nnot a chunk\r\n0\r\n\r\nGET /n HTTP/1.1\r\nHost: x\r\n\r\n')
    assert c.is_closed()
    assert b'HTTP/1.1' not in c.buf  # the request after the bad body is not answered
    c.close()


def test_malformed_chunked_body_with_the_head_is_400(server):
    srv = srv_return(server)
    c = srv.conn()
    r = c.request(b'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n')
    assert r.status == 400
    assert r.header('Connection') == 'close'
    c.close()


@pytest.mark.hayate_only  # nginx does not count a discarded body against client_max_body_size
def test_chunked_body_not_read_above_max_size_closes(server):
    srv = srv_return(server, http_extra='client_max_body_size 10;')
    c = srv.conn()
    c.send(b'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n')
    r = c.read_response()
    assert r.status == 200
    c.send_lenient(b'20\r\n' + b'a' * 32 + b'\r\n0\r\n\r\nGET /n HTTP/1.1\r\nHost: x\r\n\r\n')
    assert c.is_closed()
    assert b'HTTP/1.1' not in c.buf
    c.close()


def test_content_length_body_not_read_arrives_late(server):
    srv = srv_return(server)
    c = srv.conn()
    c.send(b'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n12345')
    r = c.read_response()
    assert r.status == 200
    c.send(b'67890GET /n HTTP/1.1\r\nHost: x\r\n\r\n')
    r = c.read_response()
    assert r.status == 200 and r.body == b'ok\n'
    c.close()


def test_expect_continue_before_a_response_that_does_not_read_the_body(server):
    srv = srv_return(server)
    c = srv.conn()
    c.send(b'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n')
    r = c.read_response(allow_interim=True)
    assert r.status == 100
    r = c.read_response()
    assert r.status == 200 and r.header('Connection') == 'keep-alive'
    c.send(b'abcdGET /n HTTP/1.1\r\nHost: x\r\n\r\n')
    r = c.read_response()
    assert r.status == 200
    c.close()


def test_http10_keepalive_on_request(server):
    srv = srv_return(server)
    c = srv.conn()
    r = c.request(b'GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n')
    assert r.status == 200 and r.header('Connection', '').lower() == 'keep-alive'
    r = c.request(b'GET / HTTP/1.0\r\n\r\n')
    assert r.status == 200 and r.header('Connection', '').lower() == 'close'
    assert c.is_closed()
    c.close()


def test_http11_connection_close_and_keepalive_tokens(server):
    srv = srv_return(server)
    c = srv.conn()
    r = c.request(b'GET / HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n')
    assert r.status == 200 and r.header('Connection') == 'keep-alive'
    r = c.request(b'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
    assert r.status == 200 and r.header('Connection') == 'close'
    assert c.is_closed()
    c.close()


def test_trailers_in_the_last_chunk(server):
    srv = server(simple('location / { add_trailer X-Sum "abc" always; add_trailer X-Two "2"; '
                        'return 200 "body\\n"; }'))
    c = srv.conn()
    # a return with text has a length: add_trailer makes the response chunked (its Content-Length dropped)
    c.send(b'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
    while c._fill():
        pass
    raw = c.buf
    head, _, body = raw.partition(b'\r\n\r\n')
    assert b'Transfer-Encoding: chunked' in head
    assert b'Content-Length' not in head
    assert body == b'5\r\nbody\n\r\n0\r\nX-Sum: abc\r\nX-Two: 2\r\n\r\n'
    c.close()


def test_header_section_larger_than_buffers_is_400(server):
    srv = srv_return(server, http_extra='large_client_header_buffers 2 1k;')
    c = srv.conn()
    c.send_lenient(b'GET / HTTP/1.1\r\nHost: x\r\n' + b''.join(b'X-%d: %s\r\n' % (i, b'v' * 200)
                                                              for i in range(20)) + b'\r\n')
    r = c.read_response()
    assert r.status == 400
    c.close()


def test_request_line_longer_than_buffers_is_414(server):
    srv = srv_return(server, http_extra='large_client_header_buffers 2 1k;')
    c = srv.conn()
    c.send_lenient(b'GET /' + b'a' * 3000)
    r = c.read_response()
    assert r.status == 414
    c.close()


def test_client_closes_in_the_middle_of_the_head(server):
    srv = srv_return(server)
    s = socket.create_connection(('127.0.0.1', srv.port), timeout=5)
    s.sendall(b'GET / HTTP/1.1\r\nHost: x\r\nX-Half: ')
    s.shutdown(socket.SHUT_WR)
    assert s.recv(100) == b''
    s.close()
    assert wait_log(srv, r'client prematurely closed connection while reading client request headers')


def test_client_closes_in_the_middle_of_the_body(server):
    srv = server(simple('location / { proxy_pass http://127.0.0.1:{port2}; }',
                        "log_format st '$request $status'; access_log {tmp}/logs/st.log st;"))
    s = socket.create_connection(('127.0.0.1', srv.port), timeout=5)
    s.sendall(b'POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\npart')
    s.shutdown(socket.SHUT_WR)
    data = b''
    while True:
        d = s.recv(4096)
        if not d:
            break
        data += d
    s.close()
    assert wait_log(srv, r'client prematurely closed connection, client: 127.0.0.1, server: , '
                         r'request: "POST /b HTTP/1.1", host: "x"'), srv.error_log()
    srv.stop()
    assert 'POST /b HTTP/1.1 400' in open(srv.tmp + '/logs/st.log').read()


def test_idle_keepalive_connection_that_sends_half_a_request_times_out(server):
    srv = srv_return(server, http_extra='client_header_timeout 1s; keepalive_timeout 60s;')
    c = srv.conn()
    r = c.request(b'GET / HTTP/1.1\r\nHost: x\r\n\r\n')
    assert r.status == 200
    c.send(b'GET / HTTP/1.1\r\nHo')
    assert c.is_closed(timeout=10)  # client_header_timeout, not keepalive_timeout, once bytes came
    assert wait_log(srv, r'client timed out \(110: Connection timed out\) while reading client request headers')
    c.close()


def test_lingering_close_always(server):
    srv = srv_return(server, http_extra='lingering_close always; lingering_timeout 1s;')
    c = srv.conn()
    r = c.request(b'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
    assert r.status == 200
    # the server has shut its side and reads on: bytes sent now do not reset the connection, the close follows
    c.send_lenient(b'more bytes')
    assert c.is_closed(timeout=10)
    c.close()


def test_lingering_close_off_after_a_400(server):
    srv = srv_return(server, http_extra='lingering_close off;')
    c = srv.conn()
    r = c.request(b'GET / HTTP/1.1\r\n\r\n')  # no Host
    assert r.status == 400
    assert c.is_closed()
    c.close()
