#!/usr/bin/env python3
"""Write the fuzz targets' seed corpus (tests/fuzz/corpus/NAME/seed-*) from
real inputs of this machine: the /proc files of live processes, the
kernel's socket diagnostics replies, a runtime's perf map, code objects'
location tables, the shipped themes, a recording and folded stacks of a
real run. Run as root from the source tree, with a built tachyon-top and
the target root (tests/provision.sh); seeds are kept small. Inputs the
fuzzers found bugs with are added beside them by hand (crash-*), never
rewritten here.

    python3 tests/fuzz/make-seeds.py --tt build/tachyon-top

(the memory images come from build/tests/fuzz/snapshot, built by make check)
"""
import argparse
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")
ROOT = "/var/cache/tachyon-top/sid-root"
MAX = 131072


def put(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(data[:MAX])


def head(path, lines=40):
    with open(path, "rb") as f:
        return b"".join(f.readlines()[:lines])


def proc_seeds(pid):
    tid = pid
    put("proc", "maps", head(f"/proc/{pid}/maps", 60))
    for name in ("stat", "status", "sched", "schedstat", "syscall"):
        put("proc", name, open(f"/proc/{pid}/task/{tid}/{name}", "rb").read())
    put("proc", "host-stat", head("/proc/stat", 12))
    if os.path.exists("/proc/pressure/cpu"):
        put("proc", "pressure-cpu", open("/proc/pressure/cpu", "rb").read())
    with open(__file__, "rb") as f:
        put("proc", "fdinfo-file", open(f"/proc/self/fdinfo/{f.fileno()}", "rb").read())
    for table in ("tcp", "tcp6", "udp", "unix"):
        put("proc", "net-" + table, head(f"/proc/{pid}/net/{table}", 12))
    # an epoll's fdinfo, and a descriptor's link
    import select
    ep = select.epoll()
    r, w = os.pipe()
    ep.register(r, select.EPOLLIN)
    put("proc", "fdinfo-epoll", open(f"/proc/self/fdinfo/{ep.fileno()}", "rb").read())
    put("proc", "link-pipe", os.readlink(f"/proc/self/fd/{r}"))
    ep.close()
    os.close(r)
    os.close(w)


def netlink_seeds():
    NETLINK_SOCK_DIAG, SOCK_DIAG_BY_FAMILY = 4, 20
    NLM_F_REQUEST, NLM_F_DUMP = 1, 0x300
    INET_DIAG_INFO = 2
    # a listener and a connection to it, so the reply holds both
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen()
    c = socket.create_connection(ls.getsockname())
    a, _ = ls.accept()
    c.sendall(b"GET / HTTP/1.0\r\n\r\n")
    a.recv(100)
    nl = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, NETLINK_SOCK_DIAG)
    # inet_diag_req_v2: family, protocol, ext, pad, states, sockid (48 bytes)
    req = struct.pack("=BBBBI", socket.AF_INET, socket.IPPROTO_TCP, 1 << (INET_DIAG_INFO - 1),
                      0, (1 << 1) | (1 << 10)) + bytes(48)
    msg = struct.pack("=IHHII", 16 + len(req), SOCK_DIAG_BY_FAMILY,
                      NLM_F_REQUEST | NLM_F_DUMP, 7, 0) + req
    nl.send(msg)
    put("netlink", "tcp", nl.recv(65536))
    while struct.unpack("=IH", nl.recv(65536)[:6])[1] != 3:   # to NLMSG_DONE
        pass
    # unix_diag_req: family, protocol, pad, states, ino, show, cookie
    u1, u2 = socket.socketpair()
    ino = os.fstat(u1.fileno()).st_ino
    req = struct.pack("=BBHIII", socket.AF_UNIX, 0, 0, 0xffffffff, ino, 1 | 4) + \
        struct.pack("=II", 0xffffffff, 0xffffffff)
    msg = struct.pack("=IHHII", 16 + len(req), SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST, 9, 0) + req
    nl.send(msg)
    put("netlink", "unix", nl.recv(65536))
    srv = socket.socket(socket.AF_UNIX)
    srv.bind("\0tachyon-top-seed")
    srv.listen()
    ino = os.fstat(srv.fileno()).st_ino
    req = struct.pack("=BBHIII", socket.AF_UNIX, 0, 0, 0xffffffff, ino, 1 | 4) + \
        struct.pack("=II", 0xffffffff, 0xffffffff)
    nl.send(struct.pack("=IHHII", 16 + len(req), SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST, 11, 0) + req)
    put("netlink", "unix-abstract", nl.recv(65536))
    for s in (nl, ls, c, a, u1, u2, srv):
        s.close()


