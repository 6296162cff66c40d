#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make qemu: Debian's own QEMU (the source package of the installed
# qemu-system-x86, 7.2 on Debian 12) plus the kit's patches in
# patches/qemu-<upstream version>/ (a quilt-style series, patch -p1), built
# for x86_64-softmmu with KVM and TCG into build/qemu/.  Never installed: the
# binary is build/qemu/qemu-system-x86_64, next to Debian's own.
#
#   scripts/kit/qemu.sh [--force]
#
# The source comes from Debian's registry through an apt configuration of
# the kit's own under build/apt/ (its own sources.list with deb-src lines
# for the mirrors and suites of the system's sources, its own state and
# cache directories), so the system's apt setup is left untouched.
#
# Cached: nothing is done when build/qemu/.stamp records the same source
# version, patch hash and configure options.  A changed series on the same
# source reverses the old patches, applies the new ones and lets ninja
# rebuild what they touched.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

force=0
[ "${1:-}" = --force ] && force=1

binpkg=qemu-system-x86
ver=$(dpkg-query -W -f='${source:Version}' "$binpkg" 2>/dev/null || true)
[ -n "$ver" ] || die "$binpkg is not installed: the kit builds the version Debian installed"
# 1:7.2+dfsg-7+deb12u18 -> 7.2
upver=${ver#*:}
upver=${upver%%[+~-]*}
pdir=$kit_top/patches/qemu-$upver
series=()
if [ -f "$pdir/series" ]; then
	while read -r p _; do
		case "$p" in ''|'#'*) continue ;; esac
		[ -f "$pdir/$p" ] || die "patches/qemu-$upver/series names $p, which is missing"
		series+=("$p")
	done < "$pdir/series"
else
	step "qemu: no patches/qemu-$upver/series: building Debian's QEMU $ver unchanged"
fi

# Only what the testbed and the benchmarks need: x86_64 with KVM, VFIO
# (built with KVM on Linux), virtio and vhost, and TCG, so that make
# check-guest can run the virtio-mmio extension's guests on a build host
# without a usable /dev/kvm; no docs, no GUI, no tools, no optional
# libraries.  The firmware is Debian's (seabios and
# qemu-system-data), found through the firmware path.
cfg=(--target-list=x86_64-softmmu --without-default-features
     --enable-kvm --enable-tcg --enable-fdt=system --enable-vhost-net --enable-vhost-kernel
     --enable-vhost-user --disable-docs --disable-tools --disable-werror
     --disable-install-blobs --firmwarepath=/usr/share/qemu:/usr/share/seabios)

inst=$B/qemu
phash=$( { cat "$pdir/series" 2>/dev/null; for p in "${series[@]}"; do cat "$pdir/$p"; done; } |
	sha256sum | cut -d' ' -f1)
stamp="source qemu $ver
patches ${#series[@]} sha256 $phash
configure ${cfg[*]}"
# A binary in the build tree looks its data up under qemu-bundle/ beside
# it, the configured firmware path included: point that at Debian's.
bundle_links() {
	local d
	for d in /usr/share/qemu /usr/share/seabios; do
		mkdir -p "$inst/qemu-bundle${d%/*}"
		ln -sfn "$d" "$inst/qemu-bundle$d"
	done
}
if [ $force = 0 ] && [ -x "$inst/qemu-system-x86_64" ] &&
		[ "$(cat "$inst/.stamp" 2>/dev/null)" = "$stamp" ]; then
	bundle_links
	step "qemu: up to date ($inst/qemu-system-x86_64, qemu $ver, ${#series[@]} patches)"
	exit 0
fi

kit_need_pkgs dpkg-dev xz-utils patch gcc libc6-dev make ninja-build meson \
	pkg-config python3 python3-venv libglib2.0-dev libpixman-1-dev zlib1g-dev libfdt-dev \
	seabios qemu-system-data
start=$SECONDS
log=$B/qemu-build.log
mkdir -p "$B"
: > "$log"

# 1. apt, the kit's own configuration: deb-src for the URIs, suites and
# components of the system's deb822 and one-line sources.
apt_dir=$B/apt
mkdir -p "$apt_dir/sources.list.d" "$apt_dir/state/lists/partial" \
	"$apt_dir/cache/archives/partial"
{
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		# deb822: one stanza per paragraph.
		awk '
		function flush() {
			if (uris != "" && types ~ /deb/)
				for (i = split(uris, u, " "); i > 0; i--)
					for (j = split(suites, s, " "); j > 0; j--)
						printf "deb-src %s%s %s %s\n", sb, u[i], s[j], comps
			uris = suites = comps = types = sb = ""
		}
		/^[ \t]*$/ { flush(); next }
		/^#/ { next }
		/^Types:/ { sub(/^Types:[ \t]*/, ""); types = $0 }
		/^URIs:/ { sub(/^URIs:[ \t]*/, ""); uris = $0 }
		/^Suites:/ { sub(/^Suites:[ \t]*/, ""); suites = $0 }
		/^Components:/ { sub(/^Components:[ \t]*/, ""); comps = $0 }
		/^Signed-By:/ { sub(/^Signed-By:[ \t]*/, ""); sb = "[signed-by=" $0 "] " }
		END { flush() }' "$f"
	done
	cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
		sed -n 's/^[ \t]*deb[ \t]/deb-src /p' || true
} | sort -u > "$apt_dir/sources.list"
[ -s "$apt_dir/sources.list" ] || die "no Debian mirror found in /etc/apt/sources.list*"
apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list"
	  -o "Dir::Etc::SourceParts=$apt_dir/sources.list.d"
	  -o "Dir::State=$apt_dir/state" -o "Dir::State::status=/var/lib/dpkg/status"
	  -o "Dir::Cache=$apt_dir/cache" -o "APT::Sandbox::User=root")

