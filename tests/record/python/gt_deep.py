"""A recursion 200 Python calls deep, deeper than galatop walks (128 frames).
Usage: gt_deep.py SECONDS"""
import sys
import time


def rec(n):
    if n == 0:
        s = 0
        for i in range(5000):
            s += i
        return s
    return rec(n - 1)


def main():
    end = time.monotonic() + float(sys.argv[1])
    while time.monotonic() < end:
        rec(200)


if __name__ == "__main__":
    main()
