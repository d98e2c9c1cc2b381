#!/usr/bin/env python3
"""Exported profiles checked with the real viewers (TAP).

One `record` session per interpreter on tests/targets/flame.py (a 75/25 CPU
split on the main thread, a thread parked in a function whose name and file
are markup) writes all eight formats at once (-o repeated), so every format
is compared with the collapsed output of the same samples:

  - replay: the recording (.ttrec) replayed into the other seven gives
    record's files byte for byte (the heatmap's sources are in it);
  - gecko: the Firefox Profiler's processed profile has its tables, every
    index in range, a track per thread, and the collapsed file's samples
    per innermost function;

  - pprof: `go tool pprof` (Debian's golang-go) reads it with -raw, -top and
    -traces: the sample total equals record's count and the collapsed total,
    each function's flat count equals the collapsed leaf count, files and
    line numbers survive, thread id and name labels are there;
  - speedscope: the JSON validates against file-format-schema.json from the
    npm package speedscope (installed by tests/provision.sh);

and once, on the first interpreter's recording:

  - flame graph: headless Chromium opens the SVG from a file: the DOM after
    its script ran (?s=spend_75 searches on load) has a rect for every frame
    of the collapsed file, widths proportional to samples, spend_75/spend_25
    at 75/25 within 4 points, the search highlights exactly the spend_75
    frames and shows their share; the hostile names are text (one <script>,
    ours); the file is well-formed XML; a screenshot is not blank;
  - a 50,000-stack flame graph (written by tests/test_export through the
    writer's API) opens in Chromium in under 2 s;
  - `record` on a terminal shows a progress line on stderr and erases it;
    with stderr not a terminal, nothing of it;
  - an unknown --format is a one-line error naming the accepted formats.

Reuses the target rig of functional.py (TT_ROOT, TT_BIN, TT_BUILDDIR,
TT_INTERPS, TT_KEEP). TT_NPM: where provision.sh installed speedscope.
"""

import html.parser
import json
import os
import pstats
import pty
import re
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import functional as rig  # noqa: E402
import sampler  # noqa: E402
from functional import Fail, expect, show  # noqa: E402

NPM = os.environ.get("TT_NPM", "/var/cache/tachyon-top/npm")
SCHEMA = os.path.join(NPM, "node_modules/speedscope/dist/release/file-format-schema.json")
HOSTILE_THREAD = "</g><b>&x"   # flame.py's
HOSTILE_NAME = "</svg><script>alert(1)</script>"
HOSTILE_FILE = "/tmp/]]></text><script>alert(2)</script>&amp;\"'.py"
SVG_NS = "{http://www.w3.org/2000/svg}"
RECORD_SECONDS = 3
RATE = 2000
CHROMIUM_TIMEOUT = 180
BIG_OPEN_LIMIT_MS = 2000


def chromium_argv(*extra):
    profile_dir = tempfile.mkdtemp(prefix="tt-chromium-")
    return (["chromium", "--headless", "--no-sandbox", "--disable-gpu",
             "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--no-first-run", "--user-data-dir=" + profile_dir]
            + list(extra)), profile_dir


def chromium(*extra):
    argv, profile_dir = chromium_argv(*extra)
    try:
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=CHROMIUM_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise Fail("chromium did not finish within %d s: %s" % (CHROMIUM_TIMEOUT, argv))
    finally:
        shutil.rmtree(profile_dir, ignore_errors=True)
    expect(proc.returncode == 0, "chromium failed (%d)" % proc.returncode,
           "stderr: " + show(proc.stderr[-1500:], 1500))
    return proc.stdout.decode("utf-8", "replace")


def go_pprof(*args):
    try:
        proc = subprocess.run(["go", "tool", "pprof"] + list(args), stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=120,
                              env=dict(os.environ, PPROF_TMPDIR=tempfile.gettempdir(),
                                       HOME=os.environ.get("HOME", "/root")))
    except subprocess.TimeoutExpired:
        raise Fail("go tool pprof %s hung" % " ".join(args))
    expect(proc.returncode == 0, "go tool pprof %s failed (%d)" % (" ".join(args), proc.returncode),
           "stderr: " + show(proc.stderr, 1500))
    return proc.stdout.decode("utf-8", "replace")


# ----------------------------------------------------------------------
# A JSON Schema validator for the keywords speedscope's schema uses. An
# unknown keyword is an error, so the schema growing cannot make it pass
# silently.
# ----------------------------------------------------------------------

KNOWN_KEYWORDS = {"$schema", "$ref", "definitions", "title", "description", "type",
                  "properties", "required", "items", "const", "enum", "anyOf",
                  "additionalProperties"}


def schema_errors(value, schema, root, path="$"):
    unknown = set(schema) - KNOWN_KEYWORDS
    if unknown:
        return ["%s: schema keyword(s) %s not understood by this validator"
                % (path, sorted(unknown))]
    if "$ref" in schema:
        ref = schema["$ref"]
        expect(ref.startswith("#/definitions/"), "unsupported $ref %s" % ref)
        return schema_errors(value, root["definitions"][ref.split("/", 2)[2]], root, path)
    errors = []
    types = schema.get("type")
    if types is not None:
        checks = {"object": lambda v: isinstance(v, dict),
                  "array": lambda v: isinstance(v, list),
                  "string": lambda v: isinstance(v, str),
                  "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
                  "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
                  "boolean": lambda v: isinstance(v, bool),
                  "null": lambda v: v is None}
        if not any(checks[t](value) for t in ([types] if isinstance(types, str) else types)):
            return ["%s: %s is not of type %s" % (path, show(value, 60), types)]
    if "const" in schema and value != schema["const"]:
        errors.append("%s: %s is not %s" % (path, show(value, 60), show(schema["const"])))
    if "enum" in schema and value not in schema["enum"]:
        errors.append("%s: %s not in %s" % (path, show(value, 60), schema["enum"]))
    if "anyOf" in schema:
        if all(schema_errors(value, s, root, path) for s in schema["anyOf"]):
            errors.append("%s: matches none of anyOf" % path)
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                errors.append("%s: required property %r missing" % (path, key))
        for key, sub in schema.get("properties", {}).items():
            if key in value:
                errors += schema_errors(value[key], sub, root, "%s.%s" % (path, key))
        if schema.get("additionalProperties") is False:
            extra = set(value) - set(schema.get("properties", {}))
            if extra:
                errors.append("%s: unexpected properties %s" % (path, sorted(extra)))
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            errors += schema_errors(item, schema["items"], root, "%s[%d]" % (path, i))
            if len(errors) > 20:
                break
    return errors


# ----------------------------------------------------------------------
# PNG: enough of a decoder to tell a blank screenshot from a picture.
# ----------------------------------------------------------------------

def png_pixels(path):
    with open(path, "rb") as f:
        data = f.read()
    expect(data[:8] == b"\x89PNG\r\n\x1a\n", "%s is not a PNG" % path)
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            expect(depth == 8 and colour in (2, 6), "PNG depth %d colour type %d" % (depth, colour))
            bpp = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, bpp, rows


# ----------------------------------------------------------------------
# The recording shared by one interpreter's tests
# ----------------------------------------------------------------------

