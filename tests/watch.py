#!/usr/bin/env python3
"""tachyon-top watch: reports of stuck threads, on real servers.

Debian's gunicorn (sync workers) serves requests for 5 s, then one request
hangs on an upstream that never answers: exactly one report, within
--stuck + 2 s of the hang, naming the handler's line and the upstream's
address, and none before; its dump is a dump taken then, its recording
replays. Debian's aiohttp under load: none; a handler
blocking its event loop in time.sleep(2): one loop-blocked report. 1,000
idle pool threads: none; the pool's spinner: one spinning report, its
recording holding the spin. Four threads hanging in turn under --max-size
1K: the newest report alone left; a full tmpfs: said once, nothing left; a
watch killed mid-report: the next one removes its partial report. The
live view marks STUCK the threads watch reports.
A minute of quiet servers (idle threads, gevent, Celery, aiohttp under
load): no report. Bad input: one line, a non-zero exit; the watched process's exit ends the
watch. Emits TAP. Needs root and the provisioned target root."""

import contextlib
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import functional as rig  # noqa: E402
import greenlets  # noqa: E402
import proctree  # noqa: E402
import tasks  # noqa: E402
from functional import Fail, expect  # noqa: E402

STUCK = 3        # s: --stuck of the tests
SLACK = 2        # s: a report comes within --stuck + this


class Watch:
    """tachyon-top watch running in the background, its output collected."""

    def __init__(self, *args):
        self.dir = tempfile.mkdtemp(prefix="tt-watch-")
        self.out = os.path.join(self.dir, "reports")
        self.argv = [rig.BIN, "watch", "-o", self.out] + [str(a) for a in args]
        self.proc = None
        self.lines = []

    def __enter__(self):
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        deadline = time.monotonic() + 20
        while not any(l.startswith("watch: process") for l in self.lines):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise Fail("watch did not start", *self.details())
            time.sleep(0.05)
        return self

    def _read(self):
        for raw in self.proc.stdout:
            self.lines.append(raw.decode("utf-8", "replace").rstrip("\n"))

    def reports(self):
        with contextlib.suppress(FileNotFoundError):
            return sorted(n for n in os.listdir(self.out) if not n.startswith("."))
        return []

    def stop(self, sig=signal.SIGTERM):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            rc = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise Fail("watch did not end within 10 s of signal %d" % sig, *self.details())
        self.reader.join(timeout=5)
        return rc

    def details(self):
        return ["watch: %s" % " ".join(self.argv)] + ["watch said: %s" % l
                                                       for l in self.lines[-15:]]

    def __exit__(self, *exc):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)
        return False


class SilentUpstream:
    """A TCP server on 127.0.0.1 that takes connections and never answers."""

    def __enter__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.conns = []
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def _accept(self):
        with contextlib.suppress(OSError):
            while True:
                self.conns.append(self.sock.accept()[0])

    def __exit__(self, *exc):
        self.sock.close()
        for c in self.conns:
            c.close()
        return False


def replayed(path):
    """A report's recording replayed as collapsed stacks: {stack: samples}."""
    out = path + ".collapsed"
    run = rig.tachyon("replay", path, "-f", "collapsed", "-o", out, timeout=60)
    expect(run.rc == 0, "replay of %s: exit %d" % (path, run.rc),
           run.err.decode("utf-8", "replace"))
    stacks = {}
    with open(out) as f:
        for line in f:
            stack, _, n = line.rstrip("\n").rpartition(" ")
            stacks[stack] = stacks.get(stack, 0) + int(n)
    return stacks


def thread_stacks(doc):
    """{(pid, tid): [(func, file, line), ...]} of a dump's JSON."""
    return {(p["pid"], t["tid"]): [(f["func"], f["file"], f["line"]) for f in t["frames"]]
            for p in doc["processes"] for t in p["threads"]}


def ask(url):
    with contextlib.suppress(OSError):
        urllib.request.urlopen(url, timeout=60).read()