def run_in_root(code, *args):
    return subprocess.run(["chroot", ROOT, "python3.15", *args, "-c", code], check=True,
                          capture_output=True).stdout


def perfmap_seeds():
    code = ("import sys,os\n"
            "def f(n): return n if n < 2 else f(n-1)+f(n-2)\n"
            "f(12)\n"
            "print(os.getpid())\n")
    pid = run_in_root(code, "-X", "perf").decode().strip()
    path = f"{ROOT}/tmp/perf-{pid}.map"
    put("perfmap", "trampolines", head(path, 50))
    os.unlink(path)
    # an ELF object such as a JIT lists for debuggers: a compiled function
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "jit.c")
        with open(src, "w") as f:
            f.write("int jitted_add(int a, int b) { return a + b; }\n"
                    "static int jitted_twice(int a) { return 2 * a; }\n"
                    "int (*keep)(int) = jitted_twice;\n")
        subprocess.run(["cc", "-O1", "-c", "-o", os.path.join(d, "jit.o"), src], check=True)
        put("perfmap", "jit-object", open(os.path.join(d, "jit.o"), "rb").read())


def linetable_seeds():
    code = ("import sys, struct, asyncio, json\n"
            "for i, co in enumerate([json.dumps.__code__, asyncio.sleep.__code__,\n"
            "                        json.JSONEncoder.iterencode.__code__]):\n"
            "    sys.stdout.buffer.write(struct.pack('=IiQ', len(co.co_linetable) + 12,\n"
            "        co.co_firstlineno, 3 + 2 * i) + co.co_linetable)\n")
    out = run_in_root(code)
    i = 0
    while out:
        n = struct.unpack("=I", out[:4])[0]
        put("linetable", f"code{i}", out[4:4 + n])
        out = out[4 + n:]
        i += 1


def theme_seeds():
    for f in sorted(os.listdir(os.path.join(HERE, "..", "..", "themes"))):
        put("theme", f, open(os.path.join(HERE, "..", "..", "themes", f), "rb").read())


def recording_seeds(tt):
    target = os.path.join(HERE, "..", "targets", "flame.py")
    with tempfile.TemporaryDirectory() as d:
        rec = os.path.join(d, "run.ttrec")
        folded = os.path.join(d, "run.folded")
        p = subprocess.Popen([sys.executable, target, os.path.join(d, "ready")])
        time.sleep(1)
        subprocess.run([tt, "record", "-p", str(p.pid), "-d", "0.2", "-r", "100",
                        "-o", rec], check=True, capture_output=True)
        p.kill()
        p.wait()
        subprocess.run([tt, "replay", rec, "-o", folded], check=True, capture_output=True)
        put("recording", "flame.ttrec", open(rec, "rb").read())
        put("diffbase", "flame.folded", head(folded, 40))


def start_target(interp, script, *args):
    """A target from tests/targets under interp ("python3.15": the root's;
    a path: the host's), started and parked: (process, ready file)."""
    src = os.path.join(HERE, "..", "targets")
    if interp.startswith("/"):
        ready = tempfile.mktemp(prefix="tt-seed-")
        cmd = [interp, "-E", "-s", os.path.join(src, script), ready, *args]
        host_ready = ready
    else:
        os.makedirs(f"{ROOT}/tmp/np", exist_ok=True)
        for f in (script, "_ttlib.py"):
            shutil.copy(os.path.join(src, f), f"{ROOT}/tmp/np/")
        ready = f"/tmp/np/seed-ready-{os.getpid()}-{time.monotonic_ns()}"
        host_ready = ROOT + ready
        cmd = ["chroot", ROOT, interp, "-E", "-s", "/tmp/np/" + script, ready, *args]
    if os.path.exists(host_ready):
        os.unlink(host_ready)
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    for _ in range(300):
        if os.path.exists(host_ready) and os.path.getsize(host_ready):
            time.sleep(0.3)
            return p, host_ready
        time.sleep(0.1)
    p.kill()
    raise SystemExit(f"make-seeds: {interp} {script} never got ready")


