#!/bin/sh
# Build tachyon-top and point it at the bundled demo workload running under
# CPython 3.15 in the provisioned target root (a request loop, worker
# processes, stuck asyncio tasks, a thread blocked on a socket): the live view
# on a terminal; otherwise a dump of every thread, batch-mode tables and
# engine figures. Exits 0 when everything ran.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
TT_ROOT=${TT_ROOT:-/var/cache/tachyon-top/sid-root}
PY=${TT_DEMO_PYTHON:-python3.15}

sh "$here/tests/provision.sh"
cd "$here"
[ -x configure ] || autoreconf -fi
mkdir -p _build/demo
cd _build/demo
[ -f Makefile ] || "$here/configure" >/dev/null
make -j2 tachyon-top >/dev/null

workdir=$(mktemp -d "$TT_ROOT/tmp/tt-demo.XXXXXX")
cp "$here/tests/demo_app.py" "$workdir/app.py"
chroot "$TT_ROOT" "$PY" "/tmp/$(basename "$workdir")/app.py" 60 &
pid=$!
# Stopping the workload must not become the script's exit status (waiting
# for a process killed by SIGTERM yields 143): keep the status we had.
cleanup() {
	kill "$pid" 2>/dev/null || :
	wait "$pid" 2>/dev/null || :
	rm -rf "$workdir"
}
trap 'rc=$?; cleanup; exit $rc' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
sleep 1
echo "demo workload: $PY, pid $pid"
if [ -t 0 ] && [ -t 1 ] && [ -z "${TT_DEMO_TEXT:-}" ]; then
	# The main job: the live view (q quits).
	./tachyon-top -p "$pid"
	exit $?
fi
# Without a terminal: what the live view would show, as text.
echo
echo "== tachyon-top dump -p $pid --tasks (threads, what each waits for, asyncio tasks)"
./tachyon-top dump -p "$pid" --tasks
echo
echo "== tachyon-top -p $pid --batch -d 3 --limit 12 (live tables as text)"
./tachyon-top -p "$pid" --batch -d 3 --delay 3 --limit 12
echo "== tachyon-top record -p $pid --async -d 2 -o async.txt: the asyncio ticker's"
echo "   stacks, heaviest first, on the task's await chain instead of the event loop"
./tachyon-top record -p "$pid" --async -d 2 -o "$workdir/async.txt"
awk '/task ticker/ { print $NF "\t" $0 }' "$workdir/async.txt" | sort -rn | head -3 | cut -f2-
echo "== tachyon-top bench -p $pid -d 2"
./tachyon-top bench -p "$pid" -d 2
