"""A real aiohttp server (Debian's python3-aiohttp) whose /slow handler
awaits an upstream that accepts connections and never answers, and whose
/cpu handler burns a few milliseconds of CPU in crunch(); /block calls
time.sleep(2) in its coroutine, which blocks the event loop. Listens on
127.0.0.1 only, on a free port; writes {"pid", "port"} to argv[1]."""
import asyncio
import json
import os
import socket
import sys
import time

from aiohttp import web

# The stuck upstream: a socket that listens but never accepts or answers.
upstream = socket.socket()
upstream.bind(("127.0.0.1", 0))
upstream.listen(1024)
UPSTREAM_PORT = upstream.getsockname()[1]


async def fetch_upstream():
    reader, writer = await asyncio.open_connection("127.0.0.1", UPSTREAM_PORT)
    writer.write(b"GET / HTTP/1.0\r\n\r\n")
    return await reader.readline()


async def slow_handler(request):
    body = await fetch_upstream()
    return web.Response(body=body)


def crunch(n):
    h = 0
    for i in range(n):
        h = (h * 31 + i) & 0xFFFFFFFF
    return h


async def compute():
    return crunch(30000)


async def cpu_handler(request):
    return web.Response(text="%d\n" % await compute())


async def block_handler(request):
    time.sleep(2)   # a blocking call in a coroutine: the whole loop waits
    return web.Response(text="slept\n")


async def fast_handler(request):
    return web.Response(text="ok\n")


async def main():
    app = web.Application()
    app.router.add_get("/slow", slow_handler)
    app.router.add_get("/fast", fast_handler)
    app.router.add_get("/cpu", cpu_handler)
    app.router.add_get("/block", block_handler)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    with open(sys.argv[1] + ".tmp", "w") as f:
        json.dump({"pid": os.getpid(), "port": port}, f)
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    await asyncio.Event().wait()

asyncio.run(main())