def test_gunicorn_hang(suite):
    """gunicorn's sync workers serve /cpu and /sleep for 5 s (watch
    attached), then one request waits on a silent upstream."""
    if not os.path.exists(rig.in_root("/usr/bin/gunicorn")):
        raise rig.Skip("gunicorn is not installed in the root")
    with proctree.Gunicorn(suite) as g, SilentUpstream() as up, \
            Watch("-p", g.master.pid, "--stuck", STUCK) as w:
        time.sleep(5)
        proctree.killpg(g.client)
        expect(not w.reports(), "reports while the server only served requests: %s"
               % w.reports(), *w.details())
        hung_at = time.monotonic()
        threading.Thread(target=ask, args=("http://127.0.0.1:%d/upstream?%d"
                                           % (g.port, up.port),), daemon=True).start()
        name, summary, _ = one_report(w, hung_at, "stuck", STUCK + SLACK,
                                      "the request hung")
        path = os.path.join(w.out, name)
        line = [n for n, text in enumerate(open(os.path.join(rig.TARGETS_DIR, "wsgi_app.py")), 1)
                if "s.recv(100)" in text][0]
        expect(summary.startswith("STUCK: thread ") and
               "ask_upstream (%s/wsgi_app.py:%d)" % (g.dir, line) in summary and
               "127.0.0.1:%d" % up.port in summary,
               "summary.txt does not name the handler's line %d and the upstream 127.0.0.1:%d"
               % (line, up.port), summary)
        with open(os.path.join(path, "dump.json")) as f:
            doc = json.load(f)
        now = rig.tachyon("dump", "-p", g.master.pid, "--subprocesses", "--tasks", "--json",
                          timeout=60)
        pids = {p["pid"] for p in doc["processes"]}
        expect(g.master.pid in pids and set(g.workers()) <= pids,
               "dump.json has processes %s, not the master %d and workers %s"
               % (sorted(pids), g.master.pid, g.workers()))
        # the tree has not moved since: a dump now shows what the report's shows
        expect(now.rc == 0 and thread_stacks(json.loads(now.out)) == thread_stacks(doc),
               "the report's dump.json differs from a dump taken now",
               *["%s: report %s, now %s" % (k, thread_stacks(doc).get(k),
                                            thread_stacks(json.loads(now.out)).get(k))
                 for k in set(thread_stacks(doc)) ^ set(thread_stacks(json.loads(now.out)))
                 ][:5] if now.rc == 0 else [now.err.decode("utf-8", "replace")])
        # the recording: the last seconds, the hung handler among them
        stacks = replayed(os.path.join(path, "recording.ttrec"))
        hung = sum(n for st, n in stacks.items() if "ask_upstream (" in st)
        expect(hung >= STUCK * 20 * 0.6, "the report's recording holds %d samples in "
               "ask_upstream (want %d s of 20 a second, 60%% at least)" % (hung, STUCK),
               *sorted(stacks, key=stacks.get)[-5:])
        with open(os.path.join(path, "dump.txt")) as f:
            expect("ask_upstream" in f.read(), "dump.txt has no ask_upstream frame")
        expect(not [n for n in os.listdir(w.out) if n.startswith(".")],
               "a partial report left: %s" % os.listdir(w.out))
        rc = w.stop()
        expect(rc == 0 and w.lines[-1] == "watch: stopped by Terminated",
               "SIGTERM: exit %d, last line %r" % (rc, w.lines[-1:]), *w.details())


LOOP_LOAD_S = 5    # s of a healthy loop under load (and a minute in test_quiet_minute)


def test_loop_blocked(suite):
    """Debian's aiohttp under keep-alive load for 20 s: its loop is never
    blocked; then a handler calls time.sleep(2): one loop-blocked report,
    within 0.5 + 2 s, naming that handler."""
    with tasks.Target("python3", "tasks_aiohttp.py") as t, Watch("-p", t.pid) as w:
        threads, done = tasks.keepalive_load(t.info["port"], LOOP_LOAD_S)
        for th in threads:
            th.join(LOOP_LOAD_S + 10)
        expect(sum(done) > 100 and not w.reports(),
               "%d requests served in %d s (want > 100); reports of a healthy loop: %s"
               % (sum(done), LOOP_LOAD_S, w.reports()), *w.details())
        blocked_at = time.monotonic()
        threading.Thread(target=ask, args=("http://127.0.0.1:%d/block" % t.info["port"],),
                         daemon=True).start()
        while not w.reports() and time.monotonic() - blocked_at < 5:
            time.sleep(0.05)
        took = time.monotonic() - blocked_at
        time.sleep(2.5)   # the handler's sleep ends; a second report would come by now
        reports = w.reports()
        expect(len(reports) == 1 and "-loop-blocked-" in reports[0] and took <= 2.5,
               "%d reports (want 1 loop-blocked) %.1f s after /block (want 2.5 s at most): %s"
               % (len(reports), took, reports), *w.details())
        with open(os.path.join(w.out, reports[0], "summary.txt")) as f:
            summary = f.read()
        rig.Tap.emit("# %s requests, then a loop-blocked report after %.1f s:\n# %s"
                     % (sum(done), took, summary.replace("\n", "\n# ")))
        expect(summary.startswith("LOOP BLOCKED: ") and
               "blocked in a call of one callback" in summary.splitlines()[0] and
               "at block_handler (" in summary.splitlines()[0],
               "summary.txt does not name block_handler as what blocks the loop", summary)


