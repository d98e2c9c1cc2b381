#!/usr/bin/env python3
"""Sampler tests for tachyon-top against real interpreters (TAP).

Runs `tachyon-top bench` and `tachyon-top record` against real target
processes under every provisioned interpreter, reusing the target rig of
functional.py (same environment variables: TT_ROOT, TT_BIN, TT_BUILDDIR,
TT_INTERPS, TT_SEED, TT_KEEP). Checks:

  - cached stacks equal an independent plain walk, sample after sample, on
    a stack built to fool a cache (bench --verify);
  - a 75% / 25% CPU split by design shows in record's output within 4 points;
  - threads created and destroyed fast while bench runs: no crash, < 2% errors;
  - the target exiting during record: record stops promptly, writes the file;
  - record's collapsed and speedscope outputs are well-formed;
  - a parked deep stack costs at most 1.2 remote reads per sample;
  - 1,000 idle threads beside a spinner: at most 2 reads per sample, every
    thread in dump, the spinner on top of the live table; 10,000 (once):
    it works and says its rate; 500 idle while 1,000/s come and go (once):
    a changed list costs a batch, not a read per node;
  - attaching at full rate while the interpreter starts up, again and again
    (`--batch -r max -- COMMAND`): its half-built thread states are garbage
    to the walker, which must refuse them, never crash.
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import functional as rig  # noqa: E402
from functional import Fail, expect, show  # noqa: E402

RUN_TIMEOUT = 60
POOL_THREADS = 1000   # tests/targets/pool.py
HUGE_POOL = 10000


def run_tt(*args, timeout=RUN_TIMEOUT, preexec_fn=None):
    """Run tachyon-top; a crash, sanitizer report or hang fails the test."""
    argv = [rig.BIN] + [str(a) for a in args]
    try:
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=timeout, preexec_fn=preexec_fn)
    except subprocess.TimeoutExpired:
        raise Fail("tachyon-top %s hung" % " ".join(argv[1:]))
    run = rig.Run(argv, proc.returncode, proc.stdout, proc.stderr)
    crash = run.crash()
    if crash:
        raise Fail("%s crashed: %s" % (run.cmd, crash), *run.details())
    return run


def bench_json(pid, *extra):
    run = run_tt("bench", "-p", pid, "--json", *extra)
    run.expect_success()
    try:
        doc = json.loads(run.out)
    except ValueError as error:
        raise Fail("bench --json output is not JSON: %s" % error, *run.details())
    for key in ("samples", "errors", "seconds", "samples_per_sec", "reads_per_sample",
                "bytes_per_sample", "frame_cache", "code_cache", "batched_reads", "ring"):
        expect(key in doc, "bench --json lacks %r" % key, *run.details())
    return doc, run


def out_file(ctx, name):
    """A host path in the target's scratch directory."""
    return rig.in_root(os.path.join(ctx.target.dir if ctx.target else ctx.suite.root_scratch,
                                    name))


def collapsed_lines(path, task_frames=False):
    """(frames root-first, count) per line of a folded-stacks file; with
    *task_frames* (record --async) a frame may also be an asyncio task's
    marker, `task NAME`, which has no file and line."""
    with open(path, "rb") as f:
        data = f.read()
    rig.expect_no_control_bytes(data, path)
    lines = []
    for raw in data.decode("utf-8").splitlines():
        m = re.fullmatch(r"(.+) (\d+)", raw)
        expect(m, "malformed collapsed line: " + show(raw))
        frames = m.group(1).split(";")
        for i, frame in enumerate(frames):
            if i == 0 and re.fullmatch(r"thread \d+ .*", frame):
                continue  # record --threads
            if task_frames and frame.startswith("task "):
                continue
            expect(re.fullmatch(r".+ \(.+:-?\d+\)|<no Python frames>", frame),
                   "malformed frame %s in line %s" % (show(frame), show(raw)))
        lines.append((frames, int(m.group(2))))
    return lines


# ----------------------------------------------------------------------
# Scenarios
# ----------------------------------------------------------------------

def test_cache_matches_plain_walk(ctx):
    doc, run = bench_json(ctx.target.pid, "-d", "2", "-r", "2k", "--verify")
    checked, differ = doc["verify"]["checked"], doc["verify"]["mismatched"]
    expect(checked >= 1000, "only %d thread samples were verified" % checked, *run.details())
    # The target hops every 20 ms; only a hop landing between the cached
    # sample and the check (a few µs apart) may differ. A cache fooled by
    # the hopping would differ in about half of all samples.
    expect(differ <= checked * 0.01,
           "%d of %d cached thread samples differ from a plain walk" % (differ, checked),
           *run.details())
    expect(doc["errors"] <= doc["samples"] * 0.02, "error rate %d/%d"
           % (doc["errors"], doc["samples"]), *run.details())


def test_cache_tracks_hops(ctx):
    """Both call sites of q5() in hop() show up in a recorded profile."""
    path = out_file(ctx, "hops.txt")
    run = run_tt("record", "-p", ctx.target.pid, "-d", "2", "-r", "1000", "-o", path)
    run.expect_success()
    lines = collapsed_lines(path)
    hop_lines = {}
    for frames, count in lines:
        for frame in frames:
            m = re.fullmatch(r"hop \(.*hopper\.py:(\d+)\)", frame)
            if m:
                hop_lines[int(m.group(1))] = hop_lines.get(int(m.group(1)), 0) + count
    total = sum(hop_lines.values())
    calls = hop_call_lines()
    # 40% / 40% / 20% by design (two 5-deep naps and one direct nap). A
    # sample may also catch hop() itself between calls, on its loop line:
    # true, but rare; more than a trace anywhere else is a wrong line.
    for line in calls:
        count = hop_lines.get(line, 0)
        expect(count >= total * 0.12, "hop() line %d has only %d of %d samples: %s"
               % (line, count, total, hop_lines))
    elsewhere = sum(c for line, c in hop_lines.items() if line not in calls)
    expect(elsewhere <= total * 0.01, "hop() off its call lines %s in %d of %d "
           "samples: %s" % (calls, elsewhere, total, hop_lines))


