#!/usr/bin/python3
"""A small MongoDB wire-protocol server for tests/record/test_l7_binary.sh (Debian ships no
MongoDB server): the OP_QUERY isMaster handshake, legacy OP_QUERY queries with exhaust (as
pymongo 3.11 sends exhaust cursors), OP_MSG commands (insert, find, getMore with
exhaust, update, delete, ping, endSessions; anything else fails with CommandNotFound), zlib
OP_COMPRESSED, and OP_MSG moreToCome writes. An update asking w: 5 gets a writeConcernError; an
insert of an existing _id a writeErrors entry. On SIGTERM it writes what it received per
"opcode command" to the file named by its second argument.
  mongo_server.py PORT COUNTS_FILE
"""
import datetime
import itertools
import signal
import socketserver
import struct
import sys
import threading
import zlib

import bson

OP_REPLY, OP_QUERY, OP_COMPRESSED, OP_MSG = 1, 2004, 2012, 2013
MORE_TO_COME, EXHAUST_ALLOWED = 2, 1 << 16
ids = itertools.count(1000)
lock = threading.Lock()
store = {}  # namespace -> list of documents
cursors = {}  # cursor id -> (namespace, remaining documents, batch size)
counts = {}


def count(what):
    with lock:
        counts[what] = counts.get(what, 0) + 1


def hello(doc):
    return {"ismaster": True, "maxBsonObjectSize": 16777216, "maxMessageSizeBytes": 48000000,
            "maxWriteBatchSize": 100000, "localTime": datetime.datetime.utcnow(),
            "logicalSessionTimeoutMinutes": 30, "connectionId": 1, "minWireVersion": 0,
            "maxWireVersion": 9, "readOnly": False,
            "compression": [c for c in doc.get("compression", []) if c == "zlib"], "ok": 1.0}


def matches(d, flt):
    return all(d.get(k) == v for k, v in flt.items())


def batch(cid, ns, docs, size, first):
    key = "firstBatch" if first else "nextBatch"
    if size and len(docs) > size:
        cursors[cid] = (ns, docs[size:], size)
        return {"cursor": {"id": bson.int64.Int64(cid), "ns": ns, key: docs[:size]}, "ok": 1.0}
    cursors.pop(cid, None)
    return {"cursor": {"id": bson.int64.Int64(0), "ns": ns, key: docs}, "ok": 1.0}


def command(doc, seqs):
    name = next(iter(doc))
    db = doc.get("$db", "admin")
    if name in ("ismaster", "isMaster", "hello"):
        return hello(doc)
    if name in ("ping", "endSessions"):
        return {"ok": 1.0}
    if name == "insert":
        ns = db + "." + doc[name]
        docs = seqs.get("documents", doc.get("documents", []))
        errors = []
        with lock:
            have = store.setdefault(ns, [])
            for i, d in enumerate(docs):
                if any(x.get("_id") == d.get("_id") for x in have):
                    errors.append({"index": i, "code": 11000,
                                   "errmsg": "E11000 duplicate key error collection: %s" % ns})
                else:
                    have.append(d)
        reply = {"n": len(docs) - len(errors), "ok": 1.0}
        if errors:
            reply["writeErrors"] = errors
        return reply
    if name == "find":
        ns = db + "." + doc[name]
        with lock:
            docs = [d for d in store.get(ns, []) if matches(d, doc.get("filter", {}))]
        return batch(next(ids), ns, docs, doc.get("batchSize", 0), True)
    if name == "getMore":
        ns, rest, size = cursors.get(int(doc[name]), (db + "." + doc["collection"], [], 0))
        return batch(int(doc[name]), ns, rest, doc.get("batchSize", size), False)
    if name == "update":
        reply = {"n": len(doc.get("updates", [])) + len(seqs.get("updates", [])),
                 "nModified": 0, "ok": 1.0}
        if doc.get("writeConcern", {}).get("w") == 5:
            reply["writeConcernError"] = {"code": 100, "codeName": "UnsatisfiableWriteConcern",
                                          "errmsg": "Not enough data-bearing nodes"}
        return reply
    if name == "delete":
        return {"n": 0, "ok": 1.0}
    return {"ok": 0.0, "errmsg": "no such command: '%s'" % name, "code": 59,
            "codeName": "CommandNotFound"}