class Recording:
    def __init__(self, ctx):
        base = os.path.join(ctx.target.dir, "profile")
        self.paths = {ext: rig.in_root(base + ext)
                      for ext in (".collapsed", ".pb.gz", ".svg", ".speedscope.json", ".prof",
                                  ".gecko.json", ".html", ".ttrec")}
        run = sampler.run_tt("record", "-p", ctx.target.pid, "-d", RECORD_SECONDS, "-r", RATE,
                             *[a for p in self.paths.values() for a in ("-o", p)],
                             timeout=RECORD_SECONDS + 60)
        run.expect_success()
        m = re.search(rb"(\d+) thread samples in (\d+) distinct stacks", run.err)
        expect(m, "record's summary lacks the thread-sample count", *run.details())
        self.thread_samples = int(m.group(1))
        expect(b"\r" not in run.err and b"recording" not in run.err,
               "record printed a progress line to a pipe", *run.details())
        for path in self.paths.values():
            expect(os.path.getsize(path) > 0, "%s is empty" % path, *run.details())
        self.lines = sampler.collapsed_lines(self.paths[".collapsed"])
        self.total = sum(count for _, count in self.lines)
        self.run = run


def recording(ctx):
    if getattr(ctx, "recording", None) is None:
        ctx.recording = Recording(ctx)
    return ctx.recording


def frame_parts(frame):
    """'name (file:line)' -> (name, file, line)."""
    m = re.fullmatch(r"(.*) \((.*):(-?\d+)\)", frame)
    expect(m, "frame label %s is not 'name (file:line)'" % show(frame))
    return m.group(1), m.group(2), int(m.group(3))


def collapsed_escape(text):
    return text.replace(";", "\\x3b")


def test_record_all(ctx):
    rec = recording(ctx)
    expect(rec.total == rec.thread_samples, "collapsed counts add up to %d, record says %d "
           "thread samples" % (rec.total, rec.thread_samples))
    expect(rec.total >= RECORD_SECONDS * 100, "only %d samples" % rec.total, *rec.run.details())


def test_pprof(ctx):
    rec = recording(ctx)
    path = rec.paths[".pb.gz"]
    with open(path, "rb") as f:
        expect(f.read(2) == b"\x1f\x8b", "the pprof file is not gzipped")
    raw = go_pprof("-raw", path)
    # -raw: "  COUNT  NANOS: loc loc ..." per sample, then its labels.
    counts = [int(m.group(1)) for m in re.finditer(r"^\s+(\d+)\s+(\d+): [\d ]+$", raw, re.M)]
    expect(sum(counts) == rec.total, "pprof holds %d samples, the collapsed file of the same "
           "session %d" % (sum(counts), rec.total), *raw.splitlines()[:30])
    expect("samples/count wall/nanoseconds[dflt]" in raw, "sample types are not samples/count "
           "and wall/nanoseconds", *raw.splitlines()[:12])
    expect(re.search(r"^PeriodType: wall nanoseconds$", raw, re.M), "no wall period type")
    # Locations "N: 0x0 M=1 name file:line s=start": every collapsed frame is one.
    locations = set()
    for m in re.finditer(r"^\s+\d+: 0x0 M=1 (.*) (\S.*):(-?\d+) s=(\d+)(?:\(.*\))?$", raw, re.M):
        locations.add((m.group(1), m.group(2), int(m.group(3))))
    wanted = set()
    for frames, _ in rec.lines:
        for frame in frames:
            name, file, line = frame_parts(frame)
            wanted.add((name.replace("\\x3b", ";"), file.replace("\\x3b", ";"), line))
    missing = wanted - locations
    expect(not missing, "frames of the collapsed file missing from pprof's locations: %s"
           % show(sorted(missing)), *raw.splitlines()[-20:])
    # -top by sample count: flat per function equals collapsed leaf counts.
    top = go_pprof("-top", "-sample_index=samples", "-nodecount=100", path)
    flat = {}
    for m in re.finditer(r"^\s*(\d+)\s+[\d.]+%\s+[\d.]+%\s+(\d+)\s+[\d.]+%\s+(.+)$", top, re.M):
        flat[m.group(3)] = int(m.group(1))
    leaves = {}
    for frames, count in rec.lines:
        name = frame_parts(frames[-1])[0].replace("\\x3b", ";")
        leaves[name] = leaves.get(name, 0) + count
    expect({k: v for k, v in flat.items() if v} == leaves,
           "pprof -top flat counts differ from the collapsed leaves",
           "pprof: %s" % show(flat, 600), "collapsed: %s" % show(leaves, 600),
           *top.splitlines())
    ctx.suite.top_output = go_pprof("-top", path)
    # -traces: every trace carries its thread's id and name; the names are
    # the ones threading gives them, on every version.
    traces = go_pprof("-traces", path)
    labels = {}
    for block in traces.split("-----------+")[1:]:
        if not block.strip("-\n "):
            continue  # the closing rule
        tid = re.search(r"^\s*thread_id:\s+(\d+)$", block, re.M)
        name = re.search(r"^\s*thread_name:\s+(.*)$", block, re.M)
        expect(tid and name, "a trace without thread labels", *block.splitlines()[:8])
        labels[int(tid.group(1))] = name.group(1)
    for tid, name in ((ctx.target.info["main_tid"], "MainThread"),
                      (ctx.target.info["hostile_tid"], HOSTILE_THREAD)):
        expect(labels.get(tid) == name, "thread %d is labelled %s, its name is %s"
               % (tid, show(labels.get(tid)), show(name)), "labels: %s" % show(labels))
    expect(HOSTILE_NAME in traces, "the hostile function is not in pprof's traces")


def test_pstats(ctx):
    """Python's own pstats reads the .prof of the same session: per
    function, calls = the collapsed lines' samples with it on the stack,
    own time in proportion to its collapsed leaf samples; spend_75 and
    spend_25 at 75/25 within 4 points by calls; the hostile name is a
    plain string there."""
    rec = recording(ctx)
    try:
        stats = pstats.Stats(rec.paths[".prof"]).stats
    except Exception as error:   # what pstats raises on a bad file varies
        raise Fail("Python's pstats cannot load %s: %r" % (rec.paths[".prof"], error))
    on_stack, leaves = {}, {}
    for frames, count in rec.lines:
        funcs = set()
        for frame in frames:
            name, file, _ = frame_parts(frame)
            funcs.add((file.replace("\\x3b", ";"), name.replace("\\x3b", ";")))
        for fn in funcs:
            on_stack[fn] = on_stack.get(fn, 0) + count
        name, file, _ = frame_parts(frames[-1])
        leaf = (file.replace("\\x3b", ";"), name.replace("\\x3b", ";"))
        leaves[leaf] = leaves.get(leaf, 0) + count
    got = {(file, name): (nc, tt) for (file, _, name), (_, nc, tt, _, _) in stats.items()}
    calls = {fn: nc for fn, (nc, _) in got.items()}
    expect(calls == on_stack, "pstats call counts differ from the collapsed file's",
           "pstats: %s" % show(sorted(calls.items()), 600),
           "collapsed: %s" % show(sorted(on_stack.items()), 600))
    total_tt = sum(tt for _, tt in got.values())
    expect(total_tt > 0, "pstats holds no time")
    for fn, count in leaves.items():
        share = got.get(fn, (0, 0.0))[1] / total_tt
        expect(abs(share - count / rec.total) < 1e-6, "%s: own time %.4f of the total, "
               "collapsed leaves %.4f" % (fn[1], share, count / rec.total))
    spend = {fn[1]: sum(nc for f, (nc, _) in got.items() if f[1] == fn[1])
             for fn in got if fn[1] in ("spend_75", "spend_25")}
    both = spend.get("spend_75", 0) + spend.get("spend_25", 0)
    expect(both and abs(100.0 * spend["spend_75"] / both - 75) <= 4,
           "spend_75 is %.1f%% of spend_75 + spend_25 in pstats"
           % (100.0 * spend.get("spend_75", 0) / (both or 1)))
    expect(any(name == HOSTILE_NAME for _, name in got), "the hostile function is not in pstats")


