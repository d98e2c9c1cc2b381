#!/usr/bin/env python3
"""Data-loss tests for tachyon-top (TAP): what a hostile or unlucky user
meets must lose nothing and never mislead.

Reuses the target rig of functional.py (same environment variables). Checks:

  - record that cannot attach, or is killed, leaves an existing -o file
    byte for byte, and a FIFO given as -o in place;
  - every verb with standard output on /dev/full (or closed) exits non-zero
    with "writing standard output: CAUSE";
  - SIGHUP during record writes a complete profile; bench interrupted by
    SIGINT still prints its figures;
  - record -o /dev/full names the cause and does not claim it wrote;
  - a zombie target (exited, not yet reaped) gives exit 3;
  - --theme nosuchtheme --batch fails with a message; a mistyped verb is an
    error, not a command to start;
  - a started COMMAND dies when tachyon-top is killed with SIGKILL;
  - per interpreter: a 20,000-frame recursion next to two ordinary threads
    gives its innermost frames marked truncated, the threads' full stacks,
    a profile without errors, bench at least 1,000 samples/s with about
    the reads per sample of a 1,000-frame target (the speed ratio is printed).
"""

import json
import os
import re
import signal
import stat
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import functional as rig  # noqa: E402
from functional import Fail, expect, show  # noqa: E402

RUN_TIMEOUT = 60
NOSPACE = b"writing standard output: No space left on device"


def run_tt(*args, stdout=subprocess.PIPE, timeout=RUN_TIMEOUT):
    """Run tachyon-top; a crash, sanitizer report or hang fails the test."""
    argv = [rig.BIN] + [str(a) for a in args]
    try:
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=stdout,
                              stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise Fail("tachyon-top %s hung" % " ".join(argv[1:]))
    run = rig.Run(argv, proc.returncode, proc.stdout or b"", proc.stderr)
    crash = run.crash()
    expect(not crash, "%s crashed: %s" % (run.cmd, crash), *run.details())
    return run


def scratch(ctx, name):
    return rig.in_root(os.path.join(ctx.target.dir, name))


def listing(directory):
    return sorted(os.listdir(directory))


def collapsed_ok(path):
    """A non-empty, well-formed folded-stacks file."""
    with open(path, "rb") as f:
        data = f.read()
    lines = data.decode("utf-8").splitlines()
    expect(lines, "%s is empty" % path)
    for line in lines:
        expect(re.fullmatch(r".+ \d+", line), "malformed collapsed line " + show(line))
    return lines


# ----------------------------------------------------------------------
# Scenarios against one parked target (the first interpreter)
# ----------------------------------------------------------------------

def test_record_keeps_file(ctx):
    d = rig.in_root(ctx.suite.new_dir("keep"))
    os.makedirs(d)
    path = os.path.join(d, "precious.txt")
    content = os.urandom(4096) + b"precious\n"
    with open(path, "wb") as f:
        f.write(content)
    before = listing(d)
    run = run_tt("record", "-p", rig.free_pid(), "-o", path)
    expect(run.rc == 3, "record on a missing pid exited %d, expected 3" % run.rc, *run.details())
    expect(os.path.exists(path), "a failed record removed the output file", *run.details())
    with open(path, "rb") as f:
        expect(f.read() == content, "a failed record changed or removed the output file",
               *run.details())
    expect(listing(d) == before, "record left files behind: %s" % listing(d))
    fifo = os.path.join(d, "fifo")
    os.mkfifo(fifo)
    run = run_tt("record", "-p", rig.free_pid(), "-o", fifo)
    expect(run.rc == 3 and stat.S_ISFIFO(os.lstat(fifo).st_mode),
           "a FIFO given as -o was replaced or removed", *run.details())
    # Killed outright mid-run: the old content stays.
    proc = subprocess.Popen([rig.BIN, "record", "-p", str(ctx.target.pid), "-d", "30",
                             "-o", path], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.0)
    proc.kill()
    proc.wait()
    with open(path, "rb") as f:
        expect(f.read() == content, "record killed mid-run changed the output file")


def stdout_cases(pid):
    return [("dump", "-p", pid), ("dump", "-p", pid, "--json"), ("info", "-p", pid),
            ("bench", "-p", pid, "-d", "0.3"), ("bench", "-p", pid, "-d", "0.3", "--json"),
            ("--batch", "-n", "1", "--delay", "0.2", "-p", pid), ("--help",),
            ("record", "--help")]


