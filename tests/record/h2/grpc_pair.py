#!/usr/bin/python3
"""gRPC server and client for tests/record/test_l7_h2.sh, with generic handlers (raw bytes, no
protoc): galatop.Test/Echo answers, galatop.Test/Fail aborts with INVALID_ARGUMENT (a
Trailers-Only response), galatop.Test/Slow sleeps past the client's deadline (the client
cancels the stream: RST_STREAM).
  grpc_pair.py server PORT           serves until killed
  grpc_pair.py client PORT N F S [FILE N2 F2]
        N Echo, F Fail, S Slow calls on one channel; prints 'ok=N err=E p50_us=P' (P: median
        Echo latency as the client timed it). With FILE: then prints 'phase1', waits for FILE
        to exist and makes N2 Echo and F2 Fail calls on the same channel, printing their counts
        the same way (a capture begun between the two sees a connection already busy).
        With $GT_CLIENT_TIMES set, each Echo call's clock readings before and after it,
        CLOCK_MONOTONIC ns, go to that file as lines "T0 T1" (tests pair them with galatop's).
"""
import os
import sys
import time

import grpc
from concurrent import futures


def echo(req, ctx):
    return req


def fail(req, ctx):
    ctx.abort(grpc.StatusCode.INVALID_ARGUMENT, "bad request")


def slow(req, ctx):
    time.sleep(0.3)
    return req


def server(port):
    s = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    handlers = {name: grpc.unary_unary_rpc_method_handler(fn)
                for name, fn in (("Echo", echo), ("Fail", fail), ("Slow", slow))}
    s.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("galatop.Test", handlers),))
    s.add_insecure_port("127.0.0.1:%d" % port)
    s.start()
    print("ready", flush=True)
    s.wait_for_termination()


def calls(ch, n, f, slow_calls):
    echo_call = ch.unary_unary("/galatop.Test/Echo")
    fail_call = ch.unary_unary("/galatop.Test/Fail")
    slow_call = ch.unary_unary("/galatop.Test/Slow")
    ok = err = 0
    lat = []
    # The cancelled calls first: a client that exits right after cancelling resets its TCP
    # connection with the RST_STREAM still unread by the server.
    for _ in range(slow_calls):
        try:
            slow_call(b"z", timeout=0.05)
        except grpc.RpcError as e:
            assert e.code() == grpc.StatusCode.DEADLINE_EXCEEDED
            err += 1
    for _ in range(f):
        try:
            fail_call(b"y")
        except grpc.RpcError as e:
            assert e.code() == grpc.StatusCode.INVALID_ARGUMENT
            err += 1
    times = []
    for i in range(n):
        t = time.monotonic_ns()
        echo_call(b"x" * (i % 64 + 1))
        t1 = time.monotonic_ns()
        lat.append(t1 - t)
        times.append((t, t1))
        ok += 1
    if os.environ.get("GT_CLIENT_TIMES"):
        with open(os.environ["GT_CLIENT_TIMES"], "w") as out:
            out.writelines("%d %d\n" % t for t in times)
    lat.sort()
    print("ok=%d err=%d p50_us=%.1f" % (ok, err, lat[len(lat) // 2] / 1000 if lat else 0), flush=True)


def client(port, n, f, slow_calls, then=None):
    ch = grpc.insecure_channel("127.0.0.1:%d" % port)
    grpc.channel_ready_future(ch).result(timeout=10)
    calls(ch, n, f, slow_calls)
    if then:
        print("phase1", flush=True)
        while not os.path.exists(then[0]):
            time.sleep(0.05)
        calls(ch, int(then[1]), int(then[2]), 0)
    ch.close()


if __name__ == "__main__":
    if sys.argv[1] == "server":
        server(int(sys.argv[2]))
    else:
        client(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]),
               sys.argv[6:9] or None)
