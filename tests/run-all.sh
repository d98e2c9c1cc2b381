#!/bin/sh
# Build and run every test from a clean tree: provision the target
# interpreters, then a -Werror build with `make check` over the whole
# interpreter matrix, an ASan+UBSan build with `make check` over one
# interpreter of each kind, `make distcheck`, the fuzz targets for 20 s
# each, the README's main command, and the soak's 5-minute mode.
# Prints one summary line.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
start=$(date +%s)
sh tests/provision.sh

mkdir -p _build
autoreconf -fi >_build/autoreconf.out 2>&1 || { cat _build/autoreconf.out; exit 1; }
jobs=${TT_JOBS:-2}
passed=0
failed=0
status=0
failed_logs=

# Time stolen from this machine's CPUs by its host (cloud VMs): a
# sampler's timing checks mean less when it climbs, so each stage says it.
steal_s() {
	awk '/^cpu /{ printf "%d", $9 / 100 }' /proc/stat
}
steal0=$(steal_s)
stage_time() {
	echo "== $1: $(($(date +%s) - start)) s since start; CPU time stolen by the host: $(($(steal_s) - steal0)) s"
}

# Run `make TARGET` in build dir $1 configured with the remaining flags.
# $suite_interps, if set, is the tests' interpreter matrix (TT_INTERPS).
run_suite() {
	dir=$1 target=$2
	shift 2
	rm -rf "$dir"
	mkdir -p "$dir"
	echo "== $dir: configure $* && make $target${suite_interps:+ (interpreters: $suite_interps)}"
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
	# A clean build prints no warnings: autoreconf, configure, compiler, ar.
	if grep -n -i -E 'warning|ignored' _build/autoreconf.out "$dir/configure.out" "$dir/build.out"; then
		echo "not ok - $dir: the build printed the warnings above"
		failed=$((failed + 1))
		status=1
	else
		echo "ok - $dir: no warnings from autoreconf, configure or make"
		passed=$((passed + 1))
	fi
	# Tests run one at a time: several of them measure CPU-time splits of
	# live targets, which two suites spinning targets at once on a small
	# machine would distort.
	(
		cd "$dir"
		if [ -n "${suite_interps:-}" ]; then
			TT_INTERPS=$suite_interps
			export TT_INTERPS
		fi
		if [ -n "${layout_free_interps:-}" ]; then
			TT_LAYOUT_FREE_INTERPS=$layout_free_interps
			export TT_LAYOUT_FREE_INTERPS
		fi
		if [ -n "${fuzz_seconds:-}" ]; then
			TT_FUZZ_SECONDS=$fuzz_seconds
			export TT_FUZZ_SECONDS
		fi
		make "$target" VERBOSE=1
	) || status=1
	log=$(find "$dir" -name test-suite.log | head -n 1)
	if [ -n "$log" ]; then
		p=$(sed -n 's/^# PASS: *//p' "$log" | head -n 1)
		f=$(sed -n 's/^# FAIL: *//p' "$log" | head -n 1)
		e=$(sed -n 's/^# ERROR: *//p' "$log" | head -n 1)
		passed=$((passed + ${p:-0}))
		failed=$((failed + ${f:-0} + ${e:-0}))
		for t in $(sed -n 's/^\(FAIL\|ERROR\|XPASS\): \([^ ]*\).*/\2/p' "$log" | sort -u); do
			tl=$(dirname "$log")/${t%.*}.log
			if [ -f "$tl" ]; then failed_logs="$failed_logs $tl"; fi
		done
	fi
	stage_time "$dir"
}