def hop_call_lines():
    """The numbers of hopper.py's lines in hop() that call q5() or leaf()."""
    with open(os.path.join(rig.TARGETS_DIR, "hopper.py"), encoding="utf-8") as f:
        lines = f.read().split("\n")
    start = lines.index("def hop():")
    calls = []
    for number, text in enumerate(lines[start + 1:], start + 2):
        if not text.startswith(" "):
            break
        if text.strip() in ("q5()", "leaf()"):
            calls.append(number)
    assert len(calls) == 3, calls
    return calls


def own_times(target):
    """The target's own {"wall": {func: s}, "cpu": {func: s}} so far (_tt.OwnClock)."""
    path = rig.in_root(target.ready_file + ".times")
    for _ in range(100):
        try:
            with open(path, encoding="ascii") as f:
                return json.load(f)
        except (OSError, ValueError):
            time.sleep(0.02)
    raise Fail("the target published no own times in %s" % path)


def own_split(before, after, func, other, clock="wall"):
    """func's share (%) of the time the target measured in func + other."""
    spent = {n: after[clock][n] - before[clock][n] for n in (func, other)}
    both = spent[func] + spent[other]
    return 100.0 * spent[func] / both if both > 0 else 0.0


BOOST = -10   # nice of the target and sampler in split checks


def boost(pid):
    """Raise every thread of *pid* to nice BOOST: the split checks measure the
    sampler's accuracy, not how the machine's other work preempts them."""
    with contextlib.suppress(OSError):
        for tid in os.listdir("/proc/%d/task" % pid):
            with contextlib.suppress(OSError):
                os.setpriority(os.PRIO_PROCESS, int(tid), BOOST)


def boosted():
    """preexec_fn: start a process at nice BOOST (its threads inherit it)."""
    os.setpriority(os.PRIO_PROCESS, 0, BOOST)


SPLIT_SAMPLES = 4000     # samples to judge a split by; fewer: the sampler was starved


def test_cpu_split(ctx):
    """record's split of spend_75/spend_25 (75/25 of the target's CPU time by
    construction) is within 4 points of the wall-time split the target
    measured itself over the same time: a loaded machine stretches whichever
    function is preempted, so the wall split can move off 75/25. Target and
    sampler run at nice -10, and a starved sampler gets up to 3 records to
    collect its samples."""
    boost(ctx.target.pid)
    counts = {"spend_75": 0, "spend_25": 0}
    before = own_times(ctx.target)
    for attempt in range(3):
        path = out_file(ctx, "split-%d.txt" % attempt)
        run = run_tt("record", "-p", ctx.target.pid, "-d", "3", "-r", "2000", "-o", path,
                     preexec_fn=boosted)
        run.expect_success()
        for frames, count in collapsed_lines(path):
            for name in counts:
                if any(f.startswith(name + " (") for f in frames):
                    counts[name] += count
        if sum(counts.values()) >= SPLIT_SAMPLES:
            break
    after = own_times(ctx.target)
    total = sum(counts.values())
    expect(total >= 2000, "only %d samples in spend_75/spend_25" % total, *run.details())
    share = 100.0 * counts["spend_75"] / total
    truth = own_split(before, after, "spend_75", "spend_25")
    cpu = own_split(before, after, "spend_75", "spend_25", "cpu")
    print("# %s: spend_75 sampled %.1f%%; the target measured %.1f%% of its wall time, %.1f%% "
          "of its CPU time there (%d samples, %d records)"
          % (ctx.interp, share, truth, cpu, total, attempt + 1), flush=True)
    expect(abs(cpu - 75) <= 1.5, "the target spent %.1f%% of its CPU time in spend_75, not 75: "
           "the target itself is broken" % cpu)
    expect(abs(share - truth) <= 4.0, "spend_75 has %.1f%% of samples, but the target measured "
           "%.1f%% of its wall time there (+- 4 allowed; %s)" % (share, truth, counts))


def test_cpu_split_jit(ctx):
    """The same split with the JIT running the target (3.14+): jitted code
    keeps Python's frames, so the shares do not move."""
    info = ctx.target.info
    if not re.match(r"3\.(1[4-9]|[2-9]\d)", info["python"]):
        raise rig.Skip("no JIT before Python 3.14")
    if info["jit_note"]:
        raise rig.Skip(info["jit_note"])
    expect(info["jit"], "PYTHON_JIT=1: the JIT is off in Python %s" % info["python"])
    test_cpu_split(ctx)


def test_churn_under_bench(ctx):
    doc, run = bench_json(ctx.target.pid, "-d", "2")
    expect(doc["samples"] > 1000, "only %d samples" % doc["samples"], *run.details())
    rate = doc["errors"] / doc["samples"]
    expect(rate < 0.02, "error rate %.2f%% with threads churning" % (100 * rate),
           *run.details())


