"""Non-ASCII names of every PEP 393 kind, in qualnames and in filenames.

The test places this script in a directory with a non-ASCII name, so the
<module> frame's co_filename is a UCS-2 string.  Main thread parks at the end
of (innermost last):
    <module> -> main -> Clé.函数 (UCS-2)     file: this script (UCS-2)
    -> gén_ü (latin-1)                       file: this script
    -> build_chain.<locals>.<lambda>         file: this script
    -> relais_à_été (latin-1)                file: LATIN1_FILE (latin-1)
    -> 𝔣𝔬𝔫𝔠.<locals>.😀 (UCS-4)             file: UCS4_FILE (UCS-4)
The last two are compiled from strings and renamed with code.replace(), since
identifiers are NFKC-normalised (a 𝔣 in source would become a plain f).

Ready file: {"frames": [...]}
"""

import time

import _ttlib as _tt

LATIN1_FILE = "/tmp/virtuel/café_ü.py"
UCS4_FILE = "/tmp/virtuel/𝔣ichier_😀.py"
LATIN1_NAME = "relais_à_été"
UCS4_NAME = "😀"
UCS4_QUALNAME = "𝔣𝔬𝔫𝔠.<locals>.😀"


def compiled_function(source, filename, name, qualname):
    """The only function defined in *source*, renamed to name/qualname."""
    namespace = {"_tt": _tt, "time": time, "OUT": OUT}
    exec(compile(source, filename, "exec"), namespace)
    fn = namespace["f"]
    fn.__code__ = fn.__code__.replace(co_name=name, co_qualname=qualname)
    return fn


def build_chain():
    parked = compiled_function(
        "def f():\n"
        "    _tt.ready(OUT, frames=_tt.own_stack()); time.sleep(_tt.PARK)\n",
        UCS4_FILE, UCS4_NAME, UCS4_QUALNAME)
    relay = compiled_function(
        "\n\ndef f(next_fn):\n    return next_fn()\n",  # call on line 4
        LATIN1_FILE, LATIN1_NAME, LATIN1_NAME)
    return lambda: relay(parked)


def gén_ü(chain):
    return chain()


class Clé:
    def 函数(self, chain):
        return gén_ü(chain)


def main():
    Clé().函数(build_chain())


OUT = _tt.out_path()
main()
