"""A pool of 500 threads parked on one Event while others come and go at
about 1,000 a second (started in batches and joined), the main thread
parked.

Ready file: {"frames": [...main thread...], "churn_per_s": measured rate}
"""

import threading
import time

import _ttlib as _tt

POOL = 500
CHURNERS = 4
BATCH = 5     # threads started per batch, joined before the next
PAUSE = 0.01  # s between batches

release = threading.Event()
parked = threading.Semaphore(0)
started = 0   # churned threads so far (each churner adds to it)


def pooled_wait():
    parked.release()
    release.wait()


def short():
    sum(range(100))


def churn():
    global started
    while True:
        batch = [threading.Thread(target=short) for _ in range(BATCH)]
        for t in batch:
            t.start()
        for t in batch:
            t.join()
        started += BATCH
        time.sleep(PAUSE)


def parked_main():
    threading.stack_size(256 << 10)
    for i in range(POOL):
        threading.Thread(target=pooled_wait, name="pool-%03d" % i, daemon=True).start()
    for _ in range(POOL):
        parked.acquire()
    for _ in range(CHURNERS):
        threading.Thread(target=churn, name="churner", daemon=True).start()
    before, t0 = started, time.monotonic()
    time.sleep(0.5)
    rate = (started - before) / (time.monotonic() - t0)
    _tt.ready(OUT, frames=_tt.own_stack(), churn_per_s=round(rate)); time.sleep(_tt.PARK)


OUT = _tt.out_path()
parked_main()
