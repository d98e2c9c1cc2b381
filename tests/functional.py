#!/usr/bin/env python3
"""Functional tests for `tachyon-top dump`, against real interpreters.

Each scenario starts a target script (tests/targets/*.py) under a real
CPython inside the Debian root $TT_ROOT (see tests/provision.sh).  The target
records what it knows about itself (its stacks as sys._getframe() sees them,
its thread ids, its version) in a JSON "ready file" and parks in time.sleep();
the test then runs `tachyon-top dump -p PID [--json]` from the host and
compares.  Output is TAP.

Environment:
    TT_ROOT     the Debian root (default /var/cache/tachyon-top/sid-root)
    TT_BIN      the binary under test (default ./tachyon-top)
    TT_INTERPS  space-separated interpreters to test (default: all of
                DEFAULT_INTERPS; see tests/interps.py for the names: the
                root's, the host's 3.11 and pyenv's 3.11/3.12, which run on
                the host; those missing are skipped, saying why)
    TT_LAYOUT_FREE_INTERPS  if set, the interpreters of the suites whose
                code does not depend on the interpreter (suite_interps)
    TT_SEED     seed for the randomised exit timings (default: random)
    TT_KEEP     if set, keep the scratch directory under $TT_ROOT/tmp
    CI          if "true", a missing root is a failure instead of a skip

Must run as root (chroot, and reading other processes' memory).
"""

import collections
import contextlib
import glob
import itertools
import json
import os
import platform
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import interps as matrix  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
TARGETS_DIR = os.path.join(HERE, "targets")
TARGET_LIB = "_ttlib.py"  # copied next to every target script

ROOT = os.environ.get("TT_ROOT", "/var/cache/tachyon-top/sid-root")
BIN = os.environ.get("TT_BIN", "./tachyon-top")
DEFAULT_INTERPS = matrix.DEFAULT


def suite_interps(layout_free=False):
    """The interpreters a suite runs on: TT_INTERPS (default: all). A suite
    whose part of tachyon-top does not depend on the interpreter's layout
    (the views, exports, ring, kernel waits, process trees) takes
    TT_LAYOUT_FREE_INTERPS instead when that is set: the sanitizer pass
    runs those once, and the walker's suites once per layout family."""
    names = os.environ.get("TT_INTERPS", DEFAULT_INTERPS)
    if layout_free:
        names = os.environ.get("TT_LAYOUT_FREE_INTERPS") or names
    return names.split()
# "libpython3.X" runs targets in tests/embedhost, a program (not named python)
# that dlopen()s the shared libpython: the runtime then lives in a
# position-independent object mapped at a random address.
EMBED_HOST = matrix.EMBED_HOST

# TT_SLOWDOWN stretches the time a tachyon-top run may take (memcheck.sh: x15).
DUMP_TIMEOUT = 20 * float(os.environ.get("TT_SLOWDOWN") or 1)   # s: longer is a hang
# s: for a target to write its ready file (the target's own start: a pool of
# 10,000 threads takes 3 s alone, 13 s beside two busy processes)
READY_TIMEOUT = 60
PARKED_TIMEOUT = 10   # s: for a target's threads to reach their sleep
TARGET_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}

SANITIZER_MARKERS = (b"ERROR: AddressSanitizer", b"ERROR: LeakSanitizer",
                     b"WARNING: ThreadSanitizer", b"runtime error:")

# Syscalls a thread parked in time.sleep() is blocked in, per architecture
# (clock_nanosleep, nanosleep); /proc/PID/task/TID/wchan is the fallback.
SLEEP_SYSCALLS = {"x86_64": {230, 35}, "aarch64": {115, 101},
                  "riscv64": {115, 101}, "i686": {267, 162}}

# Kept in sync with tests/targets/escapes.py.
EVIL_NAME = "\x1b[31mEVIL\x07\x1b]0;title\x07"
NASTY_QUALNAME = ("Nasty.<locals>.\x1b[2J\x1b[H\nINJECTED line\r\x00nul"
                  "\x7fdel\x9bcsi\ttab\x08")
EVIL_FILE = "/tmp/evil\x1b[2J\x1b]0;pwned\x07\r\x08\x7f\x9b\tdir/\nINJECTED.py"

# Kept in sync with tests/targets/nonascii.py.
NONASCII_DIR = "dossier_été_目录"
NONASCII_FUNCS = ["𝔣𝔬𝔫𝔠.<locals>.😀", "relais_à_été",
                  "build_chain.<locals>.<lambda>", "gén_ü", "Clé.函数",
                  "main", "<module>"]
NONASCII_FILES = ["/tmp/virtuel/𝔣ichier_😀.py", "/tmp/virtuel/café_ü.py"]

# Kept in sync with tests/targets/qualnames.py (innermost first).
QUALNAMES_MAIN = ["Outer.Inner.leaf", "Outer.make_coro.<locals>.middle",
                  "drive", "numbers", "consume",
                  "make_closure.<locals>.inner.<locals>.<lambda>",
                  "make_closure.<locals>.inner", "Outer.Inner.method",
                  "main", "<module>"]
QUALNAMES_ASYNCIO = ["ticker", "make_handler.<locals>.handler",
                     "Service.handle"]


# ----------------------------------------------------------------------
# Failures and TAP
# ----------------------------------------------------------------------

class Fail(Exception):
    """A test failure: a summary plus diagnostic lines."""

    def __init__(self, summary, *details):
        super().__init__(summary)
        self.lines = [summary] + [d for d in details if d]


class Skip(Exception):
    """The test cannot run here; the reason is its message."""


def children(pid):
    """A process's children (every thread's), sorted; [] once it is gone."""
    found = []
    with contextlib.suppress(OSError):
        for tid in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/children" % (pid, tid)) as f:
                found += [int(x) for x in f.read().split()]
    return sorted(found)


def cmdline(pid):
    """A process's command line, arguments joined by spaces; "" once it is gone."""
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""


def free_port():
    """A TCP port on 127.0.0.1 nothing listens on (a server's, next)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def vm_rss_kb(pid):
    """A process's resident memory (KB); 0 once it is gone."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def expect(condition, summary, *details):
    if not condition:
        raise Fail(summary, *details)


def show(value, limit=300):
    """A printable, single-line rendering of any value for diagnostics."""
    text = ascii(value)
    return text if len(text) <= limit else text[:limit] + "...(%d chars)" % len(text)


def printable(text):
    """*text* with every non-printable or non-ASCII character escaped."""
    return "".join(c if c.isascii() and c.isprintable() else ascii(c)[1:-1]
                   for c in text)


