#!/usr/bin/env python3
"""Tests of the call tree and flame views (TAP), driven through tmux, and of
`--batch --tree`, on tests/targets/calltree.py: its main thread spends 75%
of the time in main_loop -> a -> b -> c and 25% in a -> d (spinning, so in
cpu mode these are the shares), and a thread named "deep" sleeps 200 frames
deep in recurse (wall mode only).

Per interpreter, one live screen (-m cpu, 100x30) goes through:
  1. v: the call tree with the hot path open, b's and d's shares of a
     (session, w) as the target measured them (designed 75/25), +- 4;
  2. Left / Right and - / + close and open a node; Enter shows the detail
     view, Esc comes back;
  3. the deep thread alone (Tab) in wall mode: * opens the whole subtree, End
     reaches the line saying the depth cap (64) cut the 200-deep stacks;
     > and < move the fold threshold;
  4. f: the flame graph; the widest frame under the root is <module>, under a
     (selected with Down and zoomed into with Enter) it is b, as wide as its
     measured share; the status line names the selected frame, its file:line, samples
     and %; Esc zooms out one level at a time;
  5. resize to 80x24 and 250x60 in both views: still drawn, full width;
and two --batch --tree runs after it, one at a time: cpu mode (b and d at the
measured split +- 4, indented under a) and wall mode (the depth-cap line under recurse).

Interpreters: TT_TREE_INTERPS, else "python3.13 python3.15" (the oldest and
newest layouts; the views do not depend on the interpreter beyond what the
function table's tests cover on every build), narrowed to those TT_INTERPS
names when it is set (or its first one). TT_KEEP keeps the captures.

Shares are judged against the split the target measured itself over the same
stretch of time (calltree.py publishes it), +- 4 points: the designed 75/25
drifts on a loaded machine, the profile must follow what really happened.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import functional as rig  # noqa: E402
import tui  # noqa: E402
from functional import Fail, expect  # noqa: E402

SCRIPT = "calltree.py"
COLS, ROWS = 100, 30
DELAY = "0.5"
SESSION_MIN = 4.0          # s of samples before judging the 75/25 split (a longer
                           # session: the target's own clock and the screen's counts
                           # cannot start and end at the very same instant)
TOL = 4                    # percentage points
BATCH_TIMEOUT = 30
DEFAULT = "python3.13 python3.15"
END = tui.END
HOME = tui.HOME


# ----------------------------------------------------------------------
# Reading the views
# ----------------------------------------------------------------------

class Node:
    def __init__(self, total, own, depth, mark, name, where):
        self.total, self.own, self.depth = total, own, depth
        self.mark, self.name, self.where = mark, name, where

    def __repr__(self):
        return "%s%s %.1f" % ("  " * self.depth, self.name, self.total)


def tree_rows(screen):
    """The call tree's rows: [Node]; fold and cut rows have mark '…'."""
    lines = screen.lines
    for i, line in enumerate(lines):
        if line.startswith(" TOTAL%") and "CALL TREE" in line:
            start = line.index("CALL TREE")
            out = []
            for row in lines[i + 1:-1]:
                m = re.match(r"\s*(\d+\.\d)\s+(\d+\.\d)?", row[:start])
                if not m:
                    break
                rest = row[start:]
                depth = 0
                while rest.startswith("\u2502 "):
                    depth += 1
                    rest = rest[2:]
                dm = re.match(r"\[(\d+)\] ", rest)
                if dm:
                    depth = int(dm.group(1))
                    rest = rest[dm.end():]
                if rest.startswith("\u2026"):
                    out.append(Node(float(m.group(1)), 0.0, depth, "\u2026", rest.strip(), ""))
                    continue
                mark, rest = rest[:1], rest[2:]
                name, _, where = rest.partition("  ")
                out.append(Node(float(m.group(1)), float(m.group(2) or 0), depth, mark,
                                name.strip(), where.strip()))
            return out
    return []


def child(rows, parent, name):
    """The row named *name* directly under *parent* (a Node), or None."""
    i = rows.index(parent)
    for r in rows[i + 1:]:
        if r.depth <= parent.depth:
            return None
        if r.depth == parent.depth + 1 and r.name == name:
            return r
    return None


def path(rows, names):
    """The rows of a path of names from a top-level row, or None."""
    at = next((r for r in rows if r.depth == 0 and r.name == names[0]), None)
    found = [at]
    for name in names[1:]:
        if at is None:
            return None
        at = child(rows, at, name)
        found.append(at)
    return found if at is not None else None


