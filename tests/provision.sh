#!/bin/sh
# Provision everything the test suite needs, idempotently:
#  - host build dependencies (autotools, ncursesw, termkey, tmux, debootstrap)
#  - a Debian unstable root holding real CPython 3.13, 3.14, 3.15 and 3.15-dbg,
#    cached at $TT_ROOT (default /var/cache/tachyon-top/sid-root), /proc mounted.
#  - real servers for the root's default python3 (gunicorn, uvicorn, aiohttp)
#  - on the host: Debian 12's python3.11 with its debug build and headers, and
#    the real viewers exported profiles are checked with (go tool pprof,
#    chromium, speedscope's schema from npm), and zlib for pprof output
# Safe to run repeatedly; a finished root is marked with a stamp file.
set -eu

TT_ROOT=${TT_ROOT:-/var/cache/tachyon-top/sid-root}
# python3.X-nopie diverts /usr/bin/python3.X to a non-PIE executable and keeps
# the PIE one as python3.X-pie, so both kinds of binary get tested.
PY_PKGS="python3.13 python3.14 python3.15 python3.13-dbg python3.14-dbg python3.15-dbg
python3.13-nopie python3.14-nopie python3.15-nopie
libpython3.13-dev libpython3.14-dev libpython3.15-dev
gunicorn python3-gunicorn python3-uvicorn python3-aiohttp"
STAMP="$TT_ROOT/.tachyon-top-provisioned-v1"
HOST_PKGS="build-essential autoconf automake pkg-config libncurses-dev libtermkey-dev tmux debootstrap python3
python3.11 python3.11-dbg libpython3.11-dev golang-go chromium iproute2 util-linux zlib1g-dev"

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
for v in 3.13 3.14 3.15 3.15-pie 3.15d; do
	chroot "$TT_ROOT" "python$v" -c 'import sys; print(sys.version.split()[0])' >/dev/null
done
log "ready: $TT_ROOT"
