"""split.py with jittered spins: 75% of the time in spend_75 and 25% in
spend_25 on average, but with no fixed period.

split.py repeats a 4 ms cycle, the length of a scheduler tick at HZ=250: on
a loaded machine a sampler that only gets the CPU on ticks samples that
cycle at the same phase again and again and sees any split at all. Random
spin lengths (mean 3 ms and 1 ms) leave nothing to alias with.

Ready file: {}; each function's own wall time in READY.times (_tt.OwnClock),
the truth a sampled split is compared with.
"""

import random
import time

import _ttlib as _tt


def spin(seconds):
    """Run for `seconds` of this thread's CPU time."""
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def spend_75():
    start, cpu = time.perf_counter(), time.thread_time()
    spin(random.uniform(0.0002, 0.0058))
    CLOCK.add("spend_75", time.perf_counter() - start, time.thread_time() - cpu)


def spend_25():
    start, cpu = time.perf_counter(), time.thread_time()
    spin(random.uniform(0.0002, 0.0018))
    CLOCK.add("spend_25", time.perf_counter() - start, time.thread_time() - cpu)


def loop():
    while True:
        spend_75()
        spend_25()
        CLOCK.publish(time.perf_counter())


if __name__ == "__main__":
    CLOCK = _tt.OwnClock(_tt.out_path(), ("spend_75", "spend_25"))
    _tt.ready(_tt.out_path())
    loop()
