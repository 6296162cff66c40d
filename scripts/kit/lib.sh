# SPDX-License-Identifier: GPL-2.0-only
#
# Shared by the kit's scripts: resolve the target once, install what is
# missing.  Source it; it sets KLINE FLAVOUR SRCPKG SRCVER HDRPKG KREL IMGPKG
# KDIR and B (the build directory).

kit_top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
B=${KIT_BUILD:-$kit_top/build}

die() { echo "kit: error: $*" >&2; exit 1; }
# Progress lines; with KIT_T0 (epoch seconds, set by make demo) also the
# time elapsed since it.
step() {
	local e
	if [ -n "${KIT_T0:-}" ]; then
		e=$(($(date +%s) - KIT_T0))
		printf 'kit: [%s +%dm%02ds] %s\n' "$(date +%T)" $((e / 60)) $((e % 60)) "$*"
	else
		echo "kit: [$(date +%T)] $*"
	fi
}

# Install Debian packages that are missing; refuse clearly when not root.
kit_need_pkgs() {
	local missing=() p
	for p in "$@"; do
		dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null |
			grep -qx installed || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	[ "$(id -u)" -eq 0 ] ||
		die "missing packages: ${missing[*]} (run as root, or apt-get install them)"
	step "apt-get install ${missing[*]}"
	mkdir -p "$B"
	if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
			--no-install-recommends "${missing[@]}" > "$B/apt.log" 2>&1; then
		# A fresh machine may have stale or no package lists.
		apt-get update -q >> "$B/apt.log" 2>&1
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
			--no-install-recommends "${missing[@]}" >> "$B/apt.log" 2>&1 ||
			{ tail -n 20 "$B/apt.log" >&2; die "apt-get install ${missing[*]} failed"; }
	fi
}

# Resolve KLINE/FLAVOUR (or KREL) to packages; cached until dpkg or apt's
# lists change, since apt-cache takes seconds.
kit_target() {
	local key cache
	mkdir -p "$B"
	# The debug kernel is named by line and flavour; a KREL exported by
	# the parent script is its own, not a Debian release.
	[ "${KIT_DEBUG:-0}" = 1 ] && unset KREL
	if [ -n "${KREL:-}" ]; then key=krel-$KREL; else key=${KLINE:-6.12}-${FLAVOUR:-generic}; fi
	cache=$B/.target-$key.env
	if [ ! -s "$cache" ] || [ /var/lib/dpkg/status -nt "$cache" ] ||
	   [ /var/cache/apt/pkgcache.bin -nt "$cache" ]; then
		if [ -z "$(apt-cache policy "linux-source-${KLINE:-6.12}" 2>/dev/null)" ] &&
		   [ "$(id -u)" -eq 0 ]; then
			step "apt-get update (no package lists yet)"
			apt-get update -q > "$B/apt.log" 2>&1 || true
		fi
		if [ -n "${KREL:-}" ]; then
			"$kit_top/scripts/kit/target.sh" --krel "$KREL" > "$cache.tmp"
		else
			"$kit_top/scripts/kit/target.sh" "${KLINE:-6.12}" "${FLAVOUR:-generic}" > "$cache.tmp"
		fi || { rm -f "$cache.tmp"; exit 1; }
		mv "$cache.tmp" "$cache"
	fi
	# shellcheck disable=SC1090
	. "$cache"
	KDIR_BASE=$KDIR
	IMGROOT=$B/testbed/$KREL/image
	# KIT_DEBUG=1: the debug kernel built from the same source and config
	# (scripts/kit/debug-kernel.sh) replaces Debian's image and headers.
	if [ "${KIT_DEBUG:-0}" = 1 ]; then
		DEBUG_LOCALVERSION=-kitdebug
		[ "$FLAVOUR" = rt ] && DEBUG_LOCALVERSION=-kitdebug-rt
		KREL=${SRCVER%%-*}$DEBUG_LOCALVERSION
		DEBUG_DIR=${KIT_CACHE:-/var/cache/kvm-irqbypass}/debug/$KREL
		KDIR=$DEBUG_DIR/src
		IMGROOT=$DEBUG_DIR/image
		export DEBUG_LOCALVERSION DEBUG_DIR
	fi
	export KLINE FLAVOUR SRCPKG SRCVER HDRPKG KREL IMGPKG KDIR KDIR_BASE IMGROOT
}

# Source and headers must be the same Debian version.
kit_check_versions() {
	local s h
	s=$(dpkg-query -W -f='${Version}' "$SRCPKG" 2>/dev/null || true)
	h=$(dpkg-query -W -f='${Version}' "$HDRPKG" 2>/dev/null || true)
	[ -n "$h" ] || die "$HDRPKG is not installed (headers for $KREL missing)"
	[ "$s" = "$h" ] ||
		die "$SRCPKG $s and $HDRPKG $h disagree: install the same version of both"
	[ -d "$KDIR_BASE" ] || die "$KDIR_BASE missing: $HDRPKG is broken"
}

# Run kbuild on an M= tree.  Overlaid headers must win over the headers
# package: NOSTDINC_FLAGS is the only flag variable placed before
# LINUXINCLUDE (the kernel sets it to -nostdinc, which we keep).
kit_make() {
	local tree=$1; shift
	make -C "$KDIR" M="$tree" KIT_TREE="$tree" KCFLAGS=-Werror \
		KIT_PRISTINE="$B/src/$SRCPKG-$SRCVER" \
		NOSTDINC_FLAGS="-nostdinc -I$tree/backport-include -I$tree/include -I$tree/include/uapi" \
		-j"$(nproc)" ${KIT_MAKEFLAGS:-} "$@"
}

# kit_build_flavours LOGDIR FLAVOUR...: build the kit for each flavour of
# KLINE (incremental: seconds when nothing changed), each log in
# LOGDIR/build-<line>-<flavour>.log; the build's own progress lines show.
kit_build_flavours() {
	local logdir=$1 f; shift
	for f in "$@"; do
		step "building the kit ($KLINE $f; log: ${logdir#"$kit_top"/}/build-$KLINE-$f.log)"
		FLAVOUR=$f "$kit_top/scripts/kit/build.sh" 2>&1 |
			tee "$logdir/build-$KLINE-$f.log" | grep --line-buffered '^kit: ' ||
			{ tail -n 20 "$logdir/build-$KLINE-$f.log" >&2; die "kit build ($f) failed"; }
	done
}
