"""Two named asyncio tasks burn CPU 75/25 through different await chains.

main (Task-1) awaits the task "dispatcher", whose TaskGroup runs "heavy"
(handle_heavy -> step_heavy -> burn, 3 ms a turn) and "light"
(handle_light -> step_light -> burn, 1 ms a turn); each yields to the loop
after every turn, so the one thread's CPU splits 75/25 between them.
Beside them the task "spawner" starts a task "short" every 20 ms that
burns 0.5 ms in run_short and ends: never seen by a periodic task read.
With argv[2] == "two-loops" a second thread runs its own event loop with
its own dispatcher, heavy and light tasks; both pause 4 ms between turns and
neither reports nor spawns (ready file: {"pid", "tids"}).
argv[1]: ready file ({"pid"}); argv[1] + ".truth" is rewritten every 0.1 s
with each task's wall time inside burn() so far ({"heavy": s, "light": s}):
on a loaded machine the split sampled is compared with what really happened.
"""
import asyncio
import json
import os
import sys
import threading
import time


TRUTH = {"heavy": 0.0, "light": 0.0}
# Two loops pause between turns: two threads that never wait would hand
# the GIL back and forth through select() and starve one loop for seconds.
PACE = 0.004 if sys.argv[2:] == ["two-loops"] else 0


def burn(seconds, who):
    start = time.perf_counter()
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass
    if who:
        TRUTH[who] += time.perf_counter() - start


async def step_heavy():
    burn(0.003, "heavy")


async def step_light():
    burn(0.001, "light")


async def run_short():
    burn(0.0005, None)


async def spawner():
    while True:
        await asyncio.create_task(run_short(), name="short")
        await asyncio.sleep(0.02)


def publish(path, doc):
    with open(path + ".tmp", "w") as f:
        json.dump(doc, f)
    os.rename(path + ".tmp", path)


async def report(out):
    while True:
        publish(out + ".truth", TRUTH)
        await asyncio.sleep(0.1)


async def handle_heavy():
    while True:
        await step_heavy()
        await asyncio.sleep(PACE)


async def handle_light():
    while True:
        await step_light()
        await asyncio.sleep(PACE)


async def dispatch():
    async with asyncio.TaskGroup() as tg:
        tg.create_task(handle_heavy(), name="heavy")
        tg.create_task(handle_light(), name="light")


async def second_loop():
    await asyncio.create_task(dispatch(), name="dispatcher")


async def main(out, tids):
    task = asyncio.create_task(dispatch(), name="dispatcher")
    if len(tids) == 1:
        # Not beside a second loop: its file writes would wait for the GIL
        # most of the time (each write gives it away to the burning thread).
        asyncio.create_task(report(out), name="reporter")
        asyncio.create_task(spawner(), name="spawner")
    await asyncio.sleep(0.05)
    publish(out, {"pid": os.getpid(), "tids": tids})
    GO.set()
    await task


def run_second():
    # Once the first loop is up: two threads burning from the start can
    # starve the main one of the GIL for seconds before it says it is ready.
    GO.wait()
    asyncio.run(second_loop())


GO = threading.Event()
TIDS = [threading.get_native_id()]
if sys.argv[2:] == ["two-loops"]:
    second = threading.Thread(target=run_second, daemon=True)
    second.start()
    TIDS.append(second.native_id)
asyncio.run(main(sys.argv[1], TIDS))
