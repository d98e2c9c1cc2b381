"""Benchmark targets: python3.15 workloads.py KIND

busy     one thread in a tight loop
deep     a 900-frame stack, parked
threads  20 threads computing and sleeping in turns
mixed    a main loop of calls of varied depth and cost, with short sleeps,
         plus a few worker threads (like the reference benchmark's mixed case)
tree     mixed in 8 processes: this one and 7 forked children
         (for bench --subprocesses)
poolN    N threads parked on one Event (an idle thread pool) and the main
         thread busy, e.g. pool1000
"""
import math
import random
import sys
import threading
import time


def busy():
    x = 0
    while True:
        x = (x + 1) % 1000003


def factorial(n):
    if n <= 1:
        time.sleep(10**6)
        return 1
    return n * factorial(n - 1)


def deep():
    sys.setrecursionlimit(5000)
    factorial(900)


def cpu_work():
    total = 0.0
    for _ in range(2000):
        total += math.sin(random.random()) * math.sqrt(random.random())
    return total


def worker():
    while True:
        cpu_work()
        time.sleep(random.uniform(0.0005, 0.003))


def threads():
    for i in range(20):
        threading.Thread(target=worker, name="worker-%d" % i, daemon=True).start()
    while True:
        time.sleep(1)


def slow_fibonacci(n):
    return n if n <= 1 else slow_fibonacci(n - 1) + slow_fibonacci(n - 2)


def nested_calls():
    def level1():
        def level2():
            def level3():
                return sum(math.sqrt(i) * math.sin(i) for i in range(1000))
            return level3()
        return level2()
    return level1()


def string_operations():
    text = "hello world " * 100
    return " ".join(reversed(text.split()))


def mixed():
    for i in range(3):
        threading.Thread(target=worker, name="helper-%d" % i, daemon=True).start()
    iteration = 0
    while True:
        iteration += 1
        if iteration % 50 == 0:
            slow_fibonacci(20)
        elif iteration % 10 == 0:
            nested_calls()
        elif iteration % 5 == 0:
            string_operations()
        else:
            sum(range(100))
        time.sleep(0.001)


def tree():
    import os
    for _ in range(7):
        if os.fork() == 0:
            break   # a child runs mixed() too, and forks no further
    mixed()


def pool(n):
    threading.stack_size(256 << 10)
    release = threading.Event()
    for i in range(n):
        threading.Thread(target=release.wait, name="pool-%d" % i, daemon=True).start()
    busy()


if __name__ == "__main__":
    if sys.argv[1].startswith("pool"):
        pool(int(sys.argv[1][4:]))
    {"busy": busy, "deep": deep, "threads": threads, "mixed": mixed,
     "tree": tree}[sys.argv[1]]()
