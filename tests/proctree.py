#!/usr/bin/env python3
"""Process-tree tests for tachyon-top (TAP), on real programs.

Reuses the target rig of functional.py (TT_ROOT, TT_BIN, TT_BUILDDIR,
TT_INTERPS, TT_SEED). Checks:

  - Debian's gunicorn (the root's python3) with 3 sync workers under a
    client loop, attached to the master: batch mode shows the CPU-heavy
    handler within 2 s; dump --subprocesses --json lists the master and
    every worker with gunicorn's worker frames (and plain dump is
    unchanged); record --subprocesses has stacks from at least two workers
    in both formats; kill -9 of a worker: the respawned pid appears, the
    old one is marked exited; the live TUI in tmux lists the workers,
    restricts the table to one, and shows the handler;
  - per interpreter: multiprocessing pools with fork, spawn and forkserver,
    ProcessPoolExecutor, a grandchild, a non-Python child (skipped) and a
    child running another Python version, all found by dump and batch;
  - children forked while sampling are sampled within 250 ms of starting;
  - forked children that exec (another Python version, or sleep) are
    attached again from scratch, or dropped;
  - a parent forking 4 short-lived Python children every 20 ms, and one
    running /bin/true in a loop: batch and record's memory stays flat
    (RSS at 86 s within 10% of RSS at 65 s, once gone threads' 60 s
    retention is full), every process counted.
"""

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export  # noqa: E402  (go tool pprof)
import functional as rig  # noqa: E402
import kwait  # noqa: E402  (the live view in tmux)
import tui  # noqa: E402
from functional import Fail, expect, show  # noqa: E402

RUN_TIMEOUT = 60
NEW_CHILD_LATENCY = 0.25   # s: a new child is sampled this soon after it starts
VERSIONS = {"python3.13": "3.13", "python3.14": "3.14", "python3.15": "3.15"}


def run_tt(*args, timeout=RUN_TIMEOUT):
    argv = [rig.BIN] + [str(a) for a in args]
    try:
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        raise Fail("tachyon-top %s hung" % " ".join(argv[1:]))
    run = rig.Run(argv, proc.returncode, proc.stdout, proc.stderr)
    crash = run.crash()
    if crash:
        raise Fail("%s crashed: %s" % (run.cmd, crash), *run.details())
    return run


children, free_port = rig.children, rig.free_port


def killpg(proc):
    if proc and proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=10)


def tables(text):
    """Batch output split into tables (each starts with 'tachyon-top ')."""
    return [t for t in re.split(r"(?m)^(?=tachyon-top )", text) if t.strip()]


def process_rows(table):
    """{pid: (ppid, state)} from a batch table's process list."""
    rows = {}
    for m in re.finditer(r"(?m)^\s*(\d+)\s+(\d+)\s+\S+\s+\d+\s+\d+\s+[\d.]+\s+[\d.]+\s+"
                         r"(root|live|exited|checking|error)\b", table):
        rows[int(m.group(1))] = (int(m.group(2)), m.group(3))
    return rows


def functions(table):
    return set(re.findall(r"(?m)^\s*[\d.]+\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+(\S+)", table))


# ----------------------------------------------------------------------
# gunicorn
# ----------------------------------------------------------------------

class Gunicorn:
    """Debian's gunicorn in the root: a master, 3 sync workers, a client loop."""

    NAME = "gunicorn"
    NWORKERS = 3
    CLIENT_PATHS = ("/cpu", "/sleep")

    def __init__(self, suite):
        self.dir = suite.new_dir(self.NAME)
        self.port = free_port()
        self.master = self.client = None

    def server_argv(self):
        return ["gunicorn", "-w", str(self.NWORKERS), "-b", "127.0.0.1:%d" % self.port,
                "--chdir", self.dir, "--control-socket", self.dir + "/ctl.sock",
                "wsgi_app:application"]

    def __enter__(self):
        host = rig.in_root(self.dir)
        os.makedirs(host, exist_ok=True)
        for name in ("wsgi_app.py", "http_client.py"):
            shutil.copy(os.path.join(rig.TARGETS_DIR, name), host)
        log = open(os.path.join(host, "server.log"), "wb")
        self.master = subprocess.Popen(
            [rig.CHROOT, rig.ROOT] + self.server_argv(),
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=rig.TARGET_ENV,
            start_new_session=True)
        log.close()
        try:
            self._wait_up()
            self.client = subprocess.Popen(
                [rig.CHROOT, rig.ROOT, "python3", self.dir + "/http_client.py",
                 "http://127.0.0.1:%d" % self.port, "2"] + list(self.CLIENT_PATHS),
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, env=rig.TARGET_ENV, start_new_session=True)
            time.sleep(0.5)
        except BaseException:
            self.kill()
            raise
        return self

    def _wait_up(self):
        nworkers = self.NWORKERS
        deadline = time.monotonic() + 30
        while True:
            if self.master.poll() is not None:
                raise Fail("server exited with %d" % self.master.returncode, *self.log())
            if len(self.workers()) == nworkers:
                with contextlib.suppress(OSError):
                    urllib.request.urlopen("http://127.0.0.1:%d/" % self.port, timeout=5).read()
                    return
            if time.monotonic() > deadline:
                raise Fail("server not serving %d workers within 30 s" % nworkers, *self.log())
            time.sleep(0.1)

    def workers(self):
        return children(self.master.pid)

    def log(self):
        with contextlib.suppress(OSError):
            with open(os.path.join(rig.in_root(self.dir), "server.log"), "rb") as f:
                return ["%s log: %s" % (self.NAME, show(f.read()[-1500:], 1500))]
        return []

    def kill(self):
        killpg(self.client)
        killpg(self.master)

    def __exit__(self, *exc):
        self.kill()
        return False


