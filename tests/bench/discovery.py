#!/usr/bin/env python3
"""What following a process tree costs on a busy host: prints figures.

Usage (root): python3 tests/bench/discovery.py TACHYON_TOP [N_UNRELATED] [SECONDS]

Starts N unrelated processes (forks that wait, default 5000), then an 8-process Python
tree (workloads.py tree, under the root's python3.15) and runs
`bench --subprocesses --json -r 1000` on it: discovery's CPU share (thread CPU
time of the discovery thread over the run), its passes and full scans, and
the /proc/N/stat reads those scans made. For scale, it also times what one
naive scan reading every /proc/N/stat costs here.
"""
import json
import os
import signal
import subprocess
import sys
import time

ROOT = os.environ.get("TT_ROOT", "/var/cache/tachyon-top/sid-root")
HERE = os.path.dirname(os.path.abspath(__file__))


def naive_scan_ms():
    t0 = time.perf_counter()
    n = 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open("/proc/%s/stat" % name, "rb") as f:
                    f.read()
                n += 1
            except OSError:
                pass
    return (time.perf_counter() - t0) * 1000, n


def main():
    binary = os.path.abspath(sys.argv[1])
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 5000
    seconds = sys.argv[3] if len(sys.argv) > 3 else "10"
    sleepers = []
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))   # run the clean-up
    try:
        for _ in range(count):
            pid = os.fork()
            if pid == 0:   # an unrelated process that only waits
                signal.pause()
                os._exit(0)
            sleepers.append(pid)
        print("started %d unrelated processes" % count, flush=True)
        os.makedirs(os.path.join(ROOT, "tmp/tt-discovery"), exist_ok=True)
        subprocess.run(["cp", os.path.join(HERE, "workloads.py"),
                        os.path.join(ROOT, "tmp/tt-discovery/")], check=True)
        tree = subprocess.Popen(["chroot", ROOT, "python3.15", "/tmp/tt-discovery/workloads.py",
                                 "tree"], stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            time.sleep(1.5)
            ms, n = naive_scan_ms()
            print("processes on the host: %d; one naive scan of every /proc/N/stat: %.1f ms"
                  % (n, ms))
            out = subprocess.run([binary, "bench", "-p", str(tree.pid), "--subprocesses",
                                  "--json", "-d", seconds, "-r", "1000"],
                                 capture_output=True, check=True).stdout
            doc = json.loads(out)
            d = doc["discovery"]
            print("tree: %d processes sampled; discovery: %.3f%% of a core over %s s "
                  "(%d passes, %d full scans)"
                  % (len(doc["processes"]), 100 * d["cpu"], seconds, d["passes"], d["scans"]))
            print("sampler: %.0f samples/s in total, %.2f%% CPU"
                  % (doc["samples_per_sec"], 100 * doc["sampler_cpu"]))
        finally:
            os.killpg(tree.pid, 9)
            tree.wait()
    finally:
        for pid in sleepers:
            os.kill(pid, signal.SIGKILL)
        for pid in sleepers:
            os.waitpid(pid, 0)


main()
