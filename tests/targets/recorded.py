"""A program for `record -- COMMAND`: it says hello on stdout, spins in
outer_work -> inner_work for SECONDS (0: until killed), then exits with
status CODE.

usage: recorded.py SECONDS CODE
"""

import sys
import time


def inner_work(end):
    while time.perf_counter() < end:
        sum(range(200))


def outer_work(seconds):
    end = time.perf_counter() + (seconds if seconds > 0 else 1e9)
    inner_work(end)


def main():
    seconds, code = float(sys.argv[1]), int(sys.argv[2])
    print("recorded.py says hello", flush=True)
    outer_work(seconds)
    sys.exit(code)


if __name__ == "__main__":
    main()