def snapshot(tool, pid, target, name, *what):
    out = os.path.join(CORPUS, target, "seed-" + name)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    subprocess.run([tool, str(pid), out, *what], check=True)


INTERPRETERS = ["/usr/bin/python3.11", "/root/.pyenv/versions/3.12.1/bin/python3",
                "python3.13", "python3.14", "python3.15", "python3.15d"]


def memory_seeds(tool):
    """Images of real interpreters: thread names and stacks for the walkers
    (and their samples of a process that ran on between them),
    locals of every kind for values, event loops' tasks of every shape
    (gather, TaskGroup, shield, a task awaited by two) for tasks, the JIT's
    objects for jit."""
    for interp in INTERPRETERS:
        if interp.startswith("/") and not os.path.exists(interp):
            continue
        tag = os.path.basename(interp) if not interp.startswith("/root") else "pyenv-3.12"
        for script, target, what, args in (("names.py", "walk", ["walk"], []),
                                           ("locals.py", "values", ["values"], ["100"])):
            p, _ = start_target(interp, script, *args)
            try:
                snapshot(tool, p.pid, target, f"{tag}-{script[:-3]}", *what)
            finally:
                os.killpg(p.pid, 9)
                p.wait()
    # The process runs on between the sampler's samples: a pool whose
    # threads come and go (the list changes, the GIL moves), and a thread
    # whose stack changes at every call, each the second sample's input.
    for interp in ("python3.15", "/usr/bin/python3.11"):
        tag = os.path.basename(interp)
        for script, args in (("pool_churn.py", ["12"]), ("flame.py", [])):
            p, _ = start_target(interp, script, *args)
            try:
                snapshot(tool, p.pid, "walk", f"{tag}-{script[:-3]}-moving", "walk", "moving")
            finally:
                os.killpg(p.pid, 9)
                p.wait()
    p, _ = start_target("python3.15", "jitcode.py", "jit")
    try:
        snapshot(tool, p.pid, "jit", "python3.15-jitcode", "jit")
    finally:
        os.killpg(p.pid, 9)
        p.wait()
    for interp in ("python3.14", "python3.15"):
        p, _ = start_target(interp, "tasks_forest.py")
        try:
            snapshot(tool, p.pid, "tasks", f"{interp}-forest", "tasks")
        finally:
            os.killpg(p.pid, 9)
            p.wait()


def greenlet_seeds(tool):
    """Images of greenlets where servers park them: gevent's requests blocked
    in recv() beside its hub and threadpool (greenlet 3.3 on 3.14, 2.0 on
    the host's 3.11), eventlet's green threads, and raw greenlets left
    suspended on three threads (3.15); and gevent spawning 2,000 greenlets
    a second, read again after it ran on (3.14)."""
    for interp, mode, moving in (("python3.14", "gevent", False),
                                 ("/usr/bin/python3.11", "gevent", False),
                                 ("/usr/bin/python3.11", "eventlet", False),
                                 ("python3.15", "plain", False),
                                 ("python3.14", "churn", True)):
        if interp.startswith("/") and not os.path.exists(interp):
            continue
        p, _ = start_target(interp, "greenlets.py", mode)
        try:
            snapshot(tool, p.pid, "greenlets", f"{os.path.basename(interp)}-{mode}", "greenlets",
                     *(["moving"] if moving else []))
        finally:
            os.killpg(p.pid, 9)
            p.wait()


def elf_seeds():
    """A library holding .AsyncioDebug, and a small one shaped like
    libpython: a .PyRuntime section, _PyRuntime and Py_Version exported."""
    put("elf", "asyncio-3.14.so",
        open(f"{ROOT}/usr/lib/python3.14/lib-dynload/_asyncio.cpython-314-x86_64-linux-gnu.so",
             "rb").read())
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "lib.c")
        with open(src, "w") as f:
            f.write('__attribute__((section(".PyRuntime"))) char _PyRuntime[256] = "xdebugpy";\n'
                    'const unsigned long Py_Version = 0x030f02f0;\n'
                    'void _Py_NegativeRefcount(void) {}\n')
        out = os.path.join(d, "lib.so")
        subprocess.run(["cc", "-O1", "-shared", "-fPIC", "-Wl,--strip-debug", "-o", out, src],
                       check=True)
        put("elf", "pyruntime.so", open(out, "rb").read())


