"""Shared helpers for the tachyon-top functional-test targets.

A target records what it knows about itself (its own stacks, thread ids,
interpreter version), hands that to the test through a JSON "ready file"
and then parks forever in time.sleep(), a C function, so the innermost
Python frame stays exactly where the record says it is.

Nothing in here may be on the stack while a target is parked: callers put
the recording, the report and the sleep on one source line, e.g.

    _tt.ready(OUT, frames=_tt.own_stack()); time.sleep(PARK)

so the parked frame's current line is the line that recorded it.
"""

import json
import os
import platform
import sys
import threading

PARK = 10**6  # seconds: "forever" for a test run


def out_path():
    """The ready-file path the test passed as argv[1]."""
    if len(sys.argv) < 2:
        sys.exit("usage: %s READY_FILE" % sys.argv[0])
    return sys.argv[1]


def own_stack(skip=0):
    """The caller's stack, innermost first, as the test expects it.

    Each frame is {"func": co_qualname, "file": co_filename, "line": f_lineno}.
    skip drops that many more frames (for helpers calling own_stack).
    """
    frame = sys._getframe(1 + skip)
    frames = []
    while frame is not None:
        code = frame.f_code
        frames.append({"func": code.co_qualname, "file": code.co_filename,
                       "line": frame.f_lineno})
        frame = frame.f_back
    return frames


def thread_record():
    """{"tid": native id, "frames": caller's stack} for the calling thread."""
    return {"tid": threading.get_native_id(), "frames": own_stack(skip=1)}


def all_native_ids():
    """Native ids of every live thread, main thread included."""
    return sorted(t.native_id for t in threading.enumerate())


def ready(path, **facts):
    """Atomically publish the ready file: pid, python version and *facts*."""
    record = {"pid": os.getpid(),
              "python": platform.python_version(),
              "main_tid": threading.main_thread().native_id}
    record.update(facts)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="ascii") as f:
        json.dump(record, f, ensure_ascii=True)  # \u-escapes every odd char
    os.rename(tmp, path)
