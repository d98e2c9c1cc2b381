"""A multiprocessing tree for the process-tree tests.

argv: READY_FILE METHOD OTHER_PYTHON
 - a multiprocessing pool (start METHOD: fork, spawn or forkserver) whose
   two workers spin in mp_pool_work;
 - a ProcessPoolExecutor (same method) whose worker spins in executor_work;
 - a child that starts a grandchild spinning in grandchild_work;
 - a non-Python child (sleep);
 - a child running OTHER_PYTHON (another version) spinning in other_version_work;
then writes the ready file with the pids it knows and keeps running.
With "late" as METHOD, it instead forks a short-lived child every 0.5 s
(late_child_work, 0.4 s) and logs each child's time.monotonic() start.
"""
import concurrent.futures
import multiprocessing
import os
import subprocess
import sys
import time

import _ttlib as _tt


MARKS = None   # directory where each worker says it is in its function


def mark(name):
    if MARKS:
        open(os.path.join(MARKS, "%s.%d" % (name, os.getpid())), "w").close()


def spin(seconds):
    end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < end:
        n += 1
    return n


def mp_pool_work(marks):
    global MARKS
    MARKS = marks
    mark("mp_pool_work")
    return spin(600)


def executor_work(marks):
    global MARKS
    MARKS = marks
    mark("executor_work")
    return spin(600)


def grandchild_work(marks):
    global MARKS
    MARKS = marks
    mark("grandchild_work")
    spin(600)


def child_with_grandchild(marks):
    p = multiprocessing.Process(target=grandchild_work, args=(marks,))
    p.start()
    p.join()


def late_child_work():
    spin(0.4)


def late(out):
    log = out + ".children"
    _tt.ready(out, log=log)
    ctx = multiprocessing.get_context("fork")
    while True:
        p = ctx.Process(target=late_child_work)
        before = time.monotonic()   # the child appears after this
        p.start()
        with open(log, "a") as f:
            f.write("%d %.6f\n" % (p.pid, before))
        time.sleep(0.5)
        p.join()


def main():
    out, method = sys.argv[1], sys.argv[2]
    if method == "late":
        return late(out)
    other = sys.argv[3]
    marks = out + ".marks"
    os.makedirs(marks, exist_ok=True)
    ctx = multiprocessing.get_context(method)
    pool = ctx.Pool(2)
    pool.map_async(mp_pool_work, [marks, marks], chunksize=1)
    executor = concurrent.futures.ProcessPoolExecutor(1, mp_context=ctx)
    executor.submit(executor_work, marks)
    parent = ctx.Process(target=child_with_grandchild, args=(marks,))
    parent.start()
    sleeper = subprocess.Popen(["sleep", "600"])
    script = ("import os, sys, time\n"
              "def other_version_work():\n"
              "    open(os.path.join(sys.argv[1], 'other_version_work.%d' % os.getpid()), 'w').close()\n"
              "    while True: time.time()\n"
              "other_version_work()\n")
    other_child = subprocess.Popen([other, "-c", script, marks])
    # Every worker is up and in its function (spawned ones import first).
    want = {"mp_pool_work": 2, "executor_work": 1, "grandchild_work": 1,
            "other_version_work": 1}
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        names = [n.split(".")[0] for n in os.listdir(marks)]
        if all(names.count(k) >= v for k, v in want.items()):
            break
        time.sleep(0.05)
    time.sleep(0.1)
    _tt.ready(out, sleeper=sleeper.pid, other=other_child.pid, parent=parent.pid)
    time.sleep(_tt.PARK)


if __name__ == "__main__":
    main()