def second_batch_table(pid, limit):
    """The second table of `--batch -n 2 --delay 1` on *pid* (at ~2 s, once
    the tree has been found and sampled)."""
    run = run_tt("-p", pid, "-b", "-n", "2", "--delay", "1", "--limit", limit, "-r", "2000")
    run.expect_success()
    out = run.out.decode("utf-8", "replace")
    t = tables(out)
    expect(len(t) >= 2, "fewer than 2 tables", show(out, 3000))
    return t[1]


def test_gunicorn_batch(g):
    """Attached to the master, the second table (at ~2 s) shows the handler."""
    second = second_batch_table(g.master.pid, 60)
    rows = process_rows(second)
    for w in g.workers():
        expect(w in rows and rows[w] == (g.master.pid, "live"),
               "worker %d not listed live under the master" % w, show(second, 3000))
    expect(re.search(r"(?m)^processes [4-9] \(", second), "no 'processes N' line", show(second, 3000))
    expect("crunch_numbers" in functions(second),
           "the CPU-heavy handler is not in the table after 2 s", show(second, 3000))


def test_gunicorn_dump(g):
    run = run_tt("dump", "-p", g.master.pid, "--subprocesses", "--json")
    run.expect_success()
    rig.expect_no_control_bytes(run.out, "dump --subprocesses --json")
    doc = json.loads(run.out)
    procs = {p["pid"]: p for p in doc["processes"]}
    workers = g.workers()
    expect(set(procs) == {g.master.pid} | set(workers),
           "processes %s, expected master %d and workers %s"
           % (sorted(procs), g.master.pid, workers))
    for pid, p in procs.items():
        for key in ("pid", "python", "threads", "ppid", "cmdline"):
            expect(key in p, "process %d lacks %r" % (pid, key), show(run.out, 2000))
        rig.validate_dump({k: v for k, v in p.items() if k not in ("ppid", "cmdline")}, pid)
        files = [f["file"] for t in p["threads"] for f in t["frames"]]
        if pid == g.master.pid:
            expect(any("gunicorn/arbiter.py" in f for f in files), "master without Arbiter frames")
        else:
            expect(p["ppid"] == g.master.pid, "worker %d ppid %s" % (pid, p["ppid"]))
            expect(any("gunicorn/workers/" in f for f in files),
                   "worker %d without gunicorn worker frames" % pid, show(files))
            expect("gunicorn" in p["cmdline"], "worker cmdline %r" % p["cmdline"])
    # The first command of a hung-server session shows the workers, as the
    # live view does; --no-subprocesses reads the master alone.
    plain = json.loads(run_tt("dump", "-p", g.master.pid, "--json").out)
    pids = {p["pid"] for p in plain.get("processes", [])}
    expect(pids == {g.master.pid} | set(g.workers()),
           "plain dump --json does not follow the workers", show(json.dumps(plain)[:300]))
    text = run_tt("dump", "-p", g.master.pid)
    text.expect_success()
    for pid in g.workers():
        expect(b"Process %d" % pid in text.out,
               "plain dump leaves out worker %d" % pid, show(text.out, 1500))
    alone = json.loads(run_tt("dump", "-p", g.master.pid, "--json", "--no-subprocesses").out)
    expect(alone["pid"] == g.master.pid and "processes" not in alone and "ppid" not in alone,
           "dump --no-subprocesses --json is not the master alone", show(json.dumps(alone)[:300]))


def test_gunicorn_record(g):
    # The tree is followed by default; --subprocesses is still accepted.
    for fmt, name, flags in (("collapsed", "tree.txt", []),
                             ("speedscope", "tree.json", ["--subprocesses"]),
                             ("pprof", "tree.pb.gz", ["--subprocesses"]),
                             ("flamegraph", "tree.svg", [])):
        path = os.path.join(rig.in_root(g.dir), name)
        run = run_tt("record", "-p", g.master.pid, *flags, "-d", "2", "-r", "1000",
                     "-f", fmt, "-o", path)
        run.expect_success()
        workers = set(g.workers())
        with open(path, "rb") as f:
            data = f.read()
        if fmt != "pprof":   # gzip: binary by design
            rig.expect_no_control_bytes(data, name)
        if fmt == "collapsed":
            lines = data.decode().splitlines()
            bad = [l for l in lines if not l.startswith("process ")]
            expect(not bad, "lines without a process root frame", show(bad[:3]))
            expect(any("crunch_numbers" in l for l in lines), "no worker's request handler "
                   "(crunch_numbers) in the profile", *lines[:10])
            seen = {int(m.group(1)) for m in (re.match(r"process (\d+) \(", l) for l in lines) if m}
        elif fmt == "pprof":
            # go tool pprof -traces: every sample carries its process's pid
            traces = export.go_pprof("-traces", path)
            blocks = [b for b in traces.split("-----------+")[1:] if b.strip("-\n ")]
            pids = [re.search(r"^\s*pid:\s+(\d+)$", b, re.M) for b in blocks]
            expect(blocks and all(pids), "a pprof trace without a pid label",
                   *next((b for b, m in zip(blocks, pids) if not m), traces).splitlines()[:8])
            seen = {int(m.group(1)) for m in pids}
        elif fmt == "flamegraph":
            # the frames just above "all" are "process PID (command)"
            titles = re.findall(rb"<title>([^<\n]*)\n", data)
            seen = {int(m.group(1)) for m in (re.match(rb"process (\d+) \(", t) for t in titles)
                    if m}
            expect(b"process " + str(g.master.pid).encode() + b" (" in data
                   and b"gunicorn" in data, "no process frame names the master's command")
        else:
            doc = json.loads(data)
            nframes = len(doc["shared"]["frames"])
            seen = set()
            for prof in doc["profiles"]:
                m = re.match(r"process (\d+) \(.*\) thread \d+", prof["name"])
                expect(m, "profile name %r names no process and thread" % prof["name"])
                seen.add(int(m.group(1)))
                expect(all(0 <= i < nframes for s in prof["samples"] for i in s),
                       "speedscope frame index out of range")
        expect(len(seen & workers) >= 2, "%s: stacks from %d workers (of %s), expected >= 2"
               % (fmt, len(seen & workers), sorted(workers)))
        expect(g.master.pid in seen, "%s: no stacks from the master" % fmt)
    # --no-subprocesses: the master alone, without process frames.
    path = os.path.join(rig.in_root(g.dir), "master.txt")
    run = run_tt("record", "-p", g.master.pid, "--no-subprocesses", "-d", "1", "-r", "1000",
                 "-o", path)
    run.expect_success()
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    expect(lines and not any(l.startswith("process ") or "crunch_numbers" in l for l in lines)
           and any("Arbiter" in l for l in lines), "record --no-subprocesses: expected the "
           "master's stacks (Arbiter) alone, no process frames, no handler", *lines[:10])


