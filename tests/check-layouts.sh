#!/bin/sh
# Compare the _Py_DebugOffsets field lists compiled into tachyon-top
# (src/target/python/pylayout.c) with the struct declared by each real interpreter's
# headers in the provisioned root, and the layouts compiled in for 3.11 and
# 3.12 with offsetof() against the headers of the host's and pyenv's builds. A new micro release that reorders the
# table would otherwise silently misread every target. Emits TAP.
set -u
TT_ROOT=${TT_ROOT:-/var/cache/tachyon-top/sid-root}
FIELDS=${TT_BUILDDIR:-.}/tests/layout_fields

if [ ! -d "$TT_ROOT/usr/include" ]; then
	if [ "${CI:-}" = true ]; then
		echo "1..1"
		echo "not ok 1 - target root $TT_ROOT is not provisioned (run tests/provision.sh)"
		exit 1
	fi
	echo "1..0 # SKIP target root not provisioned (run tests/provision.sh)"
	exit 0
fi

# Print "group.field" for every uint64_t member of struct _Py_DebugOffsets.
header_fields() {
	awk '
	/typedef struct _Py_DebugOffsets/ { inside = 1; next }
	inside && /^} _Py_DebugOffsets;/ { inside = 0 }
	!inside { next }
	{ sub(/\/\/.*/, "") }
	/struct[ a-z_]*\{/ { n = 0; ingroup = 1; next }
	ingroup && /uint64_t/ { gsub(/[ \t;]/, ""); sub(/uint64_t/, ""); f[n++] = $0; next }
	ingroup && /^[ \t]*\}[ \t]*[a-z_]+;/ {
		name = $0; gsub(/[ \t};]/, "", name)
		for (i = 0; i < n; i++) print name "." f[i]
		ingroup = 0
	}' "$1"
}

n=0
fail=0
for minor in 13 14 15; do
	hdr="$TT_ROOT/usr/include/python3.$minor/internal/pycore_debug_offsets.h"
	[ -f "$hdr" ] || hdr="$TT_ROOT/usr/include/python3.$minor/internal/pycore_runtime.h"
	n=$((n + 1))
	if [ ! -f "$hdr" ]; then
		echo "not ok $n - 3.$minor: no header with _Py_DebugOffsets in $TT_ROOT"
		fail=1
		continue
	fi
	want=$(header_fields "$hdr")
	have=$("$FIELDS" "$minor")
	if [ -n "$want" ] && [ "$want" = "$have" ]; then
		echo "ok $n - 3.$minor: $(echo "$have" | wc -l) fields match $(basename "$hdr")"
	else
		echo "not ok $n - 3.$minor: field list differs from $hdr"
		wantf=$(mktemp)
		printf "%s\n" "$want" >"$wantf"
		printf '%s\n' "$have" | diff -u "$wantf" - | sed 's/^/# /'
		rm -f "$wantf"
		fail=1
	fi
done
# Offsets the engine derives by struct knowledge rather than reading from
# the table: compile offsetof() against each build's real headers and compare
# with what `tachyon-top info` computes for a live target of that build.
BIN=${TT_BIN:-./tachyon-top}
CC=${CC:-cc}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# What locals and values are read through (dump --locals), the same for
# the table versions' derived offsets and the compiled-in layouts: one
# list, included by both programs below (P is theirs).
cat >"$work/values.h" <<'CEOF'
	/* locals and values (dump --locals) */
	P("frame.localsplus", offsetof(_PyInterpreterFrame, localsplus));
	P("code.flags", offsetof(PyCodeObject, co_flags));
	P("code.argcount", offsetof(PyCodeObject, co_argcount));
	P("code.kwonlyargcount", offsetof(PyCodeObject, co_kwonlyargcount));
	P("code.localsplusnames", offsetof(PyCodeObject, co_localsplusnames));
	P("code.localspluskinds", offsetof(PyCodeObject, co_localspluskinds));
	P("type.tp_flags", offsetof(PyTypeObject, tp_flags));
	P("tuple.ob_size", offsetof(PyTupleObject, ob_base.ob_size));
	P("tuple.ob_item", offsetof(PyTupleObject, ob_item));
	P("list.ob_size", offsetof(PyListObject, ob_base.ob_size));
	P("list.ob_item", offsetof(PyListObject, ob_item));
	P("float.ob_fval", offsetof(PyFloatObject, ob_fval));
