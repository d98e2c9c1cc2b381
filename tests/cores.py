#!/usr/bin/env python3
"""dump --core against the live process the core was taken of: the kernel's
core of a target killed by SIGABRT (core_pattern pointed into a temporary
directory, then put back) gives the same threads and frames as a live dump
just before, and the parked thread's locals as the target's own repr();
gdb's gcore of a host interpreter likewise; damaged and foreign cores give
one clear line. Emits TAP. Needs root and the provisioned target root."""

import contextlib
import glob
import json
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import functional as rig  # noqa: E402
from functional import expect, show  # noqa: E402

CORE_PATTERN = "/proc/sys/kernel/core_pattern"
# A core is read through the same layouts as a live process: these cover
# each minor version and each way an interpreter is built (the suite is
# near its 40 minutes).
CORE_INTERPS = ("host-python3.11", "pyenv-3.12", "python3.13", "python3.14", "python3.15",
                "python3.15d", "python3.15-static-pie", "libpython3.15")
CORE_WAIT = 20   # s for the kernel to write a core


@contextlib.contextmanager
def cores_into(suite):
    """The kernel writes cores to DIR/core.PID (DIR both on the host and in
    the root: a chrooted process's core goes under its root) meanwhile."""
    name = "tt-cores-%d" % os.getpid()
    host = os.path.join("/tmp", name)
    inside = rig.in_root(host)
    for d in (host, inside):
        os.makedirs(d, exist_ok=True)
        os.chmod(d, 0o1777)
    with open(CORE_PATTERN) as f:
        saved = f.read()
    try:
        with open(CORE_PATTERN, "w") as f:
            f.write(host + "/core.%p\n")
        yield host, inside
    finally:
        with open(CORE_PATTERN, "w") as f:
            f.write(saved)
        shutil.rmtree(host, ignore_errors=True)
        shutil.rmtree(inside, ignore_errors=True)


