#!/usr/bin/python3
"""An HTTP/1.1 server on a Unix-domain datagram or seqpacket socket, for
tests/record/test_l7_uds.sh (nginx, redis and the databases listen on stream sockets only): each
request is one message and its response another, sent back to the request's sender. /ok answers
200 "ok\\n", anything else 404. Prints "ready" once it listens; on SIGTERM it writes
"requests N" and "errors N" (the 404s it sent) to the file named by its third argument.
  uds_http_server.py dgram|seqpacket PATH COUNTS_FILE
"""
import signal
import socket
import sys
import threading

kind, path, counts_file = sys.argv[1:4]
counts = {"requests": 0, "errors": 0}
lock = threading.Lock()


def answer(msg):
    """The response to the request msg (one whole request)."""
    target = msg.split(b" ", 2)[1] if msg.count(b" ") >= 2 else b""
    ok = target == b"/ok"
    body = b"ok\n" if ok else b"not found\n"
    with lock:
        counts["requests"] += 1
        counts["errors"] += 0 if ok else 1
    return b"HTTP/1.1 %s\r\nContent-Length: %d\r\n\r\n%s" % (
        b"200 OK" if ok else b"404 Not Found", len(body), body)


def stop(*_):
    with open(counts_file, "w") as f:
        f.write("requests %d\nerrors %d\n" % (counts["requests"], counts["errors"]))
    sys.exit(0)


def serve_conn(c):
    with c:
        while True:
            msg = c.recv(65536)
            if not msg:
                return
            c.send(answer(msg))


signal.signal(signal.SIGTERM, stop)
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM if kind == "dgram" else socket.SOCK_SEQPACKET)
s.bind(path)
if kind == "dgram":
    print("ready", flush=True)
    while True:
        msg, peer = s.recvfrom(65536)
        s.sendto(answer(msg), peer)
s.listen(16)
print("ready", flush=True)
while True:
    conn, _ = s.accept()
    threading.Thread(target=serve_conn, args=(conn,), daemon=True).start()
