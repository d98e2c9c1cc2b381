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
import time

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
    return frames_from(sys._getframe(1 + skip))


def frames_from(frame):
    """A frame object's stack outwards, as own_stack gives it."""
    frames = []
    while frame is not None:
        code = frame.f_code
        frames.append({"func": code.co_qualname, "file": code.co_filename,
                       "line": frame.f_lineno})
        frame = frame.f_back
    return frames


def greenlet_stacks():
    """The process's own view of its greenlets that have not finished:
    from gc.get_objects(), each one's id, class, parent and gr_frame stack
    (empty for the one running)."""
    import gc
    import greenlet
    found = []
    for o in gc.get_objects():
        if isinstance(o, greenlet.greenlet) and not o.dead:
            found.append({"id": id(o), "type": type(o).__name__,
                          "frames": frames_from(o.gr_frame),
                          "parent": id(o.parent) if o.parent is not None else 0})
    return found


def write_json(path, record):
    """Write *record* to *path* atomically."""
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="ascii") as f:
        json.dump(record, f, ensure_ascii=True)
    os.rename(tmp, path)


def thread_record():
    """{"tid": native id, "frames": caller's stack} for the calling thread."""
    return {"tid": threading.get_native_id(), "frames": own_stack(skip=1)}


def all_native_ids():
    """Native ids of every live thread, main thread included."""
    return sorted(t.native_id for t in threading.enumerate())


def jit_on():
    """(whether the JIT (3.14+) runs this script, why not when it is built
    in but cannot be turned on, else ""). Where it is available but off,
    the script runs again under PYTHON_JIT=1 (the tests' -E ignores the
    variable); the second run never tries again. An embedded interpreter
    (sys.executable is its host or library) cannot be run again."""
    jit = getattr(sys, "_jit", None)
    if not jit or not jit.is_available():
        return False, "the JIT is not built into this Python"
    if not jit.is_enabled() and "TT_JIT_AGAIN" not in os.environ:
        if not os.path.basename(sys.executable).startswith("python"):
            return False, "an embedded Python (%s) cannot be run again under PYTHON_JIT=1" \
                % sys.executable
        env = dict(os.environ, PYTHON_JIT="1", TT_JIT_AGAIN="1")
        os.execve(sys.executable, [sys.executable, "-s", "-B", "-X", "utf8"] + sys.argv, env)
    return jit.is_enabled(), ""


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


class OwnClock:
    """The time a target spends in each of its functions, measured by itself
    (wall: perf_counter, CPU: thread_time) and published atomically, at most
    every 100 ms, in READY.times as {"wall": {name: s}, "cpu": {name: s}}:
    what a test compares a sampled split with."""

    PERIOD = 0.1

    def __init__(self, ready_path, names):
        self.path = ready_path + ".times"
        self.wall = dict.fromkeys(names, 0.0)
        self.cpu = dict.fromkeys(names, 0.0)
        self.published = 0.0

    def add(self, name, wall, cpu):
        self.wall[name] += wall
        self.cpu[name] += cpu

    def publish(self, now):
        """Called between whole cycles, so every snapshot is consistent."""
        if now - self.published < self.PERIOD:
            return
        self.published = now
        tmp = self.path + ".tmp"
        with open(tmp, "w", encoding="ascii") as f:
            json.dump({"t": now, "wall": self.wall, "cpu": self.cpu}, f)
        os.rename(tmp, self.path)


_pool_release = threading.Event()


def pooled_wait(parked):
    """A pool thread's park: says so, then waits on the pool's Event."""
    parked.release()
    _pool_release.wait()


def park_pool(n):
    """n daemon threads, pool-0000 on, parked in pooled_wait on one Event
    (a thread pool idle between jobs); returns once every one has started
    waiting. Later threads get 256 KB stacks: a pool's need no 8 MB each."""
    threading.stack_size(256 << 10)
    parked = threading.Semaphore(0)
    for i in range(n):
        threading.Thread(target=pooled_wait, args=(parked,), name="pool-%04d" % i,
                         daemon=True).start()
    for _ in range(n):
        parked.acquire()


class Churn:
    """Short-lived threads, forever: each of `churners` threads starts
    `batch` threads running work(*args), joins them and pauses `pause` s.
    `started` counts the threads started so far."""

    def __init__(self, work, args=(), churners=2, batch=4, pause=0.01):
        self.work, self.args = work, args
        self.churners, self.batch, self.pause = churners, batch, pause
        self.started = 0

    def _churn(self):
        while True:
            threads = [threading.Thread(target=self.work, args=self.args)
                       for _ in range(self.batch)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            self.started += self.batch
            time.sleep(self.pause)

    def start(self, measure=0.2):
        """Start the churners; the rate (threads/s) over their first `measure` s."""
        for _ in range(self.churners):
            threading.Thread(target=self._churn, name="churner", daemon=True).start()
        before, t0 = self.started, time.monotonic()
        time.sleep(measure)
        return round((self.started - before) / (time.monotonic() - t0))