def file_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def test_replay(ctx):
    """The session's recording replayed into every other format it wrote:
    byte for byte record's files, and go tool pprof -raw reads both alike."""
    rec = recording(ctx)
    outdir = tempfile.mkdtemp(prefix="tt-replay-")
    try:
        again = {ext: os.path.join(outdir, "again" + ext) for ext in rec.paths if ext != ".ttrec"}
        run = sampler.run_tt("replay", rec.paths[".ttrec"],
                             *[a for p in again.values() for a in ("-o", p)])
        run.expect_success()
        expect(b"warning" not in run.err, "a whole recording replayed with a warning",
               *run.details())
        m = re.search(rb"(\d+) thread samples", run.err)
        expect(m and int(m.group(1)) == rec.thread_samples, "replay counts %s thread samples, "
               "record %d" % (m and m.group(1), rec.thread_samples), *run.details())
        for ext, path in sorted(again.items()):
            mine, theirs = file_bytes(path), file_bytes(rec.paths[ext])
            at = next((i for i, (x, y) in enumerate(zip(mine, theirs)) if x != y),
                      min(len(mine), len(theirs)))
            expect(mine == theirs, "replayed %s differs from record's: %d and %d bytes, first "
                   "difference at byte %d" % (ext, len(mine), len(theirs), at),
                   "record: %s" % show(theirs[max(0, at - 80):at + 80], 400),
                   "replay: %s" % show(mine[max(0, at - 80):at + 80], 400))
        raw, raw_again = go_pprof("-raw", rec.paths[".pb.gz"]), go_pprof("-raw", again[".pb.gz"])
        expect(raw == raw_again, "go tool pprof -raw reads the replayed profile otherwise",
               *raw_again.splitlines()[:20])
    finally:
        shutil.rmtree(outdir, ignore_errors=True)


def stack_counts(path):
    counts = {}
    for frames, count in sampler.collapsed_lines(path):
        counts[tuple(frames)] = counts.get(tuple(frames), 0) + count
    return counts


