#!/bin/sh
# Compare the _Py_DebugOffsets field lists compiled into tachyon-top
# (src/pylayout.c) with the struct declared by each real interpreter's
# headers in the provisioned root. A new micro release that reorders the
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
echo "1..$n"
exit $fail