def test_stdout_full(ctx):
    with open("/dev/full", "wb") as full:
        for args in stdout_cases(ctx.target.pid):
            run = run_tt(*args, stdout=full)
            expect(run.rc != 0 and NOSPACE in run.err,
                   "%s with stdout on /dev/full: exit %d, expected non-zero and %r"
                   % (run.cmd, run.rc, NOSPACE.decode()), *run.details())
    # A closed standard output.
    for args in (("dump", "-p", ctx.target.pid), ("--help",)):
        argv = [rig.BIN] + [str(a) for a in args]
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, timeout=RUN_TIMEOUT,
                              preexec_fn=lambda: os.close(1))
        expect(proc.returncode != 0 and b"writing standard output: " in proc.stderr,
               "%s with stdout closed: exit %d, stderr %s"
               % (" ".join(argv[1:]), proc.returncode, show(proc.stderr)))


def signal_after(argv, sig, delay):
    proc = subprocess.Popen([rig.BIN] + [str(a) for a in argv], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(delay)
    proc.send_signal(sig)
    try:
        out, err = proc.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise Fail("tachyon-top %s did not stop within 15 s of signal %d"
                   % (" ".join(map(str, argv)), sig))
    run = rig.Run([rig.BIN] + [str(a) for a in argv], proc.returncode, out, err)
    crash = run.crash()
    expect(not crash, "%s crashed: %s" % (run.cmd, crash), *run.details())
    return run


def test_hup_and_interrupted_bench(ctx):
    for name in ("hup.collapsed", "hup.json"):
        path = scratch(ctx, name)
        run = signal_after(["record", "-p", ctx.target.pid, "-d", "30", "-r", "500", "-o", path],
                           signal.SIGHUP, 1.5)
        run.expect_success()
        expect(b"interrupted" in run.err and b"wrote" in run.err,
               "record on SIGHUP did not say it was interrupted and wrote", *run.details())
        if name.endswith(".json"):
            with open(path, encoding="utf-8") as f:
                doc = json.load(f)
            expect(doc["profiles"] and any(p["samples"] for p in doc["profiles"]),
                   "speedscope profile written on SIGHUP has no samples")
        else:
            collapsed_ok(path)
    run = signal_after(["bench", "-p", ctx.target.pid, "-d", "30", "--json"], signal.SIGINT, 1.5)
    run.expect_success()
    try:
        doc = json.loads(run.out)
    except ValueError as error:
        raise Fail("bench interrupted printed no JSON: %s" % error, *run.details())
    expect(doc["samples"] > 0 and doc.get("interrupted") is True,
           "bench interrupted: %d samples, interrupted=%r"
           % (doc["samples"], doc.get("interrupted")), *run.details())
    run = signal_after(["bench", "-p", ctx.target.pid, "-d", "30"], signal.SIGINT, 1.0)
    expect(re.search(rb"^samples +\d+ in ", run.out, re.M) and b"interrupted" in run.out,
           "bench interrupted printed no figures", *run.details())


def test_record_dev_full(ctx):
    run = run_tt("record", "-p", ctx.target.pid, "-d", "0.5", "-o", "/dev/full")
    expect(run.rc != 0, "record -o /dev/full exited 0", *run.details())
    expect(b"No space left on device" in run.err and b"wrote" not in run.err,
           "record -o /dev/full did not name the cause, or claimed it wrote", *run.details())
    expect(stat.S_ISCHR(os.stat("/dev/full").st_mode), "/dev/full is no longer a device!")


def test_zombie(ctx):
    """A target that exited but is not reaped yet: exit 3, 'exited'."""
    argv = rig.command(ctx.suite, ctx.interp, ["-c", "pass"])
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 15
        while True:
            with open("/proc/%d/stat" % proc.pid) as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    break
            expect(time.monotonic() < deadline, "the target did not exit")
            time.sleep(0.02)
        for args in (("dump", "-p", proc.pid), ("dump", "-p", proc.pid, "--json"),
                     ("info", "-p", proc.pid), ("bench", "-p", proc.pid, "-d", "0.2")):
            run = run_tt(*args)
            expect(run.rc == 3 and (b"exited" in run.err or b"no such process" in run.err),
                   "%s on a zombie: exit %d, expected 3 (exited)" % (run.cmd, run.rc),
                   *run.details())
    finally:
        proc.wait()


def test_bad_theme_and_verb(ctx):
    run = run_tt("--theme", "nosuchtheme", "--batch", "-n", "1", "-p", ctx.target.pid)
    expect(run.rc == 2 and b"nosuchtheme" in run.err and b"not found" in run.err,
           "--theme nosuchtheme --batch did not fail clearly", *run.details())
    marker = scratch(ctx, "must-not-exist")
    run = run_tt("touch", marker)
    expect(run.rc == 2 and b"unknown verb" in run.err,
           "'tachyon-top touch FILE' was not refused as an unknown verb", *run.details())
    expect(not os.path.exists(marker), "'tachyon-top touch FILE' ran touch")
    run = run_tt("bogusverb")
    expect(run.rc == 2 and b"unknown verb" in run.err, "bogusverb was not refused",
           *run.details())


def test_command_dies_with_us(ctx):
    """tachyon-top killed with SIGKILL: the program it started goes too."""
    ready = os.path.join(ctx.target.dir, "child-ready")
    code = ("import os, time; open(%r, 'w').write(str(os.getpid())); time.sleep(120)" % ready)
    argv = [rig.BIN, "--batch", "--delay", "0.5", "--"] + rig.command(ctx.suite, ctx.interp,
                                                                      ["-c", code])
    tt = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL)
    child = None
    try:
        deadline = time.monotonic() + 15
        while not os.path.exists(rig.in_root(ready)):
            expect(time.monotonic() < deadline and tt.poll() is None,
                   "the started program did not come up")
            time.sleep(0.05)
        time.sleep(0.1)
        with open(rig.in_root(ready)) as f:
            child = int(f.read())
        tt.kill()
        tt.wait()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                with open("/proc/%d/stat" % child) as f:
                    if f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                        break
            except FileNotFoundError:
                break
            time.sleep(0.05)
        else:
            raise Fail("the started program (pid %d) still runs 5 s after tachyon-top "
                       "was killed" % child)
    finally:
        if tt.poll() is None:
            tt.kill()
            tt.wait()
        if child:
            try:
                os.kill(child, signal.SIGKILL)
            except ProcessLookupError:
                pass