def abort_for_core(target, dirs):
    """SIGABRT the target (core size unlimited first) and wait for its core."""
    resource.prlimit(target.pid, resource.RLIMIT_CORE,
                     (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    os.kill(target.pid, signal.SIGABRT)
    target.proc.wait(timeout=CORE_WAIT)
    deadline = time.monotonic() + CORE_WAIT
    while time.monotonic() < deadline:
        for d in dirs:
            path = os.path.join(d, "core.%d" % target.pid)
            if os.path.exists(path):
                size = -1
                while os.path.getsize(path) != size:   # still being written
                    size = os.path.getsize(path)
                    time.sleep(0.2)
                return path
        time.sleep(0.1)
    raise rig.Fail("no core of pid %d in %s within %d s" % (target.pid, dirs, CORE_WAIT))


def stacks(doc):
    return {t["tid"]: [(f["func"], f["file"], f["line"]) for f in t["frames"]]
            for t in doc["threads"]}


def root_of(interp):
    """--root for a target of this interpreter: the root, or none on the host."""
    it = rig.matrix.get(interp)
    return [] if it.on_host else ["--root", rig.ROOT]


def test_kernel_core(ctx):
    """The kernel's core of a target killed by SIGABRT: the live dump's
    threads and frames, and the parked thread's locals as repr() gave them."""
    with cores_into(ctx.suite) as dirs, \
            rig.Target(ctx.suite, ctx.interp, "locals.py", args=(1000,),
                       park=rig.PARK_MAIN) as target:
        live = rig.tachyon("dump", "--json", "-p", target.pid).json(target.pid)
        wants = target.info["wants"]
        core = abort_for_core(target, dirs)
        run = rig.tachyon("dump", "--core", core, "--json", "--locals", *root_of(ctx.interp),
                          timeout=60)
        doc = run.json(target.pid)
        want, got = stacks(live), stacks(doc)
        # the counter moved between the two: its innermost line may differ
        counter = target.info["roles"]["counter"]
        want.pop(counter, None)
        counted = got.pop(counter, None)
        expect(got == want and counted, "the core's threads and frames differ from the live "
               "dump's", "live: %s" % show(want, 2000), "core: %s" % show(got, 2000))
        oracle = [f for t in doc["threads"] if t["tid"] == target.info["roles"]["oracle"]
                  for f in t["frames"] if f["func"] == "holding"][0]
        have = {l["name"]: l["repr"] for l in oracle["locals"]}
        bad = ["%s: %s, want %s" % (n, have.get(n), w["repr"]) for n, w in sorted(wants.items())
               if have.get(n) != w["repr"]]
        expect(not bad, "locals read from the core differ from repr()", *bad)
        i = [l["repr"] for t in doc["threads"] if t["tid"] == counter for f in t["frames"]
             if f["func"] == "counter" for l in f["locals"] if l["name"] == "i"]
        expect(i and i[0].isdigit(), "the counter in a core holds still: %s" % i)
        rig.Tap.emit("# %s: %d threads, %d MB core" % (ctx.interp, len(doc["threads"]),
                                                         os.path.getsize(core) >> 20))


def test_self_abort(ctx):
    """A process that calls os.abort() itself: its core's main thread is
    in give_up(), at the line of the call."""
    with cores_into(ctx.suite) as dirs:
        target = rig.Target(ctx.suite, ctx.interp, "aborter.py", park=rig.PARK_NONE)
        with target:
            resource.prlimit(target.pid, resource.RLIMIT_CORE,
                             (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
            target.proc.wait(timeout=CORE_WAIT)
            core = None
            deadline = time.monotonic() + CORE_WAIT
            while not core and time.monotonic() < deadline:
                found = [os.path.join(d, "core.%d" % target.pid) for d in dirs]
                core = next((p for p in found if os.path.exists(p)), None)
                time.sleep(0.1)
            expect(core, "no core of the aborted process in %s" % (dirs,))
            time.sleep(0.5)   # written whole
            doc = rig.tachyon("dump", "--core", core, "--json", *root_of(ctx.interp),
                              timeout=60).json(target.pid)
        main = [t for t in doc["threads"] if t["main"]]
        frames = main[0]["frames"] if main else []
        expect(frames and frames[0]["func"] == "give_up" and
               frames[0]["line"] == target.info["abort_line"],
               "the aborting frame is not innermost: %s" % show(frames))


def test_core_native(ctx):
    """dump --core --native: each thread's native frames, from the core's
    registers, are the live dump's (blocked threads: the same program
    counters, at least as far), merged with the Python frames."""
    with cores_into(ctx.suite) as dirs, \
            rig.Target(ctx.suite, ctx.interp, "native.py", park=rig.PARK_ALL) as target:
        live = rig.tachyon("dump", "--native", "--json", "-p", target.pid).json(target.pid)
        core = abort_for_core(target, dirs)
        doc = rig.tachyon("dump", "--core", core, "--native", "--json", *root_of(ctx.interp),
                          timeout=60).json(target.pid)
    pcs = {t["tid"]: [f["pc"] for f in t["native"]] for t in doc["threads"]}
    bad = []
    for t in live["threads"]:
        want, got = [f["pc"] for f in t["native"]], pcs.get(t["tid"], [])
        # a library deleted from disk (native.py's libz copy) is in no
        # core: the walk ends in it
        gone = [i for i, f in enumerate(t["native"]) if "(deleted)" in (f["library"] or "")]
        if gone:
            want = want[:gone[0] + 1]
        if not want or got[:len(want)] != want:
            bad.append("thread %d: live %s, core %s" % (t["tid"], want, got))
    merged = all(t["merged"] for t in doc["threads"]
                 if not any("(deleted)" in (f["library"] or "") for f in t["native"]))
    expect(not bad and merged, "the core's native frames differ from the live dump's "
           "(or are not merged)", *bad)


def test_core_tasks(ctx):
    """Python 3.14+: dump --core --tasks gives the asyncio tasks of the
    live dump just before (every shape: gather, TaskGroup, shield, tasks
    awaited by two)."""
    minor = int(re.search(r"3\.(\d+)", ctx.interp).group(1))
    if minor < 14:
        raise rig.Skip("asyncio tasks are read from 3.14 on")
    with cores_into(ctx.suite) as dirs, \
            rig.Target(ctx.suite, ctx.interp, "tasks_forest.py", park=rig.PARK_NONE) as target:
        time.sleep(0.5)
        live = rig.tachyon("dump", "--tasks", "--json", "-p", target.pid).json(target.pid)
        core = abort_for_core(target, dirs)
        doc = rig.tachyon("dump", "--core", core, "--tasks", "--json", *root_of(ctx.interp),
                          timeout=60).json(target.pid)
        expect(live["tasks"] and doc.get("tasks") == live["tasks"],
               "the core's tasks differ from the live dump's (%d live, %s in the core)"
               % (len(live["tasks"]), len(doc.get("tasks") or [])),
               "core: %s" % show(doc.get("tasks"), 1500), "error: %s" % doc.get("tasks_error"))


GCORE_ROOT_INTERPS = ("python3.13", "python3.15")


def test_gcore(ctx):
    """gdb's gcore of a live target (it stops it a moment): the same frames.
    A target in the root, dumped from the host, is a core whose files are
    named by their host paths: read with and without --root. gdb 13 writes
    zeros for thread stacks with guard regions (sid's glibc), where 3.13+
    keep their entry frames: in the root, a target of the main thread alone
    (1,000 frames deep); a threaded one's threads keep their innermost
    frames (on 3.13 all of them: only the C stack's entry frame below is
    lost), marked, with one warning line saying why."""
    it = rig.matrix.get(ctx.interp)
    if not it.on_host and ctx.interp not in GCORE_ROOT_INTERPS:
        raise rig.Skip("gcore from the host: %s only" % ", ".join(GCORE_ROOT_INTERPS))
    script = "threads.py" if it.on_host else "recursion.py"
    with rig.Target(ctx.suite, ctx.interp, script, park=rig.PARK_ALL) as target:
        live = rig.tachyon("dump", "--json", "-p", target.pid).json(target.pid)
        prefix = os.path.join(tempfile.mkdtemp(prefix="tt-gcore-"), "core")
        try:
            gdb = subprocess.run(["gdb", "-batch", "-p", str(target.pid), "-ex",
                                  "gcore %s" % prefix], capture_output=True, timeout=120)
            core = prefix   # gdb's own gcore command writes the name given
            expect(os.path.exists(core), "gcore wrote nothing",
                   show(gdb.stdout[-500:]), show(gdb.stderr[-500:]))
            docs = [("", rig.tachyon("dump", "--core", core, "--json",
                                     timeout=60).json(target.pid))]
            if not it.on_host:
                docs.append(("--root", rig.tachyon("dump", "--core", core, "--root", rig.ROOT,
                                                   "--json", timeout=60).json(target.pid)))
        finally:
            shutil.rmtree(os.path.dirname(prefix), ignore_errors=True)
        for how, doc in docs:
            expect(stacks(doc) == stacks(live), "gcore's frames %sdiffer from the live dump's"
                   % (how and "read with --root "),
                   "live: %s" % show(stacks(live), 1500), "core: %s" % show(stacks(doc), 1500))
    if it.on_host:
        return
    with rig.Target(ctx.suite, ctx.interp, "threads.py", park=rig.PARK_ALL) as target:
        live = rig.tachyon("dump", "--json", "-p", target.pid).json(target.pid)
        prefix = os.path.join(tempfile.mkdtemp(prefix="tt-gcore-"), "core")
        try:
            subprocess.run(["gdb", "-batch", "-p", str(target.pid), "-ex", "gcore %s" % prefix],
                           capture_output=True, timeout=120)
            run = rig.tachyon("dump", "--core", prefix, "--root", rig.ROOT, "--json",
                              timeout=60)
        finally:
            shutil.rmtree(os.path.dirname(prefix), ignore_errors=True)
        doc = run.json(target.pid)
        want, got = stacks(live), stacks(doc)
        zeroed = {t["tid"] for t in doc["threads"] if t["core_zeros"]}
        bad = ["thread %d: live %s, core %s%s" % (tid, want[tid], got.get(tid),
                                                  " (zeros)" if tid in zeroed else "")
               for tid in want
               if not (got.get(tid) == want[tid] and tid not in zeroed or
                       tid in zeroed and got.get(tid) and got[tid] == want[tid][:len(got[tid])])]
        expect(not bad and zeroed and set(got) == set(want),
               "gcore of a threaded target: %d threads whose outer frames are zeros in the "
               "core; each thread's frames should be the live dump's, or its innermost ones "
               "marked core_zeros" % len(zeroed), *bad[:4])
        one_line(run, 0, ["the core holds zeros where %d of %d threads' outer frames were"
                          % (len(zeroed), len(want)), "gdb's gcore", "warning"],
                 "dump --core of a threaded target's gcore")


JITCODE_INTERPS = ("pyenv-3.12", "python3.13", "python3.15")
JITCODE_GCORES = 3


def jitcode_problem(doc, pid, mode, mark):
    """What is wrong with a core's main thread of jitcode.py in *mode*
    (None: its native walk reaches _start through the code no file holds,
    named from the perf map or the JIT interface, merged with the Python
    frames), and whether it stopped only short of _start."""
    t = [t for t in doc["threads"] if t["tid"] == pid][0]
    native = [f for f in t.get("stack") or [] if f["kind"] == "native"]
    code = [f for f in native if f.get("library") == mark]
    shown = " ".join("%s(%s)" % (f.get("func") or f.get("symbol") or f.get("pc"),
                                 f.get("library") or f.get("file") or "")
                     for f in t.get("stack") or [])[:900] + " / %s" % t["native_end"]
    if [f["func"] for f in t["frames"]] != ["inner", "outer", "<module>"]:
        return shown, False
    if not code or not all(f.get("symbol") and (mode == "jit" or re.match(
            r"py::(inner|outer|<module>):.*jitcode\.py$", f["symbol"])) for f in code):
        return "unnamed: " + shown, False
    if not (t["merged"] and t["native_end"] is None and native[-1].get("symbol") == "_start"):
        return shown, True
    return None, False


def test_core_jitcode(ctx):
    """dump --core --native of a process running code no file holds (perf
    trampolines; 3.15's JIT): the walk steps through it to _start, naming
    it from the perf map (under the root of the process's files) or from
    the JIT interface in the core's memory. Kernel cores with --root, and
    gdb's gcore from the host without it (files and perf map under the
    root the executable's path shows); a core taken in a function's first
    or last instructions may end a walk early: one of the gcores may."""
    if ctx.interp not in JITCODE_INTERPS:
        raise rig.Skip("on %s" % ", ".join(JITCODE_INTERPS))
    modes = ["perf"] + (["jit"] if ctx.interp == "python3.15" else [])
    for mode in modes:
        with rig.Target(ctx.suite, ctx.interp, "jitcode.py", args=(mode,),
                        park=rig.PARK_NONE) as target:
            expect(target.info["trampoline" if mode == "perf" else "jit"],
                   "%s is not on in Python %s" % (mode, target.info["python"]))
            mark = ("perf-%d.map" % target.pid) if mode == "perf" else "[jit]"
            scratch = tempfile.mkdtemp(prefix="tt-gcore-")
            problems, short = [], 0
            try:
                for i in range(JITCODE_GCORES):
                    core = os.path.join(scratch, "core%d" % i)
                    subprocess.run(["gdb", "-batch", "-p", str(target.pid), "-ex",
                                    "gcore %s" % core], capture_output=True, timeout=120)
                    doc = rig.tachyon("dump", "--core", core, "--native", "--json",
                                      timeout=60).json(target.pid)
                    problem, early = jitcode_problem(doc, target.pid, mode, mark)
                    short += early
                    if problem and not (early and short == 1):
                        problems.append("gcore %d: %s" % (i, problem))
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
            with cores_into(ctx.suite) as dirs:
                core = abort_for_core(target, dirs)
                doc = rig.tachyon("dump", "--core", core, "--native", "--json",
                                  *root_of(ctx.interp), timeout=60).json(target.pid)
            problem, early = jitcode_problem(doc, target.pid, mode, mark)
            if problem:
                problems.append("kernel core: %s" % problem)
            expect(not problems, "dump --core --native (%s) does not reach _start through "
                   "code named from %s" % (mode, mark), *problems)
            rig.Tap.emit("# %s: %d gcores and a kernel core through %s to _start"
                         % (mode, JITCODE_GCORES, mark))


def one_line(run, status, words, what):
    """One line with the words (after, at most, one warning line)."""
    lines = run.err.decode("utf-8", "replace").strip().splitlines()
    warned = lines[:-1]
    expect(run.rc == status and lines and all(w in lines[-1] for w in words) and
           len(warned) <= 1 and all("warning" in w for w in warned),
           "%s: exit %d, %s (want %d and one line with %s)" % (what, run.rc, lines, status,
                                                               words), *run.details())


def test_bad_cores(ctx):
    """Random bytes, a core of /bin/sleep, a core cut in half, a chroot's
    core without --root: one clear line each (a cut core: a warning, and
    what it still holds); a root with another build of libc: the frames
    and a warning naming it; an executable moved away: --exe; 300 cores
    damaged at random: no crash."""
    if ctx.interp != "python3.15":
        raise rig.Skip("runs under python3.15: the core reader, not a layout")
    scratch = tempfile.mkdtemp(prefix="tt-badcore-")
    try:
        noise = os.path.join(scratch, "noise")
        with open(noise, "wb") as f:
            f.write(random.Random(1).randbytes(4096))
        one_line(rig.tachyon("dump", "--core", noise), 2, ["not an ELF file"], "random bytes")
        with cores_into(ctx.suite) as dirs:
            sleeper = subprocess.Popen(["sleep", "1000"])
            resource.prlimit(sleeper.pid, resource.RLIMIT_CORE,
                             (resource.RLIM_INFINITY, resource.RLIM_INFINITY))

            class Proc:   # what abort_for_core needs of a target
                pid, proc = sleeper.pid, sleeper
            sleep_core = abort_for_core(Proc, dirs)
            one_line(rig.tachyon("dump", "--core", sleep_core), 5, ["not a Python process"],
                     "a core of sleep")
            with rig.Target(ctx.suite, ctx.interp, "threads.py", park=rig.PARK_ALL) as target:
                core = abort_for_core(target, dirs)
            shutil.copy(core, os.path.join(scratch, "whole"))
            one_line(rig.tachyon("dump", "--core", core), 5, ["--root", "python3.15"],
                     "a chroot's core without --root")
        whole = os.path.join(scratch, "whole")
        # a root whose libc is another build: the frames, and a warning naming it
        info = rig.tachyon("info", "--core", whole, "--root", rig.ROOT)
        fake = os.path.join(scratch, "fake")
        for line in info.out.decode().splitlines():
            if line.startswith("core_file="):
                path = line.split(" ", 1)[1]
                os.makedirs(fake + os.path.dirname(path), exist_ok=True)
                os.symlink(rig.ROOT + path, fake + path)
        libc = [p for p in glob.glob(fake + "/usr/lib/x86_64-linux-gnu/libc.so*")]
        expect(libc, "the core maps no libc: %s" % show(info.out))
        os.unlink(libc[0])
        os.symlink(os.path.realpath("/lib/x86_64-linux-gnu/libc.so.6"), libc[0])
        run = rig.tachyon("dump", "--core", whole, "--root", fake)
        err = run.err.decode("utf-8", "replace").strip().splitlines()
        expect(run.rc == 0 and b"park_" in run.out and len(err) == 1 and "libc.so" in err[0]
               and "other builds" in err[0], "a root with another libc: exit %d, %s"
               % (run.rc, err), *run.details())
        # the executable moved away: --exe names it, nothing else is needed
        moved = os.path.join(scratch, "moved-python")
        shutil.copy(rig.in_root("/usr/bin/python3.15"), moved)
        empty = os.path.join(scratch, "empty-root")
        os.makedirs(empty)
        gone = rig.tachyon("dump", "--core", whole, "--root", empty)
        one_line(gone, 5, ["--exe PATH", "python3.15"], "a core whose executable moved")
        run = rig.tachyon("dump", "--core", whole, "--root", empty, "--exe", moved)
        expect(run.rc == 0 and b"park_" in run.out, "--exe: the frames", *run.details())
        half = os.path.join(scratch, "half")
        with open(whole, "rb") as f:
            data = f.read()
        with open(half, "wb") as f:
            f.write(data[:len(data) // 2])
        run = rig.tachyon("dump", "--core", half, "--root", rig.ROOT)
        err = run.err.decode("utf-8", "replace")
        expect("cut short" in err and not run.crash(), "a core cut in half: %s" % show(err),
               *run.details())
        # damaged at random in its first 64 KB (headers, notes)
        rng = random.Random(7)
        damaged = whole   # damaged in place, put back after each run
        worst = 0.0
        with open(damaged, "r+b") as f:
            for _ in range(300):
                spots = [rng.randrange(0, min(len(data), 65536))
                         for _ in range(rng.randrange(1, 16))]
                for at in spots:
                    f.seek(at)
                    f.write(bytes([rng.randrange(256)]))
                f.flush()
                t0 = time.monotonic()
                run = rig.tachyon("info", "--core", damaged, "--root", rig.ROOT)
                worst = max(worst, time.monotonic() - t0)
                for at in spots:
                    f.seek(at)
                    f.write(data[at:at + 1])
                expect(not run.crash() and run.rc in (0, 1, 2, 3, 4, 5, 6),
                       "a damaged core crashed tachyon-top", *run.details())
        rig.Tap.emit("# 300 damaged cores: slowest %.2f s" % worst)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


TESTS = [
    ("dump --core of the kernel's core (SIGABRT): the live dump's threads and frames, "
     "the parked frame's locals as repr()", test_kernel_core),
    ("dump --core of a process that called os.abort(): the aborting frame innermost",
     test_self_abort),
    ("dump --core --native: the live dump's native frames of every thread, merged",
     test_core_native),
    ("dump --core --tasks (3.14+): the live dump's asyncio tasks", test_core_tasks),
    ("dump --core --native through code no file holds (perf trampolines, 3.15's JIT): "
     "named from the perf map or the JIT interface, to _start; gcore without --root",
     test_core_jitcode),
    ("dump --core of gdb's gcore: the live dump's frames, with and without --root for a "
     "target in the root; a threaded one's threads whose stacks are zeros: their innermost "
     "frames, marked, and a warning", test_gcore),
    ("bad cores: random bytes, sleep's, a chroot's without --root, one cut in half, "
     "another libc under the root: one line each; 300 damaged: no crash", test_bad_cores),
]


class Ctx:
    def __init__(self, suite, interp):
        self.suite, self.interp = suite, interp


def main():
    if not os.path.isdir(rig.ROOT):
        return rig.root_missing()
    rig.BIN = os.path.abspath(rig.BIN) if os.sep in rig.BIN else (shutil.which(rig.BIN)
                                                                   or rig.BIN)
    if not (os.path.isfile(rig.BIN) and os.access(rig.BIN, os.X_OK)):
        print("Bail out! binary under test not found: %s (set TT_BIN)" % rig.BIN)
        return 1
    if os.geteuid() != 0 or rig.CHROOT is None:
        print("Bail out! must run as root with chroot(8) available")
        return 1
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    interps = rig.suite_interps()
    started = time.monotonic()
    tap = rig.Tap(len(interps) * len(TESTS))
    tap.comment("binary: %s; root: %s" % (rig.BIN, rig.ROOT))
    suite = rig.Suite(interps, rig.random.Random(0))
    try:
        for interp in interps:
            for name, fn in rig.only_selected(tap, [("%s: %s" % (interp, desc), fn)
                                                     for desc, fn in TESTS]):
                if not suite.has(interp):
                    tap.skip(name, "%s not in the root" % interp)
                    continue
                if interp not in CORE_INTERPS:
                    tap.skip(name, "cores are read on %s" % ", ".join(CORE_INTERPS))
                    continue
                tap.run(name, fn, Ctx(suite, interp))
    finally:
        suite.cleanup()
    tap.comment("%d of %d failed; runtime %.1f s"
                % (tap.failures, tap.planned, time.monotonic() - started))
    return 1 if tap.failures or tap.number != tap.planned else 0


if __name__ == "__main__":
    sys.exit(main())
