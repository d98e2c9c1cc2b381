#!/bin/sh
# docs/layout.md is the map of the source tree: every source file of src/
# and ui/ is named there (a .c and its .h by either; a file under a
# subsystem folder of src/target with its folder: "mem/remote.c").
# Emits TAP.
set -u
src=${TT_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$src" || { echo "1..0 # SKIP no source tree at $src"; exit 0; }
doc=docs/layout.md
missing=$(for f in src/*.c src/*/*.[ch] src/target/*/*.[ch] ui/*.[ch]; do
	[ -f "$f" ] || continue
	case $f in
	src/target/*/*) name=${f#src/target/} ;;
	*) name=$(basename "$f") ;;
	esac
	stem=${name%.*}
	grep -q -E "(^|[^A-Za-z0-9_/])$stem\.[ch]([^A-Za-z0-9_]|\$)" "$doc" || echo "$f"
done)
echo "1..1"
if [ -z "$missing" ]; then
	echo "ok 1 - docs/layout.md names every source file"
else
	echo "not ok 1 - source files docs/layout.md does not name:"
	echo "$missing" | sed 's/^/# /'
	exit 1
fi
