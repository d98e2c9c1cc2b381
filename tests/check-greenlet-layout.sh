#!/bin/sh
# Compare the greenlet layouts compiled into tachyon-top
# (src/target/greenletlayout.c) with offsetof() of each field in the C++
# classes of the greenlet installed in the provisioned root (its package
# ships its headers), compiled against each Python it is built for. A
# greenlet release that moves a field would otherwise misread every
# greenlet. Emits TAP.
set -u
TT_ROOT=${TT_ROOT:-/var/cache/tachyon-top/sid-root}
SRC=${TT_SRCDIR:-.}
G=$TT_ROOT/usr/lib/python3/dist-packages/greenlet

if [ ! -f "$G/TGreenlet.hpp" ]; then
	if [ "${CI:-}" = true ]; then
		echo "1..1"
		echo "not ok 1 - no greenlet with headers in $TT_ROOT (run tests/provision.sh)"
		exit 1
	fi
	echo "1..0 # SKIP greenlet not in the target root (run tests/provision.sh)"
	exit 0
fi
version=$(sed -n "s/^__version__ = ['\"]\([^'\"]*\)['\"].*/\1/p" "$G/__init__.py")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The headers include <x86_64-linux-gnu/python3.X/pyconfig.h>: only that
# directory of the root's, not its C library's headers.
mkdir -p "$work/inc"
ln -s "$TT_ROOT/usr/include/x86_64-linux-gnu" "$work/inc/x86_64-linux-gnu"
cat >"$work/check.cpp" <<'CPP'
#define private public
#define protected public
#include "TGreenlet.hpp"
#include "TThreadState.hpp"
#include <cstdio>
#include <cstdlib>
#include <cstddef>
extern "C" {
#include "greenletlayout.h"
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
	C(g_self, offsetof(Greenlet, _self));
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
n=0
fail=0
minors=$(ls "$G" | sed -n 's/^_greenlet\.cpython-3\([0-9]*\)-.*\.so$/\1/p' | sort -u)
echo "1..$(echo "$minors" | wc -w)"
for minor in $minors; do
	n=$((n + 1))
	what="greenlet $version on Python 3.$minor"
	if ! gcc -c -std=c11 -I"$SRC/src/target" "$SRC/src/target/greenletlayout.c" \
		-o "$work/layout.o" 2>"$work/cc.err" ||
		! g++ -std=c++11 -w -I"$G" -I"$TT_ROOT/usr/include/python3.$minor" -I"$work/inc" \
			-I"$SRC/src/target" "$work/check.cpp" "$work/layout.o" \
			-Wl,--unresolved-symbols=ignore-all -Wl,-z,lazy -no-pie \
			-o "$work/check$minor" 2>>"$work/cc.err"; then
		echo "not ok $n - $what: the offsetof() program does not build"
		sed 's/^/# /' "$work/cc.err" | head -n 20
		fail=1
		continue
	fi
	# The program only reads its own tables: no Python symbol is called.
	if out=$("$work/check$minor" "$version" "$minor"); then
		echo "ok $n - $what: every field tachyon-top reads is where the headers put it"
	else
		echo "not ok $n - $what: the layout differs from the headers"
		printf '%s\n' "$out"
		fail=1
	fi
done
exit $fail
