"""Two threads burning CPU in C libraries, about 75/25, for record --native:
the share of samples in each library against the CPU time the threads had.

argv: READY_FILE
  pbkdf2   hashlib.pbkdf2_hmac in a loop, all the time (libcrypto)
  zlib     zlib.compress for a while, then asleep twice as long (libz)
The main thread parks in time.sleep().
"""

import hashlib
import os
import threading
import time
import zlib

import _ttlib as _tt

OUT = _tt.out_path()
tids = {}
started = threading.Barrier(3)


def role(name):
    tids[name] = threading.get_native_id()
    started.wait()


def pbkdf2_worker():
    role("pbkdf2")
    while True:
        hashlib.pbkdf2_hmac("sha256", b"password", b"salt", 200000)


def zlib_worker():
    data = os.urandom(1 << 18)
    role("zlib")
    while True:
        t0 = time.thread_time()
        zlib.compress(data, 9)
        time.sleep(2 * (time.thread_time() - t0))


def main():
    for fn in (pbkdf2_worker, zlib_worker):
        threading.Thread(target=fn, name=fn.__name__[:-7], daemon=True).start()
    started.wait()
    _tt.ready(OUT, roles=tids)
    time.sleep(_tt.PARK)


main()
