"""Process churn: a parent forks short-lived Python children continuously,
like a pre-fork server recycling its workers hard or a multiprocessing pool
with maxtasksperchild=1; or, with "run", starts a non-Python program in a
loop (subprocess.run(["/bin/true"])).

argv: READY [fork|run] [children per round (4)] [round period ms (20)]
Each forked child spins about 10 ms in child_work and exits. The parent
counts what it started in READY.count (one number, rewritten each second).

Ready file: {"mode": ...}
"""

import os
import subprocess
import sys
import time

import _ttlib as _tt


def child_work(seconds):
    end = time.perf_counter() + seconds
    x = 0
    while time.perf_counter() < end:
        x += 1
    return x


def fork_round(n):
    pids = []
    for _ in range(n):
        pid = os.fork()
        if pid == 0:
            child_work(0.01)
            os._exit(0)
        pids.append(pid)
    for pid in pids:
        os.waitpid(pid, 0)


def run_round(n):
    for _ in range(n):
        subprocess.run(["/bin/true"])


def main():
    mode = sys.argv[2] if len(sys.argv) > 2 else "fork"
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    period = (float(sys.argv[4]) if len(sys.argv) > 4 else 20) / 1000
    step = fork_round if mode == "fork" else run_round
    count_path = _tt.out_path() + ".count"
    _tt.ready(_tt.out_path(), mode=mode)
    started, last = 0, 0.0
    while True:
        t0 = time.perf_counter()
        step(n)
        started += n
        if t0 - last >= 1:
            with open(count_path + ".tmp", "w") as f:
                f.write("%d\n" % started)
            os.replace(count_path + ".tmp", count_path)
            last = t0
        time.sleep(max(0.0, period - (time.perf_counter() - t0)))


main()
