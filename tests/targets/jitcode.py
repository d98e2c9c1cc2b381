"""A hot loop run through code no file holds: perf trampolines or the JIT.

argv: READY_FILE MODE
  perf   sys.activate_stack_trampoline("perf") (3.12+): each Python call
         goes through a trampoline in anonymous memory, named in
         /tmp/perf-PID.map
  jit    the JIT (3.14+), turned on by PYTHON_JIT=1: the script runs itself
         again with it when it is off (the test's -E ignores the variable)

Ready file: {"trampoline": bool, "jit": bool} (what is on).
"""

import sys

import _ttlib as _tt

OUT = _tt.out_path()
MODE = sys.argv[2]
JIT = MODE == "jit" and _tt.jit_on()[0]
if MODE == "perf" and hasattr(sys, "activate_stack_trampoline"):
    try:
        sys.activate_stack_trampoline("perf")
    except ValueError:
        pass


def inner(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def outer():
    while True:
        inner(10000)


_tt.ready(OUT,
          trampoline=bool(getattr(sys, "is_stack_trampoline_active", lambda: False)()),
          jit=JIT)
outer()
