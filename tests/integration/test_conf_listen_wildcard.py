"""A wildcard and a specific address on the same port (nginx binds only "*:port" and picks the servers of the
specific address by each connection's local address). Traffic stays on loopback (127.0.0.1 / 127.0.0.2)."""
import socket


def get(port, host_ip, path='/'):
    s = socket.create_connection((host_ip, port), timeout=5)
    try:
        s.sendall(b'GET ' + path.encode() + b' HTTP/1.0\r\nHost: x\r\n\r\n')
        data = b''
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        return data.split(b'\r\n\r\n', 1)[1]
    finally:
        s.close()


def test_wildcard_and_specific_address_on_one_port(server):
    srv = server('''
http {
    server { listen {port}; root {tmp}/a; }
    server { listen 127.0.0.2:{port}; root {tmp}/b; }
}
''', files={'a/f.txt': 'wildcard\n', 'b/f.txt': 'specific\n'})
    assert get(srv.port, '127.0.0.1', '/f.txt') == b'wildcard\n'
    assert get(srv.port, '127.0.0.2', '/f.txt') == b'specific\n'
