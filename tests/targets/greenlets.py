"""greenlets parked where a stuck server's requests park.

argv[1]: ready file. argv[2] (optional):
  gevent (default)  a silent upstream (a listening socket that never
      answers) and TT_GREENLETS (8) requests, each a gevent Greenlet in
      fetch_inventory() blocked in recv() on it, plus one in gevent.sleep();
      the main greenlet then sleeps, so the hub runs and all else waits.
  plain   greenlet without gevent: three raw greenlets switched into and
      left suspended, no hub; the main greenlet sleeps in time.sleep().
      Two more threads do the same with two each; which thread each
      greenlet is of is in the ready file ("threads").
  churn   gevent greenlets spawned at 2,000 a second, each sleeping at most
      50 ms in handler() and then ending (the ready file after a second),
      beside TT_GREENLETS requests parked in fetch_inventory() for good.
  parked  TT_GREENLETS gevent greenlets waiting in wait_for_order() on one
      gevent Event that is never set (many: no socket backlog to outgrow).
  eventlet  eventlet's (OpenStack's) in place of gevent: TT_GREENLETS
      green threads of a GreenPool blocked in recv() on a silent upstream
      (eventlet's green socket), the main greenlet in eventlet.sleep().
  imported  imports greenlet and makes no greenlet.
  none    imports neither.
TT_GREENLETS sets the number of requests, TT_HEAP_OBJECTS adds that many
small dicts to the heap.

The oracle: the process's own view of its greenlets (_ttlib.greenlet_stacks)
in the ready file, and again in READY.sig on SIGUSR1, taken by a signal
handler while parked."""
import os
import random
import signal
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _ttlib as _tt  # noqa: E402

OUT = _tt.out_path()
MODE = sys.argv[2] if len(sys.argv) > 2 else "gevent"
N = int(os.environ.get("TT_GREENLETS", "8"))
# TT_HEAP_OBJECTS: that many more live objects (small dicts), for what a
# scan of a big heap costs.
HEAP = [{"i": i} for i in range(int(os.environ.get("TT_HEAP_OBJECTS", "0")))]
RATE = 2000


def on_usr1(signum, frame):
    _tt.write_json(OUT + ".sig", {"greenlets": _tt.greenlet_stacks()})


def fetch_inventory(port, item):
    import gevent.socket
    s = gevent.socket.create_connection(("127.0.0.1", port))
    return s.recv(1024)   # the upstream never answers


def nap_forever():
    import gevent
    gevent.sleep(_tt.PARK)


def run_gevent():
    import gevent
    import gevent.socket
    upstream = gevent.socket.socket()
    upstream.bind(("127.0.0.1", 0))
    upstream.listen(64)
    port = upstream.getsockname()[1]
    held = [gevent.spawn(fetch_inventory, port, i) for i in range(N)]
    held.append(gevent.spawn(nap_forever))
    gevent.sleep(0.2)     # every request is connected and waiting
    signal.signal(signal.SIGUSR1, on_usr1)
    _tt.ready(OUT, greenlets=_tt.greenlet_stacks(), main=_tt.own_stack(), hub=id(gevent.get_hub())); gevent.sleep(_tt.PARK)  # noqa: E702,E501


def parked_plain(main):
    main.switch()


def fetch_order(port):
    import eventlet.green.socket
    s = eventlet.green.socket.create_connection(("127.0.0.1", port))
    return s.recv(1024)   # the upstream never answers


def run_eventlet():
    import eventlet
    import eventlet.green.socket
    upstream = eventlet.green.socket.socket()
    upstream.bind(("127.0.0.1", 0))
    upstream.listen(64)
    pool = eventlet.GreenPool()
    for _ in range(N):
        pool.spawn(fetch_order, upstream.getsockname()[1])
    eventlet.sleep(0.2)
    signal.signal(signal.SIGUSR1, on_usr1)
    _tt.ready(OUT, greenlets=_tt.greenlet_stacks(), main=_tt.own_stack()); eventlet.sleep(_tt.PARK)  # noqa: E702,E501


def park_greenlets(n, threads):
    """n greenlets of this thread left suspended; the thread's native id
    and its greenlets' ids (its main one's first) added to threads."""
    import greenlet
    main = greenlet.getcurrent()
    kept = [greenlet.greenlet(parked_plain) for _ in range(n)]
    for g in kept:
        g.switch(main)
    threads.append({"tid": threading.get_native_id(), "greenlets": [id(main)] +
                    [id(g) for g in kept]})
    return kept


def plain_thread(threads):
    kept = park_greenlets(2, threads)  # noqa: F841 (kept alive while parked)
    time.sleep(_tt.PARK)


def run_plain():
    threads = []
    kept = park_greenlets(3, threads)  # noqa: F841
    for _ in range(2):
        threading.Thread(target=plain_thread, args=(threads,), daemon=True).start()
    while len(threads) < 3:
        time.sleep(0.01)
    signal.signal(signal.SIGUSR1, on_usr1)
    _tt.ready(OUT, greenlets=_tt.greenlet_stacks(), main=_tt.own_stack(), threads=threads); time.sleep(_tt.PARK)  # noqa: E702,E501


def wait_for_order(event):
    event.wait()


def run_parked():
    import gevent
    import gevent.event
    never = gevent.event.Event()
    held = [gevent.spawn(wait_for_order, never) for _ in range(N)]
    gevent.sleep(0.2)
    _tt.ready(OUT, parked=len(held)); gevent.sleep(_tt.PARK)  # noqa: E702


def handler():
    import gevent
    gevent.sleep(random.uniform(0, 0.05))


def run_churn():
    import gevent
    import gevent.socket
    upstream = gevent.socket.socket()
    upstream.bind(("127.0.0.1", 0))
    upstream.listen(64)
    held = [gevent.spawn(fetch_inventory, upstream.getsockname()[1], i) for i in range(N)]
    started, n = time.monotonic(), 0
    while True:
        for _ in range(20):
            gevent.spawn(handler)
        n += 20
        gevent.sleep(max(0.0, started + n / RATE - time.monotonic()))
        if n == RATE:
            _tt.ready(OUT)


if MODE == "gevent":
    run_gevent()
elif MODE == "plain":
    run_plain()
elif MODE == "churn":
    run_churn()
elif MODE == "parked":
    run_parked()
elif MODE == "eventlet":
    run_eventlet()
elif MODE == "imported":
    import greenlet  # noqa: F401
    _tt.ready(OUT); time.sleep(_tt.PARK)  # noqa: E702
else:
    _tt.ready(OUT); time.sleep(_tt.PARK)  # noqa: E702
