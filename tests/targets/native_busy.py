"""Threads running C code on a CPU, for native frames of running threads
(dump --native: the kernel's perf sample of their registers and stack).

argv: READY_FILE
  pbkdf2   hashlib.pbkdf2_hmac in a loop (libcrypto's PBKDF2)
  zlib     zlib.compress of 4 MiB in a loop (libz's deflate)
  sqlite   a recursive CTE counting to millions in a loop (libsqlite3),
           when the interpreter has sqlite3
The main thread parks in time.sleep().
"""

import hashlib
import os
import threading
import time
import zlib

import _ttlib as _tt

try:
    import sqlite3
except ImportError:
    sqlite3 = None

OUT = _tt.out_path()
tids = {}
started = threading.Barrier(4 if sqlite3 else 3)


def role(name):
    tids[name] = threading.get_native_id()
    started.wait()


def pbkdf2_worker():
    role("pbkdf2")
    while True:
        hashlib.pbkdf2_hmac("sha256", b"password", b"salt", 500000)


def zlib_worker():
    data = os.urandom(1 << 20) * 4
    role("zlib")
    while True:
        zlib.compress(data, 9)


def sqlite_worker():
    db = sqlite3.connect(":memory:")
    role("sqlite")
    while True:
        db.execute("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
                   "WHERE x < 3000000) SELECT sum(x) FROM c").fetchall()


def main():
    workers = [pbkdf2_worker, zlib_worker] + ([sqlite_worker] if sqlite3 else [])
    for fn in workers:
        threading.Thread(target=fn, name=fn.__name__[:-7], daemon=True).start()
    started.wait()
    _tt.ready(OUT, roles=tids)
    time.sleep(_tt.PARK)


main()