ONCE = [
    ("record that cannot attach or is killed leaves -o byte for byte, a FIFO in place",
     test_record_keeps_file),
    ("stdout on /dev/full or closed: every verb exits non-zero naming the cause",
     test_stdout_full),
    ("SIGHUP during record writes the profile; bench interrupted prints its figures",
     test_hup_and_interrupted_bench),
    ("record -o /dev/full names the cause and claims nothing", test_record_dev_full),
    ("zombie target: exit 3, 'exited'", test_zombie),
    ("--theme nosuchtheme --batch and mistyped verbs are errors", test_bad_theme_and_verb),
    ("a started COMMAND dies when tachyon-top is SIGKILLed", test_command_dies_with_us),
]


# ----------------------------------------------------------------------
# Per interpreter: stacks of any depth
# ----------------------------------------------------------------------

DEEP = 20000
SHALLOW = 1000
TRUNCATED_AT = 8192


def figure(text):
    """A TAP comment line: a measurement printed for the record."""
    print("# " + rig.printable(text), flush=True)


def bench_doc(pid):
    run = run_tt("bench", "-p", pid, "-d", "0.4", "--json")
    run.expect_success()
    doc = json.loads(run.out)
    expect(doc["errors"] <= doc["samples"] // 100, "bench: %d errors in %d samples"
           % (doc["errors"], doc["samples"]), *run.details())
    return doc


