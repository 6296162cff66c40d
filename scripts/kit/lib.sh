# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash disable=SC2031 # kit_l2_guest resolves a target in a subshell on purpose
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

# kit_extract_source DIR PATHS: the PATHS (a word list) of $SRCPKG's
# tarball into DIR, once per source version and list of paths (the xz is
# decompressed whole: 10-20 s).  Used for the kit's tree and the guest's.
kit_extract_source() {
	local dir=$1 paths stamp members='' p start=$SECONDS
	local tarball=${KIT_ROOT:-}/usr/src/$SRCPKG.tar.xz
	# shellcheck disable=SC2086,SC2116 # one space between words
	paths=$(echo $2)
	stamp="$SRCVER $paths"
	[ "$(cat "$dir/.kit-extracted" 2>/dev/null)" = "$stamp" ] && return 0
	[ -f "$tarball" ] || die "$tarball missing (apt-get install $SRCPKG)"
	step "extracting $SRCPKG $SRCVER (only: $(wc -w <<< "$paths") paths)"
	rm -rf "$dir" "$dir.tmp"
	mkdir -p "$dir.tmp"
	for p in $paths; do members="$members $SRCPKG/$p"; done
	# shellcheck disable=SC2086 # word splitting wanted
	tar -xJf "$tarball" -C "$dir.tmp" --strip-components=1 $members ||
		die "extracting $tarball failed"
	echo "$stamp" > "$dir.tmp/.kit-extracted"
	mv "$dir.tmp" "$dir"
	step "extracted in $((SECONDS - start)) s"
}

# kit_apply_series PATCHDIR TREE: the patches PATCHDIR/series names, in
# order, onto TREE.  A missing or failing patch stops the caller (set -e)
# and names itself.  No series file: nothing to do.
kit_apply_series() {
	local p out
	[ -f "$1/series" ] || return 0
	grep -v -E '^\s*(#|$)' "$1/series" | while read -r p _; do
		[ -f "$1/$p" ] || die "${1#"$kit_top"/}/series names $p, which does not exist"
		if ! out=$(patch -p1 -d "$2" --forward --batch --no-backup-if-mismatch \
				-r - < "$1/$p" 2>&1); then
			echo "$out" >&2
			die "patch ${1#"$kit_top"/}/$p does not apply to $SRCPKG $SRCVER"
		fi
	done
}

# kit_l2_guest INITRD INIT MODULE... -- FILE...: the L2 guest of the
# benchmarks and checks that run a VMM in the testbed.  Sets l2k to Debian's
# generic kernel image of the line (whatever the testbed runs, so that rows
# differ only in the testbed's kernel and modules) and builds INITRD, when
# missing, older than INIT or a FILE, or made for another kernel (INITRD.krel
# names the release its modules are from): busybox, INIT as /init, each
# MODULE of that kernel decompressed to /MODULE.ko, each FILE in /.
kit_l2_guest() {
	local out=$1 init=$2 mods=() files=() m f ir l2rel l2mods stale=0
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do mods+=("$1"); shift; done
	[ $# -gt 0 ] && shift
	files=("$@")
	# shellcheck disable=SC2030,SC2031 # kit_target's variables stay in the subshell
	l2k=$(FLAVOUR=generic; unset KREL; kit_target; kit_image >&2
	      echo "$IMGROOT/boot/vmlinuz-$KREL")
	l2rel=${l2k##*/vmlinuz-}
	l2mods=${l2k%/boot/*}/lib/modules/$l2rel
	[ -s "$out" ] || stale=1
	# The same INITRD for another line (KLINE=6.1 after 6.12) would carry
	# modules that the L2 kernel refuses ("invalid module format").
	[ "$(cat "$out.krel" 2>/dev/null)" = "$l2rel" ] || stale=1
	for f in "$init" "${files[@]}"; do
		if [ "$f" -nt "$out" ]; then stale=1; fi
	done
	[ "$stale" = 1 ] || return 0
	step "building the L2 guest's initramfs (busybox, ${mods[*]}, ${files[*]##*/})"
	ir=$out.d
	rm -rf "$ir"
	mkdir -p "$ir"/{bin,proc,sys,dev}
	cp /bin/busybox "$ir/bin/busybox"
	cp "$init" "$ir/init"
	for f in "${files[@]}"; do cp "$f" "$ir/"; done
	for m in "${mods[@]}"; do
		f=$(find "$l2mods/kernel" -name "$m.ko*" | head -n 1)
		[ -n "$f" ] || die "no $m module in $l2mods"
		case $f in
		*.xz) xz -dc "$f" > "$ir/$m.ko" ;;
		*) cp "$f" "$ir/$m.ko" ;;
		esac
	done
	(cd "$ir" && find . | cpio -o -H newc --quiet) | gzip -1 > "$out"
	echo "$l2rel" > "$out.krel"
	rm -rf "$ir"
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
	kit_release
	if [ -n "${KREL:-}" ]; then key=krel-$KREL; else key=${KLINE:-6.12}-${FLAVOUR:-generic}; fi
	[ -n "$KIT_ROOT" ] && key=$key-deb$DEBIAN
	cache=$B/.target-$key.env
	if [ ! -s "$cache" ] || [ "$KIT_ROOT/var/lib/dpkg/status" -nt "$cache" ] ||
	   [ "$KIT_ROOT/var/cache/apt/pkgcache.bin" -nt "$cache" ]; then
		if [ -z "$KIT_ROOT" ] &&
		   [ -z "$(apt-cache policy "linux-source-${KLINE:-6.12}" 2>/dev/null)" ] &&
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

