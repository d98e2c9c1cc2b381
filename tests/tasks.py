#!/usr/bin/env python3
"""Tests for `tachyon-top dump --tasks` (asyncio tasks), against real interpreters.

The oracle is CPython's own `_remote_debugging.RemoteUnwinder(pid)
.get_all_awaited_by()`, run by the same interpreter inside the root against
the same parked target: both must agree on task ids, names, awaited-by sets
and coroutine stacks (function names and lines). Further scenarios: 10,000
parked tasks (and what one read costs), tasks created and finished at a high
rate while dumping, attaching before `import asyncio`, a program that never
imports it, and Python 3.13 (a one-line note). Output is TAP.

Environment as for tests/functional.py (TT_ROOT, TT_BIN, CI); TT_TASK_INTERPS
(default "python3.14 python3.15 python3.14d python3.15d"), else TT_INTERPS
filtered to python3.14/3.15 builds (none: only the once-only scenarios run).
"""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import functional as ft  # noqa: E402
import sampler  # noqa: E402
from functional import Fail, Tap, expect, show  # noqa: E402

TARGETS = os.path.join(ft.HERE, "targets")
DEFAULT = "python3.14 python3.15 python3.14d python3.15d"
EPOLL_SYSCALLS = {232, 281, 441}   # epoll_wait, epoll_pwait, epoll_pwait2 (x86-64)
BULK = 10000

ORACLE = r"""
import _remote_debugging, json, sys
res = _remote_debugging.RemoteUnwinder(int(sys.argv[1])).get_all_awaited_by()
def frame(f):
    line = getattr(f, "lineno", None)
    if line is None:
        line = f.location.lineno if getattr(f, "location", None) else -1
    return [f.funcname, line]
out = []
for info in res:
    for t in info.awaited_by:
        stack = []
        for coro in t.coroutine_stack:
            stack += [frame(f) for f in coro.call_stack]
        out.append({"thread": info.thread_id, "id": t.task_id, "name": t.task_name,
                    "frames": stack, "awaited_by": sorted(c.task_name for c in t.awaited_by)})
print(json.dumps(out))
"""


class Target:
    """A script from tests/targets under *interp* (in the root, or a host-*
    or pyenv-* one of tests/interps.py on the host, given the same scratch
    files by their host paths); waits for its ready file and (with
    *parked_tids*) for its loop threads to sit in epoll. *pythonpath*, a
    root path, is put before the interpreter's own (no -E then)."""

    def __init__(self, interp, script, *args, pythonpath=None):
        self.interp, self.script, self.args = interp, script, args
        self.pythonpath = pythonpath
        self.dir = tempfile.mkdtemp(prefix="tasks-", dir=ft.in_root("/tmp"))
        self.rdir = "/" + os.path.relpath(self.dir, ft.ROOT)
        self.ready = os.path.join(self.rdir, "ready.json")
        self.proc = None

    def __enter__(self):
        shutil.copy(os.path.join(TARGETS, self.script), self.dir)
        flags = ["-s", "-B"] if self.pythonpath else ["-E", "-s", "-B"]
        argv = ft.matrix.command(self.interp, self.rdir, None,
                                 flags + [os.path.join(self.rdir, self.script), self.ready] +
                                 list(self.args), chroot=ft.CHROOT)
        env = dict(ft.TARGET_ENV)
        if self.pythonpath:
            on_host = ft.matrix.get(self.interp).on_host
            env["PYTHONPATH"] = ft.in_root(self.pythonpath) if on_host else self.pythonpath
        self.err = open(os.path.join(self.dir, "stderr.txt"), "wb")
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=self.err, env=env, start_new_session=True)
        try:
            self.info = self.wait_file(self.ready)
        except BaseException:
            self.kill()
            raise
        return self

    def __exit__(self, *exc):
        self.kill()
        return False

    @property
    def pid(self):
        return self.proc.pid

    def kill(self):
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)
        self.err.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def stderr(self):
        try:
            with open(os.path.join(self.dir, "stderr.txt"), "rb") as f:
                return ["target stderr: " + line for line in
                        f.read().decode("utf-8", "replace").splitlines()[-10:]]
        except OSError:
            return []

    def wait_file(self, rpath, timeout=60):
        host = ft.in_root(rpath)
        deadline = time.monotonic() + timeout
        while not os.path.exists(host):
            if self.proc.poll() is not None:
                raise Fail("target %s exited early (%s)" % (self.script, self.proc.returncode),
                           *self.stderr())
            if time.monotonic() > deadline:
                raise Fail("target %s not ready within %d s" % (self.script, timeout),
                           *self.stderr())
            time.sleep(0.01)
        with open(host) as f:
            return json.load(f)

    def wait_epoll(self, tids, timeout=30):
        """Until every loop thread blocks in epoll: its tasks are parked."""
        deadline = time.monotonic() + timeout
        while True:
            waiting = []
            for tid in tids:
                try:
                    with open("/proc/%d/task/%d/syscall" % (self.pid, tid)) as f:
                        nr = int(f.read().split()[0])
                except (OSError, ValueError):
                    nr = -1
                if nr not in EPOLL_SYSCALLS:
                    waiting.append(tid)
            if not waiting:
                return
            if time.monotonic() > deadline:
                raise Fail("loop threads %s never blocked in epoll" % waiting, *self.stderr())
            time.sleep(0.01)


def dump_tasks(pid, *extra):
    run = ft.tachyon("dump", "-p", pid, "--tasks", *extra)
    run.expect_success()
    return run


def tasks_json(pid):
    run = dump_tasks(pid, "--json")
    ft.expect_no_control_bytes(run.out, "stdout of " + run.cmd)
    try:
        doc = json.loads(run.out.decode("utf-8"))
    except ValueError as e:
        raise Fail("dump --tasks --json is not JSON: %s" % e, *run.details())
    expect(isinstance(doc.get("tasks"), list), "no \"tasks\" list in the process object",
           *run.details())
    for t in doc["tasks"]:
        expect(set(t) >= {"id", "name", "thread", "running", "frames", "awaited_by"},
               "task entry lacks fields: %s" % show(t))
    return doc


def oracle(interp, pid):
    proc = subprocess.run([ft.CHROOT, ft.ROOT, interp, "-c", ORACLE, str(pid)],
                          capture_output=True, timeout=120)
    expect(proc.returncode == 0, "the oracle (_remote_debugging) failed",
           show(proc.stderr, 1500))
    return json.loads(proc.stdout)


