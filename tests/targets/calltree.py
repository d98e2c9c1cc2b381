"""A known call structure for the call tree and flame views, with jittered
spins (see tui_split.py for why): every cycle main_loop calls a, which
spends 70% of the time in a -> b -> c, 20% in a -> d, and 10% at the
bottom of a recursion 200 frames deep (a -> recurse x 200 -> spin).

So under a: b 70% (all of it in c), d 20%, recurse 10%.

Ready file: {}
"""

import random
import sys
import time

import _ttlib as _tt


def spin(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def c():
    spin(random.uniform(0.0002, 0.0068))     # mean 3.5 ms


def b():
    c()


def d():
    spin(random.uniform(0.0002, 0.0018))     # mean 1.0 ms


def recurse(n):
    if n > 1:
        recurse(n - 1)
    else:
        spin(random.uniform(0.0001, 0.0009))  # mean 0.5 ms


def a():
    b()
    d()
    recurse(200)


def main_loop():
    while True:
        a()


if __name__ == "__main__":
    sys.setrecursionlimit(1000)
    _tt.ready(_tt.out_path())
    main_loop()
