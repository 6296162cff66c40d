#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make bochs: Bochs 3.0 for the bochs3 testbed (VMX with APICv, so that
# kvm_intel loads with enable_apicv=Y), built from the shared archive plus
# the kit's fixes in patches/bochs-3.0/ (a quilt-style series, patch -p1),
# installed into build/bochs/ (bin/bochs, share/bochs/ with the BIOS images).
#
#   scripts/kit/bochs.sh [--force]
#
# The source: BOCHS_TARBALL, else ../shared/third_party/bochs-*.tar.xz beside
# the repository (for a git worktree, also beside the main tree).  Cached: a
# build is skipped when build/bochs/.stamp records the same archive sha256,
# patch hash and configure options.
#
# Configured with what the testbed uses and nothing else: x86-64, SMP, VMX
# level 2 (EPT, VPID, APIC virtualization, posted interrupts), AVX and
# AVX-512 (the CPUID models with APICv, Skylake-X and later, have them),
# i440FX PCI, the ATA CD-ROM (the boot ISO), the serial port to a file, and
# no GUI (nogui: no VNC server listening, unlike Debian's 2.7 build).
# No IPS display (--disable-show-ips): its SIGALRM handler logs through
# the log mutex, and a signal that arrives while the simulator thread
# holds that mutex (writing any log line) deadlocks Bochs for good.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

force=0
[ "${1:-}" = --force ] && force=1

tarball=${BOCHS_TARBALL:-}
if [ -z "$tarball" ]; then
	for d in "$kit_top/../shared/third_party" \
		 "$(cd "$kit_top" && git rev-parse --path-format=absolute --git-common-dir 2>/dev/null)/../../shared/third_party"; do
		tarball=$(compgen -G "$d/bochs-*.tar.xz" | sort | tail -n 1 || true)
		[ -n "$tarball" ] && break
	done
fi
if [ -z "$tarball" ] || [ ! -f "$tarball" ]; then
	die "no ../shared/third_party/bochs-*.tar.xz beside the repository: set BOCHS_TARBALL"
fi
tarball=$(readlink -f "$tarball")

pdir=$kit_top/patches/bochs-3.0
series=()
if [ -f "$pdir/series" ]; then
	while read -r p _; do
		case "$p" in ''|'#'*) continue ;; esac
		[ -f "$pdir/$p" ] || die "patches/bochs-3.0/series names $p, which is missing"
		series+=("$p")
	done < "$pdir/series"
fi

cfg=(--enable-x86-64 --enable-smp --enable-cpu-level=6 --enable-vmx=2
     --enable-avx --enable-evex --enable-pci --enable-cdrom
     --enable-all-optimizations --enable-repeat-speedups
     --enable-handlers-chaining --enable-trace-linking
     --disable-plugins --disable-debugger --disable-docbook
     --disable-readline --disable-xpm --without-x --without-x11
     --with-nogui --without-term --without-rfb --without-sdl --without-sdl2
     --without-wx --without-vncsrv --disable-show-ips)

inst=$B/bochs
sum=$(sha256sum "$tarball" | cut -d' ' -f1)
phash=$( { cat "$pdir/series" 2>/dev/null; for p in "${series[@]}"; do cat "$pdir/$p"; done; } |
	sha256sum | cut -d' ' -f1)
stamp="archive $(basename "$tarball") sha256 $sum
patches ${#series[@]} sha256 $phash
configure ${cfg[*]}"
if [ $force = 0 ] && [ -x "$inst/bin/bochs" ] && [ "$(cat "$inst/.stamp" 2>/dev/null)" = "$stamp" ]; then
	step "bochs: up to date ($inst/bin/bochs, $(basename "$tarball"), ${#series[@]} patches)"
	exit 0
fi

kit_need_pkgs build-essential xz-utils patch
src=$B/bochs-src
log=$B/bochs-build.log
start=$SECONDS
step "bochs: extracting $(basename "$tarball")"
rm -rf "$src" "$inst"
mkdir -p "$src"
tar -xJf "$tarball" -C "$src" || die "extracting $tarball failed"
# The archive holds the bochs/ directory of the Bochs repository.
[ -x "$src/bochs/configure" ] && src=$src/bochs
[ -x "$src/configure" ] || die "$tarball: no configure script"
: > "$log"
for p in "${series[@]}"; do
	step "bochs: applying $p"
	patch -d "$src" -p1 --batch --forward < "$pdir/$p" >> "$log" 2>&1 ||
		{ tail -n 20 "$log" >&2; die "patch $p does not apply"; }
done
step "bochs: configure (log: ${log#"$kit_top"/})"
(cd "$src" && ./configure --prefix="$inst" "${cfg[@]}") >> "$log" 2>&1 ||
	{ tail -n 20 "$log" >&2; die "bochs: configure failed"; }
step "bochs: make -j$(nproc)"
make -C "$src" -j"$(nproc)" >> "$log" 2>&1 ||
	{ tail -n 30 "$log" >&2; die "bochs: make failed"; }
make -C "$src" install >> "$log" 2>&1 ||
	{ tail -n 20 "$log" >&2; die "bochs: make install failed"; }
"$inst/bin/bochs" --help cpu > "$inst/cpu-models.txt" 2>&1 || true
printf '%s\n' "$stamp" > "$inst/.stamp"
step "bochs: built $inst/bin/bochs in $((SECONDS - start)) s"
