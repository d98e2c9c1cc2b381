#!/bin/sh
# Build tachyon-top and point it at the bundled demo workload running under
# CPython 3.15 in the provisioned target root: a one-shot dump of every
# thread, a 3-second profile, and the engine's own figures.
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
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$workdir"' EXIT INT TERM
sleep 1
echo "demo workload: $PY, pid $pid"
echo
echo "== tachyon-top dump -p $pid"
./tachyon-top dump -p "$pid"
echo
echo "== tachyon-top record -p $pid -d 3 -r 5k -o $workdir/profile.txt (heaviest stacks)"
./tachyon-top record -p "$pid" -d 3 -r 5k -o "$workdir/profile.txt"
awk '{print $NF, $0}' "$workdir/profile.txt" | sort -rn | head -n 5 | cut -d' ' -f2- | cut -c1-200
echo
echo "== tachyon-top bench -p $pid -d 2"
./tachyon-top bench -p "$pid" -d 2
