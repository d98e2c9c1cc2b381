"""gevent greenlets parked where a stuck server's requests park.

argv[1]: ready file. argv[2] (optional): "plain" for greenlet without gevent
(a few raw greenlets switched to and left suspended, no hub), "none" for a
process that imports neither.

With gevent: a silent upstream (a listening socket that never answers) and
N requests, each a gevent Greenlet in fetch_inventory() blocked in recv()
on it, plus one in a gevent.sleep(); the main greenlet then sleeps, so the
hub runs and everything else is suspended.

The oracle: the target's own view of its greenlets, from gc.get_objects()
and each greenlet's gr_frame chain, written to the ready file, and again to
READY.sig on SIGUSR1 (taken from a signal handler, while parked)."""
import gc
import json
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _ttlib as _tt  # noqa: E402

OUT = _tt.out_path()
MODE = sys.argv[2] if len(sys.argv) > 2 else "gevent"
N = int(os.environ.get("TT_GREENLETS", "8"))


def frames_of(frame):
    out = []
    while frame is not None:
        code = frame.f_code
        out.append({"func": code.co_qualname, "file": code.co_filename,
                    "line": frame.f_lineno})
        frame = frame.f_back
    return out


def own_greenlets():
    import greenlet
    found = []
    for o in gc.get_objects():
        if isinstance(o, greenlet.greenlet) and not o.dead:
            found.append({"id": id(o), "type": type(o).__name__,
                          "frames": frames_of(o.gr_frame),
                          "parent": id(o.parent) if o.parent is not None else 0})
    return found


def on_usr1(signum, frame):
    with open(OUT + ".sig.tmp", "w", encoding="ascii") as f:
        json.dump({"greenlets": own_greenlets()}, f, ensure_ascii=True)
    os.rename(OUT + ".sig.tmp", OUT + ".sig")


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
    _tt.ready(OUT, greenlets=own_greenlets(), main=_tt.own_stack(), hub=id(gevent.get_hub())); gevent.sleep(_tt.PARK)  # noqa: E702,E501


def parked_plain(main):
    main.switch()


def run_plain():
    import greenlet
    main = greenlet.getcurrent()
    kept = [greenlet.greenlet(parked_plain) for _ in range(3)]
    for g in kept:
        g.switch(main)
    signal.signal(signal.SIGUSR1, on_usr1)
    _tt.ready(OUT, greenlets=own_greenlets(), main=_tt.own_stack()); time.sleep(_tt.PARK)  # noqa: E702


if MODE == "gevent":
    run_gevent()
elif MODE == "plain":
    run_plain()
else:
    _tt.ready(OUT, greenlets=[]); time.sleep(_tt.PARK)  # noqa: E702
