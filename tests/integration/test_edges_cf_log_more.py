"""More access_log cases: an unknown variable in a log's file name (-t error), two variable-named logs and two
syslog logs at one level, buffered lines longer than what is left of the buffer and than the buffer itself, an
empty value in an escape=none format written to a variable-named file."""
import re

from conftest import simple
from test_limits import wait_for


def read(path):
    try:
        with open(path, 'rb') as f:
            return f.read()
    except FileNotFoundError:
        return None


def test_unknown_variable_in_a_log_name(prefix, run_cli):
    path = prefix.conf(simple('location / { access_log {tmp}/logs/$nope.log; return 204; }'))
    r = run_cli(['-t', '-c', path])
    assert r.rc == 1 and re.search(r'unknown "nope" variable', r.err), r


def test_two_syslog_logs_and_two_variable_logs(prefix, run_cli):
    path = prefix.conf(simple('''
        location / { access_log syslog:server=127.0.0.1:{port2}; access_log syslog:server=127.0.0.1:{port3};
                     access_log {tmp}/logs/a_$arg_a.log; access_log {tmp}/logs/b_$arg_b.log; return 204; }'''))
    r = run_cli(['-t', '-c', path])
    assert r.rc == 0, r


def test_long_lines_through_a_buffer(server):
    srv = server(simple('''
        large_client_header_buffers 4 16k;
        access_log {tmp}/logs/buf.log x buffer=4k;
        location / { return 204; }''', http_extra="log_format x '$arg_x';"))
    lines = ['a' * 3000, 'b' * 3000, 'c' * 9000, 'd']
    for l in lines:
        assert srv.get('/?x=' + l).status == 204
    srv.stop()  # the buffer is written at exit
    assert read(srv.tmp + '/logs/buf.log') == ('\n'.join(lines) + '\n').encode()


def test_empty_value_in_a_raw_format_to_a_variable_file(server):
    srv = server(simple('''
        location / { access_log {tmp}/logs/n_$arg_k.log n; return 204; }''',
        http_extra="log_format n escape=none '[$arg_u]$arg_v[$arg_w]';"))
    assert srv.get('/?k=1&v=x').status == 204
    wait_for(lambda: read(srv.tmp + '/logs/n_1.log') == b'[]x[]\n', what='the line')
