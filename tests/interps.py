"""The interpreters the test suites start targets under, and how to start each.

A name in TT_INTERPS is one of:

    python3.X[d|-pie|-nopie]   /usr/bin/python3.X... inside the Debian root
                               $TT_ROOT, run with chroot (3.13-3.15)
    libpython3.X[d]            that root's libpython3.X.so, embedded in
                               tests/embedhost, run with chroot
    host-python3.11[d]         Debian 12's own /usr/bin/python3.11 (non-PIE) and
                               python3.11-dbg (Py_DEBUG) on the host
    host-libpython3.11         the host's libpython3.11.so.1.0 in tests/embedhost
    pyenv-3.11, pyenv-3.12     pyenv builds under $PYENV_ROOT/versions/3.X.*
                               (PIE, shared libpython), the newest micro release

Targets of the root run chrooted and see root paths; host targets (host-*,
pyenv-*) run on the host and are given the host paths of the same files
(command() maps the suite's scratch paths for them).
"""

import glob
import os
import re

ROOT = os.environ.get("TT_ROOT", "/var/cache/tachyon-top/sid-root")
PYENV_ROOT = os.environ.get("PYENV_ROOT", "/root/.pyenv")
LIBDIR = "/usr/lib/x86_64-linux-gnu"
EMBED_HOST = os.path.join(os.environ.get("TT_BUILDDIR", "."), "tests", "embedhost")

DEFAULT = ("python3.13 python3.14 python3.15 python3.15-static-pie "
           "python3.15d python3.14d python3.13d libpython3.15 libpython3.13 "
           "host-python3.11 host-python3.11d host-libpython3.11 pyenv-3.11 pyenv-3.12")


def in_root(path):
    """Host path of a path inside the root."""
    return os.path.join(ROOT, path.lstrip("/"))


def resolve_in_root(path, hops=20):
    """Host path of a root path, following symlinks relative to the root."""
    for _ in range(hops):
        host = in_root(path)
        if not os.path.islink(host):
            return host
        link = os.readlink(host)
        path = link if link.startswith("/") else os.path.join(os.path.dirname(path), link)
    return in_root(path)


def _version_key(path):
    return [int(x) for x in re.findall(r"\d+", os.path.basename(path))]


def _pyenv_python(minor):
    """Newest pyenv build of 3.minor, or None."""
    dirs = [d for d in glob.glob(os.path.join(PYENV_ROOT, "versions", "3.%d.*" % minor))
            if re.fullmatch(r"3\.%d\.\d+" % minor, os.path.basename(d))]
    for d in sorted(dirs, key=_version_key, reverse=True):
        exe = os.path.join(d, "bin", "python3.%d" % minor)
        if os.access(exe, os.X_OK):
            return exe
    return None


class Interp:
    """One interpreter of the matrix.

    host_path  the executable or library, as a host path (for checks)
    on_host    runs on the host rather than chrooted into the root
    embedded   runs inside tests/embedhost, which dlopen()s host_path
    lib        the library's path as the target sees it (embedded only)
    missing    why it cannot run here, or None
    """

    def __init__(self, name):
        self.name = name
        self.embedded = False
        self.on_host = False
        self.lib = None
        self.exe = None
        self.missing = None
        m = re.fullmatch(r"host-(lib)?python(3\.11d?)", name)
        p = re.fullmatch(r"pyenv-3\.(\d+)", name)
        if m:
            self.on_host = True
            self.embedded = bool(m.group(1))
            if self.embedded:
                self.lib = self.host_path = "%s/libpython%s.so.1.0" % (LIBDIR, m.group(2))
            else:
                self.exe = self.host_path = "/usr/bin/python" + m.group(2)
            if not os.path.exists(self.host_path):
                self.missing = "%s not installed on the host (tests/provision.sh installs it)" \
                               % self.host_path
        elif p:
            self.on_host = True
            self.exe = self.host_path = _pyenv_python(int(p.group(1)))
            if not self.exe:
                self.missing = "no pyenv build of 3.%s in %s/versions" % (p.group(1), PYENV_ROOT)
        elif name.startswith("libpython"):
            self.embedded = True
            self.lib = "%s/%s.so.1.0" % (LIBDIR, name)
            self.host_path = resolve_in_root(self.lib)
            if not os.path.isfile(self.host_path):
                self.missing = "%s not in the root" % name
        else:
            # python3.15-static-pie is built into the root's /usr/local/bin
            # by tests/provision.sh; Debian's interpreters are in /usr/bin.
            self.exe = name
            local = "/usr/local/bin/" + name
            self.host_path = resolve_in_root(local if os.path.exists(in_root(local))
                                             else "/usr/bin/" + name)
            if not os.access(self.host_path, os.X_OK):
                self.missing = "%s not in the root" % name
        if self.embedded and not self.missing and not os.access(EMBED_HOST, os.X_OK):
            self.missing = "%s not built" % EMBED_HOST

    def where(self):
        """Where it comes from, for the TAP header."""
        if not self.on_host:
            return "Debian root %s" % ROOT
        return "host" if self.name.startswith("host-") else "pyenv"


def get(name):
    return Interp(name)


def command(interp, root_scratch, embed_host, args, chroot="chroot"):
    """The argv that runs Python as *interp* with *args* (Python's own
    arguments, paths in them as root paths). *embed_host* is the root path of
    a copy of tests/embedhost."""
    it = interp if isinstance(interp, Interp) else get(interp)
    head = [embed_host, it.lib] if it.embedded else [it.exe]
    argv = head + [str(a) for a in args]
    if not it.on_host:
        return [chroot, ROOT] + argv
    # On the host the scratch files are under the root's directory.
    return [in_root(a) if a == root_scratch or a.startswith(root_scratch + "/") else a
            for a in argv]
