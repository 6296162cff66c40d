#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# sandbox.sh CMD [ARG...]: run CMD as root in a private mount namespace in
# which /usr, /etc, /var and /boot are overlays over the machine's own
# directories.  CMD sees the real system (packages, kernels, headers) and
# may install packages, write /lib/modules, run depmod, dkms and
# update-initramfs; every write lands in a temporary upper directory that
# is thrown away when CMD exits.  The machine itself is never changed.
#
# make check's package steps (deb-install, initramfs) and make check-deb
# run here.  QEMU started by CMD exports / as CMD sees it, so a testbed
# boot with --modules host loads what CMD installed.  The work tree and
# KIT_BUILD must not be under an overlaid directory (their writes would
# be thrown away too).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

overlaid=(/usr /etc /var /boot)

if [ "${1:-}" = --inner ]; then
	shift
	t=$1
	shift
	for d in "${overlaid[@]}"; do
		[ -d "$d" ] || continue
		mkdir -p "$t$d/upper" "$t$d/work"
		mount -t overlay "kit-sandbox$d" \
			-o "lowerdir=$d,upperdir=$t$d/upper,workdir=$t$d/work" "$d"
	done
	export KIT_SANDBOX=1
	exec "$@"
fi

[ $# -gt 0 ] || die "usage: sandbox.sh CMD [ARG...]"
[ "$(id -u)" -eq 0 ] || die "the sandbox mounts overlays: run as root"
command -v unshare > /dev/null || die "unshare missing (util-linux)"
for d in "${overlaid[@]}"; do
	case "$kit_top/" in "$d"/*) die "the work tree $kit_top is under $d, which the sandbox overlays" ;; esac
	case "$B/" in "$d"/*) die "KIT_BUILD $B is under $d, which the sandbox overlays" ;; esac
done
t=$(mktemp -d "${TMPDIR:-/tmp}/kit-sandbox.XXXXXX")
case "$t/" in /usr/* | /etc/* | /var/* | /boot/*) rm -rf "$t"; die "TMPDIR is under an overlaid directory" ;; esac
trap 'rm -rf "$t"' EXIT
rc=0
unshare --mount --propagation private -- "$0" --inner "$t" "$@" || rc=$?
exit "$rc"