class Tap:
    def __init__(self, planned):
        self.planned = planned
        self.number = 0
        self.failures = 0
        self.emit("1..%d" % planned)

    @staticmethod
    def emit(line):
        print(line, flush=True)

    def comment(self, text):
        for line in str(text).splitlines() or [""]:
            self.emit("# " + printable(line))

    def ok(self, name):
        self.number += 1
        self.emit("ok %d - %s" % (self.number, name))

    def not_ok(self, name, lines):
        self.number += 1
        self.failures += 1
        self.emit("not ok %d - %s" % (self.number, name))
        for line in lines:
            self.comment(line)

    def skip(self, name, reason):
        self.number += 1
        self.emit("ok %d - %s # SKIP %s" % (self.number, name, reason))

    def run(self, name, fn, *args):
        """Run one test function; Fail or any exception makes it "not ok".
        How long it took follows as a comment (what to trim when the suite
        nears its 40 minutes)."""
        started = time.monotonic()
        try:
            fn(*args)
        except Skip as skip:
            self.skip(name, str(skip))
            return
        except Fail as failure:
            self.not_ok(name, failure.lines)
        except Exception:
            self.not_ok(name, ["unexpected error in the test itself:"]
                        + traceback.format_exc().splitlines())
        else:
            self.ok(name)
        self.comment("took %.1f s" % (time.monotonic() - started))


# ----------------------------------------------------------------------
# Running tachyon-top
# ----------------------------------------------------------------------

def control_bytes(data, allowed=b"\n"):
    """Offsets of raw control bytes (< 0x20 or 0x7f) not in *allowed*."""
    return [i for i, b in enumerate(data)
            if (b < 0x20 or b == 0x7f) and b not in allowed]


def expect_no_control_bytes(data, what, allowed=b"\n"):
    bad = control_bytes(data, allowed)
    if bad:
        first = bad[0]
        raise Fail("%s contains %d raw control byte(s), first 0x%02x at offset %d"
                   % (what, len(bad), data[first], first),
                   "context: " + show(data[max(0, first - 40):first + 40]))