def test_record_formats(ctx):
    folded = out_file(ctx, "hop.collapsed")
    run = run_tt("record", "-p", ctx.target.pid, "-d", "1", "-r", "500", "-o", folded,
                 "--format", "collapsed", "--threads")
    run.expect_success()
    lines = collapsed_lines(folded)
    expect(lines, "empty collapsed profile")
    expect(all(frames[0].startswith("thread ") for frames, _ in lines),
           "--threads lines do not start with the thread")
    scope = out_file(ctx, "hop.json")
    run = run_tt("record", "-p", ctx.target.pid, "-d", "1", "-r", "500", "-o", scope)
    run.expect_success()
    with open(scope, encoding="utf-8") as f:
        doc = json.load(f)
    frames = doc["shared"]["frames"]
    expect(doc["profiles"], "speedscope file has no profiles")
    names = {fr["name"] for fr in frames}
    expect({"hop", "leaf", "q5", "second"} <= names, "frames missing: %s" % sorted(names))
    for profile in doc["profiles"]:
        expect(profile["type"] == "sampled", "profile type %s" % profile["type"])
        expect(len(profile["samples"]) == len(profile["weights"]),
               "samples and weights differ in length")
        for stack in profile["samples"]:
            expect(all(0 <= i < len(frames) for i in stack),
                   "frame index out of range in %s" % stack)


def test_deep_parked_reads(ctx):
    doc, run = bench_json(ctx.target.pid, "-d", "1")
    expect(doc["errors"] == 0, "%d errors on a parked target" % doc["errors"], *run.details())
    expect(doc["reads_per_sample"] <= 1.2, "%.3f remote reads per sample on a parked "
           "1000-frame stack" % doc["reads_per_sample"], *run.details())


def test_pool_reads(ctx):
    """1,000 threads parked beside a spinner: a sample reads what changed,
    not every thread. Steady state from two runs of different lengths
    (each pays the first walk of every thread once). The two runs must see
    the same machine: a pair where the long run took less than 1.5 times
    the short one's samples (other work came or went between them) is
    measured again, up to three times."""
    for attempt in range(3):
        short, run1 = bench_json(ctx.target.pid, "-d", "0.5")
        long_, run2 = bench_json(ctx.target.pid, "-d", "1.5")
        for doc, run in ((short, run1), (long_, run2)):
            expect(doc["errors"] == 0, "%d errors on an idle pool" % doc["errors"],
                   *run.details())
            expect(doc["interned"]["threads"] >= POOL_THREADS + 1, "%d threads seen of %d"
                   % (doc["interned"]["threads"], POOL_THREADS + 1), *run.details())
        if long_["samples"] >= 1.5 * short["samples"]:
            break
        rig.Tap.emit("# 0.5 s took %d samples, 1.5 s %d: the machine changed, measured again"
                     % (short["samples"], long_["samples"]))
    extra = long_["samples"] - short["samples"]
    expect(extra > 0, "1.5 s of bench took no more samples than 0.5 s", *run2.details())
    steady = (long_["reads_per_sample"] * long_["samples"]
              - short["reads_per_sample"] * short["samples"]) / extra
    expect(steady <= 2.0, "%.2f remote reads per sample at steady state with %d idle threads"
           % (steady, POOL_THREADS), *run2.details())
    # (It was 23/s, each sample re-reading every thread.)
    expect(long_["samples_per_sec"] >= 100, "%.0f samples/s with %d idle threads"
           % (long_["samples_per_sec"], POOL_THREADS), *run2.details())


def test_pool_dump(ctx):
    """Every thread of the pool in dump, the spinner in spin()."""
    doc = rig.dump_json(ctx.target.pid)
    rig.validate_dump(doc, ctx.target.pid)
    seen = {t["tid"] for t in doc["threads"]}
    missing = sorted(set(ctx.target.info["tids"]) - seen)
    expect(not missing, "%d of %d threads missing from dump, e.g. %s"
           % (len(missing), len(ctx.target.info["tids"]), missing[:5]))
    main = [t for t in doc["threads"] if t["tid"] == ctx.target.info["main_tid"]]
    expect(main and main[0]["frames"] and main[0]["frames"][0]["func"] == "spin",
           "the main thread is not in spin(): %s" % show(main, 300))
    parked = sum(1 for t in doc["threads"] if any(f["func"] == "pooled_wait"
                                                   for f in t["frames"]))
    expect(parked == POOL_THREADS, "%d threads in pooled_wait, expected %d"
           % (parked, POOL_THREADS))


def test_pool_live(ctx):
    """The live table (--batch, CPU mode) on the pool: spin() on top. The
    idle threads' on-CPU states are refreshed a few per sample, in turn: none
    of them may be taken for running. The live views hold at least 1,000
    samples/s there (a sanitizer's build is several times slower)."""
    run = run_tt("-p", ctx.target.pid, "-b", "-m", "cpu", "-d", "2", "--delay", "2",
                 "--limit", "3")
    run.expect_success()
    table = run.out.decode(errors="replace")
    rows = [ln for ln in table.splitlines() if re.search(r"\b(spin|pooled_wait|wait)\b", ln)]
    expect(rows and re.search(r"\bspin\b", rows[0]),
           "spin() is not the top row: %s" % show(rows[:3]), *run.details())
    rate = re.match(r"rate (\d+)/s", rate_line(run))
    expect(rate, "no rate line", *run.details())
    expect(rig.sanitized(rig.BIN) or int(rate.group(1)) >= 1000,
           "%s: under 1,000 samples/s with %d threads" % (rate_line(run), POOL_THREADS),
           *run.details())


