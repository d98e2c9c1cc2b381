#!/bin/sh
# The layers point one way: a file includes headers of its own layer or of
# the layers below it, never above (src/common -> src/target ->
# src/sampling -> src/export -> ui -> src/verbs; within src/target, its
# subsystems: proc -> mem -> waits -> python -> target.h -> walk -> async
# -> native). An upward include fails
# unless listed below (a list for taking out, issue 34: it only shrinks, so
# a listed one that is gone fails too). The screen's code starts no thread
# and no process: the session starts the readers the views show (the kernel
# watcher, the tasks reader), and only the UI thread touches the terminal.
# Emits TAP.
set -u
src=${TT_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}

# Upward includes still to be taken out, one "file header" a line (none
# left: a new one is fixed, not listed).
KNOWN=''

rank() {
	case $1 in
	src/common) echo 0 ;;
	# the reader's subsystems, from the kernel's facts up to native frames
	src/target/proc) echo 10 ;;
	src/target/mem) echo 11 ;;
	src/target/waits) echo 12 ;;
	src/target/python) echo 13 ;;
	src/target) echo 14 ;;
	src/target/walk) echo 15 ;;
	src/target/async) echo 16 ;;
	src/target/native) echo 17 ;;
	src/sampling) echo 20 ;;
	src/export) echo 30 ;;
	ui) echo 40 ;;
	src/verbs) echo 50 ;;
	*) echo -1 ;;
	esac
}

cd "$src" || { echo "1..0 # SKIP no source tree at $src"; exit 0; }
dirs="src/common src/target/proc src/target/mem src/target/waits src/target/python src/target
src/target/walk src/target/async src/target/native src/sampling src/export ui src/verbs"
headers=$(mktemp)
found=$(mktemp)
trap 'rm -f "$headers" "$found"' EXIT
# header as included (a reader's subsystem's with its folder: "mem/remote.h")
# -> its layer's rank
for d in $dirs; do
	r=$(rank "$d")
	case $d in
	src/target/*) prefix=${d#src/target/}/ ;;
	*) prefix= ;;
	esac
	for h in "$d"/*.h; do
		[ -f "$h" ] && echo "$prefix$(basename "$h") $r"
	done
done >"$headers"
# every include of a project header that points up
for d in $dirs; do
	r=$(rank "$d")
	for f in "$d"/*.c "$d"/*.h; do
		[ -f "$f" ] || continue
		sed -n 's/^#[ \t]*include[ \t]*"\([^"]*\)".*/\1/p' "$f" | while read -r inc; do
			hr=$(awk -v h="$inc" '$1 == h { print $2; exit }' "$headers")
			if [ -n "$hr" ] && [ "$hr" -gt "$r" ]; then
				echo "$f $inc"
			fi
		done
	done
done | sort -u >"$found"

echo "1..4"
status=0
new=$(echo "$KNOWN" | sed '/^$/d' | sort -u | comm -13 - "$found")
if [ -z "$new" ]; then
	echo "ok 1 - no include points up a layer ($(echo "$KNOWN" | sed '/^$/d' | wc -l) listed exceptions)"
else
	echo "not ok 1 - includes that point up a layer (file, header):"
	echo "$new" | sed 's/^/# /'
	status=1
fi
gone=$(echo "$KNOWN" | sed '/^$/d' | sort -u | comm -23 - "$found")
if [ -z "$gone" ]; then
	echo "ok 2 - every listed upward include is still there (the list only shrinks)"
else
	echo "not ok 2 - listed upward includes that are gone: take them off the list in $0:"
	echo "$gone" | sed 's/^/# /'
	status=1
fi
starts=$(grep -n -E '\b(pthread_create|thrd_create|fork|vfork|clone|posix_spawnp?)[ \t]*\(' ui/*.c ui/*.h 2>/dev/null)
if [ -z "$starts" ]; then
	echo "ok 3 - ui/ starts no thread or process"
else
	echo "not ok 3 - ui/ starts a thread or a process (the session should):"
	echo "$starts" | sed 's/^/# /'
	status=1
fi
# nor asks for one: the readers are the session's (session_start), not a view's
asks=$(grep -n -E '\b(session_watch_[a-z_]*|taskwatch_start[a-z_]*|waitwatch_start|sampler_start|follow_start)[ \t]*\(' ui/*.c ui/*.h 2>/dev/null)
if [ -z "$asks" ]; then
	echo "ok 4 - ui/ starts no reader through another layer (the session starts them)"
else
	echo "not ok 4 - ui/ starts a reader (the session should, in session_start):"
	echo "$asks" | sed 's/^/# /'
	status=1
fi
exit $status
