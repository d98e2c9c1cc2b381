#!/bin/sh
# Provision everything the test suite needs, idempotently:
#  - host build dependencies (autotools, ncursesw, termkey, tmux, debootstrap)
#  - a Debian unstable root holding real CPython 3.13, 3.14, 3.15 and 3.15-dbg,
#    cached at $TT_ROOT (default /var/cache/tachyon-top/sid-root), /proc mounted.
#  - real servers for the root's default python3 (gunicorn, uvicorn, aiohttp, uWSGI,
#    Celery)
#  - a real position-independent python3.15 executable carrying the runtime
#    inside it, built in the root (see static_pie_python below)
#  - on the host: Debian 12's python3.11 with its debug build and headers, and
#    the real viewers exported profiles are checked with (go tool pprof,
#    chromium, speedscope's schema from npm), and zlib for pprof output
# Safe to run repeatedly; a finished root is marked with a stamp file.
set -eu

TT_ROOT=${TT_ROOT:-/var/cache/tachyon-top/sid-root}
# python3.X-nopie diverts /usr/bin/python3.X to python3.X-pie and installs a
# non-PIE build in its place; but Debian links both non-PIE (readelf -h says
# EXEC for python3.X, python3.X-pie and python3.Xd alike), so neither is a
# position-independent executable. The real one is built by static_pie_python.
PY_PKGS="python3.13 python3.14 python3.15 python3.13-dbg python3.14-dbg python3.15-dbg
python3.13-nopie python3.14-nopie python3.15-nopie
libpython3.13-dev libpython3.14-dev libpython3.15-dev
gunicorn python3-gunicorn python3-uvicorn python3-aiohttp python3-gevent gcc libc6-dev
uwsgi-core uwsgi-plugin-python3 python3-celery"
STAMP="$TT_ROOT/.tachyon-top-provisioned-v1"
HOST_PKGS="build-essential autoconf automake pkg-config libncurses-dev libtermkey-dev tmux debootstrap python3
python3.11 python3.11-dbg libpython3.11-dev golang-go chromium iproute2 util-linux zlib1g-dev
libdw-dev gdb python3-greenlet python3-gevent python3-eventlet clang libclang-rt-14-dev llvm
dpkg-dev debhelper fakeroot lintian man-db"

log() { printf 'provision: %s\n' "$*" >&2; }

need_root() {
	if [ "$(id -u)" != 0 ]; then
		echo "provision: must run as root (debootstrap, chroot and mount need it)" >&2
		exit 1
	fi
}

host_packages() {
	missing=""
	for p in $HOST_PKGS; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	log "installing host packages:$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
}

target_root() {
	if [ ! -f "$STAMP" ]; then
		log "creating Debian unstable root at $TT_ROOT (1-2 minutes)"
		rm -rf "$TT_ROOT.partial"
		mkdir -p "$(dirname "$TT_ROOT")"
		debootstrap --variant=minbase --include="$(echo $PY_PKGS | tr ' ' ,)" \
			sid "$TT_ROOT.partial" \
			>"$(dirname "$TT_ROOT")/debootstrap.log" 2>&1 || {
			log "debootstrap failed; see $(dirname "$TT_ROOT")/debootstrap.log"
			tail -n 20 "$(dirname "$TT_ROOT")/debootstrap.log" >&2
			exit 1
		}
		rm -rf "$TT_ROOT"
		mv "$TT_ROOT.partial" "$TT_ROOT"
		touch "$STAMP"
	fi
	# Roots made by an older version of this script lack some packages.
	missing=""
	for p in $PY_PKGS; do
		chroot "$TT_ROOT" dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
			grep -q 'install ok installed' || missing="$missing $p"
	done
	if [ -n "$missing" ]; then
		log "adding to the target root:$missing"
		cp /etc/resolv.conf "$TT_ROOT/etc/resolv.conf" 2>/dev/null || true
		# The unstable mirror's Release file may be past Valid-Until.
		# shellcheck disable=SC2086
		chroot "$TT_ROOT" apt-get -qq -o Acquire::Check-Valid-Until=false \
			install -y $missing >/dev/null
	fi
	if ! mountpoint -q "$TT_ROOT/proc"; then
		mount -t proc proc "$TT_ROOT/proc"
	fi
	mkdir -p "$TT_ROOT/tmp"
	chmod 1777 "$TT_ROOT/tmp"
}

