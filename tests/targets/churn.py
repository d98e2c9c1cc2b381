"""Thread churn: short-lived threads start and end continuously (several
hundred per second) while the main thread is parked.

Ready file: {"frames": [...main thread...], "churn_per_s": measured rate}
"""

import time

import _ttlib as _tt


def worker(n):
    sum(range(n))  # a little work, then the thread exits


def parked_main():
    # two churners, 4 workers a batch, 10 ms between: hundreds per second
    rate = _tt.Churn(worker, (200,), churners=2, batch=4, pause=0.01).start()
    _tt.ready(OUT, frames=_tt.own_stack(), churn_per_s=rate); time.sleep(_tt.PARK)


OUT = _tt.out_path()
parked_main()