def wait_reports(w, since, limit):
    """Wait for a report, at most limit s from since: how long it took."""
    while not w.reports() and time.monotonic() - since < limit:
        time.sleep(0.1)
    return time.monotonic() - since


def one_report(w, since, kind, limit, what):
    """Exactly one report, of kind, within limit s of since (what happened
    then), and none more 2 s after: its name, its summary.txt (emitted) and
    how long it took."""
    took = wait_reports(w, since, limit + 5)
    time.sleep(2)   # a second report would come now
    reports = w.reports()
    expect(len(reports) == 1 and "-%s-" % kind in reports[0] and took <= limit,
           "%d reports (want 1 %s) %.1f s after %s (want %d s at most): %s"
           % (len(reports), kind, took, what, limit, reports), *w.details())
    with open(os.path.join(w.out, reports[0], "summary.txt")) as f:
        summary = f.read()
    rig.Tap.emit("# report %s after %.1f s:\n# %s" % (reports[0], took,
                                                      summary.replace("\n", "\n# ")))
    return reports[0], summary, took


def test_stuck_tasks(suite):
    """Debian's aiohttp, watched (and in the live view's tasks view): 5 s
    of keep-alive load, and a keep-alive connection idle for twice
    --stuck: no report, no mark (the idle one waits for its client:
    nothing is owed on its connection); two /slow requests hang on its
    silent upstream: one report (one point), naming fetch_upstream, the
    other task there and the upstream it awaits; the tasks view marks the
    point STUCK."""
    with tasks.Target("python3", "tasks_aiohttp.py") as t, \
            Watch("-p", t.pid, "--stuck", STUCK) as w, \
            contextlib.closing(tasks.Tmux("-p", t.pid, "--stuck", STUCK)) as tui:
        tui.wait(lambda s: "Functions" in s, "the live view")
        tui.keys("T")
        port = t.info["port"]
        idle = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        idle.request("GET", "/fast")
        idle.getresponse().read()
        threads, done = tasks.keepalive_load(port, 5)
        for th in threads:
            th.join(15)
        time.sleep(2 * STUCK + 1 - 5)
        screen = tui.screen()
        marked = re.findall(r"(?m)^[\u25b8\u25be].*\bSTUCK ", screen)
        expect(sum(done) > 50 and not w.reports() and not marked,
               "%d requests in 5 s (want > 50); reports of a server serving and then "
               "holding an idle keep-alive connection %d s: %s; the tasks view marks it "
               "STUCK: %s" % (sum(done), 2 * STUCK + 1, w.reports(), marked),
               *(w.details() + ["screen: " + l for l in screen.splitlines()[:15]]))
        hung_at = time.monotonic()
        for _ in range(2):
            threading.Thread(target=ask, args=("http://127.0.0.1:%d/slow" % port,),
                             daemon=True).start()
        _, summary, _ = one_report(w, hung_at, "stuck-task", STUCK + SLACK + 1,
                                   "two /slow requests hung")
        line = [n for n, text in enumerate(open(os.path.join(rig.TARGETS_DIR,
                                                             "tasks_aiohttp.py")), 1)
                if "await reader.readline()" in text][0]
        expect(summary.startswith("STUCK: asyncio task ") and
               "    fetch_upstream (%s/tasks_aiohttp.py:%d)" % (t.rdir, line) in summary and
               "1 more asyncio task is stuck at this point" in summary and
               "awaits an answer from 127.0.0.1:" in summary,
               "summary.txt does not name fetch_upstream's line %d, the other task and the "
               "upstream" % line, summary)
        # the live view's tasks view marks the same point
        tui.wait(lambda s: re.search(r"(?m)^[\u25b8\u25be].*\bSTUCK .*fetch_upstream", s),
                 "the tasks view's STUCK mark on the fetch_upstream point")
        idle.close()


