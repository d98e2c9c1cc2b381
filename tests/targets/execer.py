"""argv: READY_FILE OTHER_PYTHON. Two children forked from this process,
sampled as forks, then exec: one another Python version (running
after_exec), one a non-Python program (sleep)."""
import os
import sys
import time

import _ttlib as _tt


def before_exec(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def parent_loop():
    while True:
        time.sleep(0.01)


def main():
    out, other = sys.argv[1], sys.argv[2]
    py = os.fork()
    if py == 0:
        before_exec(3)
        os.execv(other, [other, "-c", "import time\ndef after_exec():\n"
                 "    while True: time.time()\nafter_exec()\n"])
    sh = os.fork()
    if sh == 0:
        before_exec(3)
        os.execv("/bin/sleep", ["sleep", "600"])
    _tt.ready(out, python_child=py, other_child=sh)
    parent_loop()


main()
