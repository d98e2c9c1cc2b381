#!/bin/sh
# Coverage-guided fuzzing with libFuzzer. Builds the fuzz targets
# (tests/fuzz/fuzz_*.c) with clang under ASan and UBSan in _build/fuzz and
# runs each for SECONDS, JOBS at a time, from its working corpus
# (_build/fuzz/corpus/NAME, kept between runs) and its seeds
# (tests/fuzz/corpus/NAME). A crash leaves its input under
# _build/fuzz/crashes/NAME/ and says how to replay it; keep a fixed bug's
# input in tests/fuzz/corpus/NAME/ and the normal suite replays it.
#
#   sh tests/fuzz.sh [-t SECONDS] [-j JOBS] [TARGET ...]   fuzz (20 s each, 2 at once)
#   sh tests/fuzz.sh -t 3600 -j 2                          an hour each, for real
#   sh tests/fuzz.sh --coverage [TARGET ...]               line coverage of each corpus
#   sh tests/fuzz.sh --totals                              time (wall, CPU), runs and finds so far
#   sh tests/fuzz.sh --minimize TARGET INPUT OUT           the smallest input crashing alike
#
# A run stopped for a while (kill -STOP, to give a timing test the CPUs)
# needs a longer hang limit than the 60 s default: TT_FUZZ_TIMEOUT=SECONDS;
# its CPU hours (--totals) count only the time it ran.
#
# Exits 1 when a target crashed or would not build.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${TT_FUZZ_BUILD:-$here/_build/fuzz}
seconds=20
jobs=2
mode=fuzz
while [ $# -gt 0 ]; do
	case $1 in
	-t) seconds=$2; shift 2 ;;
	-j) jobs=$2; shift 2 ;;
	--coverage) mode=coverage; shift ;;
	--totals) mode=totals; shift ;;
	--minimize) mode=minimize; shift ;;
	--one) mode=one; shift ;;
	-h|--help) sed -n '2,/^set -eu/p' "$0" | sed -n 's/^# \{0,1\}//p'; exit 0 ;;
	-*) echo "fuzz.sh: unknown option $1 (see -h)" >&2; exit 2 ;;
	*) break ;;
	esac
done
case $seconds in ''|*[!0-9]*) echo "fuzz.sh: -t takes whole seconds, not '$seconds'" >&2; exit 2 ;; esac
case $jobs in ''|*[!0-9]*|0) echo "fuzz.sh: -j takes a count of at least 1, not '$jobs'" >&2; exit 2 ;; esac

all_targets() {
	for f in "$here"/tests/fuzz/fuzz_*.c; do
		basename "$f" .c | sed 's/^fuzz_//'
	done
}
if [ "$mode" = minimize ]; then
	[ $# = 3 ] || { echo "fuzz.sh: --minimize TARGET INPUT OUT" >&2; exit 2; }
	min_input=$2 min_out=$3
	set -- "$1"
fi
if [ $# -gt 0 ]; then targets=$*; else targets=$(all_targets); fi
for t in $targets; do
	[ -f "$here/tests/fuzz/fuzz_$t.c" ] ||
		{ echo "fuzz.sh: no target $t (there are: $(all_targets | tr '\n' ' '))" >&2; exit 2; }
done

# Configure and build dir $1 with the remaining configure arguments, once.
build_in() {
	dir=$1
	shift
	mkdir -p "$dir"
	[ -x "$here/configure" ] || (cd "$here" && autoreconf -fi >/dev/null 2>&1)
	if [ ! -f "$dir/Makefile" ] || [ "$here/configure" -nt "$dir/Makefile" ]; then
		(cd "$dir" && "$here/configure" "$@" >configure.out 2>&1) ||
			{ tail -n 20 "$dir/configure.out"; exit 1; }
	fi
	(cd "$dir" && make -j"$jobs" fuzz >make.out 2>&1) || { tail -n 40 "$dir/make.out"; exit 1; }
}

# CPU seconds the shell's finished children have used, from the output of
# POSIX `times` in file $1 (its second line: user and system, NmS.SSs);
# `times` itself must run in this shell, not in a command substitution.
children_cpu() {
	awk 'NR == 2 {
		s = 0
		for (i = 1; i <= 2; i++) { split($i, a, "m"); s += a[1] * 60 + a[2] }
		printf "%d", s }' "$1"
}

# One target's run; its summary line on stdout, its log kept. runs.tsv
# gets its end, wall and CPU seconds (a run stopped a while, or starved by
# the rest of the machine, fuzzed for its CPU seconds only), executions,
# corpus size and whether it found something.
run_one() {
	t=$1
	bin=$build/tests/fuzz/fuzz_$t
	work=$build/corpus/$t
	crashes=$build/crashes/$t
	log=$build/logs/$t.log
	mkdir -p "$work" "$crashes" "$build/logs"
	# -timeout is wall time: a run starved of CPU by the rest of the machine
	# must not take that for a hang (a timeout is checked again below).
	set -- -max_total_time="$seconds" -timeout="${TT_FUZZ_TIMEOUT:-60}" -rss_limit_mb=2048 \
		-print_final_stats=1 \
		-artifact_prefix="$crashes/"
	[ -f "$here/tests/fuzz/dict/$t.dict" ] && set -- "$@" -dict="$here/tests/fuzz/dict/$t.dict"
	start=$(date +%s)
	times >"$log.times"
	cpu0=$(children_cpu "$log.times")
	rc=0
	"$bin" "$@" "$work" "$here/tests/fuzz/corpus/$t" >"$log" 2>&1 || rc=$?
	took=$(($(date +%s) - start))
	times >"$log.times"
	cpu=$(($(children_cpu "$log.times") - cpu0))
	rm -f "$log.times"
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | sed 's/cov: //')
	size=$(find "$work" -type f | wc -l)
	found=0
	if [ "$rc" != 0 ] && grep -q 'ERROR: libFuzzer: timeout' "$log"; then
		# A hang comes back when its input runs alone; an input that then
		# takes a moment was a run starved of CPU.
		input=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
		if [ -n "$input" ] && "$bin" -timeout=10 -runs=1 "$input" >"$log.again" 2>&1; then
			echo "# fuzz_$t: a timeout that its input alone does not repeat (starved of CPU): $input"
			rc=0
		fi
	fi
	if [ "$rc" != 0 ]; then
		found=1
		input=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
		echo "not ok - fuzz_$t: crashed after ${took} s (log: $log)"
		grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error|.*broken promise)' "$log" | head -n 3 |
			sed 's/^/#   /'
		echo "#   input: ${input:-none written}"
		echo "#   replay: $bin ${input:-}"
		echo "#   keep it: cp ${input:-INPUT} $here/tests/fuzz/corpus/$t/crash-NAME (then fix the bug)"
	else
		echo "ok - fuzz_$t: ${took} s, ${runs:-0} runs, corpus $size, coverage $cov edges"
	fi
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$t" "$took" "${runs:-0}" "$size" \
		"$found" "$cpu" >>"$build/runs.tsv"
	return "$rc"
}