def test_stuck_greenlets(suite):
    """Debian's gunicorn -k gevent -w 2, watched from its master: idle, no
    report; two requests hang in fetch_inventory on a silent upstream: one
    report naming it and the upstream."""
    greenlets.STUCK = 0   # the requests are made here, once watched
    with greenlets.GeventTree() as g, Watch("-p", g.proc.pid, "--stuck", STUCK) as w:
        time.sleep(STUCK + 1)
        expect(not w.reports(), "reports of an idle gevent server: %s" % w.reports(),
               *w.details())
        hung_at = time.monotonic()
        g.stick(2)
        _, summary, _ = one_report(w, hung_at, "stuck-greenlet", STUCK + SLACK + 1,
                                   "two requests hung")
        expect(summary.startswith("STUCK: greenlet ") and "    fetch_inventory (" in summary
               and "awaits an answer from 127.0.0.1:%d" % g.upstream.getsockname()[1]
               in summary, "summary.txt does not name fetch_inventory and the upstream",
               summary)


class Celery:
    """Debian's Celery: a prefork worker (-c 2) of tests/targets/celery_app.py
    on kombu's filesystem transport, in the root, given ten tasks and idle
    again once they ran (a watch attached to a pool at work learns where
    its processes wait for work only when it sees them there first)."""

    def __init__(self, suite):
        self.dir = suite.new_dir("celery")
        self.proc = None

    def __enter__(self):
        host = rig.in_root(self.dir)
        os.makedirs(host, exist_ok=True)
        shutil.copy(os.path.join(rig.TARGETS_DIR, "celery_app.py"), host)
        env = dict(rig.TARGET_ENV, TT_CELERY_DIR=self.dir + "/queue")
        self.log = os.path.join(host, "worker.log")
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                [rig.CHROOT, rig.ROOT, "sh", "-c", "cd %s && exec python3 -m celery -A "
                 "celery_app worker --pool=prefork -c 2 --without-heartbeat --without-gossip "
                 "--without-mingle -l info" % self.dir],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env,
                start_new_session=True)
        deadline = time.monotonic() + 30
        while "ready." not in open(self.log, errors="replace").read():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.kill()
                raise Fail("the Celery worker did not start", *self.details())
            time.sleep(0.2)
        subprocess.run([rig.CHROOT, rig.ROOT, "sh", "-c", "cd %s && exec python3 -c 'from "
                        "celery_app import add\nfor i in range(10): add.delay(i, i)'"
                        % self.dir], env=env, timeout=60, check=True)
        # idle again: each pool process back where it waits for work
        while open(self.log, errors="replace").read().count(" succeeded in ") < 10:
            if time.monotonic() > deadline + 30:
                self.kill()
                raise Fail("the Celery worker did not run its ten tasks", *self.details())
            time.sleep(0.2)
        time.sleep(1)
        return self

    def details(self):
        with open(self.log, errors="replace") as f:
            return ["celery: " + l for l in f.read().splitlines()[-10:]]

    def kill(self):
        if self.proc.poll() is None:
            proctree.killpg(self.proc)

    def __exit__(self, *exc):
        self.kill()
        return False


QUIET_S = 60   # s of the quiet minute


