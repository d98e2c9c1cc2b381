"""A stack that changes where a sampler's cache is easiest to fool.

The main thread keeps calling the same chain of functions from different
lines of hop(): the frames above hop() come back at the same addresses,
with the same code and the same instruction (a sleep), and only hop()'s
line differs. A cache that trusted its top frames would keep reporting the
old line. A second thread does the same at shallower depth.

Ready file: {"tids": [...]}
"""

import threading
import time

import _ttlib as _tt

NAP = 0.02


def leaf():
    time.sleep(NAP)


def q1():
    leaf()


def q2():
    q1()


def q3():
    q2()


def q4():
    q3()


def q5():
    q4()


def hop():
    while True:
        q5()
        q5()
        leaf()


def second():
    while True:
        leaf()
        q1()


def main():
    out = _tt.out_path()
    threading.Thread(target=second, name="second", daemon=True).start()
    _tt.ready(out, tids=_tt.all_native_ids())
    hop()


if __name__ == "__main__":
    main()