suite_interps=${TT_INTERPS:-}
# The walker's suites (layouts, dump, sampler, asyncio tasks) run on the
# whole matrix: they read each build's own structures. The suites whose
# code does not depend on the interpreter (views, exports, ring, kernel
# waits, process trees) run on every minor version, a debug build and an
# embedded libpython: half the matrix (on all of it they took 10 of the
# release pass's 22 minutes, 7 on these; the rest found nothing more).
layout_free_interps=${TT_LAYOUT_FREE_INTERPS:-python3.13 python3.14d python3.15 libpython3.15 host-python3.11 pyenv-3.11 pyenv-3.12}
[ -n "${TT_INTERPS:-}" ] && layout_free_interps=${TT_LAYOUT_FREE_INTERPS:-}
# The fuzzers hunt memory errors: in full under the sanitizers below, a
# second per version here (it still proves they run on a release build).
fuzz_seconds=1
run_suite _build/release check
# The sanitizer pass looks for memory errors in tachyon-top itself: the C
# unit and fuzz tests in full, the walker's real-interpreter suites on one
# interpreter per layout family (a release and a debug build, an executable
# and an embedded libpython, and a compiled-in 3.11 layout), and the suites
# whose code does not depend on the interpreter (views, exports, ring,
# kernel waits, process trees) on one. Running the whole matrix again under
# ASan finds nothing the release pass and these do not, and costs CI time.
suite_interps=${TT_SAN_INTERPS:-python3.13 python3.14d python3.15 libpython3.15 host-python3.11}
layout_free_interps=python3.15
fuzz_seconds=
run_suite _build/sanitize check --enable-sanitizers --enable-debug
suite_interps=
layout_free_interps=
# distcheck proves the tarball builds and its tests run from it: the C
# tests, and of the suites on real interpreters the layout check and
# functional.py on one interpreter. The suites in full already ran above on
# the whole matrix; again from the tarball they cost CI minutes and proved
# nothing more.
(cd _build/release && TT_INTERPS=python3.15 TT_FUZZ_SECONDS=1 \
	make distcheck SUITE_TESTS="tests/check-layouts.sh tests/functional.py" \
	>distcheck.out 2>&1) || {
	tail -n 60 _build/release/distcheck.out
	# The tail above ends with the summary; name what failed and show
	# each failing test's own lines, so a CI log says why.
	dlog=$(find _build/release -path '*/_build/sub/test-suite.log' | head -n 1)
	if [ -n "$dlog" ]; then
		echo "== distcheck: failed tests"
		grep -E '^(FAIL|ERROR|XPASS):' "$dlog" || true
		for t in $(sed -n 's/^\(FAIL\|ERROR\|XPASS\): \([^ ]*\).*/\2/p' "$dlog" | sort -u); do
			tl=$(dirname "$dlog")/${t%.*}.log
			[ -f "$tl" ] || continue
			echo "== $tl: lines around each 'not ok'"
			grep -n -B 3 -A 25 -E '^not ok|^Bail out|Traceback' "$tl" | head -n 200
		done
		p=$(sed -n 's/^# PASS: *//p' "$dlog" | head -n 1)
		f=$(sed -n 's/^# FAIL: *//p' "$dlog" | head -n 1)
		e=$(sed -n 's/^# ERROR: *//p' "$dlog" | head -n 1)
		passed=$((passed + ${p:-0}))
		failed=$((failed + ${f:-0} + ${e:-0}))
	fi
	echo "distcheck failed"
	status=1
}
stage_time distcheck
# A whole-program check: output to _build/NAME.out, the last `shown` lines
# of it printed when it passes, 40 when it fails.
run_check() {
	name=$1 label=$2 shown=$3
	shift 3
	if "$@" >"_build/$name.out" 2>&1; then
		[ "$shown" = 0 ] || tail -n "$shown" "_build/$name.out"
		echo "ok: $label exits 0"
		passed=$((passed + 1))
	else
		rc=$?
		tail -n 40 "_build/$name.out"
		echo "not ok: $label exited $rc"
		failed=$((failed + 1))
	fi
	stage_time "$name"
}

# The Debian package: built from the release tarball (make deb), lintian,
# installed on this host, run, removed.
run_check package "tests/package.sh (make deb, lintian, dpkg -i, run, dpkg -r)" 12 \
	sh tests/package.sh _build/release
# Coverage-guided fuzzing: every libFuzzer target (tests/fuzz/) 20 s,
# built with clang under ASan and UBSan.
run_check fuzz "tests/fuzz.sh -t 20" 20 sh tests/fuzz.sh -t 20
# The README's main command, as a new user runs it without a terminal: it
# must run the workload, print its views and exit 0.
run_check demo tests/demo.sh 0 env TT_DEMO_TEXT=1 sh tests/demo.sh
# Left attached to production: the soak's short mode (tests/soak.py) keeps
# the live view and record on a server tree that recycles its workers,
# churns threads and asyncio tasks, and fails when either grows in memory
# after warm-up, misses a new worker or exits.
run_check soak "tests/soak.py --minutes 5" 3 \
	python3 tests/soak.py --tt _build/release/tachyon-top --minutes 5 --every 30
# Last, so that a CI log's tail says why: each failed check and the
# lines it printed.
for tl in $failed_logs; do
	echo "== $tl: each 'not ok' and its lines"
	grep -h -A 14 -E '^not ok|^Bail out' "$tl" | head -n 120
done
[ "$status" = 0 ] && [ "$failed" -gt 0 ] && status=1
echo "tests: $passed passed, $failed failed"
exit "$status"
