"""A parked main thread, a parked worker ("idle") and a worker ("brief")
that ends BRIEF seconds after the ready file is written (argv[2], default
5): nothing takes its slot after it, so its row and Tab's stops must go by
themselves.

Ready file: {"idle_tid": native id, "brief_tid": native id}
"""

import sys
import threading
import time

import _ttlib as _tt

BRIEF = float(sys.argv[2]) if len(sys.argv) > 2 else 5.0


def idle(started, ids):
    ids["idle"] = threading.get_native_id()
    started.release()
    time.sleep(_tt.PARK)


def brief(started, ids, go):
    ids["brief"] = threading.get_native_id()
    started.release()
    go.wait()
    time.sleep(BRIEF)


def main():
    started, go, ids = threading.Semaphore(0), threading.Event(), {}
    threading.Thread(target=idle, args=(started, ids), name="idle", daemon=True).start()
    threading.Thread(target=brief, args=(started, ids, go), name="brief").start()
    started.acquire()
    started.acquire()
    _tt.ready(OUT, idle_tid=ids["idle"], brief_tid=ids["brief"])
    go.set()
    time.sleep(_tt.PARK)


OUT = _tt.out_path()
main()
