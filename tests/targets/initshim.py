"""A class instantiated 200 times, then parked inside its __init__.

Once the call site is specialised, CPython 3.13+ run Session(...) through a
call that pushes a shim frame (code named "__init__", file "__init__")
between Session.__init__ and open_session. Python's own f_back, and so
own_stack() and tracebacks, skip it: the recorded stack is what a dump must
show. 3.11 and 3.12 push no such frame.

Main thread, innermost first: Session.__init__ -> open_session -> <module>.
Ready file: {"frames": [...]}
"""

import time

import _ttlib as _tt

OUT = _tt.out_path()


class Session:
    def __init__(self, park):
        self.park = park
        if park:
            _tt.ready(OUT, frames=_tt.own_stack()); time.sleep(_tt.PARK)


def open_session(park):
    return Session(park)


for _ in range(200):
    open_session(False)
open_session(True)
