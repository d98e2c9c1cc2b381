#!/bin/sh
# Compare the greenlet layouts compiled into tachyon-top
# (src/target/async/greenletlayout.c) with offsetof() of each field in the C++
# classes of each greenlet installed here (Debian's package ships its
# headers), compiled against each Python it is built for: the provisioned
# root's greenlet 3 (TGreenlet.hpp) on its Pythons, and the host's greenlet
# 2.0 (greenlet_greenlet.hpp) on Debian 12's python3.11. A greenlet
# release that moves a field would otherwise misread every greenlet.
# Emits TAP.
set -u
TT_ROOT=${TT_ROOT:-/var/cache/tachyon-top/sid-root}
SRC=${TT_SRCDIR:-.}
G=$TT_ROOT/usr/lib/python3/dist-packages/greenlet
HOST_G=/usr/lib/python3/dist-packages/greenlet

if [ ! -f "$G/TGreenlet.hpp" ] || [ ! -f "$HOST_G/greenlet_greenlet.hpp" ]; then
	if [ "${CI:-}" = true ]; then
		echo "1..1"
		echo "not ok 1 - no greenlet with headers in $TT_ROOT or on the host (run tests/provision.sh)"
		exit 1
	fi
	echo "1..0 # SKIP greenlet not in the target root or on the host (run tests/provision.sh)"
	exit 0
fi
version_of() {
	sed -n "s/^__version__ = ['\"]\([^'\"]*\)['\"].*/\1/p" "$1/__init__.py"
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The root's headers include <x86_64-linux-gnu/python3.X/pyconfig.h>: only
# that directory of the root's, not its C library's headers.
mkdir -p "$work/inc"
ln -s "$TT_ROOT/usr/include/x86_64-linux-gnu" "$work/inc/x86_64-linux-gnu"
cat >"$work/check.cpp" <<'CPP'
#define private public
#define protected public
#ifdef GREENLET_2
#include "greenlet_greenlet.hpp"
#include "greenlet_thread_state.hpp"
#else
#include "TGreenlet.hpp"
#include "TThreadState.hpp"
#endif
#ifdef PY311
#define Py_BUILD_CORE 1
#include "internal/pycore_frame.h"   /* PyFrameObject's fields on 3.11 */
#endif
#include <cstdio>
#include <cstdlib>
#include <cstddef>
extern "C" {
#include "async/greenletlayout.h"
}
using namespace greenlet;
static int bad;
static void check(const char *name, uint64_t have, size_t want)
{
	if (have != want) {
		printf("# %s: tachyon-top has %llu, the headers say %zu\n", name,
		       (unsigned long long)have, want);
		bad++;
	}
}
#define C(field, expr) check(#field, g->field, expr)
int main(int argc, char **argv)
{
	const char *known;
	const struct greenlet_layout *g = greenlet_layout_find(argv[1], (unsigned)atoi(argv[2]),
							       &known);
	if (!g) {
		printf("# no layout for greenlet %s on 3.%s (known: %s)\n", argv[1], argv[2], known);
		return 1;
	}
	C(pyg_pimpl, offsetof(PyGreenlet, pimpl));
#ifdef GREENLET_2
	/* Not in Greenlet before greenlet 3: in each subclass, alike. */
	C(g_self, offsetof(UserGreenlet, _self));
	check("g_self (MainGreenlet)", g->g_self, offsetof(MainGreenlet, _self));
#else
	C(g_self, offsetof(Greenlet, _self));
#endif
	C(g_stack_start, offsetof(Greenlet, stack_state) + offsetof(StackState, _stack_start));
	C(g_stack_stop, offsetof(Greenlet, stack_state) + offsetof(StackState, stack_stop));
	C(g_stack_copy, offsetof(Greenlet, stack_state) + offsetof(StackState, stack_copy));
	C(g_stack_saved, offsetof(Greenlet, stack_state) + offsetof(StackState, _stack_saved));
	C(g_top_frame, offsetof(Greenlet, python_state) + offsetof(PythonState, _top_frame));
	C(ug_main_greenlet, offsetof(UserGreenlet, _main_greenlet));
	C(ug_parent, offsetof(UserGreenlet, _parent));
	C(mg_thread_state, offsetof(MainGreenlet, _thread_state));
	C(ts_current_greenlet, offsetof(ThreadState, current_greenlet));
	C(frameobj_f_frame, offsetof(PyFrameObject, f_frame));
	check("read_size >= sizeof(UserGreenlet)", g->read_size < sizeof(UserGreenlet) ? 0 : 1, 1);
	check("read_size >= sizeof(MainGreenlet)", g->read_size < sizeof(MainGreenlet) ? 0 : 1, 1);
	return bad != 0;
}
CPP
gcc -c -std=c11 -I"$SRC/src/target" "$SRC/src/target/async/greenletlayout.c" \
	-o "$work/layout.o" 2>"$work/layout.err"
n=0
fail=0
# check_one GREENLET_DIR VERSION MINOR PYTHON_INCLUDE EXTRA_CXXFLAGS
check_one() {
	n=$((n + 1))
	what="greenlet $2 on Python 3.$3"
	if [ ! -f "$work/layout.o" ] ||
		! g++ -std=c++11 -w $5 -I"$1" -I"$4" \
			-I"$SRC/src/target" "$work/check.cpp" "$work/layout.o" \
			-Wl,--unresolved-symbols=ignore-all -Wl,-z,lazy -no-pie \
			-o "$work/check$n" 2>"$work/cc.err"; then
		echo "not ok $n - $what: the offsetof() program does not build"
		cat "$work/layout.err" "$work/cc.err" | sed 's/^/# /' | head -n 20
		fail=1
		return
	fi
	# The program only reads its own tables: no Python symbol is called.
	if out=$("$work/check$n" "$2" "$3"); then
		echo "ok $n - $what: every field tachyon-top reads is where the headers put it"
	else
		echo "not ok $n - $what: the layout differs from the headers"
		printf '%s\n' "$out"
		fail=1
	fi
}
minors=$(ls "$G" | sed -n 's/^_greenlet\.cpython-3\([0-9]*\)-.*\.so$/\1/p' | sort -u)
# The same greenlet as pip builds it for the Pythons Debian's package is
# not built for (tests/greenlets.py builds it so): the root's 3.13, and
# pyenv's 3.11 and 3.12 when there.
pyenv_include() {
	ls -d "${PYENV_ROOT:-/root/.pyenv}"/versions/3."$1".*/include/python3."$1" 2>/dev/null | tail -n 1
}
others=""
[ -d "$TT_ROOT/usr/include/python3.13" ] && others="$others 13:$TT_ROOT/usr/include/python3.13"
for m in 11 12; do
	inc=$(pyenv_include $m)
	[ -n "$inc" ] && others="$others $m:$inc"
done
echo "1..$(($(echo "$minors" | wc -w) + $(echo "$others" | wc -w) + 1))"
version=$(version_of "$G")
for minor in $minors; do
	check_one "$G" "$version" "$minor" "$TT_ROOT/usr/include/python3.$minor" "-I$work/inc"
done
for o in $others; do
	minor=${o%%:*}
	flags="-I$work/inc"
	[ "$minor" = 11 ] && flags="$flags -DPY311"
	check_one "$G" "$version" "$minor" "${o#*:}" "$flags"
done
check_one "$HOST_G" "$(version_of "$HOST_G")" 11 /usr/include/python3.11 "-DGREENLET_2 -DPY311"
exit $fail