def ours(doc):
    return {t["id"]: {"thread": t["thread"], "id": t["id"], "name": t["name"],
                      "frames": [[f["func"], f["line"]] for f in t["frames"]],
                      "awaited_by": sorted(t["awaited_by"])} for t in doc["tasks"]}


def compare_with_oracle(interp, pid, threads=None):
    """Ours against the oracle's; *threads*: compare only if the oracle sees
    these threads (3.14's get_all_awaited_by reads the main thread only)."""
    found = oracle(interp, pid)
    doc = tasks_json(pid)
    if threads is not None and not set(threads) <= {t["thread"] for t in found}:
        ft.Tap.emit("# %s: the oracle does not see tasks of non-main threads; "
                    "checked without it" % interp)
        return doc
    want = {t["id"]: t for t in found}
    got = ours(doc)
    expect(set(want) == set(got), "task ids differ from the oracle's",
           "only in the oracle: %s" % show([want[i]["name"] for i in set(want) - set(got)]),
           "only in ours: %s" % show([got[i]["name"] for i in set(got) - set(want)]))
    for tid, w in want.items():
        g = got[tid]
        for key in ("name", "thread", "frames", "awaited_by"):
            expect(w[key] == g[key], "task %s: %s differs from the oracle's" % (w["name"], key),
                   "oracle: " + show(w[key], 800), "ours:   " + show(g[key], 800))
    return doc


class Tmux:
    """tachyon-top's live view in a tmux pane of a private tmux server."""

    def __init__(self, *args, size=(140, 40)):
        self.sock = "tt-tasks-%d" % os.getpid()
        self.name = "tasks"
        command = " ".join([ft.BIN] + [str(a) for a in args]) + "; exec sleep 600"
        self.run("new-session", "-d", "-s", self.name, "-x", str(size[0]), "-y", str(size[1]),
                 "env", "TERM=xterm-256color", "sh", "-c", command)

    def run(self, *args):
        return subprocess.run(["tmux", "-L", self.sock] + list(args), capture_output=True,
                              text=True, timeout=20).stdout

    def screen(self):
        return self.run("capture-pane", "-p", "-t", self.name)

    def keys(self, *keys):
        self.run("send-keys", "-t", self.name, *keys)

    def wait(self, predicate, what, timeout=15):
        deadline = time.monotonic() + timeout
        while True:
            text = self.screen()
            if predicate(text):
                return text
            if time.monotonic() > deadline:
                raise Fail("no %s on the screen within %d s" % (what, timeout),
                           *["screen: " + line for line in text.splitlines()])
            time.sleep(0.1)

    def close(self):
        self.run("kill-server")


