"""A very deep stack next to ordinary threads: the main thread recurses
DEPTH frames (argv[2], default 20000) through Deep.ping/Deep.pong and parks;
two threads park in shallow functions of their own.

Ready file: {"deep": {"tid", "frames": innermost 50 frames, "depth": all},
             "threads": [{"tid", "frames"}, ...]  (the two ordinary threads)}
"""

import sys
import threading
import time

import _ttlib as _tt

DEPTH = int(sys.argv[2]) if len(sys.argv) > 2 else 20000


def ordinary_a(records):
    records.append(_tt.thread_record()); time.sleep(_tt.PARK)


def ordinary_b(records):
    records.append(_tt.thread_record()); time.sleep(_tt.PARK)


class Deep:
    def ping(self, n):
        if n <= 1:
            frames = _tt.own_stack(); _tt.ready(OUT, threads=RECORDS, deep={"tid": threading.get_native_id(), "frames": frames[:50], "depth": len(frames)}); time.sleep(_tt.PARK)
        return self.pong(n - 1)

    def pong(self, n):
        return self.ping(n - 1)


OUT = _tt.out_path()
RECORDS = []
for fn in (ordinary_a, ordinary_b):
    threading.Thread(target=fn, args=(RECORDS,), daemon=True).start()
while len(RECORDS) < 2:
    time.sleep(0.005)
sys.setrecursionlimit(DEPTH + 500)
Deep().ping(DEPTH)
