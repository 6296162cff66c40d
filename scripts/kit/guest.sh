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

pristine=$B/src/guest-$SRCPKG-$SRCVER
kit_extract_source "$pristine" "drivers/virtio scripts/checkpatch.pl scripts/spelling.txt scripts/const_structs.checkpatch"

tree=$B/guest
stage=$tree.stage
rm -rf "$stage"
mkdir -p "$stage/drivers"
cp -a "$pristine/drivers/virtio" "$stage/drivers/"
kit_apply_series "$kit_top/patches/guest-6.12" "$stage"
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
