"""Keep a server busy: N threads requesting the given paths in turn until killed."""
import sys
import threading
import urllib.request


def loop(base, paths):
    i = 0
    while True:
        try:
            urllib.request.urlopen(base + paths[i % len(paths)], timeout=10).read()
        except OSError:
            pass
        i += 1


def main():
    base, nthreads, paths = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    for _ in range(nthreads):
        threading.Thread(target=loop, args=(base, paths), daemon=True).start()
    threading.Event().wait()


main()