srcroot=$B/qemu-src
src=$srcroot/qemu
applied=$srcroot/applied
if [ "$(cat "$srcroot/.version" 2>/dev/null)" != "$ver" ] || [ ! -d "$src" ] || [ $force = 1 ]; then
	step "qemu: apt-get source qemu=$ver (sources: ${apt_dir#"$kit_top"/}/sources.list)"
	apt-get "${apt_opts[@]}" -q update >> "$log" 2>&1 ||
		{ tail -n 20 "$log" >&2; die "apt-get update (kit sources) failed"; }
	rm -rf "$srcroot"
	mkdir -p "$srcroot"
	(cd "$srcroot" && apt-get "${apt_opts[@]}" -q source --download-only "qemu=$ver") >> "$log" 2>&1 ||
		{ tail -n 20 "$log" >&2; die "apt-get source qemu=$ver failed"; }
	step "qemu: dpkg-source -x (Debian's patches applied)"
	(cd "$srcroot" && dpkg-source --no-check -x ./*.dsc qemu) >> "$log" 2>&1 ||
		{ tail -n 20 "$log" >&2; die "dpkg-source -x failed"; }
	rm -f "$srcroot"/*.tar.* "$srcroot"/*.debian.tar.*
	mkdir -p "$applied"
	echo "$ver" > "$srcroot/.version"
	rm -rf "$inst"
fi

# 2. The kit's patches: reverse what an earlier run applied, then apply the
# series.  Files neither series touches keep their times, so ninja only
# rebuilds what changed.
mkdir -p "$applied"
touch "$applied/series"
same=1
[ "$(cat "$applied/series")" = "$(printf '%s\n' "${series[@]}" | sed '/^$/d')" ] || same=0
for p in "${series[@]}"; do
	cmp -s "$applied/$p" "$pdir/$p" || same=0
done
if [ $same = 0 ]; then
	mapfile -t old < <(tac "$applied/series")
	for p in "${old[@]}"; do
		step "qemu: reversing $p"
		patch -d "$src" -p1 -R --batch < "$applied/$p" >> "$log" 2>&1 ||
			{ tail -n 20 "$log" >&2; die "reversing $p failed: rm -r $srcroot and retry"; }
	done
	rm -rf "$applied"
	mkdir -p "$applied"
	touch "$applied/series"
	for p in "${series[@]}"; do
		step "qemu: applying $p"
		patch -d "$src" -p1 --batch --forward < "$pdir/$p" >> "$log" 2>&1 ||
			{ tail -n 20 "$log" >&2; die "patch $p does not apply"; }
		cp "$pdir/$p" "$applied/$p"
		echo "$p" >> "$applied/series"
	done
fi

# 3. Configure (when the options changed or on a new build directory) and
# ninja.
# (.configured, not .stamp, which a failed build leaves removed.)
if [ "$(cat "$inst/.configured" 2>/dev/null)" != "${cfg[*]}" ] ||
		[ ! -f "$inst/build.ninja" ]; then
	step "qemu: configure (log: ${log#"$kit_top"/})"
	t=$SECONDS
	rm -rf "$inst"
	mkdir -p "$inst"
	(cd "$inst" && "$src/configure" "${cfg[@]}") >> "$log" 2>&1 ||
		{ tail -n 30 "$log" >&2; die "qemu: configure failed"; }
	printf '%s\n' "${cfg[*]}" > "$inst/.configured"
	step "qemu: configured in $((SECONDS - t)) s"
fi
rm -f "$inst/.stamp"
t=$SECONDS
step "qemu: ninja -j2 qemu-system-x86_64"
ninja -C "$inst" -j2 qemu-system-x86_64 >> "$log" 2>&1 ||
	{ grep -B2 -A12 'error:' "$log" | tail -n 40 >&2; die "qemu: build failed (log: $log)"; }
step "qemu: built in $((SECONDS - t)) s"
bundle_links
"$inst/qemu-system-x86_64" --version | head -n 1 | sed 's/^/kit: /'
printf '%s\n' "$stamp" > "$inst/.stamp"
step "qemu: $inst/qemu-system-x86_64 ready in $((SECONDS - start)) s"
