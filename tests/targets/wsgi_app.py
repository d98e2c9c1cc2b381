"""A small WSGI app for gunicorn: a CPU-heavy handler and a sleeping one."""
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


def application(environ, start_response):
    path = environ.get("PATH_INFO", "/")
    body = cpu_heavy() if path == "/cpu" else slow_io() if path == "/sleep" else b"ok"
    start_response("200 OK", [("Content-Type", "text/plain"),
                              ("Content-Length", str(len(body)))])
    return [body]