def test_quiet_minute(suite):
    """A minute, default thresholds, four watches at once: 1,000 threads
    idle (waiting their turn); Debian's gunicorn -k gevent -w 2 idle;
    Debian's Celery prefork worker idle after ten tasks; Debian's aiohttp
    under keep-alive load all along, beside a keep-alive connection held
    idle: no report."""
    if not os.path.exists(rig.in_root("/usr/lib/python3/dist-packages/celery")):
        raise rig.Skip("Celery is not installed in the root (tests/provision.sh adds it)")
    greenlets.STUCK = 0
    with rig.Target(suite, "python3.15", "hangs.py", args=("1000", "1"),
                    park=rig.PARK_NONE) as pool, greenlets.GeventTree() as gevent, \
            Celery(suite) as celery, tasks.Target("python3", "tasks_aiohttp.py") as aio, \
            Watch("-p", pool.pid) as w1, Watch("-p", gevent.proc.pid) as w2, \
            Watch("-p", celery.proc.pid) as w3, Watch("-p", aio.pid) as w4:
        idle = http.client.HTTPConnection("127.0.0.1", aio.info["port"], timeout=10)
        idle.request("GET", "/fast")
        idle.getresponse().read()
        threads, done = tasks.keepalive_load(aio.info["port"], QUIET_S)
        for th in threads:
            th.join(QUIET_S + 15)
        said = {name: w.reports() + [l for l in w.lines if "watch: thread" in l or
                                     " stuck " in l]
                for name, w in (("pool", w1), ("gevent", w2), ("celery", w3), ("aiohttp", w4))}
        rig.Tap.emit("# %d s: %d requests to aiohttp; reports: %s"
                     % (QUIET_S, sum(done), {k: len(v) for k, v in said.items()}))
        expect(sum(done) > QUIET_S * 10 and not any(said.values()),
               "a quiet minute: %d requests to aiohttp (want > %d); reports %s"
               % (sum(done), QUIET_S * 10, said), *w4.details())
        idle.close()


def test_idle_pool(suite):
    """1,000 idle threads and a spinner: nothing is stuck; the spinner
    spins (on a CPU in spin() for --spin 3 s): one report, naming it."""
    with rig.Target(suite, "python3.15", "pool.py", park=rig.PARK_NONE) as target, \
            Watch("-p", target.pid, "--stuck", 1, "-r", 50, "--spin", 3) as w:
        time.sleep(6)
        reports = w.reports()
        expect(len(reports) == 1 and "-spinning-" in reports[0],
               "reports of an idle pool and a spinner (want the spinner's alone): %s"
               % reports, *w.details())
        with open(os.path.join(w.out, reports[0], "summary.txt")) as f:
            first = f.readline()
        expect(first.startswith("SPINNING: ") and "): spin (" in first,
               "the spinner's report does not name spin(): %s" % first)
        stacks = replayed(os.path.join(w.out, reports[0], "recording.ttrec"))
        spun = sum(n for st, n in stacks.items() if st.rsplit(";", 1)[-1].startswith("spin ("))
        expect(spun >= 3 * 50 * 0.6, "the report's recording holds %d samples of the spinner "
               "in spin() (want 3 s of 50 a second, 60%% at least)" % spun,
               *sorted(stacks, key=stacks.get)[-5:])
        said = [float(m.group(1)) for m in (re.search(r"spun on a CPU in one function "
                                                      r"([\d.]+) s", l) for l in w.lines) if m]
        expect(said and said[0] >= 3, "watch's line says the spinner spun %s s, not >= 3"
               % said, *w.details())
        target.kill()
        rc = w.proc.wait(timeout=10)
        w.reader.join(timeout=5)
        expect(rc == 0 and w.lines[-1] == "watch: process %d exited" % target.pid,
               "the target's exit: watch exited %d, last line %r" % (rc, w.lines[-1:]),
               *w.details())


def partials(w):
    with contextlib.suppress(FileNotFoundError):
        return [n for n in os.listdir(w.out) if n.startswith(".")]
    return []


