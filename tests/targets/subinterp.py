"""Subinterpreters: a thread enters a second interpreter and parks there.

The thread "subrunner" calls _interpreters.exec(), which runs SUB_CODE in a
new (isolated, own-GIL) interpreter on the same OS thread: that thread then
has a thread state in each interpreter, runner() below in the main one and
sub_parked() in the subinterpreter. The main thread parks too.

Ready file: {"sub_tid": N, "sub_interp": ID, "main_frames": [...]}
"""

import threading
import time

import _interpreters

import _ttlib as _tt

SUB_CODE = """
import time
def sub_parked():
    time.sleep(%d)
sub_parked()
""" % _tt.PARK


def runner(iid):
    _interpreters.exec(iid, SUB_CODE)


def main():
    iid = _interpreters.create()
    t = threading.Thread(target=runner, args=(iid,), name="subrunner", daemon=True)
    t.start()
    while not _interpreters.is_running(iid):
        time.sleep(0.001)
    _tt.ready(OUT, sub_tid=t.native_id, sub_interp=iid, main_frames=_tt.own_stack()); time.sleep(_tt.PARK)


OUT = _tt.out_path()
main()
