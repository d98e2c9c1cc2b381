"""Threads waiting on sockets and a pipe whose other ends other processes hold.

argv: READY_FILE SOCKET_PATH [REMOTE_HOST:PORT]
It starts a server process (`python -c ... peer-server SOCKET_PATH`) that
listens on SOCKET_PATH (mode 0777) and on two loopback TCP ports, accepts
one connection on the unix socket and one on the first port, never accepts
on the second, and never writes; and a child (`sleep`) holding the write
end of a pipe. Then, each in its own thread:
  unix     recv() on a connection to SOCKET_PATH   (peer: the server)
  tcp      recv() on a connection to the first port  (peer: the server)
  queued   recv() on a connection to the second port, still in the
           server's accept queue  (peer: the server, not accepted)
  pipe     read() of the pipe  (other end: the child)
  remote   recv() on a connection to REMOTE_HOST:PORT, when given: a host
           whose sockets this machine's tables do not hold  (no pid)
Ready file: {"roles": {name: tid}, "server": pid, "child": pid,
"socket_path", "tcp_addr", "queued_addr", "remote_addr"}.
"""

import os
import shutil
import socket
import subprocess
import sys
import threading
import time

import _ttlib as _tt

OUT = _tt.out_path()
SOCKET_PATH = sys.argv[2]
REMOTE = sys.argv[3] if len(sys.argv) > 3 else None

SERVER = """
import os, socket, sys, time
u = socket.socket(socket.AF_UNIX)
u.bind(sys.argv[2])
os.chmod(sys.argv[2], 0o777)
u.listen(4)
t = socket.socket()
t.bind(("127.0.0.1", 0))
t.listen(4)
q = socket.socket()
q.bind(("127.0.0.1", 0))
q.listen(4)
print(t.getsockname()[1], q.getsockname()[1], flush=True)
keep = [u.accept(), t.accept()]
time.sleep(10**6)
"""

tids = {}
started = threading.Barrier(6 if REMOTE else 5)


def role(name):
    tids[name] = threading.get_native_id()
    started.wait()


def recv_worker(name, sock):
    role(name)
    sock.recv(1)


def pipe_worker(fd):
    role("pipe")
    os.read(fd, 1)


def main():
    # An embedding application (tests/embedhost) is no interpreter to run:
    # any Python serves.
    python = sys.executable if os.path.basename(sys.executable or "").startswith("python") else \
        shutil.which("python3")
    server = subprocess.Popen([python, "-c", SERVER, "peer-server", SOCKET_PATH],
                              stdout=subprocess.PIPE, text=True)
    tcp_port, queued_port = (int(p) for p in server.stdout.readline().split())
    r, w = os.pipe()
    child = subprocess.Popen(["sleep", str(_tt.PARK)], pass_fds=[w])
    os.close(w)
    unix = socket.socket(socket.AF_UNIX)
    unix.connect(SOCKET_PATH)
    tcp = socket.create_connection(("127.0.0.1", tcp_port))
    queued = socket.create_connection(("127.0.0.1", queued_port))
    workers = [("unix", unix), ("tcp", tcp), ("queued", queued)]
    facts = {"server": server.pid, "child": child.pid, "socket_path": SOCKET_PATH,
             "tcp_addr": "127.0.0.1:%d" % tcp_port, "queued_addr": "127.0.0.1:%d" % queued_port}
    if REMOTE:
        host, port = REMOTE.rsplit(":", 1)
        workers.append(("remote", socket.create_connection((host, int(port)), timeout=5)))
        workers[-1][1].settimeout(None)
        facts["remote_addr"] = REMOTE
    for name, sock in workers:
        threading.Thread(target=recv_worker, args=(name, sock), name=name, daemon=True).start()
    threading.Thread(target=pipe_worker, args=(r,), name="pipe", daemon=True).start()
    keep = [server, child, workers]
    started.wait()
    _tt.ready(OUT, roles=tids, **facts); time.sleep(_tt.PARK)
    return keep


main()
