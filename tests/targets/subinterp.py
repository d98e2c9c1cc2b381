"""Subinterpreters: a thread enters a second interpreter and parks there.

The thread "subrunner" calls _interpreters.exec() (3.11/3.12:
_xxsubinterpreters.run_string()), which runs SUB_CODE in a
new (isolated; own GIL from 3.12) interpreter on the same OS thread: that thread then
has a thread state in each interpreter, runner() below in the main one and
sub_parked() in the subinterpreter. The main thread parks too.

Ready file: {"sub_tid": N, "sub_interp": ID, "main_frames": [...]}
"""

import threading
import time

try:
    import _interpreters
    run_string = _interpreters.exec
except ImportError:  # 3.11, 3.12: the older private module, same calls
    import _xxsubinterpreters as _interpreters
    run_string = _interpreters.run_string

import _ttlib as _tt

SUB_CODE = """
import time
def sub_parked():
    time.sleep(%d)
sub_parked()
""" % _tt.PARK


def runner(box):
    # Created here, not in the main thread: 3.11/3.12 run the code on the
    # interpreter's first thread state, which carries the ids of the thread
    # that created the interpreter.
    iid = _interpreters.create()
    box.append(iid)
    run_string(iid, SUB_CODE)


def main():
    box = []
    t = threading.Thread(target=runner, args=(box,), name="subrunner", daemon=True)
    t.start()
    while not box or not _interpreters.is_running(box[0]):
        time.sleep(0.001)
    _tt.ready(OUT, sub_tid=t.native_id, sub_interp=int(box[0]), main_frames=_tt.own_stack()); time.sleep(_tt.PARK)


OUT = _tt.out_path()
main()