#if PY_MINOR_VERSION == 11
	P("long.ob_size", offsetof(PyLongObject, ob_base.ob_size));
	P("long.ob_digit", offsetof(PyLongObject, ob_digit));
#else
	P("long.lv_tag", offsetof(PyLongObject, long_value.lv_tag));
	P("long.ob_digit", offsetof(PyLongObject, long_value.ob_digit));
#endif
	P("dict.ma_used", offsetof(PyDictObject, ma_used));
	P("dict.ma_keys", offsetof(PyDictObject, ma_keys));
	P("dict.ma_values", offsetof(PyDictObject, ma_values));
	P("dictvalues.values", offsetof(PyDictValues, values));
	P("dictkeys.log2_size", offsetof(PyDictKeysObject, dk_log2_size));
	P("dictkeys.log2_index_bytes", offsetof(PyDictKeysObject, dk_log2_index_bytes));
	P("dictkeys.kind", offsetof(PyDictKeysObject, dk_kind));
	P("dictkeys.nentries", offsetof(PyDictKeysObject, dk_nentries));
	P("dictkeys.indices", offsetof(PyDictKeysObject, dk_indices));
	P("set.used", offsetof(PySetObject, used));
	P("set.mask", offsetof(PySetObject, mask));
	P("set.table", offsetof(PySetObject, table));
	P("bytearray.ob_size", offsetof(PyByteArrayObject, ob_base.ob_size));
	P("bytearray.ob_start", offsetof(PyByteArrayObject, ob_start));
	P("cell.ob_ref", offsetof(PyCellObject, ob_ref));
	P("type.tp_dict", offsetof(PyTypeObject, tp_dict));
	P("heaptype.ht_qualname", offsetof(PyHeapTypeObject, ht_qualname));
	P("function.func_qualname", offsetof(PyFunctionObject, func_qualname));
	P("method.im_func", offsetof(PyMethodObject, im_func));
	P("method.im_self", offsetof(PyMethodObject, im_self));
	P("cfunction.m_ml", offsetof(PyCFunctionObject, m_ml));
	P("cfunction.m_self", offsetof(PyCFunctionObject, m_self));
	P("methoddef.ml_name", offsetof(PyMethodDef, ml_name));
	P("module.md_dict", offsetof(PyModuleObject, md_dict));
	/* an object's own attributes (the names of threads) */
	P("type.tp_basicsize", offsetof(PyTypeObject, tp_basicsize));
	P("heaptype.ht_cached_keys", offsetof(PyHeapTypeObject, ht_cached_keys));
