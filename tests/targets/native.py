"""Threads blocked inside C code that called back into Python, for the
native and Python frames in one order (dump --native).

argv: READY_FILE
  sortkey   sorted(..., key=) whose key function sleeps: Python above
            list.sort's C code, above the Python caller
  callback  libc's qsort through ctypes, its comparison a Python function
            that sleeps: Python above libffi and libc, above the caller
  init      a class whose __init__ sleeps (3.12+ enter it through a shim
            frame of their own)
  deleted   zlib's inflateBack, from a copy of libz (no .symtab: names from
            .dynsym) deleted once loaded, its input a Python function that
            sleeps: the library is unwound from what the process mapped
The main thread parks in time.sleep().
"""

import ctypes
import ctypes.util
import os
import shutil
import threading
import time

import _ttlib as _tt

OUT = _tt.out_path()
tids = {}
started = threading.Barrier(5)


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


IN_FUNC = ctypes.CFUNCTYPE(ctypes.c_uint, ctypes.c_void_p,
                           ctypes.POINTER(ctypes.POINTER(ctypes.c_ubyte)))
OUT_FUNC = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_ubyte),
                            ctypes.c_uint)


def slow_input(desc, buf):
    time.sleep(_tt.PARK)
    return 0


def deleted_worker(libz):
    role("deleted")
    stream = ctypes.create_string_buffer(112)          # z_stream on x86-64
    window = ctypes.create_string_buffer(1 << 15)
    libz.zlibVersion.restype = ctypes.c_char_p
    libz.inflateBackInit_(stream, 15, window, libz.zlibVersion(), 112)
    libz.inflateBack(stream, IN_FUNC(slow_input), None,
                     OUT_FUNC(lambda desc, buf, n: 0), None)


def load_deleted_libz():
    """A copy of libz, loaded and then deleted from disk."""
    here = os.path.dirname(os.path.abspath(OUT))
    copy = os.path.join(here, "libz-copy.so.1")
    shutil.copy(os.path.realpath("/usr/lib/x86_64-linux-gnu/libz.so.1")
                if os.path.exists("/usr/lib/x86_64-linux-gnu/libz.so.1")
                else ctypes.util.find_library("z"), copy)
    libz = ctypes.CDLL(copy)
    os.unlink(copy)
    return libz


def main():
    libz = load_deleted_libz()
    threading.Thread(target=deleted_worker, args=(libz,), name="deleted", daemon=True).start()
    for fn in (sortkey_worker, callback_worker, init_worker):
        threading.Thread(target=fn, name=fn.__name__[:-7], daemon=True).start()
    started.wait()
    _tt.ready(OUT, roles=tids)
    time.sleep(_tt.PARK)


main()
