"""A process that aborts itself (os.abort, as a C library's assert would):
a thread parked in parked(), then the main thread calls give_up(), which
calls os.abort() 0.5 s after the ready file is written.

argv: READY_FILE
"""

import os
import threading
import time

import _ttlib as _tt

OUT = _tt.out_path()
started = threading.Barrier(2)


def parked():
    started.wait()
    time.sleep(_tt.PARK)


def give_up():
    time.sleep(0.5)
    os.abort()   # the line the core must show


def main():
    threading.Thread(target=parked, daemon=True).start()
    started.wait()
    _tt.ready(OUT, abort_line=give_up.__code__.co_firstlineno + 2)
    give_up()


main()