def flame_title(screen):
    return next((line for line in screen.lines if line.startswith(" Flame graph ")), None)


def flame_rows(screen):
    """The flame graph's rows under its title."""
    for i, line in enumerate(screen.lines):
        if line.startswith(" Flame graph "):
            return screen.lines[i + 1:-1]
    return []


def frames_on(row):
    """[(start column, label)] of the frames on one flame row (labels end at
    two spaces or the end: a frame's last cell is a gap)."""
    return [(m.start(), m.group(1)) for m in re.finditer(r"(\S+(?: \S+)*)", row)]


def widths(row, cols):
    """[(label, width)] of the labelled frames on a row, width up to the next
    frame's start (or the row's end)."""
    frames = frames_on(row)
    out = []
    for k, (x, label) in enumerate(frames):
        end = frames[k + 1][0] if k + 1 < len(frames) else len(row.rstrip()) + 1
        out.append((label, end - x))
    return out


STATUS_RE = re.compile(r" (\S+)  (\S+) samples  (\d+\.\d)%(?: \((\d+\.\d)% of the zoom\))?"
                       r"  \((.+):(\d+)\)")


# ----------------------------------------------------------------------
# Steps (in order, on one screen)
# ----------------------------------------------------------------------

class Ctx:
    def __init__(self, suite, interp, workdir):
        self.suite, self.interp, self.workdir = suite, interp, workdir
        self.target = self.tmux = self.ui = None
        self.batches = []
        self.captures = {}
        self.ui_split0 = None

    def measured(self):
        """The target's own running totals of seconds spent in b and in d."""
        deadline = time.monotonic() + 5
        while True:
            try:
                with open(rig.in_root(self.target.info["split"])) as f:
                    m = json.load(f)
                return m["b"], m["d"]
            except (OSError, ValueError, KeyError):
                if time.monotonic() > deadline:
                    raise Fail("calltree.py published no split.json")
                time.sleep(0.05)


def realized(since, until):
    """b's and d's shares (%) of the time between two measurements."""
    db, dd = until[0] - since[0], until[1] - since[1]
    if db + dd <= 0:
        raise Fail("calltree.py spent no time in b or d")
    return 100.0 * db / (db + dd), 100.0 * dd / (db + dd)


def expect_split(what, got, want, detail):
    """A share on screen against the split the target measured itself (the
    design is 75/25; on a loaded machine the spins stretch and it drifts)."""
    expect(abs(got - want) <= TOL, "%s at %.1f%%; the target measured %.1f%% over the same time "
           "(designed 75/25), expected +- %d" % (what, got, want, TOL), *detail)


def wait_tree(ui, what, pred=lambda rows: True, timeout=tui.KEY_TIMEOUT):
    return ui.wait(lambda s: s.line_starting(" Call tree ") and tree_rows(s)
                   and pred(tree_rows(s)), what, timeout)


def test_hot_path(ctx):
    ui = ctx.ui
    ui.wait_table()
    # r: counts start again now, when the target's own clock is read, so
    # the session and the measurement cover the same stretch of time.
    ui.keys("r")
    ui.wait(lambda s: "counts reset" in s.status, "counts reset (r)")
    ctx.ui_split0 = ctx.measured()
    time.sleep(SESSION_MIN)
    ui.keys("w")
    ui.wait(lambda s: s.showing and s.showing.group(2).startswith("session"), "session scope")
    ui.keys("v")
    hot = ["<module>", "main_loop", "a", "b", "c", "spin"]
    screen = wait_tree(ui, "the call tree with the hot path open",
                       lambda rows: path(rows, hot) is not None, tui.SCREEN_TIMEOUT)
    split = realized(ctx.ui_split0, ctx.measured())
    rows = tree_rows(screen)
    p = path(rows, hot)
    expect(all(r.mark == "\u25be" for r in p[:-1]),
           "the hot path is not open all the way: %s" % [(r.name, r.mark) for r in p],
           *ui.details(screen))
    d = child(rows, p[2], "d")
    expect(d is not None, "a -> d missing under a", *ui.details(screen))
    # The target times b and d inside a: their shares of a's samples.
    a = p[2]
    for node, share in ((p[3], split[0]), (d, split[1])):
        expect_split(node.name + "'s share of a", 100.0 * node.total / a.total, share,
                     ui.details(screen))
    expect_split("spin's OWN under c, as a share of a", 100.0 * p[5].own / a.total, split[0],
                 ui.details(screen))
    expect(rows.index(p[3]) < rows.index(d), "b (hotter) is not listed before d",
           *ui.details(screen))
    # A message (r's "counts reset") holds the status line for 6 s.
    ui.wait(lambda s: " v table " in s.status and "collapse" in s.status,
            "the tree's keys on the status line", tui.SCREEN_TIMEOUT)
    ctx.captures["tree-100x30"] = screen.text


