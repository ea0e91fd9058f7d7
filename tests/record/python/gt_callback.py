"""Python called back from C: sorted() (C) calls key() (Python) for every item, from main().
Usage: gt_callback.py SECONDS"""
import sys
import time


def key(x):
    s = 0
    for i in range(200):
        s += i
    return -x


def main():
    end = time.monotonic() + float(sys.argv[1])
    while time.monotonic() < end:
        sorted(range(300), key=key)


if __name__ == "__main__":
    main()
