#!/usr/bin/env python3
"""What a target pays for being watched: its own throughput with
tachyon-top sampling it and paused, in pairs of short windows.

Starts tests/bench/counting.py in the target root (a program that counts
units of its own work), then, for each rate (1 kHz, 2 kHz - the live view's
default -, 10 kHz and max), attaches `tachyon-top -p PID --batch -r RATE` and alternates
windows with tachyon-top paused (SIGSTOP: it reads nothing) and sampling
(SIGCONT), in random order within each pair. A virtual machine's speed
drifts by 10-30% over seconds; a pair's two windows see nearly the same
machine, so the ratio of the two cancels the drift that comparing separate
runs cannot. Prints, per workload and rate, the target's units per second
while paused and while sampled (medians), the median loss over the pairs
and its interquartile range; and the same per CPU-second of the target's
own threads (schedstat): the cost to its own execution, apart from how
the machine's CPUs are shared. A program that prints figures, not a test.

With --tt OLD,NEW (two builds, e.g. before and after a change) each
rate's pairs are measured for each build in turn on the same target, in
the same run: a before/after table that the machine's drift cannot fake.

usage: tests/bench/target_cost.py [--tt ./tachyon-top[,./other]]
           [--python python3.15] [--workloads one,pool,twenty,tree,async]
           [--rates 1k,2k,10k,max] [--pairs 30] [--window 0.4]
--native is measured by `tachyon-top bench --cost` instead: pausing
tachyon-top with SIGSTOP does not stop the kernel's perf samples of the
target, so paused windows here would not be free of them.
Workloads: one busy thread; a pool of twenty threads working in turns;
twenty threads contending for the GIL; a tree of four processes
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
WARMUP = 1.0   # s after attaching before the first window
SETTLE = 0.1   # s after pausing or resuming before a window opens


def read_count(path):
    """(units, monotonic time) from the target's count file, written every
    50 ms: each figure is exact at its own time."""
    while True:
        try:
            with open(path) as f:
                units, at = f.read().split()
            return int(units), float(at)
        except (OSError, ValueError):
            time.sleep(0.01)


def tree_cpu_ns(sid):
    """CPU time (ns, each thread's schedstat) of every thread of every
    process in session `sid`: the target and its children."""
    total = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            if os.getsid(int(pid)) != sid:
                continue
            for tid in os.listdir("/proc/%s/task" % pid):
                with open("/proc/%s/task/%s/schedstat" % (pid, tid)) as f:
                    total += int(f.read().split()[0])
        except (OSError, ValueError):
            continue
    return total


def fresh_count(path, after):
    """The first count written after monotonic time `after` (a target busy
    on many threads writes its file late)."""
    while True:
        units, at = read_count(path)
        if at > after:
            return units, at
        time.sleep(0.005)


def window(path, sid, seconds):
    """(units per second, units per CPU-second) over about `seconds`,
    between two counts written inside it."""
    u0, t0 = fresh_count(path, time.monotonic())
    c0 = tree_cpu_ns(sid)
    time.sleep(seconds)
    u1, t1 = fresh_count(path, t0 + seconds)
    c1 = tree_cpu_ns(sid)
    wall = (u1 - u0) / (t1 - t0) if t1 > t0 else 0.0
    cpu = (u1 - u0) / ((c1 - c0) / 1e9) if c1 > c0 else 0.0
    return wall, cpu


def measure_rate(args, tt_bin, pid, path, rate, extra, rng):
    """Pairs of (paused, sampling) windows: lists of (wall, cpu) each."""
    argv = [tt_bin, "-p", str(pid), "--batch", "-r", rate, "-d", "3600",
            "--delay", "1000"] + extra
    tt = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE)
    paused, sampling = [], []
    try:
        time.sleep(WARMUP)
        if tt.poll() is not None:
            sys.exit("tachyon-top exited early: %r" % tt.stderr.read()[-300:])
        for _ in range(args.pairs):
            order = [False, True]
            rng.shuffle(order)
            for on in order:
                tt.send_signal(signal.SIGCONT if on else signal.SIGSTOP)
                time.sleep(SETTLE)
                (sampling if on else paused).append(window(path, pid, args.window))
        tt.send_signal(signal.SIGCONT)
        if tt.poll() is not None:
            sys.exit("tachyon-top exited during the pairs: %r" % tt.stderr.read()[-300:])
    finally:
        tt.send_signal(signal.SIGCONT)
        tt.send_signal(signal.SIGINT)
        try:
            tt.wait(timeout=10)
        except subprocess.TimeoutExpired:
            tt.kill()
            tt.wait()
    return paused, sampling


def losses(paused, sampling, k):
    """Median and quartiles of the per-pair loss (%) of figure k."""
    v = sorted(100.0 * (p[k] - s[k]) / p[k] for p, s in zip(paused, sampling) if p[k] > 0)
    if len(v) < 4:
        return float("nan"), float("nan"), float("nan")
    q = statistics.quantiles(v, n=4)
    return statistics.median(v), q[0], q[2]


def run_workload(args, kind, scratch, inside):
    path = os.path.join(scratch, "count-" + kind)
    target = subprocess.Popen(["chroot", ROOT, args.python, inside + "/counting.py",
                               inside + "/count-" + kind, kind],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              start_new_session=True)
    extra = ["--async"] if kind == "async" else []
    rng = random.Random(args.seed)
    try:
        # Started: the work is under way.
        while read_count(path)[0] == 0:
            time.sleep(0.05)
        time.sleep(1)
        for rate in args.rates:
            for build, tt_bin in enumerate(args.tt):
                paused, sampling = measure_rate(args, tt_bin, target.pid, path, rate, extra,
                                                rng)
                cols = []
                for k in (0, 1):   # wall, CPU
                    med, q1, q3 = losses(paused, sampling, k)
                    cols += ["%.0f" % statistics.median(p[k] for p in paused),
                             "%.0f" % statistics.median(s[k] for s in sampling),
                             "%+.1f%%" % med, "%+.1f..%+.1f" % (q1, q3)]
                label = rate if len(args.tt) == 1 else "%s/%d" % (rate, build + 1)
                print("%-8s %-7s %9s %9s %7s %13s   %9s %9s %7s %13s"
                      % tuple([kind, label] + cols), flush=True)
    finally:
        os.killpg(target.pid, signal.SIGKILL)
        target.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tt", default=os.environ.get("TT_BIN", "./tachyon-top"))
    ap.add_argument("--python", default="python3.15")
    ap.add_argument("--workloads", default="one,pool,twenty,tree,async")
    ap.add_argument("--rates", default="1k,2k,10k,max")
    ap.add_argument("--pairs", type=int, default=30)
    ap.add_argument("--window", type=float, default=0.4)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    args.rates = args.rates.split(",")
    args.tt = [os.path.abspath(t) for t in args.tt.split(",")]
    scratch = tempfile.mkdtemp(prefix="target-cost-", dir=os.path.join(ROOT, "tmp"))
    inside = "/" + os.path.relpath(scratch, ROOT)
    shutil.copy(os.path.join(HERE, "counting.py"), scratch)
    print("target: %s tests/bench/counting.py; %d pairs of %.1f s windows per rate, "
          "tachyon-top paused / sampling; loss: median over the pairs, and its "
          "interquartile range" % (args.python, args.pairs, args.window), flush=True)
    for i, t in enumerate(args.tt):
        if len(args.tt) > 1:
            print("build %d: %s" % (i + 1, t))
    print("%-8s %-7s %9s %9s %7s %13s   %9s %9s %7s %13s"
          % ("workload", "rate", "paused/s", "sampled/s", "loss", "IQR",
             "paused/cs", "sampled/cs", "loss", "IQR"))
    print("%-8s %-7s %s   %s" % ("", "", "%-40s" % "(units per second of wall time)",
                                 "(units per CPU-second of the target)"))
    try:
        for kind in args.workloads.split(","):
            run_workload(args, kind, scratch, inside)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
