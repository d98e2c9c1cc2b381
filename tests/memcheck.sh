#!/bin/sh
# valgrind memcheck over the functional suite: every tachyon-top run the
# suite makes (dump, record, bench, batch, info on real interpreters) runs
# under memcheck, and this prints what memcheck found. A program that
# prints findings, not a test: tests fail under valgrind's slowness where
# they time a target's life, and that says nothing about memory.
#
# Usage (root, after a build): sh tests/memcheck.sh BUILDDIR [INTERPRETERS]
# Exit status: 0 when every log is empty, 1 when memcheck reported
# something, 2 on bad usage.
set -eu

if [ $# -lt 1 ] || [ ! -x "$1/tachyon-top" ]; then
	echo "usage: sh tests/memcheck.sh BUILDDIR [INTERPRETERS] (BUILDDIR/tachyon-top must exist)" >&2
	exit 2
fi
command -v valgrind >/dev/null || { echo "memcheck: valgrind is not installed" >&2; exit 2; }
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
interps=${2:-}
work=$(mktemp -d /tmp/tt-memcheck.XXXXXX)
mkdir "$work/logs"
chmod 1777 "$work" "$work/logs"   # some runs drop privileges
# Definite leaks and every memory error; the log names the run's pid.
cat >"$work/tachyon-top" <<WRAP
#!/bin/sh
exec valgrind -q --leak-check=full --errors-for-leak-kinds=definite \
	--show-leak-kinds=definite --log-file=$work/logs/%p.log "$build/tachyon-top" "\$@"
WRAP
chmod 755 "$work/tachyon-top"

start=$(date +%s)
if [ -n "$interps" ]; then
	TT_INTERPS=$interps
	export TT_INTERPS
fi
# Timeouts x15: valgrind runs the sampler about that much slower.
TT_BIN=$work/tachyon-top TT_BUILDDIR=$build TT_SLOWDOWN=15 \
	python3 "$here/functional.py" >"$work/functional.tap" 2>&1 || true
runs=$(find "$work/logs" -name '*.log' | wc -l)
found=$(find "$work/logs" -name '*.log' -size +0 | wc -l)
tests=$(grep -c -E '^(ok|not ok)' "$work/functional.tap" || true)
failed=$(grep -c '^not ok' "$work/functional.tap" || true)
echo "memcheck: $runs tachyon-top runs in $tests tests ($failed failed under valgrind's" \
	"slowness), $(( $(date +%s) - start )) s; logs in $work/logs"
if [ "$found" -gt 0 ]; then
	for log in $(find "$work/logs" -name '*.log' -size +0); do
		echo "== $log"
		head -n 40 "$log"
	done
	echo "memcheck: $found run(s) with findings"
	exit 1
fi
echo "memcheck: no invalid access, no uninitialised use, no definite leak"