def test_collapse_expand(ctx):
    ui = ctx.ui
    hot = ["<module>", "main_loop", "a", "b", "c"]
    # The selection starts at the hot path's end (spin, a leaf): Left goes
    # to c, Left again closes c.
    ui.keys("Left")
    ui.keys("Left")
    wait_tree(ui, "c closed (Left) with spin gone from under it",
              lambda rows: path(rows, hot) and path(rows, hot)[-1].mark == "\u25b8"
              and path(rows, hot + ["spin"]) is None)
    ui.keys("Right")
    wait_tree(ui, "c open again (Right)", lambda rows: path(rows, hot + ["spin"]) is not None)
    ui.keys("-")
    wait_tree(ui, "c closed (-)", lambda rows: path(rows, hot + ["spin"]) is None)
    ui.keys("+")
    wait_tree(ui, "c open again (+)", lambda rows: path(rows, hot + ["spin"]) is not None)
    ui.keys("Enter")
    ui.wait(lambda s: s.line_starting(" Detail: c "), "the detail view of c after Enter")
    ui.keys("Escape")
    wait_tree(ui, "the call tree again after Esc in the detail view")


def test_depth_cap(ctx):
    ui = ctx.ui
    deep_tid = ctx.target.info["deep_tid"]
    ui.keys("M")   # cpu -> wall: the sleeping deep thread counts
    ui.wait(lambda s: s.showing and s.showing.group(1) == "wall", "wall mode")
    for _ in range(6):
        s = ui.capture()
        if s.showing and s.showing.group(4) == str(deep_tid):
            break
        ui.keys("Tab")
        time.sleep(0.3)
    screen = ui.wait(lambda s: s.showing and s.showing.group(4) == str(deep_tid)
                     and tree_rows(s), "the deep thread alone (Tab)")
    ui.raw(HOME)
    ui.keys("*")
    ui.raw(END)
    screen = wait_tree(ui, "the depth-cap line at the end after * and End",
                       lambda rows: rows[-1].mark == "\u2026"
                       and "deeper frames not shown" in rows[-1].name)
    rows = tree_rows(screen)
    depths = [r.depth for r in rows if r.name == "recurse"]
    expect(len(depths) >= 10 and depths == list(range(depths[0], 64)) and rows[-1].depth == 64,
           "recurse rows at depths %s, the cut line at %d: expected recurse down to depth 63 "
           "and the cut line at 64" % (depths, rows[-1].depth), *ui.details(screen))
    title = screen.line_starting(" Call tree ")
    expect(re.search(r"depth capped at 64 \(deepest 20\d", title),
           "the title does not say the depth is capped: %r" % title)
    ui.keys(">")
    ui.wait(lambda s: "fold < 2%" in (s.line_starting(" Call tree ") or ""), "threshold 2% (>)")
    ui.keys("<", "<")
    ui.wait(lambda s: "fold < 0.5%" in (s.line_starting(" Call tree ") or ""),
            "threshold 0.5% (< <)")
    ui.keys("<", "<", "<", ">", ">", ">", ">")
    ui.wait(lambda s: "fold < 1%" in (s.line_starting(" Call tree ") or ""), "threshold 1% again")
    # back to every thread, cpu mode
    ui.keys("m")
    for _ in range(6):
        s = ui.capture()
        if s.showing and s.showing.group(3) == "all threads":
            break
        ui.keys("Tab")
        time.sleep(0.3)
    ui.wait(lambda s: s.showing and s.showing.group(3) == "all threads"
            and s.showing.group(1) == "cpu", "all threads, cpu mode")