def load_server(port, stuck, fast):
    """*stuck* requests to /slow left hanging, then *fast* to /fast."""
    socks = []
    for _ in range(stuck):
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.sendall(b"GET /slow HTTP/1.1\r\nHost: localhost\r\n\r\n")
        socks.append(s)
    for _ in range(fast):
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(b"GET /fast HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            expect(b"200 OK" in s.recv(4096), "the server did not answer /fast")
    return socks


STUCK_REQUESTS = 40


def test_aiohttp():
    """Debian's aiohttp, a handler stuck on its upstream, under client load."""
    with Target("python3", "tasks_aiohttp.py") as t:
        socks = load_server(t.info["port"], STUCK_REQUESTS, 100)
        try:
            deadline = time.monotonic() + 20
            while True:
                doc = tasks_json(t.pid)
                stuck = [x for x in doc["tasks"]
                         if [f["func"] for f in x["frames"]][3:5] == ["fetch_upstream",
                                                                      "slow_handler"]]
                if len(stuck) == STUCK_REQUESTS or time.monotonic() > deadline:
                    break
                time.sleep(0.1)
            expect(len(stuck) == STUCK_REQUESTS, "expected %d handler tasks stuck in "
                   "fetch_upstream, found %d" % (STUCK_REQUESTS, len(stuck)))
            ids = {x["id"]: x for x in doc["tasks"]}
            for x in stuck:
                expect(x["frames"][0]["func"] == "StreamReader._wait_for_data",
                       "handler task's innermost frame", show(x["frames"]))
                expect(len(x["awaited_by"]) == 1 and ids[x["awaited_by"][0]]["frames"][0]["func"]
                       == "RequestHandler.start", "handler task not awaited by its connection")
            tui = Tmux("-p", t.pid)
            try:
                tui.wait(lambda s: "Functions" in s or "Threads" in s, "live view")
                # The tasks are read from attach: opened 3 s later, the view
                # already says they have waited at least that long ("≥":
                # they were stuck before tachyon-top looked).
                time.sleep(3)
                tui.keys("T")
                pattern = re.compile(r"^\S\s+%d\s+0\s+\u2265 ([3-9]|\d\d) s\s+StreamReader\."
                                     r"_wait_for_data \u2190 fetch_upstream \(tasks_aiohttp\.py:\d+\)"
                                     % STUCK_REQUESTS, re.M)
                screen = tui.wait(lambda s: pattern.search(s) or "asyncio tasks  (reading" not in s
                                  and "StreamReader._wait_for_data" in s,
                                  "the stuck handlers' row")
                expect(pattern.search(screen), "the first tasks screen does not say the handlers "
                       "have been stuck \u2265 3 s", screen)
                # Sorting by count works.
                tui.keys("s")
                tui.wait(lambda s: "sorted by count" in s, "sort by count")
                # Enter opens the group, Enter on a task shows its chain and awaiter.
                rows = [line for line in screen.splitlines() if line[:1] in "\u25b8\u25be"]
                index = next(i for i, line in enumerate(rows) if "fetch_upstream" in line)
                for _ in range(index):
                    tui.keys("Down")
                tui.keys("Enter")
                tui.wait(lambda s: re.search(r"^\s+\u25b8 Task-\d+ \[0x", s, re.M), "task rows")
                tui.keys("Down", "Enter")
                tui.wait(lambda s: "slow_handler (/" in s and "awaited by Task-" in s
                         and "RequestHandler.start (" in s, "a task's chain and its awaiter")
            finally:
                tui.close()
        finally:
            for s in socks:
                s.close()


def test_live_late_import():
    """The live view sees tasks appear after the target imports asyncio."""
    with Target("python3.14", "tasks_late.py") as t:
        tui = Tmux("-p", t.pid)
        try:
            tui.wait(lambda s: "Functions" in s, "live view")
            tui.keys("T")
            tui.wait(lambda s: "asyncio is not imported" in s, "the no-asyncio line")
            os.kill(t.pid, signal.SIGUSR1)
            tui.wait(lambda s: re.search(r"^\S\s+3\s+0\s+.*late_worker.*late-", s, re.M),
                     "the three late tasks", timeout=20)
        finally:
            tui.close()


# A row of the tasks view: marker, tasks, running, stuck ("-" under 1 s).
STUCK_RE = re.compile(r"^\S\s+\d+\s+\d+\s+(-|(?:\u2265 )?\d+(?:\.\d+)? (?:s|min|h))\s+"
                      r"sleep \u2190 handler \(tasks_sleepers\.py:\d+\)", re.M)


def tt_pid_of(target_pid):
    """The live view's pid: the tachyon-top process attached to *target_pid*."""
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open("/proc/%s/cmdline" % name, "rb") as f:
                    argv = f.read().split(b"\0")
            except OSError:
                continue
            if argv[0] == ft.BIN.encode() and str(target_pid).encode() in argv:
                return int(name)
    return None


CHURN_SECONDS = 40
CHURN_WARMUP = 15


def test_stuck_under_churn():
    """Tasks that each sleep <= 50 ms, 5,000 a second, for 40 s under
    the live view with --async: the tasks view's stuck column for their
    point stays under a second (a new task at a finished one's address is
    not the old one still waiting), error samples stay at or below 0.2%,
    and the view's RSS is flat after the warm-up."""
    # Under the sanitizers (RSS not judged there) a third of it does.
    seconds = CHURN_SECONDS // 3 if ft.sanitized(ft.BIN) else CHURN_SECONDS
    with Target("python3.15", "tasks_sleepers.py") as t:
        tui = Tmux("-p", t.pid, "--async")
        try:
            tui.wait(lambda s: "Functions" in s, "live view")
            tui.keys("T")
            tui.wait(lambda s: STUCK_RE.search(s), "the sleep <- handler row", timeout=20)
            worst, seen, screen = 0.0, 0, ""
            started = time.monotonic()
            rss_warm = rss_end = 0
            tt = tt_pid_of(t.pid)
            expect(tt, "no tachyon-top process attached to %d" % t.pid)
            while time.monotonic() < started + seconds:
                screen = tui.screen()
                for stuck in STUCK_RE.findall(screen):
                    seen += 1
                    if stuck != "-":
                        value, unit = stuck.lstrip("\u2265 ").split()
                        worst = max(worst, float(value) * {"s": 1, "min": 60, "h": 3600}[unit])
                if not rss_warm and time.monotonic() >= started + CHURN_WARMUP:
                    rss_warm = ft.vm_rss_kb(tt)
                time.sleep(0.25)
            rss_end = ft.vm_rss_kb(tt)
            lines = ["screen: " + line for line in screen.splitlines()]
            m = re.search(r"errors ([\d.]+)%", screen)
            ft.Tap.emit("# tasks view under churn, --async: %s; RSS %d KB at %d s, %d KB at %d s"
                        % (m.group(0) if m else "no errors figure", rss_warm, CHURN_WARMUP,
                           rss_end, seconds))
            expect(seen >= 4 * seconds * 0.8, "the sleep <- handler row was on %d screens "
                   "of %d s" % (seen, seconds), *lines)
            expect(worst == 0, "stuck %.0f s at a point where no task waits over 50 ms"
                   % worst, *lines)
            expect(m and float(m.group(1)) <= 0.2, "error samples over 0.2%% under task churn",
                   *lines)
            # AddressSanitizer keeps freed memory in its quarantine (256 MB):
            # there RSS says nothing of what tachyon-top keeps.
            expect(ft.sanitized(ft.BIN) or rss_end <= rss_warm * 1.1,
                   "the live view's RSS grew from %d KB at %d s to %d KB at %d s"
                   % (rss_warm, CHURN_WARMUP, rss_end, seconds), *lines)
        finally:
            tui.close()


# ----------------------------------------------------------------------

def test_oracle(interp):
    with Target(interp, "tasks_forest.py", "0", "main") as t:
        t.wait_epoll(t.info["threads"])
        check_forest(t, compare_with_oracle(interp, t.pid), loops=1)


def test_two_loops(interp):
    with Target(interp, "tasks_forest.py") as t:
        t.wait_epoll(t.info["threads"])
        check_forest(t, compare_with_oracle(interp, t.pid, t.info["threads"]), loops=2)


def check_forest(t, doc, loops):
    if True:
        tasks = doc["tasks"]
        by_name = {}
        for task in tasks:
            by_name.setdefault(task["name"], []).append(task)
        # The shapes are all there, on both loops.
        for name in ("conn-1", "shared", "waiter-a", "waiter-b", "tg-child", "shielder",
                     "level-1", "level-2", "level-3"):
            expect(len(by_name.get(name, [])) == loops, "expected task %r once per loop" % name,
                   "names: " + show(sorted(by_name)))
        expect({task["thread"] for task in tasks} == set(t.info["threads"]),
               "tasks not attributed to their loop threads",
               show(sorted({task["thread"] for task in tasks})), show(t.info["threads"]))
        ids = {task["id"]: task for task in tasks}
        for task in by_name["shared"]:
            names = sorted(ids[a]["name"] for a in task["awaited_by"])
            expect(names == ["waiter-a", "waiter-b"], "shared task's awaiters: %s" % names)
        for task in by_name["level-3"]:
            expect([f["func"] for f in task["frames"]] ==
                   ["Event.wait", "leaf", "middle", "worker", "level3"],
                   "level-3 coroutine stack", show(task["frames"]))
            parent = ids[task["awaited_by"][0]]
            expect(parent["name"] == "level-2" and ids[parent["awaited_by"][0]]["name"] ==
                   "level-1", "three-level awaiting chain broken")
        unnamed = [n for n in by_name if n.startswith("Task-")]
        expect(len(unnamed) >= 3, "unnamed tasks should be named Task-N: %s" % unnamed)
        # Text: a tree, roots first; the shared task drawn once in full.
        text = dump_tasks(t.pid).out.decode("utf-8")
        ft.expect_no_control_bytes(text.encode(), "dump --tasks text")
        expect("asyncio tasks: %d" % len(tasks) in text, "text lacks the task count",
               show(text, 1500))
        expect(text.count("(shown above)") == loops, "a task awaited by two is drawn once per loop "
               "and referenced once", show(text, 3000))
        first_task = [line for line in text.split("asyncio tasks:")[1].splitlines()
                      if "[0x" in line][0]
        expect(first_task.startswith("Task-"), "the tree starts with a root task",
               show(first_task))


def test_bulk(interp):
    with Target(interp, "tasks_forest.py", str(BULK)) as t:
        t.wait_epoll(t.info["threads"])
        start = time.monotonic()
        doc = tasks_json(t.pid)
        took = time.monotonic() - start
        n = len(doc["tasks"])
        expect(n >= 2 * BULK, "expected over %d tasks, got %d" % (2 * BULK, n))
        bulk = [x for x in doc["tasks"] if x["name"].startswith("bulk-")]
        if len(bulk) != 2 * BULK:
            # Which ones: the last created (a loop not yet parked) or any.
            have = {(x["thread"], x["name"]) for x in bulk}
            missing = sorted("%s in thread %d" % (name, tid) for tid in {x["thread"] for x in bulk}
                             for name in ("bulk-%d" % i for i in range(BULK))
                             if (tid, name) not in have)
            raise Fail("bulk tasks: %d" % len(bulk),
                       "tasks_lost: %s (tasks that changed while read, 5 reads)"
                       % doc.get("tasks_lost"), "missing: %s" % ", ".join(missing[:20]))
        expect(all(len(x["frames"]) == 4 for x in bulk), "a bulk task's chain is not 4 deep")
        ft.Tap.emit("# %s: dump --tasks --json of %d tasks (two loops): %.3f s wall, "
                    "including attach and the thread dump" % (interp, n, took))


def test_churn(interp):
    with Target(interp, "tasks_churn.py") as t:
        seen = 0
        for _ in range(15):
            doc = tasks_json(t.pid)
            seen = max(seen, len(doc["tasks"]))
        expect(t.proc.poll() is None, "the target died")
        expect(seen > 0, "never saw a task under churn")


def test_async_churn_errors():
    """record --async of a loop making 5,000 short tasks a second: a read
    torn by a frame or task coming or going is read again, so error
    samples stay at most 0.2% (0.3-0.8% when they were not; 0.02-0.03%
    read again up to twice)."""
    with Target("python3.15", "tasks_churn.py", "5000") as t:
        out = os.path.join(t.dir, "churn.txt")
        run = ft.tachyon("record", "-p", t.pid, "-d", "6", "-r", "5000", "--async", "-o", out)
        run.expect_success()
        err = run.err.decode("utf-8", "replace")
        m = re.search(r"(\d+) samples in .*?([\d.]+)% errors", err)
        expect(m and int(m.group(1)) > 10000, "record's summary lacks its figures", *run.details())
        ft.Tap.emit("# record --async under churn: %s" % err.strip().splitlines()[-1])
        expect(float(m.group(2)) <= 0.2, "%s%% error samples under task churn (at most 0.2%%)"
               % m.group(2), *run.details())


def test_late_import(interp):
    with Target(interp, "tasks_late.py") as t:
        time.sleep(0.2)
        doc = tasks_json(t.pid)
        expect(doc["tasks"] == [] and "tasks_note" not in doc,
               "before import asyncio: expected an empty list", show(doc.get("tasks")))
        text = dump_tasks(t.pid).out.decode()
        # 3.15 has _asyncio built in: its (empty) task lists are readable.
        expect("asyncio tasks: none (asyncio is not imported)" in text or
               (interp.startswith("python3.15") and "asyncio tasks: 0\n" in text),
               "text lacks the no-asyncio line", show(text[-300:]))
        os.kill(t.pid, signal.SIGUSR1)
        t.wait_file(t.ready + ".2")
        t.wait_epoll([t.pid])
        names = sorted(x["name"] for x in tasks_json(t.pid)["tasks"])
        expect(names == ["Task-1", "late-0", "late-1", "late-2"],
               "after import asyncio: %s" % names)


def test_never(interp):
    with Target(interp, "tasks_late.py", "never") as t:
        time.sleep(0.2)
        doc = tasks_json(t.pid)
        expect(doc["tasks"] == [], "expected no tasks", show(doc["tasks"]))


def test_old_python():
    with Target("python3.13", "tasks_late.py", "never") as t:
        time.sleep(0.2)
        doc = tasks_json(t.pid)
        expect(doc["tasks"] == [] and "3.14" in doc.get("tasks_note", ""),
               "3.13: expected an empty list and a note", show(doc))
        text = dump_tasks(t.pid).out.decode()
        lines = [line for line in text.splitlines() if "asyncio tasks" in line]
        expect(len(lines) == 1 and "Python 3.14 or newer" in lines[0],
               "3.13: expected one line saying tasks need 3.14+", show(text[-300:]))


# ---- --async: samples under their tasks' await chains ----

# From a task's marker up to the root: what each "task heavy" stack must hold,
# outermost first (function names; `task NAME` frames have no file:line).
HEAVY_CHAIN = ["task Task-*", "main", "task dispatcher", "dispatch", "task heavy",
               "handle_heavy", "step_heavy", "burn"]


def frame_name(label):
    return label.rsplit(" (", 1)[0] if label.endswith(")") and " (" in label else label


def read_collapsed(path):
    """[(frame names root first, samples)] from a collapsed-stacks file."""
    return [([frame_name(x) for x in frames], n)
            for frames, n in sampler.collapsed_lines(path, task_frames=True)]


def innermost_task(frames):
    marks = [x for x in frames if x.startswith("task ")]
    return marks[-1] if marks else None


def is_subsequence(want, frames):
    it = iter(frames)
    return all(any(x == w for x in it) for w in want)


def truth_share(before, after):
    dh, dl = after["heavy"] - before["heavy"], after["light"] - before["light"]
    return 100.0 * dh / (dh + dl) if dh + dl > 0 else float("nan")


def test_record_async(interp):
    """record --async: two tasks burn CPU 75/25 through different await
    chains; the split shows under each task's marker, within 5 points of
    the split the target measured over the same seconds."""
    with Target(interp, "tasks_split.py") as t:
        truth = t.ready + ".truth"
        before = t.wait_file(truth)
        out = os.path.join(t.dir, "async.txt")
        run = ft.tachyon("record", "-p", t.pid, "-d", "4", "--async", "-o", out)
        after = t.wait_file(truth)
        run.expect_success()
        stacks = read_collapsed(out)
        by_task = {}
        for frames, n in stacks:
            key = innermost_task(frames)
            by_task[key] = by_task.get(key, 0) + n
        total = sum(by_task.values())
        heavy, light = by_task.get("task heavy", 0), by_task.get("task light", 0)
        expect(heavy + light > 0.8 * total,
               "under 80%% of samples are under task heavy or light: %s" % by_task)
        share, real = 100.0 * heavy / (heavy + light), truth_share(before, after)
        ft.Tap.emit("# %s: task heavy %.1f%% of the two tasks' samples (target measured "
                    "%.1f%%, design 75%%), %d samples" % (interp, share, real, total))
        expect(abs(share - real) <= 5, "split %.1f%% vs %.1f%% measured by the target"
               % (share, real), "by innermost task: %s" % by_task)
        # The whole await chain, no event loop below the task.
        heaviest = max((x for x in stacks if innermost_task(x[0]) == "task heavy"),
                       key=lambda x: x[1])[0]
        expect(is_subsequence(HEAVY_CHAIN, heaviest) and heaviest[0] == "task Task-*",
               "task heavy's stack is not its await chain", "want (in order): %s" % HEAVY_CHAIN,
               "got: %s" % heaviest)
        # Tasks that live 0.5 ms, never in a task read: read on their own.
        short = [(f, n) for f, n in stacks if "run_short" in f]
        named = sum(n for f, n in short if innermost_task(f) == "task short"
                    and is_subsequence(["task spawner", "spawner", "task short"], f))
        expect(short and named >= 0.8 * sum(n for _, n in short),
               "short-lived tasks lack their name or awaiter: %d of %d samples"
               % (named, sum(n for _, n in short)), show([f for f, _ in short][:3], 800))
        loop = sum(n for frames, n in stacks if "BaseEventLoop._run_once" in frames)
        expect(loop <= 0.05 * total, "%d of %d samples still under the event loop"
               % (loop, total))
        # Without --async the same program is the loop's, with no task frames.
        plain = os.path.join(t.dir, "plain.txt")
        ft.tachyon("record", "-p", t.pid, "-d", "1", "-o", plain).expect_success()
        marked = [f for f, _ in read_collapsed(plain) if innermost_task(f)]
        expect(not marked, "task frames without --async", show(marked[:2]))


def keepalive_load(port, seconds, connections=3):
    """Clients on persistent connections asking /cpu for *seconds*, in threads."""
    import http.client
    import threading
    done = []

    def client():
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        end = time.monotonic() + seconds
        n = 0
        while time.monotonic() < end:
            c.request("GET", "/cpu")
            r = c.getresponse()
            r.read()
            n += r.status == 200
        done.append(n)
    threads = [threading.Thread(target=client, daemon=True) for _ in range(connections)]
    for th in threads:
        th.start()
    return threads, done


def test_aiohttp_async():
    """record --async on Debian's aiohttp under keep-alive load: the CPU of
    the /cpu handler is under its connection's task and the request path,
    not under the event loop."""
    with Target("python3", "tasks_aiohttp.py") as t:
        threads, done = keepalive_load(t.info["port"], 4.5)
        time.sleep(0.5)
        out = os.path.join(t.dir, "async.txt")
        ft.tachyon("record", "-p", t.pid, "-d", "3", "--async", "-o", out).expect_success()
        for th in threads:
            th.join(timeout=20)
        stacks = read_collapsed(out)
        crunch = [(f, n) for f, n in stacks if f[-1] == "crunch"]
        total = sum(n for _, n in crunch)
        ft.Tap.emit("# aiohttp: %d requests served; %d of %d samples in crunch"
                    % (sum(done), total, sum(n for _, n in stacks)))
        expect(total >= 20, "under 20 samples in crunch", show(stacks[:3], 800))
        want = ["task Task-*", "RequestHandler.start", "RequestHandler._handle_request",
                "Application._handle", "cpu_handler", "compute", "crunch"]
        good = sum(n for f, n in crunch if f[0] == "task Task-*" and is_subsequence(want, f)
                   and "BaseEventLoop._run_once" not in f)
        expect(good >= 0.9 * total, "%d of %d crunch samples under the request's await chain"
               % (good, total), "want (in order): %s" % want,
               "heaviest: %s" % max(crunch, key=lambda x: x[1])[0])


def test_async_two_loops():
    """Two event loops in two threads, each running its own heavy and light
    tasks: each thread's CPU is on its own tasks' chains."""
    with Target("python3.14", "tasks_split.py", "two-loops") as t:
        out = os.path.join(t.dir, "async.txt")
        ft.tachyon("record", "-p", t.pid, "-d", "3", "--async", "-t", "-o", out).expect_success()
        per_thread, burning, chained, off = {}, {}, 0, []
        for frames, n in read_collapsed(out):
            tid = int(frames[0].split()[1])
            counts = per_thread.setdefault(tid, {})
            key = innermost_task(frames)
            counts[key] = counts.get(key, 0) + n
            if frames[-1] == "burn":
                b = burning.setdefault(tid, {})
                b[key] = b.get(key, 0) + n
            if key == "task heavy" and frames[-1] == "burn":
                if is_subsequence(["task dispatcher", "dispatch", "task heavy", "handle_heavy",
                                   "burn"], frames):
                    chained += n
                else:
                    off.append((n, frames))
        # The second loop starts as the recording does: for up to one task
        # read its tasks are young, their awaiters not known yet.
        missing = sum(n for n, _ in off)
        expect(missing <= 0.1 * (chained + missing),
               "%d of %d samples of task heavy off its chain" % (missing, chained + missing),
               show(off[:2], 800))
        # A thread also waits for the GIL in select(), under no task: what
        # must hold is that its burning is under its own tasks.
        for tid in t.info["tids"]:
            counts = per_thread.get(tid, {})
            heavy, light = counts.get("task heavy", 0), counts.get("task light", 0)
            unowned = burning.get(tid, {}).get(None, 0)
            owned = sum(burning.get(tid, {}).values()) - unowned
            expect(heavy > light > 50 and unowned <= 0.05 * (owned + unowned),
                   "thread %d: heavy %d, light %d; burn() outside a task %d of %d samples"
                   % (tid, heavy, light, unowned, owned + unowned),
                   "by innermost task: %s" % counts)


def test_live_async():
    """--async in batch mode and on the live screen: the tasks are rows with
    their share, and the header says the view is async-aware."""
    with Target("python3.15", "tasks_split.py") as t:
        run = ft.tachyon("-p", t.pid, "--async", "-b", "-n", "1", "--delay", "2", "--limit", "400")
        run.expect_success()
        text = run.out.decode()
        expect("tasks on their await chains (--async)" in text.splitlines()[1],
               "batch header does not say --async", show(text[:400]))
        rows = {m.group(2): float(m.group(1)) for m in
                re.finditer(r"^\s*[\d.]+\s+([\d.]+)\s+[\d.]+\s+[\d.]+\s+(task \S+)", text, re.M)}
        expect(set(rows) >= {"task heavy", "task light", "task dispatcher", "task Task-*"},
               "batch rows lack the task frames", show(text, 2000))
        expect(60 <= rows["task heavy"] <= 85 and 15 <= rows["task light"] <= 35,
               "task totals far from 75/25: %s" % rows)
        tui = Tmux("-p", t.pid, "--async")
        try:
            # Sorted by own time, the task rows (never innermost) come after
            # every function a sample caught innermost in the last second, and
            # on a loaded machine those fill the screen: sort by total, where
            # "task heavy" (about 75%) is near the top.
            tui.wait(lambda s: "Functions" in s and ", async" in s, "an async live view")
            tui.keys("s")
            tui.wait(lambda s: "sorted by total" in s and "task heavy" in s,
                     "an async live view sorted by total with a task heavy row")
        finally:
            tui.close()


def test_async_old_python():
    with Target("python3.13", "tasks_late.py", "never") as t:
        time.sleep(0.2)
        for argv in (["record", "-p", t.pid, "-d", "1", "--async", "-o", "/dev/null"],
                     ["-p", t.pid, "--async", "-b", "-n", "1"]):
            run = ft.tachyon(*argv)
            err = run.err.decode().strip().splitlines()
            expect(run.rc != 0 and len(err) == 1 and "Python 3.14 or newer" in err[0],
                   "%s: expected one error line and a failure" % run.cmd, *run.details())


def test_tree_tasks():
    """dump --tasks --subprocesses on a parent without asyncio and two
    event-loop children: each child's own tasks under its process, in text
    and JSON; the parent says it has none (0, or no asyncio at all)."""
    with Target("python3.15", "tasks_tree.py") as t:
        kids = t.info["kids"]
        deadline = time.monotonic() + 30
        for kid in kids:
            path = "/proc/%d/task/%d/syscall" % (kid["pid"], kid["tid"])
            while True:
                try:
                    with open(path) as f:
                        if int(f.read().split()[0]) in EPOLL_SYSCALLS:
                            break
                except (OSError, ValueError):
                    pass
                if time.monotonic() > deadline:
                    raise Fail("child %d never parked in epoll" % kid["pid"])
                time.sleep(0.02)
        run = ft.tachyon("dump", "-p", t.pid, "--tasks", "--subprocesses", "--json")
        run.expect_success()
        ft.expect_no_control_bytes(run.out, "stdout of " + run.cmd)
        try:
            doc = json.loads(run.out.decode("utf-8"))
        except ValueError as e:
            raise Fail("dump --tasks --subprocesses --json is not JSON: %s" % e, *run.details())
        procs = {p.get("pid"): p for p in doc.get("processes", [])}
        for pid, proc in procs.items():
            ft.validate_dump(proc, pid)
        expect(set(procs) == {t.pid} | {k["pid"] for k in kids},
               "processes %s, expected the parent %d and children %s"
               % (sorted(procs), t.pid, [k["pid"] for k in kids]), *run.details())
        expect(procs[t.pid].get("tasks") == [],
               "the parent (no asyncio) has tasks %s" % show(procs[t.pid].get("tasks")),
               *run.details())
        for kid in kids:
            tasks = procs[kid["pid"]].get("tasks") or []
            want = {"w%d-%d" % (kid["pid"], i) for i in range(kid["tasks"])}
            got = {task["name"] for task in tasks}
            expect(want <= got and not any(n.startswith("w") for n in got - want),
                   "child %d: tasks %s, expected %s (and its main task)"
                   % (kid["pid"], sorted(got), sorted(want)), *run.details())
            parked = [task for task in tasks if task["name"] in want]
            expect(all(any(f["func"] == "parked" for f in task["frames"]) for task in parked),
                   "child %d: a worker task is not in parked()" % kid["pid"], *run.details())
        run = ft.tachyon("dump", "-p", t.pid, "--tasks", "--subprocesses")
        run.expect_success()
        text = run.out.decode("utf-8", "replace")
        blocks = re.split(r"(?m)^(?=Process \d+)", text)
        by_pid = {int(re.match(r"Process (\d+)", b).group(1)): b for b in blocks
                  if b.startswith("Process ")}
        expect(re.search(r"(?m)^asyncio tasks: (0|none \(asyncio is not imported\))$",
                         by_pid.get(t.pid, "")),
               "the parent's text does not say it has no tasks", *run.details())
        for kid in kids:
            block = by_pid.get(kid["pid"], "")
            expect(re.search(r"(?m)^asyncio tasks: %d$" % (kid["tasks"] + 1), block)
                   and all("w%d-%d" % (kid["pid"], i) in block for i in range(kid["tasks"])),
                   "child %d's text lacks 'asyncio tasks: %d' or its tasks' names"
                   % (kid["pid"], kid["tasks"] + 1), *run.details())


# ----------------------------------------------------------------------
# asyncio tasks across a worker tree: Debian's uvicorn and gunicorn
# ----------------------------------------------------------------------

ASGI_STUCK = 4       # requests left waiting on the upstream
STUCK_POINT = r"Event\.wait \u2190 fetch_upstream \(asgi_stuck\.py:\d+\)"


children, cmdline, free_port = ft.children, ft.cmdline, ft.free_port


class AsgiTree:
    """Debian's uvicorn --workers 2, or gunicorn -k uvicorn.workers.UvicornWorker
    -w 2, serving tests/targets/asgi_stuck.py in the root, with ASGI_STUCK
    requests stuck on its upstream (the kernel may give them all to one
    worker)."""

    def __init__(self, kind):
        self.kind = kind
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="asgi-", dir=ft.in_root("/tmp"))
        self.rdir = "/" + os.path.relpath(self.dir, ft.ROOT)
        self.proc = None
        self.socks = []

    def argv(self):
        if self.kind == "uvicorn":
            return ["python3", "-m", "uvicorn", "--workers", "2", "--host", "127.0.0.1",
                    "--port", str(self.port), "--app-dir", self.rdir, "asgi_stuck:app"]
        return ["gunicorn", "-k", "uvicorn.workers.UvicornWorker", "-w", "2",
                "-b", "127.0.0.1:%d" % self.port, "--chdir", self.rdir, "asgi_stuck:app"]

    def __enter__(self):
        shutil.copy(os.path.join(TARGETS, "asgi_stuck.py"), self.dir)
        self.log = open(os.path.join(self.dir, "server.log"), "wb")
        self.proc = subprocess.Popen([ft.CHROOT, ft.ROOT] + self.argv(), stdin=subprocess.DEVNULL,
                                     stdout=self.log, stderr=self.log, env=ft.TARGET_ENV,
                                     start_new_session=True)
        try:
            self.wait_serving()
            self.stick(ASGI_STUCK)
        except BaseException:
            self.kill()
            raise
        return self

    def __exit__(self, *exc):
        self.kill()
        return False

    @property
    def pid(self):
        return self.proc.pid

    def workers(self):
        """The serving workers (not multiprocessing's resource tracker)."""
        return [c for c in children(self.proc.pid) if "resource_tracker" not in cmdline(c)]

    def details(self):
        try:
            with open(os.path.join(self.dir, "server.log"), "rb") as f:
                return ["server log: " + line for line in
                        f.read().decode("utf-8", "replace").splitlines()[-10:]]
        except OSError:
            return []

    def wait_serving(self, timeout=30):
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise Fail("%s exited with %d" % (self.kind, self.proc.returncode),
                           *self.details())
            if len(self.workers()) == 2:
                try:
                    with socket.create_connection(("127.0.0.1", self.port), timeout=2) as c:
                        c.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                        if c.recv(64).startswith(b"HTTP/1.1 200"):
                            return
                except OSError:
                    pass
            if time.monotonic() > deadline:
                raise Fail("%s not serving with 2 workers within %d s" % (self.kind, timeout),
                           *self.details())
            time.sleep(0.1)

    def stick(self, n):
        for i in range(n):
            c = socket.create_connection(("127.0.0.1", self.port), timeout=10)
            c.sendall(b"GET /stuck/%d HTTP/1.1\r\nHost: x\r\n\r\n" % i)
            self.socks.append(c)

    def stuck_by_worker(self, want=ASGI_STUCK, timeout=15):
        """{worker pid: its tasks in fetch_upstream}, from dump --tasks
        --subprocesses --json, once they add up to *want*; and the document."""
        deadline = time.monotonic() + timeout
        while True:
            run = ft.tachyon("dump", "-p", self.pid, "--tasks", "--subprocesses", "--json")
            run.expect_success()
            ft.expect_no_control_bytes(run.out, "stdout of " + run.cmd)
            doc = json.loads(run.out.decode("utf-8"))
            held = {}
            for p in doc.get("processes", []):
                n = sum(1 for t in p.get("tasks") or []
                        if any(f["func"] == "fetch_upstream" for f in t["frames"]))
                if n:
                    held[p["pid"]] = n
            if sum(held.values()) == want or time.monotonic() > deadline:
                return held, doc, run
            time.sleep(0.2)

    def kill(self):
        for c in self.socks:
            c.close()
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def group_row(screen, count):
    """The stuck point's row: (tasks, processes) or None."""
    m = re.search(r"(?m)^\S\s+(%d)\s+(\d+)\s+0\s+.*?%s" % (count, STUCK_POINT), screen)
    return (int(m.group(1)), int(m.group(2))) if m else None