# python3.15-static-pie: Debian's own interpreter objects (libpython3.15-pic.a
# from libpython3.15-dev) linked -fPIE -pie into one executable, like the
# python-build-standalone / uv interpreters: the runtime and its .PyRuntime
# section live in a PIE mapped at a random address, not in a shared
# libpython. Every object is linked (as python3.15 itself is), so the
# extension modules in lib-dynload find every symbol they import. Debian does
# not ship the HACL* objects its builtin hash modules need, so those five
# (_md5 _sha1 _sha2 _sha3 _blake2) are left out, of the link and of the
# builtin table; hashlib then uses OpenSSL's _hashlib, as it does anyway.
static_pie_python() {
	v=3.15
	out=/usr/local/bin/python$v-static-pie
	[ -x "$TT_ROOT$out" ] && return 0
	log "building $out in the target root"
	cfg=/usr/lib/python$v/config-$v-x86_64-linux-gnu
	lib=/usr/lib/x86_64-linux-gnu
	work=$(mktemp -d "$TT_ROOT/tmp/static-pie.XXXXXX")
	printf '#include <Python.h>\nint main(int argc, char **argv) { return Py_BytesMain(argc, argv); }\n' \
		>"$work/main.c"
	sed -E '/PyInit__(blake2|md5|sha1|sha2|sha3)\b/d' "$TT_ROOT$cfg/config.c" >"$work/config.c"
	w=/tmp/$(basename "$work")
	chroot "$TT_ROOT" sh -c "cd $w &&
		gcc -fPIE -O2 -DPy_BUILD_CORE -I/usr/include/python$v -I/usr/include/python$v/internal -c config.c &&
		mkdir objs && cd objs && ar x $cfg/libpython$v-pic.a &&
		rm config.o blake2module.o md5module.o sha1module.o sha2module.o sha3module.o && cd .. &&
		gcc -fPIE -pie -O2 -I/usr/include/python$v -o python main.c config.o objs/*.o \
			-Xlinker -export-dynamic -ldl -lm $lib/libz.so.1 $lib/libexpat.so.1 $lib/libzstd.so.1" \
		>"$work/build.log" 2>&1 || {
		log "building $out failed:"
		tail -n 20 "$work/build.log" >&2
		exit 1
	}
	mkdir -p "$TT_ROOT/usr/local/bin"
	mv "$work/python" "$TT_ROOT$out"
	rm -rf "$work"
}

# speedscope's file-format schema (and viewer), from the npm registry, for
# checking speedscope exports; cached under $TT_NPM.
TT_NPM=${TT_NPM:-/var/cache/tachyon-top/npm}
SPEEDSCOPE_VERSION=1.25.0
speedscope() {
	[ -f "$TT_NPM/node_modules/speedscope/dist/release/file-format-schema.json" ] && return 0
	if ! command -v npm >/dev/null 2>&1; then
		log "installing npm"
		export DEBIAN_FRONTEND=noninteractive
		apt-get install -y -qq --no-install-recommends npm >/dev/null
	fi
	log "installing speedscope $SPEEDSCOPE_VERSION into $TT_NPM"
	mkdir -p "$TT_NPM"
	npm install --silent --no-audit --no-fund --prefix "$TT_NPM" "speedscope@$SPEEDSCOPE_VERSION" >&2
}

need_root
host_packages
speedscope
target_root
static_pie_python
for v in 3.13 3.14 3.15 3.15-static-pie 3.15d; do
	chroot "$TT_ROOT" "python$v" -c 'import sys; print(sys.version.split()[0])' >/dev/null
done
log "ready: $TT_ROOT"
