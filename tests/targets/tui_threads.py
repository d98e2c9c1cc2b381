"""Five idle worker threads and a busy main thread whose loop calls one
function from each of two lines: more threads than an 80x24 panel shows,
and two lines of loop() with different callees.

Ready file: {"line_a": line calling work_a, "line_b": line calling work_b}
"""

import threading
import time

import _ttlib as _tt


def idle():
    while True:
        time.sleep(1)


def work_a():
    x = 0
    for i in range(3000):
        x += i
    return x


def work_b():
    x = 0
    for i in range(3000):
        x += i
    return x


def loop():
    while True:
        work_a()  # LINE_A
        work_b()  # LINE_B


if __name__ == "__main__":
    for n in range(5):
        threading.Thread(target=idle, name="idle-%d" % n, daemon=True).start()
    with open(__file__, encoding="utf-8") as f:
        text = f.read().splitlines()
    lines = {key: 1 + next(i for i, t in enumerate(text) if t.endswith("# " + key.upper()))
             for key in ("line_a", "line_b")}
    _tt.ready(_tt.out_path(), **lines)
    loop()
