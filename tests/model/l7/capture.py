#!/usr/bin/env python3
"""Turns `strace -f -yy -xx -s 65536` output of a client into a capture file for the L7 parser
tests: one line per system call on a TCP/UDP socket: the socket's fd (one parser per
connection), '>' for bytes the client sent or '<' for bytes it received, then their hex. A developer tool (tests read the .cap files):
  strace -f -yy -xx -s 65536 -o trace.txt CLIENT ...; capture.py trace.txt > x.cap
"""
import re
import sys

SEND = {"write", "sendto", "sendmsg", "writev", "send", "sendmmsg"}
RECV = {"read", "recvfrom", "recvmsg", "readv", "recv", "recvmmsg"}
call = re.compile(r'^(?:\d+\s+)?(\w+)\((\d+)<(TCP|UDP|TCPv6|UDPv6):\[(?:[^\]]|\]:|\[[^\]]*\])*\]>(?:, (.*))?\) += (\d+)')
# Threads' calls that strace splits into "<unfinished ...>" and "<... NAME resumed>" lines.
unfinished = re.compile(r'^(\d+)\s+(.*) <unfinished \.\.\.>$')
resumed = re.compile(r'^(\d+)\s+<\.\.\. \w+ resumed>(.*)$')
held = {}
hexstr = re.compile(r'"((?:\\x[0-9a-f]{2})*)"')
iovstr = re.compile(r'iov_base="((?:\\x[0-9a-f]{2})*)"')
msglen = re.compile(r'msg_len=(\d+)')

for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    u = unfinished.match(line)
    if u:
        held[u.group(1)] = u.group(2)
        continue
    r = resumed.match(line)
    if r:
        line = r.group(1) + " " + held.pop(r.group(1), "") + r.group(2)
    m = call.match(line)
    if not m or (int(m.group(5)) <= 0 and m.group(1) != "close"):
        continue
    name, rest, n = m.group(1), m.group(4) or "", int(m.group(5))
    if name == "close":
        print(m.group(2), "c", "-")
        continue
    if name in SEND:
        d = ">"
    elif name in RECV:
        d = "<"
    else:
        continue
    if "msg" in name:  # the bytes are in the iovecs; sendmmsg returns a count
        data = "".join(s.replace("\\x", "") for s in iovstr.findall(rest))
        if name.endswith("mmsg"):
            n = sum(int(x) for x in msglen.findall(rest)) or len(data) // 2
    else:
        data = "".join(s.replace("\\x", "") for s in hexstr.findall(rest))
    print(m.group(2), d, data[: 2 * n])
