"""The built-in error pages `return CODE` answers with (nginx's ngx_http_special_response_handler): a text/html
page titled "CODE REASON" with the status line's reason, keep-alive dropped after 400, 413, 414, 500 and 501, no body
for HEAD, and 495..497 answered as "400" on a closed connection."""
import pytest

# `return 408` and `return 499` close without answering (test_return_closing_codes.py); nginx keeps the
# connection after `return 505` where hayate closes (hayate answers 505 itself only for requests it could not
# read): left out here
CODES = [400, 401, 402, 403, 404, 405, 406, 409, 410, 411, 412, 413, 414, 415, 416, 421, 429,
         500, 501, 502, 503, 504, 507]
CLOSES = {400, 413, 414, 500, 501}


def conf():
    locs = '\n'.join('        location = /s/%d { return %d; }' % (c, c) for c in CODES + [495, 496, 497])
    return 'http {\n    server {\n        listen 127.0.0.1:{port};\n%s\n    }\n}\n' % locs


@pytest.fixture(scope='function')
def srv(server):
    return server(conf())


def test_keepalive_after_each_code(srv):
    got = {}
    for code in CODES:
        r = srv.get('/s/%d' % code, headers={'Connection': 'keep-alive'})
        assert r.status == code
        assert r.header('Content-Type') == 'text/html', code
        got[code] = (r.header('Connection') or '').lower()
    assert got == {c: 'close' if c in CLOSES else 'keep-alive' for c in CODES}


@pytest.mark.hayate_only  # nginx's titles are its own page texts ("401 Authorization Required")
def test_page_titles_are_the_status_line(srv):
    for code in CODES:
        r = srv.get('/s/%d' % code)
        assert ('<title>%d %s</title>' % (code, r.reason)).encode() in r.body, (code, r.reason, r.body)


def test_head_has_no_body(srv):
    for code in (404, 503):
        r = srv.head('/s/%d' % code)
        assert r.status == code and r.body == b''
        assert int(r.header('Content-Length')) > 0


@pytest.mark.parametrize('code', [495, 496, 497])
def test_nginx_own_codes_answer_400(srv, code):
    r = srv.get('/s/%d' % code, headers={'Connection': 'keep-alive'})
    assert r.status == 400
    assert (r.header('Connection') or '').lower() == 'close'
    assert b'<title>400 ' in r.body
