"""A known call structure for the call tree and flame views, with jittered
spins (see tui_split.py for why).

The main thread loops in main_loop -> a, which spends 75% of its time in
a -> b -> c (spinning) and 25% in a -> d (spinning): on CPU, so these are
the shares in cpu mode. A thread named "deep" recurses 200 frames deep and
sleeps there (idle: it counts in wall mode only), for the depth cap.

On a loaded machine the spins stretch (a spin is descheduled past its end),
so the split achieved drifts from the design: main_loop also measures the
time it spent in b and in d and publishes the running totals every 0.1 s in
split.json beside the ready file ({"b": s, "d": s}), for a test to compare a profile of any stretch
of time with what really happened.

Ready file: {"deep_tid": native id of the deep thread}
"""

import json
import os
import random
import sys
import threading
import time

import _ttlib as _tt

DEPTH = 200


def spin(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def c():
    spin(random.uniform(0.0002, 0.0058))     # mean 3 ms


def b():
    c()


def d():
    spin(random.uniform(0.0002, 0.0018))     # mean 1 ms


def a(spent):
    t0 = time.perf_counter()
    b()
    t1 = time.perf_counter()
    d()
    spent[0] += t1 - t0
    spent[1] += time.perf_counter() - t1


def main_loop(split_path):
    spent = [0.0, 0.0]
    published = time.perf_counter()
    while True:
        a(spent)
        now = time.perf_counter()
        if now - published >= 0.1:
            with open(split_path + ".tmp", "w") as f:
                json.dump({"b": spent[0], "d": spent[1]}, f)
            os.replace(split_path + ".tmp", split_path)
            published = now


def recurse(n, started):
    if n > 1:
        recurse(n - 1, started)
    else:
        started.set()
        time.sleep(_tt.PARK)


if __name__ == "__main__":
    started = threading.Event()
    deep = threading.Thread(target=recurse, args=(DEPTH, started), name="deep", daemon=True)
    deep.start()
    started.wait()
    split_path = os.path.join(os.path.dirname(_tt.out_path()), "split.json")
    _tt.ready(_tt.out_path(), deep_tid=deep.native_id, split=split_path)
    main_loop(split_path)