def debuginfo_seeds():
    """A library whose evaluator-named function keeps `frame` and
    `next_instr` in registers and on the stack (-O2 -g), prefixed with the
    address of its middle."""
    import struct as st
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "eval.c")
        with open(src, "w") as f:
            f.write("struct frame { struct frame *back; unsigned short *code; int n; };\n"
                    "extern int step(struct frame *, unsigned short);\n"
                    "int _PyEval_EvalFrameDefault(void *ts, struct frame *frame, int t) {\n"
                    "  unsigned short *next_instr = frame->code; int acc = t;\n"
                    "  while (frame) {\n"
                    "    acc += step(frame, *next_instr++);\n"
                    "    if (acc & 1) { frame = frame->back; if (frame) next_instr = frame->code; }\n"
                    "  }\n"
                    "  return acc + (ts != 0);\n"
                    "}\n")
        out = os.path.join(d, "eval.so")
        subprocess.run(["cc", "-O2", "-g", "-shared", "-fPIC", "-o", out, src], check=True)
        sym = subprocess.run(["nm", out], check=True, capture_output=True, text=True).stdout
        addr = next(int(line.split()[0], 16) for line in sym.splitlines()
                    if line.endswith(" _PyEval_EvalFrameDefault"))
        put("debuginfo", "evaluator.so", st.pack("<Q", addr + 8) + open(out, "rb").read())


def perfring_seeds():
    """A perf ring's data area as the kernel writes it for the native
    sampler (sample_type TID | TIME | REGS_USER | STACK_USER, 17 registers):
    a comm record, two samples with a stack copy, one wrapping at the ring's
    end; prefixed with where the reader's tail starts."""
    import struct as st

    def sample(tid, t, stack):
        body = st.pack("<IIQQ", tid, tid, t, 2)              # pid, tid, time, ABI 64
        body += b"".join(st.pack("<Q", 0x7ffd0000 + 8 * r) for r in range(17))
        body += st.pack("<Q", len(stack)) + stack + st.pack("<Q", len(stack))
        return st.pack("<IHH", 9, 2, 8 + len(body)) + body  # PERF_RECORD_SAMPLE, user
    comm = b"python3.15\0\0\0\0\0\0"
    comm = st.pack("<IHH", 3, 0, 8 + 8 + len(comm)) + st.pack("<II", 7, 7) + comm
    stack = bytes(range(256))
    records = comm + sample(7, 1000, stack) + sample(7, 2000, stack[:128])
    put("perfring", "samples", st.pack("<Q", 0) + records)
    ring = 1024
    start = ring - 104                                      # the second sample wraps
    area = bytearray(ring)
    for i, b in enumerate(records[:ring]):
        area[(start + i) % ring] = b
    put("perfring", "wrapped", st.pack("<Q", start) + bytes(area))


def core_seeds(tool):
    """The head of a gcore'd interpreter's core: its headers, its notes
    (mappings, threads, registers, its name, auxv) and the start of its
    first segment. A core cut short is still read: the rest is missing."""
    import struct as st
    p, _ = start_target("python3.15", "names.py")
    try:
        with tempfile.TemporaryDirectory() as d:
            core = os.path.join(d, "core")
            subprocess.run(["gdb", "-batch", "-nx", "-p", str(p.pid), "-ex",
                            "gcore " + core], check=True, capture_output=True)
            data = open(core, "rb").read()
    finally:
        os.killpg(p.pid, 9)
        p.wait()
    # gcore writes its notes last: rebuilt as headers, notes, and every
    # segment left out of the core (its pages are then the files')
    phoff, = st.unpack_from("<Q", data, 0x20)
    phnum, = st.unpack_from("<H", data, 0x38)
    notes = b""
    phdrs = []
    at = 64 + 56 * phnum
    for i in range(phnum):
        ptype, flags, off, vaddr, paddr, filesz, memsz, align = \
            st.unpack_from("<IIQQQQQQ", data, phoff + 56 * i)
        if ptype == 4:   # PT_NOTE
            phdrs.append((ptype, flags, at + len(notes), vaddr, paddr, filesz, memsz, align))
            notes += data[off:off + filesz]
        else:
            phdrs.append((ptype, flags, 0, vaddr, paddr, 0, memsz, align))
    head = bytearray(data[:64])
    st.pack_into("<Q", head, 0x20, 64)
    st.pack_into("<Q", head, 0x28, 0)   # no section headers
    st.pack_into("<HHH", head, 0x3a, 0, 0, 0)
    core = bytes(head) + b"".join(st.pack("<IIQQQQQQ", *p) for p in phdrs) + notes
    put("core", "python3.15-names", core)
    for interp in ("python3.15", "/usr/bin/python3.11"):
        core_attach_seed(tool, interp, ("pool.py", "3"), "walk",
                         os.path.basename(interp) + "-attach")
    core_attach_seed(tool, "python3.15", ("greenlets.py", "plain"), "greenlets",
                     "python3.15-greenlets")