def test_huge_pool(ctx):
    """10,000 idle threads (a sample's buffer must grow, twice): it works,
    says its rate, every thread in dump, spin() on top of the live table."""
    with rig.Target(ctx.suite, ctx.interp, "pool.py", args=(HUGE_POOL,),
                    park=rig.PARK_NONE) as target:
        # The first walk of 10,000 threads takes a second or more (several
        # under a sanitizer): a rate is not the point, working is.
        doc, run = bench_json(target.pid, "-d", "5")
        expect(doc["interned"]["threads"] == HUGE_POOL + 1, "%d threads seen of %d"
               % (doc["interned"]["threads"], HUGE_POOL + 1), *run.details())
        expect(doc["samples"] >= 10 and doc["errors"] <= 4,
               "%d samples, %d errors with %d threads" % (doc["samples"], doc["errors"],
                                                          HUGE_POOL), *run.details())
        dump = rig.dump_json(target.pid)
        expect(len(dump["threads"]) == HUGE_POOL + 1, "dump lists %d threads of %d"
               % (len(dump["threads"]), HUGE_POOL + 1))
        run = run_tt("-p", target.pid, "-b", "-m", "cpu", "-d", "4", "--delay", "4",
                     "--limit", "3")
        run.expect_success()
        text = run.out.decode(errors="replace")
        rows = [ln for ln in text.splitlines() if re.search(r"\b(spin|pooled_wait)\b", ln)]
        expect(re.search(r"^rate \d+/s", text, re.M) and rows and re.search(r"\bspin\b", rows[0]),
               "no rate, or spin() is not the top row: %s" % show(rows[:3]), *run.details())


def test_pool_churn(ctx):
    """500 idle threads while about 1,000 a second come and go: a changed
    list is read in one batch but for its new nodes; a list read torn is
    not taken for one where the pool's threads ended (they keep their
    identity); the pool is all there; the live view keeps a rate."""
    with rig.Target(ctx.suite, ctx.interp, "pool_churn.py", park=rig.PARK_MAIN) as target:
        seconds = 3
        doc, run = bench_json(target.pid, "-d", str(seconds))
        errors = doc["errors"] / max(1, doc["samples"])
        rig.Tap.emit("# %.2f reads per sample (single %.2f, list %.2f), %d samples/s, churn %d/s, "
                     "list read again %d times, %d threads seen" % (
                         doc["reads_per_sample"], doc["single_reads_per_sample"],
                         doc["proc_reads_per_sample"], doc["samples_per_sec"],
                         target.info["churn_per_s"], doc["thread_list_reads"],
                         doc["interned"]["threads"]))
        # A changed list costs a batch and a read per new node: the more
        # threads start between two samples (a slower sampler, a busy
        # machine), the more reads a sample. The builds before: 116-206
        # reads per sample when every changed list's node was read alone;
        # then 10-52 when a list read torn (a node read after its thread
        # ended, ending the list) dropped the pool, to be found again as
        # 500 new threads a few samples on -- hundreds of reads per thread
        # started. Now 1-8: its state, its first frames one by one, a pass
        # torn by a thread that ended while read read again.
        started = target.info["churn_per_s"] / max(1.0, doc["samples_per_sec"])
        allowed = 2 + 10 * started
        expect(doc["reads_per_sample"] <= allowed and errors < 0.2,
               "%.1f reads per sample (allowed %.1f: %.2f threads started a sample), %.1f%% "
               "errors with 500 idle threads and %d/s churning (%d samples/s, the list read "
               "again %d times, %d thread samples left out)"
               % (doc["reads_per_sample"], allowed, started, 100 * errors,
                  target.info["churn_per_s"], doc["samples_per_sec"], doc["thread_list_reads"],
                  doc["thread_samples_left_out"]), *run.details())
        # Each thread counts once: the pool and the main thread, and at
        # most every churned thread (most end unseen between two samples).
        # The pool lost and found again counted 22,000-32,000 in 3 s.
        seen = doc["interned"]["threads"]
        most = 501 + 2 * target.info["churn_per_s"] * seconds
        expect(500 < seen <= most, "%d threads seen, expected 500 to %d" % (seen, most),
               *run.details())
        dump = rig.dump_json(target.pid)
        pool = sum(1 for t in dump["threads"] if any(f["func"] == "pooled_wait"
                                                     for f in t["frames"]))
        expect(pool == 500, "%d threads in pooled_wait, expected 500" % pool)
        run = run_tt("-p", target.pid, "-b", "-d", "3", "--delay", "3", "--limit", "3")
        run.expect_success()
        expect(re.search(rb"^rate \d+/s", run.out, re.M), "no rate line", *run.details())