def check_asgi_tree(kind):
    with AsgiTree(kind) as a:
        held, doc, run = a.stuck_by_worker()
        workers = a.workers()
        expect(sum(held.values()) == ASGI_STUCK and set(held) <= set(workers),
               "dump --tasks --subprocesses --json: stuck tasks by process %s, expected %d in "
               "workers %s" % (held, ASGI_STUCK, workers), *run.details())
        procs = {p["pid"]: p for p in doc["processes"]}
        for w in workers:
            expect(w in procs, "worker %d not in the dump" % w, *run.details())
            ft.validate_dump(procs[w], w)
            for t in procs[w].get("tasks") or []:
                if any(f["func"] == "fetch_upstream" for f in t["frames"]):
                    funcs = [f["func"] for f in t["frames"]]
                    expect(funcs[0] == "Event.wait" and "app" in funcs,
                           "worker %d: a stuck task's stack %s" % (w, funcs), *run.details())
        tui = Tmux("-p", a.pid, size=(160, 45))
        try:
            tui.wait(lambda s: "Processes" in s, "live view")
            tui.keys("T")
            screen = tui.wait(lambda s: group_row(s, ASGI_STUCK), "the stuck point's row with "
                              "all %d tasks" % ASGI_STUCK, timeout=20)
            expect(group_row(screen, ASGI_STUCK)[1] == len(held),
                   "the row's process count is not %d (%s)" % (len(held), held), screen)
            # Open it: one row per process holding some (with its count), or
            # the tasks at once when one worker holds them all.
            open_row(tui, STUCK_POINT)
            if len(held) > 1:
                screen = tui.wait(lambda s: all(re.search(r"process %d: %d tasks? here" % (p, n), s)
                                                for p, n in held.items()),
                                  "a row per worker holding stuck tasks, with its count")
                tui.keys("Down", "Enter")
            pid = next(iter(held)) if len(held) == 1 else None

            def task_rows(s):
                return re.findall(r"(?m)^\s+\u25b8 Task-\d+ \[0x[0-9a-f]+\] process (\d+)", s)
            screen = tui.wait(lambda s: task_rows(s), "task rows")
            shown = {int(p) for p in task_rows(screen)}
            expect(len(shown) == 1 and shown <= set(held), "task rows of processes %s, expected "
                   "one of %s" % (shown, held), screen)
            pid = shown.pop()
            # ] moves the process selection: on a holder, only its tasks. Each
            # press is waited for until the title names another process: a
            # screen not yet redrawn would let the presses run ahead of it.
            one = re.compile(r"asyncio tasks  \d+ tasks? of process (\d+)")
            before = None
            for _ in range(len(workers) + 3):
                tui.keys("]")
                screen = tui.wait(lambda s: one.search(s) and one.search(s).group(1) != before,
                                  "the tasks view of one process after %s"
                                  % ("process %s" % before if before else "every process"))
                before = one.search(screen).group(1)
                if re.search(r"tasks of process %d " % pid, screen):
                    break
            expect(re.search(r"tasks of process %d " % pid, screen),
                   "] never selected worker %d" % pid, screen)
            screen = tui.wait(lambda s: group_row(s, held[pid]), "the stuck point with worker "
                              "%d's %d tasks alone" % (pid, held[pid]))
            expect(group_row(screen, held[pid])[1] == 1, "one process's row counts %d processes"
                   % group_row(screen, held[pid])[1], screen)
            # Back to every process.
            for _ in range(len(workers) + 3):
                if group_row(screen, ASGI_STUCK):
                    break
                tui.keys("]")
                time.sleep(0.3)
                screen = tui.screen()
            expect(group_row(screen, ASGI_STUCK), "] back to every process", screen)
        finally:
            tui.close()


