"""A small server-like workload for trying tachyon-top, shaped like the
programs it is for: a request loop that parses, computes and renders; two
worker processes rendering reports (a process tree); an asyncio event loop
whose connection tasks are stuck awaiting an upstream that never answers; a
thread blocked on a socket reply that never comes; a worker pool, a thread
waiting on a queue and one blocked on a lock. Every panel has something to
show. Exits by itself after the number of seconds given (default: never)."""
import asyncio
import ctypes
import hashlib
import json
import multiprocessing
import queue
import re
import signal
import socket
import sys
import threading
import time

WORD = re.compile(r"[a-z]+")


class Request:
    def __init__(self, n):
        self.n = n
        self.body = json.dumps({"id": n, "items": list(range(n % 50))})


class Handler:
    def handle(self, req):
        data = self.parse(req)
        total = self.compute(data)
        return self.render(data, total)

    def parse(self, req):
        return json.loads(req.body)

    def compute(self, data):
        acc = 0
        for i in data["items"]:
            acc += fib(12 + i % 5)
        return acc

    def render(self, data, total):
        text = " ".join(f"item{i}" for i in data["items"])
        return len(WORD.findall(text)) + total


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def hash_worker(stop):
    h = hashlib.sha256()
    while not stop.is_set():
        for _ in range(1000):
            h.update(b"tachyon")
        time.sleep(0.004)


def queue_waiter(q):
    while True:
        item = q.get()
        if item is None:
            return


def lock_waiter(lock):
    with lock:
        pass


# --- a process tree: report workers -------------------------------------

def die_with_parent():
    """Linux: end this worker when the process that started it dies, even by
    SIGKILL, so a killed demo leaves nothing behind."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def render_report(n):
    rows = [{"row": i, "sum": fib(10 + i % 8)} for i in range(n)]
    return hashlib.sha256(json.dumps(rows).encode()).hexdigest()


def paced(busy, idle, step, seconds):
    """Call step(n) for `busy` seconds, rest `idle` seconds, and again until
    `seconds` have passed (0: forever): a server under moderate load, not a
    benchmark spinning flat out, so the demo leaves a 2-core machine room
    for tachyon-top itself."""
    deadline = time.monotonic() + seconds if seconds else None
    n = 0
    while deadline is None or time.monotonic() < deadline:
        burst_end = time.monotonic() + busy
        while time.monotonic() < burst_end:
            step(n)
            n += 1
        time.sleep(idle)


def report_worker(seconds):
    die_with_parent()
    # About a sixth of a core each.
    paced(0.012, 0.06, lambda n: render_report(20 + n % 30), seconds)


# --- asyncio: connections stuck on an upstream ---------------------------

async def fetch_upstream(upstream, conn):
    await upstream.wait()          # never set: the upstream does not answer
    return conn


async def handle_conn(upstream, conn):
    return await fetch_upstream(upstream, conn)


async def ticker():
    while True:
        await refresh_dashboard()
        await asyncio.sleep(0.05)


async def refresh_dashboard():
    # A few ms of CPU on the loop thread: --async puts it under task ticker.
    return render_report(120)


async def serve_async():
    upstream = asyncio.Event()
    tasks = [asyncio.create_task(handle_conn(upstream, i), name=f"conn-{i}")
             for i in range(6)]
    tasks.append(asyncio.create_task(ticker(), name="ticker"))
    await asyncio.gather(*tasks)


def event_loop_thread():
    asyncio.run(serve_async())


# --- a thread blocked on a socket ----------------------------------------

def db_server(listener):
    conn, _ = listener.accept()    # accept, read the query, never answer
    conn.recv(4096)
    threading.Event().wait()


def db_client(port):
    with socket.create_connection(("127.0.0.1", port)) as conn:
        conn.sendall(b"SELECT 1;\n")
        conn.recv(4096)            # blocks: the server never replies


def serve_forever(seconds):
    handler = Handler()
    # Requests about a quarter of the time: busy, with room to spare.
    paced(0.02, 0.06, lambda n: handler.handle(Request(n)), seconds)


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 0
    # SIGTERM ends the demo through normal exit, so its workers are stopped too.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    stop = threading.Event()
    q = queue.Queue()
    held = threading.Lock()
    held.acquire()
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    # Forked (before any thread starts), as a pre-fork server's workers
    # are: no fork server or resource tracker beside them.
    fork = multiprocessing.get_context("fork")
    workers = [fork.Process(target=report_worker, args=(seconds,),
                            name=f"report-{i}", daemon=True) for i in range(2)]
    for w in workers:
        w.start()
    threads = [threading.Thread(target=hash_worker, args=(stop,), name=f"hasher-{i}",
                                daemon=True) for i in range(2)]
    threads += [
        threading.Thread(target=queue_waiter, args=(q,), name="queue-waiter", daemon=True),
        threading.Thread(target=lock_waiter, args=(held,), name="lock-waiter", daemon=True),
        threading.Thread(target=event_loop_thread, name="event-loop", daemon=True),
        threading.Thread(target=db_server, args=(listener,), name="db-server", daemon=True),
        threading.Thread(target=db_client, args=(port,), name="db-client", daemon=True),
    ]
    for t in threads:
        t.start()
    serve_forever(seconds)
    stop.set()


if __name__ == "__main__":
    main()
