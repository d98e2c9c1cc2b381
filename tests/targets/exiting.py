"""A target that goes away while being read.

usage: exiting.py READY_FILE DELAY MODE
Busy daemon threads keep their stacks changing; DELAY seconds after the
ready file is written the process ends according to MODE:
    return  main() returns: interpreter finalisation with threads running
    _exit   os._exit(0): no finalisation
    park    never exits by itself (the test kills it)

Ready file: {"tids": [...]}
"""

import os
import sys
import threading
import time

import _ttlib as _tt

BUSY_THREADS = 4


def busy(depth):
    if depth:
        return busy(depth - 1)
    while True:
        "".join(str(i) for i in range(100))


def main(delay, mode):
    for i in range(BUSY_THREADS):
        threading.Thread(target=busy, args=(20 + 10 * i,), daemon=True).start()
    _tt.ready(OUT, tids=_tt.all_native_ids())
    if mode == "park":
        delay = _tt.PARK
    time.sleep(delay)
    if mode == "_exit":
        os._exit(0)


OUT = _tt.out_path()
main(float(sys.argv[2]), sys.argv[3])