CEOF
cat >"$work/offsets.c" <<'CEOF'
#define Py_BUILD_CORE 1
#include <Python.h>
#include <internal/pycore_interp.h>
#include <internal/pycore_gil.h>
#include <internal/pycore_frame.h>
#include <internal/pycore_dict.h>
#include <internal/pycore_moduleobject.h>
#include <stddef.h>
#include <stdio.h>
#define P(name, expr) printf("%s=%zu\n", name, (size_t)(expr))
int main(void) {
	P("interp.threads_head", offsetof(PyInterpreterState, threads.head));
	P("interp.threads_next_unique_id", offsetof(PyInterpreterState, threads.next_unique_id));
	P("interp.threads_count", offsetof(PyInterpreterState, threads.count));
	P("interp.gil_locked", offsetof(PyInterpreterState, _gil.locked));
	P("interp.gil_last_holder", offsetof(PyInterpreterState, _gil.last_holder));
	P("interp.gil_switch_number", offsetof(PyInterpreterState, _gil.switch_number));
	P("tstate.current_frame", offsetof(PyThreadState, current_frame));
	P("tstate.datastack_chunk", offsetof(PyThreadState, datastack_chunk));
	P("tstate.datastack_top", offsetof(PyThreadState, datastack_top));
	P("stackchunk.previous", offsetof(_PyStackChunk, previous));
	P("stackchunk.size", offsetof(_PyStackChunk, size));
	/* where a frame becomes complete (the __init__ shim is not) */
	P("code.firsttraceable", offsetof(PyCodeObject, _co_firsttraceable));
#include "values.h"
#if PY_MINOR_VERSION >= 14
	/* generator frame states, which asyncio task chains depend on */
	printf("gen.state_suspended_yield_from=%d\n", (int)FRAME_SUSPENDED_YIELD_FROM);
#if PY_MINOR_VERSION >= 15
	printf("gen.state_suspended_yield_from_locked=%d\n", (int)FRAME_SUSPENDED_YIELD_FROM_LOCKED);
#endif
	printf("gen.state_cleared=%d\n", (int)FRAME_CLEARED);
#endif
	return 0;
}
CEOF
for build in 3.13 3.13d 3.14 3.14d 3.15 3.15d; do
	minor=${build%d}
	n=$((n + 1))
	desc="${build}: derived offsets (GIL switch counter, thread list, data stack, first traceable instruction, locals and values) and generator states match the headers"
	inc="$work/inc$build"
	mkdir -p "$inc/x86_64-linux-gnu"
	ln -s "$TT_ROOT/usr/include/x86_64-linux-gnu/python$build" "$inc/x86_64-linux-gnu/python$minor"
	if [ ! -x "$TT_ROOT/usr/bin/python$build" ]; then
		echo "ok $n - $desc # SKIP python$build not in the root"
		continue
	fi
	if ! "$CC" -w -I"$TT_ROOT/usr/include/python$minor" -I"$inc" -o "$work/off$build" \
		"$work/offsets.c" >"$work/cc.log" 2>&1; then
		echo "not ok $n - $desc"
		sed 's/^/# /' "$work/cc.log" | head -n 20
		fail=1
		continue
	fi
	"$work/off$build" | sort >"$work/want"
	chroot "$TT_ROOT" "python$build" -c 'import time; time.sleep(30)' &
	pid=$!
	i=0
	until "$BIN" info -p "$pid" >"$work/info" 2>"$work/info.err" || [ $i -ge 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	grep -F -f "$work/want" "$work/info" | sort >"$work/have" || true
	if [ -s "$work/want" ] && cmp -s "$work/want" "$work/have"; then
		echo "ok $n - $desc"
	else
		echo "not ok $n - $desc"
		sed 's/^/# info: /' "$work/info.err"
		diff -u "$work/want" "$work/have" | sed 's/^/# /'
		fail=1
	fi
done

# 3.11 and 3.12 carry no table: every offset tachyon-top reads is compiled
# in. Compare each with offsetof() against the headers of each build we
# test with, and with what `tachyon-top info` uses for a live target of it.
cat >"$work/compiled.c" <<'CEOF'
#define Py_BUILD_CORE 1
#include <Python.h>
#include <internal/pycore_runtime.h>
#include <internal/pycore_interp.h>
#include <internal/pycore_frame.h>
#include <internal/pycore_gil.h>
#include <internal/pycore_dict.h>
#include <internal/pycore_moduleobject.h>
#include <stddef.h>
#include <stdio.h>
#define P(name, expr) printf("%s=%zu\n", name, (size_t)(expr))
int main(void) {
	P("runtime.interpreters_head", offsetof(_PyRuntimeState, interpreters.head));
#if PY_MINOR_VERSION == 11
	P("runtime.gil", offsetof(_PyRuntimeState, ceval.gil));
#else
	P("interp.ceval_gil", offsetof(PyInterpreterState, ceval.gil));
#endif
	P("gil.last_holder", offsetof(struct _gil_runtime_state, last_holder));
	P("gil.locked", offsetof(struct _gil_runtime_state, locked));
	P("gil.switch_number", offsetof(struct _gil_runtime_state, switch_number));
	P("interp.id", offsetof(PyInterpreterState, id));
	P("interp.next", offsetof(PyInterpreterState, next));
	P("interp.threads_head", offsetof(PyInterpreterState, threads.head));
	P("interp.threads_next_unique_id", offsetof(PyInterpreterState, threads.next_unique_id));
	P("interp.threads_count", offsetof(PyInterpreterState, threads.count));
	P("interp.gc_collecting", offsetof(PyInterpreterState, gc.collecting));
#if PY_MINOR_VERSION == 11
	P("interp.modules", offsetof(PyInterpreterState, modules));
#else
	P("interp.modules", offsetof(PyInterpreterState, imports.modules));
#endif
	P("tstate.next", offsetof(PyThreadState, next));
	P("tstate.interp", offsetof(PyThreadState, interp));
	P("tstate.cframe", offsetof(PyThreadState, cframe));
	P("tstate.root_cframe", offsetof(PyThreadState, root_cframe));
	P("cframe.current_frame", offsetof(_PyCFrame, current_frame));
	P("tstate.thread_id", offsetof(PyThreadState, thread_id));
	P("tstate.native_thread_id", offsetof(PyThreadState, native_thread_id));
	P("tstate.datastack_chunk", offsetof(PyThreadState, datastack_chunk));
	P("tstate.datastack_top", offsetof(PyThreadState, datastack_top));
	P("frame.previous", offsetof(_PyInterpreterFrame, previous));
	P("frame.executable", offsetof(_PyInterpreterFrame, f_code));
	P("frame.prev_instr", offsetof(_PyInterpreterFrame, prev_instr));
	P("frame.owner", offsetof(_PyInterpreterFrame, owner));
	P("code.name", offsetof(PyCodeObject, co_name));
	P("code.qualname", offsetof(PyCodeObject, co_qualname));
	P("code.filename", offsetof(PyCodeObject, co_filename));
	P("code.linetable", offsetof(PyCodeObject, co_linetable));
	P("code.firstlineno", offsetof(PyCodeObject, co_firstlineno));
	P("code.co_code_adaptive", offsetof(PyCodeObject, co_code_adaptive));
	P("code.firsttraceable", offsetof(PyCodeObject, _co_firsttraceable));
	P("object.ob_type", offsetof(PyObject, ob_type));
	P("type.tp_name", offsetof(PyTypeObject, tp_name));
	P("str.state", offsetof(PyASCIIObject, state));
	P("str.length", offsetof(PyASCIIObject, length));
	P("str.ascii_size", sizeof(PyASCIIObject));
	P("str.compact_size", sizeof(PyCompactUnicodeObject));
	P("bytes.ob_size", offsetof(PyBytesObject, ob_base.ob_size));
	P("bytes.ob_sval", offsetof(PyBytesObject, ob_sval));
#include "values.h"
	P("stackchunk.previous", offsetof(_PyStackChunk, previous));
	P("stackchunk.size", offsetof(_PyStackChunk, size));
#ifdef Py_DEBUG
	printf("layout=compiled-in (debug build)\n");
#else
	printf("layout=compiled-in (release build)\n");
#endif
	return 0;
}
CEOF
PYENV_ROOT=${PYENV_ROOT:-/root/.pyenv}
pyenv_build() { # newest pyenv 3.MINOR: "INCLUDE_DIR PYTHON", or nothing
	d=$(ls -d "$PYENV_ROOT"/versions/3."$1".* 2>/dev/null | grep -E "/3\.$1\.[0-9]+$" |
		sort -t. -k3 -n | tail -n 1)
	[ -n "$d" ] && echo "$d/include/python3.$1 $d/bin/python3.$1"
}
for build in host-3.11 host-3.11d pyenv-3.11 pyenv-3.12; do
	n=$((n + 1))
	case $build in
	host-*) v=${build#host-}; spec="/usr/include/python$v /usr/bin/python$v" ;;
	pyenv-*) v=${build#pyenv-}; spec=$(pyenv_build "${v#3.}") ;;
	esac
	desc="$build: compiled-in offsets match offsetof() in its headers and info on a live target"
	inc=${spec% *}
	py=${spec#* }
	if [ -z "$spec" ] || [ ! -x "$py" ] || [ ! -f "$inc/internal/pycore_frame.h" ]; then
		echo "ok $n - $desc # SKIP no ${spec:-pyenv 3.${v#3.} build} with internal headers here"
		continue
	fi
	if ! "$CC" -w -I"$inc" -o "$work/c$build" "$work/compiled.c" >"$work/cc.log" 2>&1; then
		echo "not ok $n - $desc"
		sed 's/^/# /' "$work/cc.log" | head -n 20
		fail=1
		continue
	fi
	"$work/c$build" | sort >"$work/want"
	"$py" -c 'import time; time.sleep(30)' &
	pid=$!
	i=0
	until "$BIN" info -p "$pid" >"$work/info" 2>"$work/info.err" || [ $i -ge 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	grep -F -x -f "$work/want" "$work/info" | sort >"$work/have" || true
	if [ -s "$work/want" ] && cmp -s "$work/want" "$work/have"; then
		echo "ok $n - $desc ($(wc -l <"$work/want") values)"
	else
		echo "not ok $n - $desc"
		sed 's/^/# info: /' "$work/info.err"
		diff -u "$work/want" "$work/have" | sed 's/^/# /'
		fail=1
	fi
done
echo "1..$n"
exit $fail
