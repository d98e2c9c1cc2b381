"""asyncio tasks in every shape dump --tasks must show, on two event loops in
two threads (or, with argv[3] == "main", one loop in the main thread): named and unnamed tasks, gather, TaskGroup, shield, tasks
awaiting tasks three levels deep, a task awaited by two others. Writes
{"pid", "threads": [loop thread native ids]} to argv[1] once every task is
parked on an Event that never fires."""
import asyncio
import json
import os
import sys
import threading

OUT = sys.argv[1]
N_EXTRA = int(sys.argv[2]) if len(sys.argv) > 2 else 0
IN_MAIN = len(sys.argv) > 3 and sys.argv[3] == "main"


async def leaf(ev):
    await ev.wait()


async def middle(ev):
    await leaf(ev)


async def worker(ev):
    await middle(ev)


async def level3(ev):
    await worker(ev)


async def level2(ev):
    await asyncio.create_task(level3(ev), name="level-3")


async def level1(ev):
    await asyncio.create_task(level2(ev), name="level-2")


async def shielded(t):
    await asyncio.shield(t)


async def both(t):
    await t


async def main(ev, started):
    shared = asyncio.create_task(worker(ev), name="shared")
    asyncio.create_task(both(shared), name="waiter-a")
    asyncio.create_task(both(shared), name="waiter-b")
    unnamed = asyncio.create_task(worker(ev))
    conn = asyncio.create_task(worker(ev), name="conn-1")
    asyncio.create_task(level1(ev), name="level-1")
    for i in range(N_EXTRA):
        asyncio.create_task(worker(ev), name="bulk-%d" % i)
    async with asyncio.TaskGroup() as tg:
        tg.create_task(worker(ev), name="tg-child")
        tg.create_task(shielded(conn), name="shielder")
        for _ in range(20):
            await asyncio.sleep(0)
        started.set()
        await asyncio.gather(unnamed, worker(ev))


def loop_thread(started):
    asyncio.run(main(asyncio.Event(), started))


def publish(tids):
    tmp = OUT + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"pid": os.getpid(), "threads": tids}, f)
    os.rename(tmp, OUT)


class Publisher:
    def set(self):
        publish([threading.get_native_id()])


if IN_MAIN:
    asyncio.run(main(asyncio.Event(), Publisher()))

threads = []
events = []
for n in range(2):
    ev = threading.Event()
    t = threading.Thread(target=loop_thread, args=(ev,), name="loop-%d" % n, daemon=True)
    t.start()
    threads.append(t)
    events.append(ev)
for ev in events:
    ev.wait()
publish([t.native_id for t in threads])
threading.Event().wait()
