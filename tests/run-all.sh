#!/bin/sh
# Build and run every test from a clean tree: provision the target
# interpreters, then a -Werror build with `make check`, an ASan+UBSan build
# with `make check`, and `make distcheck`. Prints one summary line.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
sh tests/provision.sh

autoreconf -fi >/dev/null 2>&1 || autoreconf -fi
jobs=${TT_JOBS:-2}
passed=0
failed=0
status=0

# Run `make TARGET` in build dir $1 configured with the remaining flags.
run_suite() {
	dir=$1 target=$2
	shift 2
	rm -rf "$dir"
	mkdir -p "$dir"
	echo "== $dir: configure $* && make $target"
	if ! (cd "$dir" && "$here/configure" --enable-werror "$@" >configure.out 2>&1); then
		cat "$dir/configure.out"
		status=1
		return
	fi
	if ! (cd "$dir" && make -j"$jobs" >build.out 2>&1); then
		cat "$dir/build.out"
		status=1
		return
	fi
	# Tests run one at a time: several of them measure CPU-time splits of
	# live targets, which two suites spinning targets at once on a small
	# machine would distort.
	(cd "$dir" && make "$target" VERBOSE=1) || status=1
	log=$(find "$dir" -name test-suite.log | head -n 1)
	if [ -n "$log" ]; then
		p=$(sed -n 's/^# PASS: *//p' "$log" | head -n 1)
		f=$(sed -n 's/^# FAIL: *//p' "$log" | head -n 1)
		e=$(sed -n 's/^# ERROR: *//p' "$log" | head -n 1)
		passed=$((passed + ${p:-0}))
		failed=$((failed + ${f:-0} + ${e:-0}))
	fi
}

run_suite _build/release check
run_suite _build/sanitize check --enable-sanitizers --enable-debug
# distcheck proves the tarball builds and passes its tests; the full
# interpreter matrix already ran twice above, so one interpreter is enough.
(cd _build/release && TT_INTERPS="python3.15 libpython3.15" make distcheck >distcheck.out 2>&1) || {
	tail -n 60 _build/release/distcheck.out
	echo "distcheck failed"
	status=1
}
[ "$status" = 0 ] && [ "$failed" -gt 0 ] && status=1
echo "tests: $passed passed, $failed failed"
exit "$status"
