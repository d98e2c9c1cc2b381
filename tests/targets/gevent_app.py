"""A WSGI app for gunicorn -k gevent whose /stuck/N requests hang on an
upstream that never answers (TT_UPSTREAM_PORT), in fetch_inventory().

Each stuck request first leaves a file PID-N in TT_HELD_DIR (which worker
holds it). On SIGRTMIN+1 a worker writes its own view of its greenlets
(_ttlib.greenlet_stacks) to TT_HELD_DIR/oracle-PID.json: the oracle."""
import os
import signal
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _ttlib as _tt  # noqa: E402

UPSTREAM = int(os.environ["TT_UPSTREAM_PORT"])
HELD = os.environ["TT_HELD_DIR"]


def fetch_inventory(item):
    s = socket.create_connection(("127.0.0.1", UPSTREAM))
    return s.recv(1024)


def app(environ, start_response):
    path = environ.get("PATH_INFO", "")
    if path.startswith("/stuck/"):
        open(os.path.join(HELD, "%d-%s" % (os.getpid(), path[len("/stuck/"):])), "w").close()
        fetch_inventory(path[len("/stuck/"):])
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"ok\n"]


def on_oracle(signum, frame):
    _tt.write_json(os.path.join(HELD, "oracle-%d.json" % os.getpid()),
                   {"greenlets": _tt.greenlet_stacks()})


signal.signal(signal.SIGRTMIN + 1, on_oracle)
