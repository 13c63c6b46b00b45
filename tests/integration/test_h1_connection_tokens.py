"""The client's Connection field: nginx reads "close" (then "keep-alive") anywhere in its value, so a list such
as "te, close" closes the connection after the response."""
from conftest import simple


def test_close_in_a_token_list_closes(server):
    srv = server(simple('location / { return 200 "ok"; }'))
    c = srv.conn()
    c.send(b'GET / HTTP/1.1\r\nHost: localhost\r\nConnection: te, close\r\nTE: trailers\r\n\r\n')
    r = c.read_response()
    assert r.status == 200 and r.header('Connection') == 'close'
    assert not c._fill() and c.eof  # closed after the response


def test_keep_alive_in_a_token_list_keeps_http10_open(server):
    srv = server(simple('location / { return 200 "ok"; }'))
    c = srv.conn()
    c.send(b'GET / HTTP/1.0\r\nHost: localhost\r\nConnection: foo, Keep-Alive\r\n\r\n')
    r = c.read_response()
    assert r.status == 200 and r.header('Connection', '').lower() == 'keep-alive'