def test_limits(suite):
    """Four threads hang 1.2 s apart: four reports, --max-size 1K keeps the
    newest alone. Reports into a 16 KiB tmpfs: not written, said once,
    nothing left, watching goes on. A watch killed while writing one: the
    next watch in that directory removes its partial report."""
    with rig.Target(suite, "python3.15", "hangs.py", args=("4", "1.2"),
                    park=rig.PARK_NONE) as target, \
            Watch("-p", target.pid, "--stuck", 1, "--max-size", "1K") as w:
        os.kill(target.pid, signal.SIGUSR1)
        deadline = time.monotonic() + 1 + 4 * 1.2 + SLACK + 3
        while len([l for l in w.lines if " stuck " in l]) < 4 and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(0.5)
        written = [l.rsplit(": ", 1)[-1] for l in w.lines if " stuck " in l]
        removed = [l for l in w.lines if l.startswith("watch: removed ")]
        left = w.reports()
        expect(len(written) == 4 and len(removed) == 3 and
               left == [os.path.basename(written[-1])] and
               all(os.path.basename(p) + ":" in " ".join(removed) for p in written[:3]),
               "4 hangs under --max-size 1K: %d reports written, %d removed, left %s (want "
               "4, 3, the newest)" % (len(written), len(removed), left), *w.details())
    # a full disk
    mnt = tempfile.mkdtemp(prefix="tt-watch-full-")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", mnt]).returncode
    try:
        expect(mounted == 0, "cannot mount a tmpfs on %s" % mnt)
        with rig.Target(suite, "python3.15", "hangs.py", args=("2", "1.2"),
                        park=rig.PARK_NONE) as target, \
                Watch("-p", target.pid, "--stuck", 1, "-o", os.path.join(mnt, "r")) as w:
            os.kill(target.pid, signal.SIGUSR1)
            time.sleep(1 + 2 * 1.2 + SLACK)
            said = [l for l in w.lines if "cannot write a report" in l]
            left = os.listdir(mnt) and os.listdir(os.path.join(mnt, "r"))
            alive = w.proc.poll() is None
            expect(len(said) == 1 and not left and alive and "No space left" in said[0],
                   "two hangs into a full tmpfs: %d lines saying so (want 1, ENOSPC), left "
                   "%s (want nothing), watch %s" % (len(said), left,
                                                    "running" if alive else "ended"),
                   *w.details())
    finally:
        subprocess.run(["umount", mnt])
        os.rmdir(mnt)
    # a killed watch
    with rig.Target(suite, "python3.15", "hangs.py", args=("1", "0.5"),
                    park=rig.PARK_NONE) as target:
        with Watch("-p", target.pid, "--stuck", 1) as w:
            os.kill(target.pid, signal.SIGUSR1)
            deadline = time.monotonic() + 1 + 0.5 + SLACK + 3
            while not partials(w) and time.monotonic() < deadline:
                time.sleep(0.005)
            w.proc.kill()
            w.proc.wait()
            half = partials(w)
            expect(half and not w.reports(), "a watch killed while writing a report left "
                   "%s and %s (want a partial report alone)" % (half, w.reports()),
                   *w.details())
            again = Watch("-p", target.pid, "--stuck", 1)
            shutil.rmtree(again.dir)
            again.dir, again.out = w.dir, w.out
            again.argv[again.argv.index("-o") + 1] = w.out
            with again:
                time.sleep(0.5)
                expect(not partials(again) and any(
                    l == "watch: removed 1 partial report left by a watch that was killed"
                    for l in again.lines), "the next watch left %s" % partials(again),
                    *again.details())


def test_live_marks(suite):
    """hangs.py's three threads hang 1.5 s apart, watched by watch and by
    the live view, both --stuck 2: the live view's threads panel marks
    STUCK the threads watch reported, and only those."""
    with rig.Target(suite, "python3.15", "hangs.py", args=("3", "1.5"),
                    park=rig.PARK_NONE) as target, \
            Watch("-p", target.pid, "--stuck", 2) as w:
        tui = tasks.Tmux("-p", target.pid, "--stuck", 2)
        try:
            tui.wait(lambda s: "Threads" in s and "MainThread" in s, "the threads panel")
            os.kill(target.pid, signal.SIGUSR1)
            deadline = time.monotonic() + 2 + 3 * 1.5 + SLACK + 3
            said = []
            while len(said) < 3 and time.monotonic() < deadline:
                said = [l for l in w.lines if " stuck " in l]
                time.sleep(0.1)
            reported = {int(re.match(r"watch: thread (\d+) ", l).group(1)) for l in said}
            screen = tui.wait(lambda s: len(re.findall(r"STUCK \d", s)) >= len(reported),
                              "%d STUCK marks" % len(reported))
            marked = {int(m.group(1)) for m in
                      re.finditer(r"(?m)^[ >]\s*(\d+)\s.*\bSTUCK \d", screen)}
            want = set(target.info["tids"])
            expect(reported == want and marked == want,
                   "watch reported threads %s, the live view marked %s STUCK; the hung ones "
                   "are %s" % (sorted(reported), sorted(marked), sorted(want)),
                   *(w.details() + ["screen: " + l for l in screen.splitlines()[:12]]))
        finally:
            tui.close()


