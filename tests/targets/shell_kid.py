"""One of a shell's Python children, for a root that is not Python
(`sh -c 'python3 shell_kid.py first & python3 shell_kid.py second & wait'`).

Spins in spin_first or spin_second (argv[1]) until killed, sleeping a little
between rounds so two of them leave a 2-core machine some room."""

import sys
import time


def spin_first():
    x = 0
    for i in range(200000):
        x += i
    return x


def spin_second():
    x = 0
    for i in range(200000):
        x -= i
    return x


def main():
    work = {"first": spin_first, "second": spin_second}[sys.argv[1]]
    while True:
        work()
        time.sleep(0.005)


main()
