"""Threads parked in the kernel, each on something tachyon-top should name.

argv: READY_FILE UNIX_NAME
  recv    conn.recv() on an accepted TCP connection (both ports recorded)
  accept  accept() on a listening TCP socket
  select  select.select() on the read end of a pipe
  lock    Lock.acquire() of a lock the main thread holds (futex)
  sleep   time.sleep()
  fifo    os.read() of a FIFO with a writer that never writes
  wait    subprocess.Popen(["sleep", ...]).wait()
  unix    accept() on a unix socket named UNIX_NAME (escape sequences)
  busy    a Python loop that never blocks
The main thread holds the lock and parks in time.sleep(). 127.0.0.1 only.
"""

import os
import select
import socket
import subprocess
import sys
import threading
import time

import _ttlib as _tt

OUT = _tt.out_path()
HERE = os.path.dirname(os.path.abspath(OUT))
UNIX_PATH = os.path.join(HERE, sys.argv[2])
FIFO = os.path.join(HERE, "fifo")

tids = {}
facts = {}
started = threading.Barrier(10)


def role(name):
    tids[name] = threading.get_native_id()
    started.wait()


def recv_worker(conn):
    role("recv")
    conn.recv(1)


def accept_worker(sock):
    role("accept")
    sock.accept()


def select_worker(r):
    role("select")
    select.select([r], [], [])


def lock_worker(lock):
    role("lock")
    lock.acquire()


def sleep_worker():
    role("sleep")
    time.sleep(_tt.PARK)


def fifo_worker(fd):
    role("fifo")
    os.read(fd, 1)


def wait_worker(child):
    role("wait")
    child.wait()


def unix_worker(sock):
    role("unix")
    sock.accept()


def busy_worker():
    role("busy")
    n = 0
    while True:
        n += 1


def main():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    client = socket.create_connection(server.getsockname())
    conn, _ = server.accept()
    facts["recv_local"] = "127.0.0.1:%d" % conn.getsockname()[1]
    facts["recv_peer"] = "127.0.0.1:%d" % client.getsockname()[1]
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    facts["accept_local"] = "127.0.0.1:%d" % listener.getsockname()[1]
    r, w = os.pipe()
    lock = threading.Lock()
    lock.acquire()
    os.mkfifo(FIFO)
    fifo_r = os.open(FIFO, os.O_RDONLY | os.O_NONBLOCK)
    fifo_w = os.open(FIFO, os.O_WRONLY)
    os.set_blocking(fifo_r, True)
    child = subprocess.Popen(["sleep", str(_tt.PARK)])
    facts["child"] = child.pid
    usock = socket.socket(socket.AF_UNIX)
    usock.bind(UNIX_PATH)
    usock.listen(1)
    facts["unix_path"] = UNIX_PATH
    facts["fifo"] = FIFO
    workers = [(recv_worker, conn), (accept_worker, listener), (select_worker, r),
               (lock_worker, lock), (sleep_worker,), (fifo_worker, fifo_r),
               (wait_worker, child), (unix_worker, usock), (busy_worker,)]
    keep = [client, w, fifo_w]
    for fn, *args in workers:
        threading.Thread(target=fn, args=args, name=fn.__name__[:-7], daemon=True).start()
    started.wait()
    _tt.ready(OUT, roles=tids, **facts); time.sleep(_tt.PARK)
    return keep


main()
