"""Qualified names: nested classes, closures, lambdas, generators, coroutines.

Main thread parks at the end of this chain (innermost last):
    <module> -> main -> Outer.Inner.method -> make_closure.<locals>.inner
    -> make_closure.<locals>.inner.<locals>.<lambda> -> consume
    -> numbers (generator being iterated) -> drive (manual coro.send loop)
    -> Outer.make_coro.<locals>.middle (coroutine) -> Outer.Inner.leaf (coroutine)
Thread "asyncio" parks inside an event loop (innermost last):
    ... asyncio internals ... -> Service.handle (task)
    -> make_handler.<locals>.handler -> ticker (async generator)

Ready file: {"threads": [{"tid": ..., "frames": [...]}, ...]}  (main last)
"""

import asyncio
import threading
import time

import _ttlib as _tt

records = []


class Outer:
    class Inner:
        def method(self):
            return make_closure()()

        async def leaf(self):
            records.append(_tt.thread_record()); _tt.ready(OUT, threads=records); time.sleep(_tt.PARK)

    @staticmethod
    def make_coro():
        async def middle():
            return await Outer.Inner().leaf()
        return middle()


def make_closure():
    def inner():
        f = lambda: consume(numbers())
        return f()
    return inner


def numbers():
    yield 1
    yield drive(Outer.make_coro())


def consume(gen):
    total = 0
    for value in gen:
        total += value
    return total


def drive(coro):
    """Run a coroutine by hand, without an event loop."""
    try:
        while True:
            coro.send(None)
    except StopIteration as stop:
        return stop.value


# --- the asyncio thread ---------------------------------------------------

async def ticker():
    yield 1
    records.append(_tt.thread_record()); time.sleep(_tt.PARK)
    yield 2


def make_handler():
    async def handler():
        async for _ in ticker():
            pass
    return handler


class Service:
    async def handle(self):
        await make_handler()()


def asyncio_thread():
    async def amain():
        await asyncio.create_task(Service().handle())
    asyncio.run(amain())


def main():
    threading.Thread(target=asyncio_thread, name="asyncio", daemon=True).start()
    while not records:
        time.sleep(0.005)
    Outer.Inner().method()


OUT = _tt.out_path()
main()
