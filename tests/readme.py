#!/usr/bin/env python3
"""The README's commands work as written.

Every command the README shows — a code line or a `code` span that starts
with `tachyon-top` (or `sudo tachyon-top`) — is run against the bundled
demo workload (tests/demo_app.py: a request loop, two worker processes,
asyncio tasks, threads blocked on a socket and a lock) under python3.15 in
the target root: PID becomes its pid, `python3 app.py` a short program, a
file to write a name in a scratch directory; durations are cut to a
second, and `watch` is stopped after two. Each must exit 0 (the live view:
draw its header in tmux, then quit on q) and leave the files it names.
Commands that need what the guide leaves to the reader (a core, a
placeholder such as COMMAND or ...) are listed as skipped, with why. Then
the runner is shown failing on a command with an option that does not
exist. Emits TAP. Needs root and the provisioned target root.
"""
import os
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
import tui  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get("TT_SRCDIR") or os.path.join(HERE, "..")
PY = "python3.15"


def readme_commands(text):
    """The commands, in order, each once: code lines and `code` spans."""
    found = []
    for line in text.splitlines():
        candidates = []
        if line.startswith("    "):
            candidates.append(line.strip())
        candidates += re.findall(r"`((?:sudo )?tachyon-top[^`]*)`", line)
        for c in candidates:
            c = re.sub(r"\s+#.*$", "", c).strip()
            if c.startswith("sudo "):
                c = c[5:]
            # "tachyon-top  pid 4242 ..." is the screen's header, not a command
            if c.startswith("tachyon-top") and (c == "tachyon-top" or c[11:13] == " -"
                                                or re.match(r"tachyon-top [a-z]", c)) \
                    and c not in found:
                found.append(c)
    return found


def why_not(cmd):
    """Why a command cannot be run as written here, or None."""
    if "..." in cmd or "…" in cmd:
        return "an elided command (...)"
    for word in ("COMMAND", "FORMAT", "OLD", "MASTER", "NAME"):
        if re.search(r"\b%s\b" % word, cmd):
            return "a placeholder the reader fills in (%s)" % word
    if "--core" in cmd:
        return "needs a core file (tests/cores.py runs dump --core on real cores)"
    if cmd == "tachyon-top":
        return "the name alone"
    return None


class Workload:
    """tests/demo_app.py under python3.15 in the root, for a minute."""

    def __enter__(self):
        self.dir = tempfile.mkdtemp(prefix="tt-readme-", dir=rig.in_root("/tmp"))
        shutil.copy(os.path.join(HERE, "demo_app.py"), os.path.join(self.dir, "app.py"))
        with open(os.path.join(self.dir, "short.py"), "w") as f:
            f.write("import time\nend = time.time() + 1\nwhile time.time() < end:\n"
                    "    sum(range(1000))\n")
        self.root_dir = "/tmp/" + os.path.basename(self.dir)
        self.proc = subprocess.Popen(["chroot", rig.ROOT, PY, self.root_dir + "/app.py", "90"],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 20
        while len(rig.children(self.proc.pid)) < 2:   # its two worker processes
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise rig.Fail("the demo workload did not start its workers")
            time.sleep(0.1)
        time.sleep(1)
        return self

    def __exit__(self, *exc):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except OSError:
            pass
        self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)
        return False


def as_run(cmd, w, scratch):
    """The argv to run for a README command, or None when it opens the live view."""
    argv = shlex.split(cmd)[1:]
    out = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "PID":
            a = str(w.proc.pid)
        elif argv[i - 1:i] in (["-d"], ["--duration"]) and a.isdigit():
            a = "1"
        elif a == "--" and argv[i + 1:i + 3] == ["python3", "app.py"]:
            out += ["--", "chroot", rig.ROOT, PY, w.root_dir + "/short.py"]
            break
        elif argv[i - 1:i] in (["-o"], ["--out"]) and argv[:1] == ["watch"]:
            a = os.path.join(scratch, "reports")
        elif argv[i - 1:i] == ["-o"] or (i and argv[0] == "replay" and i == 1):
            a = os.path.join(scratch, a)
        out.append(a)
        i += 1
    return out


def run_one(cmd, w, scratch):
    """None when the command did as the README says, else what went wrong."""
    argv = as_run(cmd, w, scratch)
    live = not argv or (argv[0].startswith("-") and "--batch" not in argv and "-b" not in argv
                        and "--version" not in argv and "-V" not in argv)
    if live:
        with tui.Tmux("readme") as tmux:
            pane = tui.Pane(tmux, "live", argv, scratch)
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline:
                if "tachyon-top  pid %d" % w.proc.pid in pane.capture().text:
                    break
                if pane.exit_status() is not None:
                    return "the live view exited with %s" % pane.exit_status()
                time.sleep(0.1)
            else:
                return "the live view drew no header in 15 s: %s" % pane.capture().text[:300]
            pane.keys("q")
            deadline = time.monotonic() + 5
            while pane.exit_status() is None and time.monotonic() < deadline:
                time.sleep(0.05)
            return None if pane.exit_status() == 0 else \
                "q: the live view exited with %s" % pane.exit_status()
    if argv[:1] == ["watch"]:
        proc = subprocess.Popen([rig.BIN] + argv, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT)
        time.sleep(2)
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=20)
        if proc.returncode != 0 or b"watch: process %d" % w.proc.pid not in out:
            return "exit %s: %s" % (proc.returncode, out[-300:])
        return None
    run = subprocess.run([rig.BIN] + argv, capture_output=True, timeout=120,
                         stdin=subprocess.DEVNULL)
    if run.returncode != 0:
        return "exit %d: %s" % (run.returncode, run.stderr.decode("utf-8", "replace")[-300:])
    if not run.stdout and not any(a.startswith(scratch) for a in argv):
        return "printed nothing"
    for a in argv:
        if a.startswith(scratch) and not os.path.basename(a) == "reports" \
                and not os.path.exists(a):
            return "did not write %s" % a
    return None


def main():
    if not os.path.isdir(os.path.join(rig.ROOT, "usr")):
        return rig.root_missing()
    with open(os.path.join(SRC, "README.md"), encoding="utf-8") as f:
        commands = readme_commands(f.read())
    print("1..%d" % (len(commands) + 2))
    n = 0
    status = 0
    scratch = tempfile.mkdtemp(prefix="tt-readme-out-")
    try:
        with Workload() as w:
            ran = 0
            for cmd in commands:
                n += 1
                skip = why_not(cmd)
                if skip:
                    print("ok %d - README: %s # SKIP %s" % (n, cmd, skip))
                    continue
                problem = run_one(cmd, w, scratch)
                ran += 1
                if problem:
                    status = 1
                    print("not ok %d - README: %s" % (n, cmd))
                    print("# " + rig.printable(problem).replace("\n", "\n# "))
                else:
                    print("ok %d - README: %s" % (n, cmd))
            n += 1
            ok = ran >= 10
            print("%s %d - %d of the README's %d commands run%s" % (
                "ok" if ok else "not ok", n, ran, len(commands), "" if ok else
                ": the test no longer finds them"))
            status |= not ok
            n += 1
            problem = run_one("tachyon-top dump -p PID --lcoals", w, scratch)
            ok = problem is not None and "exit 2" in problem
            print("%s %d - a command with an option that does not exist fails the test"
                  % ("ok" if ok else "not ok", n))
            status |= not ok
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
