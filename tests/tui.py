#!/usr/bin/env python3
"""Tests of tachyon-top's live screen (TAP), driven through tmux.

Every interpreter in TT_INTERPS gets a private tmux server (its own socket)
with live screens on real targets, and a --batch run in the background:

  - tui_split.py (75% / 25% of the time in spend_75 / spend_25): the
    key-driven checks, in the order they run on one session: the profile
    (w), sorting, the filter, help, pause, export, resize, the engine panel
    and the detail view, and q; the --batch run samples the same target;
  - hopper.py (a main thread and a thread named "second"): Tab, BTab, Right;
  - exiting.py started by tachyon-top itself (-- COMMAND), started once the
    75/25 checks are done and ending on its own: the screen survives it and
    says so, q reports it on stderr.

Once per run, on one tui_split.py target: the themes (default, light, mono,
high-contrast, --no-color, NO_COLOR, a theme file with mistakes, a missing
theme) and the table after the terminal shrinks and grows again.

tachyon-top runs in each pane under a small shell wrapper that keeps its
stderr in a file and, after it exits, prints `TT-EXIT=<status>` and saves
`stty -a`, so the exit status and the terminal's state after the program
are visible to the test. Panes are read with capture-pane (-e for colours)
and polled until what is expected appears, or a timeout.

Reuses the target rig of functional.py (same environment: TT_ROOT, TT_BIN,
TT_BUILDDIR, TT_INTERPS, TT_KEEP, CI; TT_SRCDIR for the shipped themes).
Needs root, chroot(8) and tmux(1).
"""

import contextlib
import json
import os
import pstats
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import functional as rig  # noqa: E402
import manpage  # noqa: E402  (the help tables' reader)
import sampler  # noqa: E402  (collapsed-file parser)
from functional import Fail, expect, show  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
THEMES_DIR = os.path.join(os.environ.get("TT_SRCDIR") or os.path.join(HERE, ".."), "themes")

COLS, ROWS = 140, 40
DELAY = "0.5"               # --delay of the live screens: refreshes every 0.5 s
SCREEN_TIMEOUT = 15         # s: for a screen to come up (a debug interpreter starts slowly)
KEY_TIMEOUT = 5             # s: for a key's effect to show
EXIT_TIMEOUT = 10           # s: for tachyon-top to exit after q
PAUSE_GAP = 2.5             # s: between the two looks at a paused screen
SESSION_MIN = 2.0           # s: of samples before judging the 75/25 split on screen
BATCH_TIMEOUT = 30          # s: for `--batch -d 3` to finish
EXITING_DELAY = 1.5         # s: exiting.py's life after its ready file
SHIPPED_THEMES = ("default", "light", "mono", "high-contrast")
SPLIT = "tui_split.py"      # split.py's 75/25 split, with jitter (see the script)
HOME, END = b"\x1bOH", b"\x1bOF"   # as xterm, named by TERM, sends them
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

# The figures of one row of the function table: OWN% TOTAL% [OWN TOTAL
# [OWN# TOTAL#]] (the optional columns come with width: >= 80, >= 110);
# FUNCTION and FILE:LINE are cut at the columns their headings start at.
FIGURES_RE = re.compile(r"\s*(\d+\.\d)\s+(\d+\.\d)(?:\s+\S+\s+\S+(?:\s+(\S+)\s+(\S+))?)?\s*")
SHOWING_RE = re.compile(r" Showing (\S+) mode, ([^,]+), (all threads|thread (\d+) (.*?)), by ")
EXPORT_RE = re.compile(r"wrote (/\S+)\.\{collapsed,speedscope\.json,svg,pb\.gz,prof,html\} "
                       r"\((\d+) stacks, (\d+) samples\)")
SGR_RE = re.compile(r"\x1b\[([0-9;:]*)m")


# ----------------------------------------------------------------------
# Screens
# ----------------------------------------------------------------------

class Row:
    def __init__(self, m, func, where):
        self.own, self.total = float(m.group(1)), float(m.group(2))
        self.own_n, self.total_n = m.group(3), m.group(4)   # counts: "0", "17", "8.4k"
        self.func, self.where = func, where

    def __repr__(self):
        return "%s %.1f/%.1f" % (self.func, self.own, self.total)


class Screen:
    """One capture of a pane, as text (and the escape sequences, if asked)."""

    def __init__(self, text):
        self.text = text
        self.lines = text.split("\n")
        if self.lines and self.lines[-1] == "":
            self.lines.pop()

    @property
    def status(self):
        return self.lines[-1] if self.lines else ""

    def line_starting(self, prefix):
        return next((line for line in self.lines if line.startswith(prefix)), None)

    @property
    def title(self):
        """The function table's title line, or None."""
        return self.line_starting(" Functions  ")

    @property
    def showing(self):
        """The header's "Showing ..." match, or None."""
        for line in self.lines[:4]:
            m = SHOWING_RE.match(line)
            if m:
                return m
        return None

    @property
    def thread_label(self):
        m = self.showing
        return m.group(3) if m else None

    def _table(self):
        """[(raw line, Row)] of the function table."""
        for i, line in enumerate(self.lines):
            if "OWN%" in line and "FUNCTION" in line and "FILE:LINE" in line:
                fn, fl = line.index("FUNCTION"), line.index("FILE:LINE")
                out = []
                for row in self.lines[i + 1:-1]:
                    m = FIGURES_RE.fullmatch(row[:fn])
                    if not m or not row[fn:fl].strip():
                        break
                    out.append((row, Row(m, row[fn:fl].strip(), row[fl:].strip())))
                return out
        return []

    def table_lines(self):
        """The raw lines of the function table's rows."""
        return [line for line, _ in self._table()]

    @property
    def rows(self):
        return [row for _, row in self._table()]

    @property
    def funcs(self):
        return [r.func for r in self.rows]

    def row(self, func):
        return next((r for r in self.rows if r.func == func), None)

    def dump(self, limit=ROWS + 2):
        lines = [line.rstrip() for line in self.lines]
        while lines and not lines[-1]:
            lines.pop()
        return ["screen: |" + line for line in lines[:limit]]


def sgr_params(escaped):
    """Every SGR parameter list in a capture-pane -e text."""
    return [m.group(1) for m in SGR_RE.finditer(escaped)]


def colour_sgrs(escaped):
    """SGR sequences that set a colour (39/49, the default colours, do not)."""
    found = []
    for params in sgr_params(escaped):
        for p in re.split(r"[;:]", params):
            if p.isdigit() and (30 <= int(p) <= 38 or 40 <= int(p) <= 48
                                or 90 <= int(p) <= 97 or 100 <= int(p) <= 107):
                found.append("ESC[%sm" % params)
                break
    return found


def attribute_sgrs(escaped):
    """SGR sequences that set bold, dim, italic, underline or reverse."""
    return ["ESC[%sm" % p for p in sgr_params(escaped)
            if set(re.split(r"[;:]", p)) & {"1", "2", "3", "4", "7"}]


# ----------------------------------------------------------------------
# tmux
# ----------------------------------------------------------------------

class Tmux:
    """A private tmux server; leaving the context kills it and what ran in it."""

    def __init__(self, label):
        self.socket = "tt-tui-%d-%s" % (os.getpid(), label)
        self.env = {"PATH": PATH, "HOME": os.environ.get("HOME", "/root"),
                    "LANG": "C.UTF-8", "TERM": "xterm-256color"}
        if os.environ.get("TMUX_TMPDIR"):
            self.env["TMUX_TMPDIR"] = os.environ["TMUX_TMPDIR"]
        self.panes = []
        self.started = False
        self.socket_path = None

    def run(self, *args, check=True):
        argv = ["tmux", "-u", "-L", self.socket] + [str(a) for a in args]
        proc = subprocess.run(argv, capture_output=True, env=self.env, timeout=20,
                              stdin=subprocess.DEVNULL)
        if check and proc.returncode != 0:
            raise Fail("tmux %s failed: %s" % (" ".join(argv[4:6]),
                                                proc.stderr.decode("utf-8", "replace").strip()))
        return proc.stdout.decode("utf-8", "replace")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.kill()
        return False

    def kill(self):
        """Kill the server; then any tachyon-top that survived its SIGHUP."""
        if not self.started:
            return
        pids = [p.tt_pid for p in self.panes if p.tt_pid]
        self.run("kill-server", check=False)
        self.started = False
        if self.socket_path:
            with contextlib.suppress(OSError):
                os.unlink(self.socket_path)
        deadline = time.monotonic() + 3
        for pid in pids:
            while pid_alive(pid, "tachyon-top") and time.monotonic() < deadline:
                time.sleep(0.02)
            if pid_alive(pid, "tachyon-top"):
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)


def pid_alive(pid, comm):
    """Is *pid* a live (not zombie) process named *comm*?"""
    try:
        with open("/proc/%d/stat" % pid) as f:
            stat = f.read()
    except OSError:
        return False
    name = stat[stat.index("(") + 1:stat.rindex(")")]
    state = stat[stat.rindex(")") + 2:].split()[0]
    return name == comm and state not in ("Z", "X")