# kit_release: DEBIAN, the Debian release of the target (12 or 13), and
# KIT_ROOT, the build root of that release when it is not the host's
# (scripts/kit/root.sh; empty: the host builds it).  7.3 is Debian 13's
# (trixie-backports), 6.1 Debian 12's; 6.12 is both, the host's release
# unless DEBIAN says otherwise; a KREL says it itself (+deb13).  A DEBIAN
# exported by a parent script for another line (KIT_DEBIAN_LINE) is not a
# choice for this one.
kit_release() {
	local host
	host=$(. /etc/os-release && echo "${VERSION_ID%%.*}")
	if [ -n "${KIT_DEBIAN_LINE:-}" ] && [ "$KIT_DEBIAN_LINE" != "${KLINE:-6.12}" ]; then
		unset DEBIAN
	fi
	if [ -n "${KREL:-}" ]; then
		case "$KREL" in *+deb13*) DEBIAN=13 ;; *+deb12* | 6.1.*) DEBIAN=12 ;; esac
	fi
	case "${KLINE:-6.12}" in
	7.3) DEBIAN=${DEBIAN:-13} ;;
	6.1) DEBIAN=${DEBIAN:-12} ;;
	esac
	DEBIAN=${DEBIAN:-$host}
	case "$DEBIAN" in 12 | 13) ;; *) die "DEBIAN=$DEBIAN: 12 or 13" ;; esac
	case "${KLINE:-6.12}:$DEBIAN" in 7.3:12 | 6.1:13) die "Linux $KLINE is not a Debian $DEBIAN kernel" ;; esac
	KIT_ROOT=
	if [ "$DEBIAN" != "$host" ]; then
		KIT_ROOT=$("$kit_top/scripts/kit/root.sh" "$(kit_codename "$DEBIAN")") ||
			die "no Debian $DEBIAN build root"
	fi
	KIT_DEBIAN_LINE=${KLINE:-6.12}
	export DEBIAN KIT_ROOT KIT_DEBIAN_LINE
}

kit_codename() {
	case "$1" in 12) echo bookworm ;; 13) echo trixie ;; esac
}

# kit_in_root CMD...: CMD where the target builds: in KIT_ROOT, or here.
kit_in_root() {
	if [ -n "${KIT_ROOT:-}" ]; then
		"$kit_top/scripts/kit/root.sh" --run "$(kit_codename "$DEBIAN")" "$@"
	else
		"$@"
	fi
}

# kit_need_target_pkgs PKG...: the target's packages (source, headers),
# from its release: into KIT_ROOT, or onto the host as kit_need_pkgs does.
kit_need_target_pkgs() {
	if [ -n "${KIT_ROOT:-}" ]; then
		"$kit_top/scripts/kit/root.sh" --install "$(kit_codename "$DEBIAN")" "$@"
	else
		kit_need_pkgs "$@"
	fi
}

# Source and headers must be the same Debian version.
kit_check_versions() {
	local s h
	local r=()
	[ -n "${KIT_ROOT:-}" ] && r=(chroot "$KIT_ROOT")
	s=$("${r[@]}" dpkg-query -W -f='${Version}' "$SRCPKG" 2>/dev/null || true)
	h=$("${r[@]}" dpkg-query -W -f='${Version}' "$HDRPKG" 2>/dev/null || true)
	[ -n "$h" ] || die "$HDRPKG is not installed (headers for $KREL missing)"
	[ "$s" = "$h" ] ||
		die "$SRCPKG $s and $HDRPKG $h disagree: install the same version of both"
	[ -d "${KIT_ROOT:-}$KDIR_BASE" ] || die "$KDIR_BASE missing: $HDRPKG is broken"
}

