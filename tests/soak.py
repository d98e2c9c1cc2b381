#!/usr/bin/env python3
"""Soak: tachyon-top left attached to a churning server tree.

Under one shell in the target root: Debian's gunicorn with 3 sync workers
and --max-requests 20 under a paced client (a new worker every few hundred
ms), a thread-churn target (hundreds of threads a second) and an asyncio
target creating and finishing 5,000 tasks a second. tachyon-top watches the
shell (a root that is not Python: every descendant is followed) twice at
once: the live view in tmux and `record`.

Every --every seconds it prints both tachyon-tops' RSS, the live header's
sampling rate, errors and process counts, and how many gunicorn workers
were born and seen. Both RSS are also read every 2 s: it fails (exit 1)
when either one's median over the last 30 s is more than 10% above its
median over the 30 s after --warmup (one reading moves by a megabyte as
big tables are rebuilt and given back; a leak moves the median), when a
new worker is not in the live view's processes panel within 2 s, or when
either tachyon-top exits.

usage: tests/soak.py [--tt ./tachyon-top] [--minutes 60] [--every 60]
                     [--warmup 120] [--rps 50]
`--minutes 5` is the mode CI runs (tests/run-all.sh). Needs root, tmux and the provisioned
target root (tests/provision.sh).
"""
import argparse
import contextlib
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

import functional as rig

HERE = os.path.dirname(os.path.abspath(__file__))
TARGETS = os.path.join(HERE, "targets")
ROOT = os.environ.get("TT_ROOT", "/var/cache/tachyon-top/sid-root")
SEEN_WITHIN = 2.0     # s: a new worker is in the processes panel this soon
GROWTH = 0.10         # the most RSS may grow after warm-up
RSS_EVERY = 2.0       # s between RSS readings
RSS_SPAN = 30.0       # s of readings whose median is compared
SESSION = "tt-soak"


children, cmdline, free_port = rig.children, rig.cmdline, rig.free_port


def tmux(*args):
    return subprocess.run(["tmux"] + list(args), capture_output=True, text=True)


class Client(threading.Thread):
    """Requests at a steady rate: gunicorn recycles a worker every 20."""

    def __init__(self, url, rps):
        super().__init__(daemon=True)
        self.url, self.period, self.stop, self.done = url, 1.0 / rps, False, 0

    def run(self):
        due = time.monotonic()
        while not self.stop:
            with contextlib.suppress(OSError):
                urllib.request.urlopen(self.url, timeout=5).read()
                self.done += 1
            due += self.period
            time.sleep(max(0.0, due - time.monotonic()))


