"""Deep recursion: park about 1000 frames deep, alternating two methods.

Ready file: {"frames": [...]} — the parked thread's own stack, innermost first.
"""

import sys
import time

import _ttlib as _tt

DEPTH = 1000  # frames of Deep.ping/Deep.pong, on top of <module> and run()


class Deep:
    def ping(self, n):
        if n <= 1:
            _tt.ready(OUT, frames=_tt.own_stack()); time.sleep(_tt.PARK)
        return self.pong(n - 1)

    def pong(self, n):
        return self.ping(n - 1)


def run():
    Deep().ping(DEPTH)


OUT = _tt.out_path()
sys.setrecursionlimit(DEPTH + 500)
run()