def test_flame(ctx):
    ui = ctx.ui
    ui.keys("f")
    screen = ui.wait(lambda s: flame_title(s) and len(flame_rows(s)) > 6
                     and flame_rows(s)[1].startswith("<module>"), "the flame graph")
    rows = flame_rows(screen)
    expect(rows[0].startswith("(all samples)"), "the flame's top row: %r" % rows[0],
           *ui.details(screen))
    under_root = widths(rows[1], COLS)
    expect(under_root and max(under_root, key=lambda w: w[1])[0] == "<module>",
           "the widest frame under the root is not <module>: %s" % under_root,
           *ui.details(screen))
    # the previous test's last message ("folding children below ...") may
    # hold the status line a moment longer
    screen = ui.wait(lambda s: STATUS_RE.match(s.status)
                     and STATUS_RE.match(s.status).group(1) == "<module>",
                     "the status line names <module>")
    ui.keys("Down", "Down")
    ui.wait(lambda s: STATUS_RE.match(s.status) and STATUS_RE.match(s.status).group(1) == "a",
            "a selected (Down Down)")
    ui.keys("Enter")
    screen = ui.wait(lambda s: "zoomed into a " in (flame_title(s) or "")
                     and frames_on(flame_rows(s)[0]) == [(0, "a")], "zoomed into a (Enter)")
    split = realized(ctx.ui_split0, ctx.measured())
    rows = flame_rows(screen)
    under_a = widths(rows[1], COLS)
    widest = max(under_a, key=lambda w: w[1]) if under_a else ("", 0)
    expect(widest[0] == "b", "under a: %s, expected b widest" % under_a, *ui.details(screen))
    expect_split("b's width under a (of %d columns)" % COLS, 100.0 * widest[1] / COLS, split[0],
                 ui.details(screen))
    ui.keys("Down")
    screen = ui.wait(lambda s: STATUS_RE.match(s.status)
                     and STATUS_RE.match(s.status).group(1) == "b", "b selected (Down)")
    m = STATUS_RE.match(screen.status)
    expect(m.group(5).endswith(SCRIPT) and m.group(4),
           "status for b: no file or share of the zoom: %r" % screen.status)
    expect_split("b's share of a on the status line", float(m.group(4)), split[0],
                 ["status: %r" % screen.status])
    ui.keys("Right")
    ui.wait(lambda s: STATUS_RE.match(s.status) and STATUS_RE.match(s.status).group(1) == "d",
            "d selected (Right)")
    ui.keys("Left", "Up")
    ui.wait(lambda s: STATUS_RE.match(s.status) and STATUS_RE.match(s.status).group(1) == "a",
            "a selected (Left Up)")
    ctx.captures["flame-100x30"] = screen.text
    ui.keys("Escape")
    ui.wait(lambda s: "zoomed into main_loop " in (flame_title(s) or ""), "one level out (Esc)")
    # One at a time: two Escape bytes in a row read as Alt-Escape.
    ui.keys("Escape")
    ui.wait(lambda s: "zoomed into <module> " in (flame_title(s) or ""), "out to <module> (Esc)")
    ui.keys("Escape")
    screen = ui.wait(lambda s: flame_title(s) and "zoomed" not in flame_title(s)
                     and flame_rows(s)[0].startswith("(all samples)"), "all the way out (Esc)")


def b_and_d(screen, cols):
    """The flame row holding b and d: (b's start, d's start), or None."""
    for row in flame_rows(screen):
        frames = dict((label, x) for x, label in frames_on(row))
        if "b" in frames and "d" in frames:
            return frames["b"], frames["d"]
    return None


def test_resize(ctx):
    ui = ctx.ui
    try:
        for cols, rows in ((80, 24), (250, 60)):
            ui.resize(cols, rows)
            screen = ui.wait(lambda s: len(s.lines) == rows and flame_title(s)
                             and b_and_d(s, cols), "the flame graph at %dx%d" % (cols, rows))
            time.sleep(1.2)
            flame = ui.capture()
            ctx.captures["flame-%dx%d" % (cols, rows)] = flame.text
            ui.keys("v")
            screen = wait_tree(ui, "the call tree at %dx%d" % (cols, rows),
                               lambda r: path(r, ["<module>", "main_loop", "a", "b"]))
            time.sleep(1.2)
            screen = ui.capture()
            ctx.captures["tree-%dx%d" % (cols, rows)] = screen.text
            expect(screen.status.startswith(" v table"), "status at %dx%d: %r"
                   % (cols, rows, screen.status))
            p = path(tree_rows(screen), ["<module>", "main_loop", "a", "b"])
            # b's frame starts the row under a and d's follows it: d's column
            # is b's share of the top frame (a when zoomed into it, else all).
            share = 100.0 * p[3].total / (p[2].total if "zoomed into a " in flame_title(flame)
                                          else 100.0)
            frames = b_and_d(flame, cols)
            expect(frames and frames[0] == 0 and abs(100.0 * frames[1] / cols - share) <= TOL,
                   "at %dx%d d starts at column %s, b has %.1f%% in the tree: the flame graph "
                   "does not span the width" % (cols, rows, frames and frames[1], share),
                   *ui.details(flame))
            ui.keys("f")
    finally:
        ui.resize(COLS, ROWS)
    ui.wait(lambda s: len(s.lines) == ROWS and flame_title(s), "back to %dx%d" % (COLS, ROWS))
    status, stty, screen = ui.quit()
    tui.expect_clean_exit(ui, status, stty, screen)


