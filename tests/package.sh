#!/bin/sh
# The Debian package: `make deb` in build directory $1 builds it from the
# release tarball and lintian reports no error or warning (lintian is shown
# to catch one, on a copy without the man page); installed on this
# host, /usr/bin/tachyon-top gives its version, `man tachyon-top` renders,
# the themes are in place and it dumps a live python3.15 in the target
# root; then it is removed (unless it was installed before). Emits TAP.
# Needs root.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:?usage: package.sh BUILD_DIR}" && pwd)
TT_ROOT=${TT_ROOT:-/var/cache/tachyon-top/sid-root}
tmp=$(mktemp -d)
target=
cleanup() {
	[ -n "$target" ] && kill "$target" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
n=0
status=0
check() {   # check OK DESCRIPTION [FILE to show when not ok]
	n=$((n + 1))
	if [ "$1" = yes ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		[ -n "${3:-}" ] && [ -f "$3" ] && tail -n 30 "$3" | sed 's/^/# /'
		status=1
	fi
}
echo "1..8"
version=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' "$build/config.h")

# The suites ran the unit tests already: the package build skips them.
ok=no
(cd "$build" && DEB_BUILD_OPTIONS=nocheck make deb) >"$tmp/deb.out" 2>&1 && ok=yes
deb=$build/tachyon-top_${version}_amd64.deb
[ -f "$deb" ] || ok=no
check $ok "make deb builds tachyon-top_${version}_amd64.deb; lintian: no error or warning" "$tmp/deb.out"
sed -n '/^lintian /,$p' "$tmp/deb.out" | sed 's/^/# /'

# lintian finds what it should: the same package without its man page.
ok=no
if [ -f "$deb" ] && dpkg-deb -R "$deb" "$tmp/pkg" 2>"$tmp/bad.out"; then
	rm "$tmp/pkg/usr/share/man/man1/tachyon-top.1.gz"
	(cd "$tmp/pkg" && find usr -type f -exec md5sum {} + >DEBIAN/md5sums)
	dpkg-deb -b "$tmp/pkg" "$tmp/bad.deb" >>"$tmp/bad.out" 2>&1 &&
		lintian "$tmp/bad.deb" >>"$tmp/bad.out" 2>&1
	grep -q '^W: tachyon-top: no-manual-page' "$tmp/bad.out" && ok=yes
fi
check $ok "lintian warns of a copy of the package without its man page" "$tmp/bad.out"

was_installed=no
dpkg-query -W -f='${Status}' tachyon-top 2>/dev/null | grep -q 'install ok installed' &&
	was_installed=yes
ok=no
[ -f "$deb" ] && dpkg -i "$deb" >"$tmp/install.out" 2>&1 && ok=yes
check $ok "dpkg -i installs it" "$tmp/install.out"

ok=no
/usr/bin/tachyon-top --version >"$tmp/version.out" 2>&1 &&
	head -n 1 "$tmp/version.out" | grep -qx "tachyon-top $version" &&
	grep -q "MIT License" "$tmp/version.out" && ok=yes
check $ok "/usr/bin/tachyon-top --version: tachyon-top $version, MIT" "$tmp/version.out"

ok=no
MANWIDTH=80 man -P cat tachyon-top >"$tmp/man.out" 2>&1 &&
	grep -q 'live top for running Python processes' "$tmp/man.out" &&
	grep -q -- '--no-subprocesses' "$tmp/man.out" && ok=yes
check $ok "man tachyon-top renders the installed page" "$tmp/man.out"

ok=yes
for t in default light mono high-contrast; do
	[ -f "/usr/share/tachyon-top/themes/$t.theme" ] || ok=no
done
check $ok "the four themes in /usr/share/tachyon-top/themes"

ok=no
: >"$tmp/dump.out"
if [ -x "$TT_ROOT/usr/bin/python3.15" ]; then
	chroot "$TT_ROOT" python3.15 -c 'import threading, time
threading.Thread(target=time.sleep, args=(60,), name="parked-in-sleep").start()
time.sleep(60)' &
	target=$!
	sleep 1
	/usr/bin/tachyon-top dump -p "$target" >"$tmp/dump.out" 2>&1 &&
		grep -q "^Process $target" "$tmp/dump.out" &&
		grep -q '"parked-in-sleep"' "$tmp/dump.out" && ok=yes
else
	echo "no python3.15 in $TT_ROOT (run tests/provision.sh)" >"$tmp/dump.out"
fi
check $ok "the installed binary dumps a live python3.15" "$tmp/dump.out"

ok=yes
if [ "$was_installed" = no ]; then
	ok=no
	dpkg -r tachyon-top >"$tmp/remove.out" 2>&1 && [ ! -e /usr/bin/tachyon-top ] && ok=yes
fi
check $ok "dpkg -r removes it (left installed when it was before)" "$tmp/remove.out"
exit $status
