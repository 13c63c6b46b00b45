"""Conditional requests on static files: If-None-Match, If-Modified-Since, If-Match, If-Unmodified-Since."""
import email.utils
import os

import pytest

from conftest import simple

MTIME = 1600000000
ETAG = '"5f5e1000-c"'      # mtime 1600000000, size 12
LM = email.utils.formatdate(MTIME, usegmt=True)
EARLIER = email.utils.formatdate(MTIME - 3600, usegmt=True)
LATER = email.utils.formatdate(MTIME + 3600, usegmt=True)


def make(server, extra=''):
    s = server(simple('root {html};' + extra), files={'html/f.txt': 'hello world\n'})
    os.utime(os.path.join(s.html, 'f.txt'), (MTIME, MTIME))
    return s


@pytest.fixture
def srv(server):
    return make(server)


def test_baseline(srv):
    r = srv.get('/f.txt')
    assert r.header('ETag') == ETAG and r.header('Last-Modified') == LM


@pytest.mark.parametrize('inm', [ETAG, '*', 'W/' + ETAG, '"nope", ' + ETAG, '"a","b",' + ETAG])
def test_if_none_match_304(srv, inm):
    r = srv.get('/f.txt', headers={'If-None-Match': inm})
    assert r.status == 304
    assert r.reason == 'Not Modified'
    assert r.body == b''
    assert r.header('ETag') == ETAG
    assert r.header('Last-Modified') == LM
    assert r.header('Content-Length') is None


@pytest.mark.parametrize('inm', ['"nope"', '"5f5e1000-d"', ETAG.strip('"')])
def test_if_none_match_mismatch_200(srv, inm):
    r = srv.get('/f.txt', headers={'If-None-Match': inm})
    assert r.status == 200 and r.body == b'hello world\n'


def test_304_keeps_connection(srv):
    c = srv.conn()
    c.send(b'GET /f.txt HTTP/1.1\r\nHost: a\r\nIf-None-Match: %s\r\n\r\n' % ETAG.encode() +
           b'GET /f.txt HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n')
    assert c.read_response().status == 304
    r = c.read_response()
    assert r.status == 200 and r.body == b'hello world\n'


def test_if_modified_since_equal_304(srv):
    assert srv.get('/f.txt', headers={'If-Modified-Since': LM}).status == 304


def test_if_modified_since_earlier_200(srv):
    assert srv.get('/f.txt', headers={'If-Modified-Since': EARLIER}).status == 200


def test_if_modified_since_later_exact_200(srv):
    # default "if_modified_since exact": only an exact match is not modified
    assert srv.get('/f.txt', headers={'If-Modified-Since': LATER}).status == 200


def test_if_modified_since_before(server, proto):
    s = make(server, '\n        if_modified_since before;')
    assert s.get('/f.txt', headers={'If-Modified-Since': LATER}).status == 304
    assert s.get('/f.txt', headers={'If-Modified-Since': LM}).status == 304
    assert s.get('/f.txt', headers={'If-Modified-Since': EARLIER}).status == 200


def test_if_modified_since_off(server, proto):
    s = make(server, '\n        if_modified_since off;')
    assert s.get('/f.txt', headers={'If-Modified-Since': LM}).status == 200


def test_if_modified_since_garbage_ignored(srv):
    assert srv.get('/f.txt', headers={'If-Modified-Since': 'yesterday'}).status == 200


def test_if_modified_since_other_date_formats(srv):
    # RFC 850 and asctime forms of the same instant
    rfc850 = 'Sunday, 13-Sep-20 12:26:40 GMT'
    asctime = 'Sun Sep 13 12:26:40 2020'
    assert srv.get('/f.txt', headers={'If-Modified-Since': rfc850}).status == 304
    assert srv.get('/f.txt', headers={'If-Modified-Since': asctime}).status == 304


def test_head_304(srv):
    r = srv.head('/f.txt', headers={'If-None-Match': ETAG})
    assert r.status == 304


def test_etag_off_if_none_match(server, proto):
    s = make(server, '\n        etag off;')
    assert s.get('/f.txt', headers={'If-None-Match': ETAG}).status == 200
    assert s.get('/f.txt', headers={'If-Modified-Since': LM}).status == 304


@pytest.mark.parametrize('im', ['"nope"', 'W/' + ETAG, '"5f5e1000-d"'])
def test_if_match_412(srv, im):
    r = srv.get('/f.txt', headers={'If-Match': im})
    assert r.status == 412
    assert r.reason == 'Precondition Failed'


@pytest.mark.parametrize('im', [ETAG, '*', '"x", ' + ETAG])
def test_if_match_ok(srv, im):
    r = srv.get('/f.txt', headers={'If-Match': im})
    assert r.status == 200 and r.body == b'hello world\n'


def test_if_unmodified_since_older_412(srv):
    assert srv.get('/f.txt', headers={'If-Unmodified-Since': EARLIER}).status == 412


@pytest.mark.parametrize('ius', [LM, LATER])
def test_if_unmodified_since_ok(srv, ius):
    assert srv.get('/f.txt', headers={'If-Unmodified-Since': ius}).status == 200


def test_file_change_changes_etag(srv):
    p = os.path.join(srv.html, 'f.txt')
    with open(p, 'w') as f:
        f.write('changed content!\n')
    os.utime(p, (MTIME + 10, MTIME + 10))
    r = srv.get('/f.txt', headers={'If-None-Match': ETAG})
    assert r.status == 200
    assert r.header('ETag') == '"%x-%x"' % (MTIME + 10, 17)
    assert r.body == b'changed content!\n'
