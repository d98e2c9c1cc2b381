"""A target that counts its own work, for tests/bench/target_cost.py.

python3 counting.py COUNTFILE KIND
  one     one thread working (and one reporting)
  twenty  twenty threads working, contending for the GIL
  pool    twenty threads working in turns: a job of 2.5 ms to each in
          order, handed over by the main thread (a server's thread pool
          busy on one request at a time)
  tree    four processes working (this one and three forked children)
  async   one event loop, fifty tasks working in turns

Work comes in units of about 50 us at a stack 8 frames deep. Every 50 ms
COUNTFILE is rewritten with "UNITS MONOTONIC_SECONDS": the units done so far
by every worker of every process.
"""
import asyncio
import mmap
import os
import queue
import struct
import sys
import threading
import time

SLOTS = 64
counts = mmap.mmap(-1, 8 * SLOTS)   # shared with forked children


def unit():
    x = 0
    for i in range(400):
        x += i * i
    return x


def nested(depth):
    return unit() if depth == 0 else nested(depth - 1)


def bump(slot):
    off = 8 * slot
    counts[off:off + 8] = struct.pack("Q", struct.unpack("Q", counts[off:off + 8])[0] + 1)


def worker(slot):
    while True:
        nested(6)
        bump(slot)


async def task(slot):
    while True:
        nested(6)
        bump(slot)
        await asyncio.sleep(0)


POOL_THREADS = 20
POOL_JOB_UNITS = 50


def pool_worker(slot, jobs, done):
    while True:
        for _ in range(jobs.get()):
            nested(6)
            bump(slot)
        done.put(slot)


def pool():
    """Each worker has its own queue, so the turns are fixed: the GIL goes
    to one thread at a time, and each switch is the same handover."""
    done = queue.SimpleQueue()
    jobs = [queue.SimpleQueue() for _ in range(POOL_THREADS)]
    for slot in range(POOL_THREADS):
        threading.Thread(target=pool_worker, args=(slot, jobs[slot], done),
                         daemon=True).start()
    while True:
        for slot in range(POOL_THREADS):
            jobs[slot].put(POOL_JOB_UNITS)
            done.get()


def write_count(path):
    total = sum(struct.unpack("%dQ" % SLOTS, counts[:]))
    with open(path + ".tmp", "w") as f:
        f.write("%d %.6f\n" % (total, time.monotonic()))
    os.replace(path + ".tmp", path)


async def report_async(path):
    # A thread would starve: the loop drops the GIL in each poll and takes
    # it straight back.
    while True:
        write_count(path)
        await asyncio.sleep(0.05)


async def tasks(path):
    await asyncio.gather(report_async(path), *(task(i) for i in range(50)))


def report(path):
    while True:
        write_count(path)
        time.sleep(0.05)


def main():
    path, kind = sys.argv[1], sys.argv[2]
    if kind == "async":
        asyncio.run(tasks(path))
    if kind == "tree":   # (forked before any thread starts)
        for slot in range(1, 4):
            if os.fork() == 0:
                worker(slot)
    threading.Thread(target=report, args=(path,), daemon=True).start()
    if kind == "tree":
        worker(0)
    elif kind == "pool":
        pool()
    elif kind == "twenty":
        for slot in range(1, 20):
            threading.Thread(target=worker, args=(slot,), daemon=True).start()
        worker(0)
    else:
        worker(0)


main()