case $mode in
one)
	run_one "$1"
	;;
fuzz)
	command -v clang >/dev/null ||
		{ echo "fuzz.sh: clang is needed (sh tests/provision.sh installs it)" >&2; exit 1; }
	build_in "$build" CC=clang --enable-fuzzing --enable-werror
	echo "# fuzzing $(echo $targets | wc -w) targets for $seconds s each, $jobs at a time"
	status=0
	# shellcheck disable=SC2086
	printf '%s\n' $targets | TT_FUZZ_BUILD=$build xargs -P "$jobs" -I{} \
		sh "$0" --one -t "$seconds" {} || status=1
	exit "$status"
	;;
minimize)
	build_in "$build" CC=clang --enable-fuzzing --enable-werror
	"$build/tests/fuzz/fuzz_$targets" -minimize_crash=1 -max_total_time="$seconds" \
		-exact_artifact_path="$min_out" "$min_input" >"$build/logs/minimize.log" 2>&1 || true
	[ -f "$min_out" ] || { tail -n 20 "$build/logs/minimize.log"; exit 1; }
	echo "$min_out: $(wc -c <"$min_out") bytes (from $(wc -c <"$min_input"))"
	;;
totals)
	[ -f "$build/runs.tsv" ] || { echo "fuzz.sh: no runs yet in $build" >&2; exit 1; }
	# CPU hours: the fuzzer's own time (rows from before it was kept: wall)
	printf '%-10s %8s %8s %12s %8s %8s\n' target hours "CPU h" runs corpus crashes
	for t in $targets; do
		awk -F'\t' -v t="$t" '$2 == t { s += $3; u += NF >= 7 ? $7 : $3; r += $4; c = $5; k += $6 }
			END { printf "%-10s %8.2f %8.2f %12d %8d %8d\n", t, s / 3600, u / 3600, r, c, k }' \
			"$build/runs.tsv"
	done
	;;
coverage)
	cov=$here/_build/fuzzcov
	flags="-O1 -g -fprofile-instr-generate -fcoverage-mapping"
	build_in "$cov" CC=clang CFLAGS="$flags" LDFLAGS="-fprofile-instr-generate"
	printf '%-10s %22s %26s\n' target "lines of its files" "of the functions reached"
	for t in $targets; do
		rm -f "$cov/$t".prof*
		inputs=$here/tests/fuzz/corpus/$t
		[ -d "$build/corpus/$t" ] && inputs="$build/corpus/$t $inputs"
		# shellcheck disable=SC2086
		LLVM_PROFILE_FILE=$cov/$t.profraw "$cov/tests/fuzz/fuzz_$t" $inputs >/dev/null 2>&1 || true
		llvm-profdata merge -o "$cov/$t.profdata" "$cov/$t.profraw"
		files=$(sed -n 's/^ \* parsers: //p' "$here/tests/fuzz/fuzz_$t.c" | tr ' ' '\n' |
			sed "s|^|$here/|")
		# shellcheck disable=SC2086
		llvm-cov report -show-functions -instr-profile="$cov/$t.profdata" \
			"$cov/tests/fuzz/fuzz_$t" $files >"$cov/$t.functions" 2>/dev/null || true
		# Name Regions Miss Cover Lines Miss Cover ...: over the files, and
		# over the functions the corpus reached
		awk -v t="$t" '$2 ~ /^[0-9]+$/ && $5 ~ /^[0-9]+$/ && $1 != "TOTAL" {
				all += $5; allmiss += $6
				if ($6 < $5) { reached += $5; miss += $6 } }
			END { printf "%-10s %8d/%-6d %5.1f%% %10d/%-6d %5.1f%%\n", t, all - allmiss, all,
				all ? 100 * (all - allmiss) / all : 0, reached - miss, reached,
				reached ? 100 * (reached - miss) / reached : 0 }' "$cov/$t.functions"
	done
	;;
esac