class Run:
    """One finished tachyon-top invocation."""

    def __init__(self, argv, returncode, out, err):
        self.argv, self.rc, self.out, self.err = argv, returncode, out, err
        self.cmd = " ".join(["tachyon-top"] + argv[1:])

    def details(self):
        return ["command: " + self.cmd, "exit status: %d" % self.rc,
                "stderr: " + show(self.err, 1000),
                "stdout: " + show(self.out, 600)]

    def crash(self, relayed=()):
        """Why this run counts as a crash, or None. *relayed*: exit statuses
        that pass on a started program's death by a signal (record --)."""
        if self.rc < 0:
            return "killed by signal %d" % -self.rc
        if 128 < self.rc <= 128 + 64 and self.rc not in relayed:
            return "exit status %d looks like death by signal %d" % (self.rc, self.rc - 128)
        for marker in SANITIZER_MARKERS:
            if marker in self.err:
                return "sanitizer report on stderr (%s)" % marker.decode()
        return None

    def expect_success(self):
        expect(self.rc == 0, "%s failed" % self.cmd, *self.details())

    def expect_one_line_error(self, contains=None):
        """Non-zero exit with exactly one line on stderr (containing *contains*)."""
        expect(self.rc != 0, "%s exited 0, expected an error" % self.cmd, *self.details())
        body = self.err[:-1] if self.err.endswith(b"\n") else self.err
        expect(body.strip() != b"", "%s failed with nothing on stderr" % self.cmd,
               *self.details())
        expect(b"\n" not in body, "%s: error message is not exactly one line"
               % self.cmd, *self.details())
        expect_no_control_bytes(body, "stderr of " + self.cmd, allowed=b"")
        if contains is not None:
            expect(contains.lower() in body.decode("utf-8", "replace").lower(),
                   "%s: error message lacks %r" % (self.cmd, contains), *self.details())

    def json(self, pid, may_have_no_threads=False):
        """The validated --json document of a successful run."""
        self.expect_success()
        expect_no_control_bytes(self.out, "stdout of " + self.cmd)
        try:
            doc = json.loads(self.out.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as error:
            raise Fail("%s: stdout is not one UTF-8 JSON document: %s" % (self.cmd, error),
                       *self.details())
        try:
            validate_dump(doc, pid, may_have_no_threads)
        except Fail as failure:
            failure.lines += self.details()
            raise
        return doc


def tachyon(*args, timeout=None):
    """Run tachyon-top; a crash or a hang (no exit within timeout s,
    DUMP_TIMEOUT by default) is an immediate failure."""
    argv = [BIN] + [str(a) for a in args]
    timeout = timeout or DUMP_TIMEOUT
    try:
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired as hung:
        raise Fail("tachyon-top %s hung (no exit within %d s)"
                   % (" ".join(argv[1:]), timeout),
                   "stderr so far: " + show(hung.stderr or b"", 1000))
    run = Run(argv, proc.returncode, proc.stdout, proc.stderr)
    crash = run.crash()
    if crash:
        raise Fail("%s crashed: %s" % (run.cmd, crash), *run.details())
    return run


def dump_json(pid):
    return tachyon("dump", "-p", pid, "--json").json(pid)


def validate_dump(doc, pid, may_have_no_threads=False):
    """Check the --json document's shape against the contract.

    A live interpreter always has a main thread; one that is finalising may
    have deleted every thread state (*may_have_no_threads*)."""
    def typed(value, kind, what):
        ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
        expect(ok, "%s should be %s, got %s" % (what, kind.__name__, show(value)))

    typed(doc, dict, "the document")
    expect(doc.get("pid") == pid, "pid field is %s, expected %d" % (show(doc.get("pid")), pid))
    typed(doc.get("python"), str, "python")
    expect(re.fullmatch(r"\d+\.\d+\.\d+\S*", doc["python"]),
           "python field %s is not a full version" % show(doc["python"]))
    expect("ns_pid" in doc and (doc["ns_pid"] is None or isinstance(doc["ns_pid"], int)),
           "ns_pid should be null or an int, got %s" % show(doc.get("ns_pid")))
    typed(doc.get("threads"), list, "threads")
    expect(doc["threads"] or may_have_no_threads, "threads is empty")
    for t in doc["threads"]:
        typed(t, dict, "a thread")
        typed(t.get("tid"), int, "tid")
        expect(t["tid"] > 0, "tid %d is not a native thread id (thread %s)"
               % (t["tid"], show(t, 400)))
        typed(t.get("ns_tid"), int, "ns_tid of thread %s" % t["tid"])
        typed(t.get("tid_known"), bool, "tid_known of thread %s" % t["tid"])
        typed(t.get("name"), str, "name of thread %s" % t["tid"])
        typed(t.get("interpreter"), int, "interpreter of thread %s" % t["tid"])
        for flag in ("main", "gil", "truncated"):
            typed(t.get(flag), bool, "%s of thread %s" % (flag, t["tid"]))
        # a core's threads were on no CPU of this machine: null
        if "core" in doc:
            expect(t.get("on_cpu", 0) is None, "on_cpu of a core's thread %s should be null"
                   % t["tid"])
        else:
            typed(t.get("on_cpu"), bool, "on_cpu of thread %s" % t["tid"])
        # Only 3.15+ say which threads wait for the GIL; before, it is null.
        if tuple(int(x) for x in re.findall(r"\d+", doc["python"])[:2]) >= (3, 15):
            typed(t.get("gil_wait"), bool, "gil_wait of thread %s" % t["tid"])
        else:
            expect("gil_wait" in t and t["gil_wait"] is None,
                   "gil_wait of thread %s should be null before 3.15, got %r"
                   % (t["tid"], t.get("gil_wait")))
        typed(t.get("frames"), list, "frames of thread %s" % t["tid"])
        validate_blocked(t)
        for f in t["frames"]:
            typed(f, dict, "a frame of thread %s" % t["tid"])
            typed(f.get("func"), str, "func in thread %s" % t["tid"])
            typed(f.get("file"), str, "file in thread %s" % t["tid"])
            typed(f.get("line"), int, "line in thread %s" % t["tid"])
    # An OS thread has one thread state per interpreter it entered.
    keys = [(t["tid"], t["interpreter"]) for t in doc["threads"]]
    expect(len(keys) == len(set(keys)), "duplicate (tid, interpreter): %s" % show(sorted(keys)))
    mains = [t["tid"] for t in doc["threads"] if t["main"] and t["interpreter"] == 0]
    expect(len(mains) <= 1, "more than one main thread in interpreter 0: %s" % mains)


def validate_blocked(t):
    """"blocked": null, or what the thread waits for in the kernel."""
    expect("blocked" in t, "thread %s has no blocked field" % t["tid"])
    b = t["blocked"]
    if b is None:
        return
    keys = {"syscall", "fd", "object", "seconds", "peer"}
    expect(isinstance(b, dict) and set(b) == keys | ({"seconds_unknown"} if b.get("seconds")
                                                      is None else set()),
           "blocked of thread %s is malformed: %s" % (t["tid"], show(b)))
    expect(b["seconds"] is not None or (isinstance(b["seconds_unknown"], str)
                                        and b["seconds_unknown"]),
           "blocked.seconds of thread %s is null without a reason: %s" % (t["tid"], show(b)))
    expect(isinstance(b["syscall"], str) and b["syscall"],
           "blocked.syscall of thread %s: %s" % (t["tid"], show(b)))
    expect(b["fd"] is None or (isinstance(b["fd"], int) and not isinstance(b["fd"], bool)
                               and b["fd"] >= 0),
           "blocked.fd of thread %s: %s" % (t["tid"], show(b)))
    expect(b["object"] is None or isinstance(b["object"], str),
           "blocked.object of thread %s: %s" % (t["tid"], show(b)))
    expect(b["seconds"] is None or (isinstance(b["seconds"], (int, float))
                                    and not isinstance(b["seconds"], bool)
                                    and b["seconds"] >= 0),
           "blocked.seconds of thread %s: %s" % (t["tid"], show(b)))
    validate_peer(t["tid"], b["peer"], b["fd"])


def validate_peer(tid, p, fd):
    """"peer": null, or the other end of the one descriptor waited on."""
    if p is None:
        return
    what = "blocked.peer of thread %s: %s" % (tid, show(p))
    expect(fd is not None and isinstance(p, dict) and p.get("kind") in ("unix", "inet", "pipe"),
           what)
    name = {"unix": {"path"}, "inet": {"addr"}, "pipe": set()}[p["kind"]]
    extra = {"accepted"} if p["kind"] == "inet" else set()
    expect(set(p) == {"kind", "pid", "cmd", "more"} | name | extra, what)
    expect(not extra or isinstance(p["accepted"], bool), what)
    expect(all(p[k] is None or isinstance(p[k], str) for k in name), what)
    pid_ok = p["pid"] is None or (isinstance(p["pid"], int) and not isinstance(p["pid"], bool)
                                  and p["pid"] > 0)
    expect(pid_ok and (p["cmd"] is None) == (p["pid"] is None) and isinstance(p["more"], int),
           what)


def expect_at_most_one_gil_holder(doc):
    """Only meaningful while the target is quiescent: a busy target may hand
    the GIL over between the reads of two threads."""
    holders = [t["tid"] for t in doc["threads"] if t["gil"]]
    expect(len(holders) <= 1, "more than one thread holds the GIL: %s" % holders)


def threads_by_tid(doc):
    return {t["tid"]: t for t in doc["threads"]}


def frame_tuples(frames):
    return [(f["func"], f["file"], f["line"]) for f in frames]


def compare_stacks(what, expected, got):
    """Frame-by-frame equality of (func, file, line), innermost first."""
    exp, act = frame_tuples(expected), frame_tuples(got)
    if exp == act:
        return
    lines = ["%s: expected %d frames, got %d" % (what, len(exp), len(act))]
    for i, (e, a) in enumerate(itertools.zip_longest(exp, act)):
        if e != a:
            lines += ["first difference at frame %d (0 = innermost):" % i,
                      "  expected: " + show(e), "  got:      " + show(a)]
            break
    lines.append("got (innermost first, up to 6): " + show(act[:6], 1500))
    raise Fail(*lines)


# ----------------------------------------------------------------------
# Targets
# ----------------------------------------------------------------------

PARK_NONE, PARK_MAIN, PARK_ALL = "none", "main", "all"


in_root = matrix.in_root
resolve_in_root = matrix.resolve_in_root


def interpreter_path(interp):
    """Host path of the interpreter's executable or library."""
    return matrix.get(interp).host_path


def command(suite, interp, args):
    """The argv that runs Python as *interp* with *args* (root paths in them
    are given as the target sees them: chrooted, or on the host)."""
    it = matrix.get(interp)
    return matrix.command(it, suite.root_scratch, suite.embed_host() if it.embedded else None,
                           args, chroot=CHROOT)


def elf_type(path):
    try:
        with open(path, "rb") as f:
            header = f.read(18)
    except OSError:
        return "?"
    if header[:4] != b"\x7fELF":
        return "not ELF"
    return {2: "EXEC", 3: "DYN"}.get(int.from_bytes(header[16:18], "little"), "?")


def is_parked(pid, tid):
    """Is thread *tid* blocked in a sleep syscall (i.e. parked in time.sleep)?"""
    task = "/proc/%d/task/%d/" % (pid, tid)
    try:
        with open(task + "syscall") as f:
            fields = f.read().split()
        sleeps = SLEEP_SYSCALLS.get(platform.machine())
        if sleeps is not None and fields and fields[0].lstrip("-").isdigit():
            return int(fields[0]) in sleeps
        with open(task + "wchan") as f:
            return "nanosleep" in f.read()
    except OSError:
        return False


def process_exited(pid):
    """Has our child *pid* exited?  Leaves it unreaped (a zombie) if it was not."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:  # already reaped
        return True


def task_ids(pid):
    try:
        return sorted(int(t) for t in os.listdir("/proc/%d/task" % pid))
    except OSError:
        return []


class Target:
    """A target script running under *interp* inside the root.

    On entry: copy the script (and _ttlib.py) to a fresh directory under the
    root's /tmp, start it in its own process group, wait for its ready file
    (self.info), then wait until its threads are parked (*park*: PARK_MAIN
    waits for the main thread, PARK_ALL for every thread).  On exit: SIGKILL
    the process group and reap.
    """

    def __init__(self, suite, interp, script, args=(), park=PARK_MAIN, subdir=None,
                 wrapper=()):
        self.suite = suite
        self.wrapper = list(wrapper)  # argv prefix, e.g. to enter a namespace
        self.interp, self.script, self.args, self.park = interp, script, args, park
        self.dir = suite.new_dir("%s-%s" % (script[:-3], interp))  # root path
        if subdir:
            self.dir = os.path.join(self.dir, subdir)
        self.ready_file = os.path.join(self.dir, "ready.json")
        self.stderr_file = in_root(os.path.join(self.dir, "stderr.txt"))
        self.proc = None
        self.info = None

    @property
    def pid(self):
        return self.proc.pid

    def __enter__(self):
        host_dir = in_root(self.dir)
        os.makedirs(host_dir, exist_ok=True)
        for name in (self.script, TARGET_LIB):
            shutil.copy(os.path.join(TARGETS_DIR, name), host_dir)
        argv = self.wrapper + command(self.suite, self.interp, [
                "-E", "-s", "-B", "-X", "utf8",
                os.path.join(self.dir, self.script), self.ready_file] + [str(a) for a in self.args])
        with open(self.stderr_file, "wb") as err:
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, stderr=err,
                                         env=TARGET_ENV, start_new_session=True)
        try:
            self.info = self._wait_ready()
            self._wait_parked()
        except BaseException:
            self.kill()
            raise
        return self

    def __exit__(self, *exc):
        self.kill()
        return False

    def kill(self):
        if self.proc is None:
            return
        if self.proc.returncode is None:  # not reaped: the pgid is still ours
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)

    def stderr_tail(self, lines=15):
        try:
            with open(self.stderr_file, "rb") as f:
                text = f.read().decode("utf-8", "replace")
        except OSError:
            return []
        return ["target stderr: " + line for line in text.splitlines()[-lines:]]

    def status(self):
        """Diagnostics about the target's state, for failure reports."""
        rc = self.proc.poll() if self.proc else None
        state = "running" if rc is None else "exited with status %d" % rc
        return ["target %s under %s, pid %s: %s"
                % (self.script, self.interp, self.proc.pid if self.proc else "?", state)
                ] + self.stderr_tail()

    def _fail(self, summary):
        raise Fail(summary, *self.status())

    def _wait_ready(self):
        host_ready = in_root(self.ready_file)
        deadline = time.monotonic() + READY_TIMEOUT
        while not os.path.exists(host_ready):
            if process_exited(self.pid) and not os.path.exists(host_ready):
                self._fail("target died before it was ready")
            if time.monotonic() > deadline:
                self._fail("target not ready within %d s" % READY_TIMEOUT)
            time.sleep(0.01)
        with open(host_ready, encoding="ascii") as f:
            info = json.load(f)
        if info.get("pid") != self.proc.pid:
            self._fail("target reports pid %s, expected %d (did chroot not exec?)"
                       % (info.get("pid"), self.proc.pid))
        return info

    def _wait_parked(self):
        """No dump happens before the parked threads are really in their sleep.

        The ready file appears while its writer is still inside the line that
        records, reports and sleeps; dumping then would race with the target.
        Once every thread that should be parked is blocked in the sleep
        syscall its stack cannot change, so parked scenarios need no retries.
        """
        if self.park == PARK_NONE:
            return
        deadline = time.monotonic() + PARKED_TIMEOUT
        while True:
            tids = task_ids(self.pid) if self.park == PARK_ALL else [self.info["main_tid"]]
            waiting = [t for t in tids if not is_parked(self.pid, t)]
            if tids and not waiting:
                return
            if process_exited(self.pid):
                self._fail("target died after it was ready")
            if time.monotonic() > deadline:
                self._fail("threads %s never parked in time.sleep() within %d s"
                           % (waiting, PARKED_TIMEOUT))
            time.sleep(0.005)


# ----------------------------------------------------------------------
# Scenarios on a shared, parked target: fn(ctx)
# ----------------------------------------------------------------------

class Ctx:
    def __init__(self, suite, interp, target):
        self.suite, self.interp, self.target = suite, interp, target


def dump_target(ctx):
    """--json dump of ctx.target; on failure the target's state is reported."""
    try:
        return dump_json(ctx.target.pid)
    except Fail as failure:
        failure.lines += ctx.target.status()
        raise


def test_deep_recursion(ctx):
    info = ctx.target.info
    expect(len(info["frames"]) >= 900,
           "target recorded only %d frames" % len(info["frames"]))
    doc = dump_target(ctx)
    expect([t["tid"] for t in doc["threads"]] == [info["main_tid"]],
           "expected just the main thread %d, got tids %s"
           % (info["main_tid"], [t["tid"] for t in doc["threads"]]))
    compare_stacks("main thread", info["frames"], doc["threads"][0]["frames"])


def test_subinterpreters(ctx):
    """A thread parked inside a subinterpreter: its tid appears in both
    interpreters, with the subinterpreter's frames in the subinterpreter's
    entry; the sampler's walker sees them too (record)."""
    info = ctx.target.info
    doc = dump_target(ctx)
    entries = {t["interpreter"]: t for t in doc["threads"] if t["tid"] == info["sub_tid"]}
    expect(sorted(entries) == [0, info["sub_interp"]],
           "thread %d should appear in interpreters 0 and %d, got %s"
           % (info["sub_tid"], info["sub_interp"], sorted(entries)), "dump: " + show(doc, 1500))
    funcs = [f["func"] for f in entries[info["sub_interp"]]["frames"]]
    expect(funcs == ["sub_parked", "<module>"],
           "subinterpreter frames are %s, expected sub_parked, <module>" % funcs)
    outer = [f["func"] for f in entries[0]["frames"]]
    expect(outer[:1] == ["runner"],
           "the thread's frames in the main interpreter start %s, expected runner" % outer[:3])
    main = [t for t in doc["threads"] if t["tid"] == info["main_tid"]]
    expect(len(main) == 1 and main[0]["interpreter"] == 0 and main[0]["main"],
           "main thread entry: %s" % show(main, 600))
    compare_stacks("main thread", info["main_frames"], main[0]["frames"])
    path = in_root(os.path.join(ctx.target.dir, "sub.collapsed"))
    tachyon("record", "-p", ctx.target.pid, "-d", "1", "-r", "500", "-o", path).expect_success()
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    expect(any("sub_parked (" in line for line in lines),
           "record's profile has no sub_parked stack", *["collapsed: " + show(l) for l in lines[:8]])
    expect(any(re.search(r"(^|;)main \(", line) for line in lines),
           "record's profile lacks the main thread", *["collapsed: " + show(l) for l in lines[:8]])


def test_threads(ctx):
    info = ctx.target.info
    expect(len(info["threads"]) >= 31, "target recorded only %d threads"
           % len(info["threads"]))
    doc = dump_target(ctx)
    expect_at_most_one_gil_holder(doc)
    got = threads_by_tid(doc)
    expect(set(got) == set(info["tids"]),
           "thread ids differ from threading.enumerate()",
           "missing: %s" % sorted(set(info["tids"]) - set(got)),
           "unexpected: %s" % sorted(set(got) - set(info["tids"])))
    expect(ctx.target.pid in got, "main thread (tid = pid) missing")
    for record in info["threads"]:
        frames = got[record["tid"]]["frames"]
        expect(frames, "thread %d has no frames" % record["tid"])
        compare_stacks("innermost frame of thread %d" % record["tid"],
                       record["frames"][:1], frames[:1])
        compare_stacks("thread %d" % record["tid"], record["frames"], frames)


def test_text_mode(ctx):
    info = ctx.target.info
    run = tachyon("dump", "-p", ctx.target.pid)
    run.expect_success()
    expect_no_control_bytes(run.out, "stdout of " + run.cmd, allowed=b"\n\t")
    text = run.out.decode("utf-8", "replace")
    for record in info["threads"]:
        tid, innermost = record["tid"], record["frames"][0]["func"]
        expect(re.search(r"(?<!\d)%d(?!\d)" % tid, text),
               "thread id %d missing from text output" % tid, *run.details())
        expect(innermost in text, "innermost function %s of thread %d missing "
               "from text output" % (innermost, tid), *run.details())


def test_thread_names(ctx):
    """Each thread under the name threading gives it (a long name, a
    pool's, one renamed after start, non-ASCII with an escape sequence,
    MainThread), the kernel's beside it: --json's name and os_name, the
    text's "NAME", OS name "COMM" with no raw control byte; a thread
    threading does not know under the kernel's name. The same names in
    --batch's thread table and in record -t's thread frames."""
    want = {int(tid): name for tid, name in ctx.target.info["names"].items()}
    pid = ctx.target.pid
    comms = {}
    unregistered = ctx.target.info["unregistered"]
    for tid in list(want) + [unregistered]:
        with open("/proc/%d/task/%d/comm" % (pid, tid), encoding="utf-8",
                  errors="replace") as f:
            comms[tid] = f.read().rstrip("\n")
    # a thread threading does not know: the kernel's name
    shown = dict(want)
    shown[unregistered] = comms[unregistered]
    doc = dump_target(ctx)
    got = threads_by_tid(doc)
    wrong = ["%d: %r / %r, want %r / %r" % (tid, got.get(tid, {}).get("name"),
                                           got.get(tid, {}).get("os_name"), name, comms[tid])
             for tid, name in sorted(want.items())
             if got.get(tid, {}).get("name") != name
             or got.get(tid, {}).get("os_name") != comms[tid]]
    expect(not wrong, "%d of %d threads named otherwise (name / os_name)" % (len(wrong), len(want)),
           *wrong)
    u = got.get(unregistered, {})
    expect(u.get("name") == comms[unregistered] and u.get("os_name") == comms[unregistered],
           "the thread threading does not know: name %r, os_name %r; want the kernel's %r"
           % (u.get("name"), u.get("os_name"), comms[unregistered]))
    run = tachyon("dump", "-p", pid)
    run.expect_success()
    expect_no_control_bytes(run.out, "stdout of " + run.cmd, allowed=b"\n\t")
    text = run.out.decode("utf-8", "replace")
    for tid, name in want.items():
        if name.isprintable():
            line = '"%s"' % name + (', OS name "%s"' % comms[tid] if comms[tid] != name else "")
            expect(re.search(r"^Thread %d .*%s" % (tid, re.escape(line)), text, re.M),
                   "thread %d's line does not say %s" % (tid, line), *run.details())
    # --batch's thread table: TID, the name, the kernel's column
    run = tachyon("-p", pid, "--batch", "-d", "0.5", "--delay", "0.5", "-n", "1")
    run.expect_success()
    expect_no_control_bytes(run.out, "stdout of " + run.cmd, allowed=b"\n\t")
    text = run.out.decode("utf-8", "replace")
    for tid, name in shown.items():
        if name.isprintable():
            expect(re.search(r"^\s*%d  %s +\S" % (tid, re.escape(name)), text, re.M),
                   "--batch: thread %d's row does not name it %s" % (tid, name),
                   *run.details())
    # record -t: each thread's frame says its name
    path = in_root(os.path.join(ctx.target.dir, "names.collapsed"))
    rec = tachyon("record", "-p", pid, "-t", "-d", "0.5", "-r", "500", "-o", path)
    rec.expect_success()
    with open(path, encoding="utf-8") as f:
        roots = {line.split(";", 1)[0] for line in f.read().splitlines()}
    for tid, name in shown.items():
        if name.isprintable():
            expect("thread %d %s" % (tid, name) in roots,
                   "record -t: no frame 'thread %d %s'" % (tid, name),
                   *["root frame: " + show(r) for r in sorted(roots)])


RENAME_INTERPS = ("python3.15", "host-python3.11")


def test_thread_rename(ctx):
    """A thread renamed while --batch runs: its last table has the new name
    (the registry is read again each second)."""
    if ctx.interp not in RENAME_INTERPS:
        raise Skip("the live refresh is the same code on every version: runs on %s"
                   % ", ".join(RENAME_INTERPS))
    tid = next(int(t) for t, n in ctx.target.info["names"].items() if n == "renamed-later")
    argv = [BIN, "-p", str(ctx.target.pid), "--batch", "-d", "2.5", "--delay", "2.5", "-n", "1"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        time.sleep(1.0)
        os.kill(ctx.target.pid, signal.SIGUSR1)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    run = Run(argv, proc.returncode, out, err)
    run.expect_success()
    text = run.out.decode("utf-8", "replace")
    last = text[text.rfind("TID  THREAD"):]
    expect(re.search(r"^\s*%d  renamed-live +\S" % tid, last, re.M),
           "--batch's last table does not name thread %d renamed-live" % tid, *run.details())


def test_python_version(ctx):
    doc = dump_target(ctx)
    expect(doc["python"] == ctx.target.info["python"],
           "python field %s, target's platform.python_version() is %s"
           % (show(doc["python"]), show(ctx.target.info["python"])))


INIT_SHIM_FUNCS = ["Session.__init__", "open_session", "<module>"]


def test_init_shim(ctx):
    """No interpreter shim frame between __init__ and its caller: in dump,
    and in what record writes (the sampler's cached walk)."""
    frames = ctx.target.info["frames"]
    expect([f["func"] for f in frames] == INIT_SHIM_FUNCS,
           "target's stack is not the designed one: " + show(frames, 1000))
    got = threads_by_tid(dump_target(ctx))
    compare_stacks("main thread parked in __init__", frames, got[ctx.target.pid]["frames"])
    path = in_root(os.path.join(ctx.target.dir, "shim.collapsed"))
    tachyon("record", "-p", ctx.target.pid, "-d", "1", "-r", "500", "-o", path).expect_success()
    with open(path, encoding="utf-8") as f:
        lines = [l for l in f.read().splitlines() if "Session.__init__" in l]
    want = ";".join("%s (%s:%d)" % (f["func"], f["file"], f["line"]) for f in reversed(frames))
    expect(lines and all(l.rsplit(" ", 1)[0] == want for l in lines),
           "record's stacks through Session.__init__ are not exactly the target's own",
           "expected: " + show(want), *["collapsed: " + show(l) for l in lines[:4]])


def test_qualnames(ctx):
    info = ctx.target.info
    main, aio = info["threads"][-1], info["threads"][0]
    recorded_main = [f["func"] for f in main["frames"]]
    recorded_aio = [f["func"] for f in aio["frames"]]
    expect(recorded_main == QUALNAMES_MAIN,
           "target's main stack is not the designed one: " + show(recorded_main, 1000))
    expect(recorded_aio[:len(QUALNAMES_ASYNCIO)] == QUALNAMES_ASYNCIO,
           "target's asyncio stack is not the designed one: " + show(recorded_aio, 1000))
    got = threads_by_tid(dump_target(ctx))
    expect(set(got) == {main["tid"], aio["tid"]},
           "expected threads %s, got %s" % ([main["tid"], aio["tid"]], sorted(got)))
    compare_stacks("main thread (generator + manual coroutine)", main["frames"],
                   got[main["tid"]]["frames"])
    compare_stacks("asyncio thread", aio["frames"], got[aio["tid"]]["frames"])


def test_nonascii(ctx):
    frames = ctx.target.info["frames"]
    expect([f["func"] for f in frames] == NONASCII_FUNCS,
           "target's stack is not the designed one: " + show(frames, 1000))
    expect([f["file"] for f in frames[:2]] == NONASCII_FILES
           and NONASCII_DIR in frames[-1]["file"],
           "target's filenames are not the designed ones: " + show(frames, 1000))
    doc = dump_target(ctx)
    got = threads_by_tid(doc)
    expect(set(got) == {ctx.target.pid}, "expected only the main thread, got %s"
           % sorted(got))
    compare_stacks("main thread", frames, got[ctx.target.pid]["frames"])


def test_escapes_json(ctx):
    frames = ctx.target.info["frames"]
    expect([f["func"] for f in frames[:2]] == [EVIL_NAME, NASTY_QUALNAME]
           and frames[1]["file"] == EVIL_FILE,
           "target's stack is not the designed one: " + show(frames, 1000))
    doc = dump_target(ctx)  # also asserts: no raw control bytes but \n
    got = threads_by_tid(doc)[ctx.target.pid]["frames"]
    expect(got and got[0]["func"] == EVIL_NAME,
           "innermost func does not decode to the evil name",
           "got: " + show(got[:1]))
    compare_stacks("main thread", frames, got)


def test_escapes_text(ctx):
    run = tachyon("dump", "-p", ctx.target.pid)
    run.expect_success()
    expect_no_control_bytes(run.out, "stdout of " + run.cmd, allowed=b"\n\t")
    lines = run.out.decode("utf-8", "replace").splitlines()
    injected = [line for line in lines if line.startswith("INJECTED")]
    expect(not injected, "a newline from the target's strings went out raw",
           *["injected line: " + show(line) for line in injected])
    expect("EVIL" in run.out.decode("utf-8", "replace"),
           "the evil function is missing from the text output", *run.details())


def test_thread_churn(ctx):
    """~20 dumps while threads come and go; the parked main thread is stable."""
    runs, good, errors, thread_counts = 20, 0, [], set()
    for _ in range(runs):
        run = tachyon("dump", "-p", ctx.target.pid, "--json")
        if run.rc != 0:
            run.expect_one_line_error()
            errors.append(run.err.decode("utf-8", "replace").strip())
            continue
        doc = run.json(ctx.target.pid)
        thread_counts.add(len(doc["threads"]))
        main = threads_by_tid(doc).get(ctx.target.pid)
        if main is not None and frame_tuples(main["frames"]) == frame_tuples(
                ctx.target.info["frames"]):
            good += 1
        else:
            errors.append("main thread missing or wrong: " + show(main, 400))
    expect(good >= runs * 0.8,
           "only %d of %d dumps succeeded with the main thread's stack" % (good, runs),
           "target churns ~%s threads/s; thread counts seen: %s"
           % (ctx.target.info.get("churn_per_s"), sorted(thread_counts)),
           *["failure: " + show(e) for e in errors[:8]])


# ----------------------------------------------------------------------
# Scenarios that manage their own targets or processes
# ----------------------------------------------------------------------

def racing_dump(pid):
    """A dump racing with the target's exit: "ok", or "error" if it failed
    cleanly (one-line message); a crash, hang or bad output fails the test."""
    run = tachyon("dump", "-p", pid, "--json")
    if run.rc == 0:
        run.json(pid, may_have_no_threads=True)
        return "ok"
    run.expect_one_line_error()
    return "error"


def test_target_exits(ctx):
    """The target exits (or is SIGKILLed) at a random moment while dumps run
    back to back; then it is dumped as a zombie, and once reaped."""
    modes = ["return", "_exit", "park", "return"]  # park: the test kills it
    tally = collections.Counter()
    for mode in modes:
        delay = round(ctx.suite.rng.uniform(0.05, 0.4), 3)
        with Target(ctx.suite, ctx.interp, "exiting.py", args=(delay, mode),
                    park=PARK_NONE) as target:
            killer = threading.Timer(delay, os.kill, (target.pid, signal.SIGKILL))
            if mode == "park":
                killer.start()
            try:
                deadline = time.monotonic() + delay + 15
                while not process_exited(target.pid):
                    expect(time.monotonic() < deadline,
                           "target (mode %s) did not exit" % mode, *target.status())
                    tally["alive", racing_dump(target.pid)] += 1
                tally["zombie", racing_dump(target.pid)] += 1
                target.proc.wait(timeout=10)
                tally["reaped", racing_dump(target.pid)] += 1
            finally:
                killer.cancel()
    expect(tally["alive", "ok"] >= 1, "no dump succeeded while the targets were alive",
           "tally: %s" % dict(tally))


def test_not_python(suite):
    proc = subprocess.Popen(["sleep", "1000"], start_new_session=True)
    try:
        tachyon("dump", "-p", proc.pid, "--json").expect_one_line_error(
            contains="not a Python process")
        tachyon("dump", "-p", proc.pid).expect_one_line_error(
            contains="not a Python process")
    finally:
        proc.kill()
        proc.wait()


def older_python():
    """An interpreter older than 3.11 on this machine: pyenv's, or the host's."""
    found = sorted(glob.glob(os.path.join(matrix.PYENV_ROOT, "versions", "3.*", "bin",
                                          "python3.*")))
    host = shutil.which("python3")
    for path in found + ([host] if host else []):
        m = re.search(r"python3\.(\d+)$", path)
        if m and int(m.group(1)) < 11 and os.access(path, os.X_OK):
            return path, "3." + m.group(1)
        if path == host:
            out = subprocess.run([host, "-c", "import sys; print(sys.version_info[1])"],
                                 capture_output=True, text=True).stdout.strip()
            if out.isdigit() and int(out) < 11:
                return host, "3." + out
    return None, None


def test_old_python(suite):
    """A Python older than 3.11 is refused, naming its version and the range."""
    path, version = older_python()
    if not path:
        raise Skip("no Python older than 3.11 here (pyenv or host)")
    proc = subprocess.Popen([path, "-c", "import time; time.sleep(60)"],
                            stdin=subprocess.DEVNULL)
    try:
        time.sleep(0.3)
        run = tachyon("dump", "-p", proc.pid)
        run.expect_one_line_error(contains="unsupported Python version " + version)
        expect(b"3.11 to 3.15" in run.err, "the refusal does not name the supported range",
               *run.details())
    finally:
        proc.kill()
        proc.wait()


def readelf(flag, path):
    out = subprocess.run(["readelf", "-W", flag, path], capture_output=True, text=True)
    expect(out.returncode == 0, "readelf %s %s failed" % (flag, path), out.stderr)
    return out.stdout


def test_pie_names(suite):
    """Every *-pie interpreter in the matrix really is position-independent
    (readelf -h: DYN), and a *-static-pie one carries the runtime itself."""
    checked = []
    for interp in suite.interps:
        if not interp.endswith("-pie"):
            continue
        path = interpreter_path(interp)
        expect(os.path.isfile(path), "%s: %s missing (run tests/provision.sh)" % (interp, path))
        header = readelf("-h", path)
        kind = re.search(r"^\s*Type:\s*(\S+)", header, re.M)
        expect(kind and kind.group(1) == "DYN",
               "%s is named -pie but readelf -h says %s" % (interp, kind and kind.group(1)),
               "path: " + path)
        if interp.endswith("-static-pie"):
            needed = re.findall(r"\(NEEDED\).*\[(.*)\]", readelf("-d", path))
            expect(needed and not any(n.startswith("libpython") for n in needed),
                   "%s links a shared libpython: %s" % (interp, needed))
            sections = readelf("-S", path)
            expect(".PyRuntime" in sections, "%s has no .PyRuntime section" % interp)
        checked.append(interp)
    if not checked:
        suite_note("no *-pie interpreter in the matrix")


def cap_sys_ptrace():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("CapEff:"):
                return bool(int(line.split()[1], 16) >> 19 & 1)
    return False


ROOT_ADVICE = ("run as root", "setcap", "ptrace_scope=0", "grant")


def test_refusal_messages(suite):
    """A refused read says what refused it and suggests only what would help:
    as root with CAP_SYS_PTRACE, pid 1 (when the kernel refuses it) gets no
    'run as root' advice; as another user, the uid mismatch is named; as the
    root of a user namespace, that namespace is named."""
    run = tachyon("dump", "-p", 1)
    if "permission denied" in run.err.decode(errors="replace"):
        msg = run.err.decode(errors="replace")
        run.expect_one_line_error(contains="permission denied reading process 1")
        if os.geteuid() == 0 and cap_sys_ptrace():
            bad = [a for a in ROOT_ADVICE if a in msg]
            expect(not bad, "root with CAP_SYS_PTRACE is told to %s" % bad, *run.details())
            expect("CAP_SYS_PTRACE" in msg and ("namespace" in msg or "kernel thread" in msg
                                                or "ptrace_scope is 3" in msg
                                                or "confine" in msg),
                   "pid 1's refusal names no cause", *run.details())
    else:
        suite_note("dump -p 1 was not refused here (%s): the root case is not exercised"
                   % show(run.err.strip()))
    # Another user, no capabilities, against a root-owned process.
    proc = subprocess.Popen(["sleep", "30"])
    try:
        time.sleep(0.1)
        def drop():
            os.setgroups([])
            os.setresgid(65534, 65534, 65534)
            os.setresuid(65534, 65534, 65534)
        out = subprocess.run([BIN, "dump", "-p", str(proc.pid)], capture_output=True,
                             preexec_fn=drop, timeout=DUMP_TIMEOUT)
        nobody = Run([BIN, "dump", "-p", str(proc.pid)], out.returncode, out.stdout, out.stderr)
        nobody.expect_one_line_error(contains="permission denied reading process %d" % proc.pid)
        msg = nobody.err.decode(errors="replace")
        expect("uid 0" in msg and "uid 65534" in msg and "run it as root" in msg,
               "as uid 65534 the refusal does not name the uids and the remedy", *nobody.details())
        # "Root" inside a user namespace (rootless podman) against a host process.
        unshare = shutil.which("unshare") or shutil.which("unshare", path="/usr/sbin:/sbin")
        if unshare and os.geteuid() == 0:
            argv = [unshare, "--user", "--map-root-user", BIN, "dump", "-p", str(proc.pid)]
            out = subprocess.run(argv, capture_output=True, timeout=DUMP_TIMEOUT)
            inside = Run(argv, out.returncode, out.stdout, out.stderr)
            inside.expect_one_line_error(
                contains="permission denied reading process %d" % proc.pid)
            msg = inside.err.decode(errors="replace")
            expect("runs in a user namespace" in msg and "from the host" in msg
                   and "confine" not in msg,
                   "in a user namespace the refusal does not say so", *inside.details())
    finally:
        proc.kill()
        proc.wait()


def suite_note(text):
    print("# " + printable(text), flush=True)


def free_pid():
    """The pid of a child that has already been reaped."""
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_missing_pid(suite):
    for _ in range(3):
        pid = free_pid()
        if os.path.exists("/proc/%d" % pid):
            continue
        run = tachyon("dump", "-p", pid, "--json")
        if os.path.exists("/proc/%d" % pid):  # reused meanwhile: try another
            continue
        run.expect_one_line_error(contains="no such process")
        return
    raise Fail("could not find a free pid")


BAD_ARGUMENTS = [["dump"], ["dump", "-p"], ["dump", "-p", "abc"],
                 ["dump", "-p", "12x"], ["dump", "-p", "-1"], ["dump", "-p", ""],
                 ["dump", "-p", "99999999999999999999999"],
                 ["dump", "--bogus-option"], ["no-such-verb"]]


def test_bad_arguments(suite):
    for args in BAD_ARGUMENTS:
        run = tachyon(*args)
        expect(run.rc != 0, "%s exited 0" % run.cmd, *run.details())
        expect(run.err.strip(), "%s failed silently (nothing on stderr)" % run.cmd,
               *run.details())


# ----------------------------------------------------------------------
# The plan
# ----------------------------------------------------------------------

class Group:
    """Tests sharing one target (script=None: each test fends for itself)."""

    def __init__(self, script, park, tests, subdir=None, args=()):
        self.script, self.park, self.tests, self.subdir = script, park, tests, subdir
        self.args = args  # the script's arguments


PER_INTERPRETER = [
    Group("recursion.py", PARK_MAIN, [
        ("deep recursion (1000 frames) matches the target's own stack",
         test_deep_recursion)]),
    Group("threads.py", PARK_ALL, [
        ("33 threads: tids match threading.enumerate(), stacks match each thread's record",
         test_threads),
        ("text mode lists every thread id and innermost function", test_text_mode),
        ("python field equals platform.python_version()", test_python_version)]),
    Group("names.py", PARK_MAIN, [
        ("threads under threading's names (long, a pool's, renamed, non-ASCII, MainThread), "
         "the kernel's beside them", test_thread_names),
        ("a thread renamed while --batch runs: the new name in its last table",
         test_thread_rename)]),
    Group("qualnames.py", PARK_ALL, [
        ("qualnames: nested classes, closures, lambda, generator, coroutines, asyncio",
         test_qualnames)]),
    Group("initshim.py", PARK_MAIN, [
        ("a class instantiated 200 times, parked in __init__: no shim frame (dump, record)",
         test_init_shim)]),
    Group("nonascii.py", PARK_MAIN, [
        ("latin-1/UCS-2/UCS-4 names and non-ASCII filenames round-trip exactly",
         test_nonascii)], subdir=NONASCII_DIR),
    Group("escapes.py", PARK_MAIN, [
        ("escape sequences in names: --json has no raw control bytes and decodes exactly",
         test_escapes_json),
        ("escape sequences in names: text mode has no raw control bytes",
         test_escapes_text)]),
    Group("churn.py", PARK_MAIN, [
        ("threads exiting while being read: 20 dumps, >= 80% clean, none crash",
         test_thread_churn)]),
    Group("subinterp.py", PARK_ALL, [
        ("a thread parked in a subinterpreter: listed in both interpreters, frames "
         "in each; record sees it", test_subinterpreters)]),
    Group(None, None, [
        ("target exiting or killed during dumps: no crash, hang or multi-line error",
         test_target_exits)]),
]

ONCE = [
    ("interpreters named -pie are ELF DYN (readelf); -static-pie has no shared libpython",
     test_pie_names),
    ("refused reads: the cause and only useful remedies (dump -p 1 as root; another uid)",
     test_refusal_messages),
    ("non-Python pid: one-line 'not a Python process' error", test_not_python),
    ("missing pid: one-line 'no such process' error", test_missing_pid),
    ("Python older than 3.11: one-line 'unsupported Python version X.Y' error", test_old_python),
    ("bad arguments: non-zero exit and a message", test_bad_arguments),
]


class Suite:
    """Run-wide state: interpreters, scratch directory, random generator."""

    def __init__(self, interps, rng):
        self.interps, self.rng = interps, rng
        self.scratch = tempfile.mkdtemp(prefix="tt-functional-", dir=in_root("/tmp"))
        self.root_scratch = "/tmp/" + os.path.basename(self.scratch)
        self.counter = itertools.count(1)

    def new_dir(self, label):
        """A fresh root path under the scratch directory."""
        return "%s/%02d-%s" % (self.root_scratch, next(self.counter), label)

    def has(self, interp):
        return matrix.get(interp).missing is None

    def missing(self, interp):
        return matrix.get(interp).missing

    def embed_host(self):
        """Root path of a copy of tests/embedhost inside the root."""
        path = self.root_scratch + "/tt-embedhost"
        if not os.path.exists(in_root(path)):
            shutil.copy(EMBED_HOST, in_root(path))
        return path

    def cleanup(self):
        if not os.environ.get("TT_KEEP"):
            shutil.rmtree(self.scratch, ignore_errors=True)


def only_selected(tap, pending):
    """By hand, TT_ONLY=TEXT runs only the tests whose name has TEXT: the
    others of pending, (name, test) pairs, are skipped; the rest returned."""
    only = os.environ.get("TT_ONLY")
    if not only:
        return pending
    for name in [n for n, _ in pending if only not in n]:
        tap.skip(name, "not in TT_ONLY")
    return [(n, t) for n, t in pending if only in n]


def run_group(tap, suite, interp, group):
    names = ["%s: %s" % (interp, desc) for desc, _ in group.tests]
    if not suite.has(interp):
        for name in names:
            tap.skip(name, suite.missing(interp))
        return
    pending = only_selected(tap, list(zip(names, group.tests)))
    if not pending:
        return
    try:
        with contextlib.ExitStack() as stack:
            target = None
            if group.script:
                target = stack.enter_context(Target(suite, interp, group.script,
                                                    args=group.args,
                                                    park=group.park, subdir=group.subdir))
            ctx = Ctx(suite, interp, target)
            while pending:
                name, (_, fn) = pending.pop(0)
                tap.run(name, fn, ctx)
    except Fail as failure:  # the shared target did not start
        for name, _ in pending:
            tap.not_ok(name, failure.lines)


def sanitized(binary):
    """Built with AddressSanitizer: freed memory waits in its quarantine
    (256 MB), so RSS says nothing about what tachyon-top keeps, and a sample
    is several times slower."""
    with open(binary, "rb") as f:
        return b"__asan_init" in f.read()


def root_missing():
    if os.environ.get("CI") == "true":
        print("1..1")
        print("not ok 1 - test root provisioned")
        print("# %s does not exist (run tests/provision.sh)" % ROOT)
        return 1
    print("1..0 # SKIP root not provisioned (run tests/provision.sh)")
    return 0


def find_chroot():
    return shutil.which("chroot") or shutil.which("chroot", path="/usr/sbin:/sbin")


CHROOT = find_chroot()


def main():
    global BIN
    if not os.path.isdir(ROOT):
        return root_missing()
    if os.sep in BIN:
        BIN = os.path.abspath(BIN)
    else:
        BIN = shutil.which(BIN) or BIN
    if not (os.path.isfile(BIN) and os.access(BIN, os.X_OK)):
        print("Bail out! binary under test not found: %s (set TT_BIN)" % BIN)
        return 1
    if CHROOT is None:
        print("Bail out! chroot(8) not found")
        return 1
    if os.geteuid() != 0:
        print("Bail out! must run as root (chroot, reading process memory)")
        return 1
    # SIGTERM (e.g. a harness timeout) unwinds normally, killing targets.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))

    interps = os.environ.get("TT_INTERPS", DEFAULT_INTERPS).split()
    seed = int(os.environ.get("TT_SEED") or random.randrange(10**6))
    started = time.monotonic()
    tap = Tap(len(interps) * sum(len(g.tests) for g in PER_INTERPRETER) + len(ONCE))
    tap.comment("binary: %s; root: %s; seed (TT_SEED): %d" % (BIN, ROOT, seed))
    suite = Suite(interps, random.Random(seed))
    try:
        for interp in interps:
            if suite.has(interp):
                kind = elf_type(interpreter_path(interp))
                note = " (named -pie but NOT position-independent)" if (
                    interp.endswith("-pie") and kind == "EXEC") else ""
                tap.comment("%s: ELF %s%s, %s (%s)" % (interp, kind, note,
                                                     interpreter_path(interp),
                                                     matrix.get(interp).where()))
            else:
                tap.comment("%s: SKIP, %s" % (interp, suite.missing(interp)))
        for desc, fn in ONCE:
            tap.run(desc, fn, suite)
        for interp in interps:
            for group in PER_INTERPRETER:
                run_group(tap, suite, interp, group)
    finally:
        suite.cleanup()
    tap.comment("%d of %d failed; runtime %.1f s"
                % (tap.failures, tap.planned, time.monotonic() - started))
    return 1 if tap.failures or tap.number != tap.planned else 0


if __name__ == "__main__":
    sys.exit(main())
