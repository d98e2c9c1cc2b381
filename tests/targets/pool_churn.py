"""A pool of 500 threads (or argv[2]) parked on one Event while others come
and go at about 1,000 a second (started in batches and joined), the main
thread parked.

Ready file: {"frames": [...main thread...], "churn_per_s": measured rate}
"""

import sys
import time

import _ttlib as _tt

POOL = int(sys.argv[2]) if len(sys.argv) > 2 else 500


def short():
    sum(range(100))


def parked_main():
    _tt.park_pool(POOL)
    # four churners, 5 threads a batch, 10 ms between: about 1,500 a second
    rate = _tt.Churn(short, churners=4, batch=5, pause=0.01).start(measure=0.5)
    _tt.ready(OUT, frames=_tt.own_stack(), churn_per_s=rate); time.sleep(_tt.PARK)


OUT = _tt.out_path()
parked_main()
