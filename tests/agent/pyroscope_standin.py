#!/usr/bin/python3
"""A loopback stand-in for Grafana Pyroscope's POST /ingest (Pyroscope has no Debian package),
holding requests to the rules Pyroscope applies to them, as its sources read
(pkg/ingester/pyroscope/ingest_handler.go, api/model/labelset, pkg/ingester/pyroscope/
ingest_adapter.go convertMetadata, pkg/validation, pkg/og/convert/parser.go ParseGroups):

- the name: APP{k=v,...}; APP non-empty, of [A-Za-z0-9_.-/]; label names of [A-Za-z0-9_.],
  not __name__, at most 1024 bytes; values valid UTF-8 of at most 2048 bytes; at most 30
  labels, no name twice; the part of APP after its last dot one of the profile types /ingest
  knows ("unknown profile type" otherwise: gala-gopher's APP-<uuid>.<pid> fails here);
- from and until UNIX seconds, from <= until; sampleRate a non-negative integer; units and
  aggregationType from Pyroscope's lists;
- the folded body: lines "stack COUNT" with an integer count (strconv.Atoi after the last
  space), shorter than bufio.Scanner's 64 KiB.

Accepted requests get 200 and a JSON line in LOG (name, app, type, labels, params, auth and
tenant headers, stacks with counts); refused ones 400 with the reason, logged as
{"refused": reason}. --fail N answers 503 to the first N requests; --hang never answers.

Usage: pyroscope_standin.py PORTFILE LOG [--fail N] [--hang]
"""
import json
import re
import sys
import threading
import unicodedata
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

# convertMetadata's list (ingest_adapter.go).
KNOWN_TYPES = {
    "cpu", "wall", "inuse_objects", "inuse_space", "alloc_objects", "alloc_space", "goroutines",
    "mutex_count", "mutex_duration", "block_count", "block_duration", "itimer",
    "alloc_in_new_tlab_objects", "alloc_in_new_tlab_bytes", "alloc_outside_tlab_objects",
    "alloc_outside_tlab_bytes", "lock_count", "lock_duration", "live", "exceptions",
    "seconds", "nanoseconds", "microseconds", "milliseconds", "bytes",
}
UNITS = {"samples", "objects", "goroutines", "bytes", "lock_samples", "lock_nanoseconds"}
AGGREGATIONS = {"sum", "average"}
LABEL_RE = re.compile(r"^[A-Za-z0-9_.]+$")
SERVICE_RE = re.compile(r"^[A-Za-z0-9_./-]+$")
MAX_LINE = 64 * 1024 - 1


class Refused(Exception):
    pass


def parse_name(name):
    """labelset.Parse: the service name up to '{', then k=v pairs split at ',' and '}'."""
    if "{" not in name:
        app, rest = name.strip(), ""
    else:
        app, rest = name.split("{", 1)
        app = app.strip()
    if not app:
        raise Refused("service name is required")
    if not SERVICE_RE.match(app):
        raise Refused("invalid service name: %s" % app)
    labels = {}
    if rest:
        if not rest.endswith("}"):
            raise Refused("name does not end in '}'")
        body = rest[:-1]
        if "}" in body or "{" in body:
            raise Refused("'{' or '}' inside the labels")
        for pair in body.split(",") if body else []:
            if "=" not in pair:
                raise Refused("label without '=': %r" % pair)
            k, v = pair.split("=", 1)
            k, v = k.strip(), v.strip()
            if not k or not LABEL_RE.match(k) or k == "__name__":
                raise Refused("invalid label name %r" % k)
            if len(k.encode()) > 1024 or len(v.encode()) > 2048:
                raise Refused("label %s too long" % k)
            if k in labels:
                raise Refused("duplicate label name %s" % k)
            if any(unicodedata.category(c) == "Cc" for c in v):
                raise Refused("control character in label %s" % k)
            labels[k] = v
    if len(labels) + 1 > 30:
        raise Refused("%d label names; limit 30" % (len(labels) + 1))
    if "." not in app:
        ptype, base = "cpu", app
    else:
        base, ptype = app.rsplit(".", 1)
    if ptype not in KNOWN_TYPES:
        raise Refused("unknown profile type: %s" % ptype)
    return app, base, ptype, labels


def parse_body(raw):
    """ParseGroups: a count after each line's last space (lines without one are skipped)."""
    stacks = []
    for line in raw.split(b"\n"):
        if len(line) > MAX_LINE:
            raise Refused("bufio.Scanner: token too long")
        i = line.rfind(b" ")
        if i < 0:
            continue
        count = line[i + 1:].decode("ascii", "replace")
        if not re.match(r"^[+-]?[0-9]+$", count):
            raise Refused('strconv.Atoi: parsing "%s": invalid syntax' % count)
        stacks.append([line[:i].decode("utf-8", "replace"), int(count)])
    return stacks


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def answer(self, code, text):
        data = text.encode()
        self.send_response(code)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        srv = self.server
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with srv.lock:
            srv.count += 1
            n = srv.count
        if srv.hang:
            threading.Event().wait(3600)
            return
        if n <= srv.fail:
            self.answer(503, "try again")
            return
        try:
            url = urlsplit(self.path)
            if url.path != "/ingest":
                raise Refused("no such path %s" % url.path)
            try:
                q = {k: v[0] for k, v in parse_qs(url.query, keep_blank_values=True,
                                                   errors="strict").items()}
            except UnicodeDecodeError:
                raise Refused("invalid UTF-8 in the query")
            if "name" not in q:
                raise Refused("name: service name is required")
            app, base, ptype, labels = parse_name(q["name"])
            for k in ("from", "until"):
                if not re.match(r"^[0-9]+$", q.get(k, "")):
                    raise Refused("%s: not UNIX seconds: %r" % (k, q.get(k)))
            if int(q["from"]) > int(q["until"]):
                raise Refused("from is after until")
            if "sampleRate" in q and not re.match(r"^[0-9]+$", q["sampleRate"]):
                raise Refused("invalid sample rate: %r" % q["sampleRate"])
            if q.get("units", "samples") not in UNITS:
                raise Refused("unknown units %r" % q["units"])
            if q.get("aggregationType", "sum") not in AGGREGATIONS:
                raise Refused("unknown aggregationType %r" % q["aggregationType"])
            if q.get("format", "folded") not in ("folded", "groups"):
                raise Refused("not a folded body: format=%s" % q["format"])
            stacks = parse_body(raw)
        except Refused as e:
            srv.log({"refused": str(e), "path": self.path})
            self.answer(400, str(e))
            return
        srv.log({"name": q["name"], "app": base, "type": ptype, "labels": labels,
                 "params": q, "auth": self.headers.get("Authorization", ""),
                 "tenant": self.headers.get("X-Scope-OrgID", ""),
                 "total": sum(c for _, c in stacks), "stacks": stacks})
        self.answer(200, "")


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def log(self, obj):
        with self.lock:
            with open(self.logpath, "a") as f:
                f.write(json.dumps(obj) + "\n")


def main():
    args = sys.argv[1:]
    srv = Server(("127.0.0.1", 0), Handler)
    srv.lock = threading.Lock()
    srv.count = 0
    srv.logpath = args[1]
    srv.fail = int(args[args.index("--fail") + 1]) if "--fail" in args else 0
    srv.hang = "--hang" in args
    open(srv.logpath, "w").close()
    with open(args[0] + ".tmp", "w") as f:
        f.write("%d\n" % srv.server_address[1])
    import os
    os.rename(args[0] + ".tmp", args[0])
    srv.serve_forever()


if __name__ == "__main__":
    main()