class Pane:
    """tachyon-top ARGS running in a tmux session of its own, under a wrapper
    that records its exit status, stderr and the terminal state after it."""

    def __init__(self, tmux, name, args, workdir, env=None, size=(COLS, ROWS), nice=0):
        self.tmux, self.name, self.workdir = tmux, name, workdir
        self.args = [str(a) for a in args]
        self.err_file = os.path.join(workdir, name + ".stderr")
        self.stty_file = os.path.join(workdir, name + ".stty")
        self.exit_file = os.path.join(workdir, name + ".exit")
        self.tt_pid = None
        variables = {"TERM": "xterm-256color", "LANG": "C.UTF-8",
                     "XDG_CONFIG_HOME": os.path.join(workdir, "config")}
        variables.update(env or {})
        command = " ".join(["env", "-u", "NO_COLOR"]
                           + ["%s=%s" % (k, shlex.quote(v)) for k, v in variables.items()]
                           + (["nice", "-n", str(nice)] if nice else [])
                           + [shlex.quote(rig.BIN)] + [shlex.quote(a) for a in self.args])
        script = ('cd %s && %s 2>%s; st=$?; echo "TT-EXIT=$st"; stty -a >%s 2>&1; '
                  'echo $st >%s.tmp; mv %s.tmp %s; exec sleep 600'
                  % (shlex.quote(workdir), command, shlex.quote(self.err_file),
                     shlex.quote(self.stty_file), shlex.quote(self.exit_file),
                     shlex.quote(self.exit_file), shlex.quote(self.exit_file)))
        tmux.run("new-session", "-d", "-s", name, "-x", size[0], "-y", size[1],
                 "sh", "-c", script)
        if not tmux.started:
            tmux.started = True
            tmux.socket_path = tmux.run("display-message", "-p", "#{socket_path}").strip()
        tmux.panes.append(self)
        self.started = time.monotonic()
        self._find_pid()

    @property
    def cmd(self):
        return "tachyon-top " + " ".join(self.args)

    def exit_status(self):
        """tachyon-top's exit status, once it has exited (and the wrapper has
        saved stty -a), else None."""
        try:
            with open(self.exit_file) as f:
                return int(f.read())
        except (OSError, ValueError):
            return None

    def _find_pid(self):
        """tachyon-top's pid: the wrapper shell's child while it runs."""
        shell = int(self.tmux.run("display-message", "-p", "-t", self.name,
                                  "#{pane_pid}").strip())
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                with open("/proc/%d/task/%d/children" % (shell, shell)) as f:
                    children = [int(c) for c in f.read().split()]
            except OSError:
                children = []
            for child in children:
                if pid_alive(child, "tachyon-top"):
                    self.tt_pid = child
                    return
            if self.exit_status() is not None:
                return  # it is gone already (a quick error)
            time.sleep(0.01)

    def capture(self, escapes=False):
        args = ["capture-pane", "-p", "-t", self.name]
        if escapes:
            args.append("-e")
        return Screen(self.tmux.run(*args))

    def keys(self, *keys):
        self.tmux.run("send-keys", "-t", self.name, *keys)

    def type(self, text):
        self.tmux.run("send-keys", "-t", self.name, "-l", text)

    def raw(self, data):
        """Bytes as a terminal would send them (tmux's own key names send
        what tmux's terminal sends, e.g. ESC [ 1 ~ for Home, where xterm,
        which TERM names here, sends ESC O H)."""
        self.tmux.run("send-keys", "-t", self.name, "-H", *("%02x" % b for b in data))

    def resize(self, cols, rows):
        self.tmux.run("resize-window", "-t", self.name, "-x", cols, "-y", rows)

    def alive(self):
        return self.tt_pid is not None and pid_alive(self.tt_pid, "tachyon-top")

    def stderr(self):
        try:
            with open(self.err_file, "rb") as f:
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def details(self, screen=None):
        screen = screen or self.capture()
        status = self.exit_status()
        state = ("running" if self.alive() else "exited with status %s" % status
                 if status is not None else "gone")
        lines = ["command: %s (%s)" % (self.cmd, state)]
        err = self.stderr()
        if err:
            lines += ["stderr: " + line for line in err.splitlines()[-10:]]
        return lines + screen.dump()

    def wait(self, predicate, what, timeout=KEY_TIMEOUT, escapes=False):
        """Poll the pane until predicate(screen) holds; the screen, or Fail."""
        deadline = time.monotonic() + timeout
        while True:
            screen = self.capture(escapes)
            try:
                if predicate(screen):
                    return screen
            except (IndexError, AttributeError, ValueError, TypeError):
                pass
            if self.exit_status() is not None:
                raise Fail("tachyon-top exited (status %d) while waiting for %s"
                           % (self.exit_status(), what), *self.details(screen))
            if time.monotonic() > deadline:
                raise Fail("no %s within %g s" % (what, timeout), *self.details(screen))
            time.sleep(0.05)

    def wait_table(self, timeout=SCREEN_TIMEOUT):
        return self.wait(lambda s: s.title and s.rows, "function table", timeout)

    def quit(self):
        """q; returns (exit status, stty -a text, final screen)."""
        before = self.capture()
        if self.exit_status() is not None or not self.alive():
            raise Fail("tachyon-top was not running when q was to be pressed",
                       *self.details(before))
        self.keys("q")
        deadline = time.monotonic() + EXIT_TIMEOUT
        while self.exit_status() is None:
            if time.monotonic() > deadline:
                raise Fail("tachyon-top did not exit within %d s of q" % EXIT_TIMEOUT,
                           *self.details())
            time.sleep(0.05)
        with open(self.stty_file) as f:
            stty = f.read()
        screen = self.wait_settled()
        return self.exit_status(), stty, screen

    def wait_settled(self):
        """The screen once the wrapper's TT-EXIT line is on it (or 2 s)."""
        deadline = time.monotonic() + 2
        while True:
            screen = self.capture()
            if "TT-EXIT=" in screen.text or time.monotonic() > deadline:
                return screen
            time.sleep(0.02)


def expect_clean_exit(pane, status, stty, screen, expected_status=0):
    """Exit status, terminal modes restored, alternate screen left."""
    expect(status == expected_status, "exit status %d after q, expected %d"
           % (status, expected_status), *pane.details(screen))
    modes = set(re.split(r"[\s;]+", stty))
    expect("icanon" in modes and "echo" in modes and "-icanon" not in modes
           and "-echo" not in modes,
           "terminal not restored after exit: stty -a says %s"
           % " ".join(m for m in modes if m.lstrip("-") in ("icanon", "echo", "isig", "icrnl")),
           "stty -a: " + show(stty, 600))
    expect(screen.title is None and not any("OWN%" in line for line in screen.lines),
           "the table is still on the terminal after exit (alternate screen not left)",
           *screen.dump())
    err = pane.stderr()
    for marker in rig.SANITIZER_MARKERS:
        expect(marker.decode() not in err, "sanitizer report on stderr",
               *["stderr: " + line for line in err.splitlines()[:30]])


# ----------------------------------------------------------------------
# Per-interpreter context
# ----------------------------------------------------------------------

class Ctx:
    def __init__(self, suite, interp, workdir):
        self.suite, self.interp, self.workdir = suite, interp, workdir
        self.split = self.hopper = None
        self.split_times = self.batch_times = self.batch_times_after = None
        self.tmux = None
        self.ui = self.hop_ui = self.exit_ui = None
        self.batch = None
        self.exit_ready = None

    def version(self):
        return tuple(int(x) for x in re.findall(r"\d+", self.split.info["python"])[:2])


def start_exiting_pane(ctx):
    """tachyon-top -- chroot ROOT PYTHON exiting.py READY DELAY return.

    Started only once the checks that judge a CPU split are done: exiting.py
    keeps four threads busy, which would load the machine meanwhile."""
    root_dir = ctx.suite.new_dir("tui-exiting-" + ctx.interp)
    os.makedirs(rig.in_root(root_dir), exist_ok=True)
    for name in ("exiting.py", rig.TARGET_LIB):
        shutil.copy(os.path.join(rig.TARGETS_DIR, name), rig.in_root(root_dir))
    ctx.exit_ready = os.path.join(root_dir, "ready.json")
    command = rig.command(ctx.suite, ctx.interp,
                          ["-E", "-s", "-B", "-X", "utf8", os.path.join(root_dir, "exiting.py"),
                           ctx.exit_ready, str(EXITING_DELAY), "return"])
    ctx.exit_ui = Pane(ctx.tmux, "exiting", ["-r", "2000", "--delay", DELAY, "--"] + command,
                       ctx.workdir)


def kill_exiting_target(ctx):
    """exiting.py ends by itself; should tachyon-top have lost it, kill it."""
    if not ctx.exit_ready:
        return
    with contextlib.suppress(OSError, ValueError, KeyError):
        with open(rig.in_root(ctx.exit_ready)) as f:
            pid = json.load(f)["pid"]
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            if os.path.dirname(ctx.exit_ready).encode() in f.read():
                os.kill(pid, signal.SIGKILL)


def start_batch(ctx):
    out = open(os.path.join(ctx.workdir, "batch.out"), "w+b")
    err = open(os.path.join(ctx.workdir, "batch.err"), "w+b")
    argv = [rig.BIN, "-p", str(ctx.split.pid), "--batch", "-d", "3", "--delay", "1"]
    ctx.batch_times = sampler.own_times(ctx.split)
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                            preexec_fn=sampler.boosted)
    ctx.batch = (argv, proc, out, err)


def stop_batch(ctx):
    if ctx.batch:
        _, proc, out, err = ctx.batch
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        out.close()
        err.close()


# ----------------------------------------------------------------------
# Checks on the split screen (in this order: they share one session)
# ----------------------------------------------------------------------

def test_profile(ctx):
    """1: spin on top; over the session (w) spend_75's and spend_25's TOTAL%
    are within 6 points of the split the target measured itself (75/25 of
    its CPU time by construction; a loaded machine moves the wall split)."""
    ui = ctx.ui
    screen = ui.wait_table()
    expect(screen.rows[0].func == "spin", "first row (sorted by own) is %s, expected spin"
           % screen.rows[0].func, *ui.details(screen))
    expect("sorted by own" in screen.title and "% of the last refresh" in screen.title,
           "title of a fresh screen: %s" % show(screen.title))
    rest = SESSION_MIN - (time.monotonic() - ui.started)
    if rest > 0:
        time.sleep(rest)  # a session long enough to judge a 75/25 split
    ui.keys("w")
    screen = ui.wait(lambda s: "% of the whole session" in s.title
                     and s.showing.group(2).startswith("session") and s.rows,
                     "whole-session table after w")
    expect(screen.rows[0].func == "spin", "first row of the session is %s, expected spin"
           % screen.rows[0].func, *ui.details(screen))
    after = sampler.own_times(ctx.split)
    rows = {func: screen.row(func) for func in ("spend_75", "spend_25")}
    for func, row in rows.items():
        expect(row is not None, "%s missing from the table" % func, *ui.details(screen))
    both = rows["spend_75"].total + rows["spend_25"].total
    for func, other in (("spend_75", "spend_25"), ("spend_25", "spend_75")):
        # Shares of the time in the two (the target's loop and its own
        # bookkeeping are in neither).
        share = 100.0 * rows[func].total / both
        truth = sampler.own_split(ctx.split_times, after, func, other)
        expect(abs(share - truth) <= 6, "%s has %.1f%% of the TOTAL of the two; the target "
               "measured %.1f%% of its time there (+- 6)" % (func, share, truth),
               *ui.details(screen))


