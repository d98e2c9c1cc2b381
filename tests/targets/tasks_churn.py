"""Tasks created and finished at a high rate, forever. argv[1]: ready file;
argv[2], optional: tasks per second (default: as fast as it goes)."""
import asyncio
import json
import os
import sys
import time

RATE = float(sys.argv[2]) if len(sys.argv) > 2 else 0


async def short(i):
    await asyncio.sleep(0)
    if i % 3 == 0:
        await asyncio.sleep(0.0001)
    return i


async def main():
    n = 0
    started = time.monotonic()
    while True:
        tasks = [asyncio.create_task(short(i), name="churn-%d" % (n + i)) for i in range(200)]
        n += 200
        await asyncio.gather(*tasks)
        if RATE:
            # paced: the next 200 when they are due
            await asyncio.sleep(max(0.0, started + n / RATE - time.monotonic()))
        if n == 2000:
            with open(sys.argv[1] + ".tmp", "w") as f:
                json.dump({"pid": os.getpid()}, f)
            os.rename(sys.argv[1] + ".tmp", sys.argv[1])

asyncio.run(main())
