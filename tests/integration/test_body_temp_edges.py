"""Request bodies kept in temp files when the temp path is unusable: a path that is a regular file, a directory
that cannot be made (under /proc). The request fails with 500 and the open() failure is logged at crit, as nginx
does when it cannot create the temp file; the server goes on."""
import pytest

from conftest import simple
from helpers.backend import Backend

pytestmark = pytest.mark.hayate_only  # nginx creates (or refuses) client_body_temp_path at startup


@pytest.fixture
def be():
    b = Backend().start()
    yield b
    b.stop()


@pytest.mark.parametrize('path,errtext', [('{tmp}/afile', '(20: Not a directory)'),
                                          ('/proc/hy-no-such-dir', '(2: No such file or directory)')])
def test_unusable_temp_path_is_500(server, be, path, errtext):
    srv = server(simple('location / { client_body_buffer_size 1k; client_body_temp_path %s; '
                        'proxy_pass http://127.0.0.1:%d; }' % (path, be.port)), files={'afile': 'x'})
    srv.ignore_log = r'\[crit\].*open\(\)'
    r = srv.get('/up', method='POST', body=b'z' * 5000)
    assert r.status == 500
    crit = [l for l in srv.error_log().splitlines() if '[crit]' in l and 'open()' in l]
    assert crit and errtext in crit[0], srv.error_log()
    assert be.requests == []
    assert srv.get('/small', method='POST', body=b'tiny').status == 200  # in memory: fine
