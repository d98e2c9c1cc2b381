"""Terminal escape sequences and control characters in names and filenames.

Main thread parks at the end of (innermost last):
    <module> -> main -> NASTY_QUALNAME (file: EVIL_FILE) -> EVIL_NAME
EVIL_NAME is the exact string from the issue; NASTY_QUALNAME adds a newline,
CR, NUL, DEL, a C1 CSI and a tab.  Both are set with code.replace(); the
filename comes from compile().

Ready file: {"frames": [...]}
"""

import time

import _ttlib as _tt

EVIL_NAME = "\x1b[31mEVIL\x07\x1b]0;title\x07"
NASTY_QUALNAME = ("Nasty.<locals>.\x1b[2J\x1b[H\nINJECTED line\r\x00nul"
                  "\x7fdel\x9bcsi\ttab\x08")
EVIL_FILE = "/tmp/evil\x1b[2J\x1b]0;pwned\x07\r\x08\x7f\x9b\tdir/\nINJECTED.py"


def renamed(fn, qualname):
    fn.__code__ = fn.__code__.replace(co_name=qualname.rpartition(".")[2],
                                      co_qualname=qualname)
    return fn


def evil():
    _tt.ready(OUT, frames=_tt.own_stack()); time.sleep(_tt.PARK)


def make_nasty():
    namespace = {}
    exec(compile("def f(next_fn):\n    return next_fn()\n", EVIL_FILE, "exec"),
         namespace)
    return renamed(namespace["f"], NASTY_QUALNAME)


def main():
    make_nasty()(renamed(evil, EVIL_NAME))


OUT = _tt.out_path()
main()
