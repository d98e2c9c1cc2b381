"""A small server-like workload for trying tachyon-top: a request loop that
parses, computes and renders, a worker pool, a thread waiting on a queue and
one blocked on a lock, so every panel has something to show."""
import hashlib
import json
import queue
import re
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
        for _ in range(2000):
            h.update(b"tachyon")
        time.sleep(0.002)


def queue_waiter(q):
    while True:
        item = q.get()
        if item is None:
            return


def lock_waiter(lock):
    with lock:
        pass


def serve_forever(seconds):
    handler = Handler()
    deadline = time.monotonic() + seconds if seconds else None
    n = 0
    while deadline is None or time.monotonic() < deadline:
        handler.handle(Request(n))
        n += 1


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 0
    stop = threading.Event()
    q = queue.Queue()
    held = threading.Lock()
    held.acquire()
    threads = [threading.Thread(target=hash_worker, args=(stop,), name=f"hasher-{i}",
                                daemon=True) for i in range(2)]
    threads.append(threading.Thread(target=queue_waiter, args=(q,), name="queue-waiter",
                                    daemon=True))
    threads.append(threading.Thread(target=lock_waiter, args=(held,), name="lock-waiter",
                                    daemon=True))
    for t in threads:
        t.start()
    serve_forever(seconds)
    stop.set()


if __name__ == "__main__":
    main()