# Run kbuild on an M= tree.  Overlaid headers must win over the headers
# package: NOSTDINC_FLAGS is the only flag variable placed before
# LINUXINCLUDE (the kernel sets it to -nostdinc, which we keep).
kit_make() {
	local tree=$1; shift
	kit_in_root make -C "$KDIR" M="$tree" KIT_TREE="$tree" KCFLAGS=-Werror \
		KIT_PRISTINE="$B/src/$SRCPKG-$SRCVER" \
		NOSTDINC_FLAGS="-nostdinc -I$tree/backport-include -I$tree/include -I$tree/include/uapi -I$tree/arch/x86/include" \
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

# kit_image: the target's kernel image for the testbed, in $IMGROOT:
# Debian's image package extracted once per version (never into /boot), or
# with KIT_DEBUG=1 the debug kernel, built once by debug-kernel.sh.
kit_image() {
	local pkgs=$B/testbed/$KREL/pkgs
	if [ "${KIT_DEBUG:-0}" = 1 ]; then
		"$kit_top/scripts/kit/debug-kernel.sh"
		return
	fi
	local p f
	[ -f "$IMGROOT/boot/vmlinuz-$KREL" ] && return 0
	step "downloading and extracting $IMGPKG"
	rm -rf "$pkgs" "$IMGROOT.tmp"
	mkdir -p "$pkgs"
	# shellcheck disable=SC2086 # IMGPKG is a list on 7.x
	if [ -n "${KIT_ROOT:-}" ]; then
		kit_in_root /bin/sh -c 'cd "$1" && shift &&
			apt-get download -q -o APT::Sandbox::User=root "$@"' - \
			"$pkgs" $IMGPKG > /dev/null || die "cannot download $IMGPKG"
	else
		(cd "$pkgs" && apt-get download -q $IMGPKG > /dev/null 2>&1) ||
			{ apt-get update -q > /dev/null 2>&1 || true
			  (cd "$pkgs" && apt-get download -q $IMGPKG); } ||
			die "cannot download $IMGPKG"
	fi
	for p in "$pkgs"/*.deb; do dpkg-deb -x "$p" "$IMGROOT.tmp"; done
	# 7.x's linux-binary has the kernel, its config and System.map in
	# /usr/lib/modules/KREL and no /boot: the testbed reads /boot and
	# /lib/modules as on 6.x.
	f=$IMGROOT.tmp/usr/lib/modules/$KREL
	if [ -f "$f/vmlinuz" ] && [ ! -e "$IMGROOT.tmp/boot/vmlinuz-$KREL" ]; then
		mkdir -p "$IMGROOT.tmp/boot"
		for p in vmlinuz config System.map; do
			[ -e "$f/$p" ] && ln -s "../usr/lib/modules/$KREL/$p" "$IMGROOT.tmp/boot/$p-$KREL"
		done
	fi
	[ -d "$f" ] && [ ! -e "$IMGROOT.tmp/lib" ] && ln -s usr/lib "$IMGROOT.tmp/lib"
	depmod -b "$IMGROOT.tmp" "$KREL"
	rm -rf "$IMGROOT"; mv "$IMGROOT.tmp" "$IMGROOT"
	rm -rf "$pkgs"
}

# kit_lines: the kernel lines KLINE names (default 6.12; all: 6.12 and 6.1).
kit_lines() {
	local l lines=${KLINE:-6.12}
	[ "$lines" = all ] && lines="6.12 6.1"
	for l in $lines; do
		case $l in 6.12 | 6.1) ;; *) die "KLINE=$KLINE: 6.12, 6.1 or all" ;; esac
	done
	echo "$lines"
}

# kit_boots: the benchmarks' boot loop.  Builds the kit for each line when
# the module sets include it, then boots the testbed (scripts/kit/testbed.sh)
# once per kernel line x flavour x module set, in that order.  The caller
# sets:
#   boot_what      its name in messages (bench, netbench, ...)
#   boot_name      the run directories' prefix (default: boot_what)
#   boot_lines boot_flavours boot_modsets   the three lists
#   boot_logdir    where the kit's build logs go
#   boot_desc      what each boot runs, for its progress line
#   boot_hint      (optional) what a non-zero exit means
#   boot_opts      (array) testbed options besides --modules, --name and
#                  --icount (ICOUNT, when set)
#   boot_retry     (optional) 1: a failed boot may get a second try
#                  (kit_boot_retriable); a benchmark's choice, never a test's
# and defines two functions, which see KLINE, FLAVOUR, m (the module set),
# label (<line>-<flavour>), name and dir (the run's name and directory):
#   boot_cmd       sets the array boot_argv: the command to run
#   boot_collect RC  copies the boot's results into the report, whatever RC
# A boot that exits non-zero is named on stderr, in boots_failed, and with
# its evidence in boots_why (kit_boots_report prints it last).
# shellcheck disable=SC2154 # boot_* are the caller's
kit_boots() {
	local -x KLINE FLAVOUR
	local m label name dir krel rc
	boots_failed=()
	boots_why=()
	boots_retried=()
	if [[ " $boot_modsets " == *" kit "* ]]; then
		for KLINE in $boot_lines; do
			# shellcheck disable=SC2086 # a list of flavours
			kit_build_flavours "$boot_logdir" $boot_flavours
		done
	fi
	for KLINE in $boot_lines; do
		for FLAVOUR in $boot_flavours; do
			for m in $boot_modsets; do
				# shellcheck disable=SC2031 # kit_target's variables stay in the subshell
				krel=$(unset KREL; kit_target; echo "$KREL")
				name=${boot_name:-$boot_what}-$m
				dir=$B/testbed/$krel/$name
				label=$KLINE-$FLAVOUR
				boot_argv=()
				boot_cmd
				step "boot $label, $m modules: $boot_desc"
				kit_boot_once
				if [ "$rc" -ne 0 ] && kit_boot_retriable; then
					rm -rf "$dir-try1"
					mv "$dir" "$dir-try1"
					boots_retried+=("$(kit_boot_why "$label/$m" "$rc" "$dir-try1")")
					echo "kit: $boot_what: $label/$m exited $rc; once more (the first try: ${dir#"$kit_top"/}-try1/console.log)" >&2
					kit_boot_once
				fi
				if [ "$rc" -ne 0 ]; then
					echo "kit: $boot_what: $label/$m exited $rc (${boot_hint:+$boot_hint; }console: ${dir#"$kit_top"/}/console.log)" >&2
					boots_failed+=("$label/$m")
					boots_why+=("$(kit_boot_why "$label/$m" "$rc" "$dir")")
				fi
			done
		done
	done
}

# kit_boot_once: one testbed boot of kit_boots' loop, its exit code in rc.
# shellcheck disable=SC2154 # boot_* are the caller's
kit_boot_once() {
	rc=0
	(unset KREL; "$kit_top/scripts/kit/testbed.sh" --modules "$m" \
		--name "$name" ${ICOUNT:+--icount "$ICOUNT"} \
		"${boot_opts[@]}" -- "${boot_argv[@]}") || rc=$?
	boot_collect "$rc"
}

# kit_boot_retriable: with boot_retry=1 (a benchmark's boots, never a
# test's), whether the failed boot gets a second try: a stock-module boot
# whatever failed (its modules are Debian's, the emulated machine can
# flake), a kit-module boot only when the testbed gave no result or timed
# out.  A kernel splat or a lost or doubled interrupt with the kit's
# modules is never retried.  kit_boots_report names every retried boot.
kit_boot_retriable() {
	[ "${boot_retry:-0}" = 1 ] || return 1
	[ "$m" = kit ] || return 0
	[ "$rc" -eq 99 ] || [ "$rc" -eq 124 ]
}

# kit_boot_why WHAT RC DIR: what a failed boot's exit code means (the
# testbed's codes, tools/testbed/lib.sh's tb_result) and its evidence:
# the kernel splats, or the lines the command printed about a failure.
kit_boot_why() {
	local what=$1 rc=$2 dir=$3 meaning
	case $rc in
	124) meaning="timed out" ;;
	125) meaning="kernel splat" ;;
	99) meaning="no result from the testbed" ;;
	*) meaning="the command exited $rc${boot_hint:+ ($boot_hint)}" ;;
	esac
	echo "$what: $meaning; console: ${dir#"$kit_top"/}/console.log"
	if [ "$rc" -eq 125 ]; then
		head -n 5 "$dir/splats.txt" 2>/dev/null
	elif ! grep -aE '[0-9] lost|[0-9] doubled|failed|error|not ok|timed out' \
			"$dir/console.log" 2>/dev/null | grep -v '^\[' | head -n 5; then
		grep -a '^[a-z_-]*: ' "$dir/console.log" 2>/dev/null |
			grep -v skipped | tail -n 5
	fi | sed 's/^/    /'
	# (the greps find nothing in some consoles: under pipefail that
	# status would end the caller, a set -e script, at its assignment)
	return 0
}

# kit_boots_report WHAT: after the report, name the failed boots with their
# evidence (the last lines a CI log keeps); non-zero when one failed.
kit_boots_report() {
	local w
	for w in "${boots_retried[@]}"; do
		echo "kit: $1: retried after a failed first try: $w" >&2
	done
	[ ${#boots_failed[@]} -eq 0 ] && return 0
	echo "kit: $1: failed: ${boots_failed[*]}" >&2
	for w in "${boots_why[@]}"; do
		echo "$w" >&2
	done
	return 1
}

# kit_merge HEADER PREFIX: HEADER, then every boot's PREFIX<label>-<m>.csv
# in kit_boots' order (a missing one is skipped).
kit_merge() {
	local l f m
	echo "$1"
	for l in $boot_lines; do
		for f in $boot_flavours; do
			for m in $boot_modsets; do
				cat "$2$l-$f-$m.csv" 2>/dev/null || true
			done
		done
	done
}
