"""Requests that never wait long: asyncio tasks started at about 5,000 a
second, each sleeping at most 50 ms in handler() and then ending, so that
finished tasks' addresses keep going to new ones at the same point. No task
there waits over 50 ms. argv[1]: ready file, written after the first
second."""
import asyncio
import json
import os
import random
import sys

RATE = 5000


async def handler():
    await asyncio.sleep(random.uniform(0, 0.05))


async def main():
    loop = asyncio.get_running_loop()
    alive = set()   # the loop keeps only weak references to its tasks
    started, n, ready = loop.time(), 0, False
    while True:
        for _ in range(50):
            task = asyncio.create_task(handler())
            alive.add(task)
            task.add_done_callback(alive.discard)
        n += 50
        await asyncio.sleep(max(0.0, started + n / RATE - loop.time()))
        if not ready and n >= RATE:
            with open(sys.argv[1] + ".tmp", "w") as f:
                json.dump({"pid": os.getpid()}, f)
            os.rename(sys.argv[1] + ".tmp", sys.argv[1])
            ready = True

asyncio.run(main())
