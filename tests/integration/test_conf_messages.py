"""Configuration messages for operators (issue 15, item 5): one -t run lists every unsupported directive and
variable, reasons read as plain words, nginx variables hayate lacks are told apart from typos, and near misses
get a "did you mean"."""
import re

import pytest

pytestmark = pytest.mark.hayate_only


def line_of(conf, text):
    with open(conf) as f:
        for n, l in enumerate(f, 1):
            if text in l:
                return n
    raise AssertionError(text)


def t(run_cli, prefix, body):
    conf = prefix.conf(body)
    return conf, run_cli(['-p', prefix.tmp + '/', '-c', conf, '-t'])


def test_every_unsupported_directive_and_variable_in_one_run(run_cli, prefix):
    conf, res = t(run_cli, prefix, '''
http {
    dav_methods off;
    log_format main '$remote_addr $gzip_ratio $geoip_country_code';
    grpc_buffer_size 8k;
    server {
        listen 127.0.0.1:{port};
        ssl_engine pkcs11;
        location / {
            grpc_pass 127.0.0.1:9;
            mp4;
        }
        location /x {
            return 200 "$request_uri $uir";
        }
    }
}
''')
    assert res.rc == 1, res
    emerg = [l for l in res.err.splitlines() if '[emerg]' in l]
    want = [
        ('"dav_methods" directive is not supported by hayate yet (not planned)', line_of(conf, 'dav_methods off')),
        ('"grpc_buffer_size" directive is not supported by hayate yet (gRPC proxy)', line_of(conf, 'grpc_buffer_size')),
        ('"ssl_engine" directive is not supported by hayate yet (TLS)', line_of(conf, 'ssl_engine')),
        ('"grpc_pass" directive is not supported by hayate yet (gRPC proxy)', line_of(conf, 'grpc_pass')),
        ('"mp4" directive is not supported by hayate yet (not planned)', line_of(conf, 'mp4;')),
        ('"$gzip_ratio" variable is not supported by hayate yet', line_of(conf, 'log_format')),
        ('"$geoip_country_code" variable is not supported by hayate yet', line_of(conf, 'log_format')),
        ('unknown "uir" variable (did you mean "$uri"?)', line_of(conf, '$uir')),
    ]
    for msg, line in want:
        assert any(l.endswith('%s in %s:%d' % (msg, conf, line)) for l in emerg), (msg, line, res.err)
    assert len(emerg) == len(want), res.err
    assert 'issue' not in res.err, res.err
    assert 'test failed' in res.err


def test_unknown_directive_did_you_mean(run_cli, prefix):
    conf, res = t(run_cli, prefix, '''
http {
    server {
        listen 127.0.0.1:{port};
        server_nmae example.com;
    }
}
''')
    assert res.rc == 1, res
    assert 'unknown directive "server_nmae" (did you mean "server_name"?) in %s:%d' % (conf, line_of(conf, 'server_nmae')) in res.err, res.err


def test_unknown_directive_far_from_everything_has_no_suggestion(run_cli, prefix):
    conf, res = t(run_cli, prefix, 'http { xyzzy_frobnicate on; }\n')
    assert res.rc == 1, res
    assert re.search(r'unknown directive "xyzzy_frobnicate" in %s:\d+$' % re.escape(conf), res.err, re.M), res.err


def test_unknown_variable_keeps_nginx_wording(run_cli, prefix):
    conf, res = t(run_cli, prefix, '''
http {
    server {
        listen 127.0.0.1:{port};
        location / { return 200 "$qqqqqqqq"; }
    }
}
''')
    assert res.rc == 1, res
    assert re.search(r'\[emerg\] unknown "qqqqqqqq" variable in %s:%d$' % (re.escape(conf), line_of(conf, 'qqqq')), res.err, re.M), res.err


def test_near_miss_of_a_user_variable(run_cli, prefix):
    conf, res = t(run_cli, prefix, '''
http {
    map $uri $backend_name { default a; }
    server {
        listen 127.0.0.1:{port};
        location / { return 200 "$backend_nme"; }
    }
}
''')
    assert res.rc == 1, res
    assert 'unknown "backend_nme" variable (did you mean "$backend_name"?)' in res.err, res.err
