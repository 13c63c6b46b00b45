"""error_log in http, server and location (nginx's core module docs: the directive is valid there, and a
request's messages go to the logs of the context that handles it, at their levels; a level without its own
error_log inherits the one above; the main error_log keeps the messages of no request)."""
import os

from conftest import simple
from helpers.process import wait_until


def read(srv, rel):
    try:
        with open(os.path.join(srv.tmp, rel), errors='replace') as f:
            return f.read()
    except FileNotFoundError:
        return ''


def lines(text, needle):
    return sum(needle in line for line in text.splitlines())


CONF = '''
http {
    error_log {tmp}/logs/http.log;
    server {
        listen 127.0.0.1:{port};
        root {html};
        location /loc/ {
            error_log {tmp}/logs/loc.log warn;
            error_log {tmp}/logs/loc.log;
            error_log {tmp}/logs/loc_crit.log crit;
            location /loc/inner/ { }
        }
        location /debug/ { error_log {tmp}/logs/debug.log debug; }
    }
    server {
        listen 127.0.0.1:{port2};
        root {html};
        error_log {tmp}/logs/srv2.log info;
    }
}
'''


def test_messages_go_to_the_context_logs(server):
    s = server(CONF)
    s.get('/loc/missing1.txt')
    s.get('/loc/inner/missing2.txt')   # a nested location inherits /loc/'s logs
    s.get('/top-missing.txt')          # the server has none of its own: http's
    s.get('/x-missing.txt', port=s.prefix.port2)
    assert wait_until(lambda: 'x-missing.txt' in read(s, 'logs/srv2.log'))
    assert wait_until(lambda: 'top-missing.txt' in read(s, 'logs/http.log'))
    assert wait_until(lambda: lines(read(s, 'logs/loc.log'), 'missing2.txt') == 2)
    loc = read(s, 'logs/loc.log')
    assert lines(loc, 'missing1.txt') == 2      # two error_log lines naming one file: written twice, as nginx
    assert '[error]' in loc and 'open()' in loc
    assert read(s, 'logs/loc_crit.log') == ''   # [error] is below crit
    http = read(s, 'logs/http.log')
    assert 'missing1' not in http and 'missing2' not in http and 'x-missing' not in http
    main = s.error_log()
    for name in ('missing1', 'missing2', 'top-missing', 'x-missing'):
        assert name not in main, main


def test_debug_level_in_a_location(server):
    s = server(CONF)
    s.get('/debug/a')
    assert wait_until(lambda: 'using configuration "/debug/"' in read(s, 'logs/debug.log'))
    assert '[debug]' in read(s, 'logs/debug.log')
    s.get('/loc/a')
    assert wait_until(lambda: 'missing' in read(s, 'logs/loc.log') or '/loc/a' in read(s, 'logs/loc.log'))
    assert '[debug]' not in read(s, 'logs/loc.log') and '[debug]' not in s.error_log()


def test_reopen_on_usr1_reaches_context_logs(server):
    import signal
    s = server(CONF)
    s.get('/loc/one.txt')
    assert wait_until(lambda: 'one.txt' in read(s, 'logs/loc.log'))
    os.rename(os.path.join(s.tmp, 'logs/loc.log'), os.path.join(s.tmp, 'logs/loc.log.1'))
    s.proc.send_signal(signal.SIGUSR1)
    assert wait_until(lambda: os.path.exists(os.path.join(s.tmp, 'logs/loc.log')))
    s.get('/loc/two.txt')
    assert wait_until(lambda: 'two.txt' in read(s, 'logs/loc.log'))
    assert 'two.txt' not in read(s, 'logs/loc.log.1')
