"""A thread waiting on a unix socket another user's server holds.

argv: READY_FILE SOCKET_PATH
Run as an unprivileged user by the test, whose server (root's) listens on
SOCKET_PATH: the thread "client" connects and blocks in recv().
Ready file: {"roles": {"client": tid}}.
"""

import socket
import sys
import threading
import time

import _ttlib as _tt

OUT = _tt.out_path()
tids = {}
started = threading.Barrier(2)


def client(sock):
    tids["client"] = threading.get_native_id()
    started.wait()
    sock.recv(1)


def main():
    sock = socket.socket(socket.AF_UNIX)
    sock.connect(sys.argv[2])
    threading.Thread(target=client, args=(sock,), name="client", daemon=True).start()
    started.wait()
    _tt.ready(OUT, roles=tids); time.sleep(_tt.PARK)
    return sock


main()
