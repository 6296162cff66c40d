#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Resolve a build target from Debian's package lists and print it as shell
# assignments (KLINE, FLAVOUR, SRCPKG, SRCVER, HDRPKG, KREL, IMGPKG, BUILD).
# With KIT_ROOT set (a Debian root of another release, scripts/kit/root.sh)
# the lists are that root's.
#
#   target.sh LINE FLAVOUR       e.g. 6.12 generic, 6.1 rt
#   target.sh --krel KREL        e.g. 6.12.118+deb12-amd64 (dkms)
#
# Nothing is hard-coded but the naming scheme of Debian's kernel packages:
# the headers package is the one of the source package's version whose name
# ends in -amd64 (generic) or -rt-amd64 (rt).  Versions move with security
# updates, so the answer is computed on every build.
set -euo pipefail

die() { echo "kit: error: $*" >&2; exit 1; }

# apt and dpkg of the target's release: the host's, or the root's.
q() {
	if [ -n "${KIT_ROOT:-}" ]; then chroot "$KIT_ROOT" "$@"; else "$@"; fi
}

# Version of a package: the installed one if any, else apt's candidate.
pkg_version() {
	local v
	v=$(q dpkg-query -W -f='${db:Status-Status} ${Version}' "$1" 2>/dev/null |
	    awk '$1 == "installed" { print $2 }')
	if [ -z "$v" ]; then
		v=$(q apt-cache policy "$1" 2>/dev/null |
		    awk '/Candidate:/ { print $2 }')
		[ "$v" = "(none)" ] && v=
	fi
	echo "$v"
}

if [ "${1:-}" = "--krel" ]; then
	KREL=${2:?KREL}
	case "$KREL" in
	*-rt-amd64) FLAVOUR=rt ;;
	*-amd64) FLAVOUR=generic ;;
	*) die "$KREL: not a Debian amd64 kernel release" ;;
	esac
	case "$KREL" in
	6.1.*|6.1-*) KLINE=6.1 ;;
	6.12.*) KLINE=6.12 ;;
	7.3.*) KLINE=7.3 ;;
	*) die "$KREL: unsupported kernel line (6.1, 6.12 and 7.3 are supported)" ;;
	esac
	HDRPKG=linux-headers-$KREL
else
	KLINE=${1:-6.12}
	FLAVOUR=${2:-generic}
	HDRPKG=
fi

case "$KLINE" in 6.1|6.12|7.3) ;; *) die "KLINE=$KLINE: supported lines are 6.12, 6.1 and 7.3" ;; esac
case "$FLAVOUR" in
generic) suffix=amd64 ;;
rt) suffix=rt-amd64 ;;
*) die "FLAVOUR=$FLAVOUR: supported flavours are generic and rt" ;;
esac

SRCPKG=linux-source-$KLINE
SRCVER=$(pkg_version "$SRCPKG")
[ -n "$SRCVER" ] || die "$SRCPKG: not known to apt (run apt-get update)"

if [ -z "$HDRPKG" ]; then
	# Candidates: linux-headers-<line>.<abi>-<suffix>, e.g.
	# linux-headers-6.12.118+deb12-amd64, linux-headers-6.1.0-57-rt-amd64.
	cands=$(q apt-cache pkgnames "linux-headers-$KLINE." 2>/dev/null |
		grep -E -- "-$suffix\$" | grep -v -E -- '-cloud-amd64$' |
		{ if [ "$FLAVOUR" = generic ]; then grep -v -- -rt-amd64; else cat; fi; } || true)
	# One apt-cache call for all of them: installed version, else candidate.
	[ -n "$cands" ] && HDRPKG=$(q apt-cache policy $cands 2>/dev/null | awk -v want="$SRCVER" '
		/^[^ ]/ { pkg = $1; sub(":$", "", pkg) }
		/Installed:/ { inst[pkg] = $2 }
		/Candidate:/ { v = (inst[pkg] != "(none)") ? inst[pkg] : $2
			       if (v == want) found = pkg }
		END { print found }')
	[ -n "$HDRPKG" ] || die "no linux-headers-$KLINE.*-$suffix package of version $SRCVER ($SRCPKG)"
	KREL=${HDRPKG#linux-headers-}
fi

echo "KLINE=$KLINE"
echo "FLAVOUR=$FLAVOUR"
echo "SRCPKG=$SRCPKG"
echo "SRCVER=$SRCVER"
echo "HDRPKG=$HDRPKG"
echo "HDRVER=$(pkg_version "$HDRPKG")"
echo "KREL=$KREL"
# 7.x images are split: the kernel (linux-binary) and its modules; 6.x
# has one package, -unsigned beside the signed one.
case "$KLINE" in
6.*) echo "IMGPKG=linux-image-$KREL-unsigned" ;;
*) echo "IMGPKG='linux-binary-$KREL linux-modules-$KREL'" ;;
esac
echo "KDIR=/lib/modules/$KREL/build"
