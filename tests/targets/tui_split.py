"""split.py with jittered spins: 75% of the time in spend_75 and 25% in
spend_25 on average, but with no fixed period.

split.py repeats a 4 ms cycle, the length of a scheduler tick at HZ=250: on
a loaded machine a sampler that only gets the CPU on ticks samples that
cycle at the same phase again and again and sees any split at all. Random
spin lengths (mean 3 ms and 1 ms) leave nothing to alias with.

Ready file: {}
"""

import random
import time

import _ttlib as _tt


def spin(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def spend_75():
    spin(random.uniform(0.0002, 0.0058))


def spend_25():
    spin(random.uniform(0.0002, 0.0018))


def loop():
    while True:
        spend_75()
        spend_25()


if __name__ == "__main__":
    _tt.ready(_tt.out_path())
    loop()
