"""A hot loop run through code no file holds: perf trampolines or the JIT.

argv: READY_FILE MODE
  perf   sys.activate_stack_trampoline("perf") (3.12+): each Python call
         goes through a trampoline in anonymous memory, named in
         /tmp/perf-PID.map
  jit    the JIT (3.14+), turned on by PYTHON_JIT=1: the script runs itself
         again with it when it is off (the test's -E ignores the variable)

Ready file: {"trampoline": bool, "jit": bool} (what is on).
"""

import os
import sys

import _ttlib as _tt

OUT = _tt.out_path()
MODE = sys.argv[2]
jit = getattr(sys, "_jit", None)

if MODE == "jit" and jit and jit.is_available() and not jit.is_enabled() \
        and "TT_JITCODE_AGAIN" not in os.environ:
    env = dict(os.environ, PYTHON_JIT="1", TT_JITCODE_AGAIN="1")
    os.execve(sys.executable, [sys.executable, "-s", "-B", "-X", "utf8"] + sys.argv, env)
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
          jit=bool(jit and jit.is_enabled()))
outer()
