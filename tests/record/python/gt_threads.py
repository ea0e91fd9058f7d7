"""A worker thread and the main thread each burning CPU in their own function, and a third
thread sleeping in its own: each thread's Python stack is its own.
Usage: gt_threads.py SECONDS"""
import sys
import threading
import time


def busy(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def spin_worker(end):
    while time.monotonic() < end:
        busy(2000)


def spin_main(end):
    while time.monotonic() < end:
        busy(2000)


def napper(end):
    while time.monotonic() < end:
        time.sleep(0.02)


if __name__ == "__main__":
    end = time.monotonic() + float(sys.argv[1])
    threads = [threading.Thread(target=f, args=(end,)) for f in (spin_worker, napper)]
    for t in threads:
        t.start()
    spin_main(end)
    for t in threads:
        t.join()