def test_sort(ctx):
    """2: s sorts by total (another first row), S back to own."""
    ui = ctx.ui
    # <module> and loop outrank spin by total only once a sample has caught
    # the target outside spin(): until then all three tie at 100%.
    before = ui.wait(lambda s: s.rows and any(r.own_n != "0" for r in s.rows
                                              if r.func != "spin"),
                     "a sample outside spin() in the session", timeout=SCREEN_TIMEOUT)
    first = before.rows[0].func
    ui.keys("s")

    def whole(s, column):
        """A frame painted whole: tmux can capture one mid-repaint, its top
        rows new and its bottom rows (or cells) from the frame before (a
        row twice, a name beside another row's numbers). A table the
        program really left unsorted never passes."""
        values = [getattr(r, column) for r in s.rows]
        funcs = [r.func for r in s.rows]
        return values == sorted(values, reverse=True) and len(set(funcs)) == len(funcs)

    try:
        screen = ui.wait(lambda s: "sorted by total" in s.title and s.rows and whole(s, "total"),
                         "'sorted by total' after s, TOTAL% descending, each function once")
        top = screen.rows[0]
        expect(top.func != first and top.func in ("<module>", "loop"),
               "first row sorted by total is %s (before: %s), expected <module> or loop"
               % (top.func, first), *ui.details(screen))
        # Every stack starts in <module> and loop, bar the odd torn read on a
        # loaded machine: a frame reused as it was read can end a chain early,
        # and before 3.15 there is no base frame to tell (99.9% seen once in CI).
        expect(top.total >= 99.5, "first row sorted by total has TOTAL%% %.1f" % top.total,
               *ui.details(screen))
    finally:
        ui.keys("S")
    screen = ui.wait(lambda s: "sorted by own" in s.title and s.rows and whole(s, "own"),
                     "'sorted by own' after S, OWN% descending, each function once")
    expect(screen.rows[0].func == "spin", "first row after S is %s, expected spin"
           % screen.rows[0].func, *ui.details(screen))


def test_filter(ctx):
    """3: /spend_25 Enter leaves only spend_25; Esc clears the filter."""
    ui = ctx.ui
    ui.wait_table()
    ui.keys("/")
    applied = False
    try:
        ui.wait(lambda s: s.status.startswith(" Filter: _"), "filter prompt after /")
        ui.type("spend_25")
        ui.wait(lambda s: s.status.startswith(" Filter: spend_25_"), "typed filter text")
        ui.keys("Enter")
        applied = True
        # The whole condition at once: tmux may capture a frame half
        # repainted (the title new, the status line not yet).
        screen = ui.wait(lambda s: s.title.rstrip().endswith(", filter: spend_25") and s.funcs
                         and not s.status.startswith(" Filter:"),
                         "', filter: spend_25' in the title, with rows, and no filter prompt")
        expect(screen.funcs == ["spend_25"], "filtered table shows %s, expected only spend_25"
               % screen.funcs, *ui.details(screen))
    finally:
        if not applied:
            ui.keys("Escape")
            time.sleep(0.2)
        ui.keys("Escape")
    # Wait for the whole condition: tmux may capture a frame half repainted.
    ui.wait(lambda s: "filter" not in s.title and
            {"spin", "spend_75", "spend_25", "loop"} <= set(s.funcs),
            "unfiltered table with spin, spend_75, spend_25 and loop after Esc")


def help_drawn(screen):
    """The whole help box is on the screen, its first line and its last: a
    capture can land between two writes of one frame."""
    return (any("tachyon-top keys" in line for line in screen.lines)
            and any("press any key to close" in line for line in screen.lines))


def test_help(ctx):
    """5: h opens the help, any key closes it."""
    ui = ctx.ui

    def helping(s):
        return any("tachyon-top keys" in line for line in s.lines)

    ui.keys("h")
    ui.wait(help_drawn, "help after h")
    ui.keys("x")
    ui.wait(lambda s: not helping(s) and s.rows, "table again after closing the help")
    ui.keys("?")
    ui.wait(help_drawn, "help after ?")
    ui.keys("Escape")
    ui.wait(lambda s: not helping(s) and s.rows, "table again after Esc closed the help")


TABLE_STATUS = " h help  q quit  s sort"


def test_every_view(ctx):
    """Each view by its key: its title and its own status line; the same
    key (or Esc) back to the function table and its status line."""
    ui = ctx.ui

    def on_table(s):
        return s.title and s.status.startswith(TABLE_STATUS) and s.rows

    def titled(prefix):
        return lambda s: any(ln.startswith(prefix) for ln in s.lines)

    views = [
        ("v", "v", "the call tree", titled(" Call tree  "), " v table  f flame  "),
        ("f", "f", "the flame graph", titled(" Flame graph  "), None),
        ("H", "H", "the threads view", lambda s: any(VIEW_TITLE_RE.match(ln) for ln in s.lines),
         " \u2191/\u2193 PgUp/PgDn Home/End: move  s/S: sort  /: filter  "),
        ("T", "Escape", "the asyncio tasks view", titled(" asyncio tasks "),
         " \u2191/\u2193 PgUp/PgDn Home/End: move  Enter: open/close  "),
        ("Enter", "Escape", "the detail of the selected function", titled(" Callers ("), None),
        ("h", "x", "the help", help_drawn, None),
    ]
    ui.wait(on_table, "the function table and its status line", timeout=SCREEN_TIMEOUT)
    for key, back, what, shown, status in views:
        ui.keys(key)
        try:
            # The help is drawn over the table; the views take its place.
            ui.wait(lambda s: shown(s) and (key == "h" or not s.title),
                    "%s after %s" % (what, key))
            # Waited for, not read off the first screen: tmux can capture a
            # frame half repainted, the view's title above the table's
            # status line.
            if status:
                ui.wait(lambda s: shown(s) and s.status.startswith(status),
                        "%s's own status line (%s...)" % (what, status.strip()))
            elif key == "f":
                # The flame view's status line names the selected frame.
                ui.wait(lambda s: shown(s) and s.status and
                        not s.status.startswith(TABLE_STATUS),
                        "%s's own status line, not the table's" % what)
        finally:
            # Back to the table even when a check failed: the checks after
            # this one start from it.
            ui.keys(back)
        ui.wait(on_table, "the function table again after %s on %s" % (back, what))


def test_pause(ctx):
    """6: p freezes the table (sampling goes on); p again resumes."""
    ui = ctx.ui
    ui.keys("p")
    resumed = False
    try:
        screen = ui.wait(lambda s: "[PAUSED]" in s.status and s.rows, "[PAUSED] after p")
        frozen = screen.table_lines()
        time.sleep(PAUSE_GAP)
        later = ui.capture()
        expect(later.table_lines() == frozen,
               "paused table changed within %g s (--delay %s)" % (PAUSE_GAP, DELAY),
               *(["before: |" + line for line in frozen] + ui.details(later)))
        expect("[PAUSED]" in later.status, "[PAUSED] marker went away by itself",
               *ui.details(later))
        ui.keys("p")
        resumed = True
        ui.wait(lambda s: "[PAUSED]" not in s.status and s.rows and s.table_lines() != frozen,
                "table moving again after the second p", timeout=3)
    finally:
        if not resumed and "[PAUSED]" in ui.capture().status:
            ui.keys("p")