def test_big_pool_churn(ctx):
    """3,000 idle threads while about 1,500 a second come and go: the
    thread list changes at nearly every sample. A state read with the
    interpreter's block is not read again to walk the changed list, and a
    thread that ends while it is read is left out of the sample rather than
    failing every other thread's."""
    with rig.Target(ctx.suite, ctx.interp, "pool_churn.py", args=("3000",),
                    park=rig.PARK_MAIN) as target:
        doc, run = bench_json(target.pid, "-d", "3")
        samples = max(1, doc["samples"])
        # A pass torn by a thread that ended while read is read again at
        # once: the longer a pass takes (a busy machine), the more are.
        # Bytes are counted per read of the whole list, torn or not.
        reads = samples + doc["read_again"]
        per_thread = (doc["bytes_per_sample"] * samples / reads /
                      max(1.0, doc["thread_samples"] / samples))
        ts_bytes = doc["thread_state_bytes"]
        rig.Tap.emit("# %.0f bytes per thread and read of the list, %.1f thread states; %d "
                     "samples/s, %d read again, %d errors" % (
                         per_thread, per_thread / max(1, ts_bytes), doc["samples_per_sec"],
                         doc["read_again"], doc["errors"]))
        # The build before read each thread's state twice when the list
        # changed (with the block, then again to walk the list): 17-18
        # thread states' worth per thread and sample; now about 7 (the
        # state and its top frames).
        expect(ts_bytes > 0 and per_thread <= 11 * ts_bytes,
               "%.0f bytes per thread and read of the list, %.1f times a thread state's %d "
               "bytes (%d samples, %d read again)"
               % (per_thread, per_thread / max(1, ts_bytes), ts_bytes, samples,
                  doc["read_again"]), *run.details())
        # 25-29% of samples failed before; 8-14% now (torn list reads).
        errors = doc["errors"] / samples
        expect(doc["thread_samples_left_out"] > 0 and errors < 0.25,
               "%d thread samples left out, %.1f%% of samples failed"
               % (doc["thread_samples_left_out"], 100 * errors), *run.details())


def test_idle_bench_text(ctx):
    """On a parked one-thread target (7 distinct functions) the frame cache
    answers every sample after the first: bench says the code cache had no
    lookups rather than printing 0.00% hits."""
    run = run_tt("bench", "-p", ctx.target.pid, "-d", "0.5")
    run.expect_success()
    line = [ln for ln in run.out.decode().splitlines() if ln.startswith("code cache")]
    expect(line and "no lookups" in line[0] and "0.00%" not in line[0],
           "bench's code-cache line on a parked target: %s" % show(line), *run.details())


def test_read_floor(ctx):
    """bench --floor measures the cheapest possible read; a real sample,
    which makes at least one read, cannot come out cheaper than it."""
    doc, run = bench_json(ctx.target.pid, "-d", "1", "--floor")
    expect("floor" in doc, "bench --floor --json has no floor", *run.details())
    f = doc["floor"]
    expect(f["syscall_us"] > 0 and f["readv_us"] > 0 and f["readv2_us"] > 0,
           "floor figures must be positive: %r" % f, *run.details())
    # Loose bounds: the machine is shared and noisy; a floor measured wrong
    # (units, no syscall made) is off by far more.
    expect(f["readv2_us"] >= 0.6 * f["readv_us"],
           "a two-segment read cannot be cheaper than a one-segment one: %r" % f, *run.details())
    expect(f["readv_us"] >= 0.6 * f["syscall_us"],
           "a read cannot be cheaper than a bare syscall: %r" % f, *run.details())
    expect(doc["us_per_sample"] >= 0.6 * f["readv_us"],
           "%.3f us per sample is below the %.3f us read floor" % (doc["us_per_sample"],
                                                                  f["readv_us"]),
           *run.details())


def rate_line(run):
    """The batch table's "rate ..." line."""
    return next((l for l in run.out.decode("utf-8", "replace").splitlines()
                 if l.startswith("rate ")), "")


def pinned(cpu, niceness=0):
    """A preexec_fn: run on one CPU, at a nice value."""
    def setup():
        os.sched_setaffinity(0, {cpu})
        os.nice(niceness)
    return setup


def test_missed_reason(ctx):
    """Missed deadlines say why: a rate no pass can keep (10 MHz: a parked
    target's pass takes about 1 us on these VMs, so 1 MHz is kept) blames
    the work per pass; a sampler pinned to a CPU that two nice -20 spinners
    hold blames the CPU it waits for. Neither reason when nothing is
    missed."""
    pid = ctx.target.pid
    run = run_tt("-p", pid, "-b", "-d", "1", "--delay", "1", "-r", "10m", "--limit", "3")
    run.expect_success()
    line = rate_line(run)
    expect(re.search(r"missed [\d.]+% \(a pass takes [\d.]+ us, the rate leaves 0\.1 us[;)]",
                     line), "at 10 MHz: %s" % show(line), *run.details())
    run = run_tt("-p", pid, "-b", "-d", "1", "--delay", "1", "-r", "100", "--limit", "3")
    run.expect_success()
    line = rate_line(run)
    expect(re.search(r"missed [\d.]+%, errors", line),
           "at 100 Hz nothing is missed, yet a reason is given: %s" % show(line))
    cpu = min(os.sched_getaffinity(0))

    # In tachyon-top's session: with autogroups (sched_autogroup_enabled)
    # nice weighs only within a session, and spinners in sessions of their
    # own would leave the sampler a third of the CPU, not starve it.
    hogs = [subprocess.Popen(["sh", "-c", "while :; do :; done"], preexec_fn=pinned(cpu, -20))
            for _ in range(2)]
    try:
        time.sleep(0.2)
        run = run_tt("-p", pid, "-b", "-d", "1.5", "--delay", "1.5", "-r", "10k", "--limit",
                     "3", preexec_fn=pinned(cpu))
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    run.expect_success()
    line = rate_line(run)
    m = re.search(r"missed [\d.]+% \(short of CPU: waited for one (\d+)% of the time[;)]", line)
    expect(m and int(m.group(1)) >= 10,
           "pinned under two nice -20 spinners: %s" % show(line), *run.details())


def cpu_idle_seconds():
    """The machine's CPUs' idle time so far (idle and iowait), in seconds."""
    with open("/proc/stat") as f:
        fields = f.readline().split()
    return (int(fields[4]) + int(fields[5])) / os.sysconf("SC_CLK_TCK")