def test_deep_stack(ctx):
    info = ctx.target.info
    expect(info["deep"]["depth"] >= DEEP, "target recorded only %d frames" % info["deep"]["depth"])
    doc = rig.dump_json(ctx.target.pid)
    by_tid = rig.threads_by_tid(doc)
    deep = by_tid.get(info["deep"]["tid"])
    expect(deep, "deep thread missing from dump", show(doc)[:500])
    expect(deep["truncated"] is True and len(deep["frames"]) == TRUNCATED_AT,
           "deep thread: %d frames, truncated=%r; expected %d, true"
           % (len(deep["frames"]), deep["truncated"], TRUNCATED_AT))
    rig.compare_stacks("deep thread (innermost 50)", info["deep"]["frames"],
                       deep["frames"][:len(info["deep"]["frames"])])
    for record in info["threads"]:
        th = by_tid.get(record["tid"])
        expect(th, "ordinary thread %d missing" % record["tid"])
        expect(th["truncated"] is False, "ordinary thread %d marked truncated" % record["tid"])
        rig.compare_stacks("ordinary thread %d" % record["tid"], record["frames"], th["frames"])
    # record at full rate: samples, not errors.
    path = scratch(ctx, "deep.collapsed")
    run = run_tt("record", "-p", ctx.target.pid, "-r", "max", "-d", "1", "-o", path)
    run.expect_success()
    m = re.search(rb"([\d.]+)% errors", run.err)
    expect(m and float(m.group(1)) < 1.0, "record -r max on a deep stack: errors", *run.details())
    lines = collapsed_ok(path)
    expect(any(line.count(";") >= TRUNCATED_AT - 1 for line in lines),
           "no %d-frame stack in the profile" % TRUNCATED_AT)
    # Speed against a 1,000-frame recursion, best of three runs each,
    # interleaved (the machine is shared: the best run is the least
    # disturbed).
    with rig.Target(ctx.suite, ctx.interp, "deepstack.py", args=(SHALLOW,),
                    park=rig.PARK_ALL) as shallow:
        docs = {"deep": [], "shallow": []}
        for _ in range(3):
            docs["deep"].append(bench_doc(ctx.target.pid))
            docs["shallow"].append(bench_doc(shallow.pid))
    rates = {k: [d["samples_per_sec"] for d in v] for k, v in docs.items()}
    reads = {k: min(d["reads_per_sample"] for d in v) for k, v in docs.items()}
    # The speed ratio is printed as a figure, not asserted: one target's
    # rate moved 3.6x between runs a second apart on this shared 2-core
    # machine, and benchmarks print figures rather than time tests: quiet,
    # the ratio was 1.00-1.10 (python3.13, 3.15-static-pie); with another
    # suite running beside it, 2.3. Asserted is what load cannot move: the deep stack
    # costs about as many reads per sample, and the sampler delivers (at
    # least 1,000 samples/s, where the old code gave 1-13 with 100% errors).
    deep_rate, shallow_rate = max(rates["deep"]), max(rates["shallow"])
    figure("%s: bench, best of three: %d frames %.0f samples/s, %d frames %.0f (ratio %.2f); "
             "rates %r" % (ctx.interp, DEEP, deep_rate, SHALLOW, shallow_rate,
                           shallow_rate / deep_rate if deep_rate else float("inf"), rates))
    expect(deep_rate >= 1000,
           "bench on %d frames: %.0f samples/s" % (DEEP, deep_rate), "rates: %r" % rates)
    expect(reads["deep"] <= 1.5 * reads["shallow"],
           "bench on %d frames: %.3f reads per sample, on %d frames: %.3f"
           % (DEEP, reads["deep"], SHALLOW, reads["shallow"]))


def main():
    if not os.path.isdir(rig.ROOT):
        return rig.root_missing()
    if os.sep in rig.BIN:
        rig.BIN = os.path.abspath(rig.BIN)
    if not (os.path.isfile(rig.BIN) and os.access(rig.BIN, os.X_OK)):
        print("Bail out! binary under test not found: %s (set TT_BIN)" % rig.BIN)
        return 1
    if os.geteuid() != 0 or rig.CHROOT is None:
        print("Bail out! must run as root with chroot(8) available")
        return 1
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    interps = rig.suite_interps(layout_free=True)
    seed = int(os.environ.get("TT_SEED") or rig.random.randrange(10**6))
    started = time.monotonic()
    tap = rig.Tap(len(ONCE) + len(interps))
    tap.comment("binary: %s; root: %s" % (rig.BIN, rig.ROOT))
    suite = rig.Suite(interps, rig.random.Random(seed))
    try:
        # The scenarios run once, against the first interpreter present.
        first = next((i for i in interps if suite.has(i) and not i.startswith("libpython")), None)
        if first is None:
            for desc, _ in ONCE:
                tap.skip(desc, "no interpreter in the root")
        else:
            rig.run_group(tap, suite, first, rig.Group("recursion.py", rig.PARK_MAIN, ONCE))
        for interp in interps:
            rig.run_group(tap, suite, interp, DeepGroup())
    finally:
        suite.cleanup()
    tap.comment("%d of %d failed; runtime %.1f s"
                % (tap.failures, tap.planned, time.monotonic() - started))
    return 1 if tap.failures or tap.number != tap.planned else 0


class DeepGroup(rig.Group):
    """deepstack.py with its 20,000 frames (Group has no script arguments)."""

    def __init__(self):
        super().__init__(None, None, [
            ("%d-frame recursion next to two threads: innermost frames truncated, the "
             "threads' full stacks, record without errors, bench reads per sample as for %d frames"
             % (DEEP, SHALLOW), self.run)])

    @staticmethod
    def run(ctx):
        with rig.Target(ctx.suite, ctx.interp, "deepstack.py", args=(DEEP,),
                        park=rig.PARK_ALL) as target:
            test_deep_stack(rig.Ctx(ctx.suite, ctx.interp, target))


if __name__ == "__main__":
    sys.exit(main())
