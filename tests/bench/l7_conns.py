#!/usr/bin/python3
"""Open connections for tests/bench/l7_conns.sh.
  l7_conns.py N listen: accepts N connections and never reads them; prints its port first.
  l7_conns.py N connect PORT PROTO: prints "ready", waits for a line of input, then opens N
  connections to PORT and sends one request of PROTO on each, prints "sent" and keeps them
  open. PROTO kafka: a Produce v7 request (acks=-1). PROTO http2: the connection preface, an
  empty SETTINGS and a GET whose HEADERS add three entries to the receiver's HPACK table
  (literals with incremental indexing), so that each connection's decoder holds a table.
"""
import resource
import socket
import struct
import sys
import time

n = int(sys.argv[1])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
if sys.argv[2] == "listen":
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4096)
    print(srv.getsockname()[1], flush=True)
    held = [srv.accept()[0] for _ in range(n)]
    time.sleep(3600)
    sys.exit(0)
port = int(sys.argv[3])
proto = sys.argv[4]


def kafka(i):
    # header v1: api_key 0, version 7, correlation_id, client_id "bench"; then
    # transactional_id null, acks -1, timeout, one topic "orders" with partition 0 and no records
    body = struct.pack(">hhih", 0, 7, i + 1, 5) + b"bench" + struct.pack(">hhi", -1, -1, 30000)
    body += struct.pack(">ih", 1, 6) + b"orders" + struct.pack(">iii", 1, 0, 0)
    return struct.pack(">i", len(body)) + body


def literal(index, value):
    """A header field literal with incremental indexing, its name the static table's index
    (under 63), its value a raw string under 127 bytes."""
    return bytes([0x40 | index, len(value)]) + value


def http2(i):
    block = b"\x82\x86"  # :method GET, :scheme http
    block += literal(4, b"/users/%d" % i)  # :path
    block += literal(1, b"bench.example")  # :authority
    block += literal(58, b"galatop-bench/1.0")  # user-agent
    # HEADERS on stream 1: END_STREAM | END_HEADERS
    headers = struct.pack(">I", len(block))[1:] + bytes([1, 5]) + struct.pack(">I", 1) + block
    settings = b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
    return b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + settings + headers


request = {"kafka": kafka, "http2": http2}[proto]
print("ready", flush=True)
sys.stdin.readline()
conns = []
for i in range(n):
    c = socket.create_connection(("127.0.0.1", port))
    c.sendall(request(i))
    conns.append(c)
print("sent", flush=True)
time.sleep(3600)
