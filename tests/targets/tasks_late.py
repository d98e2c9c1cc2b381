"""Parks before importing asyncio; on SIGUSR1 imports it and parks tasks.
argv[1]: ready file ({"pid"}); argv[1] + ".2" once the tasks exist.
With argv[2] == "never", never imports asyncio at all."""
import json
import os
import signal
import sys
import threading

OUT = sys.argv[1]
go = threading.Event()
signal.signal(signal.SIGUSR1, lambda *a: go.set())


def publish(path):
    with open(path + ".tmp", "w") as f:
        json.dump({"pid": os.getpid()}, f)
    os.rename(path + ".tmp", path)


publish(OUT)
if len(sys.argv) > 2 and sys.argv[2] == "never":
    threading.Event().wait()
go.wait()
import asyncio  # noqa: E402


async def late_worker(ev):
    await ev.wait()


async def main():
    ev = asyncio.Event()
    for i in range(3):
        asyncio.create_task(late_worker(ev), name="late-%d" % i)
    await asyncio.sleep(0)
    publish(OUT + ".2")
    await ev.wait()

asyncio.run(main())