def test_replay_cut_short(ctx):
    """A recording cut anywhere replays what it holds, with one warning (cut
    inside its header: one line, non-zero); a record killed with SIGKILL
    leaves its seconds so far; a random file, a newer version or a damaged
    stream: one line and a non-zero exit, never a crash."""
    rec = recording(ctx)
    data = file_bytes(rec.paths[".ttrec"])
    full = stack_counts(rec.paths[".collapsed"])
    outdir = tempfile.mkdtemp(prefix="tt-cut-")
    try:
        cut, out = os.path.join(outdir, "cut.ttrec"), os.path.join(outdir, "cut.collapsed")
        rnd = ctx.suite.rng
        points = sorted({0, 8, 12, 13, 40, 100, 150, 250, len(data) // 3, len(data) // 2,
                         len(data) - 20, len(data) - 1} |
                        {rnd.randrange(12, len(data)) for _ in range(12)})
        last_total, first_ok = -1, None
        for n in points:
            with open(cut, "wb") as f:
                f.write(data[:n])
            run = sampler.run_tt("replay", cut, "-o", out)
            if run.rc != 0:
                run.expect_one_line_error("not a tachyon-top recording" if n < 8
                                          else "ends before its header")
                expect(first_ok is None, "cut at %d bytes fails, at %d it replayed"
                       % (n, first_ok or 0), *run.details())
                continue
            first_ok = n if first_ok is None else first_ok
            lines = run.err.decode("utf-8", "replace").splitlines()
            expect(len(lines) == 2 and "ends early" in lines[0] and "replayed" in lines[1],
                   "cut at %d of %d bytes: not one warning and the summary" % (n, len(data)),
                   *run.details())
            counts = stack_counts(out)
            over = [(k, v, full.get(k)) for k, v in counts.items() if v > full.get(k, 0)]
            expect(not over, "cut at %d bytes: stacks counted more than in the whole recording"
                   % n, show(over[:3], 600))
            total = sum(counts.values())
            expect(total >= last_total, "cut at %d bytes holds %d samples, a shorter cut %d"
                   % (n, total, last_total))
            last_total = total
        # the last byte lost: at most the last second's samples go with it
        expect(last_total >= sum(full.values()) * (RECORD_SECONDS - 1.5) / RECORD_SECONDS,
               "a recording missing its last byte replays %d of %d samples"
               % (last_total, sum(full.values())))
        # record killed: a recording of what it sampled so far
        killed = os.path.join(outdir, "killed.ttrec")
        proc = subprocess.Popen([rig.BIN, "record", "-p", str(ctx.target.pid), "-r", str(RATE),
                                 "-o", killed], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(2.6)
        proc.kill()
        proc.wait()
        run = sampler.run_tt("replay", killed, "-o", out)
        run.expect_success()
        expect(b"ends early" in run.err, "a killed record's file replayed without a warning",
               *run.details())
        total = sum(stack_counts(out).values())
        expect(total >= RATE, "a record killed after 2.6 s left %d samples at %d/s"
               % (total, RATE), *run.details())
        # not recordings, or not ours to read
        junk = os.path.join(outdir, "junk.ttrec")
        noise = bytes(rnd.randrange(256) for _ in range(4096))
        for content, says in ((noise, "not a tachyon-top recording"),
                              (data[:8] + b"\x02\x00" + data[10:], "version 2"),
                              (data[:12] + noise, "damaged")):
            with open(junk, "wb") as f:
                f.write(content)
            sampler.run_tt("replay", junk, "-o", out).expect_one_line_error(says)
        # a damaged middle: an error, or what decodes before it; never a crash
        mid = len(data) // 2
        with open(junk, "wb") as f:
            f.write(data[:mid] + noise[:64] + data[mid + 64:])
        run = sampler.run_tt("replay", junk, "-o", out)
        if run.rc:
            run.expect_one_line_error("damaged")
        sampler.run_tt("replay", os.path.join(outdir, "none.ttrec"),
                       "-o", out).expect_one_line_error("cannot open")
        sampler.run_tt("replay", rec.paths[".ttrec"]).expect_one_line_error("missing -o")
    finally:
        shutil.rmtree(outdir, ignore_errors=True)


def gecko_shape_errors(doc):
    """What keeps *doc* from being a processed profile the Firefox Profiler
    opens: its tables, their columns' lengths, and every index in range."""
    errors = []

    def need(cond, what):
        if not cond:
            errors.append(what)
        return cond

    meta = doc.get("meta", {})
    for key in ("interval", "startTime", "categories", "preprocessedProfileVersion", "version",
                "processType"):
        need(key in meta, "meta lacks %s" % key)
    strings = doc.get("shared", {}).get("stringArray")
    if not need(isinstance(strings, list) and all(isinstance(s, str) for s in strings),
                "no shared.stringArray of strings"):
        return errors
    ncat = len(meta.get("categories", []))
    if not need(isinstance(doc.get("threads"), list) and doc["threads"], "no threads"):
        return errors
    for n, t in enumerate(doc["threads"]):
        where = "thread %d (%s)" % (n, t.get("name"))
        for key in ("name", "pid", "tid", "processName", "isMainThread"):
            need(key in t, "%s lacks %s" % (where, key))
        tables = {}
        for table, columns in (("samples", ("stack", "time", "weight")),
                               ("stackTable", ("frame", "prefix", "category", "subcategory")),
                               ("frameTable", ("func", "line", "category", "address",
                                               "inlineDepth", "nativeSymbol")),
                               ("funcTable", ("name", "fileName", "lineNumber", "isJS",
                                              "resource"))):
            tab = t.get(table)
            if not need(isinstance(tab, dict) and isinstance(tab.get("length"), int),
                        "%s lacks %s with a length" % (where, table)):
                return errors
            for col in columns:
                need(isinstance(tab.get(col), list) and len(tab[col]) == tab["length"],
                     "%s: %s.%s is not %d long" % (where, table, col, tab["length"]))
            tables[table] = tab
        if errors:
            return errors
        samples, stacks = tables["samples"], tables["stackTable"]
        frames, funcs = tables["frameTable"], tables["funcTable"]
        need(samples.get("weightType") == "samples", "%s: weightType is not samples" % where)
        need(all(isinstance(s, int) and 0 <= s < stacks["length"] for s in samples["stack"]),
             "%s: a sample's stack out of range" % where)
        need(samples["time"] == sorted(samples["time"]), "%s: sample times go back" % where)
        need(all(isinstance(w, int) and w > 0 for w in samples["weight"]),
             "%s: a weight is not a positive count" % where)
        for i in range(stacks["length"]):
            p = stacks["prefix"][i]
            need(p is None or 0 <= p < i, "%s: stack %d's prefix %s is not an earlier stack"
                 % (where, i, p))
            need(0 <= stacks["frame"][i] < frames["length"], "%s: stack %d's frame out of range"
                 % (where, i))
            need(0 <= stacks["category"][i] < ncat, "%s: stack %d's category" % (where, i))
        need(all(0 <= f < funcs["length"] for f in frames["func"]),
             "%s: a frame's function out of range" % where)
        for col in ("name", "fileName"):
            need(all(s is None and col == "fileName" or isinstance(s, int) and 0 <= s < len(strings)
                     for s in funcs[col]), "%s: funcTable.%s not string indices" % (where, col))
    return errors


def gecko_leaf_counts(doc):
    """Samples per innermost function, over every thread."""
    strings, counts = doc["shared"]["stringArray"], {}
    for t in doc["threads"]:
        s, st, fr, fn = t["samples"], t["stackTable"], t["frameTable"], t["funcTable"]
        for stack, weight in zip(s["stack"], s["weight"]):
            name = strings[fn["name"][fr["func"][st["frame"][stack]]]]
            counts[name] = counts.get(name, 0) + weight
    return counts


def test_gecko(ctx):
    """The Firefox Profiler's file of the session: a processed profile's
    shape (meta, threads with samples, stack, frame and function tables,
    shared strings), every index in range, a track per thread with its pid
    and tid, and samples per innermost function as in the collapsed file."""
    rec = recording(ctx)
    with open(rec.paths[".gecko.json"], encoding="utf-8") as f:
        doc = json.load(f)
    errors = gecko_shape_errors(doc)
    expect(not errors, "the gecko file is not a processed profile", *errors[:20])
    tids = {t["tid"]: t for t in doc["threads"]}
    for tid in (ctx.target.info["main_tid"], ctx.target.info["hostile_tid"]):
        expect(tid in tids and tids[tid]["pid"] == str(ctx.target.pid), "no track for thread %d "
               "of process %d: %s" % (tid, ctx.target.pid, show(sorted(tids))))
    expect(tids[ctx.target.info["main_tid"]]["isMainThread"], "the main thread is not marked so")
    leaves = {}
    for frames, count in rec.lines:
        leaf = frames[-1]
        name = leaf if leaf == "<no Python frames>" else frame_parts(leaf)[0]
        name = name.replace("\\x3b", ";")
        leaves[name] = leaves.get(name, 0) + count
    counts = gecko_leaf_counts(doc)
    expect(counts == leaves, "samples per innermost function differ from the collapsed file's",
           "gecko: %s" % show(counts, 600), "collapsed: %s" % show(leaves, 600))
    expect(HOSTILE_NAME in doc["shared"]["stringArray"], "the hostile name is not a string")
    # the checker itself must catch a broken file
    broken = json.loads(json.dumps(doc))
    broken["threads"][0]["stackTable"]["prefix"][0] = 10**6
    expect(gecko_shape_errors(broken), "the shape check accepts a prefix out of range")


def test_speedscope_schema(ctx):
    rec = recording(ctx)
    with open(SCHEMA, encoding="utf-8") as f:
        schema = json.load(f)
    with open(rec.paths[".speedscope.json"], encoding="utf-8") as f:
        doc = json.load(f)
    errors = schema_errors(doc, schema, schema)
    expect(not errors, "speedscope file does not validate against %s" % SCHEMA, *errors[:20])
    names = {fr["name"] for fr in doc["shared"]["frames"]}
    expect({"spend_75", "spend_25", "spin", HOSTILE_NAME} <= names,
           "speedscope frames lack the workload's functions: %s" % show(sorted(names)))
    # The validator itself must reject a broken file.
    broken = dict(doc, profiles=[dict(doc["profiles"][0], type="bogus")])
    expect(schema_errors(broken, schema, schema), "the validator accepts a broken profile type")


MIN_RECT_PX = 0.1   # FLAMEGRAPH_MIN_WIDTH_PX in src/export/flamegraph.h


def svg_frames(root):
    """(label, info, width, g element) for every frame in the #frames group."""
    group = root.find(".//%sg[@id='frames']" % SVG_NS)
    expect(group is not None, "no #frames group in the SVG")
    out = []
    for g in group.findall(SVG_NS + "g"):
        title, rect = g.find(SVG_NS + "title"), g.find(SVG_NS + "rect")
        expect(title is not None and rect is not None, "a frame without title or rect")
        label, _, info = title.text.rpartition("\n")
        out.append((label, info, float(rect.get("width")), g))
    return out


def test_flamegraph_chromium(ctx):
    rec = recording(ctx)
    path = rec.paths[".svg"]
    with open(path, "rb") as f:
        data = f.read()
    rig.expect_no_control_bytes(data, path)
    try:
        ET.fromstring(data)
    except ET.ParseError as error:
        raise Fail("the SVG is not well-formed XML: %s" % error)
    dom = chromium("--virtual-time-budget=5000", "--dump-dom",
                   "file://" + path + "?s=spend_75")
    try:
        root = ET.fromstring(dom)
    except ET.ParseError as error:
        raise Fail("chromium's DOM is not XML: %s" % error, show(dom[:800], 800))
    scripts = root.findall(".//" + SVG_NS + "script") + root.findall(".//script")
    expect(len(scripts) == 1 and dom.count("<script") == 1,
           "%d script elements in the DOM, expected ours alone" % dom.count("<script"))
    frames = svg_frames(root)
    full = max(w for _, _, w, _ in frames)
    expect(frames[0][0] == "all", "the first frame is %s, not 'all'" % show(frames[0][0]))
    # Every collapsed frame has a rect; total widths per frame label follow
    # the collapsed counts.
    want, nodes = {}, {}
    for stack, count in rec.lines:
        for i, frame in enumerate(stack):
            nodes[tuple(stack[:i + 1])] = nodes.get(tuple(stack[:i + 1]), 0) + count
        for frame in set(stack):
            name, file, line = frame_parts(frame)
            label = "%s (%s:%d)" % (name.replace("\\x3b", ";"), file.replace("\\x3b", ";"), line)
            want[label] = want.get(label, 0) + count
    # The widest node (one call path) of each label: the writer judges each
    # node by itself.
    widest = {}
    for call_path, count in nodes.items():
        name, file, line = frame_parts(call_path[-1])
        label = "%s (%s:%d)" % (name.replace("\\x3b", ";"), file.replace("\\x3b", ";"), line)
        widest[label] = max(widest.get(label, 0), count)
    got = {}
    for label, _, width, _ in frames:
        got[label] = got.get(label, 0) + width
    for label, count in want.items():
        # The writer leaves out each frame (node) under MIN_RECT_PX wide (a
        # 1-sample frame once a recording passes about 11,800 samples): a
        # label whose every node is that narrow has no rect, even when its
        # nodes add up to more.
        if label not in got and widest[label] * full / rec.total < MIN_RECT_PX:
            continue
        expect(label in got, "no rect for %s" % show(label), "rects: %s" % show(sorted(got)))
        share, drawn = 100.0 * count / rec.total, 100.0 * got[label] / full
        expect(abs(share - drawn) <= 0.5, "%s: %.2f%% of samples, drawn %.2f%% wide"
               % (show(label), share, drawn))
    w75 = sum(w for label, _, w, _ in frames if label.startswith("spend_75 ("))
    w25 = sum(w for label, _, w, _ in frames if label.startswith("spend_25 ("))
    expect(w75 > 0 and w25 > 0, "spend_75 or spend_25 has no rect")
    # The search from the URL highlighted exactly the spend_75 frames.
    marked = [label for label, _, _, g in frames if g.get("data-match")]
    expect(marked and all(label.startswith("spend_75 (") for label in marked)
           and len(marked) == sum(1 for label, _, _, _ in frames if "spend_75" in label),
           "search ?s=spend_75 highlighted %s" % show(marked))
    matched = root.find(".//%stext[@id='matched']" % SVG_NS)
    m = re.search(r"Matched: ([\d.]+)%", matched.text or "") if matched is not None else None
    expect(m, "no 'Matched: N%' after the search")
    expect(abs(float(m.group(1)) - 100.0 * w75 / full) <= 0.05,
           "search shows %s%%, spend_75 is %.2f%% wide" % (m.group(1), 100.0 * w75 / full))
    # Hostile names: one frame's label is the name as text.
    hostile = [label for label, _, _, _ in frames if label.startswith(HOSTILE_NAME + " (")]
    expect(hostile == ["%s (%s:2)" % (HOSTILE_NAME, HOSTILE_FILE)],
           "the hostile frame is not rendered as its text: %s"
           % show([label for label, _, _, _ in frames if "alert" in label]))
    texts = [t.text or "" for t in root.iter(SVG_NS + "text")]
    expect(any(t.startswith(HOSTILE_NAME[:10]) for t in texts),
           "the hostile name is not shown as a label")
    # A screenshot is a picture, not a blank page.
    shot = os.path.join(os.path.dirname(path), "screenshot.png")
    chromium("--window-size=1200,400", "--screenshot=" + shot, "file://" + path)
    width, height, bpp, rows = png_pixels(shot)
    colours, warm = set(), 0
    for row in rows[::2]:
        for x in range(0, width * bpp, bpp * 2):
            r, g, b = row[x], row[x + 1], row[x + 2]
            colours.add((r, g, b))
            warm += r > 180 and b < 120 and g < 200
    expect(len(colours) > 20 and warm > 2000, "the screenshot looks blank: %d colours, %d "
           "flame-coloured pixels" % (len(colours), warm), "screenshot: " + shot)
    ctx.suite.screenshot = shot
    # Last: the workload's own split (load-sensitive) after every check of
    # the file itself.
    split = 100.0 * w75 / (w75 + w25)
    expect(abs(split - 75) <= 4, "spend_75 is %.1f%% of spend_75 + spend_25 widths, expected "
           "75 +- 4" % split)


def test_big_flamegraph_opens(ctx):
    tool = os.path.join(os.environ.get("TT_BUILDDIR", "."), "tests", "test_export")
    work = rig.in_root(ctx.target.dir)
    big = os.path.join(work, "big.svg")
    proc = subprocess.run([tool, "--svg", big], capture_output=True, timeout=120)
    expect(proc.returncode == 0, "test_export --svg failed", show(proc.stdout, 1500))
    size = os.path.getsize(big)
    expect(size < 15 << 20, "the 50,000-stack flame graph is %.1f MB" % (size / 2**20))
    # The page times the SVG document's load (parse, script) and layout
    # (getBBox forces it; --allow-file-access-from-files lets the page reach
    # into the frame). The best of three: the machine is shared.
    def open_page(name, svg, after=""):
        page = os.path.join(work, name)
        with open(page, "w", encoding="utf-8") as f:
            f.write("<!DOCTYPE html><html><body><p id='t'>pending</p><script>"
                    "var t0=performance.now(),f=document.createElement('iframe');"
                    "f.width=1200;f.height=800;"
                    "f.onload=function(){var d=f.contentDocument,b=d.documentElement.getBBox();"
                    "var ms=Math.round(performance.now()-t0),z='none';" + after +
                    "document.getElementById('t').textContent='opened in '+"
                    "ms+' ms, '+Math.round(b.height)+' px high; zoomed: '+z;};"
                    "f.src='%s';document.body.appendChild(f);</script></body></html>" % svg)
        return page

    page = open_page("open-big.html", "big.svg", after=(
        # Then click a frame drawn without a label: the zoom widens it and
        # gives it one (narrow frames are written without).
        "var gs=d.getElementById('frames').children;"
        "for(var i=0;i<gs.length;i++){var g=gs[i],r=g.children[1];"
        "if(g.children.length==2&&+r.getAttribute('width')<2){"
        "r.dispatchEvent(new MouseEvent('click',{bubbles:true}));"
        "var t=g.getElementsByTagName('text')[0];"
        "z=Math.round(+r.getAttribute('width'))+' px, label ['+(t?t.textContent:'')+'] of ['"
        "+g.children[0].textContent.split('\\n')[0]+']';break;}}"))
    times = []
    for _ in range(3):
        dom = chromium("--dump-dom", "--allow-file-access-from-files", "file://" + page)
        m = re.search(r"opened in (\d+) ms, (\d+) px high", dom)
        expect(m, "the page did not report the flame graph's load", show(dom[:600], 600))
        expect(int(m.group(2)) > 300, "the flame graph laid out %s px high" % m.group(2))
        z = re.search(r"zoomed: (\d+) px, label \[(.*?)\] of \[(.*?)\]", dom)
        expect(z and int(z.group(1)) == 1180 and len(z.group(2)) > 3
               and z.group(3).startswith(z.group(2).rstrip(".")),
               "a click on a narrow unlabelled frame did not widen and label it",
               show(re.search(r"zoomed: [^<]*", dom).group(0) if "zoomed: " in dom else dom[:600],
                    600))
        times.append(int(m.group(1)))
        if times[-1] < BIG_OPEN_LIMIT_MS:
            break
    ctx.suite.big_open = (min(times), size, None)
    if min(times) < BIG_OPEN_LIMIT_MS:
        return
    # Over the limit: is the file slow, or this machine? The same number of
    # bare rectangles (what any flame graph of these frames must draw) is
    # the machine's own floor; the file may cost at most three times that
    # (1.9 times measured: titles, rounded corners, labels and the script).
    with open(big, encoding="utf-8") as f:
        data_frames = re.findall(r'<rect x="([\d.]+)" y="(\d+)" width="([\d.]+)"', f.read())
    frames = len(data_frames)
    bare = os.path.join(work, "bare.svg")
    with open(bare, "w", encoding="utf-8") as f:
        f.write('<svg xmlns="http://www.w3.org/2000/svg" width="1200" height="1200">')
        f.writelines('<g><rect x="%s" y="%s" width="%s" height="15" fill="#f3ad21"/></g>\n'
                     % xyw for xyw in data_frames)
        f.write("</svg>\n")
    floor = []
    for _ in range(3):
        dom = chromium("--dump-dom", "--allow-file-access-from-files",
                       "file://" + open_page("open-bare.html", "bare.svg"))
        m = re.search(r"opened in (\d+) ms", dom)
        expect(m, "the bare page did not report its load", show(dom[:600], 600))
        floor.append(int(m.group(1)))
    ctx.suite.big_open = (min(times), size, min(floor))
    expect(min(times) <= 3 * min(floor),
           "a 50,000-stack flame graph (%.1f MB, %d frames) took %s ms to open, over %d ms and "
           "over three times the %s ms of %d bare rectangles" % (size / 2**20, frames, times,
                                                            BIG_OPEN_LIMIT_MS, floor, frames))


def test_progress_line(ctx):
    """On a terminal: progress on stderr about once a second, erased; the
    summary follows on a clean line."""
    out = os.path.join(ctx.target.dir, "progress.collapsed")
    master, slave = pty.openpty()
    proc = subprocess.Popen([rig.BIN, "record", "-p", str(ctx.target.pid), "-d", "3", "-r",
                             "500", "-o", rig.in_root(out)], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    data = b""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            data += chunk
        elif proc.poll() is not None:
            break
    os.close(master)
    if proc.poll() is None:
        proc.kill()
    rc = proc.wait()
    expect(rc == 0, "record on a terminal failed (%d)" % rc, "stderr: " + show(data))
    updates = re.findall(rb"\rtachyon-top: recording (\d+) s of 3 s, (\d+) samples, "
                         rb"[\d.]+% errors\x1b\[K", data)
    expect(len(updates) >= 2, "expected a progress line about once a second, saw %d"
           % len(updates), "stderr: " + show(data))
    expect(int(updates[-1][1]) > int(updates[0][1]), "the sample count did not move")
    expect(re.search(rb"\r\x1b\[Ktachyon-top: \d+ samples in", data),
           "the progress line is not erased before the summary", "stderr: " + show(data))


COMMAND_INTERPS = ("python3.15", "host-python3.11")  # the root's newest, the host's


def started_program(tt_pid, timeout=10):
    """The program record -- COMMAND started: tachyon-top's only child."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open("/proc/%d/task/%d/children" % (tt_pid, tt_pid)) as f:
                kids = [int(k) for k in f.read().split()]
        except OSError:
            kids = []
        if kids:
            return kids[0]
        time.sleep(0.05)
    raise Fail("tachyon-top %d started no program within %d s" % (tt_pid, timeout))


def command_script(ctx):
    """recorded.py where ctx's interpreter sees it (Skip under the others)."""
    if ctx.interp not in COMMAND_INTERPS:
        raise rig.Skip("runs under %s" % " and ".join(COMMAND_INTERPS))
    scratch = ctx.suite.new_dir("record-command")
    os.makedirs(rig.in_root(scratch), exist_ok=True)
    shutil.copy(os.path.join(rig.TARGETS_DIR, "recorded.py"), rig.in_root(scratch))
    return os.path.join(scratch, "recorded.py")


def test_bench_command(ctx):
    """bench -d 2 -- PYTHON recorded.py: the figures of a program it ran."""
    script = command_script(ctx)
    run = sampler.run_tt("bench", "-d", "2", "-r", "2000", "--json", "--", *rig.command(
        ctx.suite, ctx.interp, ["-E", "-s", "-B", script, "0", "0"]), timeout=60)
    run.expect_success()
    doc = json.loads(run.out[run.out.index(b"{"):])
    expect(doc["samples"] >= 1000 and doc["thread_samples"] >= 1000 and doc["python"]
           and not doc["target_exited"], "bench -- COMMAND: %d samples, %d thread samples, "
           "python %s" % (doc["samples"], doc["thread_samples"], doc["python"]), *run.details())
    expect(b"recorded.py says hello" in run.out, "the program's output is not on bench's "
           "stdout", *run.details())


def test_record_command(ctx):
    """record -o F.svg -o F.pb.gz -- PYTHON recorded.py: the program writes
    to tachyon-top's own output; when it exits by itself, is killed by
    SIGTERM, or tachyon-top gets Ctrl-C, the profile holds its functions
    and tachyon-top's exit status and last line say how it ended."""
    script = command_script(ctx)
    outdir = tempfile.mkdtemp(prefix="tt-record-command-")

    def record(name, seconds, code, act=None):
        svg, pb = (os.path.join(outdir, name + ext) for ext in (".svg", ".pb.gz"))
        argv = [rig.BIN, "record", "-r", "1000", "-o", svg, "-o", pb, "--"] + rig.command(
            ctx.suite, ctx.interp, ["-E", "-s", "-B", script, str(seconds), str(code)])
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        try:
            program = started_program(proc.pid)
            if act:
                time.sleep(1.5)
                act(proc, program)
            out, err = proc.communicate(timeout=30)
        except (subprocess.TimeoutExpired, Fail):
            proc.kill()
            proc.communicate()
            raise
        run = rig.Run(argv, proc.returncode, out, err)
        crash = run.crash(relayed=(128 + signal.SIGTERM, 128 + signal.SIGINT))
        expect(not crash, "record crashed: %s" % crash, *run.details())
        expect(b"recorded.py says hello" in out, "the program's output is not on "
               "tachyon-top's stdout", *run.details())
        expect(not os.path.exists("/proc/%d" % program) or rig.process_exited(program),
               "the program %d still runs after record ended" % program, *run.details())
        # The profile: the program's own functions, in the SVG and in pprof.
        labels = {frame_parts(label)[0] for label, _, _, _ in
                  svg_frames(ET.parse(svg).getroot()) if "(" in label}
        expect({"outer_work", "inner_work"} <= labels, "the flame graph lacks outer_work and "
               "inner_work: %s" % show(sorted(labels)), *run.details())
        top = go_pprof("-top", "-nodecount=20", pb)
        expect("inner_work" in top, "pprof's top lacks inner_work", *top.splitlines())
        last = err.decode("utf-8", "replace").rstrip("\n").rsplit("\n", 1)[-1]
        return run, program, last

    try:
        run, program, last = record("itself", 1.5, 3)
        expect(run.rc == 3 and last == "tachyon-top: process %d exited with status 3" % program,
               "the program exited with status 3: record exited %d, last line %s"
               % (run.rc, show(last)), *run.details())
        run, program, last = record("sigterm", 0, 0,
                                    lambda proc, program: os.kill(program, signal.SIGTERM))
        expect(run.rc == 128 + signal.SIGTERM and last == "tachyon-top: process %d was killed "
               "by signal 15 (Terminated)" % program, "the program was killed by SIGTERM: record "
               "exited %d, last line %s" % (run.rc, show(last)), *run.details())
        run, program, last = record("ctrl-c", 0, 0,
                                    lambda proc, program: proc.send_signal(signal.SIGINT))
        expect(run.rc == 128 + signal.SIGINT and last.startswith(
            "tachyon-top: stopped process %d (Ctrl-C); it " % program),
            "Ctrl-C to tachyon-top: record exited %d, last line %s" % (run.rc, show(last)),
            *run.details())
    finally:
        if not os.environ.get("TT_KEEP"):
            shutil.rmtree(outdir, ignore_errors=True)


def test_record_command_errors(ctx):
    """A program that cannot run, and no program: one line, a non-zero exit,
    and no output file."""
    outdir = tempfile.mkdtemp(prefix="tt-record-errors-")
    try:
        path = os.path.join(outdir, "p.svg")
        for args, says in ((["--", "/nonexistent/program"], "cannot run /nonexistent/program"),
                           (["--"], "missing -p PID or -- COMMAND"),
                           (["app.py"], "put it after --")):
            run = sampler.run_tt("record", "-o", path, *args)
            run.expect_one_line_error(says)
            expect(not os.listdir(outdir), "record %s left %s" % (" ".join(args),
                                                                  os.listdir(outdir)))
    finally:
        shutil.rmtree(outdir, ignore_errors=True)


def test_format_error(ctx):
    run = sampler.run_tt("record", "-p", ctx.target.pid, "-o", "/tmp/x", "--format", "gif")
    run.expect_one_line_error("unknown format 'gif'")
    for name in (b"collapsed", b"speedscope", b"flamegraph", b"pprof", b"pstats"):
        expect(name in run.err, "the error does not name %s" % name.decode(), *run.details())


HELP_WIDTH = 80
README = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "README.md")
MAN_PAGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tachyon-top.1")


def help_text(*verb):
    run = sampler.run_tt(*(verb + ("--help",)))
    expect(run.rc == 0 and not run.err, "%s --help: exit %d" % (" ".join(verb) or "tachyon-top",
                                                               run.rc), *run.details())
    text = run.out.decode()
    wide = [line for line in text.splitlines() if len(line) > HELP_WIDTH]
    expect(not wide, "%s --help: %d lines over %d columns: %s"
           % (" ".join(verb) or "tachyon-top", len(wide), HELP_WIDTH, show(wide[:3])))
    return text


def help_formats(text):
    """{name: [extensions]} from --help's "name (.ext, ...): what" lines."""
    found = {}
    for m in re.finditer(r"^ {27}(\w+) \(([^)]*)\): ", text, re.M):
        found[m.group(1)] = [e for e in m.group(2).split(", ") if e.startswith(".")]
    return found


def test_help_tables(ctx):
    """--help lists every verb of the table, each answers --help, no help
    line is wider than 80 columns; a mistyped verb's error names them all;
    record's and replay's formats are the README's and the man page's
    (names, extensions)."""
    top = help_text()
    section = top.split("Verbs:\n", 1)[-1].split("\nRun ", 1)[0]
    verbs = re.findall(r"^  (\w+) ", section, re.M)
    expect({"dump", "record", "replay", "bench", "info"} <= set(verbs),
           "--help's verbs: %s" % verbs, show(top, 3000))
    for verb in verbs:
        text = help_text(verb)
        expect(text.startswith("Usage: tachyon-top " + verb), "%s --help: %s"
               % (verb, show(text[:200])))
    bad = sampler.run_tt("dupm")
    bad.expect_one_line_error("unknown verb or argument 'dupm'")
    for verb in verbs:
        expect(verb.encode() in bad.err, "the mistyped verb's error leaves out %s" % verb,
               *bad.details())
    recorded = help_formats(help_text("record"))
    replayed = help_formats(help_text("replay"))
    with open(README, encoding="utf-8") as f:
        readme = {m.group(1): re.findall(r"`(\.[\w.]+)`", m.group(2))
                  for m in re.finditer(r"^\| `(\w+)` \| ([^|]*) \|", f.read(), re.M)}
    with open(MAN_PAGE, encoding="utf-8") as f:
        man = {m.group(1): [t for t in m.group(2).split() if re.fullmatch(r"(\.[a-z]+)+", t)]
               for m in re.finditer(r'^\.BR (\w+) " \(" (.*)$', f.read(), re.M)}
    expect(len(recorded) >= 8 and recorded == {k: readme.get(k) for k in recorded},
           "record --help's formats are not the README's: %s against %s" % (recorded, readme))
    expect(recorded == {k: man.get(k) for k in recorded},
           "record --help's formats are not the man page's: %s against %s" % (recorded, man))
    expect(replayed == {k: v for k, v in recorded.items() if k != "binary"},
           "replay --help's formats: %s (record's: %s)" % (replayed, recorded))


def rect_fills(svg_path):
    """{frame label: [(r, g, b, width)]} of the SVG as Chromium's DOM has it."""
    dom = chromium("--virtual-time-budget=3000", "--dump-dom", "file://" + svg_path)
    try:
        root = ET.fromstring(dom)
    except ET.ParseError as error:
        raise Fail("chromium's DOM is not XML: %s" % error, show(dom[:800], 800))
    out = {}
    for label, info, width, g in svg_frames(root):
        fill = g.find(SVG_NS + "rect").get("fill")
        m = re.fullmatch(r"#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})", fill or "")
        expect(m, "frame %s has fill %s" % (show(label), show(fill)))
        out.setdefault(label, []).append(tuple(int(x, 16) for x in m.groups()) + (width, info))
    return out


def test_diff_flamegraph(ctx):
    """record --diff-base: split.py recorded, recorded again, then again
    with spend_75 twice as slow (75/25 becomes 86/14): in the differential SVG
    Chromium shows spend_75's frames red and spend_25's blue; the unchanged
    target recorded again against the first is pale everywhere; a baseline
    that is not folded stacks, or missing, or no SVG output: one line and a
    non-zero exit before sampling."""
    outdir = tempfile.mkdtemp(prefix="tt-diff-")
    try:
        base = os.path.join(outdir, "base.collapsed")
        same, slow = os.path.join(outdir, "same.svg"), os.path.join(outdir, "slow.svg")
        # cpu mode: split.py spins on its thread's CPU time, so its split
        # is exact on a CPU whatever else the machine runs meanwhile (a
        # browser of an earlier test finishing shifted wall time 7 points)
        cpu = ("-m", "cpu", "-d", 3)
        with rig.Target(ctx.suite, ctx.interp, "split.py", park=rig.PARK_NONE) as t:
            base_rec = os.path.join(outdir, "base.ttrec")
            sampler.run_tt("record", "-p", t.pid, *cpu, "-o", base,
                           "-o", base_rec).expect_success()
            # the same program against the recording of the baseline
            run = sampler.run_tt("record", "-p", t.pid, *cpu, "--diff-base", base_rec, "-o", same)
            run.expect_success()
            os.kill(t.pid, signal.SIGUSR1)   # spend_75 twice as slow from now on
            time.sleep(0.2)
            run = sampler.run_tt("record", "-p", t.pid, *cpu, "--diff-base", base, "-o", slow)
            run.expect_success()
            # bad baselines, checked before any sampling
            junk = os.path.join(outdir, "junk")
            with open(junk, "wb") as f:
                f.write(bytes(rig.random.Random(7).randrange(256) for _ in range(4096)))
            for args, says in ((["--diff-base", junk, "-o", slow], "not folded stacks"),
                               (["--diff-base", junk + ".none", "-o", slow],
                                "cannot read the baseline"),
                               (["--diff-base", base, "-o", os.path.join(outdir, "p.txt")],
                                "--diff-base colours a flame graph")):
                sampler.run_tt("record", "-p", t.pid, "-d", 1, *args).expect_one_line_error(says)
        fills = rect_fills(slow)
        for name, colour in (("spend_75 (", "red"), ("spend_25 (", "blue")):
            wide = [(r, g, b, info) for label, rects in fills.items() if label.startswith(name)
                    for r, g, b, w, info in rects if w >= 20]
            expect(wide, "no wide %s frame in the differential flame graph" % name)
            for r, g, b, info in wide:
                strong = r if colour == "red" else b
                other = b if colour == "red" else r
                # at least 5 points of change (75/25 becomes about 86/14)
                expect(strong == 255 and other <= 136 and g <= 136,
                       "%s... is #%02x%02x%02x, not %s (%s)" % (name, r, g, b, colour, info))
                expect("in the baseline" in info, "%s's tooltip lacks the baseline share: %s"
                       % (name, info))
        for label, rects in rect_fills(same).items():
            for r, g, b, w, info in rects:
                expect(min(r, g, b) >= 136, "unchanged program: %s is #%02x%02x%02x, more than "
                       "5 points away (%s)" % (show(label), r, g, b, info))
        # What a user sees: a picture with red and blue in it.
        shot = os.path.join(outdir, "diff.png")
        chromium("--window-size=1200,300", "--screenshot=" + shot, "file://" + slow)
        width, height, bpp, rows = png_pixels(shot)
        red = blue = 0
        for row in rows:
            for x in range(0, width * bpp, bpp):
                r, g, b = row[x], row[x + 1], row[x + 2]
                red += r > 230 and g < 110 and b < 110
                blue += b > 230 and r < 110 and g < 110
        expect(red > 2000 and blue > 500, "the screenshot has %d red and %d blue pixels"
               % (red, blue))
    finally:
        shutil.rmtree(outdir, ignore_errors=True)


class HeatmapParser(html.parser.HTMLParser):
    """Chromium's DOM of a heatmap: {file: [(line, own, total, text)]}, the
    index's file names, and every tag seen."""

    def __init__(self):
        super().__init__()
        self.files, self.index, self.tags = {}, [], []
        self.current = None
        self.in_h2 = self.in_index = False
        self.cells, self.cell = None, None
        self.text = ""

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        attrs = dict(attrs)
        if tag == "h2":
            self.in_h2, self.text = True, ""
        elif tag == "table" and attrs.get("class") == "index":
            self.in_index = True
        elif tag == "table":
            self.in_index = False
        elif tag == "tr":
            self.cells = []
        elif tag == "td" and self.cells is not None:
            self.cell = ""

    def handle_endtag(self, tag):
        if tag == "h2":
            self.in_h2 = False
            self.current = self.text
            self.files[self.current] = []
        elif tag == "td" and self.cell is not None:
            self.cells.append(self.cell)
            self.cell = None
        elif tag == "tr" and self.cells:
            if self.in_index:
                self.index.append(self.cells[-1])
            elif self.current is not None and len(self.cells) == 4:
                n, own, total, text = self.cells
                self.files[self.current].append((int(n), int(own or 0), int(total or 0), text))
            self.cells = None

    def handle_data(self, data):
        if self.in_h2:
            self.text += data
        if self.cell is not None:
            self.cell += data


def test_heatmap(ctx):
    """record -o FILE.html: Chromium opens the heatmap; in flame.py's source
    the line with the most own samples is in spin; the target's markup
    (HOSTILE_NAME in its source, HOSTILE_FILE as a file name) is text: no
    script element anywhere."""
    outdir = tempfile.mkdtemp(prefix="tt-heatmap-")
    try:
        path = os.path.join(outdir, "heat.html")
        sampler.run_tt("record", "-p", ctx.target.pid, "-d", 2, "-o", path).expect_success()
        with open(path, "rb") as f:
            data = f.read()
        rig.expect_no_control_bytes(data, path)
        expect(b"<script" not in data.lower(), "the heatmap file holds a script tag")
        dom = chromium("--dump-dom", "file://" + path)
        parser = HeatmapParser()
        parser.feed(dom)
        expect("script" not in parser.tags, "Chromium's DOM of the heatmap has a script element")
        source = next((f for f in parser.files if f.endswith("/flame.py")), None)
        expect(source, "no section for flame.py: %s" % show(sorted(parser.files)))
        rows = parser.files[source]
        expect(len(rows) >= 60 and rows[0][0] == 1, "flame.py's section has %d rows" % len(rows))
        top = max(rows, key=lambda r: r[1])
        expect(top[3].strip() in ("while time.perf_counter() < end:", "pass"),
               "the line with most own samples is %d %s, not in spin" % (top[0], show(top[3])))
        hostile = [r for r in rows if r[3].startswith("HOSTILE_NAME = ")]
        expect(hostile and HOSTILE_NAME in hostile[0][3], "HOSTILE_NAME's line is not shown as "
               "its text: %s" % show(hostile))
        expect(HOSTILE_FILE in parser.index and HOSTILE_FILE in parser.files,
               "the hostile file name is not in the index and a heading as text: %s"
               % show(parser.index))
        expect(any(r[1] for r in parser.files[HOSTILE_FILE]),
               "the hostile file's parked line has no samples")
    finally:
        shutil.rmtree(outdir, ignore_errors=True)


PER_INTERPRETER = [
    ("record writes eight formats from one session; collapsed total = record's count",
     test_record_all),
    ("pprof read by go tool pprof: totals, flat counts, files, lines, thread labels",
     test_pprof),
    ("speedscope JSON validates against speedscope's file-format schema",
     test_speedscope_schema),
    ("pstats read by Python's pstats: calls and own times as the collapsed file's, 75/25",
     test_pstats),
    ("gecko: a processed profile (tables, indices, a track per thread), samples per function "
     "as in the collapsed file", test_gecko),
    ("replay of the session's recording: every format byte for byte record's, pprof -raw alike",
     test_replay),
    ("record -- PYTHON: its output passes through; exits by itself, SIGTERM, Ctrl-C: the "
     "profile, the exit status and the last line", test_record_command),
    ("bench -d 2 -- PYTHON: the figures of the program it ran", test_bench_command),
]
ONCE = [
    ("flame graph in chromium: rects, widths, 75/25, search, hostile names as text, "
     "screenshot", test_flamegraph_chromium),
    ("a 50,000-stack flame graph opens in chromium in under 2 s (on a slow machine: within 3x "
     "the same bare rectangles); a click labels a narrow frame", test_big_flamegraph_opens),
    ("record on a terminal shows a progress line and erases it", test_progress_line),
    ("--format error names the accepted formats", test_format_error),
    ("--help: every verb of the table, each with its own --help, 80 columns; a mistyped verb's "
     "error names them; record's and replay's formats are the README's and man page's",
     test_help_tables),
    ("record -o FILE.html: the heatmap in Chromium: spin's line hottest in flame.py, the "
     "target's markup as text, no script", test_heatmap),
    ("record --diff-base: spend_75 made 2x slower is red, spend_25 blue; the same program "
     "again pale; bad baselines one line", test_diff_flamegraph),
    ("record -- /nonexistent, record --, record app.py: one line, no file",
     test_record_command_errors),
    ("a recording cut anywhere replays what it holds with a warning; a killed record's too; "
     "random, newer, damaged: one line", test_replay_cut_short),
]


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
    for tool, where in (("go", "golang-go"), ("chromium", "chromium")):
        if not shutil.which(tool):
            print("Bail out! %s not found (tests/provision.sh installs %s)" % (tool, where))
            return 1
    if not os.path.isfile(SCHEMA):
        print("Bail out! %s missing (tests/provision.sh installs speedscope)" % SCHEMA)
        return 1
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    interps = rig.suite_interps(layout_free=True)
    seed = int(os.environ.get("TT_SEED") or rig.random.randrange(10**6))
    started = time.monotonic()
    tap = rig.Tap(len(interps) * len(PER_INTERPRETER) + len(ONCE))
    tap.comment("binary: %s; root: %s; seed: %d" % (rig.BIN, rig.ROOT, seed))
    suite = rig.Suite(interps, rig.random.Random(seed))
    suite.top_output = suite.screenshot = suite.big_open = None
    once_done = False
    try:
        for interp in interps:
            tests = list(PER_INTERPRETER)
            if not once_done and suite.has(interp):
                tests += ONCE
                once_done = True
            rig.run_group(tap, suite, interp, rig.Group("flame.py", rig.PARK_NONE, tests))
        if not once_done:
            for name, _ in ONCE:
                tap.skip(name, "no interpreter of TT_INTERPS in the root")
    finally:
        suite.cleanup()
    if suite.top_output:
        tap.comment("go tool pprof -top (last interpreter):")
        tap.comment(suite.top_output)
    if suite.big_open:
        ms, size, floor = suite.big_open
        tap.comment("50,000-stack flame graph: %.2f MB, opened in %d ms%s"
                    % (size / 2**20, ms, "" if floor is None else
                       " (the same bare rectangles: %d ms)" % floor))
    tap.comment("%d of %d failed; runtime %.1f s"
                % (tap.failures, tap.planned, time.monotonic() - started))
    return 1 if tap.failures or tap.number != tap.planned else 0


if __name__ == "__main__":
    sys.exit(main())
