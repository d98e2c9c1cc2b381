"""Locals of every built-in type, for dump --locals, and a counter that
changes while it is read.

argv: READY_FILE [N]
  N        the length of the long list (default ten million; a core test
           takes a smaller one)
  oracle   parks in holding(): arguments and locals covering the types
           repr() knows (a big int, -0.0, nan, a str with an escape and a
           non-BMP character, bytes, nested containers, a cell a closure
           captures, a list of ten million, a user object, a 1 MB str, a
           hostile str); the ready file carries {name: repr(value)} for
           each (the list of ten million and a list nested one level
           deeper than dump shows: what dump shows of them), classes, a
           bound method, built-in functions and methods, modules
  counter  counts in a loop: its `i` changes all the time
The main thread parks in time.sleep().
"""

import sys
import threading
import time
import zipimport

import _ttlib as _tt

OUT = _tt.out_path()
MANY = int(sys.argv[2]) if len(sys.argv) > 2 else 10_000_000
started = threading.Barrier(3)
tids = {}
wants = {}


class Thing:
    class Inner:
        pass

    def method(self):
        pass


def holding(url, retries=3, *extra, timeout=2.5, **options):
    big = 2 ** 100 + 7
    neg = -12345678901234567890123
    small = -5
    zero = 0
    negzero = -0.0
    ratio = 0.1
    huge_f = 1e16
    tiny_f = 1.5e-07
    nan = float("nan")
    text = 'it\'s "q"\x1b\u00e9\u20ac\U0001f600'
    quote = "it's"
    data = b"ab\x00'c\xff"
    buf = bytearray(b"xy\n")
    one = (1,)
    mixed = (1, "two", 3.0, None, True)
    nested = {"k": [1, {2: 3}], 4: None}
    deeper = [[[[1]]]]           # one level more than dump shows
    many = list(range(MANY))
    members = {7}
    frozen = frozenset()
    empty = {}
    obj = Thing()
    inner_obj = Thing.Inner()
    hostile = "\x1b[2J</script><b>\u202e"
    cls = Thing
    inner_cls = Thing.Inner
    builtin_cls = int
    meth = obj.method
    builtin = len
    builtin_meth = members.add
    builtin_mod = sys
    file_mod = _tt
    frozen_mod = zipimport     # frozen in every build since 3.11
    mega = "x" * (1 << 20)
    unset = 1
    del unset

    def closure():
        return big

    skip = {"many", "mega", "skip", "closure", "wants"}
    for name, value in list(locals().items()):
        if name not in skip:
            wants[name] = {"type": type(value).__name__ if type(value).__module__ == "builtins"
                           else type(value).__module__ + "." + type(value).__qualname__,
                           "repr": repr(value)}
    wants["many"] = {"type": "list", "repr": "[0, 1, 2, 3, 4, 5, 6, 7, ... (%d items)]" % MANY}
    wants["deeper"]["repr"] = "[[[[... (1 item)]]]]"
    wants["closure"] = {"type": "function", "repr": repr(closure)}
    tids["oracle"] = threading.get_native_id()
    started.wait()
    time.sleep(_tt.PARK)


def counter():
    tids["counter"] = threading.get_native_id()
    started.wait()
    i = 0
    while True:
        i += 1


def main():
    threading.Thread(target=holding, args=("http://example.com/x", 5, "e1"),
                     kwargs={"flag": 1}, daemon=True).start()
    threading.Thread(target=counter, daemon=True).start()
    started.wait()
    _tt.ready(OUT, roles=tids, wants=wants)
    time.sleep(_tt.PARK)


main()
