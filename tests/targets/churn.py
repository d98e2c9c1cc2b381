"""Thread churn: short-lived threads start and end continuously (several
hundred per second) while the main thread is parked.

Ready file: {"frames": [...main thread...], "churn_per_s": measured rate}
"""

import threading
import time

import _ttlib as _tt

CHURNERS = 2  # threads that keep spawning short-lived workers
BATCH = 4     # workers started per batch, joined before the next batch
PAUSE = 0.01  # s between batches: keeps the rate in the hundreds per second

started = 0   # workers started so far (only ever incremented by churners)


def worker(n):
    sum(range(n))  # a little work, then the thread exits


def churn():
    global started
    while True:
        batch = [threading.Thread(target=worker, args=(200,)) for _ in range(BATCH)]
        for t in batch:
            t.start()
        for t in batch:
            t.join()
        started += BATCH
        time.sleep(PAUSE)


def parked_main():
    for _ in range(CHURNERS):
        threading.Thread(target=churn, name="churner", daemon=True).start()
    before, t0 = started, time.monotonic()
    time.sleep(0.2)
    rate = (started - before) / (time.monotonic() - t0)
    _tt.ready(OUT, frames=_tt.own_stack(), churn_per_s=round(rate)); time.sleep(_tt.PARK)


OUT = _tt.out_path()
parked_main()
