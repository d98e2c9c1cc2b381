#!/usr/bin/env python3
"""Never blind on a busy machine (TAP): a hung server on a loaded host must
still be seen.

Reuses the target rig of functional.py (same environment variables). Once,
against the first interpreter present (the engine's scheduling, the same
whatever the target's layout), for a pool of 1,000 idle threads and one of
10, each beside a spinning main thread, with K = 0, 1, 2 and 4 busy
processes on the machine (started in tachyon-top's own session: the kernel
shares CPUs among sessions first, so hogs in another session would leave
it more), checks that `--batch`, `record` and `bench -d 1.5`, each
at 10,000 samples/s (five times the live view's default rate), and
`--batch` at the live view's default rate:

  - end within 0.5 s of their 1.5 s, and
  - take at least 1,000 samples/s over their run (half the rate asked,
    where that is less);
  - with missed deadlines, say why in words that name the machine's load
    once more tasks want a CPU than there are (batch's rate line).

Under the sanitizers a sample is several times slower and a starved
sanitized build says nothing of the release's scheduling: skipped there.
"""

import json
import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import functional as rig  # noqa: E402
from functional import Fail, Skip, expect, show  # noqa: E402

RUN_TIMEOUT = 60
SECONDS = 1.5
SLACK = 0.5           # the duration's meaning: ended within this of it
RATE = 10000          # well above the default rate: the harder case
FLOOR = min(1000, RATE / 2)
HOGS = (0, 1, 2, 4)
POOLS = (1000, 10)


def timed(*args):
    """Run tachyon-top: (Run, wall seconds); a crash or hang fails."""
    argv = [rig.BIN] + [str(a) for a in args]
    started = time.monotonic()
    try:
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise Fail("tachyon-top %s hung" % " ".join(argv[1:]))
    took = time.monotonic() - started
    run = rig.Run(argv, proc.returncode, proc.stdout, proc.stderr)
    crash = run.crash()
    if crash:
        raise Fail("%s crashed: %s" % (run.cmd, crash), *run.details())
    run.expect_success()
    return run, took


def batch_rate(run):
    """(samples/s, the session's rate line) from --batch's final table."""
    lines = [ln for ln in run.out.decode(errors="replace").splitlines()
             if ln.startswith("rate ")]
    m = re.search(r"samples (\d+); session ([\d.]+) s", lines[-1]) if lines else None
    if not m:
        raise Fail("no session rate line in --batch's output", *run.details())
    return int(m.group(1)) / max(float(m.group(2)), 1e-9), lines[-1]


def record_rate(run):
    m = re.search(r"(\d+) samples in ([\d.]+) s", run.err.decode(errors="replace"))
    if not m:
        raise Fail("record said no figures", *run.details())
    return int(m.group(1)) / max(float(m.group(2)), 1e-9)


def bench_rate(run):
    try:
        doc = json.loads(run.out)
    except ValueError as error:
        raise Fail("bench --json output is not JSON: %s" % error, *run.details())
    return doc["samples"] / max(doc["seconds"], 1e-9)


def busy_check(threads, hogs):
    def check(ctx):
        if rig.sanitized(rig.BIN):
            raise Skip("a sanitized build's speed says nothing of the release's scheduling")
        pid = ctx.target.pid
        out = rig.in_root(os.path.join(ctx.target.dir, "busy.txt"))
        spinners = [subprocess.Popen(["sh", "-c", "while :; do :; done"])
                    for _ in range(hogs)]
        try:
            time.sleep(0.3)
            figures, bad = [], []
            run, took = timed("-p", pid, "--batch", "-d", SECONDS, "--delay", SECONDS,
                              "-r", RATE, "--limit", "3")
            rate, line = batch_rate(run)
            figures.append(("--batch", took, rate, run, FLOOR))
            missed = re.search(r"missed ([\d.]+)%", line)
            if missed and float(missed.group(1)) >= 10 and hogs >= 2:
                expect("the machine is busy:" in line,
                       "%d busy processes, %s%% missed: the rate line does not blame the "
                       "machine: %s" % (hogs, missed.group(1), show(line)), *run.details())
            # The live view's own rate, whatever it is: the same floor, of its half
            run, took = timed("-p", pid, "--batch", "-d", SECONDS, "--delay", SECONDS,
                              "--limit", "3")
            rate, line = batch_rate(run)
            asked = re.search(r"requested (\d+)/s", line)
            if not asked:
                raise Fail("--batch's rate line names no requested rate: %s" % show(line),
                           *run.details())
            floor = min(FLOOR, int(asked.group(1)) / 2)
            figures.append(("--batch at its default %s/s" % asked.group(1), took, rate, run,
                            floor))
            run, took = timed("record", "-p", pid, "-d", SECONDS, "-r", RATE, "-o", out)
            figures.append(("record", took, record_rate(run), run, FLOOR))
            run, took = timed("bench", "-p", pid, "-d", SECONDS, "-r", RATE, "--json")
            figures.append(("bench", took, bench_rate(run), run, FLOOR))
        finally:
            for s in spinners:
                s.kill()
                s.wait()
        said = "; ".join("%s %.2f s %.0f/s" % (what, took, rate)
                         for what, took, rate, _, _ in figures)
        for what, took, rate, run, floor in figures:
            if took > SECONDS + SLACK or rate < floor:
                bad.append(run)
        print("# %d threads, %d busy: %s" % (threads, hogs, said), flush=True)
        expect(not bad, "%d idle threads beside %d busy processes, -d %g: %s (at most %.1f s "
               "and at least %d/s each)" % (threads, hogs, SECONDS, said, SECONDS + SLACK, FLOOR),
               *[d for run in bad for d in run.details()])
    return check


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
    interps = rig.suite_interps(layout_free=True)
    seed = int(os.environ.get("TT_SEED") or rig.random.randrange(10**6))
    started = time.monotonic()
    tap = rig.Tap(len(POOLS) * len(HOGS))
    tap.comment("binary: %s; root: %s; %d CPUs" % (rig.BIN, rig.ROOT, os.cpu_count()))
    suite = rig.Suite(interps, rig.random.Random(seed))
    try:
        first = next((i for i in interps if suite.has(i) and not i.startswith("libpython")),
                     None)
        for threads in POOLS:
            tests = [("%d idle threads and a spinner, %d busy processes beside: batch, record "
                      "and bench -d %g end on time and take >= %d samples/s; batch at the "
                      "default rate too"
                      % (threads, k, SECONDS, FLOOR), busy_check(threads, k)) for k in HOGS]
            if first is None:
                for desc, _ in tests:
                    tap.skip(desc, "no interpreter in the root")
                continue
            group = rig.Group("pool.py", rig.PARK_NONE, tests, args=(threads,))
            rig.run_group(tap, suite, first, group)
    finally:
        suite.cleanup()
    tap.comment("%d of %d failed; runtime %.1f s"
                % (tap.failures, tap.planned, time.monotonic() - started))
    return 1 if tap.failures or tap.number != tap.planned else 0


if __name__ == "__main__":
    sys.exit(main())
