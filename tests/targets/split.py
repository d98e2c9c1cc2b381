"""CPU time split by design: 75% in spend_75, 25% in spend_25.

Ready file: {"jit": bool, "jit_note": why not} (the JIT, below); each
function's own wall time in READY.times (_tt.OwnClock),
the truth a sampled split is compared with. SIGUSR1 makes spend_75 twice
as slow (6 ms to spend_25's 1 ms: 86/14), for a before/after comparison.
An argument "jit" runs it under the JIT (3.14+) where Python has one.
"""

import signal
import sys
import time

import _ttlib as _tt


def spin(seconds):
    """Run for `seconds` of this thread's CPU time."""
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def spend_75():
    start, cpu = time.perf_counter(), time.thread_time()
    spin(0.003 * SLOWER)
    CLOCK.add("spend_75", time.perf_counter() - start, time.thread_time() - cpu)


def spend_25():
    start, cpu = time.perf_counter(), time.thread_time()
    spin(0.001)
    CLOCK.add("spend_25", time.perf_counter() - start, time.thread_time() - cpu)


def loop():
    while True:
        spend_75()
        spend_25()
        CLOCK.publish(time.perf_counter())


SLOWER = 1.0


def slow_down(signum, frame):
    global SLOWER
    SLOWER = 2.0


if __name__ == "__main__":
    JIT, JIT_NOTE = _tt.jit_on() if sys.argv[2:] == ["jit"] else (False, "")
    signal.signal(signal.SIGUSR1, slow_down)
    CLOCK = _tt.OwnClock(_tt.out_path(), ("spend_75", "spend_25"))
    _tt.ready(_tt.out_path(), jit=JIT, jit_note=JIT_NOTE)
    loop()
