#!/usr/bin/env python3
"""What a target pays for being watched: its own throughput with no
profiler, and with tachyon-top at each rate, alternating in one run.

Starts tests/bench/counting.py in the target root (a program that counts
units of its own work), and for each round measures its units per second
over a window with nothing attached, then with `tachyon-top -p PID --batch`
at 1 kHz, 10 kHz (the default) and max, in a shuffled order each round.
Prints, per workload and rate, the median throughput, the spread of the
rounds (min..max, % of the median) and the loss against no profiler.
A program that prints figures, not a test.

usage: tests/bench/target_cost.py [--tt ./tachyon-top] [--python python3.15]
           [--workloads one,twenty,tree,async] [--rates 1k,10k,max]
           [--rounds 7] [--seconds 2]
Workloads: one busy thread; twenty threads; a tree of four processes
(followed by default); an event loop of fifty tasks (with --async).
Needs root and the provisioned target root (tests/provision.sh).
"""
import argparse
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("TT_ROOT", "/var/cache/tachyon-top/sid-root")
WARMUP = 0.5   # s after attaching before the window opens


def read_count(path):
    while True:
        try:
            with open(path) as f:
                units, at = f.read().split()
            return int(units), float(at)
        except (OSError, ValueError):
            time.sleep(0.01)


def throughput(path, seconds):
    """Units per second over a window of about `seconds`."""
    u0, t0 = read_count(path)
    time.sleep(seconds)
    u1, t1 = read_count(path)
    return (u1 - u0) / (t1 - t0) if t1 > t0 else 0.0


def measure(args, pid, path, rate, extra):
    if rate == "none":
        time.sleep(WARMUP)
        return throughput(path, args.seconds)
    argv = [args.tt, "-p", str(pid), "--batch", "-r", rate, "-d",
            str(WARMUP + args.seconds + 1), "--delay", "1000"] + extra
    tt = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE)
    try:
        time.sleep(WARMUP)
        if tt.poll() is not None:
            sys.exit("tachyon-top exited early: %r" % tt.stderr.read()[-300:])
        return throughput(path, args.seconds)
    finally:
        tt.send_signal(signal.SIGINT)
        try:
            tt.wait(timeout=10)
        except subprocess.TimeoutExpired:
            tt.kill()
            tt.wait()


def run_workload(args, kind, scratch, inside):
    path = os.path.join(scratch, "count-" + kind)
    target = subprocess.Popen(["chroot", ROOT, args.python, inside + "/counting.py",
                               inside + "/count-" + kind, kind],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              start_new_session=True)
    extra = ["--async"] if kind == "async" else []
    rates = ["none"] + args.rates
    got = {r: [] for r in rates}
    try:
        # Started: the work is under way.
        while read_count(path)[0] == 0:
            time.sleep(0.05)
        time.sleep(1)
        rng = random.Random(args.seed)
        for _ in range(args.rounds):
            order = rates[:]
            rng.shuffle(order)
            for rate in order:
                got[rate].append(measure(args, target.pid, path, rate, extra))
    finally:
        os.killpg(target.pid, signal.SIGKILL)
        target.wait()
    base = statistics.median(got["none"])
    for rate in rates:
        med = statistics.median(got[rate])
        spread = "%.0f..%.0f%%" % (100 * min(got[rate]) / med, 100 * max(got[rate]) / med)
        loss = "-" if rate == "none" else "%+.1f%%" % (100 * (base - med) / base)
        print("%-8s %-6s %12.0f %13s %8s" % (kind, rate, med, spread, loss), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tt", default=os.environ.get("TT_BIN", "./tachyon-top"))
    ap.add_argument("--python", default="python3.15")
    ap.add_argument("--workloads", default="one,twenty,tree,async")
    ap.add_argument("--rates", default="1k,10k,max")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--seconds", type=float, default=2)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    args.rates = args.rates.split(",")
    args.tt = os.path.abspath(args.tt)
    scratch = tempfile.mkdtemp(prefix="target-cost-", dir=os.path.join(ROOT, "tmp"))
    inside = "/" + os.path.relpath(scratch, ROOT)
    shutil.copy(os.path.join(HERE, "counting.py"), scratch)
    print("target: %s tests/bench/counting.py; %d rounds of %.1f s per rate; loss = what "
          "the target's median throughput lost against no profiler" %
          (args.python, args.rounds, args.seconds), flush=True)
    print("%-8s %-6s %12s %13s %8s" % ("workload", "rate", "units/s", "spread", "loss"))
    try:
        for kind in args.workloads.split(","):
            run_workload(args, kind, scratch, inside)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
