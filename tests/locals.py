#!/usr/bin/env python3
"""dump --locals against the target's own repr(): every built-in type the
way repr() writes it, containers cut where the limits say, user objects by
their class, a counter that changes while read never garbage, hostile text
inert. Emits TAP. Needs root and the provisioned target root."""

import json
import os
import re
import shutil
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import functional as rig  # noqa: E402
import kwait  # noqa: E402  (the live view in a tmux pane)
import tui  # noqa: E402
from functional import expect, show  # noqa: E402

SCRIPT = "locals.py"


def oracle_frame(doc, tid):
    thread = rig.threads_by_tid(doc)[tid]
    frames = [f for f in thread["frames"] if f["func"] == "holding"]
    expect(frames, "no holding() frame in thread %d: %s" % (tid, show(thread["frames"])))
    return frames[0]


def test_oracle(ctx):
    """Each local's repr and type as the target's own repr() and type()."""
    target = ctx.target
    doc = rig.tachyon("dump", "--locals", "--json", "-p", target.pid).json(target.pid)
    frame = oracle_frame(doc, target.info["roles"]["oracle"])
    got = {l["name"]: l for l in frame["locals"]}
    wants = target.info["wants"]
    bad = []
    for name, want in sorted(wants.items()):
        have = got.get(name)
        if not have or have["repr"] != want["repr"] or have["type"] != want["type"]:
            bad.append("%s: %s, want %s" % (name, show(have), show(want)))
    expect(not bad, "%d of %d locals differ from repr()" % (len(bad), len(wants)), *bad)
    kinds = {l["name"]: l["kind"] for l in frame["locals"]}
    expect([l["name"] for l in frame["locals"][:5]] == ["url", "retries", "timeout", "extra",
                                                          "options"]
           and all(kinds[n] == "arg" for n in ("url", "retries", "timeout", "extra", "options"))
           and kinds.get("big") == "cell" and kinds.get("nan") == "local"
           and got["unset"]["repr"] == "<unbound>",
           "arguments first, the captured one a cell, the deleted one unbound: %s"
           % show([(l["name"], l["kind"]) for l in frame["locals"]]))
    mega = got["mega"]["repr"]
    expect(mega.startswith("'xxxx") and mega.endswith("'... (1048576 chars)")
           and len(mega) < 400, "the 1 MB str: %s" % show(mega, 300))


def test_text(ctx):
    """The text dump: name = value under the frame, nothing raw from the
    target (the hostile str's escape and bidi override escaped)."""
    target = ctx.target
    run = rig.tachyon("dump", "--locals", "-p", target.pid)
    run.expect_success()
    out = run.out.decode("utf-8", "replace")
    expect("\x1b" not in out and "\u202e" not in out, "raw escape or bidi override in text",
           *run.details())
    want = target.info["wants"]["nested"]["repr"]
    expect(re.search(r"^        nested = %s$" % re.escape(want), out, re.M),
           "no 'nested = %s' line under the frame" % want, *out.splitlines()[:60])
    expect(re.search(r"^    holding \(.*\)\n        url = 'http://example.com/x'$", out, re.M),
           "the frame's first local is not under its line", *out.splitlines()[:60])


def test_changing(ctx):
    """A counter's local read while it counts: an int it held, or
    <changing>, never garbage; dumps 20 times."""
    target = ctx.target
    tid = target.info["roles"]["counter"]
    seen = []
    for _ in range(20):
        doc = rig.tachyon("dump", "--locals", "--json", "-p", target.pid).json(target.pid)
        frames = [f for f in rig.threads_by_tid(doc)[tid]["frames"] if f["func"] == "counter"]
        if not frames or frames[0].get("locals") is None:
            continue   # the frame moved while read: said, not garbage
        i = [l for l in frames[0]["locals"] if l["name"] == "i"]
        expect(i, "no i in counter(): %s" % show(frames[0]))
        seen.append(i[0]["repr"])
    ints = [int(r) for r in seen if re.fullmatch(r"\d+", r)]
    expect(seen and all(re.fullmatch(r"\d+", r) or r == "<changing>" for r in seen)
           and ints == sorted(ints), "the counter read as %s" % seen)
    rig.Tap.emit("# counter: %d reads, %d values, %d <changing>"
                 % (len(seen), len(ints), seen.count("<changing>")))