def test_uvicorn_tree():
    check_asgi_tree("uvicorn")


def test_gunicorn_uvicorn_tree():
    check_asgi_tree("gunicorn")


MAIN_LOOP = r"sleep \u2190 Server\.main_loop \(server\.py:\d+\)"


def open_row(tui, pattern, tries=5):
    """Select the group row matching *pattern* and open it: rows may move
    between a screen and the keys (times tick), so check that the row
    opened was that one, else close it and try again."""
    for _ in range(tries):
        screen = tui.wait(lambda s: re.search(pattern, s), "a row matching %s" % pattern)
        rows = [line for line in screen.splitlines() if line[:1] in "\u25b8\u25be"]
        index = next(i for i, line in enumerate(rows) if re.search(pattern, line))
        tui.keys("Home")
        for _ in range(index):
            tui.keys("Down")
        tui.keys("Enter")
        time.sleep(0.5)
        screen = tui.screen()
        if re.search(r"(?m)^\u25be.*" + pattern, screen):
            return screen
        if re.search(r"(?m)^\u25be", screen):
            tui.keys("Escape")
    raise Fail("could not open the row matching %s" % pattern, screen)


def test_worker_recycled():
    """gunicorn replaces a killed worker: the tasks view drops the old
    worker's tasks and shows the new worker's."""
    with AsgiTree("gunicorn") as a:
        held, _, run = a.stuck_by_worker()
        expect(sum(held.values()) == ASGI_STUCK, "stuck tasks %s" % held, *run.details())
        tui = Tmux("-p", a.pid, size=(160, 45))
        try:
            tui.wait(lambda s: "Processes" in s, "live view")
            tui.keys("T")
            tui.wait(lambda s: group_row(s, ASGI_STUCK), "the stuck point's row", timeout=20)
            victim = max(held, key=held.get)
            before = set(a.workers())
            os.kill(victim, signal.SIGKILL)
            deadline = time.monotonic() + 20
            while not (set(a.workers()) - before) and time.monotonic() < deadline:
                time.sleep(0.1)
            fresh = set(a.workers()) - before
            expect(fresh, "gunicorn did not replace worker %d" % victim, *a.details())
            new = fresh.pop()
            left = ASGI_STUCK - held[victim]
            if left:
                tui.wait(lambda s: group_row(s, left), "the stuck point with the %d tasks "
                         "the killed worker did not hold" % left)
            else:
                tui.wait(lambda s: not re.search(STUCK_POINT, s), "the stuck point gone with "
                         "the killed worker, the only one holding it")
            # Each worker's loop waits in uvicorn's main loop: its row lists
            # the processes, the new worker among them, the killed one not.
            tui.wait(lambda s: re.search(r"(?m)^\S\s+2\s+2\s+0\s+.*?" + MAIN_LOOP, s),
                     "the main loop's row with both workers")
            open_row(tui, MAIN_LOOP)
            screen = tui.wait(lambda s: "process %d: 1 task here" % new in s,
                              "the new worker %d under the main loop's row" % new)
            expect("process %d:" % victim not in screen,
                   "the killed worker %d is still in the tasks view" % victim, screen)
        finally:
            tui.close()