def batch_blocks(text):
    blocks = []
    for line in text.splitlines():
        if line.startswith("tachyon-top "):
            blocks.append((line, []))
        elif blocks:
            m = re.match(r"\s*(\d+\.\d\d)\s+(\d+\.\d\d)?\s+(\d+)  ( *)(.*)$", line)
            if m:
                blocks[-1][1].append((float(m.group(1)), len(m.group(4)) // 2, m.group(5)))
    return blocks


def finish_batch(ctx, mode):
    """Run one batch --tree; returns (run, rows of its final block, the
    target's split over the second window block). Each window block is
    printed when its second ends: the target's clock is read as each block
    appears, so a window and a measurement cover the same second."""
    start_batch(ctx, mode)
    argv, proc, out, err, _ = ctx.batches[-1]
    marks = []       # the target's split when the n-th window block appeared
    deadline = time.monotonic() + BATCH_TIMEOUT
    while True:
        done = proc.poll() is not None
        with open(out.name, "rb") as f:
            seen = (b"\n" + f.read()).count(b"\ntachyon-top window")
        while len(marks) < seen:
            marks.append(ctx.measured())
        if done:
            break
        if time.monotonic() > deadline:
            raise Fail("%s did not finish within %d s" % (" ".join(argv), BATCH_TIMEOUT))
        time.sleep(0.02)
    ctx.batch_split = realized(marks[0], marks[1]) if len(marks) >= 2 else None
    out.seek(0)
    err.seek(0)
    run = rig.Run(argv, proc.returncode, out.read(), err.read())
    crash = run.crash()
    expect(not crash, "%s crashed: %s" % (run.cmd, crash), *run.details())
    run.expect_success()
    rig.expect_no_control_bytes(run.out, "batch output")
    text = run.out.decode("utf-8", "replace")
    ctx.captures["batch-" + mode] = text
    blocks = batch_blocks(text)
    windows = [b for b in blocks if b[0].startswith("tachyon-top window")]
    finals = [b for b in blocks if b[0].startswith("tachyon-top session (final)")]
    expect(finals and len(windows) >= 2 and len(marks) >= 2,
           "expected 2 window blocks and a final block", *run.details())
    return run, finals[0][1], windows[1][1]


def test_batch_cpu(ctx):
    run, final, window = finish_batch(ctx, "cpu")
    rows = window     # the second window: the stretch the target timed too
    byname = {}
    for total, depth, label in rows:
        name = label.split("  (")[0]
        byname.setdefault(name, (total, depth))
    expect("a" in byname, "a missing from the final tree", *run.details())
    for name, share in (("b", ctx.batch_split[0]), ("d", ctx.batch_split[1])):
        expect(name in byname, "%s missing from the final tree" % name, *run.details())
        expect_split(name + "'s share of a", 100.0 * byname[name][0] / byname["a"][0], share,
                     run.details())
    expect(byname["b"][1] == byname["a"][1] + 1 == byname["d"][1]
           and byname["c"][1] == byname["b"][1] + 1,
           "b and d are not indented one level under a, c under b: %s" % byname, *run.details())


def test_batch_wall(ctx):
    run, rows, _ = finish_batch(ctx, "wall")
    cut = [r for r in rows if "deeper frames not shown: depth capped at 64" in r[2]]
    expect(cut and re.search(r"deepest stack 20\d frames", cut[0][2]),
           "no depth-cap line in the wall-mode tree", *run.details())
    depth = [d for _, d, label in rows if label.startswith("recurse ")]
    expect(len(depth) >= 55, "%d recurse lines" % len(depth), *run.details())


def start_batch(ctx, mode):
    """One batch run at a time, once the live screen is gone: a second
    sampler on the target would load a small machine and skew the split."""
    extra = ["--threshold", "0.5"] if mode == "wall" else []
    out = open(os.path.join(ctx.workdir, "batch-%s.out" % mode), "w+b")
    err = open(os.path.join(ctx.workdir, "batch-%s.err" % mode), "w+b")
    # 2 s windows: under CPU contention a sampler's samples come in bursts,
    # so a second holds fewer independent looks than its count suggests.
    argv = [rig.BIN, "-p", str(ctx.target.pid), "--batch", "--tree", "-m", mode, "-d", "5",
            "--delay", "2"] + extra
    split0 = ctx.measured()
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
    ctx.batches.append((argv, proc, out, err, split0))


def stop_batches(ctx):
    for _, proc, out, err, _ in ctx.batches:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        out.close()
        err.close()


STEPS = [
    ("v: call tree, hot path open, b and d at the target's own split (75/25) +- %d" % TOL,
     test_hot_path),
    ("Left/Right and -/+ close and open c; Enter shows the detail, Esc back",
     test_collapse_expand),
    ("deep thread (Tab, wall): * opens 64 levels, End shows the depth-cap line; > < threshold",
     test_depth_cap),
    ("f: flame graph, <module> widest under the root, b (target's split +- %d) under a; Enter "
     "zoom, arrows, Esc out, status names the frame" % TOL, test_flame),
    ("resize to 80x24 and 250x60 in both views: drawn, full width; q exits cleanly",
     test_resize),
    ("--batch --tree -m cpu: b and d at the target's split over a window +- %d, under a" % TOL,
     test_batch_cpu),
    ("--batch --tree -m wall --threshold 0.5: recurse cut at depth 64, said", test_batch_wall),
]


def run_interp(tap, suite, interp, base):
    names = ["%s: %s" % (interp, desc) for desc, _ in STEPS]
    if not suite.has(interp):
        for name in names:
            tap.skip(name, "%s not in the root" % interp)
        return
    workdir = os.path.join(base, interp)
    os.makedirs(os.path.join(workdir, "config"))
    ctx = Ctx(suite, interp, workdir)
    pending = list(zip(names, [fn for _, fn in STEPS]))
    try:
        with rig.Target(suite, interp, SCRIPT, park=rig.PARK_NONE) as target, \
                tui.Tmux("tree-" + interp) as tmux:
            ctx.target, ctx.tmux = target, tmux
            try:
                ctx.ui = tui.Pane(tmux, "tree", ["-m", "cpu", "--delay", DELAY, "-p", target.pid],
                                  workdir, size=(COLS, ROWS))
                while pending:
                    name, fn = pending[0]
                    tap.run(name, fn, ctx)
                    pending.pop(0)
            finally:
                stop_batches(ctx)
    except Fail as failure:
        for name, _ in pending:
            tap.not_ok(name, failure.lines)
    keep = os.environ.get("TT_KEEP")
    if keep:
        for key, text in ctx.captures.items():
            with open(os.path.join(workdir, key + ".txt"), "w") as f:
                f.write(text)


def choose_interps():
    """TT_TREE_INTERPS; else the default pair as far as TT_INTERPS (the
    matrix a run asks for) holds it, or TT_INTERPS's first; else the pair."""
    if os.environ.get("TT_TREE_INTERPS"):
        return os.environ["TT_TREE_INTERPS"].split()
    asked = os.environ.get("TT_INTERPS", "").split()
    if not asked:
        return DEFAULT.split()
    return [i for i in DEFAULT.split() if i in asked] or asked[:1]


def main():
    if not os.path.isdir(rig.ROOT):
        return rig.root_missing()
    if os.sep in rig.BIN:
        rig.BIN = os.path.abspath(rig.BIN)
    else:
        rig.BIN = shutil.which(rig.BIN) or rig.BIN
    tui.rig.BIN = rig.BIN
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
    interps = choose_interps()
    started = time.monotonic()
    tap = rig.Tap(len(interps) * len(STEPS))
    tap.comment("binary: %s; root: %s; %dx%d panes" % (rig.BIN, rig.ROOT, COLS, ROWS))
    suite = rig.Suite(interps, rig.random.Random(0))
    base = tempfile.mkdtemp(prefix="tt-tree-")
    try:
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
