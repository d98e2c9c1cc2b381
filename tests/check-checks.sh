#!/bin/sh
# The source checks fail when they should. On a copy of the tree: the copy
# as it is passes check-layers.sh and check-layout-doc.sh; a header of
# src/target/proc that includes one of walk/ (a subsystem above it) fails
# the first; a source file that docs/layout.md does not name fails the
# second. Emits TAP.
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=${TT_SRCDIR:-$(cd "$here/.." && pwd)}
[ -d "$src/src/target/proc" ] || { echo "1..0 # SKIP no source tree at $src"; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/docs"
cp -R "$src/src" "$src/ui" "$tmp/"
cp "$src/docs/layout.md" "$tmp/docs/"
passes() { TT_SRCDIR="$tmp" sh "$here/$1" >"$tmp/out" 2>&1; }
status=0
check() {   # check OK DESCRIPTION
	if [ "$1" = yes ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		sed 's/^/# /' "$tmp/out"
		status=1
	fi
	n=$((n + 1))
}
n=1
echo "1..3"
ok=no
passes check-layers.sh && passes check-layout-doc.sh && ok=yes
check $ok "the tree as it is passes both checks"

printf '#include "walk/sample.h"\n' >"$tmp/src/target/proc/probe.h"
echo '- `proc/probe.h` — a probe.' >>"$tmp/docs/layout.md"
ok=no
passes check-layout-doc.sh && ! passes check-layers.sh && grep -q "probe.h walk/sample.h" "$tmp/out" && ok=yes
check $ok "proc/ including walk/'s header fails the layer check, naming it"
rm "$tmp/src/target/proc/probe.h"

printf 'int unlisted;\n' >"$tmp/src/target/mem/unlisted.c"
ok=no
passes check-layers.sh && ! passes check-layout-doc.sh && grep -q "mem/unlisted.c" "$tmp/out" && ok=yes
check $ok "a source file left out of docs/layout.md fails the layout-doc check, naming it"
exit $status
