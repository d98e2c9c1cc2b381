"""A big thread pool: 1,000 threads (or argv[2]) parked on one Event (in
pooled_wait), and the main thread spinning in spin() — a server's idle pool
beside the one thread at work.

Ready file: {"tids": [every native id, main included]}, written once every
thread is parked.
"""

import sys
import time

import _ttlib as _tt

NTHREADS = int(sys.argv[2]) if len(sys.argv) > 2 else 1000


def spin():
    x = 0
    while True:
        x += 1


def main():
    _tt.park_pool(NTHREADS)
    time.sleep(0.2)  # the last ones into Event.wait
    _tt.ready(OUT, tids=_tt.all_native_ids())
    spin()


OUT = _tt.out_path()
main()