def test_gunicorn_respawn(g):
    before = g.workers()
    proc = subprocess.Popen([rig.BIN, "-p", str(g.master.pid), "-b", "-d", "5", "--delay", "1",
                             "--limit", "60", "-r", "1000"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        time.sleep(1.5)
        victim = before[0]
        os.kill(victim, signal.SIGKILL)
        out, err = proc.communicate(timeout=RUN_TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    expect(proc.returncode == 0, "batch failed: %d" % proc.returncode, show(err))
    final = tables(out.decode("utf-8", "replace"))[-1]
    rows = process_rows(final)
    new = [p for p, (pp, st) in rows.items() if pp == g.master.pid and p not in before
           and st == "live"]
    expect(rows.get(victim, (0, ""))[1] == "exited", "killed worker %d not marked exited" % victim,
           show(final, 3000))
    expect(new and set(new) <= set(g.workers()), "no respawned worker listed live",
           "workers now: %s" % g.workers(), show(final, 3000))


def test_gunicorn_tui(g):
    sock = "tt-proctree-%d" % os.getpid()
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "TERM": "xterm-256color",
           "LANG": "C.UTF-8", "HOME": os.environ.get("HOME", "/root")}

    def tmux(*args):
        return subprocess.run(["tmux", "-u", "-L", sock] + [str(a) for a in args], env=env,
                              capture_output=True, timeout=20).stdout.decode("utf-8", "replace")

    def screen():
        return tmux("capture-pane", "-p", "-t", "tt")

    def wait_for(pred, what, timeout=8):
        deadline = time.monotonic() + timeout
        while True:
            text = screen()
            if pred(text):
                return text
            if time.monotonic() > deadline:
                raise Fail("TUI: %s within %d s" % (what, timeout), text)
            time.sleep(0.2)

    tmux("new-session", "-d", "-s", "tt", "-x", "200", "-y", "50",
         "%s -p %d -r 2000" % (rig.BIN, g.master.pid))
    try:
        workers = g.workers()
        text = wait_for(lambda s: "Processes" in s and all(str(w) in s for w in workers)
                        and "crunch_numbers" in s, "processes panel with every worker and "
                        "the handler on screen")
        expect(re.search(r"processes 4 live / 0 exited", text), "header lacks process counts", text)
        tmux("send-keys", "-t", "tt", "]")
        tmux("send-keys", "-t", "tt", "]")

        def selected(s):
            m = re.search(r"Showing .*process (\d+)", s)
            return int(m.group(1)) if m else None
        # The first ] selects the master: a screen between the two keys
        # shows it. The second must reach a worker.
        text = wait_for(lambda s: selected(s) in workers,
                        "a worker selected with ] ] (the master first, then a worker)")
        chosen = selected(text)
        # Restricted: the master's functions leave the table after a refresh.
        text = wait_for(lambda s: "Arbiter.wait_for_signals" not in s.split("Functions")[-1],
                        "the table restricted to the worker")
        expect(re.search(r"(?m)^> %d\s+%d" % (chosen, g.master.pid), text),
               "selected row not marked in the panel", text)
        # The kernel watcher follows the tree: the worker's thread, idle or
        # in the sleeping handler, is seen waiting in the kernel.
        wait_for(lambda s: re.search(r"(?m)^..%d\s.*\d+\.\ds (pselect6|select|poll|ppoll|accept4?|"
                                     r"clock_nanosleep|epoll_wait) " % chosen,
                                     s.split("Threads")[-1].split("Functions")[0]),
                 "the worker's thread shown waiting in the kernel")
        # All processes again ([ twice); kill -9 another worker: marked
        # exited, and its thread leaves the threads panel for the exited
        # bucket once the fold delay (10 s) has passed.
        tmux("send-keys", "-t", "tt", "[")
        tmux("send-keys", "-t", "tt", "[")
        wait_for(lambda s: "all threads, by" in s, "all processes again after [ [")
        victim = [w for w in workers if w != chosen][0]
        os.kill(victim, signal.SIGKILL)

        def threads_panel(s):
            return s.split("\n Threads")[-1].split("\n Functions")[0]
        wait_for(lambda s: re.search(r"(?m)^..%d\s.*\sexited\s" % victim, s.split("\n Threads")[0])
                 and not re.search(r"(?m)^..%d\s" % victim, threads_panel(s)),
                 "worker %d marked exited and its thread folded away" % victim, timeout=25)
    finally:
        tmux("kill-server")


# ----------------------------------------------------------------------
# multiprocessing, per interpreter
# ----------------------------------------------------------------------

class Tree(rig.Target):
    def __init__(self, suite, interp, method, other):
        super().__init__(suite, interp, "mp_tree.py", args=(method, other), park=rig.PARK_NONE)


def other_version(interp):
    return "python3.13" if VERSIONS[interp] != "3.13" else "python3.14"


def check_tree_dump(ctx, method):
    other = other_version(ctx.interp)
    with Tree(ctx.suite, ctx.interp, method, "/usr/bin/" + other) as t:
        run = run_tt("dump", "-p", t.pid, "--subprocesses", "--json")
        run.expect_success()
        doc = json.loads(run.out)
        procs = {p["pid"]: p for p in doc["processes"]}
        where = {}
        for pid, p in procs.items():
            for th in p["threads"]:
                for f in th["frames"]:
                    where.setdefault(f["func"], set()).add(pid)
        info = t.info
        detail = ["processes: %s" % {p: (procs[p]["ppid"], procs[p]["python"],
                                         procs[p]["cmdline"][:60]) for p in procs}]
        expect(len(where.get("mp_pool_work", ())) == 2, "%s: pool workers found: %s"
               % (method, where.get("mp_pool_work")), *detail)
        expect(len(where.get("executor_work", ())) == 1, "%s: executor worker missing" % method,
               *detail)
        gc = where.get("grandchild_work", set())

        def ancestors(pid):
            while pid in procs:
                pid = procs[pid]["ppid"]
                yield pid
        # (under forkserver, the child's own fork server sits in between)
        expect(len(gc) == 1 and info["parent"] in ancestors(next(iter(gc))),
               "%s: grandchild missing or not under its parent" % method, *detail)
        ov = where.get("other_version_work", set())
        expect(len(ov) == 1 and procs[next(iter(ov))]["python"].startswith(VERSIONS[other] + "."),
               "%s: child running %s missing" % (method, other), *detail)
        expect(info["sleeper"] not in procs, "the non-Python child is listed", *detail)
        expect(run.err == b"", "stderr not empty", show(run.err))
        if method != "fork":
            return
        run = run_tt("-p", t.pid, "-b", "-n", "2", "--delay", "1", "--limit", "80")
        run.expect_success()
        table = tables(run.out.decode("utf-8", "replace"))[-1]   # the whole session
        funcs = functions(table)
        for f in ("mp_pool_work", "executor_work", "grandchild_work", "other_version_work"):
            expect(f in funcs, "batch: %s not in the table" % f, show(table, 4000))
        rows = process_rows(table)
        expect(info["other"] in rows and info["sleeper"] not in rows,
               "batch: process list wrong", show(table, 4000))


def test_fork(ctx):
    check_tree_dump(ctx, "fork")


def test_spawn(ctx):
    check_tree_dump(ctx, "spawn")


def test_forkserver(ctx):
    check_tree_dump(ctx, "forkserver")


def test_new_child_latency(ctx):
    with Tree(ctx.suite, ctx.interp, "late", "-") as t:
        started = time.monotonic()
        run = run_tt("bench", "-p", t.pid, "--subprocesses", "--json", "-d", "3", "-r", "1000")
        run.expect_success()
        doc = json.loads(run.out)
        first = {p["pid"]: p["first_sample_s"] for p in doc["processes"]}
        with open(rig.in_root(t.info["log"])) as f:
            born = [(int(a), float(b)) for a, b in (l.split() for l in f if l.strip())]
        # children that began after the sampler was surely running
        late = [(pid, ts) for pid, ts in born if started + 0.5 < ts < started + 2.5]
        expect(len(late) >= 3, "only %d children started during the run" % len(late))
        lat = []
        for pid, ts in late:
            expect(pid in first and first[pid] > 0, "child %d never sampled" % pid,
                   show(run.out, 2000))
            lat.append(first[pid] - ts)
        rig.Tap.emit("# %s: new children sampled after %s ms" % (
            ctx.interp, ", ".join("%.0f" % (x * 1000) for x in lat)))
        expect(max(lat) < NEW_CHILD_LATENCY, "a new child was first sampled %.0f ms after it "
               "started (limit %.0f)" % (max(lat) * 1000, NEW_CHILD_LATENCY * 1000))


def test_exec(ctx):
    """Forked children seen as forks, then exec'ing: re-attached from scratch."""
    other = other_version(ctx.interp)
    t = rig.Target(ctx.suite, ctx.interp, "execer.py", args=("/usr/bin/" + other,),
                   park=rig.PARK_NONE)
    with t:
        run = run_tt("-p", t.pid, "-b", "-n", "5", "--delay", "1", "--limit", "60", "-r", "1000")
        run.expect_success()
        final = tables(run.out.decode("utf-8", "replace"))[-1]
        pc, oc = t.info["python_child"], t.info["other_child"]
        funcs = functions(final)
        expect("before_exec" in funcs and "after_exec" in funcs,
               "functions before and after the exec not both seen", show(final, 4000))
        lines = [l.split() for l in final.splitlines()]
        states = [(int(l[0]), l[2], l[7]) for l in lines if len(l) > 8 and l[0].isdigit()
                  and l[1].isdigit()]
        expect((pc, VERSIONS[other], "live") in [(p, v[:4], s) for p, v, s in states]
               and (pc, VERSIONS[ctx.interp], "exited") in [(p, v[:4], s) for p, v, s in states],
               "exec'ed Python child: expected its old entry exited and a %s one live" % other,
               show(final, 4000))
        expect([s for p, v, s in states if p == oc] == ["exited"],
               "child that exec'ed sleep: expected one entry, exited", show(final, 4000))


# ----------------------------------------------------------------------
# uWSGI: workers forked without Python's after-fork hook
# ----------------------------------------------------------------------

class Uwsgi(Gunicorn):
    """Debian's uWSGI with the python3 plugin in the root: a master, 2
    workers, a client loop on /cpu. The workers' thread states keep the
    master's thread id (no after-fork hook)."""

    NAME = "uwsgi"
    NWORKERS = 2
    CLIENT_PATHS = ("/cpu",)

    def server_argv(self):
        return ["uwsgi", "--plugin", "python3", "--http-socket", "127.0.0.1:%d" % self.port,
                "--wsgi-file", self.dir + "/wsgi_app.py", "--master", "--processes",
                str(self.NWORKERS), "--die-on-term"]


def kernel_rows(table):
    """[(tid text, kernel column)] of a batch table's kernel-wait section."""
    part = table.split("KERNEL\n", 1)
    if len(part) < 2:
        return []
    rows = []
    for line in part[1].splitlines():
        m = re.match(r"^\s*(\d+(?: \(ns \d+\))?)\s+\S+\s+(.*)$", line)
        if not m:
            break
        rows.append((m.group(1), m.group(2)))
    return rows


def test_uwsgi_batch(u):
    """Each worker's thread is its own task: its own pid as TID, never the
    master's kernel state, and on a CPU while it serves /cpu."""
    second = second_batch_table(u.master.pid, 40)
    workers = u.workers()
    tids = [tid for tid, _ in kernel_rows(second)]
    expect(sorted(tids) == sorted(str(p) for p in [u.master.pid] + workers),
           "kernel table TIDs %s, expected the master %d and each worker's own pid %s"
           % (tids, u.master.pid, workers), show(second, 3000))
    rows = {m.group(1): float(m.group(2)) for m in re.finditer(
        r"(?m)^\s*(\d+)\s+\d+\s+\S+\s+\d+\s+\d+\s+[\d.]+\s+([\d.]+)\s+live\b", second)}
    busy = [w for w in workers if rows.get(str(w), 0) > 5]
    expect(busy, "no worker on a CPU while serving /cpu (CPU%% by pid: %s)" % rows,
           show(second, 3000))
    expect("crunch_numbers" in functions(second), "the handler is not in the table",
           show(second, 3000))


def test_uwsgi_dump(u):
    run = run_tt("dump", "-p", u.master.pid, "--subprocesses", "--json")
    run.expect_success()
    doc = json.loads(run.out)
    procs = {p["pid"]: p for p in doc["processes"]}
    master_wait = None
    for pid, p in sorted(procs.items()):
        expect(len(p["threads"]) == 1, "process %d has %d threads" % (pid, len(p["threads"])))
        th = p["threads"][0]
        expect(th["tid"] == pid and th["tid_known"],
               "process %d's thread is tid %s (known: %s), expected its own pid"
               % (pid, th["tid"], th["tid_known"]), show(p, 1500))
        if pid == u.master.pid:
            master_wait = th["blocked"]
        else:
            # the kernel's name, the worker's own (Python's, if threading
            # is imported, is the master's MainThread forked over)
            expect(th["os_name"].startswith("uWSGIWorker"),
                   "worker %d's thread is named %r by the kernel, not by its own task"
                   % (pid, th["os_name"]))
    expect(master_wait and master_wait["syscall"].startswith("epoll"),
           "the master is not in its epoll loop: %s" % show(master_wait))


class ShellRoot:
    """A root that is not Python (issue 25): `sh -c 'PY kid first & PY kid
    second & wait'` in the root, or with the shell as PID 1 of its own PID
    namespace (a container whose PID 1 is a shell). .shell is the shell's
    host pid, .kids its two Python children's."""

    def __init__(self, suite, interp, pidns):
        self.suite, self.interp, self.pidns = suite, interp, pidns
        self.dir = suite.new_dir("shell-root")
        self.proc, self.shell, self.kids = None, None, []

    def __enter__(self):
        host = rig.in_root(self.dir)
        os.makedirs(host, exist_ok=True)
        shutil.copy(os.path.join(rig.TARGETS_DIR, "shell_kid.py"), host)
        kid = "%s %s/shell_kid.py" % (self.interp, self.dir)
        argv = [rig.CHROOT, rig.ROOT, "sh", "-c", "%s first & %s second & wait" % (kid, kid)]
        if self.pidns:
            unshare = shutil.which("unshare") or shutil.which("unshare", path="/usr/sbin:/sbin")
            argv = [unshare, "--pid", "--fork", "--mount-proc=" + rig.in_root("/proc")] + argv
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, env=rig.TARGET_ENV,
                                     start_new_session=True)
        try:
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                self.shell = children(self.proc.pid)[0] if self.pidns and \
                    children(self.proc.pid) else self.proc.pid
                self.kids = children(self.shell) if self.shell else []
                if len(self.kids) == 2:
                    time.sleep(0.3)   # the interpreters up and spinning
                    return self
                time.sleep(0.05)
            raise Fail("the shell did not start its two Python children within 20 s")
        except BaseException:
            killpg(self.proc)
            raise

    def __exit__(self, *exc):
        killpg(self.proc)
        return False


def check_shell_root(ctx, pidns):
    """Attached by the shell's pid: batch, dump (text, JSON) and record show
    both children's stacks, the shell listed as a root that is not Python;
    --no-subprocesses refuses it in one line."""
    with ShellRoot(ctx.suite, ctx.interp, pidns) as sr:
        where = "shell as PID 1 of a PID namespace" if pidns else "shell"
        run = run_tt("-p", sr.shell, "-b", "-n", "1", "--delay", "1", "--limit", "40")
        run.expect_success()
        out = run.out.decode("utf-8", "replace")
        table = tables(out)[-1]
        funcs = functions(table)
        for f in ("spin_first", "spin_second"):
            expect(f in funcs, "%s: batch: %s not in the table" % (where, f), show(out, 4000))
        rows = process_rows(table)
        expect(sr.shell in rows and all(k in rows for k in sr.kids),
               "%s: batch: the shell %d and its children %s not all listed" %
               (where, sr.shell, sr.kids), show(out, 4000))
        expect(re.search(r"(?m)^\s*%d\s+\d+\s+-\s+0\s+0\s.*\sroot\s.*\(not Python\)$"
                         % sr.shell, table),
               "%s: batch: the shell's row does not say it is a root that is not Python" % where,
               show(table, 4000))
        run = run_tt("dump", "-p", sr.shell)
        run.expect_success()
        text = run.out.decode("utf-8", "replace")
        # (a snapshot: a child may be between two rounds, in main's sleep)
        sections = re.split(r"(?m)^(?=Process \d+ )", text)
        for k in sr.kids:
            mine = [x for x in sections if re.match(r"Process %d .*\(parent %d\)" % (k, sr.shell), x)]
            expect(len(mine) == 1 and re.search(r"(?m)^    main \(.*shell_kid\.py:\d+\)$", mine[0]),
                   "%s: dump: no section with a stack for child %d" % (where, k), show(text, 3000))
        run = run_tt("dump", "-p", sr.shell, "--json")
        run.expect_success()
        doc = json.loads(run.out)
        pids = {p["pid"]: {f["func"] for t in p["threads"] for f in t["frames"]}
                for p in doc["processes"]}
        expect(set(pids) == set(sr.kids) and all("main" in f for f in pids.values()),
               "%s: dump --json: processes %s, children %s" % (where, pids, sr.kids),
               show(run.out, 3000))
        path = os.path.join(rig.in_root(sr.dir), "shell.txt")
        run = run_tt("record", "-p", sr.shell, "-d", "1", "-r", "500", "-f", "collapsed",
                     "-o", path)
        run.expect_success()
        with open(path) as f:
            lines = f.read().splitlines()
        for k in sr.kids:
            expect(any(l.startswith("process %d (" % k) for l in lines),
                   "%s: record: no stacks of child %d" % (where, k), *lines[:10])
        expect(any("spin_first" in l for l in lines) and any("spin_second" in l for l in lines),
               "%s: record: a child's function is missing" % where, *lines[:10])
        run = run_tt("dump", "-p", sr.shell, "--no-subprocesses")
        run.expect_one_line_error(contains="not a Python process")
        if not pidns:
            return
        # The live view: the shell's row says what it is, both children
        # are listed, and their functions are in the table.
        with kwait.live_view("shellroot", ctx.interp, sr.shell) as pane:
            def both(screen):
                procs = screen.text.split(" Threads")[0]
                return (re.search(r"(?m)^. %d .*\broot\b.*not Python" % sr.shell, procs)
                        and all(re.search(r"(?m)^. %d\s+%d\s" % (k, sr.shell), procs)
                                for k in sr.kids)
                        and "spin_first" in screen.text and "spin_second" in screen.text)
            pane.wait(both, "the shell as a root that is not Python, both children listed, "
                      "both functions in the table", timeout=tui.SCREEN_TIMEOUT)


def test_shell_root(ctx):
    check_shell_root(ctx, False)


def test_shell_pid1(ctx):
    check_shell_root(ctx, True)


def test_not_python_alone(suite):
    """A root that is not Python and has no Python descendant: one line
    after the short wait, from every verb; sooner when it ends meanwhile."""
    proc = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        out = os.path.join(rig.in_root(suite.root_scratch), "none.txt")
        for verb in (["dump"], ["-b", "-d", "1"], ["record", "-d", "1", "-o", out]):
            started = time.monotonic()
            run = run_tt(*(verb + ["-p", proc.pid]))
            took = time.monotonic() - started
            run.expect_one_line_error(contains="no Python process appeared under it within 3 s")
            expect(2.5 < took < 10, "%s: refused after %.1f s, not after the 3 s wait"
                   % (" ".join(verb), took))
            run = run_tt(*(verb + ["-p", proc.pid, "--no-subprocesses"]))
            run.expect_one_line_error(contains="is not a Python process (")
    finally:
        killpg(proc)
    # (Attached while it runs: a process already ended keeps its own error.)
    proc = subprocess.Popen(["sleep", "1.5"], start_new_session=True)
    try:
        started = time.monotonic()
        run = run_tt("-b", "-d", "1", "-p", proc.pid)
        run.expect_one_line_error(contains="ended before a Python process appeared under it")
        expect(time.monotonic() - started < 2.9, "the wait went on after the process ended")
    finally:
        killpg(proc)


PER_INTERPRETER = [
    ("multiprocessing fork pool, executor, grandchild, non-Python and other-version children",
     test_fork),
    ("multiprocessing spawn tree found by dump --subprocesses", test_spawn),
    ("multiprocessing forkserver tree found by dump --subprocesses", test_forkserver),
    ("children forked while sampling: sampled within 250 ms", test_new_child_latency),
    ("forked children that exec another Python or sleep: re-attached or dropped", test_exec),
    ("a shell's two Python children, attached by the shell's pid: batch, dump, dump --json, "
     "record; --no-subprocesses refuses the shell", test_shell_root),
    ("the same with the shell as PID 1 of its own PID namespace, and the live view in tmux",
     test_shell_pid1),
]

GUNICORN = [
    ("gunicorn: batch on the master shows the workers' handler within 2 s", test_gunicorn_batch),
    ("gunicorn: dump (and --subprocesses --json) lists master and workers; --no-subprocesses the master alone",
     test_gunicorn_dump),
    ("gunicorn: record follows the workers by default: stacks from >= 2 workers "
     "(collapsed, speedscope, pprof pid labels, SVG process frames); --no-subprocesses: "
     "the master alone",
     test_gunicorn_record),
    ("gunicorn: kill -9 a worker: respawned pid appears, old one marked exited",
     test_gunicorn_respawn),
    ("gunicorn: TUI lists the workers, ] restricts the table to one, handler on screen, the "
     "worker's kernel wait; a killed worker exited, its thread folded",
     test_gunicorn_tui),
]


def test_gunicorn_pidns(suite):
    """Debian's gunicorn as PID 1 of its own PID namespace (a container), 2
    workers: attached to the master by its host pid, the batch kernel table
    has every thread of the tree under its host tid with its namespace's id
    beside it, a name, and a kernel wait; the processes table says each
    one's pid in the namespace."""
    d = suite.new_dir("gunicorn-pidns")
    host = rig.in_root(d)
    os.makedirs(host, exist_ok=True)
    shutil.copy(os.path.join(rig.TARGETS_DIR, "wsgi_app.py"), host)
    port = free_port()
    unshare = shutil.which("unshare") or shutil.which("unshare", path="/usr/sbin:/sbin")
    proc = subprocess.Popen(
        [unshare, "--pid", "--fork", "--mount-proc=" + rig.in_root("/proc"), rig.CHROOT, rig.ROOT,
         "gunicorn", "-w", "2", "-b", "127.0.0.1:%d" % port, "--chdir", d,
         "--control-socket", d + "/ctl.sock", "wsgi_app:application"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env=rig.TARGET_ENV, start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        master, workers = None, []
        while time.monotonic() < deadline:
            kids = children(proc.pid)
            master = kids[0] if kids else None
            workers = [w for w in children(master)] if master else []
            if len(workers) == 2:
                with contextlib.suppress(OSError):
                    urllib.request.urlopen("http://127.0.0.1:%d/" % port, timeout=5).read()
                    break
            time.sleep(0.1)
        expect(master and len(workers) == 2, "gunicorn in a PID namespace did not come up")
        run = run_tt("-p", master, "-b", "-n", "1", "--delay", "1.5", "--limit", "40")
        run.expect_success()
        out = run.out.decode("utf-8", "replace")
        rows = kernel_rows(tables(out)[0])
        tids = {}
        for tid, kernel in rows:
            m = re.fullmatch(r"(\d+) \(ns (\d+)\)", tid)
            expect(m, "kernel table row %r has no namespace id beside the host tid" % tid,
                   show(out, 3000))
            tids[int(m.group(1))] = (int(m.group(2)), kernel)
        for pid in [master] + workers:
            expect(pid in tids, "no kernel row for process %d's main thread" % pid,
                   show(out, 3000))
            expect(tids[pid][1].startswith("blocked "), "process %d: kernel %r" %
                   (pid, tids[pid][1]), show(out, 3000))
        expect(tids[master][0] == 1, "the master is not pid 1 in its namespace: %s"
               % (tids[master],))
        expect(re.search(r"(?m)^\s*%d\s+.*\[ns pid 1\] " % master, out),
               "the processes table does not say the master is pid 1 in its namespace",
               show(out, 3000))
    finally:
        killpg(proc)


UWSGI = [
    ("uWSGI (workers forked without the after-fork hook): batch shows each worker's own "
     "tid, on a CPU serving /cpu, never the master's wait", test_uwsgi_batch),
    ("uWSGI: dump --subprocesses --json: each worker's thread is its own task", test_uwsgi_dump),
]


# A gone thread keeps its slot (and the views their rows for it) for 60 s
# (THREADSLOTS_GONE_NS) unless 4,096 others went since: under this churn
# (a few dozen processes a second seen) memory grows for the first 60 s by
# design, in steps whose times depend on the machine's speed (one run grew
# 10.9% from 15 s to 38 s, others 3-8%), and is flat after. So the reference
# is taken once that retention is full.
CHURN_SECONDS = 88
CHURN_EARLY = 65           # s: RSS then is the reference
CHURN_GROWTH = 0.10        # the most RSS may grow after it


def test_churn_memory(suite):
    interp = "python3.15" if "python3.15" in suite.interps else suite.interps[0]
    scratch = suite.new_dir("churn-out")
    host = rig.in_root(scratch)
    os.makedirs(host, exist_ok=True)
    with rig.Target(suite, interp, "fork_churn.py", args=("fork",), park=rig.PARK_NONE) as forks, \
            rig.Target(suite, interp, "fork_churn.py", args=("run",), park=rig.PARK_NONE) as runs:
        collapsed = os.path.join(host, "forks.collapsed")
        d = str(CHURN_SECONDS)
        argvs = {
            "batch on the forking parent": [rig.BIN, "-p", str(forks.pid), "--batch", "-d", d,
                                            "--delay", "5"],
            "record on the forking parent": [rig.BIN, "record", "-p", str(forks.pid), "-d", d,
                                             "-o", collapsed],
            "batch on the /bin/true loop": [rig.BIN, "-p", str(runs.pid), "--batch", "-d", d,
                                            "--delay", "5"],
        }
        procs, outs = {}, {}
        for name, argv in argvs.items():
            outs[name] = open(os.path.join(host, "%d.out" % len(outs)), "w+b")
            procs[name] = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=outs[name],
                                           stderr=subprocess.STDOUT)
        rss = {name: {} for name in procs}
        started = time.monotonic()
        try:
            for at in (CHURN_EARLY, (CHURN_EARLY + CHURN_SECONDS) // 2, CHURN_SECONDS - 2):
                time.sleep(max(0, started + at - time.monotonic()))
                for name, p in procs.items():
                    if p.poll() is not None:
                        outs[name].seek(0)
                        raise Fail("%s exited early (status %s)" % (name, p.returncode),
                                   show(outs[name].read()[-2000:]))
                    rss[name][at] = rig.vm_rss_kb(p.pid)
            for name, p in procs.items():
                try:
                    p.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    p.kill()
                    raise Fail("%s did not stop after -d %s" % (name, d))
        finally:
            for p in procs.values():
                if p.poll() is None:
                    p.kill()
                    p.wait()
        texts = {}
        for name, f in outs.items():
            f.seek(0)
            texts[name] = f.read().decode("utf-8", "replace")
            f.close()
        figures = "; ".join("%s: %s" % (name, ", ".join("%d s %d KB" % kv for kv in r.items()))
                            for name, r in rss.items())
        print("# RSS: " + figures, flush=True)
        for name, p in procs.items():
            expect(p.returncode == 0, "%s: exit status %s" % (name, p.returncode),
                   show(texts[name][-2000:]))
        for name, r in rss.items():
            early, last = r[CHURN_EARLY], r[CHURN_SECONDS - 2]
            expect(last <= early * (1 + CHURN_GROWTH),
                   "%s: RSS grew %.1f%% after %d s (more than %d%%)"
                   % (name, 100.0 * (last - early) / early, CHURN_EARLY, 100 * CHURN_GROWTH),
                   figures)
        # Every process counted: the forking parent's children were many
        # more than a table holds, and the last count says so.
        text = texts["batch on the forking parent"]
        counts = re.findall(r"^processes (\d+) \((\d+) live, (\d+) exited\)", text, re.M)
        expect(counts, "batch: no process count", show(text[-2000:]))
        total, live, ended = (int(x) for x in counts[-1])
        expect(total == live + ended and total >= 300,
               "batch: %d processes counted (%d live, %d exited), expected hundreds"
               % (total, live, ended), show(text[-2000:]))
        expect(re.search(r"^\(\d+ exited processes folded", text, re.M),
               "batch: no line saying exited processes were folded", show(text[-3000:]))
        with open(collapsed, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
        expect(any(l.startswith("exited processes;") for l in lines) and
               any("child_work" in l for l in lines),
               "record: no 'exited processes' stacks with the children's child_work",
               show("\n".join(lines[:20])))
        # (the /bin/true loop's children are Python between fork and exec:
        # caught there, they are counted, then dropped; only memory matters)


def main():
    if not os.path.isdir(rig.ROOT):
        return rig.root_missing()
    if os.sep in rig.BIN:
        rig.BIN = os.path.abspath(rig.BIN)
    if not (os.path.isfile(rig.BIN) and os.access(rig.BIN, os.X_OK)):
        print("Bail out! binary under test not found: %s (set TT_BIN)" % rig.BIN)
        return 1
    if os.geteuid() != 0 or rig.CHROOT is None:
        print("Bail out! must run as root with chroot(8) available")
        return 1
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    # A tree of spawned interpreters takes longer to be ready than one target.
    rig.READY_TIMEOUT = max(rig.READY_TIMEOUT, 60)
    interps = [i for i in rig.suite_interps(layout_free=True)
               if i in VERSIONS]
    seed = int(os.environ.get("TT_SEED") or rig.random.randrange(10**6))
    started = time.monotonic()
    tap = rig.Tap(len(GUNICORN) + 3 + len(UWSGI) + len(interps) * len(PER_INTERPRETER))
    tap.comment("binary: %s; root: %s; seed: %d" % (rig.BIN, rig.ROOT, seed))
    suite = rig.Suite(interps, rig.random.Random(seed))
    try:
        if not os.path.exists(rig.in_root("/usr/bin/gunicorn")):
            for name, _ in GUNICORN:
                tap.skip(name, "gunicorn is not installed in the root")
        else:
            try:
                with Gunicorn(suite) as g:
                    for name, fn in GUNICORN:
                        tap.run(name, fn, g)
            except Fail as failure:
                for name, _ in GUNICORN[tap.number:]:
                    tap.not_ok(name, failure.lines)
        if not os.path.exists(rig.in_root("/usr/bin/gunicorn")):
            tap.skip("gunicorn in a PID namespace of its own", "gunicorn is not installed")
        else:
            tap.run("gunicorn as PID 1 of its own PID namespace: every thread of the tree "
                    "named, host tid with the namespace's id, its kernel wait", test_gunicorn_pidns,
                    suite)
        tap.run("a root that is not Python with no Python descendant: one line after a 3 s "
                "wait, from dump, batch and record; at once with --no-subprocesses",
                test_not_python_alone, suite)
        churn = ("fork churn (4 Python children every 20 ms) and a /bin/true loop, %d s: batch "
                 "and record's RSS within %d%% of RSS at %d s, every process counted, exited "
                 "ones folded" % (CHURN_SECONDS, 100 * CHURN_GROWTH, CHURN_EARLY))
        if rig.sanitized(rig.BIN):
            tap.skip(churn, "AddressSanitizer keeps freed memory in its quarantine: RSS says "
                     "nothing here (test_procset runs the reuse under the sanitizers)")
        else:
            tap.run(churn, test_churn_memory, suite)
        if not os.path.exists(rig.in_root("/usr/bin/uwsgi-core")):
            for name, _ in UWSGI:
                tap.skip(name, "uwsgi is not installed in the root (tests/provision.sh)")
        else:
            done = tap.number
            try:
                with Uwsgi(suite) as u:
                    for name, fn in UWSGI:
                        tap.run(name, fn, u)
            except Fail as failure:
                for name, _ in UWSGI[tap.number - done:]:
                    tap.not_ok(name, failure.lines)
        for interp in interps:
            ctx = rig.Ctx(suite, interp, None)
            for name, fn in PER_INTERPRETER:
                tap.run("%s: %s" % (interp, name), fn, ctx)
    finally:
        suite.cleanup()
    tap.comment("%d of %d failed; runtime %.1f s"
                % (tap.failures, tap.planned, time.monotonic() - started))
    return 1 if tap.failures or tap.number != tap.planned else 0


if __name__ == "__main__":
    sys.exit(main())
