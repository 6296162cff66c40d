#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A Debian build root for targets the running host cannot build: Debian's
# 7.x headers are built with gcc-14 and their modpost, objtool and
# resolve_btfids need glibc 2.38, which Debian 12 does not have.
#
#   root.sh RELEASE                   make the root if missing; print its path
#   root.sh --install RELEASE PKG...  install PKG with the root's own apt
#   root.sh --run RELEASE CMD...      run CMD in the root, the work tree and
#                                     the build directory at the same paths
#
# The root is made once with debootstrap (about 30 s, 500 MB) and cached in
# $KIT_CACHE/roots/RELEASE, beside the debug kernels.  Its apt sources are
# its own (RELEASE, -updates, -security, -backports): the host's apt setup,
# packages and mounts are never touched (CMD runs in a private mount
# namespace).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

mirror=${KIT_MIRROR:-http://deb.debian.org/debian}
security=${KIT_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
# What the headers packages' kbuild needs besides what they pull in.
base_pkgs=gcc,make,libc6-dev,libelf-dev,libssl-dev,pahole,xz-utils,bc,kmod

root_dir() { echo "${KIT_CACHE:-/var/cache/kvm-irqbypass}/roots/$1"; }

# Progress goes to stderr: callers take the root's path from stdout.
make_root() {
	local rel=$1 dir start=$SECONDS
	dir=$(root_dir "$rel")
	[ -f "$dir/.kit-root" ] && return 0
	[ "$(id -u)" -eq 0 ] || die "making the $rel build root needs root (debootstrap)"
	command -v debootstrap > /dev/null || kit_need_pkgs debootstrap >&2
	[ -f "/usr/share/debootstrap/scripts/$rel" ] ||
		die "this debootstrap does not know $rel"
	step "making a Debian $rel build root in $dir (debootstrap, once)" >&2
	rm -rf "$dir.tmp"
	mkdir -p "$dir.tmp"
	debootstrap --variant=minbase --include="$base_pkgs" "$rel" "$dir.tmp" \
		"$mirror" > "$dir.tmp.log" 2>&1 ||
		{ tail -n 20 "$dir.tmp.log" >&2; die "debootstrap $rel failed (log: $dir.tmp.log)"; }
	cat > "$dir.tmp/etc/apt/sources.list" <<-EOF
	deb $mirror $rel main
	deb $mirror $rel-updates main
	deb $security $rel-security main
	deb $mirror $rel-backports main
	EOF
	chroot "$dir.tmp" apt-get update -q >> "$dir.tmp.log" 2>&1 ||
		{ tail -n 20 "$dir.tmp.log" >&2; die "apt-get update in the $rel root failed"; }
	echo "$rel" > "$dir.tmp/.kit-root"
	mv "$dir.tmp.log" "$dir.tmp/kit-root.log"
	mv "$dir.tmp" "$dir"
	step "made the $rel root in $((SECONDS - start)) s" >&2
}

# The root's package lists are refreshed when older than a day, so that a
# security update of the headers is seen as on a host.
refresh_root() {
	local dir=$1
	[ -n "$(find "$dir/var/lib/apt/lists" -maxdepth 1 -name '*Packages*' -mtime -1 2>/dev/null | head -n 1)" ] &&
		return 0
	chroot "$dir" apt-get update -q > /dev/null 2>&1 || true
}

run_in_root() {
	local dir=$1; shift
	unshare --mount --propagation private -- /bin/bash -c '
		set -e
		dir=$1; shift
		mount -t proc proc "$dir/proc"
		mount --rbind /dev "$dir/dev"
		for p in "$KIT_TOP" "$KIT_B"; do
			mkdir -p "$dir$p"
			mount --bind "$p" "$dir$p"
		done
		wd=$PWD
		[ -d "$dir$wd" ] || wd=/
		exec chroot "$dir" /usr/bin/env -C "$wd" "$@"
	' - "$dir" "$@"
}

[ $# -ge 1 ] || die "usage: root.sh [--install|--run] RELEASE ..."
cmd=
case "$1" in --install | --run) cmd=$1; shift ;; esac
rel=${1:?RELEASE}
shift
dir=$(root_dir "$rel")
# One root change at a time: two make runs may both find it missing.
mkdir -p "$(dirname "$dir")"
exec 8> "$dir.lock"
flock 8
make_root "$rel"
case "$cmd" in
'')
	echo "$dir" ;;
--install)
	missing=()
	for p in "$@"; do
		chroot "$dir" dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null |
			grep -qx installed || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && exit 0
	refresh_root "$dir"
	step "apt-get install ${missing[*]} (in the $rel root)"
	DEBIAN_FRONTEND=noninteractive chroot "$dir" apt-get install -y -q \
		--no-install-recommends "${missing[@]}" > "$dir/kit-apt.log" 2>&1 ||
		{ tail -n 20 "$dir/kit-apt.log" >&2; die "apt-get install ${missing[*]} in the $rel root failed"; } ;;
--run)
	flock -u 8
	KIT_TOP=$kit_top KIT_B=$B run_in_root "$dir" "$@" ;;
esac
