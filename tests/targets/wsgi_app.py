"""A small WSGI app for gunicorn: a CPU-heavy handler and a sleeping one;
/upstream?PORT asks 127.0.0.1:PORT and waits for its answer."""
import socket
import time


def crunch_numbers(n):
    total = 0
    for i in range(n):
        total += i * i % 7
    return total


def cpu_heavy():
    return str(crunch_numbers(300000)).encode()


def slow_io():
    time.sleep(0.05)
    return b"slept"


def ask_upstream(port):
    with socket.create_connection(("127.0.0.1", port), timeout=600) as s:
        s.sendall(b"GET\n")
        return s.recv(100)


def application(environ, start_response):
    path = environ.get("PATH_INFO", "/")
    if path == "/upstream":
        body = ask_upstream(int(environ.get("QUERY_STRING") or 0))
    else:
        body = cpu_heavy() if path == "/cpu" else slow_io() if path == "/sleep" else b"ok"
    start_response("200 OK", [("Content-Type", "text/plain"),
                              ("Content-Length", str(len(body)))])
    return [body]
