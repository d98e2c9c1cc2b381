"""Threads blocked inside C code that called back into Python, for the
native and Python frames in one order (dump --native).

argv: READY_FILE
  sortkey   sorted(..., key=) whose key function sleeps: Python above
            list.sort's C code, above the Python caller
  callback  libc's qsort through ctypes, its comparison a Python function
            that sleeps: Python above libffi and libc, above the caller
  init      a class whose __init__ sleeps (3.12+ enter it through a shim
            frame of their own)
The main thread parks in time.sleep().
"""

import ctypes
import threading
import time

import _ttlib as _tt

OUT = _tt.out_path()
tids = {}
started = threading.Barrier(4)


def role(name):
    tids[name] = threading.get_native_id()
    started.wait()


def slow_key(x):
    time.sleep(_tt.PARK)
    return x


def sortkey_worker():
    role("sortkey")
    sorted([2, 1], key=slow_key)


COMPARE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int),
                           ctypes.POINTER(ctypes.c_int))


def slow_compare(a, b):
    time.sleep(_tt.PARK)
    return a[0] - b[0]


def callback_worker():
    role("callback")
    libc = ctypes.CDLL(None)
    values = (ctypes.c_int * 2)(2, 1)
    libc.qsort(values, 2, ctypes.sizeof(ctypes.c_int), COMPARE(slow_compare))


class Slow:
    def __init__(self):
        time.sleep(_tt.PARK)


def init_worker():
    role("init")
    Slow()


def main():
    for fn in (sortkey_worker, callback_worker, init_worker):
        threading.Thread(target=fn, name=fn.__name__[:-7], daemon=True).start()
    started.wait()
    _tt.ready(OUT, roles=tids)
    time.sleep(_tt.PARK)


main()