def wait_quiet(timeout=10.0):
    """Wait (at most timeout s) for a 0.3 s in which the machine's CPUs are
    all but a quarter of one idle: what the test before left running (a
    pool of thousands of threads being killed) is done."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        idle0 = cpu_idle_seconds()
        time.sleep(0.3)
        if (cpu_idle_seconds() - idle0) / 0.3 >= os.cpu_count() - 0.25:
            return


SHORT_SLICE_NS = 100000   # the sampler's time slice under the normal policy
SAMPLER_NICE = -10        # ... and its nice value there (as root)


def kernel_at_least(major, minor):
    m = re.match(r"(\d+)\.(\d+)", os.uname().release)
    return bool(m) and (int(m.group(1)), int(m.group(2))) >= (major, minor)


def time_slices(pid):
    """Each thread of pid: (its time slice, se.slice in its sched file, in
    ns; its nice value; its name)."""
    slices = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/sched" % (pid, tid)) as f:
                m = re.search(r"^se\.slice\s*:\s*(\d+)", f.read(), re.M)
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                stat = f.read()
            nice = int(stat.rsplit(")", 1)[1].split()[16])
            name = stat[stat.index("(") + 1:stat.rindex(")")]
        except (OSError, ValueError, IndexError):
            continue
        if m:
            slices[int(tid)] = (int(m.group(1)), nice, name)
    return slices


def test_sampler_yields(ctx):
    """With a CPU to spare, the sampler thread runs under SCHED_IDLE (a
    target thread that wakes takes its CPU at once) and tachyon-top's other
    threads under the normal policy. Pinned to a CPU that a busy thread
    holds, it never goes idle and keeps its rate; on a machine that gets
    busy while it is idle (two busy threads a CPU), it falls back to the
    normal policy and keeps most of its rate (under SCHED_IDLE it would get
    almost nothing)."""
    # The sampler leaves SCHED_IDLE when it misses more deadlines than
    # under the normal policy: a sanitized build's passes miss them for
    # their own slowness (12% at 10k/s here), so the policy it ends on says
    # nothing of the release's (as in busy.py).
    if rig.sanitized(rig.BIN):
        raise rig.Skip("a sanitized build's speed says nothing of the release's scheduling")
    with rig.Target(ctx.suite, ctx.interp, "recursion.py", park=rig.PARK_MAIN) as target:
        wait_quiet()
        argv = [rig.BIN, "-p", str(target.pid), "-b", "-d", "3", "--delay", "3", "--limit", "3"]
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        policies = {}
        try:
            # the machine's idle CPUs in each 0.3 s from the start: the
            # policy at 1.5 s follows the load all along (a busy moment
            # sends it back to the normal policy for 2 s at least)
            slices = []
            idle0 = cpu_idle_seconds()
            for _ in range(5):
                time.sleep(0.3)
                idle1 = cpu_idle_seconds()
                slices.append((idle1 - idle0) / 0.3)
                idle0 = idle1
            for tid in os.listdir("/proc/%d/task" % proc.pid):
                try:
                    policies[int(tid)] = os.sched_getscheduler(int(tid))
                except OSError:
                    pass
        finally:
            try:
                out, err = proc.communicate(timeout=RUN_TIMEOUT)
            except subprocess.TimeoutExpired:
                proc.kill()
                raise Fail("tachyon-top %s hung" % " ".join(argv[1:]))
        run = rig.Run(argv, proc.returncode, out, err)
        run.expect_success()
        idle = sorted(t for t, p in policies.items() if p == os.SCHED_IDLE)
        # The machine's own load decides: with half a CPU idle all along
        # the sampler must have gone idle; with none all along it must not
        # have; a load that came and went decides nothing here.
        spare = " ".join("%.2f" % x for x in slices)
        rig.Tap.emit("# the machine's CPUs idle in each 0.3 s to 1.5 s: %s" % spare)
        if min(slices) >= 0.5:
            expect(len(idle) == 1 and len(policies) >= 2,
                   "%s CPUs idle: threads and their policies (SCHED_IDLE = %d): %s"
                   % (spare, os.SCHED_IDLE, show(policies)), *run.details())
        elif max(slices) < 0.1:
            expect(not idle, "%s CPUs idle, yet under SCHED_IDLE: %s" % (spare, show(policies)),
                   *run.details())
        # The busy threads share tachyon-top's session: the kernel shares a
        # CPU between sessions' autogroups first, so a busy thread of
        # another session would leave an idle-policy thread its group's share.
        cpu = min(os.sched_getaffinity(0))
        hog = subprocess.Popen(["sh", "-c", "while :; do :; done"], preexec_fn=pinned(cpu))
        argv = [rig.BIN, "bench", "-p", str(target.pid), "--json", "-d", "4", "-r", "1000"]
        slices = {}
        try:
            time.sleep(0.2)
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, preexec_fn=pinned(cpu))
            try:
                time.sleep(2)
                slices = time_slices(proc.pid)
                out, err = proc.communicate(timeout=RUN_TIMEOUT)
            except subprocess.TimeoutExpired:
                proc.kill()
                raise Fail("tachyon-top %s hung" % " ".join(argv[1:]))
        finally:
            hog.kill()
            hog.wait()
        run = rig.Run(argv, proc.returncode, out, err)
        run.expect_success()
        doc = json.loads(run.out)
        expect(doc["sampler_idle_policy"] < 0.1 and doc["samples"] >= 2000,
               "pinned beside a busy thread: %d samples of 4,000 requested, idle policy %.0f%% "
               "of the time" % (doc["samples"], 100 * doc["sampler_idle_policy"]),
               *run.details())
        # Under the normal policy the sampler asks for the shortest time
        # slice (Linux 6.12+) and, as root, nice -10, so that it takes the
        # CPU when it wakes; the other threads keep the defaults.
        if kernel_at_least(6, 12) and slices:
            short = [t for t, (ns, _, _) in slices.items() if ns == SHORT_SLICE_NS]
            expect(len(short) == 1 and len(slices) >= 2,
                   "pinned beside a busy thread: one thread (the sampler) with a %d ns time "
                   "slice, the others the default: %s" % (SHORT_SLICE_NS, show(slices)),
                   *run.details())
        if slices:
            raised = [t for t, (_, nice, _) in slices.items() if nice == SAMPLER_NICE]
            others = set(nice for t, (_, nice, _) in slices.items() if t not in raised)
            own = os.getpriority(os.PRIO_PROCESS, 0)
            # named, as top -H and gdb show it
            expect(len(raised) == 1 and others == {own} and
                   slices[raised[0]][2] == "tt-sampler",
                   "pinned beside a busy thread: one thread, the sampler (tt-sampler), at nice "
                   "%d, the others at %d: %s" % (SAMPLER_NICE, own, show(slices)),
                   *run.details())
        argv = [rig.BIN, "bench", "-p", str(target.pid), "--json", "-d", "4", "-r", "1000"]
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        hogs = []
        try:
            time.sleep(1.5)
            hogs = [subprocess.Popen(["sh", "-c", "while :; do :; done"])
                    for _ in range(2 * len(os.sched_getaffinity(0)))]
            out, err = proc.communicate(timeout=RUN_TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise Fail("tachyon-top %s hung" % " ".join(argv[1:]))
        finally:
            for h in hogs:
                h.kill()
                h.wait()
        run = rig.Run(argv, proc.returncode, out, err)
        run.expect_success()
        doc = json.loads(run.out)
        # Idle before the busy threads came (a machine busy from the start
        # keeps it under the normal policy): it must have fallen back.
        was_idle = doc["sampler_idle_policy"] > 0.2
        expect(doc["samples"] >= 2000 and (doc["sampler_fallbacks"] >= 1 or not was_idle),
               "busy threads on every CPU from 1.5 s on: %d samples of 4,000 requested, "
               "%d fall-backs, idle %.0f%% of the time"
               % (doc["samples"], doc["sampler_fallbacks"], 100 * doc["sampler_idle_policy"]),
               *run.details())


def test_exit_during_record(ctx):
    """The target exits 1 s into a 30 s record: record ends promptly, keeps
    what it collected."""
    path = rig.in_root(ctx.suite.new_dir("exit-record") + ".txt")
    with rig.Target(ctx.suite, ctx.interp, "exiting.py", args=(1.0, "return"),
                    park=rig.PARK_NONE) as target:
        started = time.monotonic()
        run = run_tt("record", "-p", target.pid, "-d", "30", "-r", "1000", "-o", path)
        took = time.monotonic() - started
    run.expect_success()
    expect(took < 6, "record took %.1f s for a target that exited after 1 s" % took,
           *run.details())
    expect(b"target exited" in run.err, "record did not say the target exited",
           *run.details())
    expect(collapsed_lines(path), "record wrote an empty profile", *run.details())


def test_record_interrupted(ctx):
    """Ctrl-C (SIGINT) during record still writes the profile."""
    path = out_file(ctx, "interrupted.txt")
    proc = subprocess.Popen([rig.BIN, "record", "-p", str(ctx.target.pid), "-d", "30", "-r", "500",
                             "-o", path], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    time.sleep(1.5)
    proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise Fail("record did not stop within 10 s of SIGINT")
    run = rig.Run([rig.BIN, "record"], proc.returncode, out, err)
    crash = run.crash()
    expect(not crash, "record crashed: %s" % crash, *run.details())
    run.expect_success()
    expect(b"interrupted" in err, "record did not say it was interrupted", *run.details())
    expect(collapsed_lines(path), "record wrote an empty profile after SIGINT")


STARTUP_RUNS = 10


def test_attach_at_startup(ctx):
    """tachyon-top starts the target itself and samples at full rate from its
    first instructions on: memory the interpreter has not set up yet is read
    as it is being written. Ten short lives; every run ends cleanly and
    reports the exit status."""
    root_dir = ctx.suite.new_dir("startup")
    os.makedirs(rig.in_root(root_dir), exist_ok=True)
    for name in ("exiting.py", rig.TARGET_LIB):
        shutil.copy(os.path.join(rig.TARGETS_DIR, name), rig.in_root(root_dir))
    for i in range(STARTUP_RUNS):
        ready = os.path.join(root_dir, "ready-%d.json" % i)
        command = rig.command(ctx.suite, ctx.interp,
                              ["-E", "-s", "-B", os.path.join(root_dir, "exiting.py"), ready,
                               "0.05", "return"])
        run = run_tt("--batch", "-r", "max", "--delay", "0.3", "--", *command)
        run.expect_success()
        expect(re.search(rb"^process \d+ exited with status 0$", run.out, re.M),
               "run %d of %d: no 'process N exited with status 0' line" % (i + 1, STARTUP_RUNS),
               *run.details())
        expect(b"tachyon-top session (final)" in run.out,
               "run %d of %d: no final table" % (i + 1, STARTUP_RUNS), *run.details())


PER_INTERPRETER = [
    rig.Group("hopper.py", rig.PARK_NONE, [
        ("cached stacks equal a plain walk on a hopping stack (bench --verify)",
         test_cache_matches_plain_walk),
        ("record follows hop() across its three call sites", test_cache_tracks_hops),
        ("record writes well-formed collapsed and speedscope files", test_record_formats),
        ("record interrupted by SIGINT still writes its profile", test_record_interrupted)]),
    rig.Group("split.py", rig.PARK_NONE, [
        ("record's split within 4 points of the target's own (75/25 CPU by construction)",
         test_cpu_split)]),
    rig.Group("split.py", rig.PARK_NONE, [
        ("the JIT on (3.14+): record's split within 4 points of the target's own",
         test_cpu_split_jit)], args=("jit",)),
    rig.Group("churn.py", rig.PARK_MAIN, [
        ("threads churning while bench runs: no crash, < 2% errors",
         test_churn_under_bench)]),
    rig.Group("recursion.py", rig.PARK_MAIN, [
        ("parked 1000-frame stack: <= 1.2 remote reads per sample", test_deep_parked_reads),
        ("bench --floor: a sample costs no less than the cheapest read", test_read_floor),
        ("missed deadlines say why: the work per pass, or a CPU the sampler waits for",
         test_missed_reason)]),
    rig.Group("pool.py", rig.PARK_NONE, [
        ("1,000 idle threads and a spinner: <= 2 remote reads per sample at steady state",
         test_pool_reads),
        ("1,000 idle threads: every one in dump, the spinner in spin()", test_pool_dump),
        ("1,000 idle threads: spin() tops the live table in CPU mode", test_pool_live)]),
    rig.Group("nonascii.py", rig.PARK_MAIN, [
        ("bench text on a parked target: code cache 'no lookups', not '0.00% hits'",
         test_idle_bench_text)], subdir=rig.NONASCII_DIR),
    rig.Group(None, None, [
        ("target exiting during record: stops promptly and writes the file",
         test_exit_during_record),
        ("attach at full rate during start-up, %d times: no crash, exit status reported"
         % STARTUP_RUNS, test_attach_at_startup)]),
]


# Tests of the engine's own behaviour, the same whatever the target's layout
# (exports, signals, a target's exit, scheduling, the live table, bench's
# text, the sampled split of wall time: where each sample falls is the
# walker's, checked per build by record following hop()): run on the
# layout-free interpreters only (TT_LAYOUT_FREE_INTERPS, one per minor
# version, a debug build and an embedded libpython), like the suites of
# views and exports; the rest of the matrix skips them.
LAYOUT_FREE = {test_record_formats, test_record_interrupted, test_read_floor,
               test_missed_reason, test_pool_live, test_idle_bench_text,
               test_exit_during_record, test_cpu_split}


def run_interp(tap, suite, interp, free):
    """PER_INTERPRETER on interp: all of it on a layout-free interpreter,
    else without the LAYOUT_FREE tests (skipped, named)."""
    for group in PER_INTERPRETER:
        if interp in free:
            rig.run_group(tap, suite, interp, group)
            continue
        for desc, fn in group.tests:
            if fn in LAYOUT_FREE:
                tap.skip("%s: %s" % (interp, desc), "layout-free: runs on %s" % " ".join(free))
        kept = [t for t in group.tests if t[1] not in LAYOUT_FREE]
        if kept:
            rig.run_group(tap, suite, interp,
                          rig.Group(group.script, group.park, kept, subdir=group.subdir,
                                    args=group.args))


# Once, against the first interpreter present (a layout-free scale check).
ONCE = rig.Group(None, None, [
    ("10,000 idle threads: works, says its rate, every thread in dump, spin() on top",
     test_huge_pool),
    ("500 idle threads, 1,000/s coming and going: <= 2 reads per sample and 10 per thread started, "
     "each thread once, pool whole",
     test_pool_churn),
    ("3,000 idle threads, 1,500/s coming and going: a changed list's states read once, "
     "threads that end while read left out, not errors", test_big_pool_churn),
    ("with a CPU to spare the sampler thread alone runs under SCHED_IDLE; never beside a busy "
     "thread on its CPU, where it alone asks for the shortest time slice and nice -10; busy "
     "threads on every CPU: it falls back and keeps its rate",
     test_sampler_yields)])


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
    interps = os.environ.get("TT_INTERPS", rig.DEFAULT_INTERPS).split()
    seed = int(os.environ.get("TT_SEED") or rig.random.randrange(10**6))
    started = time.monotonic()
    tap = rig.Tap(len(interps) * sum(len(g.tests) for g in PER_INTERPRETER) + len(ONCE.tests))
    tap.comment("binary: %s; root: %s; seed: %d" % (rig.BIN, rig.ROOT, seed))
    suite = rig.Suite(interps, rig.random.Random(seed))
    try:
        free = rig.suite_interps(layout_free=True)
        for interp in interps:
            run_interp(tap, suite, interp, free)
        first = next((i for i in interps if suite.has(i)), interps[0])
        rig.run_group(tap, suite, first, ONCE)
    finally:
        suite.cleanup()
    tap.comment("%d of %d failed; runtime %.1f s"
                % (tap.failures, tap.planned, time.monotonic() - started))
    return 1 if tap.failures or tap.number != tap.planned else 0


if __name__ == "__main__":
    sys.exit(main())
