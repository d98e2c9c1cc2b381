"""A parent that never imports asyncio and two Python children, each an
event loop with its own named tasks parked on an Event (3 in the first, 5
in the second): a worker tree whose tasks live in the workers. Writes
{"pid", "kids": [{"pid", "tid", "tasks": N}]} to argv[1] once both
children's tasks are parked."""
import json
import os
import subprocess
import sys
import time

CHILD = r'''
import asyncio, json, os, sys, threading
OUT, N = sys.argv[1], int(sys.argv[2])

async def parked(ev):
    await ev.wait()

async def main():
    ev = asyncio.Event()
    tasks = [asyncio.create_task(parked(ev), name="w%d-%d" % (os.getpid(), i)) for i in range(N)]
    for _ in range(5):
        await asyncio.sleep(0)
    with open(OUT + ".tmp", "w") as f:
        json.dump({"pid": os.getpid(), "tid": threading.get_native_id(), "tasks": N}, f)
    os.rename(OUT + ".tmp", OUT)
    await asyncio.gather(*tasks)

asyncio.run(main())
'''

OUT = sys.argv[1]
outs = [OUT + ".kid%d" % i for i in range(2)]
kids = [subprocess.Popen([sys.executable, "-E", "-s", "-B", "-c", CHILD, out, str(n)])
        for out, n in zip(outs, (3, 5))]
while not all(os.path.exists(out) for out in outs):
    if any(k.poll() is not None for k in kids):
        sys.exit("a child exited early")
    time.sleep(0.01)
info = []
for out in outs:
    with open(out) as f:
        info.append(json.load(f))
with open(OUT + ".tmp", "w") as f:
    json.dump({"pid": os.getpid(), "kids": info}, f)
os.rename(OUT + ".tmp", OUT)
for k in kids:
    k.wait()