def image_regions(path):
    """A memory image's regions (tests/fuzz/memimage.h): [(address, bytes)]."""
    import struct as st
    data = open(path, "rb").read()
    assert data[:8] == b"TTMEMIM3", path
    at = 8 + 8 * 4 + 8 * 3 + 16
    n, = st.unpack_from("<I", data, at)
    at += 4
    regions = []
    for _ in range(n):
        addr, size = st.unpack_from("<QI", data, at)
        at += 12
        regions.append((addr, data[at:at + size]))
        at += size
    return regions


def file_pieces(path, symbols):
    """What attaching and finding symbols read of ELF file path: its first
    page, section table and section names, and the .dynsym entries of the
    names in symbols with their names (Py_Version's value too)."""
    import struct as st
    elf = open(path, "rb").read()
    shoff, = st.unpack_from("<Q", elf, 0x28)
    shnum, shstrndx = st.unpack_from("<HH", elf, 0x3c)
    names_off, names_size = st.unpack_from("<QQ", elf, shoff + 64 * shstrndx + 0x18)
    wanted = [(0, 4096), (shoff, 64 * shnum), (names_off, names_size)]
    sections = [st.unpack_from("<IIQQQQIIQQ", elf, shoff + 64 * i) for i in range(shnum)]
    for sh in sections:
        if sh[1] != 11:   # SHT_DYNSYM
            continue
        strs = sections[sh[6]]
        for i in range(sh[5] // 24):
            name, _, _, shndx, value, _ = st.unpack_from("<IBBHQQ", elf, sh[4] + 24 * i)
            end = elf.index(b"\0", strs[4] + name)
            if elf[strs[4] + name:end].decode() not in symbols or not shndx:
                continue
            wanted += [(sh[4] + 24 * i, 24), (strs[4] + name, end + 1 - strs[4] - name)]
            held = sections[shndx]
            if elf[strs[4] + name:end] == b"Py_Version" and held[1] != 8:   # not NOBITS
                wanted.append((held[4] + value - held[3], 8))
    return [(path, off, elf[off:off + size]) for off, size in wanted]


GREENLET_VTABLES = ("_ZTVN8greenlet12UserGreenletE", "_ZTVN8greenlet12MainGreenletE",
                    "_ZTVN8greenlet14BrokenGreenletE")


def core_attach_seed(tool, interp, args, what, name):
    """A core that attaches: gcore's headers and notes, as its memory the
    bytes the reader `what` (walk, greenlets) read of the same process (its
    memory image's regions) and the first page of the interpreter's
    mapping, and after it the pieces of the files that attaching and
    finding greenlet read (file_pieces; greenlet's __init__.py), which
    fuzz_core writes under its root."""
    import struct as st
    p, _ = start_target(interp, *args)
    try:
        with tempfile.TemporaryDirectory() as d:
            image = os.path.join(d, "image")
            subprocess.run([tool, str(p.pid), image, what], check=True)
            core = os.path.join(d, "core")
            subprocess.run(["gdb", "-batch", "-nx", "-p", str(p.pid), "-ex",
                            "gcore " + core], check=True, capture_output=True)
            data = open(core, "rb").read()
            regions = image_regions(image)
    finally:
        os.killpg(p.pid, 9)
        p.wait()
    binary = interp if interp.startswith("/") else ROOT + "/usr/bin/" + interp
    phoff, = st.unpack_from("<Q", data, 0x20)
    phnum, = st.unpack_from("<H", data, 0x38)
    phdrs = [st.unpack_from("<IIQQQQQQ", data, phoff + 56 * i) for i in range(phnum)]
    notes = b"".join(data[p[2]:p[2] + p[5]] for p in phdrs if p[0] == 4)
    # the mappings, from NT_FILE: count, page size, (start, end, page
    # offset) each, then the paths
    maps = []
    at = 0
    while at + 12 <= len(notes):
        namesz, descsz, ntype = st.unpack_from("<III", notes, at)
        desc = at + 12 + (namesz + 3) // 4 * 4
        if ntype == 0x46494c45:  # NT_FILE
            count, _ = st.unpack_from("<QQ", notes, desc)
            paths = notes[desc + 16 + 24 * count:desc + descsz].split(b"\0")
            for i in range(count):
                s, e, off = st.unpack_from("<QQQ", notes, desc + 16 + 24 * i)
                maps.append((s, off, paths[i].decode()))
        at = desc + (descsz + 3) // 4 * 4
    start = next((s for s, off, path in maps if path == binary and off == 0), None)
    assert start is not None, "the core maps no " + binary
    first = next(data[p[2]:p[2] + min(p[5], 4096)] for p in phdrs
                 if p[0] == 1 and p[3] == start and p[5])
    loads = [(start, first)] + regions
    head = bytearray(data[:64])
    out_phnum = 1 + len(loads)
    st.pack_into("<Q", head, 0x20, 64)
    st.pack_into("<Q", head, 0x28, 0)
    st.pack_into("<HHHH", head, 0x38, out_phnum, 0, 0, 0)
    at = 64 + 56 * out_phnum
    out_ph = [(4, 0, at, 0, 0, len(notes), 0, 1)]
    at += len(notes)
    for vaddr, b in loads:
        out_ph.append((1, 6, at, vaddr, 0, len(b), len(b), 1))
        at += len(b)
    core = bytes(head) + b"".join(st.pack("<IIQQQQQQ", *p) for p in out_ph) + notes
    core += b"".join(b for _, b in loads)
    pieces = file_pieces(binary, ("_PyRuntime", "Py_Version"))
    greenlet = next((path for _, _, path in maps if "/_greenlet." in path), None)
    if what == "greenlets":
        assert greenlet, "the core maps no _greenlet module"
        pieces += file_pieces(greenlet, GREENLET_VTABLES)
        init = os.path.join(os.path.dirname(greenlet), "__init__.py")
        pieces.append((init, 0, open(init, "rb").read()))
    out = b""
    for path, off, b in pieces:
        out += st.pack("<H", len(path)) + path.encode() + st.pack("<QI", off, len(b)) + b
    seed = core + out + st.pack("<Q", len(core)) + b"TTCFILE1"
    assert len(seed) <= MAX, "the core seed is %d bytes (notes %d, memory %d in %d regions)" % (
        len(seed), len(notes), sum(len(b) for _, b in loads), len(loads))
    put("core", name, seed)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tt", default="build/tachyon-top")
    ap.add_argument("--only", help="greenlets: only the greenlets' memory images; core: only"
                    " the cores; memory:"
                    " those and the other memory images; files: those and the ELF files"
                    " and cores")
    a = ap.parse_args()
    snapshot_tool = os.path.join(os.path.dirname(os.path.abspath(a.tt)), "tests", "fuzz",
                                 "snapshot")
    if a.only == "greenlets":
        greenlet_seeds(snapshot_tool)
        return
    if a.only == "core":
        core_seeds(snapshot_tool)
        return
    greenlet_seeds(snapshot_tool)
    memory_seeds(snapshot_tool)
    if a.only == "memory":
        return
    elf_seeds()
    debuginfo_seeds()
    perfring_seeds()
    core_seeds(snapshot_tool)
    if a.only == "files":
        return
    proc_seeds(os.getpid())
    netlink_seeds()
    perfmap_seeds()
    linetable_seeds()
    theme_seeds()
    recording_seeds(os.path.abspath(a.tt))


if __name__ == "__main__":
    main()
