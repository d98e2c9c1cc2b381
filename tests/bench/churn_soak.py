#!/usr/bin/env python3
"""Soak: tachyon-top's memory while its target churns threads or processes.

Starts a target in the target root that creates and ends short-lived
threads continuously (tests/targets/churn.py, several hundred per second;
--target threads), or forks short-lived Python children (4 every 20 ms,
tests/targets/fork_churn.py; --target forks), or runs /bin/true in a loop
(--target runs),
runs tachyon-top on it at full rate for --seconds (default 600) in batch
mode (the live view's engine and aggregation, without a terminal) or as
`record`, and prints tachyon-top's resident set size (VmRSS from
/proc/PID/status) every --every seconds, with the target's thread creation
count so far. Ends with the RSS growth from the first figure after warm-up
to the last. A program that prints figures, not a test.

usage: tests/bench/churn_soak.py [--tt ./tachyon-top] [--seconds 600]
                                 [--every 30] [--verb batch|record]
                                 [--target threads|forks|runs]
                                 [--python python3.14]
Needs root and the provisioned target root (tests/provision.sh).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import functional as rig  # noqa: E402  (tests/: the suites' helpers)
TARGETS = os.path.join(os.path.dirname(HERE), "targets")
ROOT = os.environ.get("TT_ROOT", "/var/cache/tachyon-top/sid-root")
TARGET = ["threads"]   # --target, for last_line


def last_line(scratch):
    """The latest "processes N ..." or "threads N seen, ..." line of batch
    output, if any."""
    try:
        with open(os.path.join(scratch, "out.txt"), "rb") as f:
            f.seek(0, 2)
            f.seek(max(0, f.tell() - 65536))
            lines = [l for l in f.read().decode(errors="replace").splitlines()
                     if l.startswith("processes " if TARGET[0] != "threads" else "threads ")]
        return lines[-1] if lines else ""
    except OSError:
        return ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tt", default=os.environ.get("TT_BIN", "./tachyon-top"))
    ap.add_argument("--seconds", type=float, default=600)
    ap.add_argument("--every", type=float, default=30)
    ap.add_argument("--warmup", type=float, default=30)
    ap.add_argument("--verb", choices=("batch", "record"), default="batch")
    ap.add_argument("--target", choices=("threads", "forks", "runs"), default="threads")
    ap.add_argument("--python", default="python3.14")
    args = ap.parse_args()
    TARGET[0] = args.target
    script = "churn.py" if args.target == "threads" else "fork_churn.py"
    mode = [] if args.target == "threads" else ["fork" if args.target == "forks" else "run"]
    scratch = tempfile.mkdtemp(prefix="churn-soak-", dir=os.path.join(ROOT, "tmp"))
    inside = "/" + os.path.relpath(scratch, ROOT)
    for name in (script, "_ttlib.py"):
        shutil.copy(os.path.join(TARGETS, name), scratch)
    target = subprocess.Popen(["chroot", ROOT, args.python, inside + "/" + script,
                               inside + "/ready.json"] + mode, stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, start_new_session=True)
    tt = None
    try:
        ready = os.path.join(scratch, "ready.json")
        deadline = time.monotonic() + 15
        while not os.path.exists(ready):
            if time.monotonic() > deadline or target.poll() is not None:
                sys.exit("the churn target did not start")
            time.sleep(0.05)
        with open(ready) as f:
            info = json.load(f)
        pid = info["pid"]
        if args.verb == "batch":
            argv = [args.tt, "--batch", "-r", "max", "--delay", "1", "-p", str(pid)]
        else:
            argv = [args.tt, "record", "-r", "max", "-p", str(pid), "-o",
                    os.path.join(scratch, "soak.collapsed")]
        out = open(os.path.join(scratch, "out.txt"), "wb")
        tt = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.PIPE)
        print("target: %s %s, pid %d; tachyon-top: %s"
              % (args.python, args.target, pid, " ".join(argv[1:])), flush=True)
        print("%8s %10s %14s  %s" % ("seconds", "VmRSS KB",
                                     "threads" if args.target == "threads" else "children",
                                     "tachyon-top's own count (batch)"), flush=True)
        started = time.monotonic()
        figures = []
        nexts = 0.0
        while True:
            now = time.monotonic() - started
            if now >= nexts:
                if tt.poll() is not None:
                    sys.exit("tachyon-top exited early: %r" % tt.stderr.read()[-500:])
                if args.target == "threads":
                    count = len(os.listdir("/proc/%d/task" % pid))
                else:   # children started so far, as the target counts them
                    try:
                        with open(ready + ".count") as f:
                            count = int(f.read() or 0)
                    except (OSError, ValueError):
                        count = 0
                rss = rig.vm_rss_kb(tt.pid)
                figures.append((now, rss))
                print("%8.0f %10d %14d  %s" % (now, rss, count, last_line(scratch)),
                      flush=True)
                nexts += args.every
            if now >= args.seconds:
                break
            time.sleep(min(1.0, max(0.05, nexts - now)))
        warm = [r for t, r in figures if t >= args.warmup] or [figures[-1][1]]
        lo, hi = min(warm), max(warm)
        print("after %.0f s of warm-up: RSS %d .. %d KB, last %d KB: %+.1f%% from the first "
              "figure after warm-up" % (args.warmup, lo, hi, warm[-1],
                                       100.0 * (warm[-1] - warm[0]) / warm[0]), flush=True)
    finally:
        if tt and tt.poll() is None:
            tt.send_signal(2)
            try:
                _, err = tt.communicate(timeout=30)
                sys.stdout.write(err.decode(errors="replace")[-400:])
            except subprocess.TimeoutExpired:
                tt.kill()
        os.killpg(target.pid, 9)
        target.wait()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