def test_not_asked(ctx):
    """Without --locals no value is read or printed."""
    target = ctx.target
    doc = rig.tachyon("dump", "--json", "-p", target.pid).json(target.pid)
    frame = oracle_frame(doc, target.info["roles"]["oracle"])
    expect("locals" not in frame, "locals without --locals: %s" % show(frame))


def test_inspector(ctx):
    """The live view: H, the oracle thread found by its id, i: its frames
    and the locals of holding(); Down: the frame below it and its own."""
    target = ctx.target
    tid = target.info["roles"]["oracle"]
    with kwait.live_view("locals", ctx.interp, target.pid, extra=("-r", "200")) as pane:
        pane.keys("H")
        pane.wait(lambda s: "Threads" in s.text, "the threads view")
        pane.keys("/")
        pane.type(str(tid))
        pane.keys("Enter")
        pane.wait(lambda s: "1-1 of 1 matching" in s.text and
                  re.search(r"^[ >] +%d " % tid, s.text, re.M),
                  "thread %d alone in the list" % tid)
        pane.keys("i")
        pane.wait(lambda s: "Locals of holding" in s.text and
                  "url = 'http://example.com/x'" in s.text and "values as read" in s.text,
                  "the inspector on holding(): url's value", timeout=tui.SCREEN_TIMEOUT)
        pane.keys("Down")
        pane.wait(lambda s: re.search(r"Locals of Thread\.run", s.text) and
                  re.search(r"self = <threading\.Thread object at 0x", s.text),
                  "the frame below holding(): Thread.run and its self",
                  timeout=tui.SCREEN_TIMEOUT)


TESTS = [
    ("dump --locals --json: every local's repr and type as the target's own repr()",
     test_oracle),
    ("dump --locals: name = value lines under the frame; hostile text escaped", test_text),
    ("a counter read while it counts: ints it held, in order, or <changing>", test_changing),
    ("without --locals: no values", test_not_asked),
    ("the live view's inspector: i on a thread shows its frames and the selected frame's "
     "locals; Down moves to the frame below and its locals", test_inspector),
]


class Ctx:
    def __init__(self, suite, interp, target):
        self.suite, self.interp, self.target = suite, interp, target


def run_interp(tap, suite, interp):
    names = ["%s: %s" % (interp, d) for d, _ in TESTS]
    if not suite.has(interp):
        for name in names:
            tap.skip(name, "%s not in the root" % interp)
        return
    pending = list(zip(names, TESTS))
    try:
        with rig.Target(suite, interp, SCRIPT, park=rig.PARK_MAIN) as target:
            ctx = Ctx(suite, interp, target)
            while pending:
                name, (_, fn) = pending.pop(0)
                tap.run(name, fn, ctx)
    except rig.Fail as failure:
        for name, _ in pending:
            tap.not_ok(name, failure.lines)


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
    interps = rig.suite_interps()
    started = time.monotonic()
    tap = rig.Tap(len(interps) * len(TESTS))
    tap.comment("binary: %s; root: %s" % (rig.BIN, rig.ROOT))
    suite = rig.Suite(interps, rig.random.Random(0))
    try:
        for interp in interps:
            run_interp(tap, suite, interp)
    finally:
        suite.cleanup()
    tap.comment("%d of %d failed; runtime %.1f s"
                % (tap.failures, tap.planned, time.monotonic() - started))
    return 1 if tap.failures or tap.number != tap.planned else 0


if __name__ == "__main__":
    sys.exit(main())