def test_bad_input(suite):
    """One clear line and a non-zero exit each."""
    gone = subprocess.Popen(["true"])
    gone.wait()
    dead = gone.pid
    cases = [((), "missing -p PID"), (("-p", "x"), "invalid pid"),
             (("-p", "1", "--stuck", "0"), "--stuck takes seconds"),
             (("-p", "1", "--max-reports", "0"), "--max-reports"),
             (("-p", "1", "--last", "-1"), "--last takes seconds"),
             (("-p", "1", "--max-size", "5x"), "--max-size takes a size"),
             (("-p", "1", "--max-size", "100"), "--max-size takes a size"),
             (("-p", "1", "stray"), "unexpected argument"),
             (("-p", "1", "-o", "/proc/no/such/dir"), "cannot write reports in /proc/no/such/dir"),
             (("-p", str(dead)), str(dead))]
    cases = [(("watch",) + args, words) for args, words in cases] + [
        (("--stuck", "0", "-p", "1"), "--stuck takes seconds"),
        (("--loop-blocked", "x", "-p", "1"), "--loop-blocked takes milliseconds"),
        (("--spin", "-3", "-p", "1"), "--spin takes seconds")]
    bad = []
    for args, words in cases:
        run = rig.tachyon(*args, timeout=20)
        err = run.err.decode("utf-8", "replace").strip().splitlines()
        if run.rc == 0 or len(err) != 1 or words not in err[0]:
            bad.append("%s: exit %d, %s" % (" ".join(args), run.rc, err))
    expect(not bad, "bad input", *bad)


TESTS = [
    ("gunicorn (sync workers) serving for 5 s, then a request hanging on a silent upstream: "
     "one report within --stuck + 2 s naming the handler's line and the upstream's address, "
     "none before; its dump is a dump taken then, its recording replays the hang; SIGTERM "
     "ends the watch", test_gunicorn_hang),
    ("Debian's aiohttp under load for %d s: no report; then a handler calling time.sleep(2): "
     "one loop-blocked report within 2.5 s naming it" % LOOP_LOAD_S, test_loop_blocked),
    ("Debian's aiohttp: 5 s of load and an idle keep-alive connection: no report, no mark; "
     "two requests hanging on an upstream: one stuck-task report naming the coroutine's "
     "line, the other task and the upstream; the tasks view marks the point STUCK",
     test_stuck_tasks),
    ("Debian's gunicorn -k gevent -w 2: idle, no report; two requests hanging on an "
     "upstream: one stuck-greenlet report naming it and the upstream", test_stuck_greenlets),
    ("a minute, default thresholds: 1,000 idle threads, an idle gevent server, an idle "
     "Celery prefork worker and aiohttp under load beside an idle keep-alive connection: "
     "no report", test_quiet_minute),
    ("1,000 idle threads and a spinner for 6 s: the spinner's report alone (--spin 3), its "
     "recording holding the spin; the target's exit ends the watch",
     test_idle_pool),
    ("four hangs under --max-size 1K: the newest report alone is kept; a full disk: said "
     "once, nothing left, watching goes on; a watch killed while writing a report: the next "
     "removes what it left", test_limits),
    ("three threads hanging in turn, watched by watch and the live view: the live view "
     "marks STUCK the threads watch reported, and only those", test_live_marks),
    ("bad input: one line and a non-zero exit each", test_bad_input),
]


def main():
    if not os.path.isdir(rig.ROOT):
        return rig.root_missing()
    rig.BIN = os.path.abspath(rig.BIN) if os.sep in rig.BIN else (shutil.which(rig.BIN)
                                                                   or rig.BIN)
    if not (os.path.isfile(rig.BIN) and os.access(rig.BIN, os.X_OK)):
        print("Bail out! binary under test not found: %s (set TT_BIN)" % rig.BIN)
        return 1
    if os.geteuid() != 0 or rig.CHROOT is None:
        print("Bail out! must run as root with chroot(8) available")
        return 1
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    started = time.monotonic()
    tap = rig.Tap(len(TESTS))
    tap.comment("binary: %s; root: %s" % (rig.BIN, rig.ROOT))
    suite = rig.Suite(["python3.15"], rig.random.Random(0))
    try:
        for name, fn in rig.only_selected(tap, TESTS):
            if not suite.has("python3.15"):
                tap.skip(name, suite.missing("python3.15"))
                continue
            tap.run(name, fn, suite)
    finally:
        suite.cleanup()
    tap.comment("%d of %d failed; runtime %.1f s"
                % (tap.failures, tap.planned, time.monotonic() - started))
    return 1 if tap.failures or tap.number != tap.planned else 0


if __name__ == "__main__":
    sys.exit(main())
