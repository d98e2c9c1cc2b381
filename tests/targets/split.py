"""CPU time split by design: 75% in spend_75, 25% in spend_25.

Ready file: {}
"""

import time

import _ttlib as _tt


def spin(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def spend_75():
    spin(0.003)


def spend_25():
    spin(0.001)


def loop():
    while True:
        spend_75()
        spend_25()


if __name__ == "__main__":
    _tt.ready(_tt.out_path())
    loop()
