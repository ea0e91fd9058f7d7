#!/usr/bin/python3
"""Open connections for tests/bench/l7_conns.sh.
  l7_conns.py N listen: accepts N connections and never reads them; prints its port first.
  l7_conns.py N connect PORT: prints "ready", waits for a line of input, then opens N
  connections to PORT and sends one Kafka Produce v7 request (acks=-1) on each, prints "sent"
  and keeps them open.
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
print("ready", flush=True)
sys.stdin.readline()
# header v1: api_key 0, version 7, correlation_id (set below), client_id "bench"; then
# transactional_id null, acks -1, timeout, one topic "orders" with partition 0 and no records
body = struct.pack(">hhih", 0, 7, 0, 5) + b"bench" + struct.pack(">hhi", -1, -1, 30000)
body += struct.pack(">ih", 1, 6) + b"orders" + struct.pack(">iii", 1, 0, 0)
conns = []
for i in range(n):
    c = socket.create_connection(("127.0.0.1", port))
    req = bytearray(body)
    req[4:8] = struct.pack(">i", i + 1)
    c.sendall(struct.pack(">i", len(req)) + req)
    conns.append(c)
print("sent", flush=True)
time.sleep(3600)
