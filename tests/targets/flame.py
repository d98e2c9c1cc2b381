"""A profile to look at: a 75/25 CPU split on the main thread, and a thread
parked in a function whose name and file are markup.

Main thread, forever: loop -> spend_75 (3 ms) then spend_25 (1 ms) -> spin.
Thread HOSTILE_THREAD parks in HOSTILE_NAME (code.replace), compiled from
HOSTILE_FILE, called by park().

Ready file: {"hostile_tid": ...}
"""

import threading
import time

import _ttlib as _tt

HOSTILE_NAME = "</svg><script>alert(1)</script>"
HOSTILE_FILE = "/tmp/]]></text><script>alert(2)</script>&amp;\"'.py"
HOSTILE_THREAD = "</g><b>&x"


def spin(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def spend_75():
    spin(0.003)


def spend_25():
    spin(0.001)


def loop():
    while True:
        spend_75()
        spend_25()


def make_hostile():
    namespace = {"time": time, "_tt": _tt}
    exec(compile("def f(started):\n    started.set(); time.sleep(_tt.PARK)\n",
                 HOSTILE_FILE, "exec"), namespace)
    f = namespace["f"]
    f.__code__ = f.__code__.replace(co_name=HOSTILE_NAME, co_qualname=HOSTILE_NAME)
    return f


def park(started):
    make_hostile()(started)


if __name__ == "__main__":
    started = threading.Event()
    hostile = threading.Thread(target=park, args=(started,), name=HOSTILE_THREAD, daemon=True)
    hostile.start()
    started.wait()
    _tt.ready(_tt.out_path(), hostile_tid=hostile.native_id)
    loop()