def test_export(ctx):
    """7: e asks for a format; a writes all six, named with full paths on
    screen; the collapsed and speedscope files parse, the others start as
    their formats do (tests/export.py checks them with their viewers)."""
    ui = ctx.ui
    ui.keys("e")
    def message(s):  # a long message wraps over the last lines
        return " ".join(ln.strip() for ln in s.lines[-3:])
    ui.wait(lambda s: "export the session as:" in message(s) and "pprof" in message(s),
            "the format prompt after e")
    ui.keys("a")
    screen = ui.wait(lambda s: EXPORT_RE.search(message(s)) or "export failed" in s.status,
                     "export message after e a")
    m = EXPORT_RE.search(message(screen))
    expect(m, "export failed: %s" % screen.status.strip(), *ui.details(screen))
    stem, nstacks, nsamples = m.group(1), int(m.group(2)), int(m.group(3))
    paths = [stem + ext for ext in (".collapsed", ".speedscope.json", ".svg", ".pb.gz", ".prof",
                                    ".html")]
    try:
        expect(os.path.dirname(stem) == os.path.realpath(ctx.workdir),
               "exported to %s, not the working directory %s" % (stem, ctx.workdir))
        for path in paths:
            expect(os.path.dirname(path) == os.path.realpath(ctx.workdir),
                   "export message does not give the full path in the working directory %s: "
                   "%s" % (ctx.workdir, path), "message: " + message(screen))
            expect(os.path.isfile(path), "exported file %s does not exist" % path,
                   "message: " + screen.status.strip())
            expect(re.fullmatch(r"tachyon-top-%d-\d{8}-\d{6}\.(collapsed|speedscope\.json|svg|pb\.gz|prof|html)"
                                % ctx.split.pid, os.path.basename(path)),
                   "unexpected export file name %s" % path)
        with open(paths[2], "rb") as f:
            expect(b"<svg" in f.read(300), "the .svg export is not SVG")
        with open(paths[3], "rb") as f:
            expect(f.read(2) == b"\x1f\x8b", "the .pb.gz export is not gzip")
        with open(paths[5], "rb") as f:
            page = f.read()
            expect(page.startswith(b"<!DOCTYPE html>") and SPLIT.encode() in page,
                   "the .html export is not a heatmap of %s" % SPLIT)
        lines = sampler.collapsed_lines(paths[0])
        expect(len(lines) == nstacks, "%d lines in the collapsed file, the message says %d "
               "stacks" % (len(lines), nstacks))
        counted = sum(count for _, count in lines)
        expect(counted == nsamples, "collapsed counts add up to %d, the message says %d "
               "samples" % (counted, nsamples))
        expect(any(re.fullmatch(r"spin \(.*%s:\d+\)" % re.escape(SPLIT), f)
                   for frames, _ in lines for f in frames),
               "no spin frame in the collapsed file",
               *["line: " + show(";".join(frames)) for frames, _ in lines[:5]])
        with open(paths[1], encoding="utf-8") as f:
            try:
                doc = json.load(f)
            except ValueError as error:
                raise Fail("%s is not JSON: %s" % (paths[1], error))
        frames = doc["shared"]["frames"]
        names = {fr["name"] for fr in frames}
        expect({"spin", "spend_75", "spend_25", "loop"} <= names,
               "speedscope frames lack the target's functions: %s" % sorted(names))
        expect(doc["profiles"], "speedscope file has no profiles")
        try:
            stats = pstats.Stats(paths[4]).stats
        except Exception as error:   # what pstats raises on a bad file varies
            raise Fail("Python's pstats cannot load %s: %r" % (paths[4], error))
        expect(any(func[2] == "spin" for func in stats),
               "no spin in the pstats file: %s" % sorted(func[2] for func in stats)[:10])
        for profile in doc["profiles"]:
            expect(profile["type"] == "sampled", "profile type %s" % profile["type"])
            expect(len(profile["samples"]) == len(profile["weights"]) > 0,
                   "samples and weights differ in length, or are empty")
            for stack in profile["samples"]:
                expect(all(0 <= i < len(frames) for i in stack),
                       "frame index out of range in %s" % stack)
    finally:
        for path in paths:
            with contextlib.suppress(OSError):
                os.unlink(path)


def test_resize(ctx):
    """8: too small a terminal says so; 60x12 and 140x40 show the screen."""
    ui = ctx.ui
    try:
        ui.resize(50, 10)
        ui.wait(lambda s: any("Terminal too small: need 60x12, have 50x10" in line
                              for line in s.lines), "'Terminal too small' at 50x10")
        ui.resize(59, 12)
        ui.wait(lambda s: any("Terminal too small: need 60x12, have 59x12" in line
                              for line in s.lines), "'Terminal too small' at 59x12")
        ui.resize(60, 12)
        ui.wait(lambda s: s.lines[0].startswith(" tachyon-top  pid")
                and not any("too small" in line for line in s.lines), "the screen at 60x12")
    finally:
        ui.resize(COLS, ROWS)
    screen = ui.wait(lambda s: len(s.lines) == ROWS and s.rows,
                     "the table back at %dx%d" % (COLS, ROWS))
    expect(ui.alive(), "tachyon-top is not running after the resizes", *ui.details(screen))


def test_stats_and_detail(ctx):
    """9: c shows the engine panel; Enter on spin shows its callers/callees."""
    ui = ctx.ui
    ui.keys("c")
    try:
        screen = ui.wait(lambda s: s.line_starting(" Engine") and s.rows,
                         "engine panel after c")
        text = "\n".join(screen.lines)
        for word in ("frame cache", "reads/sample"):
            expect(word in text, "engine panel lacks %r" % word, *ui.details(screen))
    finally:
        ui.keys("c")
    ui.wait(lambda s: not s.line_starting(" Engine") and s.rows, "engine panel gone after c")
    ui.raw(HOME)
    ui.wait(lambda s: s.rows[0].func == "spin", "spin on top")
    ui.keys("Enter")
    try:
        screen = ui.wait(lambda s: s.line_starting(" Detail: ") and s.line_starting(" Callees"),
                         "detail view after Enter")
        expect(screen.line_starting(" Detail: spin "), "detail view is not spin's (Home "
               "then Enter on the first row)", *ui.details(screen))
        i = screen.lines.index(screen.line_starting(" Callers"))
        j = screen.lines.index(screen.line_starting(" Callees"))
        callers, callees = "\n".join(screen.lines[i + 1:j]), "\n".join(screen.lines[j + 1:])
        expect(i < j and "spend_75" in callers and "spend_25" in callers,
               "spin's callers should be spend_75 and spend_25", *ui.details(screen))
        expect("(own time: running here)" in callees,
               "spin's callees lack its own time", *ui.details(screen))
    finally:
        ui.keys("Escape")
    ui.wait(lambda s: s.title and s.rows and not s.line_starting(" Detail: "),
            "the table again after Esc")


def test_quit(ctx):
    """10: q exits 0, the terminal modes are restored, nothing on stderr."""
    ui = ctx.ui
    status, stty, screen = ui.quit()
    expect_clean_exit(ui, status, stty, screen)
    expect(ui.stderr().strip() == "", "unexpected stderr after q: %s" % show(ui.stderr()))


# ----------------------------------------------------------------------
# The other screens and the batch run
# ----------------------------------------------------------------------

def test_threads(ctx):
    """4: Tab cycles all -> each thread -> all; the table follows."""
    ui, info = ctx.hop_ui, ctx.hopper.info
    main_tid = info["main_tid"]
    second_tid = [t for t in info["tids"] if t != main_tid]
    expect(len(second_tid) == 1, "hopper.py reports threads %s" % info["tids"])
    second_tid = second_tid[0]
    ui.wait(lambda s: s.rows and {"hop", "second"} <= set(s.funcs),
            "both threads' functions in the table", timeout=SCREEN_TIMEOUT)
    label = ui.capture().thread_label
    expect(label == "all threads", "a fresh screen shows %s" % show(label))
    def thread_screen_problem(screen):
        """Why this screen is not yet one thread's consistent view, or None.

        tmux may be captured between two writes of one redraw (the header
        new, the table still the old filter's); a screen only counts once
        header, table and threads panel agree."""
        tid, name = int(screen.showing.group(4)), screen.showing.group(5)
        funcs = set(screen.funcs)
        if tid == second_tid:
            if not ("second" in funcs and "leaf" in funcs and "hop" not in funcs):
                return "thread 'second' shows functions %s" % sorted(funcs)
            # the name threading gives it, on every version
            if name != "second":
                return "thread %d is called %s, not second" % (tid, show(name))
        elif tid == main_tid:
            if not ("hop" in funcs and "second" not in funcs):
                return "the main thread shows functions %s" % sorted(funcs)
            if name != "MainThread":
                return "the main thread is called %s, not MainThread" % show(name)
        marked = [line for line in screen.lines if line.startswith("> ")]
        if not (len(marked) == 1 and marked[0].split()[1] == str(tid)):
            return "threads panel does not mark thread %d" % tid
        return None

    seen = []
    for _ in range(4):
        ui.keys("Tab")
        previous = label
        screen = ui.wait(lambda s: s.thread_label not in (None, previous) and s.rows,
                         "the header to change after Tab (from %s)" % previous)
        label = screen.thread_label
        if label == "all threads":
            break
        seen.append(label)
        try:
            ui.wait(lambda s: s.thread_label == label and thread_screen_problem(s) is None,
                    "a consistent view of %s" % label)
        except Fail:
            last = ui.capture()
            problem = (thread_screen_problem(last) if last.thread_label == label
                       else "the header went on to %s" % show(last.thread_label))
            raise Fail(problem or "no consistent view of %s" % label, *ui.details(last))
    tids = sorted(int(lab.split()[1]) for lab in seen)
    expect(label == "all threads", "Tab did not come back to all threads: %s" % seen)
    expect(tids == sorted(info["tids"]), "Tab visited %s, the target's threads are %s"
           % (seen, info["tids"]))
    ui.keys("BTab")
    screen = ui.wait(lambda s: s.thread_label != "all threads", "a thread after BTab")
    expect(screen.thread_label == seen[-1], "BTab from all threads went to %s, expected %s"
           % (screen.thread_label, seen[-1]), *ui.details(screen))
    ui.keys("Right")
    ui.wait(lambda s: s.thread_label == "all threads", "all threads after Right")


def test_target_exits(ctx):
    """11: the started command ends; the screen stays and says so."""
    ui = ctx.exit_ui
    expect(ui is not None, "the -- COMMAND screen was never started")
    if ui.exit_status() is not None:
        raise Fail("tachyon-top -- COMMAND did not start", *ui.details())
    screen = ui.wait(lambda s: s.status.startswith("process "),
                     "'process exited' on the status line", timeout=SCREEN_TIMEOUT + 5)
    expect(screen.status.startswith("process exited with status 0"),
           "status line: %s" % show(screen.status.strip()), *ui.details(screen))
    expect(screen.title and "% of the whole session" in screen.title,
           "after the end the table is not the whole session: %s" % show(screen.title),
           *ui.details(screen))
    expect(screen.rows, "the table lost its rows after the target ended", *ui.details(screen))
    # The rows of the busy threads are kept (Home: the table may have
    # scrolled to follow the function selected at the start).
    ui.raw(HOME)
    screen = ui.wait(lambda s: "busy" in s.funcs, "exiting.py's busy() at the top of the "
                     "table after Home")
    expect(ui.alive(), "tachyon-top is not running after the target ended",
           *ui.details(screen))
    status, stty, screen = ui.quit()
    expect_clean_exit(ui, status, stty, screen)
    err = ui.stderr().splitlines()
    expect("tachyon-top: process exited with status 0" in err,
           "stderr after q lacks 'tachyon-top: process exited with status 0'",
           *["stderr: " + line for line in err[:10]])


