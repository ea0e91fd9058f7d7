#!/usr/bin/python3
"""A small RocketMQ name server and broker for tests/record/test_l7_binary.sh, speaking the
remoting protocol with JSON headers: GET_ROUTEINFO_BY_TOPIC (105) answers a route to the broker
port, or TOPIC_NOT_EXIST (17) for topics named "nosuch*"; SEND_MESSAGE(_V2) (10, 310) stores
nothing and answers SUCCESS, or SYSTEM_ERROR (1) for topic "broken"; HEART_BEAT (34) and
UNREGISTER_CLIENT (35) answer SUCCESS; other codes REQUEST_CODE_NOT_SUPPORTED (3).
  rocketmq_server.py NAMESRV_PORT BROKER_PORT
"""
import itertools
import json
import socketserver
import struct
import sys
import threading

BROKER = int(sys.argv[2])
offsets = itertools.count()


def route(topic):
    return {"brokerDatas": [{"cluster": "c", "brokerName": "b",
                             "brokerAddrs": {"0": "127.0.0.1:%d" % BROKER}}],
            "queueDatas": [{"brokerName": "b", "perm": 6, "readQueueNums": 4,
                            "writeQueueNums": 4, "topicSynFlag": 0}]}


def answer(req):
    code, ext = req["code"], req.get("extFields") or {}
    if code == 105:
        topic = ext.get("topic", "")
        if topic.startswith("nosuch"):
            return 17, "No topic route info in name server for the topic: " + topic, {}, b""
        return 0, None, {}, json.dumps(route(topic)).encode()
    if code in (10, 310):
        if ext.get("b", ext.get("topic")) == "broken":
            return 1, "store error", {}, b""
        return 0, None, {"msgId": "0A00000100002A9F%016X" % next(offsets), "queueId": "0",
                         "queueOffset": "0"}, b""
    if code in (34, 35):
        return 0, None, {}, b""
    return 3, "request code %d not supported" % code, {}, b""


class Conn(socketserver.BaseRequestHandler):
    def read(self, n):
        b = self.rfile.read(n)
        if len(b) < n:
            raise EOFError
        return b

    def handle(self):
        # Buffered reads, as netty's frame decoder in RocketMQ's servers reads what came.
        self.rfile = self.request.makefile("rb")
        try:
            while True:
                length, = struct.unpack(">i", self.read(4))
                frame = self.read(length)
                hlen = struct.unpack(">i", frame[:4])[0] & 0xffffff
                req = json.loads(frame[4:4 + hlen])
                if req.get("flag", 0) & 1:
                    continue  # a response to a request of ours: none are sent
                code, remark, ext, body = answer(req)
                if req.get("flag", 0) & 2:
                    continue  # oneway
                hdr = {"code": code, "flag": 1, "language": "JAVA", "opaque": req["opaque"],
                       "version": 401, "extFields": ext}
                if remark:
                    hdr["remark"] = remark
                h = json.dumps(hdr).encode()
                self.request.sendall(struct.pack(">ii", 4 + len(h) + len(body), len(h)) + h + body)
        except (EOFError, ConnectionError):
            pass


class Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True


for port in (int(sys.argv[1]), BROKER):
    threading.Thread(target=Server(("127.0.0.1", port), Conn).serve_forever, daemon=True).start()
print("ready", flush=True)
threading.Event().wait()
