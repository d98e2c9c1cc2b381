"""Threads parked in the kernel on one CPU, each knowing when it parked.

argv: READY_FILE CPU
Every thread, main included, pins itself to CPU and records
time.monotonic() (CLOCK_MONOTONIC, the same clock for the test and inside
the root) right before it blocks:
  recv    conn.recv() on one end of a socket pair
  lock    Lock.acquire() of a lock the main thread holds (futex)
  select  select.select() on the read end of a pipe
  sleep   time.sleep()
The main thread holds the lock and parks in time.sleep().  The ready file
has {"cpu", "roles": {name: tid}, "blocked_at": {name: monotonic s}}.
"""

import os
import select
import socket
import sys
import threading
import time

import _ttlib as _tt

OUT = _tt.out_path()
CPU = int(sys.argv[2])

tids = {}
blocked_at = {}
started = threading.Barrier(5)


def park(name):
    os.sched_setaffinity(0, {CPU})
    tids[name] = threading.get_native_id()
    started.wait()
    # Let the other threads reach their calls too, then note the time.
    time.sleep(0.05)
    blocked_at[name] = time.monotonic()


def recv_worker(conn):
    park("recv")
    conn.recv(1)


def lock_worker(lock):
    park("lock")
    lock.acquire()


def select_worker(r):
    park("select")
    select.select([r], [], [])


def sleep_worker():
    park("sleep")
    time.sleep(_tt.PARK)


def main():
    os.sched_setaffinity(0, {CPU})
    a, b = socket.socketpair()
    r, w = os.pipe()
    lock = threading.Lock()
    lock.acquire()
    workers = [(recv_worker, a), (lock_worker, lock), (select_worker, r), (sleep_worker,)]
    for fn, *args in workers:
        threading.Thread(target=fn, args=args, name=fn.__name__[:-7], daemon=True).start()
    started.wait()
    while len(blocked_at) < len(workers):
        time.sleep(0.01)
    keep = [b, w]
    at = time.monotonic()
    _tt.ready(OUT, cpu=CPU, roles=tids, blocked_at=dict(blocked_at, main=at)); time.sleep(_tt.PARK)
    return keep


main()