def header_figures(screen):
    """Rate, errors and process counts from the live header."""
    rate = re.search(r"Rate (\S+)/s", screen)
    errors = re.search(r"errors (\S+)%", screen)
    procs = re.search(r"processes (\d+) live / (\d+) exited", screen)
    return (rate.group(1) if rate else "?", errors.group(1) if errors else "?",
            "%s/%s" % procs.groups() if procs else "?")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tt", default=os.environ.get("TT_BIN", "./tachyon-top"))
    ap.add_argument("--minutes", type=float, default=60)
    ap.add_argument("--every", type=float, default=60)
    ap.add_argument("--warmup", type=float, default=120)
    ap.add_argument("--rps", type=float, default=50)
    args = ap.parse_args()
    # SIGTERM (a CI timeout, a user's kill) unwinds: the tree is killed.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    tt = os.path.abspath(args.tt)
    if shutil.which("tmux") is None or not os.path.isdir(ROOT):
        sys.exit("soak: needs tmux and the target root %s (tests/provision.sh)" % ROOT)
    seconds = args.minutes * 60
    warmup = min(args.warmup, seconds / 3)
    scratch = tempfile.mkdtemp(prefix="soak-", dir=os.path.join(ROOT, "tmp"))
    inside = "/" + os.path.relpath(scratch, ROOT)
    for name in ("wsgi_app.py", "churn.py", "tasks_churn.py", "_ttlib.py"):
        shutil.copy(os.path.join(TARGETS, name), scratch)
    port = free_port()
    with open(os.path.join(scratch, "run.sh"), "w") as f:
        f.write("cd %s\n" % inside +
                "gunicorn -w 3 --max-requests 20 -b 127.0.0.1:%d wsgi_app:application "
                ">gunicorn.log 2>&1 &\n" % port +
                "python3 churn.py churn.json &\n"
                "python3 tasks_churn.py tasks.json 5000 &\n"
                "wait\n")
    shell = subprocess.Popen(["chroot", ROOT, "sh", inside + "/run.sh"],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
    record = client = None
    failures = []
    tmux("kill-session", "-t", SESSION)
    try:
        deadline = time.monotonic() + 60
        master = None
        while time.monotonic() < deadline:
            if master is None:
                master = next((p for p in children(shell.pid) if "gunicorn" in cmdline(p)), None)
            ready = all(os.path.exists(os.path.join(scratch, n)) for n in ("churn.json",
                                                                               "tasks.json"))
            if master and len(children(master)) == 3 and ready:
                break
            time.sleep(0.2)
        else:
            sys.exit("soak: the server tree did not start within 60 s")
        client = Client("http://127.0.0.1:%d/" % port, args.rps)
        client.start()
        pane = tmux("new-session", "-d", "-s", SESSION, "-x", "200", "-y", "60", "-P", "-F",
                    "#{pane_pid}", "exec %s -p %d" % (tt, shell.pid))
        live_pid = int(pane.stdout.strip())
        rec_out = os.path.join(scratch, "soak.collapsed")
        rec_err = open(os.path.join(scratch, "record.err"), "wb")
        record = subprocess.Popen([tt, "record", "-p", str(shell.pid), "-o", rec_out],
                                  stdin=subprocess.DEVNULL, stdout=rec_err, stderr=rec_err)
        print("soak: %.0f min; shell %d (gunicorn master %d, threads churning, 5,000 tasks/s); "
              "client %.0f requests/s; live view pid %d, record pid %d"
              % (args.minutes, shell.pid, master, args.rps, live_pid, record.pid), flush=True)
        print("%7s %10s %10s %9s %7s %12s %9s %7s" % ("seconds", "live KB", "record KB",
                                                      "samples/s", "errors", "procs l/e",
                                                      "workers", "missed"), flush=True)
        started = time.monotonic()
        known, pending, seen, missed = set(children(master)), {}, 0, []
        readings = []         # (s, live KB, record KB) every RSS_EVERY
        next_print = next_reading = 0.0
        screen = ""
        while True:
            now = time.monotonic() - started
            for pid in children(master):
                if pid not in known:
                    known.add(pid)
                    pending[pid] = time.monotonic()
            if pending:
                screen = tmux("capture-pane", "-p", "-t", SESSION).stdout
                words = set(re.findall(r"\d+", screen))
                for pid, born in list(pending.items()):
                    if str(pid) in words:
                        seen += 1
                        del pending[pid]
                    elif time.monotonic() - born > SEEN_WITHIN:
                        missed.append(pid)
                        del pending[pid]
            if not os.path.exists("/proc/%d" % live_pid) or tmux("has-session", "-t",
                                                                  SESSION).returncode:
                failures.append("the live view exited at %.0f s" % now)
                break
            if record.poll() is not None:
                failures.append("record exited at %.0f s (status %s)" % (now, record.returncode))
                break
            if now >= next_reading:
                readings.append((now, rig.vm_rss_kb(live_pid), rig.vm_rss_kb(record.pid)))
                next_reading += RSS_EVERY
            if now >= next_print or now >= seconds:
                screen = tmux("capture-pane", "-p", "-t", SESSION).stdout
                rate, errors, procs = header_figures(screen)
                live_kb, rec_kb = rig.vm_rss_kb(live_pid), rig.vm_rss_kb(record.pid)
                print("%7.0f %10d %10d %9s %6s%% %12s %9d %7d"
                      % (now, live_kb, rec_kb, rate, errors, procs, len(known), len(missed)),
                      flush=True)
                next_print += args.every
            if now >= seconds:
                break
            time.sleep(0.25)
        end = readings[-1][0] if readings else 0
        early = [r for r in readings if warmup <= r[0] < warmup + RSS_SPAN]
        late = [r for r in readings if r[0] > end - RSS_SPAN and r[0] >= warmup + RSS_SPAN]
        for k, name in ((1, "live view"), (2, "record")):
            first = [r[k] for r in early if r[k]]
            last = [r[k] for r in late if r[k]]
            if first and last:
                a, b = statistics.median(first), statistics.median(last)
                growth = (b - a) / a
                print("%s: RSS median %.0f KB over %.0f-%.0f s, %.0f KB over %.0f-%.0f s: %+.1f%%"
                      % (name, a, early[0][0], early[-1][0], b, late[0][0], late[-1][0],
                         100 * growth), flush=True)
                if growth > GROWTH:
                    failures.append("%s: RSS grew %.1f%% after warm-up" % (name, 100 * growth))
        print("gunicorn workers born: %d, in the processes panel within %.0f s: %d, not: %d%s"
              % (len(known), SEEN_WITHIN, seen, len(missed),
                 " (%s)" % ", ".join(map(str, missed[:10])) if missed else ""), flush=True)
        if missed:
            failures.append("%d new workers were not in the processes panel within %.0f s"
                            % (len(missed), SEEN_WITHIN))
        print("client requests: %d" % client.done, flush=True)
        # record ends like a user ends it, and must write its profile.
        record.send_signal(signal.SIGINT)
        try:
            record.wait(timeout=60)
        except subprocess.TimeoutExpired:
            failures.append("record did not stop within 60 s of SIGINT")
        if record.returncode not in (0, None) and not failures:
            failures.append("record exited %s" % record.returncode)
        elif not os.path.exists(rec_out) or os.path.getsize(rec_out) == 0:
            failures.append("record wrote no profile")
        else:
            with open(rec_out, encoding="utf-8", errors="replace") as f:
                text = f.read()
            # each program of the tree: gunicorn's workers, the thread
            # churn's workers, the tasks
            for want in ("gunicorn/", "churn.py", "tasks_churn.py"):
                if want not in text:
                    failures.append("record's profile has no frames of %s" % want)
    finally:
        if client:
            client.stop = True
        tmux("kill-session", "-t", SESSION)
        if record and record.poll() is None:
            record.kill()
            record.wait()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(shell.pid, signal.SIGKILL)
        shell.wait()
        shutil.rmtree(scratch, ignore_errors=True)
    for f in failures:
        print("FAIL: " + f, flush=True)
    print("soak: %s" % ("failed" if failures else "passed"), flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
