"""Threads named the ways programs name them: threading.Thread(name=...)
longer than the kernel's 15 bytes, a ThreadPoolExecutor's default names,
a thread renamed after it started, a name with non-ASCII characters and a
terminal escape sequence, and the main thread; and one started with
_thread.start_new_thread, which threading does not know (no name of its).
SIGUSR1 renames "renamed-later" to "renamed-live".

Ready file: {"tids": [every native id, main included],
             "names": {native id: threading's name of it},
             "unregistered": the native id of the thread threading does not know}
"""

import _thread
import concurrent.futures
import signal
import threading
import time

import _ttlib as _tt


def park(started):
    started.release()
    time.sleep(_tt.PARK)


unregistered = []


def park_unregistered(started):
    unregistered.append(threading.get_native_id())
    park(started)


def main():
    started = threading.Semaphore(0)
    _thread.start_new_thread(park_unregistered, (started,))
    named = [threading.Thread(target=park, args=(started,), name=name, daemon=True)
             for name in ("request-handler-long-name-0", "before",
                          "na\u00efve-\u540d\u524d-\x1b[31mred")]
    for t in named:
        t.start()
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=2)
    for _ in range(2):
        pool.submit(park, started)
    for _ in range(len(named) + 3):
        started.acquire()
    named[1].name = "renamed-later"
    # SIGUSR1: renamed again while a tool watches
    signal.signal(signal.SIGUSR1, lambda *_: setattr(named[1], "name", "renamed-live"))
    names = {t.native_id: t.name for t in threading.enumerate()}
    _tt.ready(OUT, tids=_tt.all_native_ids(), names=names, unregistered=unregistered[0])
    time.sleep(_tt.PARK)


OUT = _tt.out_path()
main()