def batch_blocks(text):
    """[(title line, [(own, total, func)])] of --batch output."""
    blocks = []
    for line in text.splitlines():
        if line.startswith("tachyon-top "):
            blocks.append((line, []))
            continue
        m = re.fullmatch(r"\s*(\d+\.\d\d)\s+(\d+\.\d\d)\s+\d+\.\d{3}\s+\d+\.\d{3}"
                         r"\s+(\S+)\s+.+:-?\d+", line)
        if m and blocks:
            blocks[-1][1].append((float(m.group(1)), float(m.group(2)), m.group(3)))
    return blocks


def test_batch(ctx):
    """13: --batch -d 3 --delay 1: window blocks, then a 75/25 session block."""
    argv, proc, out, err = ctx.batch
    try:
        proc.wait(timeout=BATCH_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise Fail("%s did not finish within %d s" % (" ".join(argv), BATCH_TIMEOUT))
    ctx.batch_times_after = sampler.own_times(ctx.split)
    out.seek(0)
    err.seek(0)
    run = rig.Run(argv, proc.returncode, out.read(), err.read())
    crash = run.crash()
    expect(not crash, "%s crashed: %s" % (run.cmd, crash), *run.details())
    run.expect_success()
    rig.expect_no_control_bytes(run.out, "batch output")
    blocks = batch_blocks(run.out.decode("utf-8", "replace"))
    pid = ctx.split.pid
    windows = [b for b in blocks if b[0].startswith("tachyon-top window - pid %d " % pid)]
    finals = [b for b in blocks if b[0].startswith("tachyon-top session (final) - pid %d " % pid)]
    expect(len(windows) >= 2, "%d window blocks, expected at least 2" % len(windows),
           *run.details())
    expect(len(finals) == 1 and blocks[-1] is finals[0],
           "expected one final session block, last", *run.details())
    rows = {func: total for _, total, func in finals[0][1]}
    after = ctx.batch_times_after or sampler.own_times(ctx.split)
    for func in ("spend_75", "spend_25"):
        expect(func in rows, "%s missing from the final block" % func, *run.details())
    both = rows["spend_75"] + rows["spend_25"]
    for func, other in (("spend_75", "spend_25"), ("spend_25", "spend_75")):
        share = 100.0 * rows[func] / both
        truth = sampler.own_split(ctx.batch_times, after, func, other)
        expect(abs(share - truth) <= 4, "%s has %.2f%% of the TOTAL of the two in the final "
               "block; the target measured %.1f%% of its time there (+- 4)"
               % (func, share, truth), *run.details())
    expect(finals[0][1][0][2] == "spin", "the final block's first row is %s, expected spin"
           % finals[0][1][0][2], *run.details())


# In the order they run; None: a step that is no test of its own.
PER_INTERPRETER = [
    ("%s: spin on top, spend_75 at 75%% +- 6 of the session (w)" % SPLIT, test_profile),
    ("--batch -d 3 --delay 1: >= 2 window blocks, final block 75/25 +- 4", test_batch),
    (None, start_exiting_pane),
    ("s sorts by total (first row changes), S back to own", test_sort),
    ("/spend_25 Enter shows only spend_25; Esc clears the filter", test_filter),
    ("hopper.py: Tab shows one thread at a time, then all threads again; BTab back",
     test_threads),
    ("h and ? open the help, any key closes it", test_help),
    ("each view by its key (v f H T Enter h): its title and status line, then back to the table",
     test_every_view),
    ("p freezes the table for %g s while sampling goes on, p resumes" % PAUSE_GAP, test_pause),
    ("e then a exports all six formats, named with full paths", test_export),
    ("resize to 50x10 and 59x12: 'too small'; 60x12 and back: the screen, still running",
     test_resize),
    ("c shows the engine panel; Enter on spin shows callers and callees", test_stats_and_detail),
    ("q exits 0 with the terminal restored (icanon, echo) and nothing on stderr", test_quit),
    ("-- COMMAND that exits: 'process exited with status 0', rows kept, reported after q",
     test_target_exits),
]
PER_INTERPRETER_TESTS = [t for t in PER_INTERPRETER if t[0]]


class Checks(list):
    """[(description, Fail or None)] of checks run one after another on
    shared panes: check(description, fn) records a failure and goes on."""

    def __call__(self, desc, fn):
        try:
            fn()
        except Fail as failure:
            self.append((desc, failure))
        else:
            self.append((desc, None))


def new_workdir(base, label):
    path = os.path.join(base, label)
    os.makedirs(os.path.join(path, "config", "tachyon-top", "themes"))
    return path


def run_interp(tap, suite, interp, base):
    names = ["%s: %s" % (interp, desc) for desc, _ in PER_INTERPRETER_TESTS]
    if not suite.has(interp):
        for name in names:
            tap.skip(name, suite.missing(interp))
        return
    pending = [("%s: %s" % (interp, desc) if desc else None, fn) for desc, fn in PER_INTERPRETER]
    ctx = Ctx(suite, interp, new_workdir(base, interp))
    try:
        with contextlib.ExitStack() as stack:
            ctx.split = stack.enter_context(rig.Target(suite, interp, SPLIT,
                                                       park=rig.PARK_NONE))
            ctx.hopper = stack.enter_context(rig.Target(suite, interp, "hopper.py",
                                                        park=rig.PARK_NONE))
            stack.callback(kill_exiting_target, ctx)
            stack.callback(stop_batch, ctx)
            ctx.tmux = stack.enter_context(Tmux(interp))
            # The split checks judge the sampler, not the machine's load:
            # target and samplers run at nice -10 (sampler.BOOST).
            sampler.boost(ctx.split.pid)
            ctx.split_times = sampler.own_times(ctx.split)
            ctx.ui = Pane(ctx.tmux, "split", ["--delay", DELAY, "-p", ctx.split.pid],
                          ctx.workdir, nice=sampler.BOOST)
            ctx.hop_ui = Pane(ctx.tmux, "hopper", ["-r", "2000", "--delay", DELAY,
                                                   "-p", ctx.hopper.pid], ctx.workdir)
            start_batch(ctx)
            while pending:
                name, fn = pending[0]
                if name is None:
                    fn(ctx)
                else:
                    tap.run(name, fn, ctx)
                pending.pop(0)
    except Fail as failure:  # a target, tmux or a step did not start
        for name, _ in pending:
            if name:
                tap.not_ok(name, failure.lines)


# ----------------------------------------------------------------------
# Once: themes, and the table after the terminal grows again
# ----------------------------------------------------------------------

BAD_THEME = """# a theme with two mistakes
name = broken
default = default;default
no.such.key = red
function = notacolour;default
"""


def once_checks(suite, interp, base):
    """12: shipped themes, --no-color, NO_COLOR, a faulty theme, a missing
    one; and the table's first rows after a resize. [(description, Fail or None)]"""
    results = check = Checks()
    workdir = new_workdir(base, "once")
    for name in SHIPPED_THEMES:
        shutil.copy(os.path.join(THEMES_DIR, name + ".theme"),
                    os.path.join(workdir, "config", "tachyon-top", "themes"))
    bad = os.path.join(workdir, "broken.theme")
    with open(bad, "w") as f:
        f.write(BAD_THEME)
    with rig.Target(suite, interp, SPLIT, park=rig.PARK_NONE) as target, \
            Tmux("once") as tmux:
        common = ["-r", "1000", "--delay", DELAY, "-p", target.pid]
        panes = {name: Pane(tmux, name, ["--theme", name] + common, workdir)
                 for name in SHIPPED_THEMES}
        panes["no-color"] = Pane(tmux, "no-color", ["--no-color"] + common, workdir)
        panes["NO_COLOR"] = Pane(tmux, "NO_COLOR", common, workdir, env={"NO_COLOR": "1"})
        panes["broken"] = Pane(tmux, "broken", ["--theme", bad] + common, workdir)
        panes["resize"] = Pane(tmux, "resize", common, workdir)
        missing = Pane(tmux, "missing", ["--theme", "no-such-theme"] + common, workdir)
        escaped = {}

        def shipped():
            for name in SHIPPED_THEMES + ("broken",):
                pane = panes[name]
                pane.wait_table()
                escaped[name] = pane.capture(escapes=True).text
            for name in SHIPPED_THEMES:
                pane = panes[name]
                status, stty, screen = pane.quit()
                expect_clean_exit(pane, status, stty, screen)
                expect(pane.stderr().strip() == "", "--theme %s: stderr after q: %s"
                       % (name, show(pane.stderr())))
            default, mono = escaped["default"], escaped["mono"]
            expect(colour_sgrs(default), "the default theme shows no colour escapes",
                   "capture: " + show(default, 600))
            expect(default != mono and not colour_sgrs(mono),
                   "mono looks like default or has colours: %s" % colour_sgrs(mono)[:5])

        def no_color():
            for name in ("no-color", "NO_COLOR"):
                pane = panes[name]
                pane.wait_table()
                text = pane.capture(escapes=True).text
                colours = colour_sgrs(text)
                expect(not colours, "%s: colour escapes on screen: %s"
                       % (pane.cmd if name == "no-color" else "NO_COLOR=1", colours[:8]))
                expect(attribute_sgrs(text), "%s: not even bold or reverse on screen" % name)
                status, stty, screen = pane.quit()
                expect_clean_exit(pane, status, stty, screen)

        def broken():
            pane = panes["broken"]
            status, stty, screen = pane.quit()
            expect_clean_exit(pane, status, stty, screen)
            err = pane.stderr().splitlines()
            expect(any(re.fullmatch(r"%s:4: unknown key 'no\.such\.key'" % re.escape(bad), line)
                       for line in err),
                   "no warning '%s:4: unknown key ...' after exit" % bad,
                   *["stderr: " + line for line in err])
            expect(any(line.startswith(bad + ":5: ") and "function" in line for line in err),
                   "no warning '%s:5: ... function' (bad colour) after exit" % bad,
                   *["stderr: " + line for line in err])

        def missing_theme():
            deadline = time.monotonic() + EXIT_TIMEOUT
            while missing.exit_status() is None:
                expect(time.monotonic() < deadline, "--theme no-such-theme did not exit",
                       *missing.details())
                time.sleep(0.05)
            status = missing.exit_status()
            err = missing.stderr()
            body = err[:-1] if err.endswith("\n") else err
            expect(status == 2, "--theme no-such-theme exited %d, expected 2" % status,
                   "stderr: " + show(err))
            expect(body and "\n" not in body
                   and body.startswith("tachyon-top: --theme no-such-theme: "),
                   "--theme no-such-theme: not a one-line 'tachyon-top: --theme "
                   "no-such-theme: ...' error", "stderr: " + show(err))

        def regrow():
            """With the last row selected, shrink to 60x12 (the table scrolls to
            keep it in view), grow back: every row fits again, so the table
            should start from its first row again."""
            pane = panes["resize"]
            full = pane.wait(lambda s: len(s.rows) >= 5, "a table of 5 rows or more",
                             timeout=SCREEN_TIMEOUT)
            pane.raw(END)
            time.sleep(0.2)
            last = full.funcs[-1]
            try:
                pane.resize(60, 12)
                small = pane.wait(lambda s: s.title and s.funcs and "spin" not in s.funcs,
                                  "the table scrolled to the selected last row at 60x12")
            finally:
                pane.resize(COLS, ROWS)
            screen = pane.wait(lambda s: len(s.lines) == ROWS and s.rows, "the table at %dx%d"
                               % (COLS, ROWS))
            time.sleep(2 * float(DELAY))   # a refresh or two to settle the layout
            screen = pane.capture()
            expect(screen.rows and screen.rows[0].func == "spin",
                   "after growing from 60x12 back to %dx%d the table starts at %s: the rows "
                   "above are hidden although all %d rows fit"
                   % (COLS, ROWS, screen.funcs[:1], len(full.rows)),
                   "last row (selected with End) before: %s; at 60x12: %s"
                   % (last, small.funcs), *pane.details(screen))

        check("themes: default, light, mono, high-contrast show the table, exit cleanly "
              "without warnings; default has colours, mono none", shipped)
        check("themes: --no-color and NO_COLOR=1 show no colour escapes, only attributes",
              no_color)
        check("themes: a theme file with an unknown key and a bad colour runs, both "
              "warned about after exit", broken)
        check("themes: a missing theme is a one-line error, exit status 2", missing_theme)
        check("resize: growing the terminal again shows the table from its first row",
              regrow)
    return results



# ----------------------------------------------------------------------
# Once: what a new user trips over (issue 16)
# ----------------------------------------------------------------------

HELP_TEXT_WORDS = None  # every word of the help text, read from ui/


def help_words():
    """The words of the help overlay's text, as ui/ spells them: the shared
    keys (keys.c), each view's keys (a `[][2]` table in its file) and the
    notes (helpview.c)."""
    global HELP_TEXT_WORDS
    if HELP_TEXT_WORDS is None:
        src = os.environ.get("TT_SRCDIR") or os.path.join(HERE, "..")
        words = set()
        for _, key, desc in manpage.help_entries(src):
            words |= set(key.split()) | set(desc.split())
        with open(os.path.join(src, "ui", "helpview.c"), encoding="utf-8") as f:
            text = f.read()
        notes = text[text.index("help_notes[] = {"):text.index("#define HELP_MAX_LINES")]
        words |= set("".join(re.findall(r'"([^"]*)"', notes)).split())
        HELP_TEXT_WORDS = words | {"press", "any", "key", "to", "close"}
    return HELP_TEXT_WORDS


def help_box_text(screen, cols):
    """The help box's text: the columns the overlay covers."""
    w = min(cols - 2, 100)
    x0 = (cols - w) // 2
    return [line[x0:x0 + w] for line in screen.lines]


def newuser_checks(suite, interp, base):
    """Threads panel, help, size message at 80x24, 200x50, 30x6; Enter on a
    line row; --export-dir; the window label. [(description, Fail or None)]"""
    results = check = Checks()
    workdir = new_workdir(base, "newuser")
    exports = os.path.join(workdir, "exports")
    os.makedirs(exports)

    with rig.Target(suite, interp, "tui_threads.py", park=rig.PARK_NONE) as target, \
            Tmux("newuser") as tmux:
        common = ["--delay", DELAY, "-p", target.pid]
        small = Pane(tmux, "small", common, workdir, size=(80, 24))
        big = Pane(tmux, "big", common, workdir, size=(200, 50))
        lines = Pane(tmux, "lines", ["--export-dir", exports] + common, workdir,
                     size=(120, 30))
        pid = target.pid

        def thread_rows(s):
            return [ln for ln in s.lines if re.match(r"[> ] \d+ ", ln)]

        def sampled(s):
            # The SAMPLES column of a thread row (columns 29-37): busiest
            # means something only once a refresh has samples.
            return any(ln[29:38].strip() not in ("", "0") for ln in thread_rows(s))

        def panel():
            s = small.wait(lambda s: re.search(r"\+\d+ more threads?\b", "\n".join(s.lines))
                           and len(thread_rows(s)) >= 2 and sampled(s),
                           "'+N more threads' at 80x24, with samples",
                           timeout=SCREEN_TIMEOUT)
            expect(any(ln.split()[0 if ln[0] == " " else 1] == str(pid)
                       for ln in thread_rows(s)),
                   "the busy main thread %d is not among the shown threads" % pid,
                   *small.details(s))
            # Each thread in turn (6, then all again): the selected one is
            # always on screen.
            seen = set()
            for _ in range(6):
                small.keys("Tab")
                s = small.wait(lambda s: s.showing and s.showing.group(4)
                               and s.showing.group(4) not in seen, "the next thread shown")
                tid = s.showing.group(4)
                seen.add(tid)
                expect(any(ln.startswith("> " + tid + " ") for ln in s.lines),
                       "selected thread %s not visible in the panel" % tid, *small.details(s))
            small.keys("Tab")
            small.wait(lambda s: s.thread_label == "all threads", "all threads again")
        check("80x24: threads panel says '+N more threads', keeps the busy and the selected "
              "thread visible", panel)

        def helps():
            for pane, cols in ((small, 80), (big, 200)):
                pane.keys("h")
                s = pane.wait(help_drawn, "the whole help at %d columns" % cols)
                box = help_box_text(s, cols)
                cut = [ln.strip() for ln in box if "\u2026" in ln]
                expect(not cut, "help cut at %d columns: %s" % (cols, cut), *pane.details(s))
                seen = set(" ".join(box).split())
                missing = sorted(help_words() - seen)
                expect(not missing, "help at %d columns lacks %s" % (cols, missing),
                       *pane.details(s))
                pane.keys("Escape")
                pane.wait(lambda s: not any("tachyon-top keys" in ln for ln in s.lines),
                          "help closed")
        check("80x24 and 200x50: the help shows every word of its text, nothing cut", helps)

        def too_small():
            small.resize(30, 6)
            small.wait(lambda s: any("need 60x12, have 30x6" in ln for ln in s.lines),
                       "'need 60x12, have 30x6' at 30x6")
            small.resize(80, 24)
        check("30x6: the too-small message keeps both sizes readable", too_small)

        def line_detail():
            info = target.info
            lines.wait_table(timeout=SCREEN_TIMEOUT)
            lines.keys("l")
            lines.wait(lambda s: s.showing and "by line" in s.lines[2], "by-line view")
            lines.keys("/")
            lines.type("loop")
            lines.keys("Enter")
            lines.keys("s")  # by total: loop's two call lines come first
            s = lines.wait(lambda s: "sorted by total" in (s.title or "") and s.rows
                           and s.rows[0].func == "loop", "loop's lines sorted by total")
            lines.keys("Home", "Enter")
            s = lines.wait(lambda s: any(ln.startswith(" Detail: loop") for ln in s.lines)
                           and any(ln.startswith(" Callees") for ln in s.lines),
                           "detail of a loop line")
            title = next(ln for ln in s.lines if ln.startswith(" Detail: loop"))
            m = re.match(r" Detail: loop line (\d+) ", title)
            expect(m, "the detail of a line row does not name the line: %s" % title.strip(),
                   *lines.details(s))
            line = int(m.group(1))
            at = [ln for ln in s.lines].index(next(ln for ln in s.lines
                                                   if ln.startswith(" Callees")))
            callees = {}
            for ln in s.lines[at + 1:at + 8]:
                m2 = re.match(r"\s+(\d+\.\d)%\s+(\S+)", ln)
                if m2:
                    callees[m2.group(2)] = float(m2.group(1))
            want, other = (("work_a", "work_b") if line == info["line_a"] else
                           ("work_b", "work_a") if line == info["line_b"] else (None, None))
            expect(want, "Enter opened line %d, not one of loop's call lines %d/%d"
                   % (line, info["line_a"], info["line_b"]), *lines.details(s))
            # A sample caught at a call boundary can show the neighbour
            # (3.13: ~0.1%); the whole function would show about 50/50.
            expect(callees.get(want, 0) >= 90 and callees.get(other, 0) < 5,
                   "line %d calls %s only, but its callees are: %s" % (line, want, callees),
                   *lines.details(s))
            # One key at a time: Escape then a key reads as Alt+key.
            lines.keys("Escape")
            lines.wait(lambda s: s.title and "filter: loop" in s.title, "the table after Esc")
            lines.keys("Escape")
            lines.wait(lambda s: s.title and "filter" not in s.title, "no filter after Esc")
            lines.keys("l")
            lines.wait(lambda s: s.showing and "by function" in s.lines[2], "by function again")
        check("by-line view: Enter on a line row shows that line's callees only", line_detail)

        def export_dir():
            def message(s):
                return " ".join(ln.strip() for ln in s.lines[-3:])
            lines.keys("e")
            lines.wait(lambda s: "export the session as:" in message(s), "the format prompt after e")
            lines.keys("a")
            s = lines.wait(lambda s: EXPORT_RE.search(message(s))
                           or "export failed" in s.status, "export message after e a")
            m = EXPORT_RE.search(message(s))
            expect(m, "export failed: %s" % s.status.strip(), *lines.details(s))
            for ext in (".collapsed", ".speedscope.json", ".svg", ".pb.gz", ".prof", ".html"):
                path = m.group(1) + ext
                expect(os.path.isabs(path) and os.path.dirname(path) == exports,
                       "export message names %s, not a full path in --export-dir %s"
                       % (path, exports), *lines.details(s))
                expect(os.path.isfile(path), "%s does not exist" % path)
        check("--export-dir: e writes there and names every file by full path", export_dir)

        def window_label():
            # One thread (the busy main one): its rows' OWN add up to the window.
            for _ in range(8):
                s = lines.capture()
                if s.showing and s.showing.group(4) == str(pid):
                    break
                lines.keys("Tab")
                time.sleep(0.3)
            s = lines.wait(lambda s: s.showing and s.showing.group(4) == str(pid)
                           and len(s.rows) >= 2, "the main thread's table")
            m = re.search(r"last (\d+\.\d\d)s", s.lines[2])
            expect(m, "the window label is not the measured length (2 decimals): %s"
                   % s.lines[2].strip(), *lines.details(s))
            window = float(m.group(1))
            own = []
            for ln in s.table_lines():
                t = ln.split()[2]
                own.append(float(t[:-1]) if t.endswith("s") and ":" not in t else 0.0)
            expect(abs(sum(own) - window) <= 0.01 * len(own) + 0.02,
                   "the thread's OWN times add up to %.2f s in a window labelled %.2f s"
                   % (sum(own), window), *lines.details(s))
        check("the window label is the real window; one thread's OWN times add up to it",
              window_label)
    return results

POOL_THREADS = 1000
VIEW_TITLE_RE = re.compile(r" Threads (\d+)-(\d+) of (\d+)(?: matching, of (\d+))?, sorted by (.+?) \(s\)")
HEADER_THREADS_RE = re.compile(r"threads (\d+)((?:[:,] \d+ [A-Za-z ]+?)*)(?:   |$)")
THREAD_STATES = ("GIL", "on CPU", "waiting for GIL", "blocked", "idle")


def pool_checks(suite, interp, base):
    """A 1,000-thread pool and a spinner: the header counts threads by what
    they do; H lists every thread a page at a time, sorts, filters by name
    or id; Enter shows one thread's functions. Under thread churn a row goes
    soon after its thread, and Tab skips a thread that ended.
    [(description, Fail or None)]"""
    results = check = Checks()
    workdir = new_workdir(base, "pool")

    with rig.Target(suite, interp, "pool.py", args=(POOL_THREADS,), park=rig.PARK_NONE) as target, \
            Tmux("pool") as tmux:
        pane = Pane(tmux, "pool", ["--delay", DELAY, "-p", target.pid], workdir, size=(120, 30))
        tids = set(target.info["tids"])

        def counts(s):
            """{"total": N, state: count} from the header (states at 0 are left out)."""
            m = HEADER_THREADS_RE.search(s.lines[0])
            if not m:
                return None
            out = {"total": int(m.group(1))}
            for piece in re.findall(r"[:,] (\d+) ([A-Za-z ]+)", m.group(2)):
                out[piece[1].strip()] = int(piece[0])
            return out

        def header():
            # The kernel watcher finds the pool's threads in their futex
            # wait within a few of its passes.
            s = pane.wait(lambda s: counts(s)["total"] == len(tids) and counts(s).get(
                "blocked", 0) >= len(tids) - 2, "'threads %d: ... N blocked' in the header"
                          % len(tids), timeout=3 * SCREEN_TIMEOUT)
            c = counts(s)
            expect(set(c) - {"total"} <= set(THREAD_STATES) and c["total"] == sum(
                v for k, v in c.items() if k != "total") and c.get("GIL", 0) + c.get(
                    "on CPU", 0) >= 1, "header counts do not add up, or the spinner is "
                   "neither on the GIL nor on a CPU: %s" % s.lines[0].strip(), *pane.details(s))
        check("1,000-thread pool: the header counts threads by what they do (GIL, on CPU, "
              "blocked, idle)", header)

        def view_rows(s):
            """The view's title match and its rows [(tid, name)]; a screen
            caught mid-redraw (rows short of what the title says) fails."""
            at = next((i for i, ln in enumerate(s.lines) if VIEW_TITLE_RE.match(ln)), None)
            if at is None:
                raise ValueError("no threads view on the screen")
            rows = []
            for ln in s.lines[at + 2:-1]:
                m = re.match(r"[> ] (\d+) +(\S+)", ln)
                if not m:
                    break
                rows.append((int(m.group(1)), m.group(2)))
            title = VIEW_TITLE_RE.match(s.lines[at])
            want = int(title.group(2)) - int(title.group(1)) + 1 if title.group(1) != "0" else 0
            if len(rows) != want:
                raise ValueError("a screen caught mid-redraw")
            return title, rows

        def whole():
            """The next screen with the whole view on it."""
            return pane.wait(lambda s: view_rows(s), "the threads view")

        def sort_to(name):
            for _ in range(8):
                s = whole()
                if view_rows(s)[0].group(5) == name:
                    return
                pane.keys("s")
                pane.wait(lambda s2: view_rows(s2)[0].group(5) != view_rows(s)[0].group(5),
                          "the next sort after s")
            raise Fail("s never sorted by %s" % name, *pane.details())

        def paging():
            pane.keys("H")
            s = pane.wait(lambda s: view_rows(s)[1] and view_rows(s)[0].group(3)
                          == str(len(tids)), "the threads view with every thread listed")
            title, rows = view_rows(s)
            page = len(rows)
            expect(title.group(1) == "1" and int(title.group(2)) == page and page >= 20
                   and title.group(5) == "busiest",
                   "the first page is not rows 1-%d, busiest first: %s" % (page, title.group(0)),
                   *pane.details(s))
            expect(rows[0][0] == target.pid, "busiest first: the spinner %d is not on top"
                   % target.pid, *pane.details(s))
            # In an order that does not move, every thread is on a page.
            sort_to("TID")
            pane.keys("Home")
            s = pane.wait(lambda s: view_rows(s)[0].group(1) == "1", "the first page by TID")
            shown = [t for t, _ in view_rows(s)[1]]
            expect(shown == sorted(tids)[:len(shown)], "sorted by TID, the first rows are %s"
                   % shown[:5], *pane.details(s))
            # Each page is the next piece of the threads in id order (a
            # screen caught mid-redraw is read again).
            order = sorted(tids)

            def page_rows(s):
                title, rows = view_rows(s)
                a, b = int(title.group(1)), int(title.group(2))
                return a, b, [t for t, _ in rows] == order[a - 1:b]

            first, pages = 0, 0
            for _ in range(len(tids) // page + 2):
                s = pane.wait(lambda s: page_rows(s)[0] > first and page_rows(s)[2],
                              "page %d: threads %d on, in id order" % (pages + 1, first + 1))
                first, last, _ = page_rows(s)
                pages += 1
                if last == len(tids):
                    break
                pane.keys("PageDown")
            expect(last == len(tids), "PgDn stopped at thread %d of %d" % (last, len(tids)),
                   *pane.details(s))
            pane.keys("Home")
            pane.wait(lambda s: page_rows(s)[0] == 1 and page_rows(s)[2],
                      "the first page again, in id order")
            pane.keys("End")
            s = pane.wait(lambda s: page_rows(s)[1] == len(tids) and page_rows(s)[2],
                          "the last page, in id order")
            expect(view_rows(s)[1][-1][0] == max(tids), "End: the last row is not the highest "
                   "id %d" % max(tids), *pane.details(s))
        check("H lists the threads busiest first (the spinner on top); by TID, PgDn pages "
              "through all 1,001, Home and End", paging)

        def sort_name():
            sort_to("name")
            pane.keys("Home")
            def names(s):
                return [n for _, n in view_rows(s)[1]]
            s = pane.wait(lambda s: view_rows(s)[0].group(5) == "name"
                          and view_rows(s)[0].group(1) == "1" and names(s) == sorted(names(s)),
                          "sorted by name, the first page in order")
            names = [n for _, n in view_rows(s)[1]]
            expect(names == sorted(names), "sorted by name, the first rows are %s" % names[:5],
                   *pane.details(s))
            # the names threading gives them, on every version
            expect(names[:2] == ["MainThread", "pool-0000"],
                   "sorted by name, the first are %s" % names[:2], *pane.details(s))
        check("s cycles the sort to name: in order (MainThread, then pool-0000)", sort_name)

        def filters():
            text = "pool-0999"
            pane.keys("/")
            pane.type(text)
            pane.keys("Enter")
            s = pane.wait(lambda s: view_rows(s)[0].group(4) == str(len(tids)) and
                          view_rows(s)[1] and view_rows(s)[1][0][1] == text,
                          "the view filtered by %s, its row drawn" % text)
            title, rows = view_rows(s)
            expect(title.group(3) == "1" and len(rows) == 1, "filter %s: %s, rows %s"
                   % (text, title.group(0), rows), *pane.details(s))
            expect(rows[0][1] == "pool-0999", "filter pool-0999 shows %s" % (rows,),
                   *pane.details(s))
            pane.keys("Enter")
            # One capture can land between two writes of a frame: wait for
            # the whole table (its title, no view's) of that thread.
            pane.wait(lambda s: s.showing and s.showing.group(4) == str(rows[0][0]) and
                      s.title and not any(VIEW_TITLE_RE.match(ln) for ln in s.lines),
                      "the table of thread %d after Enter, the threads view closed"
                      % rows[0][0])
        check("/ filters by name to one thread; Enter shows its functions",
              filters)

    with rig.Target(suite, interp, "pool_churn.py", park=rig.PARK_NONE) as target, \
            Tmux("churn") as tmux:
        pane = Pane(tmux, "churn", ["--delay", DELAY, "-p", target.pid], workdir, size=(120, 30))

        def no_stale_rows():
            pane.wait(lambda s: counts(s)["total"] >= 500, "the pool in the header",
                      timeout=3 * SCREEN_TIMEOUT)
            pane.keys("H")
            sort_to("busiest")
            tasks = "/proc/%d/task" % target.pid
            # Rows of threads that had ended when the screen was read. The
            # short-lived threads run while the pool sleeps, so they are on
            # the first page sorted busiest first, wherever their ids fall:
            # ids wrap at pid_max, often within these 10 s of churn.
            dead = {}
            deadline = time.monotonic() + 10
            while len(dead) < 3 and time.monotonic() < deadline:
                pane.keys("Home")
                time.sleep(0.2)
                s = whole()
                now = time.monotonic()
                alive = set(int(t) for t in os.listdir(tasks))
                for tid, _ in view_rows(s)[1]:
                    if tid not in alive:
                        dead.setdefault(tid, now)
            expect(dead, "no row of a thread that had ended in 10 s of churn: the check "
                   "saw nothing", *pane.details(s))
            # 3 s later (the 2 s a row stays, and a refresh): each one's row
            # is gone, looked up by the filter.
            time.sleep(max(0, max(dead.values()) + 3 - time.monotonic()))
            for tid in dead:
                pane.keys("/")
                pane.type(str(tid))
                pane.keys("Enter")
                s = pane.wait(lambda s: view_rows(s)[0].group(4) and s.line_starting(
                    " Threads ").rstrip().endswith("filter: %d" % tid),
                              "the view filtered by %d" % tid)
                expect(tid not in [t for t, _ in view_rows(s)[1]],
                       "thread %d ended %.1f s ago and still has a row"
                       % (tid, time.monotonic() - dead[tid]), *pane.details(s))
                # One key at a time: Escape then a key reads as Alt+key.
                pane.keys("Escape")
                pane.wait(lambda s: view_rows(s) and "filter:" not in s.line_starting(
                    " Threads "), "no filter after Esc")
        check("thread churn (~1,000/s) beside a 500-thread pool: a thread's row goes within "
              "3 s of its end", no_stale_rows)

    with rig.Target(suite, interp, "brief_thread.py", args=(8,), park=rig.PARK_NONE) as target, \
            Tmux("brief") as tmux:
        pane = Pane(tmux, "brief", ["--delay", DELAY, "-p", target.pid], workdir, size=(120, 30))
        idle, brief = target.info["idle_tid"], target.info["brief_tid"]

        def tab_cycle():
            """The threads Tab visits from "all threads" back to it."""
            pane.wait(lambda s: s.showing and s.showing.group(3) == "all threads",
                      "all threads shown")
            visited = []
            for _ in range(16):
                pane.keys("Tab")
                s = pane.wait(lambda s: s.showing and (s.showing.group(3) == "all threads" or (
                    visited and s.showing.group(4) != str(visited[-1])) or (
                        not visited and s.showing.group(4))), "the next thread after Tab")
                if s.showing.group(3) == "all threads":
                    return visited
                visited.append(int(s.showing.group(4)))
            raise Fail("Tab never came back to all threads: %s" % visited, *pane.details())

        def tab_skips_ended():
            # Seen while it runs, then ended for longer than its row stays.
            pane.wait(lambda s: str(brief) in s.text, "the brief thread %d on the screen"
                      % brief, timeout=3 * SCREEN_TIMEOUT)
            expect(brief in tab_cycle(), "Tab did not visit the brief thread %d while it ran"
                   % brief, *pane.details())
            deadline = time.monotonic() + 30
            while os.path.exists("/proc/%d/task/%d" % (target.pid, brief)):
                if time.monotonic() > deadline:
                    raise Fail("the brief thread %d did not end" % brief)
                time.sleep(0.1)
            time.sleep(3)
            visited = tab_cycle()
            expect(brief not in visited and {target.pid, idle} <= set(visited),
                   "Tab visited %s: the brief thread %d ended 3 s ago" % (visited, brief),
                   *pane.details())
        check("Tab visits the threads that have rows: not one that ended 3 s ago",
              tab_skips_ended)
    return results


# A table row with the baseline's delta: OWN% TOTAL% ΔTOTAL ... FUNCTION
DELTA_ROW_RE = re.compile(r"^\s*(\d+\.\d)\s+(\d+\.\d)\s+([+-]\d+\.\d|new)\s+.*?\s(\S+)\s+\S+:\d+\s*$")


def baseline_checks(suite, interp, base):
    """1: d marks a baseline; split.py's spend_75 made twice as slow (SIGUSR1)
    shows ΔTOTAL up for spend_75 and down for spend_25; d clears it."""
    results = check = Checks()
    workdir = new_workdir(base, "baseline")
    with rig.Target(suite, interp, "split.py", park=rig.PARK_NONE) as target, \
            Tmux("baseline") as tmux:
        pane = Pane(tmux, "baseline", ["--delay", "1", "-p", target.pid], workdir)

        def deltas(s):
            out = {}
            for line in s.lines:
                m = DELTA_ROW_RE.match(line)
                if m and m.group(3) != "new":
                    out[m.group(4)] = float(m.group(3))
            return out

        def marked():
            pane.wait_table()
            time.sleep(2)   # a window or two of the old split
            pane.keys("d")
            s = pane.wait(lambda s: "\u0394TOTAL" in s.text and "\u0394 since" in (s.title or "")
                          and {"spend_75", "spend_25"} <= set(deltas(s)),
                          "the \u0394TOTAL column and '\u0394 since' after d")
            d = deltas(s)
            expect(abs(d["spend_75"]) < 6 and abs(d["spend_25"]) < 6,
                   "just after the mark the deltas are %s" % d, *pane.details(s))
            os.kill(target.pid, signal.SIGUSR1)   # 75/25 becomes about 86/14
            s = pane.wait(lambda s: deltas(s).get("spend_75", 0) >= 5
                          and deltas(s).get("spend_25", 0) <= -5,
                          "spend_75 up and spend_25 down by >= 5 points", timeout=10)
            pane.keys("d")
            pane.wait(lambda s: "\u0394TOTAL" not in s.text and s.rows,
                      "the table without the delta after d again")
        check("d marks a baseline: spend_75 made 2x slower shows \u0394TOTAL >= +5, spend_25 "
              "<= -5; d clears it", marked)
    return results


ONCE_TESTS = 5 + 6 + 6 + 1


def run_once(tap, suite, interps, base):
    available = [i for i in interps if suite.has(i)]
    if not available:
        for i in range(ONCE_TESTS):
            tap.skip("once (%d)" % (i + 1), "no interpreter in the root")
        return
    try:
        results = once_checks(suite, available[0], base)
    except Fail as failure:
        results = [("once (%d)" % (i + 1), failure) for i in range(5)]
    try:
        results += newuser_checks(suite, available[0], base)
    except Fail as failure:
        results += [("new user (%d)" % (i + 1), failure) for i in range(6)]
    # A Python that names its threads for the kernel, when there is one.
    pool_interp = next((i for i in available if re.fullmatch(r"python3\.1[4-9]", i)),
                       available[0])
    try:
        results += pool_checks(suite, pool_interp, base)
    except Fail as failure:
        results += [("threads view (%d)" % (i + 1), failure) for i in range(6)]
    try:
        results += baseline_checks(suite, available[0], base)
    except Fail as failure:
        results += [("baseline (1)", failure)]
    for desc, failure in results:
        if failure:
            tap.not_ok(desc, failure.lines)
        else:
            tap.ok(desc)
    for i in range(len(results), ONCE_TESTS):
        tap.not_ok("once (%d)" % (i + 1), ["not run"])


# ----------------------------------------------------------------------
# main
# ----------------------------------------------------------------------

def main():
    if not os.path.isdir(rig.ROOT):
        return rig.root_missing()
    if os.sep in rig.BIN:
        rig.BIN = os.path.abspath(rig.BIN)
    else:
        rig.BIN = shutil.which(rig.BIN) or rig.BIN
    if not (os.path.isfile(rig.BIN) and os.access(rig.BIN, os.X_OK)):
        print("Bail out! binary under test not found: %s (set TT_BIN)" % rig.BIN)
        return 1
    if os.geteuid() != 0 or rig.CHROOT is None:
        print("Bail out! must run as root with chroot(8) available")
        return 1
    if shutil.which("tmux") is None:
        if os.environ.get("CI") == "true":
            print("Bail out! tmux(1) not found")
            return 1
        print("1..0 # SKIP tmux(1) not found")
        return 0
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    interps = rig.suite_interps(layout_free=True)
    started = time.monotonic()
    tap = rig.Tap(ONCE_TESTS + len(interps) * len(PER_INTERPRETER_TESTS))
    tap.comment("binary: %s; root: %s; %dx%d panes, --delay %s"
                % (rig.BIN, rig.ROOT, COLS, ROWS, DELAY))
    suite = rig.Suite(interps, rig.random.Random(0))
    base = tempfile.mkdtemp(prefix="tt-tui-")
    try:
        run_once(tap, suite, interps, base)
        for interp in interps:
            t0 = time.monotonic()
            run_interp(tap, suite, interp, base)
            if suite.has(interp):
                tap.comment("%s: %.1f s" % (interp, time.monotonic() - t0))
    finally:
        suite.cleanup()
        if os.environ.get("TT_KEEP"):
            tap.comment("kept " + base)
        else:
            shutil.rmtree(base, ignore_errors=True)
    tap.comment("%d of %d failed; runtime %.1f s"
                % (tap.failures, tap.planned, time.monotonic() - started))
    return 1 if tap.failures or tap.number != tap.planned else 0


if __name__ == "__main__":
    sys.exit(main())
