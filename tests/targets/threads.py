"""Many threads, each parked in its own function (park_00 .. park_31).

Ready file: {"tids": [every native id, main included],
             "threads": [{"tid": ..., "frames": [...]}, ...]}  (main included)
"""

import threading
import time

import _ttlib as _tt

NTHREADS = 32
GENERATED = "<generated park functions>"  # co_filename of park_NN


def make_park_functions(n):
    """park_00 .. park_NN, distinct code objects, each parking on line 2*i+2."""
    lines = []
    for i in range(n):
        lines.append("def park_%02d(records):" % i)
        lines.append("    records.append(_tt.thread_record()); time.sleep(_tt.PARK)")
    namespace = {"_tt": _tt, "time": time}
    exec(compile("\n".join(lines) + "\n", GENERATED, "exec"), namespace)
    return [namespace["park_%02d" % i] for i in range(n)]


def main():
    records = []  # list.append is atomic: the threads report here
    for i, park in enumerate(make_park_functions(NTHREADS)):
        threading.Thread(target=park, args=(records,), name="park-%02d" % i,
                         daemon=True).start()
    while len(records) < NTHREADS:
        time.sleep(0.005)
    records.append(_tt.thread_record()); _tt.ready(OUT, tids=_tt.all_native_ids(), threads=records); time.sleep(_tt.PARK)


OUT = _tt.out_path()
main()
