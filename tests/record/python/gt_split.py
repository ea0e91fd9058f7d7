"""Two hot functions with a known split of the work (alpha 70 %, beta 30 %), called from
main(); prints the CPU seconds each took, measured by the program itself, when it ends. The
calls' sizes vary at random so that their rhythm cannot line up with the sampling's.
Usage: gt_split.py SECONDS"""
import random
import sys
import time


def alpha(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def beta(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def main():
    spent = {alpha: 0.0, beta: 0.0}
    end = time.monotonic() + float(sys.argv[1])
    clock = time.thread_time
    while time.monotonic() < end:
        k = random.randint(1, 5)
        for f, n in ((alpha, 7000 * k), (beta, 3000 * k)):
            t0 = clock()
            f(n)
            spent[f] += clock() - t0
    print(f"{spent[alpha]:.6f} {spent[beta]:.6f}", flush=True)


if __name__ == "__main__":
    main()