class Conn(socketserver.BaseRequestHandler):
    def read(self, n):
        b = b""
        while len(b) < n:
            c = self.request.recv(n - len(b))
            if not c:
                raise EOFError
            b += c
        return b

    def send(self, op, body, to, compressed):
        rid = next(ids)
        if compressed:
            z = zlib.compress(body)
            body = struct.pack("<iiB", op, len(body), 2) + z
            op = OP_COMPRESSED
        self.request.sendall(struct.pack("<iiii", 16 + len(body), rid, to, op) + body)
        return rid

    def query(self, body, rid):
        """OP_QUERY: a command on "db.$cmd", or a legacy query answered with OP_REPLY
        batches of numberToReturn, all streamed at once (each answering the one before) when
        flagged exhaust."""
        flags = struct.unpack("<i", body[:4])[0]
        ns_end = body.index(b"\0", 4)
        ns = body[4:ns_end].decode()
        nret = struct.unpack("<i", body[ns_end + 5:ns_end + 9])[0]
        doc = bson.decode_all(body[ns_end + 9:])[0]
        if ns.endswith(".$cmd"):
            count("OP_QUERY " + next(iter(doc)))
            reply = bson.encode(command(doc, {}))
            self.send(OP_REPLY, struct.pack("<iqii", 0, 0, 0, 1) + reply, rid, False)
            return
        exhaust = bool(flags & 0x40)
        count("OP_QUERY query" + (" exhaust" if exhaust else ""))
        with lock:
            docs = [d for d in store.get(ns, []) if matches(d, doc.get("$query", doc))]
        cid, start, to = next(ids), 0, rid
        while True:
            part = docs[start:start + nret] if nret > 0 else docs[start:]
            start += len(part)
            more = start < len(docs)
            reply = struct.pack("<iqii", 0, cid if more else 0, start - len(part), len(part))
            to = self.send(OP_REPLY, reply + b"".join(bson.encode(d) for d in part), to, False)
            if not more or not exhaust:
                break

    def handle(self):
        try:
            while True:
                length, rid, _, op = struct.unpack("<iiii", self.read(16))
                body = self.read(length - 16)
                compressed = op == OP_COMPRESSED
                if compressed:
                    op, _, _ = struct.unpack("<iiB", body[:9])
                    body = zlib.decompress(body[9:])
                if op == OP_QUERY:
                    self.query(body, rid)
                    continue
                flags = struct.unpack("<I", body[:4])[0]
                off, doc, seqs = 4, None, {}
                end = len(body) - (4 if flags & 1 else 0)
                while off < end:
                    kind = body[off]
                    off += 1
                    size = struct.unpack("<i", body[off:off + 4])[0]
                    if kind == 0:
                        doc = bson.decode(body[off:off + size])
                    else:
                        ident_end = body.index(b"\0", off + 4)
                        seqs[body[off + 4:ident_end].decode()] = bson.decode_all(
                            body[ident_end + 1:off + size])
                    off += size
                name = next(iter(doc))
                count(("OP_COMPRESSED " if compressed else "OP_MSG ") + name +
                      (" moreToCome" if flags & MORE_TO_COME else "") +
                      (" exhaust" if flags & EXHAUST_ALLOWED else ""))
                reply = command(doc, seqs)
                if flags & MORE_TO_COME:
                    continue
                to = rid
                # Exhaust: each batch answers the one before, flagged moreToCome, until the
                # cursor ends.
                while True:
                    more = bool(flags & EXHAUST_ALLOWED and name == "getMore" and
                                reply["cursor"]["id"])
                    payload = struct.pack("<IB", MORE_TO_COME if more else 0, 0) + bson.encode(reply)
                    to = self.send(OP_MSG, payload, to, compressed)
                    if not more:
                        break
                    reply = command(doc, seqs)
        except (EOFError, ConnectionError):
            pass


class Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True


def main():
    srv = Server(("127.0.0.1", int(sys.argv[1])), Conn)

    def stop(*_):
        with open(sys.argv[2], "w") as f:
            for k in sorted(counts):
                f.write("%s\t%d\n" % (k, counts[k]))
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    print("ready", flush=True)
    srv.serve_forever()


main()
