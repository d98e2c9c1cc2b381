"""A big thread pool: 1,000 threads (or argv[2]) parked on one Event (in
pooled_wait), and the main thread spinning in spin() — a server's idle pool
beside the one thread at work.

Ready file: {"tids": [every native id, main included]}, written once every
thread is parked.
"""

import sys
import threading
import time

import _ttlib as _tt

NTHREADS = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
release = threading.Event()
parked = threading.Semaphore(0)


def pooled_wait():
    parked.release()
    release.wait()


def spin():
    x = 0
    while True:
        x += 1


def main():
    threading.stack_size(256 << 10)  # a pool's threads need no 8 MB stacks each
    for i in range(NTHREADS):
        threading.Thread(target=pooled_wait, name="pool-%04d" % i, daemon=True).start()
    for _ in range(NTHREADS):
        parked.acquire()
    time.sleep(0.2)  # the last ones into Event.wait
    _tt.ready(OUT, tids=_tt.all_native_ids())
    spin()


OUT = _tt.out_path()
main()
