#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make guest: build a replacement virtio_mmio.ko for Debian's 6.12 guest
# kernel with the Dragonball MSI/doorbell extension
# (Documentation/virtio-mmio-msi.rst):
#   1. extract drivers/virtio/ of linux-source-6.12 once into build/src/;
#   2. stage it in build/guest/: pristine files + patches/guest-6.12/ (the
#      hook in virtio_mmio.c) + our files from guest/drivers/virtio/;
#   3. build virtio_mmio.ko alone against the generic 6.12 headers with
#      -Werror (GUEST_SPARSE=1 also runs sparse over it: C=2).
# The module keeps the name virtio_mmio, so it replaces the distro's.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

KLINE=6.12 FLAVOUR=generic
unset KREL
export KLINE FLAVOUR
kit_target
kit_need_pkgs "$SRCPKG" "$HDRPKG" make gcc patch xz-utils
kit_check_versions
start=$SECONDS

tarball=/usr/src/$SRCPKG.tar.xz
[ -f "$tarball" ] || die "$tarball missing (apt-get install $SRCPKG)"
paths="drivers/virtio scripts/checkpatch.pl scripts/spelling.txt scripts/const_structs.checkpatch"
pristine=$B/src/guest-$SRCPKG-$SRCVER
stamp="$SRCVER $paths"
if [ "$(cat "$pristine/.kit-extracted" 2>/dev/null)" != "$stamp" ]; then
	step "extracting $paths of $SRCPKG $SRCVER"
	rm -rf "$pristine" "$pristine.tmp"
	mkdir -p "$pristine.tmp"
	members=
	for p in $paths; do members="$members $SRCPKG/$p"; done
	# shellcheck disable=SC2086 # word splitting wanted
	tar -xJf "$tarball" -C "$pristine.tmp" --strip-components=1 $members ||
		die "extracting $tarball failed"
	echo "$stamp" > "$pristine.tmp/.kit-extracted"
	mv "$pristine.tmp" "$pristine"
	step "extracted in $((SECONDS - start)) s"
fi

tree=$B/guest
stage=$tree.stage
rm -rf "$stage"
mkdir -p "$stage/drivers"
cp -a "$pristine/drivers/virtio" "$stage/drivers/"
series=$kit_top/patches/guest-6.12/series
if [ -f "$series" ]; then
	grep -v -E '^\s*(#|$)' "$series" | while read -r p _; do
		patch -d "$stage" -p1 -s --no-backup-if-mismatch \
			< "$kit_top/patches/guest-6.12/$p" || die "patch $p does not apply"
	done
fi
# One module from several objects: the distro's file becomes one of them.
mv "$stage/drivers/virtio/virtio_mmio.c" "$stage/drivers/virtio/virtio_mmio_main.c"
cp -a "$kit_top/guest/." "$stage/"
# Copy only what changed, so an edit rebuilds one object.
mkdir -p "$tree"
rsync -rc "$stage/" "$tree/"
rm -rf "$stage"

step "building virtio_mmio.ko in ${tree#"$kit_top"/} against ${KDIR#"$kit_top"/}"
sparse=()
[ "${GUEST_SPARSE:-0}" = 1 ] && sparse=(C=2 CHECK=sparse CF=-fmax-warnings=unlimited)
make -C "$KDIR" M="$tree/drivers/virtio" KCFLAGS=-Werror "${sparse[@]}" \
	-j"$(nproc)" modules
ko=$tree/drivers/virtio/virtio_mmio.ko
[ -f "$ko" ] || die "no $ko"
step "built ${ko#"$kit_top"/} ($(modinfo -F vermagic "$ko" | cut -d' ' -f1)) in $((SECONDS - start)) s"
