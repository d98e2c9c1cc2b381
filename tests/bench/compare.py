#!/usr/bin/env python3
"""Benchmark: tachyon-top's engine against CPython 3.15's own remote unwinder.

For each workload (busy, deep, threads, mixed) a real python3.15 target is
started in the target root; then, alternating in one run, `tachyon-top bench`
samples it unthrottled and `_remote_debugging.RemoteUnwinder(pid,
cache_frames=True, all_threads=True).get_stack_trace()` runs in a tight loop
on the same target. Prints samples (calls) per second of each, their ratio
(medians over the rounds), and tachyon-top's remote reads and bytes per
sample. It also measures the read floor on each target: the cost of the
cheapest possible remote read (one 8-byte process_vm_readv, or pread of
/proc/PID/mem), which any sampler that looks at the target at all pays at
least once per sample; CPython's time per call divided by that floor is the
highest ratio any sampler could reach here ("cap"). With --soak SECONDS it also samples the mixed workload at max rate
for that long and prints tachyon-top's peak RSS. With --tt OLD,NEW two
builds take turns in each round on the same targets: a before/after table
from one run. Workloads poolN (N idle threads and a busy one, e.g.
pool1000) give the curve over thread counts.

usage: tests/bench/compare.py [--tt ./tachyon-top[,./other]] [--seconds 2] [--rounds 3]
                              [--workloads busy,deep,threads,mixed] [--soak 600]
Needs root and the provisioned target root (tests/provision.sh).
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("TT_ROOT", "/var/cache/tachyon-top/sid-root")


def start_target(root_dir, kind):
    proc = subprocess.Popen(["chroot", ROOT, "python3.15", root_dir + "/workloads.py", kind],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            start_new_session=True)
    # let it reach its steady state (a pool starts its threads first)
    time.sleep(1.0 + (int(kind[4:]) / 2000 if kind.startswith("pool") else 0))
    if proc.poll() is not None:
        sys.exit("workload %s died at start" % kind)
    return proc


def run_ours(tt, pid, seconds, floor=False):
    """bench's figures, or None when it fails (an older build on a target
    it cannot handle): the row then says so."""
    run = subprocess.run([tt, "bench", "-p", str(pid), "-d", str(seconds), "--json"]
                         + (["--floor"] if floor else []),
                         capture_output=True, timeout=seconds + 60)
    try:
        return json.loads(run.stdout)
    except ValueError:
        print("  %s failed (status %d): %s" % (tt, run.returncode,
                                              run.stderr.decode(errors="replace").strip()[-200:]))
        return None


def run_theirs(root_dir, pid, seconds):
    out = subprocess.run(["chroot", ROOT, "python3.15", root_dir + "/ref_unwinder.py",
                          str(pid), str(seconds)],
                         capture_output=True, check=True, timeout=seconds + 30).stdout
    return json.loads(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tt", default="./tachyon-top")
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workloads", default="busy,deep,threads,mixed")
    ap.add_argument("--soak", type=float, default=0,
                    help="also sample the mixed workload this long at max rate, report peak RSS")
    args = ap.parse_args()
    builds = [os.path.abspath(t) for t in args.tt.split(",")]
    scratch = tempfile.mkdtemp(prefix="tt-bench-", dir=os.path.join(ROOT, "tmp"))
    root_dir = "/tmp/" + os.path.basename(scratch)
    for name in ("workloads.py", "ref_unwinder.py"):
        shutil.copy(os.path.join(HERE, name), scratch)
    print("machine: %d CPUs, %s" % (os.cpu_count(), os.uname().release))
    for i, b in enumerate(builds):
        if len(builds) > 1:
            print("build %d: %s" % (i + 1, b))
    print("%-11s %14s %14s %7s %11s %11s %8s %8s %8s" % (
        "workload", "tachyon-top/s", "cpython/s", "ratio", "reads/smp", "bytes/smp",
        "err%", "cpy err%", "RSS MB"))
    caps = []
    try:
        for kind in args.workloads.split(","):
            proc = start_target(root_dir, kind)
            ours, theirs = [[] for _ in builds], []
            try:
                floors, floors2 = [], []
                for _ in range(args.rounds):
                    for b, tt in enumerate(builds):
                        r = run_ours(tt, proc.pid, args.seconds, floor=True)
                        if r:
                            ours[b].append(r)
                    f = next(runs[-1] for runs in reversed(ours) if runs)["floor"]
                    floors.append(min(f["readv_us"], f["proc_mem_us"] or f["readv_us"]))
                    floors2.append(f["readv2_us"] or f["readv_us"])
                    theirs.append(run_theirs(root_dir, proc.pid, args.seconds))
            finally:
                os.killpg(proc.pid, 9)
                proc.wait()
            t = statistics.median(r["calls_per_sec"] for r in theirs)
            terr = 100 * sum(r["errors"] for r in theirs) / max(1, sum(r["calls"] for r in theirs))
            for b, runs in enumerate(ours):
                if not runs:
                    print("%-11s %14s" % (kind if len(builds) == 1 else "%s/%d" % (kind, b + 1),
                                          "failed"), flush=True)
                    continue
                o = statistics.median(r["samples_per_sec"] for r in runs)
                reads = statistics.median(r["reads_per_sample"] for r in runs)
                nbytes = statistics.median(r["bytes_per_sample"] for r in runs)
                err = 100 * sum(r["errors"] for r in runs) / max(1, sum(r["samples"] for r in runs))
                rss = max(r["peak_rss_kb"] for r in runs) / 1024
                label = kind if len(builds) == 1 else "%s/%d" % (kind, b + 1)
                print("%-11s %14.0f %14.0f %7.2f %11.3f %11.0f %8.2f %8.2f %8.1f" % (
                    label, o, t, o / t, reads, nbytes, err, terr, rss), flush=True)
            caps.append((kind, 1e6 / t, 1e6 / o, statistics.median(floors),
                         statistics.median(floors2)))
        # The floor: no sampler can spend less per sample than one remote
        # read; one that reads a thread state and a frame (two places)
        # spends at least one two-segment read.
        print("\n%-8s %10s %10s %11s %9s %11s %9s" % (
            "workload", "cpython us", "ours us", "1-read us", "cap", "2-seg us", "cap"))
        for kind, tus, ous, f1, f2 in caps:
            print("%-8s %10.3f %10.3f %11.3f %9.2f %11.3f %9.2f" % (
                kind, tus, ous, f1, tus / f1, f2, tus / f2))
        print("cap = cpython us / floor us: the highest ratio a sampler doing only that "
              "read per sample could reach on this machine.", flush=True)
        if args.soak:
            proc = start_target(root_dir, "mixed")
            try:
                r = run_ours(builds[-1], proc.pid, args.soak)
            finally:
                os.killpg(proc.pid, 9)
                proc.wait()
            print("soak: %.0f s at max rate on mixed: %d samples, %.0f/s, peak RSS %.1f MB, "
                  "%d distinct stacks" % (r["seconds"], r["samples"], r["samples_per_sec"],
                                          r["peak_rss_kb"] / 1024, r["interned"]["stacks"]))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
