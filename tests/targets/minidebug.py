"""Two threads blocked in a static C function of a library without .symtab:
its name only in the MiniDebugInfo (.gnu_debugdata) of one copy.

argv: READY_FILE LIBDIR
  mini  LIBDIR/mini.so: stripped, with .gnu_debugdata naming tt_static_wait
  bare  LIBDIR/bare.so: the same code stripped bare (no name for it)
Each calls tt_enter(), which calls the static tt_static_wait(), which waits
in pause(). The main thread parks in time.sleep().
"""

import ctypes
import os
import sys
import threading
import time

import _ttlib as _tt

OUT = _tt.out_path()
LIBDIR = sys.argv[2]
tids = {}
started = threading.Barrier(3)


def worker(name):
    lib = ctypes.CDLL(os.path.join(LIBDIR, name + ".so"))
    tids[name] = threading.get_native_id()
    started.wait()
    lib.tt_enter(1)


def main():
    for name in ("mini", "bare"):
        threading.Thread(target=worker, args=(name,), name=name, daemon=True).start()
    started.wait()
    _tt.ready(OUT, roles=tids)
    time.sleep(_tt.PARK)


main()
