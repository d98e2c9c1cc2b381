#!/bin/sh
# make deb: the Debian package of this version, built from its release
# tarball (make dist) with dpkg-buildpackage and checked by lintian. Leaves
# the .deb, .changes and .buildinfo in the working directory, the build's
# log in deb-build.log and lintian's findings in lintian.txt. Exits 1 when
# the build fails or lintian reports an error or a warning.
#
#   sh debian/make-deb.sh tachyon-top-VERSION.tar.gz
set -eu
tarball=$1
out=$(pwd)
for tool in dpkg-buildpackage dh lintian; do
	command -v "$tool" >/dev/null || {
		echo "make deb: $tool is needed (apt install dpkg-dev debhelper lintian)" >&2
		exit 1
	}
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar -xzf "$tarball" -C "$work"
src=$(find "$work" -mindepth 1 -maxdepth 1 -type d)
version=$(basename "$src" | sed 's/^tachyon-top-//')
said=$(cd "$src" && dpkg-parsechangelog -S Version)
[ "$said" = "$version" ] || {
	echo "make deb: debian/changelog says $said, the release is $version" >&2
	exit 1
}
rm -f "$out"/tachyon-top_"$version"_*.deb "$out"/tachyon-top_"$version"_*.changes \
	"$out"/tachyon-top_"$version"_*.buildinfo
(cd "$src" && dpkg-buildpackage -b -us -uc) >"$out/deb-build.log" 2>&1 || {
	tail -n 40 "$out/deb-build.log"
	echo "make deb: dpkg-buildpackage failed (all of it in deb-build.log)" >&2
	exit 1
}
mv "$work"/*.deb "$work"/*.changes "$work"/*.buildinfo "$out"/
changes=$(ls "$out"/tachyon-top_"$version"_*.changes)
lintian --info --display-info --pedantic "$changes" >"$out/lintian.txt" 2>&1 || true
echo "lintian $(lintian --version | sed 's/^Lintian v//') on $(basename "$changes"):"
if [ -s "$out/lintian.txt" ]; then sed 's/^/  /' "$out/lintian.txt"; else echo "  (nothing)"; fi
ls "$out"/tachyon-top_"$version"_*.deb
! grep -q '^[EW]: ' "$out/lintian.txt"
