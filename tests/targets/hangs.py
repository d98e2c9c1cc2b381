"""Threads that hang one after another: N threads (argv[2], default 3)
wait for their turn; after SIGUSR1 one goes every GAP seconds (argv[3],
default 1.5) into hang() and sleeps there for good: each a thread stuck
in a place no thread was first seen in (by a watcher attached before the
signal). Every other wait is where its thread sits from the start.

Ready file: {"tids": [native ids of the N threads]}
"""

import signal
import sys
import threading

import _ttlib as _tt

N = int(sys.argv[2]) if len(sys.argv) > 2 else 3
GAP = float(sys.argv[3]) if len(sys.argv) > 3 else 1.5


def hang():
    threading.Event().wait()


def worker(turn, started, tids):
    tids.append(threading.get_native_id())
    started.release()
    turn.wait()
    hang()


def main():
    started = threading.Semaphore(0)
    turns = [threading.Event() for _ in range(N)]
    tids = []
    for turn in turns:
        threading.Thread(target=worker, args=(turn, started, tids), daemon=True).start()
    for _ in range(N):
        started.acquire()
    go = threading.Event()
    tick = threading.Event()
    signal.signal(signal.SIGUSR1, lambda *_: go.set())
    _tt.ready(_tt.out_path(), tids=tids)
    released = 0
    while True:
        tick.wait(GAP)   # the main thread's one place, before the signal and after
        if go.is_set() and released < N:
            turns[released].set()
            released += 1


main()