PER_INTERP = [("oracle agrees on a forest of tasks", test_oracle),
              ("two loops in two threads", test_two_loops),
              ("%d parked tasks per loop" % BULK, test_bulk),
              ("tasks created and finished while dumping", test_churn),
              ("attach before import asyncio, tasks appear after", test_late_import),
              ("a program that never imports asyncio", test_never),
              ("record --async splits 75/25 under the tasks' await chains", test_record_async)]


def main():
    if not os.path.isdir(ft.ROOT):
        return ft.root_missing()
    ft.BIN = os.path.abspath(ft.BIN) if os.sep in ft.BIN else (shutil.which(ft.BIN) or ft.BIN)
    if os.geteuid() != 0 or ft.CHROOT is None:
        print("Bail out! must run as root with chroot(8)")
        return 1
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    interps = os.environ.get("TT_TASK_INTERPS")
    if interps is None:
        interps = " ".join(i for i in os.environ.get("TT_INTERPS", DEFAULT).split()
                           if re.fullmatch(r"python3\.1[45]d?", i))
    interps = [i for i in interps.split() if os.path.exists(ft.in_root("/usr/bin/" + i))]
    started = time.monotonic()
    tap = Tap(len(interps) * len(PER_INTERP) + 13)
    tap.run("python3.13: tasks need 3.14+, one line", test_old_python)
    tap.run("aiohttp server: stuck handlers in dump --tasks and the tasks view",
            test_aiohttp)
    tap.run("tasks view: tasks appear after import asyncio", test_live_late_import)
    tap.run("--async on 3.13: one error line", test_async_old_python)
    tap.run("--async in batch and on the live screen", test_live_async)
    tap.run("--async with two event loops in two threads", test_async_two_loops)
    tap.run("aiohttp server: record --async puts the handler's CPU on its request",
            test_aiohttp_async)
    tap.run("dump --tasks --subprocesses: each child's tasks under its process, the parent none",
            test_tree_tasks)
    tap.run("tasks view: 5,000 tasks/s each sleeping <= 50 ms for 40 s with --async: stuck "
            "stays under 1 s, errors <= 0.2%, RSS flat",
            test_stuck_under_churn)
    tap.run("record --async on 5,000 tasks/s: at most 0.2% error samples",
            test_async_churn_errors)
    tap.run("uvicorn --workers 2: the master's tasks view and dump --tasks --subprocesses "
            "show the workers' stuck requests; ] shows one worker's", test_uvicorn_tree)
    tap.run("gunicorn -k uvicorn.workers.UvicornWorker: the same", test_gunicorn_uvicorn_tree)
    tap.run("gunicorn replaces a killed worker: its tasks leave the view, the new one's come",
            test_worker_recycled)
    for interp in interps:
        for desc, fn in PER_INTERP:
            tap.run("%s: %s" % (interp, desc), fn, interp)
    tap.comment("%d of %d failed; runtime %.1f s" % (tap.failures, tap.planned,
                                                      time.monotonic() - started))
    return 1 if tap.failures or tap.number != tap.planned else 0


if __name__ == "__main__":
    sys.exit(main())
